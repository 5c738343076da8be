"""Mooncake JSONL straight from its bytes, in one compiled pass: the fast reader of every form people write.

Measured on this project's 2-core machine, pyarrow's JSON reader took most of
``simulate``'s time on a Mooncake file (0.25-0.8 s for 5M references, 43
MiB), the line pre-scan and the copies around it most of the rest. One loop
over the bytes (:func:`scan_mooncake`) pulls ``hash_ids``, ``timestamp``,
``input_length`` and ``output_length`` into flat arrays instead. It reads
Mooncake JSONL as tools write it, not one byte form: ``json.dumps``' own lines,
compact ones, keys in any order, any JSON whitespace, extra fields. Whatever it
cannot prove the strict reader (:mod:`pyverify.inputs.mooncake`,
:mod:`pyverify.inputs.jsonread`) reads the same, it *declines* (returns
``None``), and the strict reader reads the file, with its one-line errors. So
it never decides an error and never accepts a line the strict reader refuses.
The form it reads, line by line (a line ends at a newline, as the strict
reader reads lines):

* a line holding only spaces, tabs and carriage returns is blank (skipped, as
  the strict reader skips it); any other line is one JSON object, with JSON
  whitespace (space, tab, carriage return) anywhere between tokens and an
  optional UTF-8 byte order mark first (the strict reader drops it);
* ``hash_ids``, always: a non-empty list of integers;
* ``timestamp``: a number (an integer, or a decimal or exponent form whose value
  float64 holds from at most 15 significant digits and a power of ten up to
  10**22: then one IEEE multiply or divide gives exactly what Python's
  ``float`` gives, Clinger's fast path), or ``null`` (absent);
* ``input_length``, ``output_length``: an integer, or ``null`` (absent);
* every integer read: plain decimal digits, at most :data:`MAX_DIGITS` (no sign,
  no leading zero); every value at most 2**53 (float64 holds every integer up
  to it), timestamps never decreasing; each key at most once;
* any other key (``block_size`` and ``block_tokens`` excepted: they change how
  the whole trace is read, so the strict reader reads such a file) is skipped
  with its value, which is checked to be JSON as the strict reader's ``json``
  parses it: strings with their escapes (no ``\\u`` escape of a UTF-16
  surrogate, no control character, valid UTF-8), numbers (no ``NaN`` or
  ``Infinity``; none that a float64 would overflow), ``true``, ``false``,
  ``null``, arrays and objects nested at most :data:`MAX_NESTING` deep, with no
  key twice in one object (nor any key spelled with an escape, which could
  repeat another), and at most :data:`MAX_KEYS` keys open at once;
* no line longer than :data:`~pyverify.inputs.jsonread.MAX_LINE_BYTES`.

Importing numba and loading the cached kernel costs about 0.65 s here, more
than the pass saves on a small file, so :mod:`pyverify.inputs.columnar.jsonl`
uses it from :data:`~pyverify.inputs.columnar.compiled.MIN_BYTES` up (or when
numba is loaded already). Without numba it is never used.
"""

from __future__ import annotations

import ctypes

import numpy as np

from pyverify.inputs.columnar.compiled import kernel
from pyverify.threads import on_cores

#: The keys read here, in the order :func:`scan_mooncake` numbers them.
KEYS = (b"hash_ids", b"timestamp", b"input_length", b"output_length")
#: kvcache-simulator's keys, which change how the whole trace is read (``mooncake.SIZE_FIELDS``): declined.
SIZE_KEYS = (b"block_size", b"block_tokens")
#: :func:`scan_mooncake`'s verdicts.
READ, DECLINED = 0, 1
#: At most this many digits per integer: 10**18 - 1 < 2**63, so no overflow.
MAX_DIGITS = 18
#: Values past this are left to the strict reader (float64 holds every integer up to it).
MAX_VALUE = 2**53
#: Deepest nesting of a skipped value (the strict reader allows 100 levels in all; deeper: declined).
MAX_NESTING = 32
#: Most keys held at once for the duplicate check: a line's extra keys and those of the objects open in a value.
MAX_KEYS = 256
#: Significant digits of a decimal timestamp read exactly (10**15 < 2**53).
MAX_DECIMAL_DIGITS = 15

