"""A flat columnar trace: every block reference in one int64 array, read fast.

:class:`ColumnarTrace` holds a trace the way the counting kernels and the
engines want it: ``ids`` (every block id, in file order, int64) and
``offsets`` (request i is ``ids[offsets[i]:offsets[i+1]]``), plus the optional
per-request columns a trace may carry (``hosts``, ``route_keys``,
``timestamps``, ``input_tokens``, ``output_tokens``). No Python object is made
per block.

Three ways in, all with the rules of the strict readers:

* **Mooncake JSONL** (:func:`read_jsonl`). pyarrow's JSON reader parses the
  file (measured in ``bench/parse_vs_parquet.py``: faster than orjson or
  msgspec line by line; DuckDB's ``read_json`` is faster still but turns
  ``1.5`` into 2 and ``true`` into 1 in an integer column, which the strict
  rules forbid); every check is then vectorised. The fast path *accepts* a file only when it can prove that the
  strict reader (:mod:`pyverify.inputs.mooncake`, :mod:`pyverify.inputs.jsonread`)
  would accept it with the same values; on anything it cannot prove (a
  duplicate key, ``NaN``, a blank line, a backslash anywhere, a negative id,
  a prefix-closure violation, decreasing timestamps, ...) it hands the file to
  the strict reader, which either names the first bad line or, when the fast
  path was only being cautious, reads it. So errors and results are exactly
  the strict reader's.
* **Parquet** (:func:`read_parquet`) and **CSV** (:func:`read_csv`) with a
  ``hash_ids`` column (Parquet: a list of integers; CSV: ``[0, 1, 2]`` or
  ``0 1 2`` in one cell), optional ``timestamp``, ``input_length``,
  ``output_length``, ``host`` and ``route_key`` columns. Errors name the row
  (1-based, as a spreadsheet counts data rows) and the field.
* an :class:`~pyverify.inputs.model.Instance` (:meth:`ColumnarTrace.from_instance`).

:class:`ParquetTraceWriter` writes the Parquet form chunk by chunk (one row
group per chunk, atomically), which is what ``pyverify trace import -o
x.parquet`` and the 1B-reference benchmark use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from pyverify.errors import UserError, located
from pyverify.inputs.jsonread import MAX_LINE_BYTES, max_input_bytes, open_input, read_bounded
from pyverify.inputs.model import ROOT, Instance

#: The largest block id (ids are signed 64-bit integers; -1 is the root).
MAX_BLOCK_ID = 2**63 - 1
#: Mooncake's block size, the default for traces that do not say.
DEFAULT_BLOCK_TOKENS = 512
#: The optional per-request columns of the Parquet/CSV form.
OPTIONAL_COLUMNS = ("timestamp", "input_length", "output_length", "host", "route_key")
#: Written into the Parquet file's metadata so readers know what wrote it.
PARQUET_FORMAT = "pyverify.trace/1"

PARQUET_MAGIC = b"PAR1"

INSTALL_HINT = "install the scale extra: pip install 'pyverify[scale]'"


class MissingExtra(UserError):
    """An optional dependency is not installed (the message says how to get it)."""


def require(module: str):
    """Import an optional dependency, or one line of error saying how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{module.split('.')[0]} is needed for this; {INSTALL_HINT}") from None


