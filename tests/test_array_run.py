"""``simulate``, ``budgets`` and ``mrc`` on a trace held as arrays equal the same commands on Python chains.

* the array run (pyverify.sim.array_run) against ``simulate()`` and
  ``tally()`` on Hypothesis traces: every eviction, pooled and per host, any
  capacity (none included), prompt lengths and windows;
* the command: ``--backend numpy`` and ``auto`` on a big file print what the
  simulator prints (witness included), on the Mooncake trace and on a Parquet
  file with its own hosts;
* a capacity in GiB or tokens, a window or a witness is never dropped: before
  this path existed, ``auto`` on a big file counted the uncapacitated cache
  and ignored ``--capacity-gib`` and ``--warmup-fraction`` without a word.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyverify.commands.basic as basic
import pyverify.sim.kernels as kernels
from pyverify.inputs.columnar import ColumnarTrace
from pyverify.inputs.model import Instance
from pyverify.sim.accounting import tally, tally_offsets
from pyverify.sim.simulate import EVICTIONS, PER_HOST, POOLED, simulate
from pyverify.sim.tokens import token_weights
from pyverify.sim.window import Window

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .helpers import assert_one_line_error, run_cli
from .strategies import routed_instances

pytest.importorskip("numba")
from pyverify.sim.array_run import array_hits, trace_token_weights  # noqa: E402

TRACE = MOONCAKE_SYNTHETIC
needs_trace = pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)


@given(
    routed_instances(),
    st.one_of(st.none(), st.integers(1, 12)),
    st.sampled_from(EVICTIONS),
    st.sampled_from([0.0, 0.25, 0.5]),
    st.data(),
)
def test_array_run_equals_the_simulator(case, capacity, eviction, fraction, data):
    chains, hosts, routing = case
    block = data.draw(st.integers(1, 8))
    extra = [
        {"input_tokens": block * (len(chain) - 1) + data.draw(st.integers(1, 2 * block))}
        for chain in chains
    ]
    instance = Instance(
        name="t",
        fleet_size=hosts,
        chains=tuple(map(tuple, chains)),
        routing=tuple(routing),
        block_size_tokens=block,
        extra=tuple(extra),
    )
    trace = ColumnarTrace.from_instance(instance)
    window = Window(fraction)
    weights = token_weights(chains, block, extra)
    assert trace_token_weights(trace, "t").block_tokens.tolist() == weights.block_tokens.tolist()
    for model, cache_of in (
        (POOLED, np.zeros(len(chains), dtype=np.int64)),
        (PER_HOST, np.asarray(routing)),
    ):
        run = simulate(chains, routing, model, capacity=capacity, eviction=eviction)
        hits = array_hits(trace, cache_of, capacity, eviction)
        assert hits.tolist() == list(run.hit_blocks), (model, capacity, eviction)
        assert tally_offsets(trace.offsets, hits, trace_token_weights(trace, "t"), window) == tally(
            chains, run.hit_blocks, weights, window
        )


# --- the command ----------------------------------------------------------------------


def simulate_json(capsys, *argv):
    status, out, err = run_cli(capsys, "simulate", *argv, "--json")
    assert status == 0, err
    return json.loads(out)


def same_report(simulator: dict, arrays: dict) -> None:
    """Equal in every field (the content digest included) but the engine's name, which ``--backend numpy`` adds."""
    assert arrays.pop("backend") == "numpy (arrays, compiled replay)"
    assert len(arrays["sha256"]) == 64
    assert arrays == simulator


def python_json(capsys, *argv):
    """``simulate ARGV --json`` by the per-record simulator (the oracle)."""
    return simulate_json(capsys, *argv, "--backend", "python")


@needs_trace
@pytest.mark.parametrize("eviction", EVICTIONS)
@pytest.mark.parametrize("model", [POOLED, PER_HOST])
def test_engine_numpy_prints_what_the_simulator_prints(capsys, model, eviction):
    argv = [
        str(TRACE),
        "--model",
        model,
        "--capacity-gib",
        "32",
        "--kv-model",
        "llama-3.3-70b",
        "--eviction",
        eviction,
        "--warmup-fraction",
        "0.5",
        "--witness",
    ]
    same_report(python_json(capsys, *argv), simulate_json(capsys, *argv, "--backend", "numpy"))


@needs_trace
def test_auto_keeps_the_capacity_and_the_window(capsys, monkeypatch):
    argv = [
        str(TRACE),
        "--model",
        "pooled",
        "--capacity-gib",
        "64",
        "--kv-model",
        "llama-3.3-70b",
        "--warmup-fraction",
        "0.5",
    ]
    simulator = python_json(capsys, *argv)
    monkeypatch.setattr(
        basic, "simulate_in_python", None
    )  # the default must not need the per-record path
    arrays = simulate_json(capsys, *argv)
    assert arrays["capacity"] == 409 and arrays["window"]["warmup_fraction"] == 0.5
    assert arrays == simulator
    # Uncapacitated, whole trace, no witness: on arrays too, with tokens and the digest.
    counted = simulate_json(capsys, str(TRACE), "--model", "pooled")
    assert (
        "backend" not in counted
        and counted["misses"] == 43924
        and counted["measured"]["tokens"] == 61194628
    )
    # --backend numpy still gives the plain count of blocks, naming the engine.
    assert (
        simulate_json(capsys, str(TRACE), "--model", "pooled", "--backend", "numpy")["backend"]
        == "numpy"
    )


@needs_trace
@pytest.mark.parametrize(
    "flag", [["--capacity", "10"], ["--capacity-tokens", "5120"], ["--witness"]]
)
def test_out_of_core_engines_refuse_what_they_cannot_count(
    capsys, flag
):  # a window DuckDB measures: test_duckdb_measured.py
    pytest.importorskip("duckdb")
    status, out, err = run_cli(
        capsys, "simulate", str(TRACE), "--model", "pooled", "--backend", "duckdb", *flag
    )
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--backend duckdb: the out-of-core engines count uncapacitated caches" in err