#: What :func:`_key_of` says of a key that is none of :data:`KEYS`.
OTHER_KEY, REFUSED_KEY = -1, -2

#: Each key's bytes, as arrays the compiled loop compares (numba freezes global arrays as constants).
_HASH_IDS, _TIMESTAMP, _INPUT_LENGTH, _OUTPUT_LENGTH = (
    np.frombuffer(key, dtype=np.uint8) for key in KEYS
)
_BLOCK_SIZE, _BLOCK_TOKENS = (np.frombuffer(key, dtype=np.uint8) for key in SIZE_KEYS)
_TRUE, _FALSE, _NULL = (
    np.frombuffer(word, dtype=np.uint8) for word in (b"true", b"false", b"null")
)
#: UTF-8's byte order mark, which the strict reader drops from the start of a line.
_BYTE_ORDER_MARK = np.frombuffer("\ufeff".encode(), dtype=np.uint8)
#: 10**k for k = 0..22, each exact in float64 (converted from the integer, not computed in floating point).
_POWERS_OF_TEN = np.array([float(10**k) for k in range(23)], dtype=np.float64)

# Bytes the loops test (numba compares integers).
_TAB, _LF, _CR, _SPACE, _QUOTE, _PLUS, _COMMA, _MINUS, _DOT = 9, 10, 13, 32, 34, 43, 44, 45, 46
_ZERO, _NINE, _COLON, _LOWER_E, _UPPER_E, _BACKSLASH = 48, 57, 58, 101, 69, 92
_OPEN_LIST, _CLOSE_LIST, _OPEN_OBJECT, _CLOSE_OBJECT = 91, 93, 123, 125


def _word_at(text, i, n, word):
    """Whether the bytes ``word`` stand at ``text[i]``."""
    if i + word.size > n:
        return False
    for k in range(word.size):
        if text[i + k] != word[k]:
            return False
    return True


def _blank(text, i, n):
    """The index of the first byte from ``i`` on that is not JSON whitespace within a line."""
    while i < n and (text[i] == _SPACE or text[i] == _TAB or text[i] == _CR):
        i += 1
    return i


def _is_digit(c):
    return _ZERO <= c <= _NINE


def _hex_value(c):
    """The value of one hexadecimal digit, or -1."""
    if _ZERO <= c <= _NINE:
        return c - _ZERO
    if 97 <= c <= 102:  # a-f
        return c - 87
    if 65 <= c <= 70:  # A-F
        return c - 55
    return -1


def _continuations(text, i, n, count):
    """Whether ``count`` UTF-8 continuation bytes (10xxxxxx) stand at ``text[i]``."""
    if i + count > n:
        return False
    for k in range(count):
        if text[i + k] < 0x80 or text[i + k] > 0xBF:
            return False
    return True


def _string_end(text, i, n):
    """``(end, escaped)`` of the string whose opening quote is just before ``text[i]``: the index of its closing
    quote and whether it holds an escape; ``end`` is -1 for anything ``json`` would refuse or the strict reader
    might (a control character, an unknown escape, a surrogate escape, bytes that are not UTF-8)."""
    escaped = False
    while i < n:
        c = text[i]
        if c == _QUOTE:
            return i, escaped
        if c < 0x20:  # a control character (a newline too): not allowed raw in a JSON string
            return -1, escaped
        if c == _BACKSLASH:
            escaped = True
            if i + 1 >= n:
                return -1, escaped
            e = text[i + 1]
            if e == 117:  # "u" and four hexadecimal digits
                if i + 5 >= n:
                    return -1, escaped
                code = 0
                for k in range(2, 6):
                    digit = _hex_value(text[i + k])
                    if digit < 0:
                        return -1, escaped
                    code = code * 16 + digit
                if (
                    0xD800 <= code <= 0xDFFF
                ):  # half of a UTF-16 pair, or a lone one: the strict reader decides
                    return -1, escaped
                i += 6
            elif (
                e == _QUOTE or e == _BACKSLASH or e == 47 or e == 98 or e == 102
            ):  # '"', "\\", "/", "b", "f"
                i += 2
            elif e == 110 or e == 114 or e == 116:  # "n", "r", "t"
                i += 2
            else:
                return -1, escaped
        elif c < 0x80:
            i += 1
        elif (
            0xC2 <= c <= 0xDF
        ):  # UTF-8 as Python decodes it: no overlong form, no surrogate, up to U+10FFFF
            if not _continuations(text, i + 1, n, 1):
                return -1, escaped
            i += 2
        elif 0xE0 <= c <= 0xEF:
            if not _continuations(text, i + 1, n, 2):
                return -1, escaped
            if (c == 0xE0 and text[i + 1] < 0xA0) or (c == 0xED and text[i + 1] > 0x9F):
                return -1, escaped
            i += 3
        elif 0xF0 <= c <= 0xF4:
            if not _continuations(text, i + 1, n, 3):
                return -1, escaped
            if (c == 0xF0 and text[i + 1] < 0x90) or (c == 0xF4 and text[i + 1] > 0x8F):
                return -1, escaped
            i += 4
        else:
            return -1, escaped
    return -1, escaped


