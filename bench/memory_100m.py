"""Peak memory of uncapacitated pooled + per-host counting on 100M synthetic references.

    python bench/memory_100m.py [--refs N] [--fleet F]

Runs the work in a fresh subprocess and reports its peak resident set size
(``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``) -- generating the trace
included, since the counting needs it in memory. Also reports the bare
interpreter + numpy baseline, and the time and throughput of the counting
alone. Goal (issue 5): under 2 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
from synthetic import synthetic_trace
from pyverify.sim.counting import count_uncapacitated, reference_hosts
refs, fleet = {refs}, {fleet}
start = time.perf_counter()
ids, lengths = synthetic_trace(refs)
generated = time.perf_counter() - start
routing = np.arange(lengths.size, dtype=np.int32) % fleet
start = time.perf_counter()
pooled, per_host = count_uncapacitated(ids, reference_hosts(routing, lengths), fleet)
counted = time.perf_counter() - start
print(json.dumps({{"refs": int(ids.size), "requests": int(lengths.size), "pooled": pooled, "per_host": per_host,
                  "generate_s": generated, "count_s": counted}}))
"""

BASELINE = "import numpy, pyverify.sim.counting"


def peak_rss_of(code: str) -> tuple[int, str]:
    """Run ``code`` in a fresh interpreter; return (its peak RSS in bytes, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if after < before:  # ru_maxrss of children is the max over all waited-for children
        raise RuntimeError("cannot attribute peak RSS")
    return after * 1024, result.stdout  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=100_000_000)
    parser.add_argument("--fleet", type=int, default=16)
    args = parser.parse_args()
    baseline, _ = peak_rss_of(BASELINE)
    peak, out = peak_rss_of(CHILD.format(here=str(HERE), refs=args.refs, fleet=args.fleet))
    data = json.loads(out)
    gib = 1024**3
    print(
        f"{data['refs']:,} synthetic references ({data['requests']:,} requests), {args.fleet} hosts round-robin: "
        f"pooled misses {data['pooled']:,}, per-host misses {data['per_host']:,}"
    )
    print(
        f"  generate {data['generate_s']:.1f} s; count {data['count_s']:.2f} s = {data['refs'] / data['count_s'] / 1e6:.1f} M refs/s"
    )
    print(
        f"  peak RSS {peak / gib:.2f} GiB (interpreter + numpy alone: {baseline / gib:.2f} GiB); "
        f"goal < 2 GB (1.86 GiB): {'met' if peak < 2e9 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
