"""The histogram of LRU stack distances in one compiled pass (numba).

The stack distance of a re-reference at time t to a block last referenced at
p is the number of distinct blocks referenced in between (Mattson et al.
1970). Olken (1981) counts them with a tree over time positions: mark the
latest reference of every block, and count the marks strictly between p and
t. This kernel counts the complement instead. A position i in (p, t) is
*dead* when its block was referenced again before t; the live ones are the
distinct blocks, so::

    d(t) = (t - p - 1) - #{dead positions in (p, t)}

Every dead mark made so far lies before t, and p itself is live (it is its
block's latest reference), so the dead positions in (p, t) are all dead marks
minus those before p: one prefix count. A
re-reference then costs one count and one mark (p becomes dead), and a first
reference costs nothing -- against two queries and two updates (plus one
update per first reference) for the textbook marking.

The dead marks are bits, 64 positions to a word, and the Fenwick tree counts
whole words: the count before p is the tree's sum over the words before p's
plus the set bits of p's own word below p. The tree holds one count
per 64 positions, so at 20M references bits and tree take 3.4 MB, where a
tree over positions took 80 MB and missed the processor's cache on nearly
every step of its walk. Measured on this project's 2-core machine, 20M
references of ``bench/trace_files.py``'s trace: 0.38-0.45 s against
0.87-0.91 s for the per-position tree (same distances, checked equal); the
per-position pass was in turn 2-3x faster than a plain Fenwick pass
(``bench/curves.py``).

Per-host caches under a static routing: each host's references are gathered
into one contiguous *segment* (trace order kept within a host), and the same
pass runs over the segments one after another. A block whose previous
reference lies before its segment's start is a first reference for that host.
Dead marks of earlier segments lie before the start, so they drop out of the
count exactly like dead marks at or before p.

Nothing here allocates per reference beyond the bits (1/8 byte a reference)
and the word tree (1/16 byte): the distances are binned as they are found,
never stored. Per block id there are 12 bytes: its latest position (4) and a
histogram bin (8).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pyverify.sim.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

# uint64 constants: numba turns arithmetic mixing uint64 and int64 into float64, so every bit operation
# below stays in uint64.
_ONE = np.uint64(1)
_M1, _M2, _M4 = (
    np.uint64(0x5555_5555_5555_5555),
    np.uint64(0x3333_3333_3333_3333),
    np.uint64(0x0F0F_0F0F_0F0F_0F0F),
)
_H01 = np.uint64(0x0101_0101_0101_0101)


@njit(cache=CACHE, nogil=True, inline="always")
def _popcount(x):
    """Set bits of a uint64 (the classic SWAR count: pairs, nibbles, bytes, then one multiply sums the bytes)."""
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=CACHE, nogil=True, inline="always")
def _dead_before(bits, tree, p):
    """Dead marks at positions 0..p-1: the word tree's count of the words before p's, and p's word below bit p."""
    word = p >> 6
    count = _popcount(bits[word] & ((_ONE << np.uint64(p & 63)) - _ONE))
    i = word
    while i > 0:
        count += tree[i]
        i -= i & -i
    return count


@njit(cache=CACHE, nogil=True, inline="always")
def _mark_dead(bits, tree, p):
    """Position p is dead from now on (it was not: a position dies once, when its block is next referenced)."""
    word = p >> 6
    bits[word] |= _ONE << np.uint64(p & 63)
    i = word + 1
    while i < tree.size:
        tree[i] += 1
        i += i & -i


@njit(cache=CACHE, nogil=True, inline="always")
def _distance(ids, last, bits, tree, t, start, dead):
    """Reference t's stack distance, or -1 when its block was not referenced since ``start`` (a cold miss).

    Records t as its block's latest position and, for a re-reference, marks
    the previous one dead: the caller counts ``dead`` up by one when the
    result is not -1.
    """
    block = ids[t]
    p = last[block]
    last[block] = t
    if p < start:
        return -1
    distance = (t - p - 1) - (dead - _dead_before(bits, tree, p))
    _mark_dead(bits, tree, p)
    return distance


