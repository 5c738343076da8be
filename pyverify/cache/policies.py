"""The cache an eviction policy's name stands for."""

from __future__ import annotations

from pyverify.cache.lru import ChainOrderLRU, FifoCache
from pyverify.cache.names import EVICTIONS, FIFO, LEAF_LRU, LRU, TAIL_FIRST
from pyverify.cache.protocol import BlockCache
from pyverify.cache.tree import LeafFirstLRU, TailFirstFreeQueue

_CACHES = {
    LRU: ChainOrderLRU,
    FIFO: FifoCache,
    LEAF_LRU: LeafFirstLRU,
    TAIL_FIRST: TailFirstFreeQueue,
}


def new_cache(eviction: str, capacity: int) -> BlockCache:
    """An empty cache of ``capacity`` blocks under ``eviction``."""
    if eviction not in _CACHES:
        raise ValueError(f"unknown eviction policy {eviction!r}; expected one of {EVICTIONS}")
    return _CACHES[eviction](capacity)
