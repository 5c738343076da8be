"""Parquet and CSV traces: one row per request, validated into a :class:`ColumnarTrace`.

Both carry a ``hash_ids`` column (Parquet: a list of integers; CSV: ``[0, 1,
2]`` or ``0 1 2`` in one cell), and optional ``timestamp``,
``input_length``, ``output_length``, ``host`` and ``route_key`` columns.
Errors name the row (1-based, as a spreadsheet counts data rows) and the
field, with the rules of the strict readers.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from pyverify.errors import located
from pyverify.inputs.columnar.arrow import numpy_of, valid_of
from pyverify.inputs.columnar.closure import first_violation, is_prefix_closed
from pyverify.inputs.columnar.digest import begin_content_sha256
from pyverify.inputs.columnar.extras import require
from pyverify.inputs.columnar.formats import is_parquet
from pyverify.inputs.columnar.trace import DEFAULT_BLOCK_TOKENS, ColumnarTrace
from pyverify.inputs.columnar.write import LABEL_PREFIX, NO_BLOCK_SIZE
from pyverify.inputs.model import MAX_HOSTS, MAX_TOKEN_COUNT, check_block_size_tokens, check_host_id
from pyverify.inputs.stream import stem_of
from pyverify.threads import cores

#: The largest block id (ids are signed 64-bit integers; -1 is the root).
MAX_BLOCK_ID = 2**63 - 1
#: The optional per-request columns of the Parquet/CSV form.
OPTIONAL_COLUMNS = ("timestamp", "input_length", "output_length", "host", "route_key")


def read_parquet(path: str | Path) -> ColumnarTrace:
    """A Parquet trace (one row per request, ``hash_ids`` a list of integers), validated.

    Read one row group at a time into arrays allocated once (the file's
    metadata says how many values there are), so the trace is held once,
    not once by pyarrow and again by numpy.
    """
    with parquet_errors(path):
        handle, block_size, extra = check_parquet_file(path)
        metadata = handle.metadata
        capacity = _values_in(metadata, range(metadata.num_row_groups))
        ids, offsets = flat_ids(
            _hash_id_chunks(path, metadata.num_row_groups), metadata.num_rows, capacity, path
        )
    return _trace(ids, offsets, path, block_size, extra)


def _values_in(metadata, groups: Iterable[int]) -> int:
    """How many block ids the row groups ``groups`` hold, as the metadata says (the ``hash_ids`` leaf's values)."""
    leaf = next(
        j
        for j in range(metadata.num_columns)
        if metadata.schema.column(j).path.split(".")[0] == "hash_ids"
    )
    return sum(metadata.row_group(g).column(leaf).num_values for g in groups)


def row_group_ids(handle, group: int, path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, offsets from 0)`` of row group ``group`` of an open Parquet trace (``handle``, a ``ParquetFile``;
    ``path`` names it in errors), decoded :data:`BATCH_ROWS` requests at a time into one array (as
    :func:`read_parquet` reads every group); errors as :func:`flat_ids` gives them, rows counted from the
    group's first. For readers of a file piece by piece (the Dask engine's workers)."""
    rows = handle.metadata.row_group(group).num_rows
    return flat_ids(_batches(handle, group), rows, _values_in(handle.metadata, [group]), path)


def _batches(handle, group: int | None) -> Iterator[Any]:
    """The ``hash_ids`` chunks of one row group (``None``: the whole file), :data:`BATCH_ROWS` requests at a time."""
    groups = None if group is None else [group]
    batches = handle.iter_batches(
        batch_size=BATCH_ROWS, row_groups=groups, columns=["hash_ids"], use_threads=False
    )
    return (batch.column(0) for batch in batches)


#: Requests per batch when one thread decodes the file: pyarrow's decode of a whole row group held its
#: dictionary pages, indices and output at once (160 MiB of resident memory at 5M references, for 40 MB
#: of ids); in batches of this many rows it holds a few MB beyond the ids they are copied into.
BATCH_ROWS = 4096


def _hash_id_chunks(path: str | Path, row_groups: int) -> Iterator[Any]:
    """The ``hash_ids`` list-array chunks of every row group, in row order, decoded on as many threads as
    there are cores.

    pyarrow decodes one column of one row group on one thread, so reading the row groups one after
    another left a core idle: 0.30-0.99 s for a 20M-reference file against 0.17-0.23 s on two threads
    here. At most one row group per thread is decoded ahead of the one the caller copies out, so memory
    stays the trace's arrays and a few row groups. Each thread opens the file itself (a ``ParquetFile``
    is not documented as safe to share between threads). One thread (one row group, or one core) streams
    the file in batches of :data:`BATCH_ROWS` requests instead.
    """
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    pq = require("pyarrow.parquet")
    workers = min(cores(), row_groups)
    if workers == 1:
        yield from _batches(pq.ParquetFile(str(path)), None)
        return
    opened = threading.local()

    def decode(group: int):
        if not hasattr(opened, "handle"):
            opened.handle = pq.ParquetFile(str(path))
        return list(_batches(opened.handle, group))

    with ThreadPoolExecutor(workers) as pool:
        pending: deque = deque()
        for group in range(row_groups):
            pending.append(pool.submit(decode, group))
            if len(pending) > workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def check_parquet_file(path: str | Path):
    """Everything about a Parquet trace but its block ids, checked: ``(file, block size, optional columns)``.

    The file opens, its columns have distinct names, ``hash_ids`` is a list
    of integers, the metadata's block size is valid, it has rows, and the
    optional columns (one value per request) follow the rules. The
    out-of-core engines, which read the block ids themselves, call this
    first, so a file they count is one every reader accepts.
    """
    pq = require("pyarrow.parquet")
    with parquet_errors(path):
        handle = open_parquet(path)
        schema = handle.schema_arrow
        check_column_names(schema, path, "schema", "in the file's schema")
        if "hash_ids" not in schema.names:
            raise located(
                path, "hash_ids", f"no such column; found {', '.join(schema.names) or 'none'}"
            )
        _check_list_type(schema.field("hash_ids").type, path)
        block_size = parquet_block_size(schema, path)
        if handle.metadata.num_rows == 0:
            raise located(path, None, "empty trace: no requests")
        others = [name for name in OPTIONAL_COLUMNS if name in schema.names]
        others += [name for name in schema.names if name.startswith(LABEL_PREFIX)]
        extra = _optional_columns(pq.read_table(str(path), columns=others), path) if others else {}
    return handle, block_size, extra


@contextmanager
def parquet_errors(path: str | Path) -> Iterator[None]:
    """Inside, pyarrow's errors on a file that is not sound Parquet (a cut footer, wrong magic bytes,
    a footer length past the file) become one line naming the file."""
    pa = require("pyarrow")
    try:
        yield
    except (OSError, pa.ArrowException) as error:
        raise located(
            path,
            None,
            f"cannot read as Parquet: {str(error).splitlines()[0] if str(error) else type(error).__name__}",
        ) from None


def open_parquet(path: str | Path):
    """``pyarrow.parquet.ParquetFile`` of ``path``, or one line of error: every Parquet reader opens it here."""
    pq = require("pyarrow.parquet")
    with parquet_errors(path):
        return pq.ParquetFile(str(path))


#: The Parquet metadata key that holds the block size (written by :class:`~pyverify.inputs.columnar.write.ParquetTraceWriter`).
BLOCK_SIZE_KEY = b"pyverify.block_size_tokens"


def parquet_block_size(schema, path: str | Path) -> int | None:
    """The block size the file's metadata gives, checked as every format's: Mooncake's 512 when the
    key is absent, ``None`` when it says ``none`` (written for a trace that gives no block size)."""
    raw = (schema.metadata or {}).get(BLOCK_SIZE_KEY)
    if raw is None:
        return DEFAULT_BLOCK_TOKENS
    text = raw.decode("utf-8", "replace").strip()
    if text == NO_BLOCK_SIZE:
        return None
    value = int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else text
    return check_block_size_tokens(value, path, f"metadata {BLOCK_SIZE_KEY.decode()}")


def read_csv(path: str | Path) -> ColumnarTrace:
    """A CSV trace with a header naming ``hash_ids``; each cell ``[0, 1, 2]`` or ``0 1 2``."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    csv = require("pyarrow.csv")
    unclosed = unclosed_quote_line(path)
    if unclosed is not None:
        raise located(
            path, f"line {unclosed}", "a quoted field opened here is never closed (a missing '\"')"
        )
    try:
        # Only an empty cell is missing: "NaN", "null" or "N/A" are values, and refused where a number is due.
        options = csv.ConvertOptions(
            column_types={"hash_ids": pa.string(), "route_key": pa.string()}, null_values=[""]
        )
        table = csv.read_csv(str(path), convert_options=options)
    except (OSError, pa.ArrowException) as error:
        raise located(path, None, f"cannot read as CSV: {error}") from None
    check_column_names(table.schema, path, "line 1", "in the header")
    if "hash_ids" not in table.column_names:  # the header named it with other case or spaces
        raise located(
            path,
            "line 1",
            f"no column named exactly 'hash_ids'; the header names {', '.join(map(repr, table.column_names))[:200]}",
        )
    text = table.column("hash_ids").combine_chunks()
    if text.null_count:
        row = int(np.flatnonzero(text.is_null().to_numpy(zero_copy_only=False))[0])
        raise located(path, f"row {row + 1}.hash_ids", "empty: a request has at least one block")
    # One list per cell: "[0, 1, 2]" or "0 1 2", never brackets inside (a nested list is no block id).
    shaped = numpy_of(
        pc.match_substring_regex(text, r"^\s*(\[[^\[\]]*\]|[^\[\]]*)\s*$")
    )  # no nulls: refused above
    if not shaped.all():
        row = int(np.flatnonzero(~shaped)[0])
        raise located(
            path,
            f"row {row + 1}.hash_ids",
            f"expected block ids as [0, 1, 2] or 0 1 2, got {str(text[row])[:40]!r}",
        )
    inner = pc.utf8_trim(pc.utf8_trim_whitespace(text), "[]")
    parts = pc.split_pattern_regex(pc.utf8_trim_whitespace(inner), r"[,\s]+")
    values = pc.list_flatten(parts)
    blank = np.flatnonzero(numpy_of(pc.equal(values, "")))
    if blank.size:
        row, position = _locate(parts, int(blank[0]))
        reason = (
            "empty: a request has at least one block"
            if position == 0 and len(parts[row]) == 1
            else "empty block id"
        )
        raise located(
            path,
            f"row {row + 1}.hash_ids" + (f"[{position}]" if reason == "empty block id" else ""),
            reason,
        )
    try:
        numbers = pc.cast(values, pa.int64())
    except pa.ArrowInvalid:
        flat = values.to_pylist()
        bad = next(i for i, v in enumerate(flat) if not _is_int_text(v))
        row, position = _locate(parts, bad)
        raise located(
            path,
            f"row {row + 1}.hash_ids[{position}]",
            f"block id {flat[bad]!r} is not an integer from 0 to 2**63-1",
        ) from None
    lists = pa.ListArray.from_arrays(parts.offsets, numbers)
    table = table.set_column(table.column_names.index("hash_ids"), "hash_ids", lists)
    return _from_table(table, path, DEFAULT_BLOCK_TOKENS)


