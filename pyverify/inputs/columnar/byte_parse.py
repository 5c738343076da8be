"""Mooncake JSONL straight from its bytes, in one compiled pass: for big files, where pyarrow's parse dominates.

Measured on this project's 2-core machine, pyarrow's JSON reader took most of
``simulate``'s time on a Mooncake file (0.25-0.8 s for 5M references, 43
MiB), the line pre-scan and the copies around it most of the rest. One loop
over the bytes (:func:`scan_mooncake`) pulls ``hash_ids``, ``timestamp``,
``input_length`` and ``output_length`` into flat arrays instead. It accepts
only a narrow, plain form and *declines* (returns ``None``) on anything else,
and the reader then takes its usual path (pyarrow, else the strict reader,
with its one-line errors). So it never decides an error and never accepts a
line the strict reader refuses. The form it reads, line by line:

* the line starts with ``{`` and ends with ``}`` and a newline (the last line
  may lack the newline); no blank lines; between tokens only spaces;
* members ``"key": value`` with ``key`` one of the four above, each at most
  once, ``hash_ids`` always;
* ``hash_ids``: a non-empty list of integers; the others: an integer; every
  integer plain decimal digits, at most 18 (so below 2**63; no sign, no
  fraction or exponent, no leading zero); every value at most 2**53
  (float64 holds every integer up to it), timestamps never decreasing; no
  line longer than :data:`~pyverify.inputs.jsonread.MAX_LINE_BYTES`.

Importing numba and loading the cached kernel costs about 0.65 s here, more
than the pass saves on a small file, so :mod:`pyverify.inputs.columnar.jsonl`
uses it from :data:`~pyverify.inputs.columnar.compiled.MIN_BYTES` up (or when
numba is loaded already). Without numba it is never used.
"""

from __future__ import annotations

import numpy as np

from pyverify.inputs.columnar.compiled import kernel
from pyverify.threads import on_cores

#: The keys of the form read here, in the order of the flags below.
KEYS = (b"hash_ids", b"timestamp", b"input_length", b"output_length")
#: :func:`scan_mooncake`'s verdicts.
READ, DECLINED = 0, 1
#: At most this many digits per integer: 10**18 - 1 < 2**63, so no overflow.
MAX_DIGITS = 18
#: Timestamps past this are left to the strict reader (float64 holds every integer up to it).
MAX_TIMESTAMP = 2**53


#: Each key with its closing quote, as bytes the compiled loop compares (numba freezes global arrays as constants).
_HASH_IDS, _TIMESTAMP, _INPUT_LENGTH, _OUTPUT_LENGTH = (
    np.frombuffer(key + b'"', dtype=np.uint8) for key in KEYS
)


def _word_at(text, i, n, word):
    """Whether the bytes ``word`` stand at ``text[i]``."""
    if i + word.size > n:
        return False
    for k in range(word.size):
        if text[i + k] != word[k]:
            return False
    return True


def _key_at(text, i, n):
    """Which of :data:`KEYS` starts at ``text[i]`` (just after its opening quote) and its closing quote: ``(k, end)``, or ``(-1, 0)``."""
    if _word_at(text, i, n, _HASH_IDS):
        return 0, i + _HASH_IDS.size - 1
    if _word_at(text, i, n, _TIMESTAMP):
        return 1, i + _TIMESTAMP.size - 1
    if _word_at(text, i, n, _INPUT_LENGTH):
        return 2, i + _INPUT_LENGTH.size - 1
    if _word_at(text, i, n, _OUTPUT_LENGTH):
        return 3, i + _OUTPUT_LENGTH.size - 1
    return -1, 0


def _integer_at(text, i, n):
    """The plain decimal integer starting at ``text[i]`` and the index after it: ``(value, end)``, or ``(-1, 0)``."""
    if i >= n or text[i] < 48 or text[i] > 57:
        return -1, 0
    if text[i] == 48 and i + 1 < n and 48 <= text[i + 1] <= 57:  # a leading zero is not JSON
        return -1, 0
    value = 0
    j = i
    while j < n and 48 <= text[j] <= 57:
        if j - i >= MAX_DIGITS:
            return -1, 0
        value = value * 10 + (int(text[j]) - 48)
        j += 1
    if j < n and (
        text[j] == 46 or text[j] == 101 or text[j] == 69
    ):  # ".", "e", "E": not an integer literal
        return -1, 0
    return value, j


