"""The cache an eviction policy's name stands for: a block cache, or a serving engine's own."""

from __future__ import annotations

from pyverify.cache.lru import ChainOrderLRU, FifoCache
from pyverify.cache.names import (
    ENGINE_EVICTIONS,
    EVICTIONS,
    FIFO,
    LEAF_LRU,
    LRU,
    SGLANG,
    SGLANG_FIFO,
    TAIL_FIRST,
    VLLM,
)
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


def engine_cache(
    eviction: str, capacity: int | None, block_size: int, page_size: int | None = None
):
    """A serving engine's own cache (``eviction`` in :data:`ENGINE_EVICTIONS`): ``capacity`` blocks
    of ``block_size`` tokens (SGLang: in pages of ``page_size`` tokens; ``None``: one block)."""
    # Imported here: the engines' models are read only by the runs that use them.
    from pyverify.cache.sglang import SglangGpu
    from pyverify.cache.vllm import VllmGpu

    if capacity is None:
        raise ValueError(f"the {eviction} engine needs a capacity (its pool size)")
    if eviction == VLLM:
        return VllmGpu(capacity, block_size)
    if eviction in (SGLANG, SGLANG_FIFO):
        return SglangGpu(capacity, block_size, page_size or block_size, eviction == SGLANG_FIFO)
    raise ValueError(f"unknown engine {eviction!r}; expected one of {ENGINE_EVICTIONS}")