def check_column_names(schema, path, where: str, place: str) -> None:
    """One line of error when a column's name is not UTF-8 text, or two columns share a name
    (which of them would be the trace's is anyone's guess)."""
    try:
        names = schema.names
    except UnicodeDecodeError as error:
        raise located(
            path, where, f"a column name is not UTF-8 text: {error.reason} at byte {error.start}"
        ) from None
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise located(path, where, f"column {name!r} is named twice {place}")
        seen.add(name)


def unclosed_quote_line(path: str | Path, chunk: int = 1 << 24) -> int | None:
    """The line of a quote mark that opens a field and is never closed, or ``None``.

    In CSV (RFC 4180) a quoted field may span lines and a quote inside it is
    doubled, so the quote marks pair up exactly when their number is even;
    when it is odd, the last one opened a field that the file never closes.
    pyarrow's reader then takes the rest of the file as that one field, or
    drops it, without an error. The file is read in chunks: memory stays flat.
    """
    quotes = newlines = 0
    last_line = None
    with open(path, "rb") as handle:
        while data := handle.read(chunk):
            count = data.count(b'"')
            if count:
                quotes += count
                last_line = newlines + data.count(b"\n", 0, data.rindex(b'"')) + 1
            newlines += data.count(b"\n")
    return last_line if quotes % 2 else None


