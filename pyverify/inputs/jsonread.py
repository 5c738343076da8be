"""Strict, bounded JSON reading: the one way pyverify turns bytes into JSON values.

Python's :mod:`json` is lenient where a verification tool must not be:

* **duplicate keys** are accepted, the last one winning, so a file can say
  ``"objective": 31, "objective": 32`` and mean whichever a reader picks;
  here every duplicate key is an error;
* ``NaN``, ``Infinity`` and ``-Infinity`` are accepted although they are not
  JSON (RFC 8259, section 6); here they are errors;
* a lone UTF-16 surrogate (``"\\ud800"``) decodes to a string that cannot be
  encoded again, which crashed every command that printed it; here it is an
  error;
* deeply nested input raises :class:`RecursionError` in Python, and crashes
  the process (a segmentation fault) in pyarrow's JSON reader, which the fast
  Mooncake path uses; here nesting deeper than :data:`MAX_JSON_DEPTH` is
  found by a vectorised scan (:func:`too_deep_at`) before any parser sees
  the bytes, and refused in one line naming the line;
* nothing bounds how much is read: ``/dev/zero`` grew to gigabytes. Here a
  document is read with a bound (:func:`max_input_bytes`, set by the
  environment variable ``PYVERIFY_MAX_INPUT_BYTES``), streams are read line
  by line with a bound on each line (:data:`MAX_LINE_BYTES`), and device
  files are refused. The bounds count decompressed bytes: a gzip input
  (:mod:`pyverify.inputs.stream`) cannot expand past them.

Every failure is a :class:`~pyverify.errors.UserError` naming the file (and,
for streams, the line): the CLI prints it as one line and exits with status 2.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from pyverify.errors import UserError, located
from pyverify.inputs.stream import open_source

#: Default bound on one input (a JSON document, or a whole stream): 4 GiB.
DEFAULT_MAX_INPUT_BYTES = 4 * 1024**3

#: Bound on one line of a line-oriented input (JSONL): 64 MiB. A Mooncake line
#: of 100,000 block ids is about 1 MB.
MAX_LINE_BYTES = 64 * 1024**2

#: The environment variable that changes :data:`DEFAULT_MAX_INPUT_BYTES`.
MAX_INPUT_ENV = "PYVERIFY_MAX_INPUT_BYTES"

#: The deepest nesting of arrays and objects any reader accepts. No pyverify
#: format nests more than five levels (a chat record's content parts); pyarrow's
#: JSON reader crashes the process somewhere between 5,000 and 10,000 levels.
MAX_JSON_DEPTH = 100

NEWLINE = b"\n"

#: Bytes per read of :func:`read_bounded`.
READ_STEP = 1 << 24

#: Bytes per step of :func:`too_deep_at` (its temporaries are a few times this).
DEPTH_SCAN_CHUNK = 1 << 24


def max_input_bytes() -> int:
    """The bound on one input, from ``PYVERIFY_MAX_INPUT_BYTES`` or the default."""
    raw = os.environ.get(MAX_INPUT_ENV)
    if raw is None:
        return DEFAULT_MAX_INPUT_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise UserError(f"{MAX_INPUT_ENV}: expected a whole number of bytes, got {raw!r}") from None
    if value < 1:
        raise UserError(f"{MAX_INPUT_ENV}: expected a positive number of bytes, got {value}")
    return value


class _Strict:
    """Hooks for :func:`json.loads` that refuse what RFC 8259 or this project does not allow."""

    @staticmethod
    def pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise _Refused(f"duplicate key {key!r} in one object")
            _refuse_surrogates(key)
            if isinstance(value, str):
                _refuse_surrogates(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, str):
                        _refuse_surrogates(item)
            result[key] = value
        return result

    @staticmethod
    def constant(name: str) -> Any:
        raise _Refused(f"{name} is not a JSON number")

    @staticmethod
    def real(literal: str) -> float:
        value = float(literal)
        if value in (float("inf"), float("-inf")):
            raise _Refused(f"number {literal[:40]} is too large for a double")
        return value


class _Refused(ValueError):
    """Raised inside the JSON hooks; turned into a located UserError by the caller."""


def _refuse_surrogates(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Refused(
            f"string {text[:40]!r} holds a lone UTF-16 surrogate, which is not text"
        ) from None


def too_deep_at(data: bytes, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The offset of the first bracket that opens level ``limit + 1`` of nesting, or ``None``.

    Counts ``[`` and ``{`` up and ``]`` and ``}`` down outside strings, as a
    JSON parser would, without parsing: a string is what lies between two
    unescaped quote marks, and an escape (a backslash and the byte after it)
    is blanked out first. Each chunk is cut down to its structural bytes
    (``bytes.translate``, in C) and those are counted with numpy, so the scan
    is fast and its memory a few times :data:`DEPTH_SCAN_CHUNK`, whatever
    the input's size. Malformed JSON gives some answer; the parser that runs
    afterwards names what is malformed.
    """
    import re

    import numpy as np

    depth = 0
    in_string = 0
    start = 0
    while start < len(data):
        end = min(start + DEPTH_SCAN_CHUNK, len(data))
        while end < len(data) and data[end - 1] == 0x5C:  # never split an escape between two chunks
            end += 1
        chunk = data[start:end]
        if b"\\" in chunk:
            chunk = re.sub(rb"\\.", b"__", chunk, flags=re.S)
        kind = _KINDS[np.frombuffer(chunk.translate(None, _NOT_STRUCTURAL), dtype=np.uint8)]
        if kind.size:
            quote = kind == 2
            quotes_before = np.cumsum(quote) - quote
            outside = ((quotes_before + in_string) % 2 == 0) & ~quote
            levels = depth + np.cumsum(np.where(outside, kind, 0), dtype=np.int64)
            deeper = np.flatnonzero(levels > limit)
            if deeper.size:  # where it is, among the chunk's structural bytes
                return start + int(
                    np.flatnonzero(_KINDS[np.frombuffer(chunk, dtype=np.uint8)])[deeper[0]]
                )
            depth = int(levels[-1])
            in_string = (in_string + int(np.count_nonzero(quote))) % 2
        start = end
    return None


