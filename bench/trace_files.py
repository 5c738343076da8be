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


#: The JSONL forms :func:`write_jsonl` writes: ``dumps`` is ``json.dumps``' own (Mooncake's release); ``other`` is
#: the same trace as other tools write it: compact separators, another key order, ``hash_ids`` first, and one
#: extra field (a request id, a string) that readers must skip.
JSONL_FORMS = ("dumps", "other")


def write_jsonl(path: Path, n_refs: int, seed: int = 0, form: str = "dumps") -> None:
    if form not in JSONL_FORMS:
        raise ValueError(f"form {form!r}: expected one of {JSONL_FORMS}")
    request = 0
    with open(path, "w", encoding="utf-8") as out:
        for ids, lengths in synthetic_chunks(n_refs, seed):
            bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
            flat = ids.tolist()
            lines = []
            for a, b in zip(bounds[:-1], bounds[1:]):
                if form == "dumps":
                    lines.append(
                        f'{{"timestamp": {request}, "input_length": {512 * (b - a)}, "output_length": 1, '
                        f'"hash_ids": [{", ".join(map(str, flat[a:b]))}]}}\n'
                    )
                else:
                    lines.append(
                        f'{{"hash_ids":[{",".join(map(str, flat[a:b]))}],"output_length":1,'
                        f'"input_length":{512 * (b - a)},"timestamp":{request},"request_id":"req-{request}"}}\n'
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
    parser.add_argument(
        "--form", choices=JSONL_FORMS, default="dumps", help="the JSONL form (see JSONL_FORMS)"
    )
    parser.add_argument("--parquet", type=Path)
    args = parser.parse_args()
    for path, write in ((args.jsonl, write_jsonl), (args.parquet, write_parquet)):
        if path:
            start = time.perf_counter()
            if write is write_jsonl:
                write(path, args.refs, args.seed, args.form)
            else:
                write(path, args.refs, args.seed)
            print(
                f"wrote {path}: {path.stat().st_size / 2**20:.1f} MiB in {time.perf_counter() - start:.1f} s"
            )


if __name__ == "__main__":
    main()