@njit(cache=CACHE, nogil=True)
def distance_histogram(ids, bounds, last, bits, tree):
    """``(histogram, cold)`` of the references ``ids`` (dense, in ``[0, last.size)``).

    ``bounds`` delimits the segments (one per cache): segment s is
    ``ids[bounds[s]:bounds[s + 1]]``. ``last`` (one entry per block id, all
    -1) receives each block's latest position; ``bits`` (zeroed uint64, one
    bit per reference) and ``tree`` (a zeroed Fenwick array of one count per
    word of ``bits``, plus one) hold the dead marks (see :func:`workspace`).
    ``histogram[d]`` counts re-references at distance d.
    """
    histogram = np.zeros(max(last.size, 1), dtype=np.int64)
    top = 0  # one past the largest distance seen
    cold = 0
    dead = 0  # dead marks made so far
    for segment in range(bounds.size - 1):
        start = bounds[segment]
        for t in range(start, bounds[segment + 1]):
            distance = _distance(ids, last, bits, tree, t, start, dead)
            if distance < 0:  # never referenced by this cache: a cold miss
                cold += 1
                continue
            dead += 1
            histogram[distance] += 1
            if distance >= top:
                top = distance + 1
    return histogram[:top], cold  # a view: a copy would double the histogram's memory at the peak


@njit(cache=CACHE, nogil=True)
def reference_distances(ids, bounds, last, bits, tree, cold):
    """Every reference's stack distance (``cold`` for a first one), in the order of ``ids``: :func:`distance_histogram`'s
    pass over the same segments, each distance kept.

    For the curves that weigh references (tokens, a measurement window), which
    need the distance of each reference rather than their histogram: 8 bytes a
    reference more than the histogram pass, same arithmetic.
    """
    out = np.empty(ids.size, dtype=np.int64)
    dead = 0
    for segment in range(bounds.size - 1):
        start = bounds[segment]
        for t in range(start, bounds[segment + 1]):
            distance = _distance(ids, last, bits, tree, t, start, dead)
            if distance < 0:
                out[t] = cold
                continue
            dead += 1
            out[t] = distance
    return out


@njit(cache=CACHE, nogil=True)
def measured_histograms(ids, last, bits, tree, start, ends, at_ends):
    """``histogram``: :func:`distance_histogram`'s pass over one cache, binning only the references at
    positions ``start`` and after (the measured ones).

    ``at_ends[k]`` receives the stack distance (-1: cold) of the reference at
    position ``ends[k]`` (increasing, none before ``start``): for the token
    curve, where a request's last block weighs less than a whole one, the
    caller takes those shortfalls off at these distances. No distance is
    kept per reference, and no second histogram is made for them (at 20M
    references a second one touched about 60 MB).
    """
    size = max(last.size, 1)
    histogram = np.zeros(size, dtype=np.int64)
    top = 0
    dead = 0
    # The next request end, ends[k], is held in a scalar (-1 past the last): testing ``k < ends.size and
    # ends[k] == t`` at every reference took a quarter of the pass (20M references: 0.67 s against 0.54 s).
    k = 0
    end = ends[0] if ends.size else -1
    for t in range(ids.size):
        distance = _distance(ids, last, bits, tree, t, 0, dead)
        if distance >= 0:
            dead += 1
            if t >= start:
                histogram[distance] += 1
                if distance >= top:
                    top = distance + 1
        if t == end:
            at_ends[k] = distance
            k += 1
            end = ends[k] if k < ends.size else -1
    return histogram[:top]


