"""SGLang 0.5.23's radix cache (``--eviction sglang`` / ``sglang-fifo``), compiled (numba).

The same moves as the reference :class:`pyverify.cache.sglang.SglangRadixCache`
(which stays as the test oracle; its docstring cites SGLang's source and
lists the rules), in arrays, cache by cache (each cache's requests in trace
order):

* a node is a row of ``node`` (eight int64, one cache line): its parent, its key as a slice
  ``[START, START + LENGTH)`` of the flat array of every request's page ids
  (a node's pages are always a run of the prompt that created it, and a
  split only cuts a slice in two), its number of children, its lock count,
  its ``last_access_time`` and ``creation_time`` (the same counter as the
  reference's: one tick per ``match_prefix`` / ``insert`` call and per new
  node), and whether it is still in the tree. Nodes are never reused, so a
  dead node stays dead;
* child links ``(parent, first page) -> child`` live in one hash table
  (:mod:`pyverify.cache.child_table`);
* the evictable leaves wait in one min-heap by priority (access time for LRU,
  creation time for FIFO) with lazy deletion: an entry is pushed whenever a
  node becomes a leaf or a leaf's priority changes, and on pop it counts
  only if the node is still alive, still a leaf, and its priority is still
  the entry's. The reference heaps the unlocked leaves afresh on every
  eviction; the lazy heap pops them in the same order because no two leaves
  ever share a priority (creation times are all different; the nodes that
  share one access time were stamped on one root path, so at most one of
  them is a leaf), which also makes the reference's tie-break unused. A
  popped leaf that is locked (the running request's matched node, the only
  locked node that can be a leaf) is pushed back after the eviction.

``tests/test_sglang_kernel.py`` checks it against the reference on Hypothesis
token traces (shared prefixes, splits, page sizes 1 to 16, tiny to large
pools, prompts near the refusal bound, LRU and FIFO, several caches).
"""

from __future__ import annotations

from itertools import chain as concatenated
from typing import Sequence

import numpy as np
from numba import njit

from pyverify.numba_cache import caching
from pyverify.cache.child_table import NOT_FOUND, child_of, new_table, remove_child, set_child
from pyverify.cache.array_heap import heap_pop, heap_push
from pyverify.cache.sglang import SGLANG_FIFO, SGLANG_LRU, default_max_input, sglang_hits

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

#: ``hits[r]`` of a request SGLang refuses (``validate_input_length``).
UNSCHEDULED = -1
NONE = -1
ROOT = 0
#: The columns of the ``node`` array.
PARENT, START, LENGTH, CHILDREN, LOCK, ACCESS, CREATED, ALIVE = range(8)
FIELDS = 8


@njit(cache=CACHE, nogil=True, inline="always")
def new_node(node, count, parent, start, length, now):
    """Node ``count`` (returned), created at ``now`` with key ``pages[start:start + length]``."""
    node[count, PARENT], node[count, START], node[count, LENGTH] = parent, start, length
    node[count, CHILDREN], node[count, LOCK], node[count, ALIVE] = 0, 0, 1
    node[count, ACCESS], node[count, CREATED] = now, now
    return count


@njit(cache=CACHE, nogil=True, inline="always")
def common_length(pages, key_start, key_length, at, end):
    """How many of the key's pages equal ``pages[at:end]``, from the front."""
    length, most = 0, min(key_length, end - at)
    while length < most and pages[key_start + length] == pages[at + length]:
        length += 1
    return length


@njit(cache=CACHE, nogil=True, inline="always")
def split(node, count, links, pages, child, length, now):
    """``_split_node``: new node ``count`` holds the first ``length`` pages of ``child`` and becomes its parent."""
    parent, start = node[child, PARENT], node[child, START]
    prefix = new_node(node, count, parent, start, length, now)
    node[prefix, CHILDREN] = 1
    node[prefix, LOCK] = node[child, LOCK]
    set_child(links, parent, pages[start], prefix)
    node[child, PARENT], node[child, START], node[child, LENGTH] = (
        prefix,
        start + length,
        node[child, LENGTH] - length,
    )
    set_child(links, prefix, pages[start + length], child)
    return prefix


@njit(cache=CACHE, nogil=True, inline="always")
def priority_of(node, v, fifo):
    return node[v, CREATED] if fifo else node[v, ACCESS]


@njit(cache=CACHE, nogil=True, inline="always")
def offer(node, heap, size, v, fifo):
    """Push ``v`` with its priority if it is a leaf other than the root; returns the heap's size."""
    if v != ROOT and node[v, CHILDREN] == 0:
        size = heap_push(heap[0], heap[1], size, priority_of(node, v, fifo), v)
    return size


