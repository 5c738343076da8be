"""Belady's MIN at one capacity against kvcache-simulator's OPTIMAL at one budget. Ratios measured in this run.

    python bench/min_vs_kvcache_simulator.py [--capacity C]

Both on the Mooncake synthetic trace (skipped if ../shared is absent), at the
same cache size in blocks. kvcache-simulator (KVCache.AI, PyPI 0.1.3) is timed
in both its backends: Python (simulate_policy on a prebuilt execution plan;
plan building timed apart) and C++ (run_cpp_sweep with this one capacity and
policy: writes a binary trace and runs its compiled simulator; the one-time
compile is done before timing). pyverify's MIN is timed without the witness
(min_run_flat: the numba-compiled count where numba is installed, as an audit uses it) and with it (min_run, as certify uses it).
The two hit counts are checked equal in kvcache-simulator's own accounting
(tokens, last 50% of requests). Goal (issue 11): MIN faster.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

TRACE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "mooncake" / "synthetic_trace.jsonl"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=int, default=4096)
    args = parser.parse_args()
    if not TRACE.exists():
        print(f"{TRACE} is absent: nothing to measure")
        return
    from kvcache_sim.cpp_backend import ensure_cpp_simulator, run_cpp_sweep
    from kvcache_sim.plan import build_execution_plan
    from kvcache_sim.policies import simulate_policy
    from kvcache_sim.trace import parse_trace_file

    from pyverify.inputs.mooncake import import_mooncake
    from pyverify.optimal.belady import min_run, min_run_flat
    from pyverify.cache.arrays import flatten

    capacity = args.capacity
    trace = parse_trace_file(TRACE, block_size=512)
    start = time.perf_counter()
    plan = build_execution_plan(trace)
    plan_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = simulate_policy(plan, "optimal", capacity)
    python_s = time.perf_counter() - start
    ensure_cpp_simulator()
    start = time.perf_counter()
    cpp = run_cpp_sweep(
        trace, capacities=[capacity], policies=["optimal"], warmup_requests=plan.warmup_requests
    )
    cpp_s = time.perf_counter() - start
    cpp_hits = cpp.results[("optimal", capacity)].hitTokens

    chains = import_mooncake(TRACE).chains
    ids, lengths = flatten(chains)
    warm = time.perf_counter()
    min_run_flat(
        np.array([1, 2, 1], dtype=np.int64), np.array([1, 1, 1]), None, 1
    )  # numba compiles or loads its cache once
    print(
        f"one-time kernel preparation (numba compile or cache load): {(time.perf_counter() - warm) * 1e3:.0f} ms, not counted below"
    )
    start = time.perf_counter()
    hit_blocks, _, misses = min_run_flat(ids, lengths, None, capacity)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    min_run(chains, None, capacity)
    witness_s = time.perf_counter() - start
    lengths_in = [
        json.loads(line)["input_length"] for line in TRACE.read_text().splitlines() if line.strip()
    ]
    ours_hits = sum(
        min(512, max(1, lengths_in[t] - i * 512))
        for t in range(plan.warmup_requests, len(chains))
        for i in range(hit_blocks[t])
    )
    assert ours_hits == theirs.hitTokens == cpp_hits, (ours_hits, theirs.hitTokens, cpp_hits)
    print(f"Mooncake synthetic trace, {ids.size:,} block references, capacity {capacity} blocks:")
    print(
        f"  hit tokens in the last 50% of requests agree: {ours_hits:,} of {theirs.totalTokens:,} ({theirs.hitRate:.4f}); "
        f"MIN over the whole trace: {misses:,} misses"
    )
    print(f"  pyverify MIN (no witness)           {ours_s * 1e3:8.1f} ms")
    print(f"  pyverify MIN (with witness)         {witness_s * 1e3:8.1f} ms")
    print(
        f"  kvcache-simulator OPTIMAL, Python   {python_s * 1e3:8.1f} ms (+ {plan_s * 1e3:.0f} ms building its plan)"
    )
    print(
        f"  kvcache-simulator OPTIMAL, C++      {cpp_s * 1e3:8.1f} ms (writes its binary trace, runs its compiled simulator)"
    )
    print(
        f"  ratios: Python backend / MIN {python_s / ours_s:.2f}x, C++ backend / MIN {cpp_s / ours_s:.2f}x (goal: MIN faster)"
    )


if __name__ == "__main__":
    main()