def _number_end(text, i, n):
    """The index just past the JSON number at ``text[i]``, or -1: not a number, or one the strict reader might
    refuse (an integer of more digits than Python converts by default, a float that overflows float64)."""
    j = i
    if j < n and text[j] == _MINUS:
        j += 1
    digits_start = j
    if j < n and text[j] == _ZERO:
        j += 1
    elif j < n and 49 <= text[j] <= _NINE:
        while j < n and _is_digit(text[j]):
            j += 1
    else:
        return -1
    integer_digits = j - digits_start
    is_float = False
    if j < n and text[j] == _DOT:
        is_float = True
        j += 1
        if j >= n or not _is_digit(text[j]):
            return -1
        while j < n and _is_digit(text[j]):
            j += 1
    exponent = 0
    if j < n and (text[j] == _LOWER_E or text[j] == _UPPER_E):
        is_float = True
        j += 1
        sign = 1
        if j < n and (text[j] == _PLUS or text[j] == _MINUS):
            sign = -1 if text[j] == _MINUS else 1
            j += 1
        exponent_start = j
        while j < n and _is_digit(text[j]):
            if j - exponent_start >= 4:
                return -1
            exponent = exponent * 10 + (text[j] - _ZERO)
            j += 1
        if j == exponent_start:
            return -1
        exponent *= sign
    # Below 10**(integer digits + exponent) <= 10**300 < float64's largest: float() gives a finite value.
    if is_float and integer_digits + exponent > 300:
        return -1
    if (
        integer_digits > 600
    ):  # Python's int() converts at most 640 digits under the strictest setting
        return -1
    return j


def _integer_at(text, i, n):
    """The plain decimal integer at ``text[i]`` and the index after it: ``(value, end)``, or ``(-1, 0)`` (a sign,
    a leading zero, a fraction or exponent, more than :data:`MAX_DIGITS` digits)."""
    if i >= n or not _is_digit(text[i]):
        return -1, 0
    if text[i] == _ZERO and i + 1 < n and _is_digit(text[i + 1]):  # a leading zero is not JSON
        return -1, 0
    value = 0
    j = i
    while j < n and _is_digit(text[j]):
        if j - i >= MAX_DIGITS:
            return -1, 0
        value = value * 10 + (text[j] - _ZERO)
        j += 1
    if j < n and (text[j] == _DOT or text[j] == _LOWER_E or text[j] == _UPPER_E):
        return -1, 0
    return value, j