@dataclass(frozen=True, eq=False)
class ColumnarTrace:
    """A validated, prefix-closed trace as flat arrays (see the module docstring)."""

    name: str
    ids: np.ndarray
    offsets: np.ndarray
    source: str = ""
    hosts: np.ndarray | None = None
    route_keys: list[str] | None = None
    timestamps: np.ndarray | None = None
    input_tokens: np.ndarray | None = None
    output_tokens: np.ndarray | None = None
    block_size_tokens: int | None = DEFAULT_BLOCK_TOKENS

    @property
    def n_requests(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_references(self) -> int:
        return int(self.ids.size)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def chains(self) -> Iterator[tuple[int, ...]]:
        flat = self.ids.tolist()
        bounds = self.offsets.tolist()
        for start, end in zip(bounds[:-1], bounds[1:]):
            yield tuple(flat[start:end])

    def to_instance(self) -> Instance:
        """The same trace as an :class:`Instance` (per-block Python objects: small traces)."""
        extra: list[dict[str, Any]] = []
        columns = (("arrival_ms", self.timestamps), ("input_tokens", self.input_tokens), ("output_tokens", self.output_tokens))
        present = [(key, values.tolist()) for key, values in columns if values is not None]
        keys = self.route_keys
        for index in range(self.n_requests):
            item = {key: values[index] for key, values in present if values[index] is not None and values[index] == values[index]}
            if keys is not None and keys[index] is not None:
                item["route_key"] = keys[index]
            extra.append(item)
        hosts = None if self.hosts is None else tuple(self.hosts.tolist())
        fleet = int(self.hosts.max()) + 1 if hosts else 1
        return Instance(
            name=self.name,
            hosts=fleet,
            chains=tuple(self.chains()),
            routing=hosts,
            description=f"Imported from {self.source or self.name} ({self.n_requests} requests).",
            source=self.source,
            block_size_tokens=self.block_size_tokens,
            extra=tuple(extra) if any(extra) else (),
        )

    @classmethod
    def from_instance(cls, instance: Instance) -> "ColumnarTrace":
        lengths = np.fromiter((len(c) for c in instance.chains), dtype=np.int64, count=instance.n_requests)
        offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.fromiter((b for c in instance.chains for b in c), dtype=np.int64, count=int(offsets[-1]))

        def column(key: str, dtype) -> np.ndarray | None:
            if not instance.extra or not any(key in item for item in instance.extra):
                return None
            return np.array([item.get(key, np.nan) for item in instance.extra], dtype=dtype)

        keys = [item.get("route_key") for item in instance.extra] if instance.extra else None
        return cls(
            name=instance.name, ids=ids, offsets=offsets, source=instance.source,
            hosts=None if instance.routing is None else np.asarray(instance.routing, dtype=np.int64),
            route_keys=keys if keys and any(k is not None for k in keys) else None,
            timestamps=column("arrival_ms", np.float64),
            input_tokens=column("input_tokens", np.float64),
            output_tokens=column("output_tokens", np.float64),
            block_size_tokens=instance.block_size_tokens,
        )


# --------------------------------------------------------------------------
# Prefix closure, vectorised
# --------------------------------------------------------------------------

def parents_of(ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each reference's parent: the id before it in its chain, or ``ROOT`` for a chain's first block."""
    parents = np.empty_like(ids)
    if ids.size:
        parents[1:] = ids[:-1]
        parents[offsets[:-1][offsets[:-1] < ids.size]] = ROOT
    return parents


def is_prefix_closed(ids: np.ndarray, offsets: np.ndarray) -> bool:
    """Whether every block id keeps one parent throughout (see :class:`pyverify.inputs.model.PrefixClosure`).

    Dense ids (Mooncake's) use a table indexed by id: write every reference's
    parent at its id, read back, compare. Whichever write wins, a mismatch
    appears exactly when some id has two parents. Both passes go chunk by
    chunk, so the temporaries stay small next to the trace. Sparse ids
    (64-bit hashes) are sorted instead.
    """
    if ids.size == 0:
        return True
    high = int(ids.max())
    if high >= 2 * ids.size + 1024:
        return first_violation(ids, offsets) is None
    table = np.empty(high + 1, dtype=np.int64)
    starts = offsets[:-1]
    for write in (True, False):
        for begin in range(0, ids.size, CHUNK):
            end = min(begin + CHUNK, ids.size)
            parents = _chunk_parents(ids, starts, begin, end)
            if write:
                table[ids[begin:end]] = parents
            elif not np.array_equal(table[ids[begin:end]], parents):
                return False
    return True


#: References per chunk of the closure check.
CHUNK = 1 << 24


def _chunk_parents(ids: np.ndarray, starts: np.ndarray, begin: int, end: int) -> np.ndarray:
    """:func:`parents_of` for ``ids[begin:end]`` only."""
    parents = np.empty(end - begin, dtype=np.int64)
    if begin == 0:
        parents[1:] = ids[:end - 1]
    else:
        parents[:] = ids[begin - 1:end - 1]
    first = np.searchsorted(starts, begin)
    last = np.searchsorted(starts, end)
    parents[starts[first:last] - begin] = ROOT
    return parents


def first_violation(ids: np.ndarray, offsets: np.ndarray, parents: np.ndarray | None = None) -> tuple[int, int, str] | None:
    """``(request, position, reason)`` of the first reference whose parent differs from its id's first parent.

    The same violation, with the same words, as :class:`pyverify.inputs.model.PrefixClosure`
    finds reading the trace in order: a stable sort by id puts each id's
    first reference first in its run.
    """
    if ids.size == 0:
        return None
    parents = parents_of(ids, offsets) if parents is None else parents
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    sorted_parents = parents[order]
    run_start = np.empty(ids.size, dtype=bool)
    run_start[0] = True
    np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=run_start[1:])
    first_parent = sorted_parents[run_start][np.cumsum(run_start) - 1]
    bad = sorted_parents != first_parent
    if not bad.any():
        return None
    where = np.flatnonzero(bad)
    at_sorted = where[np.argmin(order[where])]
    at = int(order[at_sorted])
    request = int(np.searchsorted(offsets, at, side="right") - 1)
    known, now = int(first_parent[at_sorted]), int(parents[at])
    before = "the root" if known == ROOT else f"block {known}"
    here = "the root" if now == ROOT else f"block {now}"
    return request, at - int(offsets[request]), f"not prefix-closed: block {int(ids[at])} follows {here} here but followed {before} earlier"


# --------------------------------------------------------------------------
# Mooncake JSONL, fast
# --------------------------------------------------------------------------

def read_jsonl(path: str | Path, allow_unsorted: bool = False) -> ColumnarTrace:
    """A Mooncake JSONL trace as a :class:`ColumnarTrace`; the strict reader's errors and results."""
    trace = _fast_jsonl(path)
    if trace is not None:
        return trace
    from pyverify.inputs.mooncake import import_mooncake

    return ColumnarTrace.from_instance(import_mooncake(path, allow_unsorted=allow_unsorted))


def _jsonl_schema():
    pa = require("pyarrow")
    return pa.schema([("hash_ids", pa.list_(pa.int64())), ("timestamp", pa.float64()),
                      ("input_length", pa.int64()), ("output_length", pa.int64())])


def _fast_jsonl(path: str | Path) -> ColumnarTrace | None:
    """The trace, or ``None`` when the fast path cannot prove the strict reader would read it the same."""
    try:
        import pyarrow  # noqa: F401  (the fast path needs it; without it the strict reader reads)
    except ImportError:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    import stat as _stat

    if not _stat.S_ISREG(info.st_mode) or info.st_size == 0 or info.st_size > max_input_bytes():
        return None
    with open_input(path) as handle:
        data = read_bounded(handle, path)
    counts = _plain_lines(data)
    if counts is None:
        return None
    n_lines, longest, quotes = counts
    if longest > MAX_LINE_BYTES:
        return None
    table = _parse_jsonl(data, longest)
    if table is None or table.num_rows != n_lines:
        return None
    if not _keys_are_distinct(table, quotes):
        return None
    del data
    column = table.column("hash_ids").combine_chunks()
    if column.null_count or column.values.null_count:
        return None
    offsets = column.offsets.to_numpy().astype(np.int64)
    ids = column.values.to_numpy()
    if offsets[0] != 0:
        ids = ids[offsets[0]:offsets[-1]]
        offsets = offsets - offsets[0]
    if offsets.size < 2 or np.any(np.diff(offsets) < 1) or ids.min() < 0:
        return None
    timestamps = _numbers(table, "timestamp")
    if timestamps is not None:
        present = timestamps[~np.isnan(timestamps)]
        if present.size and (present.min() < 0 or present.max() > 2**53 or np.any(np.diff(present) < 0)):
            return None  # the strict reader names the line (or warns, with --allow-unsorted)
    lengths = [_numbers(table, key) for key in ("input_length", "output_length")]
    if any(values is not None and np.nanmin(values) < 0 for values in lengths):
        return None
    if not is_prefix_closed(ids, offsets):
        return None
    return ColumnarTrace(
        name=Path(path).stem, ids=ids, offsets=offsets, source=f"mooncake-jsonl:{Path(path).name}",
        timestamps=timestamps, input_tokens=lengths[0], output_tokens=lengths[1],
    )


def _plain_lines(data: bytes) -> tuple[int, int, int] | None:
    """``(lines, longest line, quote marks)`` when the text is one the fast path can count on, else ``None``.

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
    ends = np.flatnonzero(text == ord("\n"))
    if text[-1] != ord("\n"):
        ends = np.append(ends, text.size)
    lines = int(ends.size)
    # Every line starts with "{" and ends with "}". Then no object spans two lines (between a "}" and
    # a "{" JSON needs a comma, which would end or start a line), so each line holds one or more whole
    # objects, and the caller's check that the reader found as many rows as lines leaves exactly one.
    if text[0] != ord("{") or np.any(text[ends - 1] != ord("}")) or np.any(text[ends[:-1] + 1] != ord("{")):
        return None
    longest = int(np.diff(ends, prepend=-1).max())
    return lines, longest, _count(text, '"')


def _count(text: np.ndarray, char: str) -> int:
    return int(np.count_nonzero(text == ord(char)))


def _parse_jsonl(data: bytes, longest: int):
    """pyarrow's JSON reader over the bytes (blocks of several lines, parsed on every core), or ``None``."""
    import pyarrow as pa
    import pyarrow.json as pj

    block = max(1 << 22, 2 * longest + 2)  # 4 MiB blocks measured fastest on 2 cores
    try:
        return pj.read_json(
            pa.BufferReader(data),
            read_options=pj.ReadOptions(block_size=block),
            parse_options=pj.ParseOptions(explicit_schema=_jsonl_schema(), unexpected_field_behavior="infer"),
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
        elif name == "hash_ids" or pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind) or pa.types.is_null(kind):
            expected += 2 * present
        else:
            return False
    return expected == quotes


def _numbers(table, name: str) -> np.ndarray | None:
    if name not in table.column_names or table.column(name).null_count == len(table):
        return None
    return table.column(name).to_numpy(zero_copy_only=False).astype(np.float64)


# --------------------------------------------------------------------------
# Parquet and CSV
# --------------------------------------------------------------------------

def is_parquet(path: str | Path) -> bool:
    """Parquet by content: the file starts with the magic bytes ``PAR1``."""
    return _head(path, 4) == PARQUET_MAGIC


def is_hash_ids_csv(path: str | Path) -> bool:
    """CSV by content: the first line is a header naming a ``hash_ids`` column (and is not JSON)."""
    head = _head(path, 1 << 16)
    first = head.split(b"\n", 1)[0].strip()
    if not first or first[:1] in (b"{", b"["):
        return False
    names = [part.strip().strip(b'"').lower() for part in first.split(b",")]
    return b"hash_ids" in names


def is_hash_ids_jsonl(path: str | Path) -> bool:
    """Mooncake JSONL by content: an uncompressed file whose first non-blank line is an
    object with a ``"hash_ids"`` field (a quick look at the first 64 KiB; the
    reader validates every line)."""
    head = _head(path, 1 << 16).lstrip()
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


def read_parquet(path: str | Path) -> ColumnarTrace:
    """A Parquet trace (one row per request, ``hash_ids`` a list of integers), validated.

    Read one row group at a time into arrays allocated once (the file's
    metadata says how many values there are), so the trace is held once,
    not once by pyarrow and again by numpy.
    """
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    try:
        handle = pq.ParquetFile(str(path))
        schema = handle.schema_arrow
        if "hash_ids" not in schema.names:
            raise located(path, "hash_ids", f"no such column; found {', '.join(schema.names) or 'none'}")
        _check_list_type(schema.field("hash_ids").type, path)
        metadata = handle.metadata
        leaf = [j for j in range(metadata.num_columns) if metadata.schema.column(j).path.split(".")[0] == "hash_ids"][0]
        capacity = sum(metadata.row_group(g).column(leaf).num_values for g in range(metadata.num_row_groups))
        chunks = (handle.read_row_group(g, columns=["hash_ids"]).column("hash_ids") for g in range(metadata.num_row_groups))
        ids, offsets = _flat_ids((chunk for column in chunks for chunk in column.chunks), metadata.num_rows, capacity, path)
        others = [name for name in OPTIONAL_COLUMNS if name in schema.names]
        extra = _optional_columns(pq.read_table(str(path), columns=others), path) if others else {}
    except (OSError, pa.ArrowException) as error:
        raise located(path, None, f"cannot read as Parquet: {error}") from None
    return _trace(ids, offsets, path, _parquet_block_size(schema), extra)


def _parquet_block_size(schema) -> int | None:
    metadata = schema.metadata or {}
    raw = metadata.get(b"pyverify.block_size_tokens")
    return int(raw) if raw and raw.isdigit() else DEFAULT_BLOCK_TOKENS


def read_csv(path: str | Path) -> ColumnarTrace:
    """A CSV trace with a header naming ``hash_ids``; each cell ``[0, 1, 2]`` or ``0 1 2``."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    csv = require("pyarrow.csv")
    try:
        table = csv.read_csv(str(path), convert_options=csv.ConvertOptions(column_types={"hash_ids": pa.string(), "route_key": pa.string()}))
    except (OSError, pa.ArrowException) as error:
        raise located(path, None, f"cannot read as CSV: {error}") from None
    text = table.column("hash_ids").combine_chunks()
    if text.null_count:
        row = int(np.flatnonzero(text.is_null().to_numpy(zero_copy_only=False))[0])
        raise located(path, f"row {row + 1}.hash_ids", "empty: a request has at least one block")
    inner = pc.utf8_trim(pc.utf8_trim_whitespace(text), "[]")
    parts = pc.split_pattern_regex(pc.utf8_trim_whitespace(inner), r"[,\s]+")
    values = pc.list_flatten(parts)
    blank = np.flatnonzero(pc.equal(values, "").to_numpy(zero_copy_only=False))
    if blank.size:
        row, position = _locate(parts, int(blank[0]))
        reason = "empty: a request has at least one block" if position == 0 and len(parts[row]) == 1 else "empty block id"
        raise located(path, f"row {row + 1}.hash_ids" + (f"[{position}]" if reason == "empty block id" else ""), reason)
    try:
        numbers = pc.cast(values, pa.int64())
    except pa.ArrowInvalid:
        flat = values.to_pylist()
        bad = next(i for i, v in enumerate(flat) if not _is_int_text(v))
        row, position = _locate(parts, bad)
        raise located(path, f"row {row + 1}.hash_ids[{position}]", f"block id {flat[bad]!r} is not an integer from 0 to 2**63-1") from None
    lists = pa.ListArray.from_arrays(parts.offsets, numbers)
    table = table.set_column(table.column_names.index("hash_ids"), "hash_ids", lists)
    return _from_table(table, path, DEFAULT_BLOCK_TOKENS)


def _is_int_text(text: str) -> bool:
    return text.isdigit() and int(text) <= MAX_BLOCK_ID


def _locate(parts, flat_index: int) -> tuple[int, int]:
    offsets = parts.offsets.to_numpy()
    row = int(np.searchsorted(offsets, flat_index, side="right") - 1)
    return row, flat_index - int(offsets[row])


def _from_table(table, path: str | Path, block_size: int | None) -> ColumnarTrace:
    """Validate a table with a ``hash_ids`` list column; errors name ``row N`` (1-based)."""
    if "hash_ids" not in table.column_names:
        raise located(path, "hash_ids", f"no such column; found {', '.join(table.column_names) or 'none'}")
    column = table.column("hash_ids")
    _check_list_type(column.type, path)
    capacity = sum(len(chunk.values) for chunk in column.chunks)
    ids, offsets = _flat_ids(iter(column.chunks), table.num_rows, capacity, path)
    return _trace(ids, offsets, path, block_size, _optional_columns(table, path))


def _check_list_type(kind, path) -> None:
    pa = require("pyarrow")
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not pa.types.is_integer(kind.value_type):
        raise located(path, "hash_ids", f"expected a list of integer block ids per row, got {kind}")


def _flat_ids(chunks, rows: int, capacity: int, path) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, offsets)`` from list-array chunks in row order, checked chunk by chunk; errors name ``row N``."""
    if rows == 0:
        raise located(path, None, "empty trace: no requests")
    ids = np.empty(capacity, dtype=np.int64)
    offsets = np.empty(rows + 1, dtype=np.int64)
    offsets[0] = 0
    row0 = filled = 0
    for chunk in chunks:
        n = len(chunk)
        if n == 0:
            continue
        if chunk.null_count:
            row = row0 + int(np.flatnonzero(chunk.is_null().to_numpy(zero_copy_only=False))[0])
            raise located(path, f"row {row + 1}.hash_ids", "missing: a request has at least one block")
        local = chunk.offsets.to_numpy().astype(np.int64)
        lengths = np.diff(local)
        if np.any(lengths < 1):
            row = row0 + int(np.flatnonzero(lengths < 1)[0])
            raise located(path, f"row {row + 1}.hash_ids", "empty: a request has at least one block")
        values = chunk.values.slice(int(local[0]), int(local[-1] - local[0]))
        local -= local[0]
        if values.null_count:
            row, position = _row_of(local, int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0]))
            raise located(path, f"row {row0 + row + 1}.hash_ids[{position}]", "block id is null")
        raw = values.to_numpy(zero_copy_only=False)
        bad = (raw > MAX_BLOCK_ID) if raw.dtype.kind == "u" else (raw < 0)
        if bad.any():
            row, position = _row_of(local, int(np.flatnonzero(bad)[0]))
            value = int(raw[local[row] + position])
            reason = f"block id {value} is larger than 2**63-1" if value > 0 else f"block id {value} is negative"
            raise located(path, f"row {row0 + row + 1}.hash_ids[{position}]", reason)
        ids[filled:filled + raw.size] = raw
        offsets[row0 + 1:row0 + n + 1] = local[1:] + filled
        filled += raw.size
        row0 += n
    return ids[:filled], offsets


def _trace(ids: np.ndarray, offsets: np.ndarray, path, block_size: int | None, extra: dict) -> ColumnarTrace:
    """The validated trace, once prefix closure holds."""
    if not is_prefix_closed(ids, offsets):
        request, position, reason = first_violation(ids, offsets)
        raise located(path, f"row {request + 1}.hash_ids[{position}]", reason)
    return ColumnarTrace(name=Path(path).stem, ids=ids, offsets=offsets, source=f"{_kind(path)}:{Path(path).name}",
                         block_size_tokens=block_size, **extra)


def _kind(path: str | Path) -> str:
    return "parquet" if is_parquet(path) else "csv"


def _row_of(offsets: np.ndarray, flat_index: int) -> tuple[int, int]:
    row = int(np.searchsorted(offsets, flat_index, side="right") - 1)
    return row, flat_index - int(offsets[row])


def _optional_columns(table, path: str | Path) -> dict[str, Any]:
    pa = require("pyarrow")
    found: dict[str, Any] = {}
    names = {"timestamp": "timestamps", "input_length": "input_tokens", "output_length": "output_tokens"}
    for column_name, field in names.items():
        if column_name not in table.column_names:
            continue
        column = table.column(column_name)
        if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_null(column.type)):
            raise located(path, column_name, f"expected a numeric column, got {column.type}")
        values = column.to_numpy(zero_copy_only=False).astype(np.float64)
        bad = ~(np.isnan(values) | ((values >= 0) & np.isfinite(values)))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise located(path, f"row {row + 1}.{column_name}", f"expected a non-negative number, got {values[row]!r}")
        if column_name == "timestamp":
            present = values[~np.isnan(values)]
            if np.any(np.diff(present) < 0):
                index = np.flatnonzero(~np.isnan(values))[int(np.flatnonzero(np.diff(present) < 0)[0]) + 1]
                raise located(path, f"row {index + 1}.timestamp", "earlier than the row before it: the file is not in time order (sort it)")
        found[field] = None if np.isnan(values).all() else values
    if "host" in table.column_names:
        column = table.column("host")
        if not pa.types.is_integer(column.type) or column.null_count:
            raise located(path, "host", f"expected an integer host for every row, got {column.type}"
                          + (f" with {column.null_count} missing" if column.null_count else ""))
        hosts = column.to_numpy().astype(np.int64)
        if hosts.min() < 0:
            raise located(path, f"row {int(np.flatnonzero(hosts < 0)[0]) + 1}.host", "negative host id")
        found["hosts"] = hosts
    if "route_key" in table.column_names:
        found["route_keys"] = [None if v is None else str(v) for v in table.column("route_key").to_pylist()]
    return found


