"""Start-up: a run imports only what it computes with (issue #23: ``simulate`` on a small trace within 2x a plain script).

Each test runs pyverify's ``main`` in a fresh interpreter on a small Mooncake
JSONL trace and lists the heavy packages in ``sys.modules`` when it is done.
numpy is expected (the trace is held in numpy arrays); the others are loaded
only by the paths that use them: pyarrow by the Parquet and CSV readers and
by the JSONL reader on big files, numba by compiled runs, jsonschema when a
schema is validated, matplotlib by charts, tqdm by progress bars.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.commands.input_options import MOONCAKE_KEYS, RICHER_THAN_MOONCAKE, is_plain_mooncake
from pyverify.errors import UserError
from pyverify.inputs.detect import read_head
from pyverify.inputs.load import detect_format
from pyverify.inputs.stream import Input
from tests.conftest import REPO

#: Packages a plain run on a small trace has no use for.
HEAVY = (
    "pyarrow",
    "pandas",
    "numba",
    "llvmlite",
    "scipy",
    "jsonschema",
    "referencing",
    "matplotlib",
    "tqdm",
    "duckdb",
    "dask",
    "ortools",
    "z3",
    "networkx",
    "cloudpickle",
)


def loaded_after(*argv: str) -> tuple[set[str], str]:
    """The top-level packages in ``sys.modules`` after ``pyverify ARGV`` ran in a fresh interpreter, and its stdout."""
    script = (
        "import io, sys, contextlib; from pyverify.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out): status = main(sys.argv[1:])\n"
        "print(repr((status, sorted({name.split('.')[0] for name in sys.modules}), out.getvalue())))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    status, modules, out = eval(result.stdout)  # noqa: S307 (our own repr, one line)
    assert status == 0, result.stderr
    return set(modules), out


@pytest.fixture
def small_trace(tmp_path):
    path = tmp_path / "small.jsonl"
    lines = [
        {"timestamp": 0, "input_length": 1500, "output_length": 10, "hash_ids": [0, 1, 2]},
        {"timestamp": 1, "input_length": 1100, "output_length": 20, "hash_ids": [0, 1, 3]},
        {"timestamp": 3, "input_length": 600, "output_length": 30, "hash_ids": [4, 5]},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--json",),
        ("--model", "per-host", "--fleet", "2", "--routing", "round-robin"),
        ("--model", "per-host", "--fleet", "2", "--json"),
    ],
    ids=" ".join,
)
def test_simulate_on_a_small_trace_loads_nothing_heavy(small_trace, flags):
    modules, out = loaded_after("simulate", str(small_trace), *flags)
    assert (
        "numpy" in modules
    )  # the one representation: the trace as numpy arrays, read and counted there
    assert sorted(modules & set(HEAVY)) == []
    if "--json" in flags:
        report = json.loads(out)
        assert (report["references"], report["misses"]) == (8, 6 if "per-host" not in flags else 8)


def test_the_answer_is_the_same_without_the_light_path(small_trace):
    """The run above is a real run: its numbers equal the per-record simulator's (``--backend python``)."""
    _, fast = loaded_after("simulate", str(small_trace), "--json")
    _, reference = loaded_after("simulate", str(small_trace), "--json", "--backend", "python")
    assert json.loads(fast) == json.loads(reference)


def test_the_command_table_names_the_module_of_every_command():
    """cli.COMMAND_MODULES (which lets a run import only its command's module) says what the modules register."""
    from pyverify.cli import COMMAND_MODULES, _Parser, command_modules

    registered = {}
    for module in command_modules():
        subparsers = _Parser(prog="pyverify").add_subparsers(dest="command", parser_class=_Parser)
        module.register(subparsers)
        registered.update(dict.fromkeys(subparsers.choices, module.__name__.rsplit(".", 1)[1]))
    assert COMMAND_MODULES == registered


@pytest.mark.parametrize("command", ["simulate", "trace", "certify", "lean", "replay"])
def test_one_command_parser_is_the_whole_parsers(command):
    """A command's parser built alone (as a run builds it) is the one the whole command line holds: same help, same flags."""
    from pyverify.cli import build_parser

    one, every = (
        build_parser(which)._subparsers._group_actions[0].choices[command]
        for which in (command, None)
    )
    assert one.format_help() == every.format_help()
    assert [action.option_strings for action in one._actions] == [
        action.option_strings for action in every._actions
    ]