def _timestamp_at(text, i, n):
    """The number at ``text[i]`` as float64 exactly as Python's ``float`` reads it, and the index after it:
    ``(value, end)``, or ``(-1.0, 0)`` for what is not read here (see the module docstring)."""
    value, j = _integer_at(text, i, n)
    if value > MAX_VALUE:  # as float64 it would round down into range: the strict reader decides
        return -1.0, 0
    if value >= 0:
        return float(value), j
    # A decimal or exponent form: its significant digits as one integer m, and a power of ten.
    if (
        i >= n
        or not _is_digit(text[i])
        or (text[i] == _ZERO and i + 1 < n and _is_digit(text[i + 1]))
    ):
        return -1.0, 0
    mantissa = 0
    significant = 0
    scale = 0
    j = i
    while j < n and _is_digit(text[j]):
        if mantissa > 0 or text[j] != _ZERO:
            significant += 1
        mantissa = mantissa * 10 + (text[j] - _ZERO)
        if significant > MAX_DECIMAL_DIGITS:
            return -1.0, 0
        j += 1
    if j < n and text[j] == _DOT:
        j += 1
        if j >= n or not _is_digit(text[j]):
            return -1.0, 0
        while j < n and _is_digit(text[j]):
            if mantissa > 0 or text[j] != _ZERO:
                significant += 1
            mantissa = mantissa * 10 + (text[j] - _ZERO)
            if significant > MAX_DECIMAL_DIGITS:
                return -1.0, 0
            scale -= 1
            j += 1
    if j < n and (text[j] == _LOWER_E or text[j] == _UPPER_E):
        j += 1
        sign = 1
        if j < n and (text[j] == _PLUS or text[j] == _MINUS):
            sign = -1 if text[j] == _MINUS else 1
            j += 1
        exponent_start = j
        exponent = 0
        while j < n and _is_digit(text[j]):
            if j - exponent_start >= 3:
                return -1.0, 0
            exponent = exponent * 10 + (text[j] - _ZERO)
            j += 1
        if j == exponent_start:
            return -1.0, 0
        scale += sign * exponent
    if scale > 22 or scale < -22:
        return -1.0, 0
    # m < 10**15 and 10**|scale| are exact in float64, so one correctly rounded operation gives the value
    # nearest the decimal, which is what float() gives.
    if scale >= 0:
        return float(mantissa) * _POWERS_OF_TEN[scale], j
    return float(mantissa) / _POWERS_OF_TEN[-scale], j


def _key_of(text, start, end, escaped):
    """Which of :data:`KEYS` the key ``text[start:end]`` is (0..3); :data:`OTHER_KEY` for one to skip;
    :data:`REFUSED_KEY` for one of :data:`SIZE_KEYS` or one spelled with an escape (it might be any key)."""
    if escaped:
        return REFUSED_KEY
    length = end - start
    if length == _HASH_IDS.size and _word_at(text, start, end, _HASH_IDS):
        return 0
    if length == _TIMESTAMP.size and _word_at(text, start, end, _TIMESTAMP):
        return 1
    if length == _INPUT_LENGTH.size and _word_at(text, start, end, _INPUT_LENGTH):
        return 2
    if length == _OUTPUT_LENGTH.size and _word_at(text, start, end, _OUTPUT_LENGTH):
        return 3
    if length == _BLOCK_SIZE.size and _word_at(text, start, end, _BLOCK_SIZE):
        return REFUSED_KEY
    if length == _BLOCK_TOKENS.size and _word_at(text, start, end, _BLOCK_TOKENS):
        return REFUSED_KEY
    return OTHER_KEY


def _new_key(text, start, end, key_starts, key_ends, first, used):
    """Record the key ``text[start:end]`` (no escape in it) among the ``used`` held, checking it against those of
    its own object (held from ``first`` on): the new count, or -1 for a repeated key or too many held."""
    if used >= key_starts.size:
        return -1
    length = end - start
    for k in range(first, used):
        if key_ends[k] - key_starts[k] == length:
            same = True
            for b in range(length):
                if text[key_starts[k] + b] != text[start + b]:
                    same = False
                    break
            if same:
                return -1
    key_starts[used] = start
    key_ends[used] = end
    return used + 1


#: :func:`_skip_value`'s states: what it expects next.
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _AFTER = 0, 1, 2, 3, 4


