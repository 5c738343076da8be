"""Write bench/synthetic.py's prefix-closed trace as Mooncake JSONL or Parquet, streamed in chunks.

    python bench/trace_files.py --refs N --jsonl out.jsonl
    python bench/trace_files.py --refs N --parquet out.parquet

:func:`synthetic_chunks` makes the same references as
``synthetic.synthetic_trace(N)`` (same random draws in the same order), one
chunk of 200,000 requests at a time, so memory stays bounded whatever N is:
the 1B-reference Parquet file of bench/billion.py is written this way.
JSONL lines look like Mooncake's:
``{"timestamp": i, "input_length": 512*k, "output_length": 1, "hash_ids": [...]}``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import synthetic_chunks  # noqa: E402  (the generator lives with the trace's description)


def write_jsonl(path: Path, n_refs: int, seed: int = 0) -> None:
    request = 0
    with open(path, "w", encoding="utf-8") as out:
        for ids, lengths in synthetic_chunks(n_refs, seed):
            bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
            flat = ids.tolist()
            lines = []
            for a, b in zip(bounds[:-1], bounds[1:]):
                lines.append(
                    f'{{"timestamp": {request}, "input_length": {512 * (b - a)}, "output_length": 1, '
                    f'"hash_ids": [{", ".join(map(str, flat[a:b]))}]}}\n'
                )
                request += 1
            out.writelines(lines)


def write_parquet(path: Path, n_refs: int, seed: int = 0) -> None:
    from pyverify.inputs.columnar import ParquetTraceWriter

    with ParquetTraceWriter(path) as writer:
        for ids, lengths in synthetic_chunks(n_refs, seed):
            writer.write(ids, np.concatenate(([0], np.cumsum(lengths))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jsonl", type=Path)
    parser.add_argument("--parquet", type=Path)
    args = parser.parse_args()
    for path, write in ((args.jsonl, write_jsonl), (args.parquet, write_parquet)):
        if path:
            start = time.perf_counter()
            write(path, args.refs, args.seed)
            print(
                f"wrote {path}: {path.stat().st_size / 2**20:.1f} MiB in {time.perf_counter() - start:.1f} s"
            )


if __name__ == "__main__":
    main()
