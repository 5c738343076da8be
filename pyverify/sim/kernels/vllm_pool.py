"""vLLM 0.33's block pool (``--eviction vllm``), compiled (numba).

The same moves as the reference :class:`pyverify.sim.vllm_pool.VllmBlockPool`
(which stays as the test oracle; its docstring cites vLLM's source), in
arrays, cache by cache (each cache's requests in trace order):

* the free queue is a doubly linked list over physical blocks ``1..C``
  (:mod:`pyverify.sim.kernels.queue`; block 0, vLLM's null block, is never in it);
* ``hash_of[p]`` is the (dense) hash physical block ``p`` carries, or ``NONE``;
* the copies filed under one hash form a second linked list in filing order
  (``first_copy[h]`` .. ``last_copy[h]``, ``next_copy`` / ``prev_copy`` per
  physical block): the first is the one ``get_cached_block`` returns.

``tests/test_kernels.py`` checks it against the reference on Hypothesis
token-id traces (partial blocks, short prompts, re-sends, several caches).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from pyverify.sim.kernels.queue import NONE, pop_front, push_back, push_front, unlink
from pyverify.sim.counting import dense_ids
from pyverify.sim.numba_cache import caching

CACHE = caching()  # numba's cache in a per-user folder, never the checkout; False if none is writable

#: ``hits[r]`` of a request vLLM would never schedule (it needs more blocks than the pool).
UNSCHEDULED = -1


@njit(cache=CACHE, nogil=True)
def vllm_replay(ids, starts, tokens, order, bounds, universe, capacity, block_size):
    """Hit blocks per request (``UNSCHEDULED`` for a request that never runs); one pool per cache."""
    n = starts.size - 1
    hits = np.zeros(n, dtype=np.int64)
    before = np.empty(capacity + 1, dtype=np.int64)
    after = np.empty(capacity + 1, dtype=np.int64)
    hash_of = np.full(capacity + 1, NONE, dtype=np.int64)
    next_copy = np.full(capacity + 1, NONE, dtype=np.int64)
    prev_copy = np.full(capacity + 1, NONE, dtype=np.int64)
    first_copy = np.full(universe, NONE, dtype=np.int64)
    last_copy = np.full(universe, NONE, dtype=np.int64)
    blocks = np.empty(capacity, dtype=np.int64)  # the running request's physical blocks
    for c in range(bounds.size - 1):
        head, tail = NONE, NONE
        for p in range(1, capacity + 1):
            head, tail = push_back(before, after, head, tail, p)
        for k in range(bounds[c], bounds[c + 1]):
            r = order[k]
            start, full = starts[r], starts[r + 1] - starts[r]
            needed = (tokens[r] + block_size - 1) // block_size
            if needed > capacity:  # allocate_slots returns None
                hits[r] = UNSCHEDULED
                continue
            limit = min((tokens[r] - 1) // block_size, full)
            hit = 0
            while hit < limit:  # get_computed_blocks: the first copy of each hash, in order
                p = first_copy[ids[start + hit]]
                if p == NONE:
                    break
                blocks[hit] = p
                hit += 1
            for i in range(hit):  # touch
                head, tail = unlink(before, after, head, tail, blocks[i])
            for i in range(hit, needed):  # get_new_blocks: pop the front, evicting its hash
                p, head, tail = pop_front(before, after, head, tail)
                h = hash_of[p]
                if h != NONE:
                    a, b = prev_copy[p], next_copy[p]
                    if a == NONE:
                        first_copy[h] = b
                    else:
                        next_copy[a] = b
                    if b == NONE:
                        last_copy[h] = a
                    else:
                        prev_copy[b] = a
                    hash_of[p] = NONE
                blocks[i] = p
            for j in range(hit, full):  # cache_full_blocks: file a new copy last
                p, h = blocks[j], ids[start + j]
                hash_of[p] = h
                prev_copy[p], next_copy[p] = last_copy[h], NONE
                if last_copy[h] == NONE:
                    first_copy[h] = p
                else:
                    next_copy[last_copy[h]] = p
                last_copy[h] = p
            for i in range(needed - 1, -1, -1):  # free: reverse order; unhashed to the front
                p = blocks[i]
                if hash_of[p] == NONE:
                    head, tail = push_front(before, after, head, tail, p)
                else:
                    head, tail = push_back(before, after, head, tail, p)
            hits[r] = hit
        for p in range(1, capacity + 1):  # empty this cache's copies for the next cache
            h = hash_of[p]
            if h != NONE:
                first_copy[h] = NONE
                last_copy[h] = NONE
                hash_of[p] = NONE
    return hits


def vllm_kernel_hits(
    chains: Sequence[Sequence[int]],
    prompt_tokens: Sequence[int],
    cache_of: Sequence[int],
    capacity: int,
    block_size: int,
) -> tuple[list[int], list[int]] | None:
    """:func:`pyverify.sim.vllm_pool.vllm_hits`, compiled; ``None`` when an id is negative or does not fit in 64 bits."""
    lengths = np.fromiter(map(len, chains), dtype=np.int64, count=len(chains))
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    try:
        flat = np.fromiter((block for chain in chains for block in chain), dtype=np.int64, count=int(starts[-1]))
    except OverflowError:
        return None
    if flat.size and int(flat.min()) < 0:
        return None
    ids, universe = dense_ids(flat)
    caches = np.asarray(cache_of, dtype=np.int64)
    order = np.argsort(caches, kind="stable")
    _, first_of_cache = np.unique(caches[order], return_index=True)
    bounds = np.append(first_of_cache, caches.size).astype(np.int64)
    tokens = np.asarray(prompt_tokens, dtype=np.int64)
    hits = vllm_replay(ids.astype(np.int64), starts, tokens, order, bounds, max(universe, 1), capacity, block_size)
    unscheduled = np.flatnonzero(hits == UNSCHEDULED)
    hits[unscheduled] = 0
    return hits.tolist(), unscheduled.tolist()


__all__ = ["UNSCHEDULED", "vllm_kernel_hits", "vllm_replay"]