def _skip_value(text, i, n, key_starts, key_ends, used, open_first):
    """The index just past the JSON value at ``text[i]`` (after whitespace), or -1 for anything the strict reader
    might read otherwise (see the module docstring). ``open_first[d]``: for the object open at depth ``d``, where
    its keys begin among those held (``used`` of them on entry); -1 for an array."""
    depth = 0
    state = _VALUE
    while True:
        if state == _AFTER and depth == 0:
            return i
        i = _blank(text, i, n)
        if i >= n:
            return -1
        c = text[i]
        if state == _VALUE_OR_CLOSE:
            if c == _CLOSE_LIST:
                depth -= 1
                i += 1
                state = _AFTER
                continue
            state = _VALUE
        if state == _KEY_OR_CLOSE:
            if c == _CLOSE_OBJECT:
                depth -= 1
                used = open_first[depth]
                i += 1
                state = _AFTER
                continue
            state = _KEY
        if state == _VALUE:
            if c == _OPEN_OBJECT or c == _OPEN_LIST:
                if depth >= open_first.size:
                    return -1
                open_first[depth] = used if c == _OPEN_OBJECT else -1
                depth += 1
                i += 1
                state = _KEY_OR_CLOSE if c == _OPEN_OBJECT else _VALUE_OR_CLOSE
                continue
            if c == _QUOTE:
                end, _ = _string_end(text, i + 1, n)
                if end < 0:
                    return -1
                i = end + 1
            elif c == _MINUS or _is_digit(c):
                i = _number_end(text, i, n)
                if i < 0:
                    return -1
            elif _word_at(text, i, n, _TRUE):
                i += 4
            elif _word_at(text, i, n, _FALSE):
                i += 5
            elif _word_at(text, i, n, _NULL):
                i += 4
            else:
                return -1
            state = _AFTER
        elif state == _KEY:
            if c != _QUOTE:
                return -1
            end, escaped = _string_end(text, i + 1, n)
            if end < 0 or escaped:
                return -1
            used = _new_key(text, i + 1, end, key_starts, key_ends, open_first[depth - 1], used)
            if used < 0:
                return -1
            i = _blank(text, end + 1, n)
            if i >= n or text[i] != _COLON:
                return -1
            i += 1
            state = _VALUE
        else:  # _AFTER, inside an array or an object
            in_object = open_first[depth - 1] >= 0
            if c == _COMMA:
                i += 1
                state = _KEY if in_object else _VALUE
            elif (c == _CLOSE_OBJECT and in_object) or (c == _CLOSE_LIST and not in_object):
                depth -= 1
                if in_object:
                    used = open_first[depth]
                i += 1
            else:
                return -1


