"""The readers' two hot loops, compiled by numba when it pays: the line pre-scan and the prefix-closure check.

Profiled on the array path (issue #23: at 20M references the closure check
took 38% of ``simulate`` and the pre-scan 23%, both in numpy passes that
each touch the data several times), each is one plain loop here:

* :func:`scan_lines`: everything :func:`pyverify.inputs.columnar.jsonl._plain_lines`
  and :func:`pyverify.inputs.jsonread.too_deep_at` look for, in one pass over
  the bytes (ASCII only; no backslash, tab or carriage return; no ``NaN`` or
  ``Infinity``; every line ``{...}``; the longest line; the quote marks; the
  nesting depth outside strings, which without a backslash are simply what
  lies between two quote marks);
* :func:`closed_dense`: one pass writing each reference's parent at its id
  and comparing with the first parent written there (dense ids).

Importing numba and loading the two cached kernels took 1.0-1.4 s more than
numpy alone on this project's 2-core machine (shared, load 3-4); on a 5M-reference
Mooncake JSONL (43 MiB) the compiled scan took 0.13 s against 0.38 s for the
numpy passes, and the compiled closure check 0.04 s against 0.17 s. So
:func:`worth_it` uses the kernels only on inputs of :data:`MIN_BYTES` /
:data:`MIN_REFERENCES` or more (where the saving passes the import), or
whenever numba is loaded already. Without numba (:func:`kernel` returns
``None``) the numpy versions run: the same answers (``tests/test_columnar_compiled.py``).
The machine code is cached per user, never in the checkout (:mod:`pyverify.numba_cache`).
"""

from __future__ import annotations

import sys
from typing import Callable

import numpy as np

#: The pre-scan is compiled for files of this many bytes or more (about 15M references of Mooncake JSONL).
MIN_BYTES = 128 << 20
#: The closure check is compiled for traces of this many references or more (a Parquet file, say, needs no scan).
MIN_REFERENCES = 40_000_000

#: :func:`scan_lines`'s verdicts.
PLAIN, NOT_PLAIN, TOO_DEEP = 0, 1, 2

_compiled: dict[Callable, Callable | None] = {}


#: Waits for the loads :func:`load_beside` began (:func:`pyverify.threads.beside`).
_loading: list[Callable[[], None]] = []


def kernel(function: Callable) -> Callable | None:
    """``function`` compiled by numba (once per process), or ``None`` when numba is not installed."""
    while _loading:  # a load begun on another thread ends first: one numba, set up once
        _loading.pop()()
    if function not in _compiled:
        try:
            from numba import njit
        except ImportError:
            _compiled[function] = None
        else:
            from pyverify.numba_cache import caching

            _compiled[function] = njit(cache=caching(), nogil=True)(function)
    return _compiled[function]


def numba_loaded() -> bool:
    """Whether numba is in the process already, or loading (:func:`load_beside`): then a compiled pass costs
    nothing more to start."""
    return "numba" in sys.modules or bool(_loading)


def load_beside() -> None:
    """Start importing numba, and loading one cached kernel, on a second thread.

    For a caller that will run compiled passes on a file it has yet to read: the read lets go of the GIL
    in the kernel's copy, while numba's import (0.2 s here) and its first kernel load (0.15 s: the CPU
    target's set-up, paid once per process) are Python, so the two overlap instead of adding up. From the
    start :func:`numba_loaded` is true (the decisions that depend on it are made as if numba were loaded)
    and :func:`kernel` waits for the thread before it compiles or loads anything. Nothing else depends on
    the thread: an error it meets is met again, and reported, by the caller's own compiled call.
    """
    from pyverify.threads import beside

    def load() -> None:
        try:
            from numba import njit

            from pyverify.numba_cache import caching

            njit(cache=caching(), nogil=True)(_touch)(np.frombuffer(b"{}", dtype=np.uint8))
        except Exception:  # noqa: BLE001, S110 (only a head start: the caller's own compiled call reports)
            pass

    _loading.append(beside(load))


def _touch(text):
    """The smallest kernel, whose load sets numba's CPU target up (see :func:`load_beside`)."""
    return text.size


