"""Mooncake JSONL in the form ``json.dumps`` writes, parsed by numpy alone: no pyarrow, no numba, no Python per line.

The Mooncake traces (FAST'25, github.com/kvcache-ai/Mooncake) and the files
most tools write from them are one ``json.dumps`` record per line, every line
with the same keys in the same order, ``hash_ids`` last::

    {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}

Such a file is, byte for byte, an alternation of *digit runs* and a few fixed
*gaps*: the list separator ``", "`` between two ids, one gap per key between
members (``', "input_length": '``), the line boundary (``']}\\n{"timestamp": '``),
the file's head and tail. :func:`read_plain_mooncake` learns the gaps from the
first line (which must be exactly what ``json.dumps`` writes for it, with its
default separators or the compact ones, :data:`SEPARATORS`) and then proves
that the whole file is exactly that alternation, with vectorised passes over
the bytes: every digit run found at once, each gap compared with the one it
must be, eight bytes at a time, and the values read eight digits at a time
from 64-bit words (the SWAR step of simdjson: Langdale and Lemire, "Parsing
gigabytes of JSON per second", VLDB Journal 28, 2019). Since every byte of the
file is then accounted for, the strict reader (:mod:`pyverify.inputs.mooncake`)
would read exactly these values: integers of at most :data:`MAX_DIGITS` digits
without a leading zero, every line a non-empty ``hash_ids``. On anything else
(other spacing, a key order that changes, ``hash_ids`` not last, a float, a
sign, a string, a blank line, a carriage return, a line longer than the strict
reader allows) it *declines* (returns ``None``) and the caller's other paths
decide, with the strict reader's one-line errors; it never decides an error
itself.

Measured on this project's 2-core machine, a 5M-reference file (43 MiB): this
parse took 0.08 s on two cores (0.12 s on one) where the line pre-scan and
pyarrow's JSON reader took 0.21 s together, and pyarrow's import 0.02 s more."""

from __future__ import annotations

import json

import numpy as np

from pyverify.threads import cores, on_cores

#: The fields a plain line may hold; ``hash_ids`` always, and last.
FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")
#: At most this many digits per value: 10**15 - 1 < 2**53, so float64 holds every timestamp and length exactly,
#: and two 64-bit words read any id. Longer values: declined (the other paths read them, or name the line).
MAX_DIGITS = 15
#: The bytes (whole lines, so a little more) read as one piece: each piece is checked as a file of its own,
#: with every temporary a few hundred KiB that stays in the core's cache, and the pieces are shared among
#: the cores (numpy lets go of the GIL in the passes below).
PIECE_BYTES = 1 << 19

_COMMA, _SPACE = ord(","), ord(" ")
_LOW_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)
_PAIRS = np.uint64(0x00FF00FF00FF00FF)
_QUADS = np.uint64(0x0000FFFF0000FFFF)


def read_plain_mooncake(data: bytes, max_line: int):
    """``(ids, offsets, timestamps, input_tokens, output_tokens)`` as the other fast paths hold them (int64 ids
    and offsets, float64 columns, ``None`` for a field the lines do not have), or ``None`` when ``data`` is not
    in the plain form (see the module docstring) or has a line longer than ``max_line`` bytes."""
    template = _template(data)
    if template is None:
        return None
    text = np.frombuffer(data, dtype=np.uint8)
    pieces = _pieces(data)
    share = -(-len(pieces) // cores())
    groups = [pieces[k : k + share] for k in range(0, len(pieces), share)]
    read = on_cores(
        lambda group: [_read_piece(text, begin, end, template, max_line) for begin, end in group],
        groups,
    )
    parts = [part for group in read for part in group]
    if any(part is None for part in parts):
        return None
    ids = np.concatenate([part[0] for part in parts])
    per_line = np.concatenate([part[1] for part in parts])
    offsets = np.zeros(per_line.size + 1, dtype=np.int64)
    np.cumsum(per_line, out=offsets[1:])
    keys = template[0]
    values = (
        np.concatenate([part[2] for part in parts]).astype(np.float64) if len(keys) > 1 else None
    )
    columns = {key: np.ascontiguousarray(values[:, k]) for k, key in enumerate(keys[:-1])}
    return (
        ids,
        offsets,
        columns.get("timestamp"),
        columns.get("input_length"),
        columns.get("output_length"),
    )


#: The separators json.dumps may write (``item_separator``, ``key_separator``): its default, and the compact form
#: (pandas' ``to_json(lines=True)`` and most other writers) and the two mixed ones.
SEPARATORS = ((", ", ": "), (",", ":"), (", ", ":"), (",", ": "))


def _template(data: bytes):
    """``(keys, gaps, list separator)`` learned from the first line, or ``None``: the keys in their order, the
    byte strings the file must consist of between its digit runs (the head, each key's gap after the first,
    the line boundary from the last id of one line to the first value of the next, and the tail), and the
    separator between two ids. The first line must be what ``json.dumps`` writes for its own record with one
    of :data:`SEPARATORS`; whether every other line follows it is for :func:`read_plain_mooncake` to prove."""
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)]
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if (
        type(record) is not dict
        or not record
        or list(record)[-1] != "hash_ids"
        or not set(record) <= set(FIELDS)
    ):
        return None
    written = [
        separators
        for separators in SEPARATORS
        if json.dumps(record, separators=separators).encode() == first
    ]
    if not written:
        return None
    item, colon = written[0]
    keys = list(record)
    members = ['"' + key + '"' + colon + ("[" if key == "hash_ids" else "") for key in keys]
    head = "{" + members[0]
    between = [item + member for member in members[1:]]
    tail = "]}"
    return keys, [gap.encode() for gap in (head, *between, tail + "\n" + head, tail)], item.encode()


