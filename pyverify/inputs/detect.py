"""Look at the start of an input to tell its format, by content, never by file name.

:func:`read_head` reads the first bytes and the first non-blank line of an
opened input (:class:`~pyverify.inputs.stream.Input`), then puts them back, so
the reader chosen afterwards sees the whole input from its first byte (and
reports the same line numbers). The formats' detectors, in
:mod:`pyverify.inputs.load`, look only at the :class:`Head`:

* ``first_bytes``: magic numbers (a binary format such as Parquet starts with
  ``PAR1``);
* ``first_object``: the first non-blank line parsed as one JSON object, when it
  is one. A JSONL record names its format by its fields (``hash_ids``,
  ``prompt_token_ids``, ``messages``); a pyverify instance written on one line
  by ``trace import`` carries ``"format"``;
* ``first_line``: the raw line otherwise (a pretty-printed instance starts
  with a line ``{`` that is not a whole JSON value). A UTF-8 byte order mark
  at the start of the input is not part of it.

Reading the head is bounded like every other read: at most
:data:`~pyverify.inputs.jsonread.MAX_LINE_BYTES` of blank lines (more is one
line of error) and the first line's first ``MAX_LINE_BYTES + 1`` bytes; a
longer line is kept cut off, not parsed, and left for the chosen reader to
read in full or report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyverify.errors import UserError, located
from pyverify.inputs.jsonread import MAX_LINE_BYTES, parse_json
from pyverify.inputs.stream import Input

#: The UTF-8 byte order mark some editors write at the start of a text file (RFC 8259 lets a parser ignore it).
UTF8_BOM = b"\xef\xbb\xbf"

#: How many leading bytes detectors may see as ``first_bytes``.
MAGIC_BYTES = 8


@dataclass(frozen=True)
class Head:
    """The start of an input, for format detectors."""

    first_bytes: bytes
    first_line: (
        bytes | None
    )  # the first non-blank line (its first MAX_LINE_BYTES + 1 bytes), None if there is none
    line_number: int  # of first_line (1-based); 0 when there is none
    first_object: dict[str, Any] | None  # first_line as a JSON object, when it is exactly one
    blank: bool  # nothing but white space was read (an empty input)

    def has_any(self, *keys: str) -> bool:
        return self.first_object is not None and any(key in self.first_object for key in keys)


NEWLINE = b"\n"

#: Bytes per read of :func:`read_head`.
HEAD_STEP = 1 << 20


def read_head(source: Input) -> Head:
    """Read the start of ``source`` (see the module docstring) and put it back.

    Reads in steps of :data:`HEAD_STEP` bytes into one buffer (a list of
    blank lines cost about 90 bytes a line; a readline per blank line took
    a minute for 64 MiB of them), until the first non-blank line is whole.
    """
    head = bytearray()
    start = None  # offset of the first byte that is not white space
    while True:
        if start is None and len(head) > MAX_LINE_BYTES:
            raise located(
                source.display,
                f"line {head.count(NEWLINE) + 1}",
                f"more than {MAX_LINE_BYTES} bytes of blank lines before the first record: not an input pyverify reads",
            )
        if start is not None:
            line_start = head.rfind(b"\n", 0, start) + 1
            if head.find(b"\n", start) >= 0 or len(head) - line_start > MAX_LINE_BYTES:
                break
        try:
            piece = source.handle.read(HEAD_STEP)
        except OSError as error:
            raise located(source.display, None, f"cannot read: {error.strerror or error}") from None
        if not piece:
            break
        if start is None:
            skip = (
                len(UTF8_BOM) if not head and piece.startswith(UTF8_BOM) else 0
            )  # a BOM opens the text, not a record
            blank = len(piece) - len(piece[skip:].lstrip())
            if blank < len(piece):
                start = len(head) + blank
        head += piece
    data = bytes(head)
    source.replay(data)
    if start is None:
        return Head(data[:MAGIC_BYTES], None, 0, None, blank=True)
    line_start = max(
        data.rfind(b"\n", 0, start) + 1, len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    )
    end = data.find(b"\n", start)
    first_line = data[line_start : end + 1 if end >= 0 else len(data)][: MAX_LINE_BYTES + 1]
    return Head(
        data[:MAGIC_BYTES],
        first_line,
        data.count(b"\n", 0, line_start) + 1,
        _as_object(first_line),
        blank=False,
    )


def _as_object(line: bytes | None) -> dict[str, Any] | None:
    if line is None or len(line) > MAX_LINE_BYTES:
        # Cut off mid-line: not a whole value. (A pyverify instance written on
        # one line can be this long; its leading "{" still tells it.)
        return None
    try:
        value = parse_json(line, "<head>")
    except UserError:
        return None
    return value if isinstance(value, dict) else None


__all__ = ["Head", "MAGIC_BYTES", "read_head"]
