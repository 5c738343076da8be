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
  with a line ``{`` that is not a whole JSON value).

Reading the head is bounded like every other read: at most
:data:`~pyverify.inputs.jsonread.MAX_LINE_BYTES` (plus one byte) of blank lines
and of the first line; a longer line is kept cut off, not parsed, and left for
the chosen reader to read in full or report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyverify.errors import UserError, located
from pyverify.inputs.jsonread import MAX_LINE_BYTES, parse_json
from pyverify.inputs.stream import Input

#: How many leading bytes detectors may see as ``first_bytes``.
MAGIC_BYTES = 8


@dataclass(frozen=True)
class Head:
    """The start of an input, for format detectors."""

    first_bytes: bytes
    first_line: bytes | None  # the first non-blank line (its first MAX_LINE_BYTES + 1 bytes), None if there is none
    line_number: int  # of first_line (1-based); 0 when there is none
    first_object: dict[str, Any] | None  # first_line as a JSON object, when it is exactly one
    blank: bool  # nothing but white space was read (an empty input)

    def has_any(self, *keys: str) -> bool:
        return self.first_object is not None and any(key in self.first_object for key in keys)


def read_head(source: Input) -> Head:
    """Read the start of ``source`` (see the module docstring) and put it back."""
    consumed: list[bytes] = []
    size = 0
    first_line: bytes | None = None
    number = 0
    while size <= MAX_LINE_BYTES:
        try:
            raw = source.handle.readline(MAX_LINE_BYTES + 1)
        except OSError as error:
            raise located(source.display, f"line {number + 1}", f"cannot read: {error.strerror or error}") from None
        if not raw:
            break
        consumed.append(raw)
        size += len(raw)
        number += 1
        if raw.strip():
            first_line = raw
            break
    head = b"".join(consumed)
    source.replay(head)
    return Head(head[:MAGIC_BYTES], first_line, number if first_line is not None else 0, _as_object(first_line),
                blank=not head.strip())


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