def _pieces(data: bytes) -> list[tuple[int, int]]:
    """The text cut into runs of whole lines of about :data:`PIECE_BYTES` each: ``(begin, end)`` byte ranges,
    each cut just after a newline (the last one at the end of the text)."""
    pieces, begin = [], 0
    while begin < len(data):
        cut = data.find(b"\n", begin + PIECE_BYTES - 1) + 1
        end = len(data) if cut <= 0 else cut
        pieces.append((begin, end))
        begin = end
    return pieces


def _read_piece(text: np.ndarray, begin: int, end: int, template, max_line: int):
    """``(ids, ids per line, values per line)`` of the lines in ``text[begin:end]``, or ``None`` unless they are
    exactly the template's lines: the piece is the head, a value, each key's gap and a value, ..., the ids
    separated by the template's list separator (``", "`` or ``","``), then the boundary and the next line, and at its end the tail and a newline (the
    text's last line may lack the newline)."""
    keys, gaps, separator = template
    head, key_gaps, boundary, tail = gaps[0], gaps[1:-2], gaps[-2], gaps[-1]
    piece = text[begin:end]
    starts, ends = _digit_runs(piece)
    if starts.size < len(keys):
        return None
    ending = piece[int(ends[-1]) :].tobytes()
    if piece[: int(starts[0])].tobytes() != head or ending not in (
        tail + b"\n",
        tail,
    ):  # without the newline: the text's end
        return None
    # Gap k lies between run k and run k + 1: the list separator, or one of the template's gaps (all longer).
    gap_starts, gap_lengths = ends[:-1], starts[1:] - ends[:-1]
    between_ids = (gap_lengths == len(separator)) & (piece.take(gap_starts) == _COMMA)
    if len(separator) == 2:
        between_ids &= piece.take(gap_starts + 1) == _SPACE
    structural = np.flatnonzero(~between_ids)
    period = len(key_gaps) + 1  # the key gaps, then the boundary
    if (structural.size + 1) % period:
        return None
    # Line by line: its values' gaps right after its first runs, one run apart (so no list separator hides
    # among the values), then the boundary. The last line has no boundary: a virtual one after its last run
    # keeps the table rectangular. A boundary comes after the line's last key gap (the gaps are ascending),
    # so each line has at least one id.
    table = np.append(structural, ends.size - 1).reshape(-1, period)
    line_starts = np.empty(table.shape[0] + 1, dtype=np.int64)
    line_starts[0] = 0
    line_starts[1:] = table[:, -1] + 1
    values_per_line = len(keys) - 1
    if values_per_line and not np.array_equal(
        table[:, :-1], line_starts[:-1, None] + np.arange(values_per_line)
    ):
        return None
    ids_per_line = np.diff(line_starts) - values_per_line
    words = _words(text)
    for column, gap in enumerate((*key_gaps, boundary)):
        places = np.ascontiguousarray(table[:, column] if column < period - 1 else table[:-1, -1])
        if places.size and not (
            np.all(gap_lengths.take(places) == len(gap))
            and _all_equal_to(text, words, begin + ends.take(places), gap)
        ):
            return None
    line_ends = (
        ends.take(line_starts[1:] - 1) + len(tail) + 1
    )  # one past each newline (or the text's end)
    line_ends[-1] = min(int(line_ends[-1]), piece.size)
    if int(np.diff(line_ends, prepend=0).max()) > max_line:
        return None
    values = _values(text, words, begin + starts, ends - starts)
    if values is None:
        return None
    value_runs = line_starts[:-1, None] + np.arange(values_per_line)
    keep = np.ones(values.size, dtype=bool)
    keep[value_runs.ravel()] = False
    return values[keep], ids_per_line, values.take(value_runs)


