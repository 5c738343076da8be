"""Exact LRU miss-ratio curve at every capacity (pyverify.sim.mrc, one pass)
against libCacheSim replaying LRU at 20 capacities. Ratios measured in this run.

    python bench/mrc_vs_libcachesim.py [--refs N]

libCacheSim runs in C: the flat block sequence is written once as an
oracleGeneral binary trace (time reported apart), then for each of 20
log-spaced capacities an LRU of that many unit-size objects replays it via
``cache.process_trace`` (hash table sized to the trace: hashpower =
ceil(log2(distinct)) + 1). pyverify computes the stack distance of every
reference and so the misses at *all* capacities 1..max; both are checked to
agree at the 20 capacities. Goal (issue 5): the full curve is faster.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import synthetic_trace  # noqa: E402

from pyverify.sim.mrc import curve_from_distances, log_capacities, stack_distances  # noqa: E402

TRACE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "mooncake" / "synthetic_trace.jsonl"
)
ORACLE = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])


def compare(label: str, ids: np.ndarray) -> None:
    import libcachesim as lcs

    n = ids.size
    distinct = int(np.unique(ids).size)
    start = time.perf_counter()
    curve = curve_from_distances(stack_distances(ids))
    ours = time.perf_counter() - start
    capacities = log_capacities(max(curve.max_useful_capacity, 2), per_decade=1000)
    if len(capacities) > 20:
        capacities = [capacities[round(i * (len(capacities) - 1) / 19)] for i in range(20)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.oracleGeneral.bin"
        start = time.perf_counter()
        records = np.zeros(n, dtype=ORACLE)
        records["time"] = np.arange(n, dtype=np.uint32)
        records["id"] = ids.astype(np.uint64) + 1  # libCacheSim treats id 0 specially in some paths
        records["size"] = 1
        records["next"] = -1
        records.tofile(path)
        write = time.perf_counter() - start
        reader = lcs.TraceReader(
            str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True)
        )
        hashpower = max(10, math.ceil(math.log2(max(distinct, 2))) + 1)
        theirs = 0.0
        for capacity in capacities:
            start = time.perf_counter()
            miss_ratio, _ = lcs.LRU(capacity, hashpower=hashpower).process_trace(reader)
            theirs += time.perf_counter() - start
            misses = round(miss_ratio * n)
            assert misses == curve.misses(capacity), (capacity, misses, curve.misses(capacity))
    print(
        f"{label}: {n:,} references, {distinct:,} distinct; misses agree at all {len(capacities)} capacities "
        f"({capacities[0]}..{capacities[-1]})"
    )
    print(
        f"  pyverify exact curve, all {curve.max_useful_capacity:,} capacities: {ours * 1e3:9.1f} ms"
    )
    print(
        f"  libCacheSim LRU, {len(capacities)} capacities:             {theirs * 1e3:9.1f} ms"
        f"  (+ {write * 1e3:.1f} ms writing its trace file)"
    )
    print(
        f"  ratio libCacheSim / pyverify: {theirs / ours:.2f}x ({'faster' if ours < theirs else 'SLOWER'}; goal: faster)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=5_000_000)
    args = parser.parse_args()
    if TRACE.exists():
        from pyverify.cache.arrays import flatten
        from pyverify.inputs.mooncake import import_mooncake

        compare("mooncake synthetic_trace.jsonl", flatten(import_mooncake(TRACE).chains)[0])
    compare("synthetic prefix-closed trace", synthetic_trace(args.refs)[0].astype(np.int64))


if __name__ == "__main__":
    main()
