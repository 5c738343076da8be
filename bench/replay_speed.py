"""The replay's speed: the Python event loop (replay_python) against the compiled replay, on a synthetic trace.

    python bench/replay_speed.py [--requests N] [--python-requests M] [--fleet F] [--capacity C]

Measured: the time of one ``replay(...)`` call (``engine="python"`` on the first M requests, extrapolated
to N by the ratio N / M and printed as an extrapolation; ``engine="compiled"`` on all N, split into the
kernel alone and the whole call, which adds flattening the chains to arrays and per-host stats). Untimed
only: the compiled replay does not run timed configurations yet (it refuses them). Not measured: reading
a trace file, or the bounds the command prints beside a run. The trace: bench/synthetic.py, cut to N
requests; round-robin over F hosts, LRU GPU caches of C blocks.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import chains_of, synthetic_trace  # noqa: E402

from pyverify.fleet.replay import replay  # noqa: E402
from pyverify.fleet.routers import Router  # noqa: E402
from pyverify.sim.kernels.replay import flat_requests, link_array, replay as lru_kernel  # noqa: E402


def trace_of(requests: int) -> list[tuple[int, ...]]:
    ids, lengths = synthetic_trace(40 * requests)  # ~27 references per request on average: enough for N requests
    if lengths.size < requests:
        raise SystemExit(f"the generator gave {lengths.size} requests, fewer than {requests}")
    lengths = lengths[:requests]
    return chains_of(ids[:int(lengths.sum())], lengths)


def seconds(call) -> tuple[float, object]:
    begin = time.perf_counter()
    result = call()
    return time.perf_counter() - begin, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--python-requests", type=int, default=50_000)
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument("--capacity", type=int, default=2_000)
    args = parser.parse_args()
    chains = trace_of(args.requests)
    references = sum(map(len, chains))
    print(f"machine: {platform.node()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print(f"trace: bench/synthetic.py, {len(chains):,} requests, {references:,} references; "
          f"round-robin over {args.fleet} hosts, LRU {args.capacity} blocks/host, untimed")

    warm = chains[:100]
    replay(warm, Router("round-robin", args.fleet), args.capacity, "lru", timed=False, engine="compiled")  # load the kernel
    subset = chains[:args.python_requests]
    python_s, python_run = seconds(lambda: replay(subset, Router("round-robin", args.fleet), args.capacity, "lru",
                                                  timed=False, engine="python"))
    compiled_subset = replay(subset, Router("round-robin", args.fleet), args.capacity, "lru", timed=False, engine="compiled")
    assert compiled_subset == python_run, "compiled and Python runs differ"
    call_s, run = seconds(lambda: replay(chains, Router("round-robin", args.fleet), args.capacity, "lru", timed=False,
                                         engine="compiled"))
    ids, universe, starts, order, bounds = flat_requests(chains, [index % args.fleet for index in range(len(chains))])
    kernel_s, _ = seconds(lambda: lru_kernel(ids, starts, order, bounds, link_array(universe), args.capacity, True))
    extrapolated = python_s * len(chains) / len(subset)
    print(f"python event loop: {python_s:.2f} s on {len(subset):,} requests; extrapolated to {len(chains):,} "
          f"(x {len(chains) / len(subset):g}, an extrapolation, not a run): {extrapolated:.1f} s")
    print(f"compiled: whole replay() call {call_s:.2f} s, kernel alone {kernel_s:.2f} s, on {len(chains):,} requests")
    print(f"ratio (extrapolated python / compiled call): {extrapolated / call_s:.0f}x; "
          f"equal runs checked on the {len(subset):,}-request subset; hit rate {run.hit_blocks / run.references:.4f}")
    print("timed: not measured (the compiled replay refuses timed configurations today)")


if __name__ == "__main__":
    main()