def _is_int_text(text: str) -> bool:
    return text.isdigit() and int(text) <= MAX_BLOCK_ID


def _locate(parts, flat_index: int) -> tuple[int, int]:
    offsets = numpy_of(parts.offsets)
    row = int(np.searchsorted(offsets, flat_index, side="right") - 1)
    return row, flat_index - int(offsets[row])


def _from_table(table, path: str | Path, block_size: int | None) -> ColumnarTrace:
    """Validate a table with a ``hash_ids`` list column; errors name ``row N`` (1-based)."""
    if "hash_ids" not in table.column_names:
        raise located(
            path, "hash_ids", f"no such column; found {', '.join(table.column_names) or 'none'}"
        )
    column = table.column("hash_ids")
    _check_list_type(column.type, path)
    capacity = sum(len(chunk.values) for chunk in column.chunks)
    ids, offsets = flat_ids(iter(column.chunks), table.num_rows, capacity, path)
    return _trace(ids, offsets, path, block_size, _optional_columns(table, path))


def _check_list_type(kind, path) -> None:
    pa = require("pyarrow")
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not pa.types.is_integer(
        kind.value_type
    ):
        raise located(path, "hash_ids", f"expected a list of integer block ids per row, got {kind}")


def flat_ids(chunks, rows: int, capacity: int, path) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, offsets)`` from list-array chunks in row order, checked chunk by chunk; errors name ``row N``.

    A trace in one chunk (a JSONL file of one block, a Parquet file of at most one batch of rows) keeps that
    chunk's 64-bit values as its ids, a view rather than a copy; a trace in many chunks is copied into one
    array allocated once, each chunk freed once copied."""
    if rows == 0:
        raise located(path, None, "empty trace: no requests")
    ids = offsets = None
    row0 = filled = 0
    for chunk in chunks:
        n = len(chunk)
        if n == 0:
            continue
        raw, local = _checked_chunk(chunk, row0, path)
        if n == rows and raw.dtype.itemsize == 8:
            # Every id is at most 2**63 - 1 (checked), so an unsigned one has the same bits as a signed one.
            return raw.view(np.int64), local
        if ids is None:
            ids = np.empty(capacity, dtype=np.int64)
            offsets = np.empty(rows + 1, dtype=np.int64)
            offsets[0] = 0
        ids[filled : filled + raw.size] = raw
        offsets[row0 + 1 : row0 + n + 1] = local[1:] + filled
        filled += raw.size
        row0 += n
    return ids[:filled], offsets


def _checked_chunk(chunk, row0: int, path) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets from 0)`` of one list-array chunk whose first row is ``row0``, once every row has
    at least one block and every id is a non-null integer in ``0..2**63-1``; else the error naming the first
    row (and position) that is not."""
    if chunk.null_count:
        row = row0 + int(np.flatnonzero(chunk.is_null().to_numpy(zero_copy_only=False))[0])
        raise located(path, f"row {row + 1}.hash_ids", "missing: a request has at least one block")
    local = numpy_of(chunk.offsets).astype(np.int64)
    lengths = np.diff(local)
    if np.any(lengths < 1):
        row = row0 + int(np.flatnonzero(lengths < 1)[0])
        raise located(path, f"row {row + 1}.hash_ids", "empty: a request has at least one block")
    values = chunk.values.slice(int(local[0]), int(local[-1] - local[0]))
    local -= local[0]
    if values.null_count:
        row, position = _row_of(
            local, int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        )
        raise located(path, f"row {row0 + row + 1}.hash_ids[{position}]", "block id is null")
    raw = numpy_of(values)
    bad = (raw > MAX_BLOCK_ID) if raw.dtype.kind == "u" else (raw < 0)
    if bad.any():
        row, position = _row_of(local, int(np.flatnonzero(bad)[0]))
        value = int(raw[local[row] + position])
        reason = (
            f"block id {value} is larger than 2**63-1"
            if value > 0
            else f"block id {value} is negative"
        )
        raise located(path, f"row {row0 + row + 1}.hash_ids[{position}]", reason)
    return raw, local


