"""numba loops for the trusted checker, lent only to certify's own check.

The trusted checker runs its replay as whole-array NumPy (:mod:`pyverify.trusted.runs`) and its
recounts as plain Python loops (:mod:`pyverify.trusted.recount`), and imports no compiler. certify
checks every certificate with it before writing one; on a trace of millions of references that
check runs the loops below instead, compiled by numba and lent for the call (:func:`accelerated`)
through ``recount.lent``: the replay step by step, the renumbering of dense block ids without a sort, next uses and the
recounts in one pass each. ``tests/test_array_check.py`` holds each to the trusted code, verdict
for verdict and word for word. ``pyverify verify`` never runs them.
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


def replay_steps(
    keys, offsets, hits, cache_of, caches, dropped_offsets, drop_keys, universe, capacity, forced
):
    """:func:`pyverify.trusted.runs.replay`'s rules one request at a time: ``(request, rule,
    index, count)`` of the first refusal as :func:`pyverify.trusted.runs.refusal` words it, or
    rule -1. ``drop_keys``: the key of each dropped entry, below ``universe``; ``capacity`` -1
    for none."""
    held = np.zeros(universe, dtype=np.bool_)  # by the requests before t
    fetched_by = np.zeros(universe, dtype=np.int64)  # t + 1 once request t fetches the key
    dropped_by = np.zeros(universe, dtype=np.int64)  # t + 1 once request t drops the key
    size = np.zeros(caches.max() + 1 if caches.size else 1, dtype=np.int64)
    short = 0  # requests so far whose hit prefix is not their whole chain
    for t in range(offsets.size - 1):
        start, end, h = offsets[t], offsets[t + 1], hits[t]
        first, last = dropped_offsets[t], dropped_offsets[t + 1]
        if cache_of[t] != caches[t]:
            return t, 0, t, 0  # WRONG_CACHE
        if h > end - start:
            return t, 1, t, 0  # TOO_MANY_HITS
        for p in range(start, start + h):
            if not held[keys[p]]:
                return t, 2, p, 0  # HIT_NOT_HELD
        if h < end - start:
            if held[keys[start + h]]:
                return t, 3, short, start + h  # PREFIX_LONGER
            short += 1
        for j in range(first, last):
            if dropped_by[drop_keys[j]] == t + 1:
                return t, 4, 0, 0  # REPEATED_DROP
            dropped_by[drop_keys[j]] = t + 1
        new = 0  # references fetched that the cache did not hold (each counted, as rule 4 does)
        for p in range(start + h, end):
            fetched_by[keys[p]] = t + 1
            if not held[keys[p]]:
                new += 1
        for j in range(first, last):
            if not held[drop_keys[j]] and fetched_by[drop_keys[j]] != t + 1:
                return t, 5, j, 0  # DROP_NEITHER
        if forced:
            pinned = end - start if capacity < 0 else min(end - start, capacity)
            for p in range(start, start + pinned):
                if dropped_by[keys[p]] == t + 1:
                    return t, 6, p, 0  # FORCED_DROP
        size[caches[t]] += new - (last - first)
        if capacity >= 0 and size[caches[t]] > capacity:
            return t, 7, t, size[caches[t]]  # OVER_CAPACITY
        for p in range(start + h, end):
            held[keys[p]] = True
        for j in range(first, last):
            held[drop_keys[j]] = False  # a drop wins over a fetch of the same request
    return 0, -1, 0, 0


def next_uses(keys):
    """:func:`pyverify.trusted.recount.next_uses` in one backward pass over the keys."""
    following = np.empty(keys.size, dtype=np.int64)
    seen = np.full(keys.max() + 1 if keys.size else 0, keys.size, dtype=np.int64)
    for p in range(keys.size - 1, -1, -1):
        following[p] = seen[keys[p]]
        seen[keys[p]] = p
    return following


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``; dense values (a trace's block numbers, or block
    index times fleet plus cache) are marked in a table as long as their range instead of sorted.
    (Hashing sparse ones was slower than NumPy's sort on 20M references.)"""
    low, high = (int(values.min()), int(values.max())) if values.size else (0, -1)
    if not 0 < high - low + 1 < 4 * values.size:
        return np.unique(values, return_inverse=True)
    present = np.zeros(high - low + 1, dtype=bool)
    present[values - low] = True
    return np.flatnonzero(present) + low, (np.cumsum(present) - 1)[values - low]


def replay(keyed, trace, run, caches, drop_keys, capacity, forced) -> list[tuple[int, ...]]:
    """The first refusal of the run (a list of one, or empty) as
    :func:`pyverify.trusted.runs.replay` finds it, by :func:`replay_steps` compiled."""
    universe = max(keyed.universe, int(drop_keys.max()) + 1 if drop_keys.size else 0)
    t, rule, index, count = _compiled["replay"](
        *(keyed.of_references, trace.offsets, run["hit_blocks"], run["cache_of"], caches),
        *(
            run["dropped_offsets"],
            drop_keys,
            universe,
            -1 if capacity is None else capacity,
            forced,
        ),
    )
    return [(int(t), int(rule), int(index), int(count))] if rule >= 0 else []


_compiled: dict[str, object] = {}


def compiled_loops() -> dict[str, object]:
    """The loops above compiled by numba (cached per user, never in the checkout), helpers first."""
    if not _compiled:
        from numba import njit
        from numba.extending import register_jitable

        from pyverify.numba_cache import caching

        for helper in (_push, _pop):  # numba resolves a loop's calls as it compiles
            register_jitable(helper)
        for name, loop in (
            ("min", min_misses),
            ("forced", forced_misses),
            ("replay", replay_steps),
            ("next_uses", next_uses),
        ):
            _compiled[name] = njit(cache=caching(), nogil=True)(loop)
    return _compiled


def lent_loops() -> dict[str, object]:
    """What :func:`accelerated` lends to ``recount.lent``: the compiled loops and the renumbering."""
    return {**compiled_loops(), "replay": replay, "unique": unique_inverse}


@contextmanager
def accelerated() -> Iterator[None]:
    """Within the block the trusted recounts run these loops compiled by numba, when installed."""
    try:
        import numba  # noqa: F401
    except ImportError:  # pragma: no cover - numba is optional
        yield
        return
    before = dict(recount.lent)
    recount.lent.update(lent_loops())
    try:
        yield
    finally:
        recount.lent.clear()
        recount.lent.update(before)


__all__ = [
    "accelerated",
    "compiled_loops",
    "forced_misses",
    "lent_loops",
    "min_misses",
    "next_uses",
    "replay",
    "replay_steps",
    "unique_inverse",
]
