"""The compiled kernels (pyverify.sim.kernels) against their baselines, ratios measured in this run.

    python bench/curves.py [--refs N] [--big-refs N] [--capacity C] [--fleet F]

1. The exact LRU curve (``pyverify.sim.mrc.lru_curve_of_references``: dense
   ids + the dead-mark stack-distance kernel, histogram out) against a plain
   numba Fenwick pass over the same ids (Olken's marking: two queries, two
   updates, every distance stored) and against the numpy construction mrc used
   before. Goal (issue 16): the curve at least as fast as the plain pass.
   Pooled and per host (F hosts, round-robin).
2. LRU and FIFO at one capacity C with longest-prefix hits: the replay kernel
   (``pyverify.sim.kernels.replay.replay`` on flat arrays, and
   ``pyverify.sim.simulate.simulate`` from Python chains, conversion included)
   against libCacheSim's LRU replaying the flat sequence in C
   (``process_trace`` on an oracleGeneral file written beforehand, not timed)
   and against the Python OrderedDict replay (the oracle). Goal: faster than
   libCacheSim. FIFO has no libCacheSim twin here: longest-prefix FIFO is not
   flat FIFO on prefix-closed traces (pyverify/sim/mrc.py), so it is checked
   against the oracle only.
3. The curve on ``--big-refs`` references (default 50M) in a fresh process:
   time, peak RSS, and the kernel's working memory per reference (peak RSS of
   the curve run minus that of a process that only loads the same ids).

Kernels are compiled (or loaded from numba's cache) before timing; the
compile/load time is printed apart. Fast runs are the best of 3, the Python
oracles run once. The kernels are loaded before timing, so ``simulate()`` takes its
kernel path at every size here. Every implementation's result is compared, and a
disagreement stops the script.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synthetic import chains_of, synthetic_trace  # noqa: E402

from pyverify.sim.counting import dense_ids, reference_hosts  # noqa: E402
from pyverify.sim.mrc import curve_from_distances, lru_curve_of_references, stack_distances  # noqa: E402
from pyverify.sim.simulate import FIFO, LRU, POOLED, _capacitated_hits, simulate  # noqa: E402

TRACE = HERE.parents[1] / "shared" / "data" / "mooncake" / "synthetic_trace.jsonl"
ORACLE = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])


def plain_fenwick_pass():
    """Olken's marking with a Fenwick tree, compiled: the baseline the issue measured."""
    from numba import njit

    @njit(cache=True)
    def plain(ids, universe):
        n = ids.size
        tree = np.zeros(n + 1, np.int32)
        last = np.full(universe, -1, np.int64)
        distances = np.empty(n, np.int64)
        for t in range(n):
            block = ids[t]
            p = last[block]
            if p < 0:
                distances[t] = -1
            else:
                marks = 0  # marks at positions < t, minus marks at positions <= p
                i = t
                while i > 0:
                    marks += tree[i]
                    i -= i & -i
                i = p + 1
                while i > 0:
                    marks -= tree[i]
                    i -= i & -i
                distances[t] = marks
                i = p + 1
                while i <= n:
                    tree[i] -= 1
                    i += i & -i
            i = t + 1
            while i <= n:
                tree[i] += 1
                i += i & -i
            last[block] = t
        return distances

    return plain


def best_of(function, repeats: int = 3):
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def once(function):
    return best_of(function, 1)


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds / 1e6:6.1f}M refs/s"


def same_curve(a, b) -> bool:
    return a.cold == b.cold and np.array_equal(a.histogram, b.histogram)


def agree(label: str, *values) -> str:
    if any(v != values[0] for v in values[1:]):
        raise SystemExit(f"DISAGREEMENT in {label}: {values}")
    return "agree"


def warm_up() -> float:
    """Compile (or load from cache) every kernel once, on a tiny input."""
    from pyverify.sim.kernels.replay import link_array, replay

    start = time.perf_counter()
    ids = np.array([0, 1, 0], dtype=np.int64)
    hosts = np.array([0, 1, 0], dtype=np.uint8)
    for array in (ids, ids.astype(np.int32)):
        lru_curve_of_references(np.resize(array, 20_000), None)
        lru_curve_of_references(np.resize(array, 20_000), np.resize(hosts, 20_000), 2)
    starts = np.array([0, 2, 3], dtype=np.int64)
    for lru in (True, False):
        replay(ids, starts, np.arange(2), np.array([0, 2]), link_array(2), 1, lru)
    plain_fenwick_pass()(ids, 2)
    return time.perf_counter() - start


