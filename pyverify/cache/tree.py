"""The eviction orders that keep the cache a prefix tree, at one capacity: leaf-first LRU and tail-first.

``leaf-lru`` -- leaf-first LRU (kvcache-simulator's LRU: its idealisation of SGLang's radix cache)
    SGLang without the differences :mod:`pyverify.cache.sglang` lists
    (points 1-4: the ``input_len - 1`` limit, whole-node eviction, the split
    remainder's refresh, the extra page); ``--eviction sglang`` is the exact cache.
    Evict the least recently used block *that has no cached child*, so the
    cached set stays a prefix tree. The request's hit prefix is pinned while
    its missing blocks are inserted one by one in chain order; a block is
    inserted only if its parent is cached, and insertion stops when no
    unpinned leaf is left. Newly inserted blocks are not pinned (as in
    kvcache-simulator), so when a chain has more blocks than the cache can
    hold beside its pinned prefix, the newest block is evicted to make room
    for the next, that one then has no parent, and insertion stops: the cache
    keeps the chain's first C-1 blocks.
``tail-first`` -- vLLM's free-queue order, idealised (a finished request frees its blocks tail first)
    The block-level idealisation of vLLM's pool that the one-pass curve
    needs; ``simulate --eviction vllm`` runs the engine's pool exactly
    (:mod:`pyverify.cache.vllm`, which lists the differences). Evictable blocks wait in a queue; the front is evicted first. A hit takes
    a block out of the queue while the request runs; new blocks are in use
    too; when the request finishes, its blocks rejoin the queue's end in
    reverse chain order, so the tail is evicted first. Requests run one at a
    time. If a chain has more blocks than the cache, its first C are kept.
    The queue order is the priority (last request that used the block, deeper
    first), which makes this a stack algorithm with a one-pass curve
    (:mod:`pyverify.sim.engine_curves`). It equals ``leaf-lru`` on every
    request sequence in which no chain has more blocks than the cache (both
    evict the least recently used leaf; they differ only in what happens
    when a chain does not fit), which the tests check.

The compiled twin of both is :mod:`pyverify.cache.tree_kernel` (one queue
replays both: the argument is in its docstring); these classes stay its test oracle.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import Sequence

from pyverify.cache.protocol import BlockCache


class LeafFirstLRU(BlockCache):
    """``leaf-lru``: evict the least recently used unpinned block with no cached child.

    ``last_use`` holds every cached block's last touch (a counter that grows by
    one per touch, so no two blocks tie). Leaves wait in a heap keyed by last
    touch; an entry is stale (skipped) once its block has left, gained a
    child, or been touched again.
    """

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.last_use: dict[int, int] = {}
        self.parent: dict[int, int | None] = {}
        self.children: dict[int, int] = {}
        self.leaves: list[tuple[int, int]] = []
        self.clock = 0

    def blocks_held(self):
        return self.last_use

    def _touch(self, block: int) -> None:
        self.clock += 1
        self.last_use[block] = self.clock
        if self.children.get(block, 0) == 0:
            heapq.heappush(self.leaves, (self.clock, block))

    def _evict_leaf(self, pinned: set[int]) -> bool:
        skipped = []
        try:
            while self.leaves:
                entry = heapq.heappop(self.leaves)
                used, block = entry
                if self.last_use.get(block) != used or self.children.get(block, 0):
                    continue  # stale
                if block in pinned:
                    skipped.append(entry)
                    continue
                del self.last_use[block]
                parent = self.parent[block]
                if parent is not None:
                    self.children[parent] -= 1
                    if self.children[parent] == 0 and parent in self.last_use:
                        heapq.heappush(self.leaves, (self.last_use[parent], parent))
                return True
            return False
        finally:
            for entry in skipped:
                heapq.heappush(self.leaves, entry)

    def serve(self, chain: Sequence[int], hits: int) -> None:
        for block in chain[:hits]:
            self._touch(block)
        pinned = set(chain[:hits])
        for position in range(hits, len(chain)):
            block = chain[position]
            if block in self.last_use:
                continue  # cannot happen on a prefix-closed trace (the cached set is a prefix tree)
            if len(self.last_use) >= self.capacity and not self._evict_leaf(pinned):
                break
            parent = chain[position - 1] if position else None
            if parent is not None and parent not in self.last_use:
                break  # its parent was just evicted: the rest of the chain cannot attach
            self.parent[block] = parent
            if parent is not None:
                self.children[parent] = self.children.get(parent, 0) + 1
            self.children.setdefault(block, 0)
            self._touch(block)


class TailFirstFreeQueue(BlockCache):
    """``tail-first``: evict from the front of the free queue; a request frees its blocks tail first."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.cached: set[int] = set()
        self.free: OrderedDict[int, None] = OrderedDict()  # evictable blocks, next victim first

    def blocks_held(self):
        return self.cached

    def serve(self, chain: Sequence[int], hits: int) -> None:
        for block in chain[:hits]:
            self.free.pop(block, None)  # in use while the request runs (twice in one chain: once)
        held = hits
        for block in chain[hits:]:
            if block in self.cached:  # cannot happen on a prefix-closed trace
                self.free.pop(block, None)
            else:
                if len(self.cached) >= self.capacity:
                    if not self.free:
                        break  # every cached block is in use: the chain does not fit
                    victim, _ = self.free.popitem(last=False)
                    self.cached.remove(victim)
                self.cached.add(block)
            held += 1
        for block in reversed(chain[:held]):
            self.free[block] = None
