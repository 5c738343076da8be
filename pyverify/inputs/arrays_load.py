"""An input as flat arrays (:class:`~pyverify.inputs.columnar.ColumnarTrace`), read as ``trace import`` reads it.

Mooncake JSONL, Parquet and CSV trace files, read with no reading flag other
than ``allow_unsorted``, go through the array readers (no Python object per
block; their results are the strict readers', :mod:`pyverify.inputs.columnar`);
every other input (an instance file, a token log, standard input, or any
re-blocking or tokenizing flag) is read by :func:`pyverify.inputs.load.load_described`
and converted. Either way the content, and so its content digest, is the one
the instance readers give.
"""

from __future__ import annotations

import os
from pathlib import Path

from pyverify.inputs.records import ImportOptions

#: The formats the array readers read exactly as the instance readers do.
ARRAY_FORMATS = ("mooncake-jsonl", "parquet", "csv")


def reads_as_arrays(path: str | Path, options: ImportOptions = ImportOptions()) -> bool:
    """Whether ``path`` with ``options`` is read by the array readers (see the module docstring)."""
    if str(path) == "-" or not os.path.isfile(path):
        return False
    if any(
        value
        for value in (
            options.block_size,
            options.tokenizer,
            options.source_block_size,
            options.rag_order,
            options.rag_lengths,
            options.name,
            options.hosts,
        )
    ):
        return False
    from pyverify.inputs.detect import read_head
    from pyverify.inputs.load import detect_format
    from pyverify.inputs.stream import open_source

    with open_source(path) as source:
        if source.compression:
            return False
        return detect_format(read_head(source), source.display).key in ARRAY_FORMATS


def load_arrays(path: str | Path, options: ImportOptions = ImportOptions()):
    """``path`` as a :class:`~pyverify.inputs.columnar.ColumnarTrace`, validated as the instance readers validate it."""
    from pyverify.inputs.columnar import ColumnarTrace, read_columnar

    if reads_as_arrays(path, options):
        return read_columnar(path, allow_unsorted=options.allow_unsorted)
    from pyverify.inputs.load import load_described

    return ColumnarTrace.from_instance(load_described(path, options).instance)


__all__ = ["ARRAY_FORMATS", "load_arrays", "reads_as_arrays"]
