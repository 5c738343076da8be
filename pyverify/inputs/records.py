"""What every line-oriented trace reader shares: checks across lines, and the instance they build.

A reader (Mooncake JSONL, token-id logs, chat JSONL) turns each line into a
chain of block ids plus optional per-request fields, and hands them to a
:class:`TraceBuilder`, which checks, across the whole stream:

* prefix closure (every id keeps one parent; :class:`~pyverify.inputs.model.PrefixClosure`),
  reported by the reader, which knows how to name the field;
* time order: decreasing ``timestamp`` is an **error** by default. The file
  order is the replay order of every cache run, so a timestamp that goes back
  means the file's order and its own clock disagree, and pyverify refuses to
  guess which one is meant (sort the file, or pass ``allow_unsorted=True`` /
  ``--allow-unsorted`` to replay in file order; then one warning names the
  first such line). Equal timestamps are fine.

It keeps the chains and one dict of parents, never the text.
"""

from __future__ import annotations

import os
import sys
from array import array
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from pyverify.errors import located
from pyverify.inputs.model import MAX_TOKEN_COUNT, Instance, PrefixClosure

#: The largest block id (ids are stored as signed 64-bit integers; -1 is the root).
MAX_BLOCK_ID = 2**63 - 1


@dataclass(frozen=True)
class ImportOptions:
    """What a user may say about how an input becomes an instance (``trace import``'s flags).

    Every command other than ``trace import`` reads inputs with the defaults.
    """

    hosts: int | None = (
        None  # fleet size recorded (default 1 for traces; an instance keeps its own)
    )
    name: str | None = None  # instance name (default: the file's stem, or "stdin")
    allow_unsorted: bool = False  # replay decreasing timestamps in file order, with a warning
    block_size: int | None = (
        None  # tokens per block: hashing size of token/chat inputs, or a coarser size to re-block to
    )
    tokenizer: str | None = None  # chat JSONL: a tokenizer.json path, or "bytes" (the default)
    source_block_size: int | None = (
        None  # tokens per block of a hash-id trace that does not say (default: the format's)
    )
    rag_order: tuple[str, ...] | None = None  # RAGPulse: the order of a request's components
    rag_lengths: tuple[str, ...] = ()  # RAGPulse: side files giving each chunk's token_length
    warn: Callable[[str], None] | None = None
    progress: Callable[[int], None] | None = None


#: The reading flags a certificate records, so that ``verify`` reads its input the same way:
#: every option of :class:`ImportOptions` that changes the instance read (``name`` and ``hosts``
#: are ``trace import``'s alone).
READING_FLAGS = {
    "allow_unsorted": bool,
    "block_size": int,
    "tokenizer": str,
    "source_block_size": int,
    "rag_order": list,
    "rag_lengths": list,
}
#: The largest integer a reading flag may record (signed 64 bits, as the arrays hold sizes).
MAX_READING_INT = 2**63 - 1


def reading_record(options: ImportOptions) -> dict[str, Any]:
    """The reading flags of ``options`` that differ from the defaults, as JSON (empty: read as every command does)."""
    record: dict[str, Any] = {}
    if options.allow_unsorted:
        record["allow_unsorted"] = True
    for key in ("block_size", "tokenizer", "source_block_size", "rag_order"):
        value = getattr(options, key)
        if value is not None:
            record[key] = list(value) if isinstance(value, tuple) else value
    if options.rag_lengths:
        record["rag_lengths"] = list(options.rag_lengths)
    return record


