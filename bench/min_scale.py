"""Belady's MIN at trace scale: time and peak memory on the 10M-reference synthetic trace.

    python bench/min_scale.py [--refs N] [--capacity C]

Runs pyverify.optimal.belady.min_run_flat (no witness: the numba-compiled count if installed, as `pyverify mrc
--policy opt --verify` or an audit would) on bench/synthetic.py's
prefix-closed trace, one core, and prints wall time, references per second
and the peak resident set size of this process (ru_maxrss, which includes the
trace arrays themselves). Goal (issue 11): under 30 s for 10M references,
memory O(n) with a small constant.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import synthetic_trace  # noqa: E402

from pyverify.optimal.belady import min_run_flat  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=10_000_000)
    parser.add_argument("--capacity", type=int, default=100_000)
    args = parser.parse_args()
    start = time.perf_counter()
    ids, lengths = synthetic_trace(args.refs)
    made = time.perf_counter() - start
    before = peak_rss_mb()
    print(
        f"synthetic trace: {ids.size:,} references, {lengths.size:,} requests, "
        f"{np.unique(ids).size:,} distinct blocks (made in {made:.1f} s; peak RSS so far {before:.0f} MB)"
    )
    warm = time.perf_counter()
    min_run_flat(
        np.array([1, 2, 1], dtype=np.int64), np.array([1, 1, 1]), None, 1
    )  # numba compiles or loads its cache once
    print(
        f"one-time kernel preparation (numba compile or cache load): {(time.perf_counter() - warm) * 1e3:.0f} ms, not counted below"
    )
    start = time.perf_counter()
    hit_blocks, _, misses = min_run_flat(ids, lengths, None, args.capacity)
    took = time.perf_counter() - start
    print(
        f"MIN, capacity {args.capacity:,} blocks: {misses:,} misses, hit rate {1 - misses / ids.size:.4f}"
    )
    print(
        f"  time {took:.1f} s ({ids.size / took / 1e6:.2f}M references/s; goal: 10M in under 30 s)"
    )
    print(
        f"  peak RSS {peak_rss_mb():.0f} MB for the whole process "
        f"({(peak_rss_mb() * 2**20) / ids.size:.0f} bytes per reference; trace arrays alone: {(ids.nbytes + lengths.nbytes) / 2**20:.0f} MB)"
    )


if __name__ == "__main__":
    main()