@njit(cache=CACHE, nogil=True, inline="always")
def lock(node, v, delta):
    """``inc_lock_ref`` / ``dec_lock_ref`` from ``v`` up to the root (excluded)."""
    while v != ROOT:
        node[v, LOCK] += delta
        v = node[v, PARENT]


@njit(cache=CACHE, nogil=True)
def evict(node, links, pages, heap, size, tokens, page_size, fifo):
    """``evict``: free whole unlocked leaves, lowest priority first, until ``tokens`` are freed.

    Returns ``(pages freed, heap size)``."""
    freed, stashed = 0, NONE
    while freed < tokens and size > 0:
        priority, v, size = heap_pop(heap[0], heap[1], size)
        if node[v, ALIVE] == 0 or node[v, CHILDREN] > 0 or priority != priority_of(node, v, fifo):
            continue  # a stale entry: evicted, no longer a leaf, or stamped since
        if node[v, LOCK] > 0:
            stashed = v  # the running request's own node: evictable again once it finishes
            continue
        freed += node[v, LENGTH] * page_size
        node[v, ALIVE] = 0
        parent = node[v, PARENT]
        remove_child(links, parent, pages[node[v, START]])
        node[parent, CHILDREN] -= 1
        size = offer(node, heap, size, parent, fifo)
    if stashed != NONE:
        size = heap_push(heap[0], heap[1], size, priority_of(node, stashed, fifo), stashed)
    return freed // page_size, size


@njit(cache=CACHE, nogil=True)
def radix_replay(
    pages,
    starts,
    tokens,
    order,
    bounds,
    pool_pages,
    page_size,
    max_input,
    fifo,
    max_nodes,
    links,
    heap_length,
):
    """Hit pages per request (``UNSCHEDULED`` for a refused one); one radix cache per cache.

    ``pages[starts[r]:starts[r + 1]]`` are request ``r``'s full pages; the
    requests of cache ``c`` are ``order[bounds[c]:bounds[c + 1]]``; ``links``
    is an empty :mod:`~pyverify.cache.child_table` table, left empty.
    """
    n = starts.size - 1
    hits = np.zeros(n, dtype=np.int64)
    node = np.zeros((max_nodes, FIELDS), dtype=np.int64)
    heap = (np.empty(heap_length, dtype=np.int64), np.empty(heap_length, dtype=np.int64))
    for c in range(bounds.size - 1):
        clock = 1
        count = new_node(node, ROOT, NONE, 0, 0, clock) + 1
        node[ROOT, LOCK] = 1  # RadixCache.reset: the root is never evicted
        free_pages, size = pool_pages, 0
        for k in range(bounds[c], bounds[c + 1]):
            r = order[k]
            start, end, num_tokens = starts[r], starts[r + 1], tokens[r]
            needed = (num_tokens + page_size - 1) // page_size
            if num_tokens > max_input or needed > pool_pages:  # validate_input_length refuses it
                hits[r] = UNSCHEDULED
                continue
            limit = (num_tokens - 1) // page_size  # input_len - 1 tokens, whole pages
            hit, last = 0, ROOT
            if limit > 0:  # match_prefix(pages[:limit])
                clock += 1
                now = clock
                node[ROOT, ACCESS] = now
                v, at = ROOT, start
                while at < start + limit:
                    child = child_of(links, v, pages[at])
                    if child == NOT_FOUND:
                        break
                    node[child, ACCESS] = now
                    length = common_length(
                        pages, node[child, START], node[child, LENGTH], at, start + limit
                    )
                    hit += length
                    if length < node[child, LENGTH]:
                        clock += 1
                        v = split(node, count, links, pages, child, length, clock)
                        count += 1
                        if not fifo:
                            # the remainder, stamped now
                            size = offer(node, heap, size, child, fifo)  # split
                        break
                    v, at = child, at + length
                last = v
                if not fifo:
                    size = offer(node, heap, size, v, fifo)
            lock(node, last, 1)
            demand = num_tokens - hit * page_size + (page_size if page_size > 1 else 0)
            available = free_pages * page_size
            if available < demand:
                freed, size = evict(
                    node, links, pages, heap, size, demand - available, page_size, fifo
                )
                free_pages += freed
            if needed - hit > free_pages:
                raise AssertionError(
                    "a request that fits the pool always fits beside its locked prefix"
                )
            clock += 1  # insert(pages)
            now = clock
            node[ROOT, ACCESS] = now
            v, at = ROOT, start
            while at < end:
                child = child_of(links, v, pages[at])
                if child == NOT_FOUND:
                    break
                node[child, ACCESS] = now
                length = common_length(pages, node[child, START], node[child, LENGTH], at, end)
                at += length
                if length < node[child, LENGTH]:
                    clock += 1
                    v = split(node, count, links, pages, child, length, clock)
                    count += 1
                    if not fifo:
                        size = offer(node, heap, size, child, fifo)
                    break
                v = child
            if at < end:  # the new pages become one new leaf, charged to the pool
                clock += 1
                leaf = new_node(node, count, v, at, end - at, clock)
                count += 1
                set_child(links, v, pages[at], leaf)
                node[v, CHILDREN] += 1
                free_pages -= end - at
                size = offer(node, heap, size, leaf, fifo)
            elif not fifo:
                size = offer(node, heap, size, v, fifo)
            lock(node, last, -1)
            hits[r] = hit
        for v in range(1, count):  # empty the links for the next cache
            if node[v, ALIVE]:
                remove_child(links, node[v, PARENT], pages[node[v, START]])
    return hits