def test_a_parquet_trace_with_hosts_is_folded_as_the_simulator_folds_it(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    from pyverify.inputs.columnar import write_parquet

    rng = np.random.default_rng(3)
    chains = [
        tuple(range(1000 * (i % 7), 1000 * (i % 7) + int(rng.integers(1, 9)))) for i in range(300)
    ]
    routing = tuple(int(h) for h in rng.integers(0, 8, len(chains)))
    instance = Instance(
        name="hosts", fleet_size=8, chains=tuple(chains), routing=routing, block_size_tokens=16
    )
    path = tmp_path / "hosts.parquet"
    write_parquet(ColumnarTrace.from_instance(instance), path)
    for argv in (
        ["--model", "per-host", "--fleet", "4", "--capacity", "3", "--eviction", "leaf-lru"],
        ["--model", "per-host", "--capacity", "5"],
        ["--model", "pooled", "--capacity", "20", "--eviction", "fifo", "--witness"],
    ):
        same_report(
            python_json(capsys, str(path), *argv),
            simulate_json(capsys, str(path), *argv, "--backend", "numpy"),
        )
        assert simulate_json(capsys, str(path), *argv) == python_json(capsys, str(path), *argv)


@needs_trace
def test_routing_errors_name_the_file(capsys, tmp_path):
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(TRACE),
        "--model",
        "per-host",
        "--routing",
        "given",
        "--capacity",
        "10",
        "--backend",
        "numpy",
    )
    assert_one_line_error(status, out, err, str(TRACE), "routing")


@needs_trace
def test_without_numba_the_simulator_answers(capsys, monkeypatch):
    argv = [str(TRACE), "--model", "pooled", "--capacity", "100", "--backend", "numpy"]
    monkeypatch.setattr(kernels, "available", lambda: False)
    report = simulate_json(capsys, *argv)
    assert "backend" not in report and report == python_json(capsys, *argv)
    # Uncapacitated, nothing is compiled: the default stays on arrays without numba.
    oracle = python_json(capsys, str(TRACE), "--model", "per-host")
    monkeypatch.setattr(basic, "simulate_in_python", None)
    assert simulate_json(capsys, str(TRACE), "--model", "per-host") == oracle


@needs_trace
def test_budgets_on_a_big_file_equal_the_budgets_on_chains(capsys, monkeypatch):
    on_chains, on_arrays = small_then_big(
        capsys,
        monkeypatch,
        "budgets",
        str(TRACE),
        "--kv-model",
        "llama-3.3-70b",
        "--eviction",
        "lru,fifo,leaf-lru,tail-first",
        "--warmup-fraction",
        "0.5",
    )
    assert len(on_arrays["points"]["leaf-lru"]) == 15
    same_report(on_chains, on_arrays)


def small_then_big(capsys, monkeypatch, *argv):
    """The JSON of ``pyverify ARGV --json`` per record (``--backend python``: Python chains), then on
    arrays (``--backend numpy``, which names the engine)."""
    reports = []
    for engine in ("python", "numpy"):
        status, out, err = run_cli(capsys, *argv, "--backend", engine, "--json")
        assert status == 0, err
        reports.append(json.loads(out))
    return reports


def test_counts_default_to_the_simulators_routing(capsys, tmp_path):
    """An uncapacitated count on an engine routes as the simulator does by default: an input's own
    hosts are folded (also to a smaller --fleet), an instance that names a fleet but no routing is
    spread round-robin over that fleet. (The counts used 'given' before: refused at any other fleet
    size, and for an instance without a routing.)"""
    pytest.importorskip("pyarrow")
    from pyverify.inputs.columnar import write_parquet

    rng = np.random.default_rng(5)
    chains = tuple(
        tuple(range(100 * (i % 9), 100 * (i % 9) + int(rng.integers(1, 6)))) for i in range(200)
    )
    routed = Instance(
        name="routed",
        fleet_size=8,
        chains=chains,
        routing=tuple(int(h) for h in rng.integers(0, 8, len(chains))),
    )
    parquet = tmp_path / "routed.parquet"
    write_parquet(ColumnarTrace.from_instance(routed), parquet)
    unrouted = tmp_path / "unrouted.json"
    unrouted.write_text(
        json.dumps(Instance(name="unrouted", fleet_size=4, chains=chains).to_json())
    )
    for path, argv in ((parquet, ["--fleet", "4"]), (parquet, []), (unrouted, [])):
        simulator = simulate_json(capsys, str(path), "--model", "per-host", *argv)
        counted = simulate_json(
            capsys, str(path), "--model", "per-host", *argv, "--backend", "numpy"
        )
        assert counted["backend"] == "numpy"
        assert (counted["routing"], counted["fleet_size"], counted["misses"]) == (
            simulator["routing"],
            simulator["fleet_size"],
            simulator["misses"],
        ), (path, argv)


@needs_trace
@pytest.mark.parametrize(
    "model",
    [["--model", "pooled"], ["--model", "per-host", "--fleet", "8", "--routing", "prefix-hash"]],
)
def test_mrc_on_a_big_file_equals_the_mrc_on_chains(capsys, monkeypatch, model):
    on_chains, on_arrays = small_then_big(
        capsys,
        monkeypatch,
        "mrc",
        str(TRACE),
        *model,
        "--policy",
        "lru,opt",
        "--capacities",
        "64,512,4096,20000",
        "--verify",
    )
    assert on_arrays["verified"] is True and "token_hit_rate" in on_arrays["points"][0]
    same_report(on_chains, on_arrays)
