"""Uncapacitated pooled + per-host counting: pyverify.sim.counting (numpy) against a
plain Python loop over the same references. Ratios are measured in this run.

    python bench/uncapacitated.py [--refs N] [--fleet F]

Goal (issue 5): at least 20x faster than the loop, and at least 20M block
references per second. Timed: from the flat id array and the per-request
routing to both counts (the per-reference host expansion included). Not
timed: generating the trace, or building the Python lists for the loop.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import synthetic_trace  # noqa: E402

from pyverify.sim.counting import count_uncapacitated, reference_hosts  # noqa: E402

TRACE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "mooncake" / "synthetic_trace.jsonl"
)


def python_loop(ids: list[int], hosts: list[int]) -> tuple[int, int]:
    pooled: set[int] = set()
    per_host: set[tuple[int, int]] = set()
    for block, host in zip(ids, hosts):
        pooled.add(block)
        per_host.add((host, block))
    return len(pooled), len(per_host)


def best_of(function, repeats: int):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare(label: str, ids: np.ndarray, lengths: np.ndarray, fleet: int, repeats: int) -> None:
    routing = np.arange(lengths.size, dtype=np.int32) % fleet  # round-robin
    fast_time, fast = best_of(
        lambda: count_uncapacitated(ids, reference_hosts(routing, lengths), fleet), repeats
    )
    id_list, host_list = ids.tolist(), reference_hosts(routing, lengths).tolist()
    loop_time, loop = best_of(lambda: python_loop(id_list, host_list), 1)
    assert fast == loop, (fast, loop)
    n = ids.size
    print(
        f"{label}: {n:,} references, {fleet} hosts (round-robin), pooled misses {fast[0]:,}, per-host misses {fast[1]:,}"
    )
    print(f"  numpy   {fast_time * 1e3:9.1f} ms  {n / fast_time / 1e6:8.1f} M refs/s")
    print(f"  python  {loop_time * 1e3:9.1f} ms  {n / loop_time / 1e6:8.1f} M refs/s")
    print(
        f"  speed-up {loop_time / fast_time:.1f}x (goal >= 20x); throughput goal >= 20 M refs/s: "
        f"{'met' if n / fast_time >= 20e6 else 'NOT met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=10_000_000)
    parser.add_argument("--fleet", type=int, default=16)
    args = parser.parse_args()
    if TRACE.exists():
        from pyverify.cache.arrays import flatten
        from pyverify.inputs.mooncake import import_mooncake

        ids, lengths = flatten(import_mooncake(TRACE).chains)
        compare("mooncake synthetic_trace.jsonl", ids, lengths, args.fleet, repeats=5)
    ids, lengths = synthetic_trace(args.refs)
    compare("synthetic prefix-closed trace", ids, lengths, args.fleet, repeats=3)


if __name__ == "__main__":
    main()