def _spaces(text, i, n):
    while i < n and text[i] == 32:
        i += 1
    return i


def scan_mooncake(text, ids, offsets, numbers, max_line):
    """``(verdict, requests, references, present)``: the file's bytes ``text`` (uint8) into ``ids``, ``offsets``
    and ``numbers`` (float64, one row per request: timestamp, input, output; NaN when missing), sized by the caller.

    ``present``: bit k set when some line gives key k+1 (timestamp, input_length, output_length).
    :data:`DECLINED` on anything outside the form in the module docstring."""
    n = text.size
    nan = np.nan
    request = 0
    filled = 0
    present = 0
    last_time = -1.0
    i = 0
    offsets[0] = 0
    while i < n:
        line_start = i
        if text[i] != 123 or request + 1 >= offsets.size:  # "{"
            return DECLINED, 0, 0, 0
        numbers[request, 0] = nan
        numbers[request, 1] = nan
        numbers[request, 2] = nan
        seen = 0
        i += 1
        while True:
            i = _spaces(text, i, n)
            if i >= n or text[i] != 34:  # a member starts with its key's quote
                return DECLINED, 0, 0, 0
            key, i = _key_at(text, i + 1, n)
            if key < 0 or seen & (1 << key):  # an unknown or a repeated key
                return DECLINED, 0, 0, 0
            seen |= 1 << key
            i = _spaces(text, i + 1, n)
            if i >= n or text[i] != 58:  # ":"
                return DECLINED, 0, 0, 0
            i = _spaces(text, i + 1, n)
            if key == 0:
                if i >= n or text[i] != 91:  # "["
                    return DECLINED, 0, 0, 0
                i += 1
                while True:
                    i = _spaces(text, i, n)
                    value, i = _integer_at(text, i, n)
                    if value < 0 or filled >= ids.size:
                        return DECLINED, 0, 0, 0
                    ids[filled] = value
                    filled += 1
                    i = _spaces(text, i, n)
                    if i < n and text[i] == 44:  # ","
                        i += 1
                    elif i < n and text[i] == 93:  # "]"
                        i += 1
                        break
                    else:
                        return DECLINED, 0, 0, 0
            else:
                value, i = _integer_at(text, i, n)
                if value < 0 or value > MAX_TIMESTAMP:  # float64 rounds past it: the strict reader
                    return DECLINED, 0, 0, 0
                if key == 1:
                    if (
                        value > MAX_TIMESTAMP or value < last_time
                    ):  # the strict reader names (or warns about) it
                        return DECLINED, 0, 0, 0
                    last_time = value
                numbers[request, key - 1] = value
                present |= 1 << (key - 1)
            i = _spaces(text, i, n)
            if i < n and text[i] == 44:
                i += 1
            elif i < n and text[i] == 125:  # "}", which must end the line
                i += 1
                break
            else:
                return DECLINED, 0, 0, 0
        if not seen & 1:  # no hash_ids
            return DECLINED, 0, 0, 0
        if i < n:
            if text[i] != 10:
                return DECLINED, 0, 0, 0
            i += 1
        if i - line_start > max_line:
            return DECLINED, 0, 0, 0
        request += 1
        offsets[request] = filled
    if request == 0:
        return DECLINED, 0, 0, 0
    return READ, request, filled, present


def count_separators(text):
    """``(newlines, commas, colons)`` in ``text`` (uint8): in the plain form a line of k ids and m members has
    k - 1 + m - 1 commas and m colons, so these give :func:`read_mooncake_bytes` the exact sizes."""
    newlines = 0
    commas = 0
    colons = 0
    for i in range(text.size):
        c = text[i]
        if c == 10:
            newlines += 1
        elif c == 44:
            commas += 1
        elif c == 58:
            colons += 1
    return newlines, commas, colons


_HELPERS = ("_word_at", "_key_at", "_integer_at", "_spaces")  # callees before their callers

