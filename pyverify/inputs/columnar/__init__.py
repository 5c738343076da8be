"""A flat columnar trace: every block reference in one int64 array, read fast.

:class:`ColumnarTrace` holds a trace the way the counting kernels and the
engines want it: ``ids`` (every block id, in file order, int64) and
``offsets`` (request i is ``ids[offsets[i]:offsets[i+1]]``), plus optional
per-request columns. No Python object is made per block.

Three ways in, all with the rules of the strict readers
(:func:`read_columnar` picks the reader by the file's content):

* **Mooncake JSONL** (:func:`read_jsonl`): parsed by pyarrow and checked
  vectorised; whatever the fast path cannot prove the strict reader would
  read the same, the strict reader reads, so errors and results are exactly
  the strict reader's.
* **Parquet** (:func:`read_parquet`) and **CSV** (:func:`read_csv`) with a
  ``hash_ids`` column; errors name the row and the field.
* an :class:`~pyverify.inputs.model.Instance` (:meth:`ColumnarTrace.from_instance`).

:class:`ParquetTraceWriter` writes the Parquet form chunk by chunk, atomically.

One module per job:

* :mod:`~pyverify.inputs.columnar.trace`: the :class:`ColumnarTrace` container;
* :mod:`~pyverify.inputs.columnar.extras`: importing an optional dependency
  (pyarrow), or saying how to install it (:class:`MissingExtra`, :func:`require`);
* :mod:`~pyverify.inputs.columnar.closure`: prefix closure, vectorised;
* :mod:`~pyverify.inputs.columnar.jsonl`: the fast Mooncake JSONL reader;
* :mod:`~pyverify.inputs.columnar.byte_parse`: its compiled pass over a big file's bytes;
* :mod:`~pyverify.inputs.columnar.formats`: Parquet, CSV or JSONL, told by content;
* :mod:`~pyverify.inputs.columnar.tables`: the Parquet and CSV readers;
* :mod:`~pyverify.inputs.columnar.write`: writing Parquet.

The names other code uses are re-exported here, so callers import from
:mod:`pyverify.inputs.columnar` and need not know which module holds what.
"""

from __future__ import annotations

from pathlib import Path

from pyverify.inputs.columnar.closure import first_violation, is_prefix_closed, parents_of
from pyverify.inputs.columnar.extras import INSTALL_HINT, MissingExtra, require
from pyverify.inputs.columnar.formats import (
    PARQUET_MAGIC,
    is_hash_ids_csv,
    is_hash_ids_jsonl,
    is_parquet,
)
from pyverify.inputs.columnar.jsonl import _fast_jsonl, read_jsonl  # noqa: F401  (_fast_jsonl: tests compare it with the strict reader)
from pyverify.inputs.columnar.tables import (
    MAX_BLOCK_ID,
    OPTIONAL_COLUMNS,
    check_parquet_file,
    open_parquet,
    parquet_errors,
    read_csv,
    read_parquet,
    row_group_ids,
)
from pyverify.inputs.columnar.trace import DEFAULT_BLOCK_TOKENS, ColumnarTrace
from pyverify.inputs.columnar.write import PARQUET_FORMAT, ParquetTraceWriter, write_parquet


def read_columnar(path: str | Path, allow_unsorted: bool = False) -> ColumnarTrace:
    """Any trace file as a :class:`ColumnarTrace`: Parquet or CSV by content, else Mooncake JSONL."""
    if is_parquet(path):
        return read_parquet(path)
    if is_hash_ids_csv(path):
        return read_csv(path)
    return read_jsonl(path, allow_unsorted=allow_unsorted)


__all__ = [
    "DEFAULT_BLOCK_TOKENS",
    "INSTALL_HINT",
    "MAX_BLOCK_ID",
    "OPTIONAL_COLUMNS",
    "PARQUET_FORMAT",
    "PARQUET_MAGIC",
    "ColumnarTrace",
    "MissingExtra",
    "check_parquet_file",
    "ParquetTraceWriter",
    "first_violation",
    "is_hash_ids_csv",
    "is_hash_ids_jsonl",
    "is_parquet",
    "is_prefix_closed",
    "open_parquet",
    "parents_of",
    "parquet_errors",
    "read_columnar",
    "read_csv",
    "read_jsonl",
    "read_parquet",
    "require",
    "row_group_ids",
    "write_parquet",
]
