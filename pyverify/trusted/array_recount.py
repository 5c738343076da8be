"""The checker's recounts on flat arrays: bypass MIN and the forced-admission optimum, per cache.

The same counts as :func:`pyverify.trusted.recount.min_misses` and
:func:`pyverify.trusted.recount.forced_misses` (the arguments they rest on are
in that module's docstring), written as loops over numpy arrays so that numba
can compile them (:mod:`pyverify.trusted.compiled`). ``tests/test_array_check.py``
holds them equal to the plain-Python recounts on Hypothesis instances.

Both keep a max-heap of "next use" positions with lazy deletion: an entry
``next_use * universe + key`` is live while that key's recorded next use is
still ``next_use``. Positions are in the cache's own flat block sequence.
"""

from __future__ import annotations

import heapq

import numpy as np

from pyverify.trusted import compiled
from pyverify.trusted.compiled import jitable, kernel


def _next_uses(keys, universe):
    """For each position, the next position holding the same key, or ``len(keys)`` if none (one backward pass)."""
    n = keys.size
    following = np.empty(n, dtype=np.int64)
    last = np.full(universe, n, dtype=np.int64)
    for p in range(n - 1, -1, -1):
        following[p] = last[keys[p]]
        last[keys[p]] = p
    return following


def per_cache(keys: np.ndarray, offsets: np.ndarray, caches: np.ndarray):
    """Each cache's flat sequence of pair keys (:class:`pyverify.trusted.array_check.PairKeys`: one per block within a
    cache), with its requests' lengths."""
    lengths = np.diff(offsets)
    if caches.size == 0 or bool((caches == caches[0]).all()):
        yield keys, lengths
        return
    of_reference = np.repeat(caches, lengths)
    for q in np.unique(caches):
        yield keys[of_reference == q], lengths[caches == q]


def min_misses_arrays(
    keys: np.ndarray, offsets: np.ndarray, caches: np.ndarray, capacity: int, universe: int
) -> int:
    """The fewest misses of the prefix caches: the sum over caches of bypass MIN on the flat sequence (keys below ``universe``)."""
    total = 0
    for sequence, _ in per_cache(keys, offsets, caches):
        following = kernel(_next_uses)(sequence, universe)
        if compiled.compiler is None:  # no compiler lent: the loop on Python lists
            total += _min_misses_plain(sequence.tolist(), following.tolist(), capacity)
        else:
            total += int(kernel(_min_misses)(sequence, following, capacity, universe))
    return total


def forced_misses_arrays(
    keys: np.ndarray, offsets: np.ndarray, caches: np.ndarray, capacity: int, universe: int
) -> int:
    """The fewest misses of forced-admission caches (Belady's rule, the running request pinned), summed over caches."""
    return sum(
        int(
            kernel(_forced_misses)(
                sequence, kernel(_next_uses)(sequence, universe), lengths, capacity, universe
            )
        )
        for sequence, lengths in per_cache(keys, offsets, caches)
    )


@jitable
def _push(heap, size, value):
    """Add ``value`` to the max-heap ``heap[:size]`` (the array has room); returns the new size."""
    i = size
    heap[i] = value
    while i > 0 and heap[(i - 1) // 2] < heap[i]:
        heap[(i - 1) // 2], heap[i] = heap[i], heap[(i - 1) // 2]
        i = (i - 1) // 2
    return size + 1


@jitable
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


def _min_misses(keys, following, capacity, universe):
    """Bypass MIN: keep the ``capacity`` live keys used soonest, drop keys never used again (recount.flat_min_misses)."""
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


def _min_misses_plain(keys: list[int], following: list[int], capacity: int) -> int:
    """:func:`_min_misses`, step for step, on Python lists with :mod:`heapq` (entries
    ``(-next use, key)``: the same victim, the kept key used last): the form ``verify`` runs
    without a compiler, some seven times faster than :func:`_min_misses` on NumPy scalars.
    ``tests/test_array_check.py`` holds both equal to :mod:`pyverify.trusted.recount`."""
    n = len(keys)
    next_of: dict[int, int] = {}  # each kept key's next use
    heap: list[tuple[int, int]] = []
    misses = 0
    for p, key in enumerate(keys):
        if next_of.pop(key, None) is None:
            misses += 1
        if following[p] == n:  # never used again
            continue
        next_of[key] = following[p]
        heapq.heappush(heap, (-following[p], key))
        while len(next_of) > capacity:
            use, victim = heapq.heappop(heap)
            if next_of.get(victim) == -use:  # else a stale entry
                del next_of[victim]
    return misses


def _forced_misses(keys, following, lengths, capacity, universe):
    """Forced admission: after each request keep its first min(k, C) keys and the soonest-used others
    (recount.forced_requests_misses)."""
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


__all__ = ["forced_misses_arrays", "min_misses_arrays", "per_cache"]
