"""LRU and FIFO demand caches at one capacity, longest-prefix hits, compiled (numba).

The same moves as the reference ``pyverify.sim.simulate._capacitated_hits``
(which stays as the test oracle), one request at a time:

1. the hit prefix is the longest run of leading blocks held by the cache;
2. LRU only: the hit blocks become most recent, in chain order;
3. every later block is fetched: one still held (possible when an earlier
   block of the chain was evicted before it) becomes the newest again under
   LRU and keeps its place under FIFO; any other evicts the oldest block when
   the cache is full, then enters as the newest.

A cache is a doubly linked list over block ids, oldest first (``before`` and
``after`` arrays indexed by id, ``held`` marking membership), so every step is
O(1) and the run is O(references); the working memory is 9 bytes per distinct
block. Caches are independent, so requests are
replayed cache by cache (each cache's requests in trace order) with one set
of arrays, emptied between caches. The output is the witness itself:
``hit_blocks[i]`` for every request i.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from pyverify.cache.arrays import dense_ids, flatten
from pyverify.cache.array_queue import NONE, move_to_back, pop_front, push_back
from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable


@njit(cache=CACHE, nogil=True)
def replay(ids, starts, order, bounds, before, capacity, lru):
    """Hits per request of LRU (``lru=True``) or FIFO caches of ``capacity`` blocks.

    Request r's chain is ``ids[starts[r]:starts[r + 1]]`` (ids dense in
    ``[0, before.size)``). The requests that read cache c are
    ``order[bounds[c]:bounds[c + 1]]``, in trace order. ``before`` is scratch
    space, one integer per block id (int32 is enough below 2**31 ids).
    """
    # The list, oldest first (pyverify.cache.array_queue).
    after = np.empty_like(before)
    held = np.zeros(before.size, dtype=np.bool_)
    hit_blocks = np.zeros(starts.size - 1, dtype=np.int64)
    for cache in range(bounds.size - 1):
        head, tail, size = NONE, NONE, 0
        for k in range(bounds[cache], bounds[cache + 1]):
            r = order[k]
            first, stop = starts[r], starts[r + 1]
            hit_end = first
            while hit_end < stop and held[ids[hit_end]]:
                hit_end += 1
            hit_blocks[r] = hit_end - first
            for t in range(first, stop):
                block = ids[t]
                if t < hit_end:  # a hit: LRU makes it the newest, FIFO leaves it
                    if not lru:
                        continue
                elif not held[block]:  # a miss: evict the oldest if full, enter as the newest
                    if size >= capacity:
                        oldest, head, tail = pop_front(before, after, head, tail)
                        held[oldest] = False
                        size -= 1
                    head, tail = push_back(before, after, head, tail, block)
                    held[block] = True
                    size += 1
                    continue
                # A block held after the first miss (an ancestor was evicted):
                # LRU refreshes it as if refetched; FIFO keeps its entry time
                # (kvcache-simulator's FIFO, and pyverify.cache.lru.FifoCache).
                if not lru and t >= hit_end:
                    continue
                head, tail = move_to_back(before, after, head, tail, block)  # the newest
        while head != NONE:  # empty this cache before the next one
            held[head] = False
            head = after[head]
    return hit_blocks


def capacitated_hits(
    chains: Sequence[Sequence[int]], cache_of: Sequence[int], capacity: int, lru: bool
) -> list[int] | None:
    """Hits per request, as ``simulate._capacitated_hits`` returns them; ``None`` when ids beyond
    64 bits fit no array (the caller's Python replay takes any int)."""
    flat = flat_requests(chains, cache_of)
    if flat is None:
        return None
    ids, universe, starts, order, bounds = flat
    return replay(ids, starts, order, bounds, link_array(universe), capacity, lru).tolist()


def flat_requests(chains: Sequence[Sequence[int]], cache_of: Sequence[int]):
    """The replay kernels' arguments: ``(ids, universe, starts, order, bounds)``.

    See :func:`requests_by_cache`; ``None`` when an id does not fit in 64 bits.
    """
    try:
        ids, lengths = flatten(chains)
    except OverflowError:
        return None
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return requests_by_cache(ids, starts, cache_of)


def requests_by_cache(ids: np.ndarray, starts: np.ndarray, cache_of):
    """``(ids, universe, starts, order, bounds)`` for the replay kernels, from flat arrays.

    ``ids`` come back dense in ``[0, universe)``; request r's chain is
    ``ids[starts[r]:starts[r + 1]]``; the requests that read the c-th cache
    (caches in increasing id) are ``order[bounds[c]:bounds[c + 1]]``, in
    trace order.
    """
    ids, universe = dense_ids(ids)
    caches = np.asarray(cache_of, dtype=np.int64)
    order = np.argsort(caches, kind="stable")
    if caches.size:
        _, first_of_cache = np.unique(caches[order], return_index=True)
        bounds = np.append(first_of_cache, caches.size).astype(np.int64)
    else:
        bounds = np.zeros(1, dtype=np.int64)
    return ids, universe, starts, order, bounds


def link_array(universe: int) -> np.ndarray:
    """Scratch space for :func:`replay`: one list link per block id, 4 bytes when ids fit."""
    return np.empty(universe, dtype=np.int32 if universe < 2**31 - 1 else np.int64)


__all__ = ["capacitated_hits", "flat_requests", "link_array", "replay", "requests_by_cache"]
