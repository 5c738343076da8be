"""numba loops for the trusted checker's recounts, lent only to certify's own check.

The trusted checker (:mod:`pyverify.trusted.recount`) runs its recounts as plain Python loops and
imports no compiler. certify checks every certificate with it before writing one; on a trace of
millions of references that check runs the loops below instead, compiled by numba and lent for the
call (:func:`accelerated`): the same rules on arrays, held equal to the trusted loops by
``tests/test_array_check.py``. ``pyverify verify`` never runs them.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np

from pyverify.trusted import recount


def _push(heap, size, value):
    """Add ``value`` to the max-heap ``heap[:size]`` (the array has room); returns the new size."""
    i = size
    heap[i] = value
    while i > 0 and heap[(i - 1) // 2] < heap[i]:
        heap[(i - 1) // 2], heap[i] = heap[i], heap[(i - 1) // 2]
        i = (i - 1) // 2
    return size + 1


def _pop(heap, size):
    """Remove the largest entry of the max-heap ``heap[:size]`` (not empty); returns the new size."""
    size -= 1
    heap[0] = heap[size]
    i = 0
    while 2 * i + 1 < size:
        child = 2 * i + 1
        if child + 1 < size and heap[child + 1] > heap[child]:
            child += 1
        if heap[i] >= heap[child]:
            break
        heap[i], heap[child] = heap[child], heap[i]
        i = child
    return size


def min_misses(keys, following, capacity, universe):
    """:func:`pyverify.trusted.recount.min_loop` on arrays: a max-heap of ``next use * universe +
    key`` entries, stale ones skipped."""
    n = keys.size
    next_of = np.full(universe, -1, dtype=np.int64)  # the next use of each kept key, -1 if not kept
    heap = np.empty(n + 1, dtype=np.int64)
    size = kept = misses = 0
    for p in range(n):
        key = keys[p]
        if next_of[key] < 0:
            misses += 1
        else:
            kept -= 1
        next_of[key] = -1
        if following[p] == n:  # never used again
            continue
        next_of[key] = following[p]
        kept += 1
        size = _push(heap, size, following[p] * universe + key)
        while kept > capacity:
            top = heap[0]  # the largest
            size = _pop(heap, size)
            victim = top % universe
            if next_of[victim] == top // universe:
                next_of[victim] = -1
                kept -= 1
    return misses


def forced_misses(keys, following, lengths, capacity, universe):
    """:func:`pyverify.trusted.recount.forced_loop` on arrays."""
    n = keys.size
    next_of = np.full(universe, -1, dtype=np.int64)
    pinned_by = np.zeros(universe, dtype=np.int64)  # request r + 1 pins the keys among its first C
    heap = np.empty(n + 1, dtype=np.int64)
    set_aside = np.empty(n + 1, dtype=np.int64)
    size = kept = misses = 0
    start = 0
    for r in range(lengths.size):
        end = start + lengths[r]
        for p in range(start, end):
            if next_of[keys[p]] < 0:
                misses += 1
        for p in range(start, min(end, start + capacity)):
            pinned_by[keys[p]] = r + 1
        for p in range(start, end):
            key = keys[p]
            if pinned_by[key] == r + 1:
                if next_of[key] < 0:
                    kept += 1
                next_of[key] = following[p]
                size = _push(heap, size, following[p] * universe + key)
            elif next_of[key] >= 0:  # beyond the first C of its chain: computed, not cached
                next_of[key] = -1
                kept -= 1
        aside = 0
        while kept > capacity:
            top = heap[0]  # the largest
            size = _pop(heap, size)
            victim = top % universe
            if next_of[victim] != top // universe:
                continue  # stale
            if pinned_by[victim] == r + 1:
                set_aside[aside] = top
                aside += 1
                continue
            next_of[victim] = -1
            kept -= 1
        for e in range(aside):
            size = _push(heap, size, set_aside[e])
        start = end
    return misses


_compiled: dict[str, object] = {}


def compiled_loops() -> dict[str, object]:
    """The loops above compiled by numba (cached per user, never in the checkout), helpers first."""
    if not _compiled:
        from numba import njit
        from numba.extending import register_jitable

        from pyverify.numba_cache import caching

        for helper in (_push, _pop):  # numba resolves a loop's calls as it compiles
            register_jitable(helper)
        for name, loop in (("min", min_misses), ("forced", forced_misses)):
            _compiled[name] = njit(cache=caching(), nogil=True)(loop)
    return _compiled


@contextmanager
def accelerated() -> Iterator[None]:
    """Within the block the trusted recounts run these loops compiled by numba, when installed."""
    try:
        import numba  # noqa: F401
    except ImportError:  # pragma: no cover - numba is optional
        yield
        return
    before = dict(recount.lent)
    recount.lent.update(compiled_loops())
    try:
        yield
    finally:
        recount.lent.clear()
        recount.lent.update(before)


__all__ = ["accelerated", "compiled_loops", "forced_misses", "min_misses"]
