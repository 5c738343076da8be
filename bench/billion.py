"""1 billion block references as Parquet: pooled and per-host counts with DuckDB, time and peak RSS.

    python bench/billion.py [--refs 1000000000] [--trace PATH] [--keep]

Writes bench/trace_files.py's synthetic prefix-closed trace as Parquet in
chunks (bounded memory; unless --trace names an existing file), prints its
size on disk, then runs the commands a user runs, each in a fresh process::

    pyverify simulate TRACE --model pooled --backend duckdb --json
    pyverify simulate TRACE --model per-host --fleet 16 --routing round-robin --backend duckdb --json

and reports wall time and peak RSS of each (bench/peak.py). Goal (issue 14):
the per-host run finishes with peak RSS under 4 GiB on a 2-core, 24 GiB
machine. The generated file is deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from peak import measure  # noqa: E402
from trace_files import write_parquet  # noqa: E402

GIB = 1024**3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=1_000_000_000)
    parser.add_argument("--trace", type=Path, default=Path("/tmp/pyverify-bench-1b.parquet"))
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument("--keep", action="store_true", help="keep the generated Parquet file")
    args = parser.parse_args()
    generated = False
    if not args.trace.exists():
        start = time.perf_counter()
        write_parquet(args.trace, args.refs)
        generated = True
        print(f"generated {args.refs:,} references in {time.perf_counter() - start:.0f} s")
    size = args.trace.stat().st_size
    print(f"trace: {args.trace} ({size / 2**20:,.0f} MiB on disk, Parquet zstd)")
    print(f"free disk where DuckDB spills: {shutil.disk_usage('/tmp').free / GIB:.0f} GiB")
    env = dict(os.environ, PYVERIFY_DUCKDB_MEMORY=os.environ.get("PYVERIFY_DUCKDB_MEMORY", "2.5GB"))
    print(
        f"DuckDB memory limit {env['PYVERIFY_DUCKDB_MEMORY']} (PYVERIFY_DUCKDB_MEMORY); it spills past it"
    )
    runs = {
        f"per-host, {args.fleet} hosts round-robin": [
            "--model",
            "per-host",
            "--fleet",
            str(args.fleet),
            "--routing",
            "round-robin",
        ],
        "pooled": ["--model", "pooled"],
    }
    for label, flags in runs.items():
        result = measure(
            [
                sys.executable,
                "-m",
                "pyverify",
                "simulate",
                str(args.trace),
                *flags,
                "--backend",
                "duckdb",
                "--json",
            ],
            env,
        )
        if result["status"] != 0:
            print(f"{label}: FAILED: {result['stderr']}")
            continue
        data = json.loads(result["stdout"])
        peak = result["peak_rss_bytes"] / GIB
        print(
            f"{label:34} references {data['references']:,}  misses {data['misses']:,}  hit rate {data['hit_rate']:.4f}  "
            f"{result['seconds']:.0f} s  peak RSS {peak:.2f} GiB (goal < 4 GiB: {'met' if peak < 4 else 'NOT met'})",
            flush=True,
        )
    if generated and not args.keep:
        args.trace.unlink()
        print(f"deleted {args.trace}")


if __name__ == "__main__":
    main()
