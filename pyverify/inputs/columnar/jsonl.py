"""Mooncake JSONL, fast: a compiled or a numpy parser, else pyarrow, parses; numpy checks; the strict reader decides the rest.

A big file (:data:`~pyverify.inputs.columnar.compiled.MIN_BYTES` or more) is
first offered to the compiled byte parser
(:mod:`pyverify.inputs.columnar.byte_parse`), which reads Mooncake JSONL in one
pass, in any key order and spacing, with extra fields, and declines what it
cannot read exactly. Any other file (or every file,
without numba) is offered to the numpy parser of the form ``json.dumps``
writes (:mod:`pyverify.inputs.columnar.plain_parse`), which declines anything
else too; then the path below runs.

pyarrow's JSON reader parses the file (measured in
``bench/parse_vs_parquet.py``: faster than orjson or msgspec line by line;
DuckDB's ``read_json`` is faster still but turns ``1.5`` into 2 and ``true``
into 1 in an integer column, which the strict rules forbid); every check is
then vectorised. The fast path *accepts* a file only when it can prove that
the strict reader (:mod:`pyverify.inputs.mooncake`,
:mod:`pyverify.inputs.jsonread`) would accept it with the same values; on
anything it cannot prove (a duplicate key, ``NaN``, a blank line, a backslash
anywhere, nesting deeper than :data:`~pyverify.inputs.jsonread.MAX_JSON_DEPTH`
(which crashes pyarrow's reader), a negative id, a prefix-closure violation, decreasing timestamps,
...) it hands the file to the strict reader, which either names the first bad
line or, when the fast path was only being cautious, reads it. So errors and
results are exactly the strict reader's.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from pyverify.errors import UserError
from pyverify.inputs.columnar.arrow import numpy_of
from pyverify.inputs.columnar.byte_parse import (
    available as byte_parser_available,
    read_mooncake_bytes,
)
from pyverify.inputs.columnar.closure import is_prefix_closed
from pyverify.inputs.columnar.digest import begin_content_sha256
from pyverify.inputs.columnar.extras import require
from pyverify.inputs.columnar.plain_parse import read_plain_mooncake
from pyverify.inputs.columnar.tables import flat_ids
from pyverify.inputs.columnar.trace import ColumnarTrace
from pyverify.inputs.model import MAX_TOKEN_COUNT
from pyverify.inputs.columnar.compiled import (
    MIN_BYTES,
    PLAIN,
    compiled_scan,
    load_beside,
    numba_loaded,
    worth_it,
)
from pyverify.inputs.jsonread import (
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
    max_input_bytes,
    open_input,
    read_bounded,
    too_deep_at,
)
from pyverify.inputs.stream import stem_of


def read_jsonl(path: str | Path, allow_unsorted: bool = False) -> ColumnarTrace:
    """A Mooncake JSONL trace as a :class:`ColumnarTrace`; the strict reader's errors and results."""
    trace = _fast_jsonl(path)
    if trace is not None:
        return trace
    from pyverify.inputs.mooncake import import_mooncake

    return ColumnarTrace.from_instance(import_mooncake(path, allow_unsorted=allow_unsorted))


def _jsonl_schema():
    pa = require("pyarrow")
    return pa.schema(
        [
            ("hash_ids", pa.list_(pa.int64())),
            ("timestamp", pa.float64()),
            ("input_length", pa.int64()),
            ("output_length", pa.int64()),
        ]
    )


