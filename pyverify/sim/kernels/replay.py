"""LRU and FIFO demand caches at one capacity, longest-prefix hits, compiled (numba).

The same moves as the reference ``pyverify.sim.simulate._capacitated_hits``
(which stays as the test oracle), one request at a time:

1. the hit prefix is the longest run of leading blocks held by the cache;
2. LRU only: the hit blocks become most recent, in chain order;
3. every later block is fetched: one still held (possible when an earlier
   block of the chain was evicted before it) becomes the newest again; any
   other evicts the oldest block when the cache is full, then enters as the
   newest.

A cache is a doubly linked list over block ids, oldest first (``before`` and
``after`` arrays indexed by id, ``held`` marking membership), so every step is
O(1) and the run is O(references). Caches are independent, so requests are
replayed cache by cache (each cache's requests in trace order) with one set
of arrays, emptied between caches. The output is the witness itself:
``hit_blocks[i]`` for every request i.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from pyverify.sim.counting import dense_ids, flatten

NONE = -1


@njit(cache=True, nogil=True, inline="always")
def _unlink(block, before, after, ends):
    """Take ``block`` out of the list; ``ends`` is ``[oldest, newest]``."""
    b, a = before[block], after[block]
    if b == NONE:
        ends[0] = a
    else:
        after[b] = a
    if a == NONE:
        ends[1] = b
    else:
        before[a] = b


@njit(cache=True, nogil=True, inline="always")
def _append(block, before, after, ends):
    """Put ``block`` at the newest end of the list."""
    newest = ends[1]
    before[block] = newest
    after[block] = NONE
    if newest == NONE:
        ends[0] = block
    else:
        after[newest] = block
    ends[1] = block


@njit(cache=True, nogil=True)
def replay(ids, starts, order, bounds, universe, capacity, lru):
    """Hits per request of LRU (``lru=True``) or FIFO caches of ``capacity`` blocks.

    Request r's chain is ``ids[starts[r]:starts[r + 1]]`` (ids dense in
    ``[0, universe)``). The requests that read cache c are
    ``order[bounds[c]:bounds[c + 1]]``, in trace order.
    """
    hit_blocks = np.zeros(starts.size - 1, dtype=np.int64)
    before = np.full(universe, NONE, dtype=np.int64)
    after = np.full(universe, NONE, dtype=np.int64)
    held = np.zeros(universe, dtype=np.bool_)
    ends = np.full(2, NONE, dtype=np.int64)
    for cache in range(bounds.size - 1):
        size = 0
        for k in range(bounds[cache], bounds[cache + 1]):
            r = order[k]
            first, stop = starts[r], starts[r + 1]
            hit_end = first
            while hit_end < stop and held[ids[hit_end]]:
                hit_end += 1
            hit_blocks[r] = hit_end - first
            if lru:
                for t in range(first, hit_end):
                    block = ids[t]
                    if ends[1] != block:
                        _unlink(block, before, after, ends)
                        _append(block, before, after, ends)
            for t in range(hit_end, stop):
                block = ids[t]
                if held[block]:  # evicted ancestor, held descendant: refetched, so newest again
                    if ends[1] != block:
                        _unlink(block, before, after, ends)
                        _append(block, before, after, ends)
                    continue
                if size >= capacity:
                    oldest = ends[0]
                    _unlink(oldest, before, after, ends)
                    held[oldest] = False
                    size -= 1
                _append(block, before, after, ends)
                held[block] = True
                size += 1
        while ends[0] != NONE:  # empty this cache before the next one
            oldest = ends[0]
            _unlink(oldest, before, after, ends)
            held[oldest] = False
    return hit_blocks


def capacitated_hits(
    chains: Sequence[Sequence[int]], cache_of: Sequence[int], capacity: int, lru: bool
) -> list[int]:
    """Hits per request, as ``simulate._capacitated_hits`` returns them."""
    try:
        ids, lengths = flatten(chains)
    except OverflowError:  # ids beyond 64 bits fit no array: the Python replay takes any int
        from pyverify.sim.simulate import _capacitated_hits

        return _capacitated_hits(chains, cache_of, capacity, "lru" if lru else "fifo")
    ids, universe = dense_ids(ids)
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    caches = np.asarray(cache_of, dtype=np.int64)
    order = np.argsort(caches, kind="stable")
    if caches.size:
        _, first_of_cache = np.unique(caches[order], return_index=True)
        bounds = np.append(first_of_cache, caches.size).astype(np.int64)
    else:
        bounds = np.zeros(1, dtype=np.int64)
    return replay(ids, starts, order, bounds, universe, capacity, lru).tolist()


__all__ = ["capacitated_hits", "replay"]