#: The bytes that :func:`too_deep_at` counts, and how: +1 opens, -1 closes, 2 is a quote mark.
_STRUCTURAL = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1, ord('"'): 2}
_NOT_STRUCTURAL = bytes(byte for byte in range(256) if byte not in _STRUCTURAL)


def _kinds_table():
    import numpy as np

    table = np.zeros(256, dtype=np.int8)
    for byte, kind in _STRUCTURAL.items():
        table[byte] = kind
    return table


class _LazyKinds:
    """The 256-entry table of :data:`_STRUCTURAL`, built on first use (numpy is not imported at start-up)."""

    table = None

    def __getitem__(self, index):
        if _LazyKinds.table is None:
            _LazyKinds.table = _kinds_table()
        return _LazyKinds.table[index]


_KINDS = _LazyKinds()


def check_depth(data: bytes, path: object, where: str | None = None) -> None:
    """One line of error (naming the line) when ``data`` nests deeper than :data:`MAX_JSON_DEPTH`."""
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return  # too few brackets to nest that deep: no scan needed
    offset = too_deep_at(data)
    if offset is not None:
        at = where or f"line {data.count(NEWLINE, 0, offset) + 1}"
        raise located(
            path,
            at,
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels (no pyverify format nests more than a few)",
        )


def parse_json(text: str | bytes, path: object, where: str | None = None) -> Any:
    """Parse one JSON value strictly (see the module docstring).

    ``path`` and ``where`` (e.g. ``"line 7"``) name the place in errors.
    """
    check_depth(
        text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"), path, where
    )
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        if isinstance(text, str) and text.startswith("\ufeff"):
            text = text[1:]
        value = json.loads(
            text,
            object_pairs_hook=_Strict.pairs,
            parse_constant=_Strict.constant,
            parse_float=_Strict.real,
        )
    except UnicodeDecodeError as error:
        raise located(
            path, where, f"not UTF-8 text: {error.reason} at byte {error.start}"
        ) from None
    except json.JSONDecodeError as error:
        at = f"column {error.colno}" if where else f"line {error.lineno} column {error.colno}"
        raise located(path, where, f"malformed JSON at {at}: {error.msg}") from None
    except _Refused as error:
        raise located(path, where, str(error)) from None
    except ValueError as error:  # e.g. an integer literal of more digits than Python converts
        raise located(path, where, f"cannot read a JSON value: {error}") from None
    except RecursionError:
        raise located(
            path,
            where,
            "JSON nested too deeply to read (no pyverify format nests more than a few levels)",
        ) from None
    if isinstance(value, str):
        _check_top_string(value, path, where)
    return value


