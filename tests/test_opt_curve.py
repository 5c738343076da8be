"""The one-pass optimal miss-ratio curve equals per-capacity MIN runs, and libCacheSim's Belady.

Independent computations compared:
* :func:`pyverify.optimal.curve.optimal_curve` (Mattson's priority stack, one pass);
* :func:`pyverify.optimal.belady.min_run` at each capacity (a heap of next uses);
* the trusted checker's recount (pyverify/trusted/recount.py);
* libCacheSim's Belady, a C implementation we did not write. It is the
  *demand* form (the fetched block is always kept), so it is run with C + 1
  slots on the sequence with a never-reused dummy after every reference: the
  dummy occupies the extra slot after each step, which makes the other C
  slots behave exactly as bypass MIN's C (the dummies' own misses are
  subtracted). Checked against the bypass form by hand below.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.certify.belady import belady_misses
from pyverify.optimal.belady import min_run, next_uses
from pyverify.sim.mrc import lru_curve
from pyverify.optimal.curve import capacity_to_match, optimal_curve
from pyverify.trusted import recount

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .helpers import run_cli
from .strategies import prefix_closed_chains, routed_instances

TRACE = MOONCAKE_SYNTHETIC
needs_trace = pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)
NEVER = 2**63 - 1  # libCacheSim's "no next access"


def libcachesim_bypass_min(sequence, capacity: int) -> int:
    lcs = pytest.importorskip("libcachesim")
    top = max(sequence) + 1
    padded = np.empty(2 * len(sequence), dtype=np.int64)
    padded[0::2] = sequence
    padded[1::2] = top + np.arange(len(sequence))  # a fresh dummy after every reference
    following = next_uses(padded).tolist()
    cache = lcs.Belady(capacity + 1, hashpower=20)
    request = lcs.Request()
    request.obj_size = 1
    misses = 0
    for time, block in enumerate(padded.tolist()):
        request.obj_id = block
        request.clock_time = time
        request.next_access_vtime = following[time] if following[time] < padded.size else NEVER
        misses += not cache.get(request)
    return misses - len(sequence)


@settings(max_examples=80, deadline=None)
@given(prefix_closed_chains(max_nodes=14, max_requests=30))
def test_curve_equals_min_runs_pooled(chains):
    curve = optimal_curve(chains)
    distinct = len({b for c in chains for b in c})
    for capacity in range(1, distinct + 2):
        assert (
            curve.misses(capacity)
            == min_run(chains, None, capacity).misses
            == recount.min_misses(chains, [0] * len(chains), capacity)
        )
    assert curve.misses(distinct + 1) == curve.cold == distinct


@settings(max_examples=60, deadline=None)
@given(routed_instances(max_hosts=4))
def test_curve_equals_min_runs_per_host(instance):
    chains, hosts, routing = instance
    curve = optimal_curve(chains, routing, hosts)
    for capacity in range(1, 12):
        assert curve.misses(capacity) == min_run(chains, routing, capacity).misses


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=50))
def test_unit_requests_match_the_small_belady(pages):
    curve = optimal_curve([(p,) for p in pages])
    for capacity in range(1, 9):
        assert curve.misses(capacity) == belady_misses(pages, capacity)


def test_libcachesim_bypass_emulation_by_hand():
    # a b a with one slot: bypass MIN keeps a and bypasses b -> 2 misses (demand Belady: 3).
    assert libcachesim_bypass_min([1, 2, 1], 1) == 2 == min_run([(1,), (2,), (1,)], None, 1).misses


@settings(max_examples=60, deadline=None)
@given(prefix_closed_chains(max_nodes=12, max_requests=25))
def test_libcachesim_belady_on_the_flat_sequence(chains):
    flat = [b for c in chains for b in c]
    curve = optimal_curve(chains)
    for capacity in range(1, len(set(flat)) + 1):
        assert curve.misses(capacity) == libcachesim_bypass_min(flat, capacity)


def test_optimum_never_above_lru():
    chains = [(1, 2, 3), (4,), (1, 2), (5, 6), (1, 2, 3), (4,), (5,)] * 3
    opt, lru = optimal_curve(chains), lru_curve(chains)
    grid = np.arange(1, 8)
    assert np.all(opt.misses(grid) <= lru.misses(grid))
    assert capacity_to_match(lru, int(opt.misses(3))) >= 3
    assert capacity_to_match(lru, opt.cold - 1) is None


@needs_trace
def test_mooncake_curve_equals_min_runs_and_libcachesim():
    from pyverify.inputs.load import load_input

    chains = load_input(TRACE).chains
    curve = optimal_curve(chains)
    for capacity in (1, 7, 64, 333, 1000, 2048, 4096, 5000, 8192, 12000, 12637, 20000):
        assert curve.misses(capacity) == min_run(chains, None, capacity).misses, capacity
    flat = [b for c in chains for b in c]
    for capacity in (64, 4096):
        assert curve.misses(capacity) == libcachesim_bypass_min(flat, capacity), capacity
    routing = [t % 16 for t in range(len(chains))]
    per_host = optimal_curve(chains, routing, 16)
    for capacity in (16, 256, 1024):
        assert per_host.misses(capacity) == min_run(chains, routing, capacity).misses, capacity


@needs_trace
def test_mrc_command_draws_both_curves(capsys, tmp_path):
    status, out, err = run_cli(
        capsys,
        "mrc",
        str(TRACE),
        "--policy",
        "lru,opt",
        "--capacities",
        "64,4096",
        "--verify",
        "--json",
    )
    assert status == 0, err
    result = json.loads(out)
    assert result["verified"] is True and result["eviction"] == ["lru", "opt"]
    point = result["points"][1]
    assert point["capacity_blocks"] == 4096 and point["misses"] == point["simulated_misses"]
    assert point["opt_misses"] == point["min_run_misses"] < point["misses"]
    assert point["lru_capacity_to_match_opt"] > 4096
    chart = tmp_path / "mrc.svg"
    status, out, err = run_cli(
        capsys,
        "mrc",
        str(TRACE),
        "--model",
        "per-host",
        "--policy",
        "opt",
        "--capacities",
        "256",
        "--chart",
        str(chart),
    )
    assert status == 0 and chart.exists() and "optimal (Belady MIN)" in out


def test_mrc_bad_policy_is_one_line(capsys, tmp_path):
    path = tmp_path / "i.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "x",
                "hosts": 1,
                "requests": [{"blocks": [1]}],
            }
        )
    )
    status, out, err = run_cli(capsys, "mrc", str(path), "--policy", "lru,fifo")
    assert (
        status == 2
        and out == ""
        and len(err.strip().splitlines()) == 1
        and "expected lru, opt" in err
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=120))
def test_numpy_and_carry_loop_kernels_agree(ids):
    """The numpy version and the plain carry loop (compiled by numba when installed) give the same distances."""
    from pyverify.optimal import curve
    from pyverify.cache.arrays import dense_ids

    ids = np.asarray(ids, dtype=np.int64)
    dense, universe = dense_ids(ids)
    loop = curve._carry_pass(dense.astype(np.int64), next_uses(dense), universe)  # pure Python here
    assert (
        loop.tolist()
        == curve.opt_distances_numpy(ids).tolist()
        == curve.opt_distances(ids).tolist()
    )


@settings(max_examples=40, deadline=None)
@given(routed_instances(max_hosts=3))
def test_memory_limit_summary_numbers(instance):
    """Every number of the audit's memory-limit summary equals a per-capacity run (MIN, simulator LRU)."""
    from pyverify.optimal.forced import forced_misses
    from pyverify.optimal.curve import memory_limit_summary
    from pyverify.sim.simulate import simulate

    chains, hosts, routing = instance
    refs = sum(map(len, chains))
    summary = memory_limit_summary(
        chains, routing, hosts, node_capacity_blocks=2, capacities=[1, 3, 6]
    )
    for row in summary["lru_vs_optimum"]:
        c = row["capacity_blocks"]
        assert row["opt_hit_rate"] == 1 - min_run(chains, None, c).misses / refs
        assert (
            row["opt_forced_hit_rate"]
            == 1 - forced_misses(chains, None, c) / refs
            <= row["opt_hit_rate"]
        )
        assert row["lru_hit_rate"] == 1 - simulate(chains, None, "pooled", capacity=c).misses / refs
        assert row["gap"] >= 0
        match = row["lru_capacity_to_match_opt"]
        if match is not None:
            assert (
                simulate(chains, None, "pooled", capacity=match).misses
                <= min_run(chains, None, c).misses
            )
    local = summary["local_vs_global"]
    assert local["local_opt"] == 1 - min_run(chains, routing, 2).misses / refs
    assert local["global_opt"] == 1 - min_run(chains, None, 2 * hosts).misses / refs
    assert local["local_lru"] == 1 - simulate(chains, routing, "per-host", capacity=2).misses / refs
    from pyverify.optimal.curve import memory_limit_markdown

    text = "\n".join(memory_limit_markdown(summary))
    assert (
        f"| {summary['lru_vs_optimum'][0]['opt_hit_rate']:.4f} |" in text
        and "Local against global" in text
    )
