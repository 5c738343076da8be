"""Writing a trace as Parquet, chunk by chunk and atomically.

:class:`ParquetTraceWriter` writes the Parquet form chunk by chunk (one row
group per chunk, atomically), which is what ``pyverify trace import -o
x.parquet`` and the 1B-reference benchmark use; :func:`write_parquet` writes a
whole :class:`~pyverify.inputs.columnar.trace.ColumnarTrace` with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pyverify.inputs.columnar.extras import require
from pyverify.inputs.columnar.trace import DEFAULT_BLOCK_TOKENS, ColumnarTrace

#: Written into the Parquet file's metadata so readers know what wrote it.
PARQUET_FORMAT = "pyverify.trace/1"

#: The metadata's block size of a trace that gives none (an instance of block ids only).
NO_BLOCK_SIZE = "none"

#: A request label ``KEY`` (an instance's ``labels``, e.g. Qwen-Bailian's ``chat_id``) is the
#: column ``label.KEY``.
LABEL_PREFIX = "label."


def label_columns(labels: list | None, path: str | Path) -> dict[str, str]:
    """Each label key of a trace's ``labels`` and its column's kind, ``int`` or ``str`` (one kind
    per key: the instance allows either, and a column holds one); one line of error for a key
    whose values mix them."""
    from pyverify.errors import located

    kinds: dict[str, str] = {}
    for index, item in enumerate(labels or ()):
        for key, value in (item or {}).items():
            kind = "str" if isinstance(value, str) else "int"
            if kinds.setdefault(key, kind) != kind:
                raise located(
                    path,
                    f"requests[{index}].labels.{key}",
                    "mixes integers and strings across requests: a Parquet column holds "
                    "one kind; write an instance (.json) instead",
                )
    return kinds


class ParquetTraceWriter:
    """Write a trace as Parquet, one row group per :meth:`write`, atomically.

    Use as a context manager; the file appears (renamed into place) only when
    the block exits without an error.
    """

    def __init__(
        self,
        path: str | Path,
        block_size_tokens: int | None = DEFAULT_BLOCK_TOKENS,
        columns: tuple[str, ...] = (),
        whole_timestamps: bool = False,
        labels: dict[str, str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.block_size_tokens = block_size_tokens
        self.labels = labels or {}  # key -> "int" or "str" (label_columns); after the other columns
        self.columns = columns + tuple(LABEL_PREFIX + key for key in self.labels)
        self.whole_timestamps = (
            whole_timestamps  # store timestamps as int64 (every one is a whole number)
        )
        self._context = None
        self._writer = None

    def __enter__(self) -> "ParquetTraceWriter":
        from pyverify.fileio import atomic_path

        pa = require("pyarrow")
        pq = require("pyarrow.parquet")
        self._context = atomic_path(self.path)
        tmp = self._context.__enter__()
        fields = [pa.field("hash_ids", pa.list_(pa.int64()), nullable=False)]
        types = {
            "timestamp": pa.int64() if self.whole_timestamps else pa.float64(),
            "input_length": pa.int64(),
            "output_length": pa.int64(),
            "host": pa.int64(),
            "route_key": pa.string(),
            **{
                LABEL_PREFIX + key: pa.string() if kind == "str" else pa.int64()
                for key, kind in self.labels.items()
            },
        }
        fields += [pa.field(name, types[name]) for name in self.columns]
        metadata = {b"pyverify.format": PARQUET_FORMAT.encode()}
        # "none" when the trace gives no block size: a file without the key is read as Mooncake's 512.
        metadata[b"pyverify.block_size_tokens"] = str(
            self.block_size_tokens or NO_BLOCK_SIZE
        ).encode()
        self.schema = pa.schema(fields, metadata=metadata)
        self._writer = pq.ParquetWriter(str(tmp), self.schema, compression="zstd")
        return self

    def write(self, ids: np.ndarray, offsets: np.ndarray, **columns: Any) -> None:
        """Append requests: ``ids`` flat, ``offsets`` from 0 to ``ids.size``; optional columns by name."""
        pa = require("pyarrow")
        lists = pa.ListArray.from_arrays(
            pa.array(np.asarray(offsets, dtype=np.int32) if offsets[-1] < 2**31 else offsets),
            pa.array(np.asarray(ids, dtype=np.int64)),
        )
        arrays = [lists] + [
            pa.array(columns[name], type=self.schema.field(name).type) for name in self.columns
        ]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))

    def __exit__(self, kind, error, traceback) -> None:
        self._writer.close()
        self._context.__exit__(kind, error, traceback)


def _whole(timestamps: np.ndarray | None) -> bool:
    """Whether every given timestamp is a whole number of milliseconds, exact in float64 (then stored as int64)."""
    if timestamps is None:
        return False
    given = timestamps[~np.isnan(timestamps)]
    return bool(np.all((given == np.floor(given)) & (np.abs(given) <= 2**53)))


def write_parquet(trace: ColumnarTrace, path: str | Path, rows_per_group: int = 1 << 20) -> None:
    """Write a :class:`ColumnarTrace` as Parquet (row groups of ``rows_per_group`` requests).

    Integers stay integers: token counts are int64 columns, and so are the
    timestamps when every one is a whole number (else float64)."""
    present = {
        "timestamp": trace.timestamps,
        "input_length": trace.input_tokens,
        "output_length": trace.output_tokens,
        "host": trace.routing,
    }
    columns = tuple(name for name, values in present.items() if values is not None)
    if trace.route_keys is not None:
        columns += ("route_key",)
    labels = label_columns(trace.labels, path)
    with ParquetTraceWriter(
        path,
        trace.block_size_tokens,
        columns,
        whole_timestamps=_whole(trace.timestamps),
        labels=labels,
    ) as writer:
        for start in range(0, trace.n_requests, rows_per_group):
            end = min(start + rows_per_group, trace.n_requests)
            first, last = int(trace.offsets[start]), int(trace.offsets[end])
            values: dict[str, Any] = {}
            for name in columns:
                data = trace.route_keys if name == "route_key" else present[name]
                chunk = data[start:end]
                if name in ("input_length", "output_length") and not isinstance(chunk, list):
                    chunk = [None if v != v else int(v) for v in chunk.tolist()]
                elif name == "timestamp":
                    chunk = [
                        None if v != v else (int(v) if writer.whole_timestamps else v)
                        for v in chunk.tolist()
                    ]
                values[name] = chunk
            for key in labels:
                values[LABEL_PREFIX + key] = [
                    None if item is None else item.get(key) for item in trace.labels[start:end]
                ]
            writer.write(trace.ids[first:last], trace.offsets[start : end + 1] - first, **values)