def _digit_runs(text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each maximal run of ASCII digits starts and ends (one past its last digit), ascending (int64)."""
    digit = np.empty(text.size + 2, dtype=bool)
    digit[0] = digit[-1] = False
    np.less(text - np.uint8(48), 10, out=digit[1:-1])  # "0".."9" (uint8 wraps below "0")
    edges = np.flatnonzero(digit[1:] != digit[:-1])
    return edges[0::2], edges[1::2]


def _words(text: np.ndarray) -> np.ndarray:
    """The text as overlapping little-endian 64-bit words, one starting at each byte but the last seven
    (a strided view, no copy): ``words[i]`` holds bytes ``i .. i+7``, byte ``i`` lowest."""
    return np.ndarray(shape=(max(text.size - 7, 0),), dtype="<u8", buffer=text, strides=(1,))


def _words_at(text: np.ndarray, words: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The 64-bit word at each position (int64), bytes past the end of the text read as zero."""
    if positions.size == 0 or positions[-1] < words.size:  # ascending: the last is the furthest
        return words[positions]
    inside = positions < words.size
    found = np.zeros(positions.size, dtype=np.uint64)
    found[inside] = words[positions[inside]]
    for k in np.flatnonzero(~inside):
        found[k] = int.from_bytes(text[positions[k] : positions[k] + 8].tobytes(), "little")
    return found


def _all_equal_to(text: np.ndarray, words: np.ndarray, positions: np.ndarray, gap: bytes) -> bool:
    """Whether the bytes at each position (ascending) begin with ``gap``, compared eight bytes at a time."""
    for offset in range(0, len(gap), 8):
        piece = gap[offset : offset + 8]
        mask = np.uint64((1 << (8 * len(piece))) - 1)
        expected = np.uint64(int.from_bytes(piece, "little"))
        if np.any((_words_at(text, words, positions + offset) & mask) != expected):
            return False
    return True


def _values(
    text: np.ndarray, words: np.ndarray, starts: np.ndarray, lengths: np.ndarray
) -> np.ndarray | None:
    """Each run's value (int64), or ``None`` when one has a leading zero or more than :data:`MAX_DIGITS` digits.

    Eight digits at a time: the run's first eight bytes as a little-endian word (first digit lowest), shifted
    up so the run's last digit is the top byte and zeros (leading "0"s) fill below, then three multiply-adds
    combine digit pairs, quads and halves (SWAR). A longer run is its first ``length - 8`` digits times 10**8
    plus its last eight."""
    longest = int(lengths.max())
    if longest > MAX_DIGITS:
        return None
    word = _words_at(text, words, starts)
    if np.any(
        ((word & np.uint64(0xFF)) == np.uint64(ord("0"))) & (lengths > 1)
    ):  # a leading zero: not JSON
        return None
    if longest <= 8:
        return _eight_digits(word, lengths).view(np.int64)
    long_runs = np.flatnonzero(lengths > 8)
    high = lengths.copy()
    high[long_runs] -= 8
    values = _eight_digits(word, high)
    low = _eight_digits(
        _words_at(text, words, starts[long_runs] + high[long_runs]), np.full(long_runs.size, 8)
    )
    values[long_runs] = values[long_runs] * np.uint64(10**8) + low
    return values.view(np.int64)


def _eight_digits(word: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The value of each word's first ``length`` (1..8) bytes, ASCII digits, computed in place (uint64)."""
    word <<= ((8 - lengths) * 8).astype(np.uint64)
    word &= _LOW_NIBBLES
    word *= np.uint64(10 * 256 + 1)
    word >>= np.uint64(8)
    word &= _PAIRS
    word *= np.uint64(100 * 65536 + 1)
    word >>= np.uint64(16)
    word &= _QUADS
    word *= np.uint64(10000 * 2**32 + 1)
    word >>= np.uint64(32)
    return word


__all__ = ["FIELDS", "MAX_DIGITS", "PIECE_BYTES", "SEPARATORS", "read_plain_mooncake"]