def options_from_record(record: Any, path: str, field: str, **overrides: Any) -> ImportOptions:
    """:class:`ImportOptions` from a recorded :func:`reading_record` (``field`` of the file ``path``), then ``overrides``.

    An override that is ``None`` (or ``False`` for ``allow_unsorted``) keeps the
    recorded value: a flag the user gave wins, one left out changes nothing."""
    if not isinstance(record, dict):
        raise located(path, field, f"is {record!r}, not an object of reading flags")
    values: dict[str, Any] = {}
    for key, value in record.items():
        kind = READING_FLAGS.get(key)
        if kind is None:
            raise located(
                path, f"{field}.{key}", f"is not a reading flag (known: {', '.join(READING_FLAGS)})"
            )
        if kind is list:
            if type(value) is not list or not value or not all(type(item) is str for item in value):
                raise located(
                    path, f"{field}.{key}", f"is {value!r}, not a non-empty list of strings"
                )
            value = tuple(value)
            # Side files named by a file someone else wrote: plain files only (never standard
            # input or a device).
            unread = [item for item in value if key == "rag_lengths" and not os.path.isfile(item)]
            if unread:
                raise located(
                    path, f"{field}.{key}", f"names {unread[0]!r}, which is not a regular file here"
                )
        elif type(value) is not kind or (kind is int and not 0 < value <= MAX_READING_INT):
            wanted = f"positive integer up to {MAX_READING_INT}" if kind is int else kind.__name__
            raise located(path, f"{field}.{key}", f"is {value!r}, not a {wanted}")
        values[key] = value
    for key, value in overrides.items():
        if value is not None and value is not False and value != ():
            values[key] = value
    return ImportOptions(**values)


def is_int(value: Any) -> bool:
    """A JSON integer (``true`` is not one, and neither is ``1.0``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite JSON number (not a boolean)."""
    return (
        (isinstance(value, (int, float)) and not isinstance(value, bool))
        and value == value
        and value not in (float("inf"), float("-inf"))
    )


def optional_count(data: dict[str, Any], key: str, display: str, where: str) -> int | None:
    """``data[key]`` as a token count (0 to :data:`MAX_TOKEN_COUNT`), or None when absent;
    a one-line error otherwise."""
    value = data.get(key)
    if value is not None and not (is_int(value) and value >= 0):
        raise located(display, f"{where}.{key}", f"expected a non-negative integer, got {value!r}")
    if value is not None and value > MAX_TOKEN_COUNT:
        raise located(
            display,
            f"{where}.{key}",
            f"{value} tokens is more than 2**53, the most pyverify holds exactly",
        )
    return value


#: The latest arrival an instance holds, in milliseconds (``requests[i].arrival_ms``).
MAX_ARRIVAL_MS = 1e18


def optional_timestamp(
    data: dict[str, Any], display: str, where: str, ms_per_unit: int = 1
) -> float | int | None:
    """``data["timestamp"]`` (milliseconds, as in Mooncake's traces; or units of ``ms_per_unit``
    milliseconds, 1000 for seconds) or None; a one-line error otherwise, bounded so that it fits
    an instance once converted."""
    value = data.get("timestamp")
    bound = MAX_ARRIVAL_MS / ms_per_unit
    if value is not None and not (is_number(value) and 0 <= value <= bound):
        unit = f" of seconds up to {bound:g}" if ms_per_unit == 1000 else ""
        raise located(
            display, f"{where}.timestamp", f"expected a non-negative number{unit}, got {value!r}"
        )
    return value


def required_list(
    data: dict[str, Any], key: str, display: str, where: str, items: str, at_least: str
) -> list[Any]:
    """``data[key]`` as a non-empty list; else one line: missing, "expected a list of ITEMS", or "empty: AT_LEAST"."""
    if key not in data:
        raise located(display, where, f"missing field {key!r}")
    value = data[key]
    if not isinstance(value, list):
        raise located(
            display, f"{where}.{key}", f"expected a list of {items}, got {type(value).__name__}"
        )
    if not value:
        raise located(display, f"{where}.{key}", f"empty: {at_least}")
    return value


def optional_text(data: dict[str, Any], key: str, display: str, where: str) -> str | None:
    """``data[key]`` as a string, or None when absent; a one-line error otherwise."""
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise located(display, f"{where}.{key}", f"expected a string, got {type(value).__name__}")
    return value


