"""SHARDS estimates against the exact LRU curve: the error, measured on the traces at hand.

    python bench/shards_error.py [--refs 10000000]

For the Mooncake synthetic trace (if ../shared is present) and
bench/synthetic.py's trace, at sampling rates 0.5, 0.1, 0.05, 0.01 and
0.001: the mean and the largest absolute difference in miss ratio between
:func:`pyverify.sim.shards.shards_curve` and the exact curve
(:mod:`pyverify.sim.mrc`) over about 10 capacities per decade, and the time
of each (sampling cuts the stack-distance work by about the rate).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synthetic import synthetic_trace  # noqa: E402

from pyverify.sim.mrc import curve_from_distances, log_capacities, stack_distances  # noqa: E402
from pyverify.sim.shards import curve_error, shards_curve  # noqa: E402

TRACE = HERE.parents[1] / "shared" / "data" / "mooncake" / "synthetic_trace.jsonl"
RATES = (0.5, 0.1, 0.05, 0.01, 0.001)


def report(label, ids) -> None:
    start = time.perf_counter()
    exact = curve_from_distances(stack_distances(ids))
    exact_seconds = time.perf_counter() - start
    capacities = log_capacities(exact.max_useful_capacity)
    print(f"{label}: {ids.size:,} references, exact curve {exact_seconds:.2f} s")
    print(
        f"  {'rate':>6} {'sampled refs':>13} {'mean abs err':>13} {'max abs err':>12} {'time':>8}"
    )
    for rate in RATES:
        start = time.perf_counter()
        estimate = shards_curve(ids, rate)
        seconds = time.perf_counter() - start
        error = curve_error(estimate, exact, capacities)
        print(
            f"  {rate:>6} {estimate.sampled_references:>13,} {error['mean_abs_error']:>13.4f} "
            f"{error['max_abs_error']:>12.4f} {seconds:>7.2f}s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=10_000_000)
    args = parser.parse_args()
    if TRACE.exists():
        from pyverify.inputs.columnar import read_jsonl

        report("mooncake synthetic_trace.jsonl", read_jsonl(TRACE).ids)
    ids, _ = synthetic_trace(args.refs)
    report("bench/synthetic.py trace", ids)


if __name__ == "__main__":
    main()
