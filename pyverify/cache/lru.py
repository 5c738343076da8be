"""Chain-order LRU and FIFO at one capacity (``capacity`` counts blocks per cache).

``lru`` -- chain-order LRU, pyverify's original policy
    The hit prefix is touched root first, then each missing block is fetched
    (evicting the least recently used block). Within a request the root ends
    up *older* than its descendants, so a full cache evicts a parent before
    its child: the cached set need not be prefix-closed. Equal to a flat LRU
    over the block-by-block sequence (proof in :mod:`pyverify.sim.mrc`).
``fifo`` -- first in, first out
    Blocks leave in the order they entered. A block already held does not
    enter again: a held block after the first miss of a chain (its parent was
    evicted) keeps its entry time. This is kvcache-simulator's FIFO.

The compiled twin of both is :mod:`pyverify.cache.lru_kernel` (one kernel: they
differ in one test); these classes stay its test oracle.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

from pyverify.cache.protocol import BlockCache


class ChainOrderLRU(BlockCache):
    """``lru``: touch the hit prefix root first, then fetch each later block."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: OrderedDict[int, None] = OrderedDict()  # least recent first

    def blocks_held(self):
        return self.order

    def serve(self, chain: Sequence[int], hits: int) -> None:
        order = self.order
        for block in chain[:hits]:
            order.move_to_end(block)
        for block in chain[hits:]:
            if block in order:  # held, but after the first missing block: refetched, refreshed
                order.move_to_end(block)
                continue
            if len(order) >= self.capacity:
                order.popitem(last=False)
            order[block] = None


class FifoCache(BlockCache):
    """``fifo``: evict the block that entered first; a held block never re-enters."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: OrderedDict[int, None] = OrderedDict()  # oldest entry first

    def blocks_held(self):
        return self.order

    def serve(self, chain: Sequence[int], hits: int) -> None:
        order = self.order
        for block in chain[hits:]:
            if block in order:
                continue
            if len(order) >= self.capacity:
                order.popitem(last=False)
            order[block] = None