@njit(cache=CACHE, nogil=True)
def cache_order(caches, n_caches):
    """``(order, bounds)``: the references grouped cache by cache (a stable counting sort of positions).

    ``caches[t]`` is the cache that reference t reads; cache c's references
    are ``order[bounds[c]:bounds[c + 1]]``, in trace order.
    """
    counts = np.zeros(n_caches + 1, dtype=np.int64)
    for t in range(caches.size):
        counts[caches[t] + 1] += 1
    bounds = np.cumsum(counts)
    fill = bounds[:-1].copy()
    order = np.empty(caches.size, dtype=np.int64)
    for t in range(caches.size):
        c = caches[t]
        order[fill[c]] = t
        fill[c] += 1
    return order, bounds


def group_by_cache(
    ids: np.ndarray, caches: np.ndarray, n_caches: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(grouped, bounds)``: ``ids`` reordered cache by cache, cache c's references ``grouped[bounds[c]:bounds[c + 1]]``
    in trace order (:func:`cache_order`)."""
    order, bounds = _checked_order(ids, caches, n_caches)
    return ids[order], bounds


def _checked_order(
    ids: np.ndarray, caches: np.ndarray, n_caches: int
) -> tuple[np.ndarray, np.ndarray]:
    if caches.shape != ids.shape:
        raise ValueError("caches must give one cache per reference")
    if caches.size and (int(caches.min()) < 0 or int(caches.max()) >= n_caches):
        raise ValueError(
            f"cache ids must lie in 0..{n_caches - 1}"
        )  # compiled code checks no bounds
    return cache_order(caches, n_caches)


def workspace(references: int, universe: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(last, bits, tree)`` for :func:`distance_histogram`: positions and counts in 4 bytes when they fit."""
    dtype = np.int32 if references < 2**31 - 1 else np.int64
    words = (references >> 6) + 1
    return (
        np.full(universe, -1, dtype=dtype),
        np.zeros(words, dtype=np.uint64),
        np.zeros(words + 1, dtype=dtype),
    )


def lru_histogram(
    ids: np.ndarray, universe: int, caches: np.ndarray | None = None, n_caches: int = 1
) -> tuple[np.ndarray, int]:
    """``(histogram, cold)`` for one pooled cache, or one cache per host (``caches``).

    ``ids`` must be dense (see :func:`pyverify.cache.arrays.dense_ids`).
    """
    if caches is None:
        bounds = np.array([0, ids.size], dtype=np.int64)
    else:
        ids, bounds = group_by_cache(ids, caches, n_caches)
    return distance_histogram(ids, bounds, *workspace(ids.size, universe))


def distances_of(
    ids: np.ndarray, universe: int, cold: int, caches: np.ndarray | None = None, n_caches: int = 1
) -> np.ndarray:
    """Per reference, in trace order, the LRU stack distance (``cold`` for first references) of dense ``ids`` in one
    pooled cache, or in its own host's cache (``caches``: each reference's cache)."""
    if caches is None:
        return reference_distances(
            ids, np.array([0, ids.size], dtype=np.int64), *workspace(ids.size, universe), cold
        )
    order, bounds = _checked_order(ids, caches, n_caches)
    grouped = reference_distances(ids[order], bounds, *workspace(ids.size, universe), cold)
    distances = np.empty_like(grouped)
    distances[order] = grouped
    return distances


def measured_histograms_of(
    ids: np.ndarray, universe: int, start: int, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(histogram, distances at ends)``: :func:`measured_histograms` of dense ``ids`` in one pooled cache."""
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    if ends.size and (
        np.any(np.diff(ends) <= 0) or int(ends[0]) < start or int(ends[-1]) >= ids.size
    ):
        raise ValueError(
            "ends must increase, from start, within the trace"
        )  # compiled code checks no bounds
    at_ends = np.empty(ends.size, dtype=np.int64)
    return measured_histograms(ids, *workspace(ids.size, universe), start, ends, at_ends), at_ends


__all__ = [
    "cache_order",
    "distance_histogram",
    "distances_of",
    "group_by_cache",
    "lru_histogram",
    "measured_histograms",
    "measured_histograms_of",
    "reference_distances",
    "workspace",
]
