"""One trace type from the readers to the kernels (issue 50: "read once, run many").

Each command below runs on a committed instance or a small trace while its kernels' entry points
are watched: every one of them must be handed the one trace type,
:class:`~pyverify.inputs.columnar.ColumnarTrace` (or NumPy arrays taken from it), never chains of
Python tuples. A command whose kernels do not yet get it is marked ``xfail(strict=True)``, naming
what is left: the mark fails the day the command is moved, so it is removed then.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest

from pyverify.inputs.columnar import ColumnarTrace
from tests.conftest import REPO
from tests.helpers import run_cli, write_timed_trace

LAB = str(REPO / "instances" / "lab-512x32x16.json")

#: The replay's entry points: its runs (the Python event loop and the compiled ones) and the bounds
#: printed beside them; (module, attribute, position of the trace among the arguments).
REPLAY_KERNELS = (
    ("pyverify.fleet.replay", "replay_python", 0),
    ("pyverify.fleet.compiled_replay", "replay_compiled", 0),
    ("pyverify.fleet.report", "bounds", 0),
    ("pyverify.fleet.report", "forced_routed_hits", 0),
)

#: simulate's runs: the Python simulator (on chains) and the array replay.
SIMULATE_KERNELS = (
    ("pyverify.sim.simulate", "simulate", 0),
    ("pyverify.sim.array_run", "array_hits", 0),
)


def one_trace_type(value) -> bool:
    return isinstance(value, (ColumnarTrace, np.ndarray))


def watch(monkeypatch, kernels) -> list[tuple[str, type]]:
    """Wrap each entry point so that every call records the type of the trace it was handed."""
    seen: list[tuple[str, type]] = []
    for module_name, attribute, position in kernels:
        module = importlib.import_module(module_name)
        original = getattr(module, attribute)

        @functools.wraps(original)
        def recording(*args, __original=original, __name=attribute, __at=position, **kwargs):
            seen.append((__name, type(args[__at])))
            return __original(*args, **kwargs)

        monkeypatch.setattr(module, attribute, recording)
    return seen


def assert_one_trace(seen: list[tuple[str, type]]) -> None:
    assert seen, "no kernel entry point was reached"
    other = [
        (name, kind.__name__)
        for name, kind in seen
        if not issubclass(kind, (ColumnarTrace, np.ndarray))
    ]
    assert not other, f"kernels handed another trace type: {sorted(set(other))}"


REPLAY_RUNS = {
    "timed, steps (the Python event loop)": ["--capacity", "3"],
    "timed, streams (the compiled event loop)": ["--capacity", "3", "--service", "streams"],
    "untimed round-robin (the compiled replay)": ["--no-timing", "--capacity", "3"],
    "untimed vllm (the engine's compiled run)": [
        "--no-timing",
        "--capacity",
        "4",
        "--eviction",
        "vllm",
    ],
    "untimed sglang, python": [
        "--no-timing",
        "--capacity",
        "4",
        "--eviction",
        "sglang",
        "--backend",
        "python",
    ],
    "compare, tiers, routers": [
        "--compare",
        "--capacity",
        "2",
        "--host-capacity",
        "3",
        "--pool-capacity",
        "inf",
        "--router",
        "round-robin,kv-aware,dynamo",
    ],
}


@pytest.mark.parametrize("flags", REPLAY_RUNS.values(), ids=REPLAY_RUNS.keys())
def test_replay_reaches_its_kernels_with_the_one_trace(tmp_path, capsys, monkeypatch, flags):
    seen = watch(monkeypatch, REPLAY_KERNELS)
    status, _, err = run_cli(capsys, "replay", write_timed_trace(tmp_path), *flags, "--json")
    assert status == 0, err
    assert_one_trace(seen)
    runs = [name for name, _ in seen if name in ("replay_python", "replay_compiled")]
    assert runs, "no run was reached"


def test_replay_of_an_instance_file_reaches_its_kernels_with_the_one_trace(capsys, monkeypatch):
    seen = watch(monkeypatch, REPLAY_KERNELS)
    status, _, err = run_cli(capsys, "replay", LAB, "--no-timing", "--capacity", "8", "--json")
    assert status == 0, err
    assert_one_trace(seen)


def test_the_watch_sees_another_trace_type():
    """Not vacuous: chains of tuples, as the replay took them before, are told apart."""
    with pytest.raises(AssertionError, match="another trace type"):
        assert_one_trace([("replay_python", tuple)])
    with pytest.raises(AssertionError, match="no kernel"):
        assert_one_trace([])


@pytest.mark.xfail(
    strict=True,
    reason="simulate on an instance file still runs pyverify.sim.simulate on the instance's chains "
    "(simulate's instance path is not yet behind pyverify.api)",
)
def test_simulate_of_an_instance_file_reaches_its_kernels_with_the_one_trace(capsys, monkeypatch):
    seen = watch(monkeypatch, SIMULATE_KERNELS)
    status, _, err = run_cli(capsys, "simulate", LAB, "--capacity", "8", "--json")
    assert status == 0, err
    assert_one_trace(seen)


def test_simulate_of_a_trace_file_reaches_its_kernels_with_the_one_trace(
    tmp_path, capsys, monkeypatch
):
    seen = watch(monkeypatch, SIMULATE_KERNELS)
    trace = write_timed_trace(tmp_path)
    status, _, err = run_cli(capsys, "simulate", trace, "--capacity", "2", "--json")
    assert status == 0, err
    assert_one_trace(seen)


#: Stands for a small timed Mooncake-style trace (tests.helpers.write_timed_trace) in a command line.
TIMED_TRACE = "TIMED_TRACE"

#: The other commands' kernels: (command line after "pyverify", entry points).
OTHER_COMMANDS = {
    "mrc": (
        ["mrc", LAB, "--json"],
        (
            ("pyverify.sim.mrc", "lru_curve_of_references", 0),
            ("pyverify.optimal.curve", "optimal_curve_flat", 0),
        ),
    ),
    "budgets": (
        ["budgets", TIMED_TRACE, "--kv-bytes-per-token", "1000", "--json"],
        (
            ("pyverify.sim.budgets", "budget_sweep", 0),
            ("pyverify.sim.budgets", "budget_sweep_flat", 0),
        ),
    ),
    "certify": (
        ["certify", TIMED_TRACE, "--model", "pooled", "--capacity", "2"],
        (
            ("pyverify.certify.certificate", "certify", 0),
            ("pyverify.certify.packed_certificate", "certify_packed", 0),
        ),
    ),
}


#: Commands whose kernels still get another trace type, and why.
NOT_YET = {
    "certify": "certify builds its problem from an Instance (certify.certificate.certify), not the trace",
}


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[name]))
        if name in NOT_YET
        else name
        for name in OTHER_COMMANDS
    ],
)
def test_the_other_commands_reach_their_kernels_with_the_one_trace(
    tmp_path, capsys, monkeypatch, command
):
    argv, kernels = OTHER_COMMANDS[command]
    argv = [write_timed_trace(tmp_path) if word == TIMED_TRACE else word for word in argv]
    if command == "certify":
        argv = [*argv, "-o", str(tmp_path / "lab.cert.json")]
    seen = watch(monkeypatch, kernels)
    status, _, err = run_cli(capsys, *argv)
    assert status == 0, err
    assert_one_trace(seen)