def _check_top_string(value: str, path: object, where: str | None) -> None:
    try:
        _refuse_surrogates(value)
    except _Refused as error:
        raise located(path, where, str(error)) from None


def open_input(path: str | Path) -> BinaryIO:
    """Open a file (or ``-``, standard input) for reading, gzip decompressed by its magic bytes.

    Directories and device files are refused with one line (see
    :mod:`pyverify.inputs.stream`, which also says how standard input and gzip
    are handled); pipes and sockets are accepted (a pipe is how a stream
    arrives).
    """
    return open_source(path).handle


def too_large(limit: int) -> str:
    """The refusal of an input past the bound: bytes are counted as read, a gzip's after decompression,
    so a small file that unpacks to more is refused as soon as the bound is passed."""
    return (
        f"larger than the input limit of {limit} bytes, counted after decompression "
        f"(set {MAX_INPUT_ENV} to change it)"
    )


def read_bounded(handle: BinaryIO, path: object, limit: int | None = None) -> bytes:
    """All of ``handle``, or one line of error if it holds more than ``limit`` bytes."""
    limit = max_input_bytes() if limit is None else limit
    if _is_regular_file_within(handle, limit):
        try:
            data = _read_whole(handle)
        except OSError as error:
            raise located(path, None, f"cannot read: {error.strerror or error}") from None
        if len(data) <= limit:  # else it grew while read: refused below, as in steps
            return data
        raise located(path, None, too_large(limit))
    # Read in steps, so memory follows what the input holds: one read of limit + 1 bytes reserved
    # the whole bound (4 GiB) up front, a MemoryError under a memory limit even for a small file.
    collected = io.BytesIO()
    size = 0
    try:
        while size <= limit:
            piece = handle.read(min(READ_STEP, limit + 1 - size))
            if not piece:
                break
            collected.write(piece)
            size += len(piece)
    except OSError as error:
        raise located(path, None, f"cannot read: {error.strerror or error}") from None
    if size > limit:
        raise located(path, None, too_large(limit))
    return collected.getvalue()


def _read_whole(handle: io.BufferedReader) -> bytes:
    """The whole regular file under ``handle`` (unread), read by its raw file in one buffer.

    ``handle.read()`` joins what the buffer holds already (opening the file peeks at its first bytes for
    gzip's magic) to the rest: a copy of the whole file, which doubled the read of a 172 MiB trace (0.17 s
    against 0.085 s here) and held the file twice for a moment. The raw file is read from its start
    instead, and the buffered handle then moved to the end, so a further read finds nothing, as after
    ``handle.read()``."""
    raw = handle.raw
    raw.seek(0)
    data = raw.readall()
    handle.seek(0, io.SEEK_END)
    return data