#: From this many bytes the file is parsed in two halves (cut after a newline) on two threads: numba's
#: loop lets go of the GIL, and one pass over 172 MiB took 0.45 s here.
SPLIT_MIN_BYTES = 32 << 20


def _compiled_scanner():
    """:func:`scan_mooncake` compiled, or ``None`` without numba. Its helpers are compiled first and put in their
    module-level names, where numba looks them up: compiled code can call compiled functions only."""
    scope = globals()
    for name in _HELPERS:
        compiled = kernel(getattr(scope[name], "py_func", scope[name]))
        if compiled is None:
            return None
        scope[name] = compiled
    return kernel(scan_mooncake)


def _parts(data: bytes) -> list[np.ndarray]:
    """The bytes whole, or (from :data:`SPLIT_MIN_BYTES`) in two halves cut just after the first newline
    past the middle, each then a run of whole lines (views, not copies)."""
    text = np.frombuffer(data, dtype=np.uint8)
    if len(data) < max(SPLIT_MIN_BYTES, 2):
        return [text]
    cut = data.find(b"\n", len(data) // 2) + 1
    return [text] if cut <= 0 or cut >= len(data) else [text[:cut], text[cut:]]


def available() -> bool:
    """Whether the byte parser can run here (numba is installed): then a file it declines is outside its form."""
    return _compiled_scanner() is not None


def read_mooncake_bytes(data: bytes, max_line: int):
    """``(ids, offsets, timestamps, input_tokens, output_tokens)`` (a column is ``None`` when no line gives it),
    or ``None`` when the bytes are not in the plain form (or numba is not installed).

    Each part of the bytes (:func:`_parts`) is counted, then parsed straight into its own stretch of one
    array of ids, sized exactly from the counts; a part that reads other than its counts said, or
    timestamps that go back across the cut, decline as anything else outside the form does."""
    run = _compiled_scanner()
    if run is None or not data:
        return None
    parts = _parts(data)
    count = kernel(count_separators)

    def size_of(part: np.ndarray) -> tuple[int, int]:
        newlines, commas, colons = (
            int(v) for v in count(part)
        )  # compiled: no byte-sized temporaries
        lines = newlines + int(part[-1] != 10)
        return lines, commas - colons + 2 * lines

    sizes = on_cores(
        size_of, parts
    )  # the parts counted side by side, as they are parsed (at 20M: 0.13 s on one core)
    if any(lines < 1 or references < lines for lines, references in sizes):
        return None
    ids = np.empty(sum(references for _, references in sizes), dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum([references for _, references in sizes])))
    scratch = [
        (np.empty(lines + 1, dtype=np.int64), np.empty((lines, 3), dtype=np.float64))
        for lines, _ in sizes
    ]

    def scan(k: int):
        offsets, numbers = scratch[k]
        return tuple(
            int(v)
            for v in run(parts[k], ids[starts[k] : starts[k + 1]], offsets, numbers, max_line)
        )

    verdicts = on_cores(scan, range(len(parts)))
    if any(
        verdict != READ or (requests, references) != size
        for (verdict, requests, references, _), size in zip(verdicts, sizes)
    ):
        return None
    present = 0
    for *_, bits in verdicts:
        present |= bits
    offsets = np.concatenate(
        [scratch[0][0]] + [scratch[k][0][1:] + starts[k] for k in range(1, len(parts))]
    )
    numbers = (
        np.concatenate([numbers for _, numbers in scratch]) if len(parts) > 1 else scratch[0][1]
    )
    if present & 1 and len(parts) > 1:  # timestamps never decrease, across the cut too
        times = numbers[:, 0]
        given = times[~np.isnan(times)]
        if np.any(np.diff(given) < 0):
            return None
    columns = [
        np.ascontiguousarray(numbers[:, k]) if present & (1 << k) else None for k in range(3)
    ]
    return ids, offsets, *columns


__all__ = [
    "available",
    "DECLINED",
    "KEYS",
    "MAX_DIGITS",
    "MAX_TIMESTAMP",
    "READ",
    "SPLIT_MIN_BYTES",
    "count_separators",
    "read_mooncake_bytes",
    "scan_mooncake",
]