def _trace(
    ids: np.ndarray, offsets: np.ndarray, path, block_size: int | None, extra: dict
) -> ColumnarTrace:
    """The validated trace, once prefix closure holds."""
    trace = ColumnarTrace(
        name=stem_of(path),
        ids=ids,
        offsets=offsets,
        source=f"{_kind(path)}:{Path(path).name}",
        block_size_tokens=block_size,
        **extra,
    )
    begin_content_sha256(trace)  # hashed on a second core while the closure is checked
    if not is_prefix_closed(ids, offsets):
        request, position, reason = first_violation(ids, offsets)
        raise located(path, f"row {request + 1}.hash_ids[{position}]", reason)
    return trace


def _kind(path: str | Path) -> str:
    return "parquet" if is_parquet(path) else "csv"


def _row_of(offsets: np.ndarray, flat_index: int) -> tuple[int, int]:
    row = int(np.searchsorted(offsets, flat_index, side="right") - 1)
    return row, flat_index - int(offsets[row])


def _optional_columns(table, path: str | Path) -> dict[str, Any]:
    pa = require("pyarrow")
    found: dict[str, Any] = {}
    names = {
        "timestamp": "timestamps",
        "input_length": "input_tokens",
        "output_length": "output_tokens",
    }
    for column_name, field in names.items():
        if column_name not in table.column_names:
            continue
        column = table.column(column_name)
        if not (
            pa.types.is_integer(column.type)
            or pa.types.is_floating(column.type)
            or pa.types.is_null(column.type)
        ):
            raise located(path, column_name, f"expected a numeric column, got {column.type}")
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        missing = ~valid_of(column) if column.null_count else False
        if column_name != "timestamp" and pa.types.is_integer(column.type):
            # Compared as read: as float64, 2**53 + 1 would round to the bound and pass.
            raw = numpy_of(column)
            past = raw > MAX_TOKEN_COUNT
            if column.null_count:
                past &= ~missing
            if past.any():
                row = int(np.flatnonzero(past)[0])
                raise located(
                    path,
                    f"row {row + 1}.{column_name}",
                    f"expected a non-negative whole number up to 2**53, got {int(raw[row])}",
                )
        values = numpy_of(column, floats=True)
        # The strict readers' rules (pyverify.inputs.records): a missing value is null, never NaN; a timestamp
        # is a number from 0 to 1e18, a length a whole number up to 2**53.
        high = 1e18 if column_name == "timestamp" else float(MAX_TOKEN_COUNT)
        good = (values >= 0) & (values <= high)  # False for NaN and infinities
        if column_name != "timestamp":
            good &= np.floor(values) == values
        bad = ~(good | missing)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            kind = "number up to 1e18" if column_name == "timestamp" else "whole number up to 2**53"
            raise located(
                path,
                f"row {row + 1}.{column_name}",
                f"expected a non-negative {kind}, got {float(values[row])!r}",
            )
        values[missing] = np.nan  # how the arrays mark a missing value
        if column_name == "timestamp":
            present = values[~np.isnan(values)]
            if np.any(np.diff(present) < 0):
                index = np.flatnonzero(~np.isnan(values))[
                    int(np.flatnonzero(np.diff(present) < 0)[0]) + 1
                ]
                raise located(
                    path,
                    f"row {index + 1}.timestamp",
                    "earlier than the row before it: the file is not in time order (sort it)",
                )
        found[field] = None if np.isnan(values).all() else values
    if "host" in table.column_names:
        column = table.column("host")
        if not pa.types.is_integer(column.type) or column.null_count:
            raise located(
                path,
                "host",
                f"expected an integer host for every row, got {column.type}"
                + (f" with {column.null_count} missing" if column.null_count else ""),
            )
        raw = numpy_of(column)
        bad = np.flatnonzero(
            (raw < 0) | (raw >= MAX_HOSTS)
        )  # compared as read: a uint64 host must not wrap
        if bad.size:
            check_host_id(int(raw[bad[0]]), path, f"row {int(bad[0]) + 1}.host")
        found["routing"] = raw.astype(np.int64)
    if "route_key" in table.column_names:
        found["route_keys"] = [
            None if v is None else str(v) for v in table.column("route_key").to_pylist()
        ]
    labels = _labels(table, path)
    if labels is not None:
        found["labels"] = labels
    return found


