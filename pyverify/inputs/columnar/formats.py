"""Which columnar format a trace file holds, told by its content, never by its name.

A quick look at the file's first bytes: enough to pick a reader
(:func:`pyverify.inputs.columnar.read_columnar`) or an engine, not a
validation; the reader chosen checks every row.
"""

from __future__ import annotations

import os
from pathlib import Path

PARQUET_MAGIC = b"PAR1"
#: The UTF-8 byte order mark a spreadsheet may write before a CSV header (pyarrow's reader skips it).
UTF8_BOM = b"\xef\xbb\xbf"


def is_parquet(path: str | Path) -> bool:
    """Parquet by content: the file starts with the magic bytes ``PAR1``."""
    return _head(path, 4) == PARQUET_MAGIC


def is_hash_ids_csv(path: str | Path) -> bool:
    """CSV by content: the first line is a header naming a ``hash_ids`` column (and is not JSON)."""
    return is_csv_header(_head(path, 1 << 16).removeprefix(UTF8_BOM).split(b"\n", 1)[0])


def is_csv_header(line: bytes) -> bool:
    """Whether ``line``, the file's first (after a byte order mark), is a CSV header naming ``hash_ids``.

    The one test of every reader (:mod:`pyverify.inputs.load` too). It must be
    the first line: pyarrow's reader takes a line of spaces before it for the
    header.
    """
    first = line.strip()
    if not first or first[:1] in (b"{", b"["):
        return False
    return b"hash_ids" in [part.strip().strip(b'"').lower() for part in first.split(b",")]


def is_hash_ids_jsonl(path: str | Path) -> bool:
    """Mooncake JSONL by content: an uncompressed file whose first non-blank line is an
    object with a ``"hash_ids"`` field (a quick look at the first 64 KiB; the
    reader validates every line)."""
    head = _head(path, 1 << 16).removeprefix(UTF8_BOM).lstrip()
    first = head.split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"hash_ids"' in first


def _head(path: str | Path, size: int) -> bytes:
    try:
        if not os.path.isfile(path):
            return b""
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""
