"""The two cache tiers of ``pyverify replay``: one GPU cache per host, and an optional shared pool.

GPU tier: simulate's own cache classes (``lru``, ``fifo`` and ``leaf-lru``) with the
blocks of running requests pinned (:mod:`pyverify.cache.pinning`), so a replay with one
request at a time is exactly ``simulate --model per-host``; or a serving engine's own cache
(``vllm``, ``sglang``, ``sglang-fifo``: :mod:`pyverify.cache.vllm`,
:mod:`pyverify.cache.sglang`), offered for the GPU tier alone. Every GPU cache is driven
through the one interface of :mod:`pyverify.cache.protocol`.

Lower tiers (:class:`LowerTier`): optionally a host-DRAM tier per host
(``--host-capacity``: LMCache's CPU backend, vLLM's CPU offloading, SGLang
HiCache's L2) and optionally one pool shared by every host (``--pool-capacity``:
Mooncake Store, LMCache's remote backend, HiCache's L3). Each is chain-order
LRU over blocks (simulate's ``lru`` class) or, uncapacitated, a set.
Movement rules, applied when a request starts, tier by tier downwards:

1. the GPU hits on the longest cached prefix of the chain (``g`` blocks);
2. the host tier is asked for the longest run of the chain's next blocks it
   holds (``h`` blocks): host hits, loaded host -> GPU;
3. the pool is asked for the longest run of the blocks after those (``p``):
   pool hits, loaded pool -> GPU;
4. the rest are recomputed on the host;
5. every tier that was asked keeps what it was asked for (write-through,
   inclusive): its hits are touched (most recently used), the blocks it
   lacked are written to it (pool hits and recomputed blocks go GPU -> host
   tier, recomputed blocks GPU -> pool, even when a tier held a copy it could
   not serve because an earlier block was missing); a tier is never asked
   for the blocks a tier above it served;
6. the GPU then inserts every block after its own prefix (loaded or
   computed), exactly as simulate inserts a miss, so inserting may evict.
   A GPU eviction writes nothing (its block was written through already).

Because the GPU's own choices never depend on the tiers below it, adding a
lower tier leaves the GPU hits of a one-at-a-time replay unchanged, and a
host tier's hits do not depend on whether a pool is below it. With timing
they can change: faster prefills move start times, pins and, under a
load-aware router, routing (``tests/test_replay_tiers.py``).

A block is in every tier from the moment the request that brings it starts:
a later request is served as if that KV were ready (prefill is not waited on).
"""

from __future__ import annotations

from typing import Sequence

from pyverify.cache.lru import ChainOrderLRU
from pyverify.cache.names import FIFO, LEAF_LRU, LRU
from pyverify.cache.pinning import PINNED_CACHES
from pyverify.cache.protocol import run_in, serve_alone
from pyverify.cache.unbounded import Unbounded

#: Eviction policies a timed replay offers (the engines' own caches: :data:`pyverify.cache.names.ENGINE_EVICTIONS`).
REPLAY_EVICTIONS = (LRU, FIFO, LEAF_LRU)


def gpu_cache(capacity: int | None, eviction: str):
    """One host's GPU cache: ``capacity`` blocks (None: unlimited) under ``eviction``, pins kept."""
    if capacity is None:
        return Unbounded()
    if eviction not in PINNED_CACHES:
        raise ValueError(f"replay offers eviction {', '.join(REPLAY_EVICTIONS)}, not {eviction!r}")
    return PINNED_CACHES[eviction](capacity)


class LowerTier:
    """A host-DRAM or pool tier: LRU of ``capacity`` blocks, or unlimited (``None``)."""

    def __init__(self, capacity: int | None) -> None:
        self.capacity = capacity
        self.cache = Unbounded() if capacity is None else ChainOrderLRU(capacity)

    def read_and_write(self, rest: Sequence[int]) -> int:
        """The blocks the tiers above did not serve: how many leading ones this tier serves.

        Those are touched (most recently used); the others are written (rules 1-5 above).
        """
        return serve_alone(self.cache, 0, rest, None)


class LocalTiers:
    """What a router sees of one host with a host-DRAM tier: the prefix its GPU and DRAM serve together."""

    def __init__(self, gpu, dram: LowerTier) -> None:
        self.gpu, self.dram = gpu, dram

    def prefix_hits(self, chain: Sequence[int]) -> int:
        return run_in(self.dram.cache.blocks_held(), chain, self.gpu.prefix_hits(chain))