class TraceBuilder:
    """Collects a trace's requests in file order and builds the :class:`Instance`."""

    def __init__(
        self,
        display: str,
        allow_unsorted: bool = False,
        warn: Callable[[str], None] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.display = display
        self.allow_unsorted = allow_unsorted
        self.warn = warn or _stderr_warning
        self.progress = progress
        self.closure = PrefixClosure()
        self.chains: list[tuple[int, ...]] = []
        self.extra: list[dict[str, Any]] = []
        self.lines = _LINES.get()  # each request's line, when asked (pyverify.inputs.locate)
        self._last_time: float | int | None = None
        self._last_time_line = 0
        self._warned = False

    def prefix_violation(self, chain: Sequence[int]) -> tuple[int, str] | None:
        """Record ``chain`` in the closure check; ``(position, reason)`` of its first violation, if any."""
        return self.closure.add(chain)

    def check_time(self, line: int, timestamp: float | int | None) -> None:
        """Check that ``timestamp`` (of the request on ``line``) does not go back (see the module docstring)."""
        if timestamp is None:
            return
        where = f"line {line}"
        if self._last_time is not None and timestamp < self._last_time:
            message = (
                f"timestamp {timestamp} is earlier than {self._last_time} on line {self._last_time_line}: "
                "the file is not in time order"
            )
            if not self.allow_unsorted:
                raise located(
                    self.display,
                    f"{where}.timestamp",
                    message + " (sort it, or pass --allow-unsorted to replay in file order)",
                )
            if not self._warned:
                self.warn(
                    f"pyverify: warning: {self.display}: {where}.timestamp: {message}; replaying in file order"
                )
                self._warned = True
        self._last_time, self._last_time_line = timestamp, line

    def add(
        self,
        line: int,
        chain: tuple[int, ...],
        timestamp: float | int | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        route_key: str | None = None,
        labels: dict[str, Any] | None = None,
    ) -> None:
        """Append one request (its chain already passed :meth:`prefix_violation`), checking time order."""
        self.check_time(line, timestamp)
        self.chains.append(chain)
        item: dict[str, Any] = {}
        if route_key is not None:
            item["route_key"] = route_key
        if timestamp is not None:
            item["arrival_ms"] = timestamp
        if input_tokens is not None:
            item["input_tokens"] = input_tokens
        if output_tokens is not None:
            item["output_tokens"] = output_tokens
        if labels:
            item["labels"] = labels
        self.extra.append(item)
        if self.lines is not None:
            self.lines.append(line)
        if self.progress is not None:
            self.progress(1)

    def instance(
        self,
        name: str,
        fleet_size: int,
        description: str,
        source: str,
        block_size_tokens: int | None,
    ) -> Instance:
        """The instance, or a one-line error when the input held no request."""
        if fleet_size < 1:
            raise located(
                self.display, "hosts", f"expected a positive fleet size, got {fleet_size}"
            )
        if not self.chains:
            raise located(self.display, None, "empty input: no requests")
        return Instance(
            name=name,
            fleet_size=fleet_size,
            chains=tuple(self.chains),
            routing=None,
            description=description,
            source=source,
            block_size_tokens=block_size_tokens,
            extra=tuple(self.extra) if any(self.extra) else (),
        )


#: Where every TraceBuilder made while it is set appends each request's line
#: (:mod:`pyverify.inputs.locate` names an error by it).
_LINES: ContextVar[Any] = ContextVar("pyverify_request_lines", default=None)

#: Per input read (as the command named it): its format's key and each request's line, in order.
_READ: dict[str, tuple[str, array]] = {}


@contextmanager
def recording(path: str) -> Iterator[array]:
    """Note the line of every request read meanwhile (kept by :func:`remember` once read)."""
    lines = array("q")
    token = _LINES.set(lines)
    try:
        yield lines
    finally:
        _LINES.reset(token)


def remember(path: str, format_key: str, lines: array) -> None:
    _READ.clear()  # one input at a time is enough: the last one read is the one a check then names
    _READ[path] = (format_key, lines)


#: Warnings already printed: a command that reads its input more than once (certify -o, verify, audit) warns once.
_PRINTED: set[str] = set()


def _stderr_warning(message: str) -> None:
    if message not in _PRINTED:
        _PRINTED.add(message)
        print(message, file=sys.stderr)


__all__ = [
    "ImportOptions",
    "MAX_BLOCK_ID",
    "MAX_READING_INT",
    "READING_FLAGS",
    "TraceBuilder",
    "is_int",
    "is_number",
    "optional_count",
    "optional_text",
    "optional_timestamp",
    "options_from_record",
    "reading_record",
]