def _fast_jsonl(path: str | Path) -> ColumnarTrace | None:
    """The trace, or ``None`` when the fast path cannot prove the strict reader would read it the same."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    import stat as _stat

    if not _stat.S_ISREG(info.st_mode) or info.st_size == 0 or info.st_size > max_input_bytes():
        return None
    if info.st_size >= MIN_BYTES and not numba_loaded():
        load_beside()  # a file this big is parsed by compiled code: numba loads on a second thread while it is read
    with open_input(path) as handle:
        data = read_bounded(handle, path)
    if (
        worth_it(len(data), MIN_BYTES) and byte_parser_available()
    ):  # one compiled pass (pyverify.inputs.columnar.byte_parse)
        parsed = read_mooncake_bytes(data, MAX_LINE_BYTES)
        if parsed is not None:
            return _closed_trace(path, *parsed)
        # Declined: the plain parser's form lies inside the byte parser's (but for timestamps that go back,
        # which _checked_trace declines too), so it is not asked again.
    else:
        # The form json.dumps writes, proved byte for byte by numpy passes (pyverify.inputs.columnar.plain_parse).
        # Below MIN_BYTES it is the fastest reader here (5M references: 0.08 s against 0.21 s for the pre-scan
        # and pyarrow's reader); from MIN_BYTES up, where numba's load is paid back, the byte parser is faster.
        parsed = read_plain_mooncake(data, MAX_LINE_BYTES)
        if parsed is not None:
            return _checked_trace(path, *parsed)
    counts = _prescan(data)
    if counts is None:
        return None
    n_lines, longest, quotes = counts
    if longest > MAX_LINE_BYTES:
        return None
    try:
        import pyarrow  # noqa: F401  (the path below needs it; without it the strict reader reads)
    except ImportError:
        return None
    table = _parse_jsonl(data, longest)
    if table is None or table.num_rows != n_lines:
        return None
    if not _keys_are_distinct(table, quotes):
        return None
    from pyverify.inputs.mooncake import SIZE_FIELDS

    if not SIZE_FIELDS.isdisjoint(table.column_names):
        return None  # a block size or weights, on any line: the strict reader honours them
    del data
    # The chunks (one per block of lines) copied straight into one array of ids, and checked on the way
    # (pyarrow's combine_chunks took 102 ms for this copy at 5M references; this, 20 ms). Each chunk's values
    # bound its ids (flat_ids keeps what the offsets reach): a chunk's flatten() would import pyarrow.compute.
    chunks = table.column("hash_ids").chunks
    try:
        ids, offsets = flat_ids(
            chunks, table.num_rows, sum(len(chunk.values) for chunk in chunks), path
        )
    except UserError:
        return None  # a null, an empty chain or a negative id: the strict reader names the line
    lengths = [_numbers(table, key) for key in ("input_length", "output_length")]
    return _checked_trace(path, ids, offsets, _numbers(table, "timestamp"), *lengths)


def _checked_trace(
    path, ids, offsets, timestamps, input_tokens, output_tokens
) -> ColumnarTrace | None:
    """The trace from its parsed columns (every chain non-empty, every id at least 0), or ``None`` on what the
    strict reader refuses or would name the line of."""
    if timestamps is not None:
        present = timestamps[~np.isnan(timestamps)]
        if present.size and (
            present.min() < 0 or present.max() > 2**53 or np.any(np.diff(present) < 0)
        ):
            return None  # the strict reader names the line (or warns, with --allow-unsorted)
    lengths = [input_tokens, output_tokens]
    # As float64, a count past 2**53 reads as 2**53 or more: the strict reader decides.
    if any(
        values is not None and (np.nanmin(values) < 0 or np.nanmax(values) >= MAX_TOKEN_COUNT)
        for values in lengths
    ):
        return None
    return _closed_trace(path, ids, offsets, timestamps, *lengths)


def _closed_trace(
    path, ids, offsets, timestamps, input_tokens, output_tokens
) -> ColumnarTrace | None:
    """The trace the fast path read, or ``None`` when it is not prefix-closed (the strict reader names the line)."""
    trace = ColumnarTrace(
        name=stem_of(path),
        ids=ids,
        offsets=offsets,
        source=f"mooncake-jsonl:{Path(path).name}",
        timestamps=timestamps,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
    begin_content_sha256(trace)  # hashed on a second core while the closure is checked
    return trace if is_prefix_closed(ids, offsets) else None


def _prescan(data: bytes) -> tuple[int, int, int] | None:
    """:func:`_plain_lines`, and ``None`` too when the nesting is deeper than pyarrow's reader survives
    (:func:`~pyverify.inputs.jsonread.too_deep_at`; the strict reader then names the line): one compiled
    pass on a big file (:mod:`pyverify.inputs.columnar.compiled`), else the numpy passes."""
    if worth_it(len(data), MIN_BYTES):
        scanned = compiled_scan(data, MAX_JSON_DEPTH)
        if scanned is not None:
            verdict, lines, longest, quotes = scanned
            return (lines, longest, quotes) if verdict == PLAIN else None
    scanned = _plain_scan(data)
    if scanned is None:
        return None
    counts, ends = scanned
    if not (_lines_shallow(data, ends) or too_deep_at(data) is None):
        return None
    return counts


def _lines_shallow(data: bytes, ends: np.ndarray | None = None) -> bool:
    """Whether no line of a text :func:`_plain_lines` accepted holds more than MAX_JSON_DEPTH opening brackets,
    which proves what :func:`~pyverify.inputs.jsonread.too_deep_at` would find (``False`` proves nothing).
    ``ends``: the text's :func:`_line_ends`, if the caller has them.

    A JSON parser nests at most one level per ``{`` or ``[`` it reads, and never carries a level from one
    line into the next: every line ends with ``}`` and the next starts with ``{``, which may follow a value
    only at the top level, so a line left open is a syntax error where the next one starts. So a parser
    reading these lines is never nested deeper than the most opening brackets on one line (those inside
    strings count too, which only overstates). The brackets' positions, placed among the line ends by
    one binary search, give each line's count: about a third of the time of the full scan.
    """
    text = np.frombuffer(data, dtype=np.uint8)
    ends = _line_ends(text) if ends is None else ends
    openers = _positions(text, b"{[")
    per_line = np.diff(np.searchsorted(openers, ends, side="right"), prepend=0)
    return int(per_line.max(initial=0)) <= MAX_JSON_DEPTH


#: Bytes compared at a time by the byte scans (:func:`_positions`, :func:`_count`): one small mask, reused,
#: instead of a mask the size of the file whose every page is faulted in fresh. On the 5M-reference file
#: (55 MB) the newline positions took 32 ms with a whole-file mask and 10 ms so, in a fresh process here.
SCAN_STEP = 1 << 18


def _positions(text: np.ndarray, chars: bytes) -> np.ndarray:
    """The positions in ``text`` (uint8) of any of the bytes ``chars``, ascending (int64)."""
    mask = np.empty(min(SCAN_STEP, text.size), dtype=bool)
    other = np.empty_like(mask)
    found = [np.empty(0, dtype=np.int64)]
    for start in range(0, text.size, SCAN_STEP):
        piece = text[start : start + SCAN_STEP]
        hits = np.equal(piece, chars[0], out=mask[: piece.size])
        for char in chars[1:]:
            np.logical_or(hits, np.equal(piece, char, out=other[: piece.size]), out=hits)
        found.append(np.flatnonzero(hits) + start)
    return np.concatenate(found)


def _line_ends(text: np.ndarray) -> np.ndarray:
    """Where each line ends: its newline's position, or the text's end for a last line without one."""
    ends = _positions(text, b"\n")
    return ends if text.size and text[-1] == ord("\n") else np.append(ends, text.size)


def _plain_lines(data: bytes) -> tuple[int, int, int] | None:
    """``(lines, longest line, quote marks)`` when the text is one the fast path can count on, else ``None``
    (:func:`_plain_scan`)."""
    scanned = _plain_scan(data)
    return None if scanned is None else scanned[0]


def _plain_scan(data: bytes) -> tuple[tuple[int, int, int], np.ndarray] | None:
    """``((lines, longest line, quote marks), line ends)`` when the text is one the fast path can count on, else ``None``.

    That is: ASCII, no backslash (so no escapes and no lone surrogates), no
    ``NaN``/``Infinity``, no tabs or carriage returns, and every line starting
    with ``{`` and ending with ``}`` (so no blank line). Byte scans and one
    pass of newline positions, no Python per line.
    """
    if not data.isascii() or b"\\" in data or b"\t" in data or b"\r" in data:
        return None
    if (b"N" in data and b"NaN" in data) or (b"I" in data and b"Infinity" in data):
        return None
    text = np.frombuffer(data, dtype=np.uint8)
    ends = _line_ends(text)
    lines = int(ends.size)
    # Every line starts with "{" and ends with "}". Then no object spans two lines (between a "}" and
    # a "{" JSON needs a comma, which would end or start a line), so each line holds one or more whole
    # objects, and the caller's check that the reader found as many rows as lines leaves exactly one.
    if (
        text[0] != ord("{")
        or np.any(text[ends - 1] != ord("}"))
        or np.any(text[ends[:-1] + 1] != ord("{"))
    ):
        return None
    longest = int(np.diff(ends, prepend=-1).max())
    return (lines, longest, _count(text, '"')), ends


def _count(text: np.ndarray, char: str) -> int:
    """How many times ``char`` is in ``text`` (uint8), :data:`SCAN_STEP` bytes at a time."""
    mask = np.empty(min(SCAN_STEP, text.size), dtype=bool)
    return sum(
        int(
            np.count_nonzero(
                np.equal(
                    text[start : start + SCAN_STEP],
                    ord(char),
                    out=mask[: min(SCAN_STEP, text.size - start)],
                )
            )
        )
        for start in range(0, text.size, SCAN_STEP)
    )


#: The bytes of lines pyarrow's JSON reader parses as one block (one chunk of the table; blocks are parsed on
#: every core): 4 MiB measured fastest on 2 cores.
JSON_BLOCK_BYTES = 1 << 22


def _parse_jsonl(data: bytes, longest: int):
    """pyarrow's JSON reader over the bytes (blocks of several lines, parsed on every core), or ``None``."""
    import pyarrow as pa
    import pyarrow.json as pj

    block = max(JSON_BLOCK_BYTES, 2 * longest + 2)
    try:
        return pj.read_json(
            pa.BufferReader(data),
            read_options=pj.ReadOptions(block_size=block),
            parse_options=pj.ParseOptions(
                explicit_schema=_jsonl_schema(), unexpected_field_behavior="infer"
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _keys_are_distinct(table, quotes: int) -> bool:
    """Whether the file's quote marks are exactly the keys and strings the table holds.

    With no backslash in the file, every ``"`` opens or closes a key or a
    string value. If each line's keys are distinct, the quotes number twice
    the non-null values (each has a key) plus twice the string values. A
    duplicate key (which pyarrow may collapse), a ``null`` value, or a nested
    object breaks the equality, and the strict reader takes over.
    """
    pa = require("pyarrow")
    expected = 0
    for name, column in zip(table.column_names, table.columns):
        kind = column.type
        present = len(column) - column.null_count
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            expected += 4 * present
        elif (
            name == "hash_ids"
            or pa.types.is_integer(kind)
            or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind)
            or pa.types.is_null(kind)
        ):
            expected += 2 * present
        else:
            return False
    return expected == quotes


def _numbers(table, name: str) -> np.ndarray | None:
    if name not in table.column_names or table.column(name).null_count == len(table):
        return None
    return numpy_of(table.column(name), floats=True)