def read_columnar(path: str | Path, allow_unsorted: bool = False) -> ColumnarTrace:
    """Any trace file as a :class:`ColumnarTrace`: Parquet or CSV by content, else Mooncake JSONL."""
    if is_parquet(path):
        return read_parquet(path)
    if is_hash_ids_csv(path):
        return read_csv(path)
    return read_jsonl(path, allow_unsorted=allow_unsorted)


# --------------------------------------------------------------------------
# Writing Parquet
# --------------------------------------------------------------------------

class ParquetTraceWriter:
    """Write a trace as Parquet, one row group per :meth:`write`, atomically.

    Use as a context manager; the file appears (renamed into place) only when
    the block exits without an error.
    """

    def __init__(self, path: str | Path, block_size_tokens: int | None = DEFAULT_BLOCK_TOKENS, columns: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self.block_size_tokens = block_size_tokens
        self.columns = columns
        self._context = None
        self._writer = None

    def __enter__(self) -> "ParquetTraceWriter":
        from pyverify.fileio import atomic_path

        pa = require("pyarrow")
        pq = require("pyarrow.parquet")
        self._context = atomic_path(self.path)
        tmp = self._context.__enter__()
        fields = [pa.field("hash_ids", pa.list_(pa.int64()), nullable=False)]
        types = {"timestamp": pa.float64(), "input_length": pa.int64(), "output_length": pa.int64(),
                 "host": pa.int64(), "route_key": pa.string()}
        fields += [pa.field(name, types[name]) for name in self.columns]
        metadata = {b"pyverify.format": PARQUET_FORMAT.encode()}
        if self.block_size_tokens:
            metadata[b"pyverify.block_size_tokens"] = str(self.block_size_tokens).encode()
        self.schema = pa.schema(fields, metadata=metadata)
        self._writer = pq.ParquetWriter(str(tmp), self.schema, compression="zstd")
        return self

    def write(self, ids: np.ndarray, offsets: np.ndarray, **columns: Any) -> None:
        """Append requests: ``ids`` flat, ``offsets`` from 0 to ``ids.size``; optional columns by name."""
        pa = require("pyarrow")
        lists = pa.ListArray.from_arrays(pa.array(np.asarray(offsets, dtype=np.int32) if offsets[-1] < 2**31 else offsets),
                                         pa.array(np.asarray(ids, dtype=np.int64)))
        arrays = [lists] + [pa.array(columns[name], type=self.schema.field(name).type) for name in self.columns]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))

    def __exit__(self, kind, error, traceback) -> None:
        self._writer.close()
        self._context.__exit__(kind, error, traceback)


def write_parquet(trace: ColumnarTrace, path: str | Path, rows_per_group: int = 1 << 20) -> None:
    """Write a :class:`ColumnarTrace` as Parquet (row groups of ``rows_per_group`` requests)."""
    present = {"timestamp": trace.timestamps, "input_length": trace.input_tokens,
               "output_length": trace.output_tokens, "host": trace.hosts}
    columns = tuple(name for name, values in present.items() if values is not None)
    if trace.route_keys is not None:
        columns += ("route_key",)
    with ParquetTraceWriter(path, trace.block_size_tokens, columns) as writer:
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
                    chunk = [None if v != v else v for v in chunk.tolist()]
                values[name] = chunk
            writer.write(trace.ids[first:last], trace.offsets[start:end + 1] - first, **values)


__all__ = [
    "ColumnarTrace", "ParquetTraceWriter", "first_violation", "is_hash_ids_csv", "is_parquet", "is_prefix_closed",
    "parents_of", "read_columnar", "read_csv", "read_jsonl", "read_parquet", "write_parquet",
]