def worth_it(size: int, threshold: int) -> bool:
    """Whether to compile for an input of ``size`` (bytes or references): big enough, or numba already loaded."""
    return size >= threshold or numba_loaded()


def scan_lines(text, limit):
    """``(verdict, lines, longest line with its newline, quote marks)`` of JSONL bytes ``text`` (uint8).

    ``verdict``: :data:`PLAIN`; :data:`NOT_PLAIN` (what the fast reader cannot
    count on, see :func:`~pyverify.inputs.columnar.jsonl._plain_lines`); or
    :data:`TOO_DEEP`, nesting past ``limit`` levels outside strings.
    """
    n = text.size
    if n == 0 or text[0] != 123:  # "{"
        return NOT_PLAIN, 0, 0, 0
    lines = 0
    longest = 0
    quotes = 0
    depth = 0
    in_string = False
    line_start = 0
    for i in range(n):
        c = text[i]
        if c >= 128 or c == 92 or c == 9 or c == 13:  # non-ASCII, backslash, tab, carriage return
            return NOT_PLAIN, 0, 0, 0
        if c == 78 and i + 2 < n and text[i + 1] == 97 and text[i + 2] == 78:  # "NaN"
            return NOT_PLAIN, 0, 0, 0
        if (
            c == 73
            and i + 7 < n
            and text[i + 1] == 110
            and text[i + 2] == 102
            and text[i + 3] == 105
            and text[i + 4] == 110
            and text[i + 5] == 105
            and text[i + 6] == 116
            and text[i + 7] == 121
        ):  # "Infinity"
            return NOT_PLAIN, 0, 0, 0
        if c == 34:
            quotes += 1
            in_string = not in_string
        elif not in_string:
            if c == 123 or c == 91:
                depth += 1
                if depth > limit:
                    return TOO_DEEP, 0, 0, 0
            elif c == 125 or c == 93:
                depth -= 1
        if c == 10:  # a line ends: "}" before it, "{" after it (unless the file ends here)
            if i == 0 or text[i - 1] != 125 or (i + 1 < n and text[i + 1] != 123):
                return NOT_PLAIN, 0, 0, 0
            lines += 1
            if i + 1 - line_start > longest:
                longest = i + 1 - line_start
            line_start = i + 1
    if text[n - 1] != 10:  # the last line, without a newline
        if text[n - 1] != 125:
            return NOT_PLAIN, 0, 0, 0
        lines += 1
        if n + 1 - line_start > longest:
            longest = n + 1 - line_start
    return PLAIN, lines, longest, quotes


def closed_dense(ids, starts, table):
    """Whether every id keeps one parent (``table``: one int64 per id, scratch; ``starts``: chain starts, then ``ids.size``)."""
    unset = -2  # ROOT is -1; ids are >= 0
    for k in range(table.size):
        table[k] = unset
    request = 0
    for i in range(ids.size):
        while starts[request + 1] <= i:
            request += 1
        parent = -1 if i == starts[request] else ids[i - 1]
        known = table[ids[i]]
        if known == unset:
            table[ids[i]] = parent
        elif known != parent:
            return False
    return True


def compiled_scan(data: bytes, limit: int) -> tuple[int, int, int, int] | None:
    """:func:`scan_lines` compiled, or ``None`` without numba."""
    run = kernel(scan_lines)
    return (
        None
        if run is None
        else tuple(int(v) for v in run(np.frombuffer(data, dtype=np.uint8), limit))
    )


def compiled_closed(ids: np.ndarray, offsets: np.ndarray, high: int) -> bool | None:
    """:func:`closed_dense` compiled (ids in ``0..high``), or ``None`` without numba."""
    run = kernel(closed_dense)
    if run is None:
        return None
    return bool(
        run(
            np.ascontiguousarray(ids, dtype=np.int64),
            np.ascontiguousarray(offsets, dtype=np.int64),
            np.empty(high + 1, dtype=np.int64),
        )
    )


__all__ = [
    "MIN_BYTES",
    "MIN_REFERENCES",
    "NOT_PLAIN",
    "PLAIN",
    "TOO_DEEP",
    "closed_dense",
    "compiled_closed",
    "compiled_scan",
    "numba_loaded",
    "kernel",
    "load_beside",
    "scan_lines",
    "worth_it",
]