@pytest.mark.parametrize("flags", [(), ("--json",)], ids=" ".join)
def test_a_curve_of_a_small_trace_loads_no_numba(small_trace, flags):
    """``mrc`` loads numba before reading only a file big enough for the kernels to run on."""
    modules, out = loaded_after("mrc", str(small_trace), *flags)
    assert "numba" not in modules
    if flags:
        assert json.loads(out)["references"] == 8


@pytest.mark.parametrize("parquet", [False, True], ids=["text", "parquet"])
@pytest.mark.parametrize("below, loads", [(0, True), (1, False)], ids=["at", "below"])
def test_kernels_are_loaded_before_reading_a_big_file_only(tmp_path, parquet, below, loads):
    """:func:`load_kernels_before_reading` by the file's size and kind (sparse files: nothing is read); the
    second loaded ``.missing`` path, which does not exist, loads nothing more."""
    from pyverify.commands.engine_options import (
        KERNELS_BEFORE_READING_BYTES,
        KERNELS_BEFORE_READING_PARQUET_BYTES,
    )

    assert (KERNELS_BEFORE_READING_BYTES, KERNELS_BEFORE_READING_PARQUET_BYTES) == (
        8 << 20,
        1 << 20,
    )
    if loads:
        pytest.importorskip("numba")
    path = tmp_path / ("trace.parquet" if parquet else "trace.jsonl")
    with open(path, "wb") as handle:
        handle.write(b"PAR1" if parquet else b'{"hash_ids": [1]}\n')
        handle.truncate(
            (KERNELS_BEFORE_READING_PARQUET_BYTES if parquet else KERNELS_BEFORE_READING_BYTES)
            - below
        )
    # numba_loaded() is true from the moment a load begins (on a thread, for JSONL); kernel() then waits for it.
    script = (
        "import sys; from pyverify.commands.engine_options import load_kernels_before_reading\n"
        "from pyverify.inputs.columnar.compiled import kernel, numba_loaded\n"
        "load_kernels_before_reading(sys.argv[1]); load_kernels_before_reading(sys.argv[1] + '.missing')\n"
        "from pyverify.inputs.columnar import compiled\n"
        "print(numba_loaded(), len(compiled._loading))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    threads = (
        1 if loads and not parquet else 0
    )  # JSONL is read while numba loads beside; Parquet loads it first
    assert result.stdout.split() == [str(loads), str(threads)]


def test_a_kernel_waits_for_numba_loading_beside(tmp_path):
    """After :func:`load_beside` the decisions see numba as loaded, and a kernel compiled meanwhile runs."""
    pytest.importorskip("numba")
    script = (
        "import sys, numpy as np\n"
        "from pyverify.inputs.columnar.compiled import kernel, load_beside, numba_loaded, closed_dense\n"
        "load_beside(); assert numba_loaded()\n"
        "run = kernel(closed_dense)\n"
        "ids, offsets = np.array([0, 1, 0, 2]), np.array([0, 2, 4])\n"
        "print(bool(run(ids, offsets, np.empty(3, dtype=np.int64))), bool(run(np.array([0, 1, 1, 2]), offsets, np.empty(3, dtype=np.int64))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False"]


@settings(max_examples=200, deadline=None)
@given(
    keys=st.sets(
        st.sampled_from(
            sorted(MOONCAKE_KEYS - {"hash_ids"})
            + ["block_size", "chat_id", "turn", "format", "events", "ts"]
        )
    ),
    hash_ids=st.one_of(
        st.lists(st.integers(0, 9), max_size=3),
        st.dictionaries(st.sampled_from(["sys_prompt", "history"]), st.lists(st.integers(0, 9))),
    ),
)
def test_a_plain_mooncake_record_is_what_the_detectors_say_it_is(keys, hash_ids):
    """The start-up shortcut (no per-record readers for a Mooncake file) answers as the format detectors do."""
    record = {"hash_ids": hash_ids, **{key: 1 for key in keys}}
    head = read_head(Input("t.jsonl", io.BytesIO(json.dumps(record).encode() + b"\n"), None))
    if is_plain_mooncake(record):
        assert detect_format(head, "t.jsonl").key == "mooncake-jsonl"
    try:
        richer = detect_format(head, "t.jsonl").key in RICHER_THAN_MOONCAKE
    except UserError:
        richer = False
    assert not (richer and is_plain_mooncake(record))