def _is_regular_file_within(handle: BinaryIO, limit: int) -> bool:
    """Whether ``handle`` is a plain (not decompressed) regular file, unread, of at most ``limit`` bytes.

    Such a file says its size, so :func:`read_bounded` reads it in one buffer of that size, returned
    without a copy (``FileIO.readall`` sizes it by ``fstat``; :func:`_read_whole`): reading a 170 MiB trace in steps and
    joining them took 0.35 s here."""
    if type(handle) is not io.BufferedReader or not isinstance(handle.raw, io.FileIO):
        return False
    try:
        info = os.fstat(handle.fileno())
        return stat.S_ISREG(info.st_mode) and info.st_size <= limit and handle.tell() == 0
    except OSError:
        return False


def read_json(path: str | Path) -> Any:
    """Read and strictly parse one JSON document from a file, with the size bound."""
    with open_source(path) as source:
        data = read_bounded(source.handle, source.display)
    return parse_json(data, source.display)


def iter_lines(handle: BinaryIO, path: object) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` with a bound on each line and on the total.

    A line longer than :data:`MAX_LINE_BYTES` (``/dev/zero`` through a pipe is
    one endless line) or a stream longer than :func:`max_input_bytes` stops
    with one line of error naming where. The blank lines after a blank line
    are passed over in one step (counted, not yielded): they hold no record.
    """
    total_limit = max_input_bytes()
    total = 0
    number = 0
    while True:
        try:
            raw = handle.readline(MAX_LINE_BYTES + 1)
        except OSError as error:
            raise located(
                path, f"line {number + 1}", f"cannot read: {error.strerror or error}"
            ) from None
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise located(
                path, f"line {number}", f"longer than {MAX_LINE_BYTES} bytes: not a line of a trace"
            )
        total += len(raw)
        if (
            not raw.strip()
        ):  # a run of blank lines holds no record: pass it at the speed of a byte scan
            skipped, lines = _skip_blank_lines(handle)
            total += skipped
            number += lines
        if total > total_limit:
            raise located(path, f"line {number}", f"input is {too_large(total_limit)}")
        yield number, raw


def _skip_blank_lines(handle: BinaryIO) -> tuple[int, int]:
    """Consume the whole blank lines at the front of ``handle``'s buffer: ``(bytes, lines)`` consumed.

    A readline per blank line took 28 s for 20 MiB of newlines; this looks at
    the buffered bytes (``peek``) and reads past every blank line there at
    once. Only whole lines are consumed (up to the last newline of the white
    space), so the next line is read exactly as it stands.
    """
    peek = getattr(handle, "peek", None)
    skipped = lines = 0
    while peek is not None:
        buffered = peek(1 << 16)
        white = len(buffered) - len(buffered.lstrip())
        cut = buffered.rfind(b"\n", 0, white) + 1
        if cut == 0:
            break
        handle.read(cut)
        skipped += cut
        lines += buffered.count(b"\n", 0, cut)
        if cut < len(buffered):
            break  # something other than blank lines follows
    return skipped, lines


def iter_objects(handle: BinaryIO, path: object) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """``(line_number, "line N", object)`` for each non-blank line of a JSON-lines input.

    Each line is read with :func:`iter_lines`' bounds and parsed strictly; a
    line that is not one JSON object is one error naming the line.
    """
    for number, raw in iter_lines(handle, path):
        if not raw.strip():
            continue
        where = f"line {number}"
        data = parse_json(raw, path, where)
        if not isinstance(data, dict):
            raise located(path, where, f"expected a JSON object, got {type(data).__name__}")
        yield number, where, data


__all__ = [
    "DEFAULT_MAX_INPUT_BYTES",
    "MAX_INPUT_ENV",
    "MAX_JSON_DEPTH",
    "MAX_LINE_BYTES",
    "check_depth",
    "iter_lines",
    "iter_objects",
    "max_input_bytes",
    "open_input",
    "parse_json",
    "read_bounded",
    "read_json",
    "too_deep_at",
]