#: What an instance's ``labels`` may hold (pyverify/schemas/instance.schema.json), so a file read
#: back is one that validates: keys per request, characters per key, characters per string value.
MAX_LABELS, MAX_LABEL_KEY_CHARS, MAX_LABEL_CHARS = 16, 64, 256


def _labels(table, path: str | Path) -> list[dict[str, Any] | None] | None:
    """Each row's labels from the ``label.KEY`` columns (integers or strings; a null: no such
    label), or ``None``."""
    pa = require("pyarrow")
    names = [name for name in table.column_names if name.startswith(LABEL_PREFIX)]
    if not names:
        return None
    if len(names) > MAX_LABELS:
        raise located(
            path,
            names[MAX_LABELS],
            f"more than {MAX_LABELS} label columns (an instance keeps at most {MAX_LABELS} labels)",
        )
    rows: list[dict[str, Any]] = [{} for _ in range(table.num_rows)]
    for name in names:
        key, column = name[len(LABEL_PREFIX) :], table.column(name)
        if not 0 < len(key) <= MAX_LABEL_KEY_CHARS:
            raise located(path, name, f"a label's name has 1 to {MAX_LABEL_KEY_CHARS} characters")
        text = pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        if not (text or pa.types.is_integer(column.type) or pa.types.is_null(column.type)):
            raise located(path, name, f"expected an integer or a string column, got {column.type}")
        for row, value in enumerate(column.to_pylist()):
            if value is None:
                continue
            if text and len(value) > MAX_LABEL_CHARS:
                raise located(
                    path, f"row {row + 1}.{name}", f"longer than {MAX_LABEL_CHARS} characters"
                )
            if not text and not -(2**63) <= value < 2**63:
                raise located(path, f"row {row + 1}.{name}", f"{value} is outside 64 bits")
            rows[row][key] = value
    return [row or None for row in rows] if any(rows) else None