def test_simulate_on_a_mooncake_trace_imports_no_simulator_and_no_per_record_reader(small_trace):
    script = (
        "import sys, io, contextlib; from pyverify.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\n"
        "print(sorted(name for name in sys.modules if name.startswith('pyverify.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "simulate", str(small_trace), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    modules = set(eval(result.stdout))  # noqa: S307 (our own repr)
    assert "pyverify.inputs.columnar.jsonl" in modules  # the run did read the trace
    assert not modules & {
        "pyverify.inputs.load",
        "pyverify.sim.simulate",
        "pyverify.sim.routing",
        "pyverify.engines.counts",
    }


def test_the_policy_names_are_the_routing_policies():
    """The parser offers :data:`pyverify.sim.names.POLICY_NAMES` without importing the router; they must be its."""
    from pyverify.sim.names import POLICY_NAMES
    from pyverify.sim.routing import POLICIES

    assert tuple(POLICIES) == POLICY_NAMES


@pytest.mark.parametrize(
    "content",
    [
        b"PAR1\x00\x01binary",
        b'{\n  "format": "pyverify.instance/1"\n}\n',
        b"[1, 2]\n",
        b"{not json\n",
    ],
    ids=["parquet-like", "pretty instance", "array", "broken"],
)
def test_an_input_without_a_first_record_is_no_richer_format(tmp_path, content):
    """The start-up shortcut for inputs whose head has no JSON object: no format of RICHER_THAN_MOONCAKE is told
    without one, as the detectors say."""
    from pyverify.commands.input_options import _richer_than_mooncake

    path = tmp_path / "input"
    path.write_bytes(content)
    head = read_head(Input(str(path), io.BytesIO(content), None))
    assert head.first_object is None
    try:
        detected = detect_format(head, "input").key
    except UserError:
        detected = None
    assert detected not in RICHER_THAN_MOONCAKE and _richer_than_mooncake(str(path)) is False


def test_simulate_on_a_parquet_trace_imports_no_per_record_reader_and_no_count_engine(tmp_path):
    pytest.importorskip("pyarrow")
    import numpy as np

    from pyverify.inputs.columnar import ColumnarTrace, write_parquet

    path = tmp_path / "t.parquet"
    write_parquet(
        ColumnarTrace(
            name="t", ids=np.array([0, 1, 0, 2, 3]), offsets=np.array([0, 2, 4, 5]), source="test"
        ),
        path,
    )
    script = (
        "import sys, io, contextlib; from pyverify.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\n"
        "print(sorted(name for name in sys.modules if name.startswith('pyverify.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "simulate", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    modules = set(eval(result.stdout))  # noqa: S307 (our own repr)
    assert "pyverify.inputs.columnar.tables" in modules  # the run did read the file
    assert not modules & {
        "pyverify.inputs.load",
        "pyverify.engines.counts",
        "pyverify.engines.select",
        "pyverify.sim.simulate",
    }


def test_a_mooncake_file_parsed_by_pyarrow_loads_no_pyarrow_compute(tmp_path):
    """Outside json.dumps' form and below the byte parser's size the JSONL reader parses with pyarrow, which it needs; ``pyarrow.compute``
    (22 ms to import here, a tenth of the parse of a 5M-reference file) it does not: asking a list chunk for its
    ``flatten()`` loaded it, only to size the array of ids."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "big.jsonl"
    line = '{"hash_ids": [0, 1, 2, 3], "timestamp": 0, "input_length": 2048, "output_length": 1}\n'  # not json.dumps' plain form (hash_ids first)
    path.write_text(line * 1000)
    script = (
        "import sys, io, contextlib; from pyverify.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out: status = main(sys.argv[1:])\n"
        "print(repr((status, sorted(name for name in sys.modules if name.startswith('pyarrow')), out.getvalue())))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "simulate", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    status, modules, out = eval(result.stdout)  # noqa: S307 (our own repr)
    assert status == 0 and json.loads(out)["misses"] == 4
    assert "pyarrow.json" in modules  # pyarrow did parse it
    assert "pyarrow.compute" not in modules
