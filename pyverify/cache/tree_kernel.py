"""Leaf-first LRU and vLLM's free queue at one capacity, longest-prefix hits, compiled (numba).

The same results as the reference caches ``LeafFirstLRU`` and
``TailFirstFreeQueue`` in :mod:`pyverify.cache.tree` (which stay as the test
oracles), cache by cache (each cache's requests in trace order), in O(1) list
steps per block reference, with a few integers per distinct block.

vLLM's order (``tail-first``) is replayed move for move: evictable blocks form a
doubly linked queue (:mod:`pyverify.cache.array_queue`, next victim first); a hit takes its block out of the queue; a new block is
inserted after evicting the queue's front, and the chain stops when the queue
is empty (every cached block is in use); when the request finishes, its
blocks rejoin the end of the queue tail first.

Leaf-first LRU (``leaf-lru``) is replayed with the *same queue*, which on a
prefix-closed trace makes the same choices as the reference's heap of leaves
keyed by last touch. Why (every block has one parent, so the cached set,
from which only leaves leave and into which a block enters only after its
parent, is always prefix-closed, and a cached block is always inside the hit
prefix of any chain through it):

* Between requests the queue orders cached blocks by
  ``(last request that touched it, -depth)``, as vLLM's does
  (:mod:`pyverify.sim.engine_curves`): the blocks a request touched are
  appended in reverse chain order once it finishes.
* During request r, call *old* the cached blocks r has not touched (the
  queue's contents). The first old block in the queue is a leaf: a cached
  child of it is either old, then touched by every request since it was last
  touched, and deeper, so earlier in the queue; or touched by r, and then
  its parent was touched by r too (it comes just before it in r's chain, in
  the hit prefix or inserted), so it is not old.
* Among old leaves, queue order is touch order: no two old leaves were last
  touched by the same request (both would lie on that request's chain, one
  an ancestor of the other, and an ancestor of a cached block is no leaf),
  and the reference's clock grows from request to request. The blocks r
  touched have later touches than every old block. So while an old block
  exists, the reference's least recently touched unpinned leaf is the
  queue's front.
* With no old block left and the cache full, the reference's only unpinned
  leaf is the block r inserted last (each earlier inserted block has the
  next as a cached child; the hit prefix is pinned): it is evicted, the next
  block's parent is then missing, and the chain stops. With nothing inserted
  yet, no leaf can go and the chain stops. vLLM keeps its inserted blocks
  and stops; this is the only difference between the two.

The kernel checks prefix closure as it goes (each block id keeps the parent
it first had); on a trace that is not prefix-closed it reports so, and
:func:`tree_hits` runs the reference instead. ``tests/test_kernels.py``
checks the kernel against the reference on Hypothesis traces and against
kvcache-simulator's LRU on the Mooncake trace.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from pyverify.cache.array_queue import NONE, pop_front, push_back, unlink
from pyverify.cache.lru_kernel import flat_requests
from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

UNSEEN = -2


@njit(cache=CACHE, nogil=True)
def tree_replay(ids, starts, order, bounds, universe, capacity, leaf_first):
    """``(hits per request, prefix_closed)`` for leaf-lru (``leaf_first``) or tail-first caches.

    Request r's chain is ``ids[starts[r]:starts[r + 1]]`` (ids dense in
    ``[0, universe)``); cache c's requests are ``order[bounds[c]:bounds[c + 1]]``
    in trace order (as :func:`pyverify.cache.lru_kernel.replay`). When
    ``prefix_closed`` is false the hits are meaningless (the module docstring's
    argument needs prefix closure) and the replay stopped at the violation.
    """
    parent = np.full(universe, UNSEEN, dtype=np.int64)  # the parent each id first had
    cached = np.zeros(universe, dtype=np.bool_)
    queued = np.zeros(universe, dtype=np.bool_)  # in the queue (evictable; "old" during a request)
    before = np.empty(universe, dtype=np.int64)
    after = np.empty(universe, dtype=np.int64)
    hit_blocks = np.zeros(starts.size - 1, dtype=np.int64)
    for cache in range(bounds.size - 1):
        head, tail, size = NONE, NONE, 0
        for k in range(bounds[cache], bounds[cache + 1]):
            r = order[k]
            first, stop = starts[r], starts[r + 1]
            for t in range(first, stop):
                up = ids[t - 1] if t > first else NONE
                if parent[ids[t]] == UNSEEN:
                    parent[ids[t]] = up
                elif parent[ids[t]] != up:
                    return hit_blocks, False
            hit_end = first
            while hit_end < stop and cached[ids[hit_end]]:
                hit_end += 1
            hit_blocks[r] = hit_end - first
            held_end = hit_end
            for t in range(first, stop):
                block = ids[t]
                if t < hit_end:  # a hit: in use while the request runs
                    head, tail = unlink(before, after, head, tail, block)
                    queued[block] = False
                    continue
                if size >= capacity:
                    if head == NONE:  # no old block: the chain does not fit
                        if leaf_first and t > hit_end:
                            cached[ids[t - 1]] = False  # leaf-lru evicts the block it inserted last
                            size -= 1
                            held_end = t - 1
                        break
                    victim, head, tail = pop_front(before, after, head, tail)
                    queued[victim] = False
                    cached[victim] = False
                    size -= 1
                cached[block] = True
                size += 1
                held_end = t + 1
            for t in range(held_end - 1, first - 1, -1):  # finished: rejoin the queue tail first
                block = ids[t]
                head, tail = push_back(before, after, head, tail, block)
                queued[block] = True
        for k in range(bounds[cache], bounds[cache + 1]):  # empty this cache before the next one
            r = order[k]
            for t in range(starts[r], starts[r + 1]):
                cached[ids[t]] = False
                queued[ids[t]] = False
    return hit_blocks, True


def tree_hits(
    chains: Sequence[Sequence[int]], cache_of: Sequence[int], capacity: int, eviction: str
) -> list[int] | None:
    """Hits per request under ``leaf-lru`` or ``tail-first``, as ``simulate._capacitated_hits``
    returns them; ``None`` for ids beyond 64 bits or a trace that is not prefix-closed (the caller's
    Python reference takes any chains)."""
    if eviction not in ("leaf-lru", "tail-first"):
        raise ValueError(f"tree_hits replays leaf-lru or tail-first, not {eviction!r}")
    flat = flat_requests(chains, cache_of)
    if flat is not None:
        ids, universe, starts, order, bounds = flat
        hit_blocks, prefix_closed = tree_replay(
            ids, starts, order, bounds, universe, capacity, eviction == "leaf-lru"
        )
        if prefix_closed:
            return hit_blocks.tolist()
    return None


__all__ = ["tree_hits", "tree_replay"]