def scan_mooncake(text, ids, offsets, numbers, max_line):
    """``(verdict, requests, references, present)``: the file's bytes ``text`` (uint8) into ``ids``, ``offsets``
    and ``numbers`` (float64, one row per request: timestamp, input, output; NaN when missing), each at least as
    large as the caller's bounds (:func:`count_bounds`).

    ``present``: bit k set when some line gives key k+1 (timestamp, input_length, output_length).
    :data:`DECLINED` on anything outside the form in the module docstring. A part of a file may hold no
    record (blank lines only): the caller declines a file without any."""
    n = text.size
    nan = np.nan
    key_starts = np.empty(MAX_KEYS, dtype=np.int64)
    key_ends = np.empty(MAX_KEYS, dtype=np.int64)
    open_first = np.empty(MAX_NESTING, dtype=np.int64)
    request = 0
    filled = 0
    present = 0
    last_time = -1.0
    i = 0
    offsets[0] = 0
    while i < n:
        line_start = i
        i = _blank(text, i, n)
        if i >= n or text[i] == _LF:  # a blank line: no record, but its length counts as any line's
            i += 1
            if min(i, n) - line_start > max_line:
                return DECLINED, 0, 0, 0
            continue
        i = line_start
        if _word_at(text, i, n, _BYTE_ORDER_MARK):  # the strict reader drops it from a line's start
            i = _blank(text, i + 3, n)
        if i >= n or text[i] != _OPEN_OBJECT or request + 1 >= offsets.size:
            return DECLINED, 0, 0, 0
        numbers[request, 0] = nan
        numbers[request, 1] = nan
        numbers[request, 2] = nan
        seen = 0
        used = 0  # the line's extra keys held, for the duplicate check
        i += 1
        while True:
            i = _blank(text, i, n)
            if i >= n or text[i] != _QUOTE:  # a member starts with its key's quote
                return DECLINED, 0, 0, 0
            end, escaped = _string_end(text, i + 1, n)
            if end < 0:
                return DECLINED, 0, 0, 0
            key = _key_of(text, i + 1, end, escaped)
            if key == REFUSED_KEY:
                return DECLINED, 0, 0, 0
            if key == OTHER_KEY:
                used = _new_key(text, i + 1, end, key_starts, key_ends, 0, used)
                if used < 0:
                    return DECLINED, 0, 0, 0
            elif seen & (1 << key):  # a repeated key
                return DECLINED, 0, 0, 0
            else:
                seen |= 1 << key
            i = _blank(text, end + 1, n)
            if i >= n or text[i] != _COLON:
                return DECLINED, 0, 0, 0
            i = _blank(text, i + 1, n)
            if key == OTHER_KEY:
                i = _skip_value(text, i, n, key_starts, key_ends, used, open_first)
                if i < 0:
                    return DECLINED, 0, 0, 0
            elif key == 0:
                if i >= n or text[i] != _OPEN_LIST:
                    return DECLINED, 0, 0, 0
                i += 1
                while True:
                    i = _blank(text, i, n)
                    # The id's digits read here rather than by _integer_at: this loop reads nearly every
                    # byte of a Mooncake file. Past MAX_DIGITS the value may wrap; it is declined then.
                    start = i
                    value = 0
                    while i < n and _ZERO <= text[i] <= _NINE:
                        value = value * 10 + (text[i] - _ZERO)
                        i += 1
                    digits = i - start
                    if (
                        digits == 0
                        or digits > MAX_DIGITS
                        or (text[start] == _ZERO and digits > 1)  # a leading zero is not JSON
                        or filled >= ids.size
                    ):
                        return DECLINED, 0, 0, 0
                    ids[filled] = value
                    filled += 1
                    if i < n and text[i] == _COMMA:  # the common case: no space before the comma
                        i += 1
                        continue
                    i = _blank(text, i, n)
                    if i < n and text[i] == _COMMA:
                        i += 1
                    elif i < n and text[i] == _CLOSE_LIST:
                        i += 1
                        break
                    else:  # a fraction or exponent ("." "e" "E") among them: not an integer
                        return DECLINED, 0, 0, 0
            elif _word_at(text, i, n, _NULL):  # null: the strict reader takes the field as absent
                i += 4
            else:
                if key == 1:
                    value, i = _timestamp_at(text, i, n)
                else:
                    whole, i = _integer_at(text, i, n)
                    # Compared before the conversion: float64 rounds 2**53 + 1 down to 2**53.
                    value = float(whole) if whole <= MAX_VALUE else -1.0
                if value < 0 or value > MAX_VALUE:  # the strict reader names it
                    return DECLINED, 0, 0, 0
                if key == 1:
                    if value < last_time:  # the strict reader names (or warns about) it
                        return DECLINED, 0, 0, 0
                    last_time = value
                numbers[request, key - 1] = value
                present |= 1 << (key - 1)
            i = _blank(text, i, n)
            if i < n and text[i] == _COMMA:
                i += 1
            elif i < n and text[i] == _CLOSE_OBJECT:  # the object's end, which must end the line
                i += 1
                break
            else:
                return DECLINED, 0, 0, 0
        if not seen & 1:  # no hash_ids
            return DECLINED, 0, 0, 0
        i = _blank(text, i, n)
        if i < n:
            if text[i] != _LF:
                return DECLINED, 0, 0, 0
            i += 1
        if i - line_start > max_line:
            return DECLINED, 0, 0, 0
        request += 1
        offsets[request] = filled
    return READ, request, filled, present


def count_bounds(text):
    """``(lines, ids)``: bounds on the records and the block ids in ``text`` (uint8), sized for
    :func:`scan_mooncake`. Every line is at most one record; every id of a list is followed (after
    whitespace) by its own ``,`` or ``]``, so those bytes bound the ids. One branch-free pass, which the
    compiler vectorises (a tighter count, of the digit runs after ``[`` or ``,``, carries state from byte
    to byte and took six times as long)."""
    lines = 1
    ids = 0
    for i in range(text.size):
        c = text[i]
        if c == _LF:
            lines += 1
        elif c == _COMMA or c == _CLOSE_LIST:
            ids += 1
    return lines, ids


