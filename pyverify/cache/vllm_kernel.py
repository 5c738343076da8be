"""vLLM 0.33's block pool (``--eviction vllm``), compiled (numba).

The same moves as the reference :class:`pyverify.cache.vllm.VllmBlockPool`
(which stays as the test oracle; its docstring cites vLLM's source), in
arrays, cache by cache (each cache's requests in trace order):

* the free queue is, as :class:`~pyverify.cache.vllm.FreeBlockQueue` keeps
  it, the blocks prepended since (a doubly linked list,
  :mod:`pyverify.cache.array_queue`), then the blocks never handed out
  (``next_unused..C``, a count), then the blocks appended since (a second
  list in the same arrays); block 0, vLLM's null block, is never in it. The
  arrays are as long as the blocks the trace can use, at most the sum of its
  requests' blocks, so a pool of ``--capacity 10**12`` costs no more than
  one just big enough;
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

from pyverify.cache.array_queue import NONE, pop_front, push_back, push_front, unlink
from pyverify.cache.arrays import dense_ids
from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

#: ``hits[r]`` of a request vLLM would never schedule (it needs more blocks than the pool).
UNSCHEDULED = -1


@njit(cache=CACHE, nogil=True)
def vllm_replay(ids, starts, tokens, order, bounds, universe, capacity, block_size, usable):
    """Hit blocks per request (``UNSCHEDULED`` for a request that never runs); one pool per cache.

    ``usable`` bounds the physical blocks any cache hands out (at most its requests' blocks together, at
    most ``capacity``): the arrays are that long, never ``capacity`` long."""
    n = starts.size - 1
    hits = np.zeros(n, dtype=np.int64)
    before = np.empty(usable + 1, dtype=np.int64)
    after = np.empty(usable + 1, dtype=np.int64)
    hash_of = np.full(usable + 1, NONE, dtype=np.int64)
    next_copy = np.full(usable + 1, NONE, dtype=np.int64)
    prev_copy = np.full(usable + 1, NONE, dtype=np.int64)
    first_copy = np.full(universe, NONE, dtype=np.int64)
    last_copy = np.full(universe, NONE, dtype=np.int64)
    blocks = np.empty(max(usable, 1), dtype=np.int64)  # the running request's physical blocks
    # ref_cnt of the running request's blocks: a chain that names one hash twice hits one block twice
    users = np.zeros(usable + 1, dtype=np.int64)
    for c in range(bounds.size - 1):
        front_head, front_tail = (
            NONE,
            NONE,
        )  # blocks prepended (unhashed), ahead of the never-used ones
        next_unused = 1  # blocks next_unused..capacity were never handed out: the queue's middle
        back_head, back_tail = NONE, NONE  # blocks appended (hashed), behind the never-used ones
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
            for i in range(
                hit
            ):  # touch: a cached free block was appended, so it is in the back list
                p = blocks[i]
                if users[p] == 0:
                    back_head, back_tail = unlink(before, after, back_head, back_tail, p)
                users[p] += 1
            for i in range(hit, needed):  # get_new_blocks: pop the front, evicting its hash
                if front_head != NONE:
                    p, front_head, front_tail = pop_front(before, after, front_head, front_tail)
                elif next_unused <= capacity:
                    p = next_unused
                    next_unused += 1
                else:
                    p, back_head, back_tail = pop_front(before, after, back_head, back_tail)
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
                users[p] = 1
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
                users[p] -= 1
                if users[p] > 0:  # the same block earlier in the request: it returns there
                    continue
                if hash_of[p] == NONE:
                    front_head, front_tail = push_front(before, after, front_head, front_tail, p)
                else:
                    back_head, back_tail = push_back(before, after, back_head, back_tail, p)
            hits[r] = hit
        for p in range(1, next_unused):  # empty this cache's copies for the next cache
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
    """:func:`pyverify.cache.vllm.vllm_hits`, compiled; ``None`` when an id is negative or does not fit in 64 bits."""
    lengths = np.fromiter(map(len, chains), dtype=np.int64, count=len(chains))
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    try:
        flat = np.fromiter(
            (block for chain in chains for block in chain), dtype=np.int64, count=int(starts[-1])
        )
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
    # A pool bigger than an int64 refuses no request an int64-sized one would: the same moves.
    capacity = min(capacity, int(np.iinfo(np.int64).max))
    needed = -(-tokens // block_size)
    # A cache hands out a never-used block only for a block some request of it needs: the pool's arrays
    # need no more than all requests' blocks together (the ones that fit the pool at all).
    usable = min(capacity, int(needed[needed <= capacity].sum()))
    hits = vllm_replay(
        ids.astype(np.int64),
        starts,
        tokens,
        order,
        bounds,
        max(universe, 1),
        capacity,
        block_size,
        usable,
    )
    unscheduled = np.flatnonzero(hits == UNSCHEDULED)
    hits[unscheduled] = 0
    return hits.tolist(), unscheduled.tolist()


__all__ = ["UNSCHEDULED", "vllm_kernel_hits", "vllm_replay"]
