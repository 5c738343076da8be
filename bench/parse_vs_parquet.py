"""Loading a trace: JSONL parsers against reading Parquet, and the end-to-end pooled count against DuckDB.

    python bench/parse_vs_parquet.py [--refs 10000000,50000000] [--keep]

For each size, writes bench/trace_files.py's synthetic trace as JSONL and as
Parquet, then measures, in this one run:

* loading only (in this process, best of 2): pyverify's fast JSONL path
  (:func:`pyverify.inputs.columnar.read_jsonl`, every check included), the
  candidate parsers it was chosen from (orjson and msgspec line by line,
  pyarrow's JSON reader, DuckDB's read_json; parse to flat int64 ids, no
  checks), the strict reader (:func:`pyverify.inputs.mooncake.import_mooncake`;
  10M only), and reading the Parquet file;
* end to end, as a user runs it (fresh processes, wall time and peak RSS):
  ``pyverify simulate TRACE --model pooled`` on the JSONL and on the Parquet,
  DuckDB's own count of distinct ids on the same JSONL
  (``SELECT count(DISTINCT id) FROM (SELECT unnest(hash_ids) ...read_json)``),
  and a ten-line plain Python script (json.loads + set).

The comparison also needs orjson and msgspec (``pip install orjson msgspec``;
pyverify itself uses neither). Ratios are of times measured in this run. Goal (issue 14): pyverify's pooled
count on JSONL faster than DuckDB's own count, at 10M and 50M references.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from peak import measure  # noqa: E402
from trace_files import write_jsonl, write_parquet  # noqa: E402

GIB = 1024**3

DUCKDB_COUNT = """
import duckdb, sys
duckdb.execute("SET enable_progress_bar = false")
print(duckdb.execute(f"SELECT count(DISTINCT id) FROM (SELECT unnest(hash_ids) AS id FROM read_json('{sys.argv[1]}', columns={{hash_ids: 'BIGINT[]'}}))").fetchall()[0][0])
"""

PLAIN_PYTHON = """
import json, sys
seen = set()
with open(sys.argv[1]) as lines:
    for line in lines:
        seen.update(json.loads(line)["hash_ids"])
print(len(seen))
"""


def best_of(function, repeats=2):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def flat(lists) -> int:
    lengths = np.fromiter(map(len, lists), np.int64, len(lists))
    return np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(lengths.sum())).size


def parsers(path: Path, everything: bool) -> dict:
    import duckdb
    import msgspec
    import orjson
    import pyarrow as pa
    import pyarrow.json as pj

    from pyverify.inputs.columnar import read_jsonl, read_parquet

    class Line(msgspec.Struct):
        hash_ids: list[int]

    schema = pa.schema([("hash_ids", pa.list_(pa.int64()))])
    candidates = {
        "pyverify fast JSONL path (checks included)": lambda: read_jsonl(path).n_references,
        "orjson per line (parse only)": lambda: flat(
            [orjson.loads(line)["hash_ids"] for line in path.read_bytes().splitlines()]
        ),
        "msgspec typed lines (parse only)": lambda: flat(
            [r.hash_ids for r in msgspec.json.Decoder(Line).decode_lines(path.read_bytes())]
        ),
        "pyarrow.json (parse only)": lambda: (
            pj.read_json(
                path,
                parse_options=pj.ParseOptions(
                    explicit_schema=schema, unexpected_field_behavior="ignore"
                ),
            )
            .column("hash_ids")
            .combine_chunks()
            .values.to_numpy()
            .size
        ),
        "duckdb read_json (parse only)": lambda: (
            duckdb.sql(
                f"SELECT unnest(hash_ids) AS id FROM read_json('{path}', columns={{hash_ids: 'BIGINT[]'}})"
            )
            .fetchnumpy()["id"]
            .size
        ),
        "Parquet via pyverify (checks included)": lambda: (
            read_parquet(path.with_suffix(".parquet")).n_references
        ),
    }
    if (
        not everything
    ):  # per-line parsers in Python are the slow ones: measured at the smaller size only
        candidates = {
            name: f
            for name, f in candidates.items()
            if "per line" not in name and "typed lines" not in name
        }
    return {
        name: best_of(function, 2 if everything else 1)[0] for name, function in candidates.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", default="10000000,50000000")
    parser.add_argument("--folder", type=Path, default=Path("/tmp"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    print("machine: 2 cores, 24 GiB (shared); times in seconds, peak RSS in GiB")
    for refs in [int(part) for part in args.refs.split(",")]:
        jsonl = args.folder / f"pyverify-bench-{refs}.jsonl"
        parquet = jsonl.with_suffix(".parquet")
        write_jsonl(jsonl, refs)
        write_parquet(parquet, refs)
        print(
            f"\n{refs:,} references: JSONL {jsonl.stat().st_size / 2**20:,.0f} MiB, Parquet {parquet.stat().st_size / 2**20:,.0f} MiB"
        )
        print("loading only (in process; best of 2 at 10M, one run above):")
        loads = parsers(jsonl, everything=refs <= 10_000_000)
        if refs <= 10_000_000:
            from pyverify.inputs.mooncake import import_mooncake

            loads["pyverify strict reader (import_mooncake)"] = best_of(
                lambda: import_mooncake(jsonl), 1
            )[0]
        fast = loads["pyverify fast JSONL path (checks included)"]
        for name, seconds in loads.items():
            print(f"  {name:45} {seconds:7.2f} s  ({seconds / fast:5.2f}x the fast path)")
        print("end to end (fresh process each):")
        runs = {
            "pyverify simulate --model pooled (JSONL)": [
                sys.executable,
                "-m",
                "pyverify",
                "simulate",
                str(jsonl),
                "--model",
                "pooled",
                "--json",
            ],
            "pyverify simulate --model pooled (Parquet)": [
                sys.executable,
                "-m",
                "pyverify",
                "simulate",
                str(parquet),
                "--model",
                "pooled",
                "--json",
            ],
            "DuckDB count(DISTINCT) on the JSONL": [sys.executable, "-c", DUCKDB_COUNT, str(jsonl)],
            "plain Python json.loads + set": [sys.executable, "-c", PLAIN_PYTHON, str(jsonl)],
        }
        results = {name: measure(command) for name, command in runs.items()}
        answers = set()
        for name, result in results.items():
            out = result["stdout"].strip()
            answers.add(json.loads(out)["misses"] if out.startswith("{") else int(out))
        assert len(answers) == 1, f"the counts differ: {results}"
        duck = results["DuckDB count(DISTINCT) on the JSONL"]["seconds"]
        for name, result in results.items():
            print(
                f"  {name:45} {result['seconds']:7.2f} s  peak {result['peak_rss_bytes'] / GIB:5.2f} GiB  "
                f"({duck / result['seconds']:5.2f}x DuckDB's speed)"
            )
        print(f"  all four count {answers.pop():,} distinct blocks")
        if not args.keep:
            jsonl.unlink()
            parquet.unlink()


if __name__ == "__main__":
    main()