def _as_int64(chains: Sequence[Sequence[int]], count: int) -> np.ndarray | None:
    """Every block id in one int64 array (ids of 2^63 and more as their 64-bit pattern); ``None`` if one needs more bits.

    Only equality of ids matters here, so reading a uint64 id's bits as int64 changes nothing."""
    for dtype in (np.int64, np.uint64):
        try:
            return np.fromiter(concatenated.from_iterable(chains), dtype=dtype, count=count).view(
                np.int64
            )
        except (OverflowError, ValueError):
            continue
    return None


def sglang_kernel_hits(
    chains: Sequence[Sequence[int]],
    prompt_tokens: Sequence[int],
    cache_of: Sequence[int],
    capacity: int,
    block_size: int,
    page_size: int,
    policy: str = SGLANG_LRU,
    max_input: int | None = None,
) -> tuple[list[int], list[int]] | None:
    """:func:`pyverify.cache.sglang.sglang_hits`, compiled; ``None`` when a block id does not fit in 64 bits.

    Input the reference refuses is handed to it, so the errors are its own."""
    if policy not in (SGLANG_LRU, SGLANG_FIFO):
        raise ValueError(f"unknown radix-cache eviction {policy!r}")
    n = len(chains)
    lengths = np.fromiter(map(len, chains), dtype=np.int64, count=n)
    tokens = np.fromiter(prompt_tokens, dtype=np.int64, count=len(prompt_tokens))
    pages_in_pool = capacity * block_size // page_size
    if (
        page_size % block_size
        or tokens.size != n
        or len(cache_of) != n
        or (n and pages_in_pool < 1)
        or np.any(tokens < 1)
        or np.any(lengths != tokens // block_size)
    ):
        return sglang_hits(
            chains, prompt_tokens, cache_of, capacity, block_size, page_size, policy, max_input
        )
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    blocks = _as_int64(chains, int(starts[-1]))
    if blocks is None:
        return None
    # A page is named by the id of its last block: request r's page j is block (j + 1) * per_page - 1.
    per_page = page_size // block_size
    page_counts = tokens // page_size
    page_starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(page_counts, out=page_starts[1:])
    within = np.arange(page_starts[-1], dtype=np.int64) - np.repeat(page_starts[:-1], page_counts)
    pages = blocks[np.repeat(starts[:-1], page_counts) + (within + 1) * per_page - 1]
    caches = np.asarray(cache_of, dtype=np.int64)
    order = np.argsort(caches, kind="stable")
    _, first_of_cache, per_cache = np.unique(caches[order], return_index=True, return_counts=True)
    bounds = np.append(first_of_cache, n).astype(np.int64)
    most = int(per_cache.max()) if n else 0
    # Per cache: at most 3 new nodes per request (a split in match, one in insert, the leaf) besides the
    # root; at most 7 heap pushes (3 stamps or new leaves, 1 locked leaf put back, and one per node evicted).
    max_nodes, heap_length = 3 * most + 2, 7 * most + 16
    links = new_table(min(pages_in_pool, max_nodes))  # every non-root node holds a page of the pool
    limit = default_max_input(pages_in_pool * page_size) if max_input is None else max_input
    hits = radix_replay(
        pages,
        page_starts,
        tokens,
        order.astype(np.int64),
        bounds,
        pages_in_pool,
        page_size,
        limit,
        policy == SGLANG_FIFO,
        max_nodes,
        links,
        heap_length,
    )
    unscheduled = np.flatnonzero(hits == UNSCHEDULED)
    hits[unscheduled] = 0
    return (hits * per_page).tolist(), unscheduled.tolist()


__all__ = ["UNSCHEDULED", "radix_replay", "sglang_kernel_hits"]