def curves(label: str, ids: np.ndarray, lengths: np.ndarray, fleet: int) -> None:
    n = ids.size
    plain = plain_fenwick_pass()
    dense, universe = dense_ids(ids)
    t_plain, distances = best_of(lambda: plain(dense, universe))
    t_kernel, curve = best_of(lambda: lru_curve_of_references(ids))
    t_numpy, old = once(lambda: curve_from_distances(stack_distances(ids)))
    plain_curve = curve_from_distances(distances)
    agree("pooled curve", True, same_curve(curve, plain_curve), same_curve(curve, old))
    print(f"{label}: {n:,} references, {curve.cold:,} distinct")
    print(f"  exact LRU curve, pooled: histograms of all 3 {agree('', True)}")
    print(f"    kernel (dense ids + dead-mark pass) {t_kernel * 1e3:8.1f} ms  {rate(n, t_kernel)}")
    print(f"    plain numba Fenwick pass            {t_plain * 1e3:8.1f} ms  {rate(n, t_plain)}")
    print(f"    numpy construction (mrc before)     {t_numpy * 1e3:8.1f} ms  {rate(n, t_numpy)}")
    print(f"    ratio plain Fenwick / kernel: {t_plain / t_kernel:.2f}x (goal >= 1); "
          f"numpy / kernel: {t_numpy / t_kernel:.1f}x")
    routing = np.arange(lengths.size) % fleet
    hosts = reference_hosts(routing, lengths)
    t_host, per_host = best_of(lambda: lru_curve_of_references(ids, hosts, fleet))
    order = np.argsort(hosts, kind="stable")
    keys = dense[order].astype(np.int64) * fleet + hosts[order]
    dense_keys, key_universe = dense_ids(keys)
    t_plain_host, host_distances = best_of(lambda: plain(dense_keys, key_universe))
    t_numpy_host, old_host = once(lambda: curve_from_distances(stack_distances(keys)))
    agree("per-host curve", True, same_curve(per_host, curve_from_distances(host_distances)), same_curve(per_host, old_host))
    print(f"  exact LRU curve, {fleet} hosts round-robin: histograms of all 3 agree ({per_host.cold:,} cold)")
    print(f"    kernel (grouping by host included)  {t_host * 1e3:8.1f} ms  {rate(n, t_host)}")
    print(f"    plain numba Fenwick pass            {t_plain_host * 1e3:8.1f} ms  {rate(n, t_plain_host)}  "
          f"(on host-grouped ids, grouping not timed)")
    print(f"    numpy construction (mrc before)     {t_numpy_host * 1e3:8.1f} ms  {rate(n, t_numpy_host)}")
    print(f"    ratio plain Fenwick / kernel: {t_plain_host / t_host:.2f}x; numpy / kernel: {t_numpy_host / t_host:.1f}x")


def libcachesim_lru(ids: np.ndarray, capacity: int) -> tuple[float, int]:
    import libcachesim as lcs

    n = ids.size
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.oracleGeneral.bin"
        records = np.zeros(n, dtype=ORACLE)
        records["time"] = np.arange(n, dtype=np.uint32)
        records["id"] = ids.astype(np.uint64) + 1
        records["size"] = 1
        records["next"] = -1
        records.tofile(path)
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True))
        hashpower = max(10, math.ceil(math.log2(max(int(np.unique(ids).size), 2))) + 1)
        seconds, miss_ratio = best_of(lambda: lcs.LRU(capacity, hashpower=hashpower).process_trace(reader)[0])
    return seconds, round(miss_ratio * n)