#: Compiled before their callers (compiled code can call compiled functions only), callees first.
_HELPERS = (
    "_word_at",
    "_blank",
    "_is_digit",
    "_hex_value",
    "_continuations",
    "_string_end",
    "_number_end",
    "_integer_at",
    "_timestamp_at",
    "_key_of",
    "_new_key",
    "_skip_value",
)

#: From this many bytes the file is parsed in two halves (cut after a newline) on two threads: numba's
#: loop lets go of the GIL, and one pass over 172 MiB took 0.45 s here.
SPLIT_MIN_BYTES = 32 << 20


def _compiled(function):
    """``function`` compiled, or ``None`` without numba. Its helpers are compiled first and put in their
    module-level names, where numba looks them up: compiled code can call compiled functions only."""
    scope = globals()
    for name in _HELPERS:
        compiled = kernel(getattr(scope[name], "py_func", scope[name]))
        if compiled is None:
            return None
        scope[name] = compiled
    return kernel(function)


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
    return _compiled(scan_mooncake) is not None


def read_mooncake_bytes(data: bytes, max_line: int):
    """``(ids, offsets, timestamps, input_tokens, output_tokens)`` (a column is ``None`` when no line gives it),
    or ``None`` when the bytes are not in the form this module reads (or numba is not installed).

    Each part of the bytes (:func:`_parts`) is bounded (:func:`count_bounds`), then parsed straight into its
    own stretch of one array of ids; a later part's ids then move down to follow the earlier part's (the
    bound counts the separators between members too). Timestamps that go back across the cut decline
    as anything else outside the form does."""
    run = _compiled(scan_mooncake)
    if run is None or not data:
        return None
    parts = _parts(data)
    count = kernel(count_bounds)
    sizes = on_cores(
        lambda part: tuple(int(v) for v in count(part)), parts
    )  # the parts bounded side by side, as they are parsed (compiled: no byte-sized temporaries)
    starts = np.concatenate(([0], np.cumsum([references for _, references in sizes])))
    ids = np.empty(int(starts[-1]), dtype=np.int64)
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
    if any(verdict != READ for verdict, *_ in verdicts) or not any(v[1] for v in verdicts):
        return None  # outside the form, or no record at all (blank lines only: the strict reader names it)
    present = 0
    for *_, bits in verdicts:
        present |= bits
    # Each part's ids to follow the previous part's, closing the gap its bound left: one memmove (the two
    # stretches may overlap; numpy would copy the source aside first). At 20M references about 10M ids
    # move down by 1M places: 9 ms here, against 0.12 s more for a count tight enough to need no move.
    filled = 0
    for k, (_, _, references, _) in enumerate(verdicts):
        if starts[k] != filled:
            ctypes.memmove(
                ids.ctypes.data + filled * ids.itemsize,
                ids.ctypes.data + int(starts[k]) * ids.itemsize,
                references * ids.itemsize,
            )
        filled += references
    firsts = np.cumsum([0] + [references for _, _, references, _ in verdicts])
    offsets = np.concatenate(
        [scratch[0][0][: verdicts[0][1] + 1]]
        + [scratch[k][0][1 : verdicts[k][1] + 1] + firsts[k] for k in range(1, len(parts))]
    )
    stretches = [numbers[: verdicts[k][1]] for k, (_, numbers) in enumerate(scratch)]
    numbers = np.concatenate(stretches) if len(parts) > 1 else stretches[0]
    if present & 1 and len(parts) > 1:  # timestamps never decrease, across the cut too
        times = numbers[:, 0]
        given = times[~np.isnan(times)]
        if np.any(np.diff(given) < 0):
            return None
    columns = [
        np.ascontiguousarray(numbers[:, k]) if present & (1 << k) else None for k in range(3)
    ]
    return ids[:filled], offsets, *columns


__all__ = [
    "available",
    "DECLINED",
    "KEYS",
    "MAX_DIGITS",
    "MAX_KEYS",
    "MAX_NESTING",
    "MAX_VALUE",
    "READ",
    "SIZE_KEYS",
    "SPLIT_MIN_BYTES",
    "count_bounds",
    "read_mooncake_bytes",
    "scan_mooncake",
]
