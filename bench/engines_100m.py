"""The same counts at 100M block references with numpy, DuckDB and Dask (2 workers), side by side.

    python bench/engines_100m.py [--refs 100000000] [--fleet 16] [--keep]

Writes bench/trace_files.py's synthetic trace as Parquet (streamed), then runs
``pyverify simulate TRACE --backend E`` for pooled and for per-host
(``--fleet 16 --routing round-robin``) with each engine, each in a fresh
process (bench/peak.py: wall time, and the peak RSS of the largest single
process the command ran, which for Dask is the client or one of the local
cluster's two worker processes; the cluster's start and stop are in the
time). Ratios are of times measured in this run, against numpy.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from peak import measure  # noqa: E402
from trace_files import write_parquet  # noqa: E402

GIB = 1024**3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=100_000_000)
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument("--trace", type=Path, default=Path("/tmp/pyverify-bench-100m.parquet"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    generated = not args.trace.exists()
    if generated:
        write_parquet(args.trace, args.refs)
    print(
        f"machine: 2 cores, 24 GiB (shared); trace {args.trace} ({args.trace.stat().st_size / 2**20:,.0f} MiB Parquet), "
        f"{args.refs:,} references"
    )
    models = {
        "pooled": ["--model", "pooled"],
        f"per-host ({args.fleet} hosts, round-robin)": [
            "--model",
            "per-host",
            "--fleet",
            str(args.fleet),
            "--routing",
            "round-robin",
        ],
    }
    for label, flags in models.items():
        print(f"{label}:")
        results = {}
        for engine in ("numpy", "duckdb", "dask"):
            result = measure(
                [
                    sys.executable,
                    "-m",
                    "pyverify",
                    "simulate",
                    str(args.trace),
                    *flags,
                    "--backend",
                    engine,
                    "--json",
                ]
            )
            if result["status"] != 0:
                print(f"  {engine:7} FAILED: {result['stderr'][-500:]}")
                continue
            results[engine] = (result, json.loads(result["stdout"]))
        misses = {data["misses"] for _, data in results.values()}
        assert len(misses) == 1, f"engines disagree: {misses}"
        base = results["numpy"][0]["seconds"]
        for engine, (result, data) in results.items():
            print(
                f"  {engine:7} {result['seconds']:7.1f} s  peak RSS {result['peak_rss_bytes'] / GIB:5.2f} GiB  "
                f"{base / result['seconds']:5.2f}x numpy's speed  misses {data['misses']:,}"
            )
    print(
        "note: Dask's time includes starting and stopping a local 2-worker cluster; peak RSS is the largest "
        "single process (client or worker)."
    )
    if generated and not args.keep:
        args.trace.unlink()


if __name__ == "__main__":
    main()