def one_capacity(label: str, ids: np.ndarray, lengths: np.ndarray, capacity: int) -> None:
    from pyverify.sim.kernels.replay import link_array, replay

    n = ids.size
    chains = chains_of(ids, lengths)
    dense, universe = dense_ids(ids)
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    order, bounds = np.arange(lengths.size), np.array([0, lengths.size])
    print(f"  {label}, one pooled cache of {capacity:,} blocks:")
    for eviction in (LRU, FIFO):
        t_kernel, hits = best_of(lambda: replay(dense, starts, order, bounds, link_array(universe), capacity, eviction == LRU))
        t_simulate, run = best_of(lambda: simulate(chains, None, POOLED, capacity=capacity, eviction=eviction))
        t_python, oracle = once(lambda: _capacitated_hits(chains, [0] * len(chains), capacity, eviction))
        misses = n - int(hits.sum())
        agree(f"{eviction} witness", hits.tolist(), list(run.hit_blocks), oracle)
        results = [f"kernel {misses:,}", f"simulate {run.misses:,}", f"Python {n - sum(oracle):,}"]
        if eviction == LRU:
            t_lcs, lcs_misses = libcachesim_lru(ids, capacity)
            agree("LRU misses vs libCacheSim", misses, lcs_misses)
            results.append(f"libCacheSim {lcs_misses:,}")
        print(f"    {eviction.upper()} misses: {', '.join(results)} (witnesses agree)")
        print(f"      replay kernel on arrays             {t_kernel * 1e3:8.1f} ms  {rate(n, t_kernel)}")
        print(f"      simulate() from Python chains       {t_simulate * 1e3:8.1f} ms  {rate(n, t_simulate)}")
        if eviction == LRU:
            print(f"      libCacheSim LRU (C, flat sequence)  {t_lcs * 1e3:8.1f} ms  {rate(n, t_lcs)}")
        print(f"      Python OrderedDict (the oracle)     {t_python * 1e3:8.1f} ms  {rate(n, t_python)}")
        line = f"      ratios: Python / kernel {t_python / t_kernel:.1f}x, Python / simulate() {t_python / t_simulate:.1f}x"
        if eviction == LRU:
            line += (f"; libCacheSim / kernel {t_lcs / t_kernel:.2f}x, libCacheSim / simulate() {t_lcs / t_simulate:.2f}x"
                     " (goal > 1)")
        print(line)


GENERATE = r"""
import sys
sys.path.insert(0, {here!r})
import numpy as np
from synthetic import synthetic_trace
np.save({path!r}, synthetic_trace({refs})[0])
"""

CURVE = r"""
import json, os, resource, time
import numpy as np
import pyverify.sim.kernels.stack_distance  # loaded: small inputs use the kernel too
from pyverify.sim.mrc import lru_curve_of_references
ids = np.load({path!r})
lru_curve_of_references(np.resize(ids[:100], 20_000))  # compile, or load from numba's cache
before = os.sysconf("SC_PAGE_SIZE") * int(open("/proc/self/statm").read().split()[1])  # resident now
start = time.perf_counter()
curve = lru_curve_of_references(ids)
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "cold": curve.cold, "reused": int(curve.histogram.sum()),
                  "max_distance": int(curve.histogram.size) - 1, "before": before,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}))  # Linux: KiB
"""


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (this checkout first on the path); return its stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout


def big_curve(refs: int) -> None:
    """The curve on ``refs`` references in a fresh process, generated by another (peak RSS is the curve's own)."""
    gib = 1024**3
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "ids.npy")
        start = time.perf_counter()
        run_python(GENERATE.format(here=str(HERE), path=path, refs=refs))
        generated = time.perf_counter() - start
        data = json.loads(run_python(CURVE.format(path=path)).strip().splitlines()[-1])
    peak, before = data["peak"], data["before"]
    working = peak - before
    print(f"synthetic trace, {refs:,} references (int32 ids, {refs * 4 / gib:.2f} GiB; generated in {generated:.1f} s): "
          f"{data['cold']:,} distinct, {data['reused']:,} re-references, largest distance {data['max_distance']:,}")
    print(f"  exact LRU curve in {data['seconds']:.1f} s = {rate(refs, data['seconds'])}")
    print(f"  peak RSS {peak / gib:.2f} GiB = {peak / refs:.1f} bytes per reference, of which the process with "
          f"its ids loaded {before / gib:.2f} GiB and the curve's working memory {working / gib:.2f} GiB "
          f"= {working / refs:.1f} bytes per reference")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=5_000_000)
    parser.add_argument("--big-refs", type=int, default=50_000_000)
    parser.add_argument("--capacity", type=int, default=100_000)
    parser.add_argument("--fleet", type=int, default=16)
    args = parser.parse_args()
    import numba

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}, "
          f"numpy {np.__version__}, numba {numba.__version__}")
    if args.big_refs:
        big_curve(args.big_refs)
    print(f"kernels compiled or loaded from numba's cache in {warm_up():.2f} s (not in the timings below)")
    if TRACE.exists():
        from pyverify.inputs.mooncake import import_mooncake
        from pyverify.sim.counting import flatten

        ids, lengths = flatten(import_mooncake(TRACE).chains)
        curves("mooncake synthetic_trace.jsonl", ids, lengths, args.fleet)
        one_capacity("mooncake synthetic_trace.jsonl", ids, lengths, 5859)
    ids, lengths = synthetic_trace(args.refs)
    curves("synthetic prefix-closed trace", ids, lengths, args.fleet)
    one_capacity("synthetic prefix-closed trace", ids, lengths, args.capacity)


if __name__ == "__main__":
    main()
