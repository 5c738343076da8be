"""Trace importers: Mooncake JSONL into the instance model, streaming.

Mooncake's trace format (kvcache-ai/Mooncake, ``FAST25-release/traces/``) is
one JSON object per line::

    {"timestamp": 0, "input_length": 40160, "output_length": 6, "hash_ids": [0, 1, ...]}

``hash_ids`` are remapped prefix block hashes, one per 512-token block; equal
ids mean a reusable KV block, so each id names the whole prefix up to its
block, exactly as a chain does in :mod:`pyverify.inputs.model`.

What :func:`import_mooncake` checks, line by line, stopping at the first
problem with a one-line :class:`~pyverify.errors.UserError` of the form
``FILE: line N[.FIELD[POS]]: REASON``:

* each non-blank line is a JSON object (blank lines are skipped; unknown keys
  are ignored, so later versions of the format with extra fields still load);
* ``hash_ids`` is a non-empty list of non-negative integers (``true`` is not an
  integer, and neither is ``1.0``);
* ``timestamp`` is a non-negative number, ``input_length`` and
  ``output_length`` are non-negative integers, when present (the released
  traces always carry all three);
* prefix closure (DESIGN.md, "Model and semantics"): every id keeps one parent
  throughout the file; the first violation is reported with its line and its
  position in ``hash_ids``.

Decreasing timestamps are an **error** by default: the file order is the
replay order of every cache run, so a timestamp that goes backwards means the
file's order and its own clock disagree, and pyverify refuses to guess which
one is meant (sort the file, or pass ``allow_unsorted=True`` /
``--allow-unsorted`` to replay in file order; then one warning names the first
such line). Equal timestamps are fine (the synthetic trace has many).

The importer streams: it holds the chains it builds and one dict of parents,
never the whole text. An imported instance has no routing (traces carry none),
``hosts`` as asked (default 1), and ``block_size_tokens`` 512.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_lines, open_input, parse_json
from pyverify.inputs.model import Instance, PrefixClosure

#: The largest block id (ids are stored as signed 64-bit integers; -1 is the root).
MAX_BLOCK_ID = 2**63 - 1

#: Tokens per Mooncake block (the paper's and the trace README's block size).
MOONCAKE_BLOCK_TOKENS = 512


@dataclass(frozen=True)
class TraceRecord:
    """One validated trace line."""

    line: int
    hash_ids: tuple[int, ...]
    timestamp: float | int | None
    input_length: int | None
    output_length: int | None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and value == value and value not in (float("inf"), float("-inf"))


def iter_mooncake(path: str | Path) -> Iterator[TraceRecord]:
    """Yield each line of a Mooncake JSONL trace as a validated :class:`TraceRecord`.

    Checks the per-line shape only (see the module docstring); prefix closure
    and time order are checked by :func:`import_mooncake`, which sees the
    whole stream.
    """
    with open_input(path) as handle:
        for line_number, raw in iter_lines(handle, path):
            where = f"line {line_number}"
            if not raw.strip():
                continue
            data = parse_json(raw, path, where)
            if not isinstance(data, dict):
                raise located(path, where, f"expected a JSON object, got {type(data).__name__}")
            if "hash_ids" not in data:
                raise located(path, where, "missing field 'hash_ids'")
            hash_ids = data["hash_ids"]
            if not isinstance(hash_ids, list):
                raise located(path, f"{where}.hash_ids", f"expected a list of block ids, got {type(hash_ids).__name__}")
            if not hash_ids:
                raise located(path, f"{where}.hash_ids", "empty: a request has at least one block")
            for position, block in enumerate(hash_ids):
                if not _is_int(block):
                    raise located(path, f"{where}.hash_ids[{position}]", f"block id {block!r} is not an integer")
                if block < 0:
                    raise located(path, f"{where}.hash_ids[{position}]", f"block id {block} is negative")
                if block > MAX_BLOCK_ID:
                    raise located(path, f"{where}.hash_ids[{position}]", f"block id {block} is larger than 2**63-1")
            timestamp = data.get("timestamp")
            if timestamp is not None and not (_is_number(timestamp) and timestamp >= 0):
                raise located(path, f"{where}.timestamp", f"expected a non-negative number, got {timestamp!r}")
            lengths = []
            for key in ("input_length", "output_length"):
                value = data.get(key)
                if value is not None and not (_is_int(value) and 0 <= value <= MAX_BLOCK_ID):
                    raise located(path, f"{where}.{key}", f"expected a non-negative integer, got {value!r}")
                lengths.append(value)
            yield TraceRecord(line_number, tuple(hash_ids), timestamp, lengths[0], lengths[1])


def import_mooncake(
    path: str | Path,
    hosts: int = 1,
    name: str | None = None,
    allow_unsorted: bool = False,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Instance:
    """Import a Mooncake JSONL trace as an :class:`~pyverify.inputs.model.Instance`.

    Raises a one-line UserError at the first bad line (see the module
    docstring). ``progress``, if given, is called with 1 after each request
    is imported (for a progress bar). ``warn`` receives the one warning
    about decreasing timestamps when ``allow_unsorted`` is set (default: print
    to stderr).
    """
    if hosts < 1:
        raise located(path, "hosts", f"expected a positive fleet size, got {hosts}")
    closure = PrefixClosure()
    chains: list[tuple[int, ...]] = []
    extra: list[dict[str, Any]] = []
    last_time: float | int | None = None
    last_time_line = 0
    warned = False
    for record in iter_mooncake(path):
        where = f"line {record.line}"
        violation = closure.add(record.hash_ids)
        if violation is not None:
            position, reason = violation
            raise located(path, f"{where}.hash_ids[{position}]", reason)
        if record.timestamp is not None:
            if last_time is not None and record.timestamp < last_time:
                message = (f"timestamp {record.timestamp} is earlier than {last_time} on line {last_time_line}: "
                           "the file is not in time order")
                if not allow_unsorted:
                    raise located(path, f"{where}.timestamp",
                                  message + " (sort it, or pass --allow-unsorted to replay in file order)")
                if not warned:
                    (warn or _stderr_warning)(f"pyverify: warning: {path}: {where}.timestamp: {message}; replaying in file order")
                    warned = True
            last_time, last_time_line = record.timestamp, record.line
        chains.append(record.hash_ids)
        item: dict[str, Any] = {}
        if record.timestamp is not None:
            item["arrival_ms"] = record.timestamp
        if record.input_length is not None:
            item["input_tokens"] = record.input_length
        if record.output_length is not None:
            item["output_tokens"] = record.output_length
        extra.append(item)
        if progress is not None:
            progress(1)
    if not chains:
        raise located(path, None, "empty trace: no requests")
    return Instance(
        name=name or Path(path).stem,
        hosts=hosts,
        chains=tuple(chains),
        routing=None,
        description=f"Imported from the Mooncake JSONL trace {Path(path).name} ({len(chains)} requests).",
        source=f"mooncake-jsonl:{Path(path).name}",
        block_size_tokens=MOONCAKE_BLOCK_TOKENS,
        extra=tuple(extra) if any(extra) else (),
    )


def _stderr_warning(message: str) -> None:
    print(message, file=sys.stderr)


def is_trace_path(path: str | Path) -> bool:
    """Whether ``path`` names a JSONL trace (by its ``.jsonl`` suffix)."""
    return Path(path).suffix.lower() == ".jsonl"


__all__ = ["MOONCAKE_BLOCK_TOKENS", "TraceRecord", "import_mooncake", "is_trace_path", "iter_mooncake"]
