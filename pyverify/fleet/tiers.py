"""The two cache tiers of ``pyverify replay``: one GPU cache per host, and an optional shared pool.

GPU tier: simulate's own cache classes (:mod:`pyverify.cache.lru`, :mod:`pyverify.cache.tree`; ``lru``,
``fifo`` and ``leaf-lru``), so a replay with one request at a time is
exactly ``simulate --model per-host``. What is added is *pinning*: the blocks
a running request holds (hit or computed) are counted in ``pins`` until it
ends, and eviction skips them. With nothing pinned the caches are unchanged.

* ``lru`` and ``fifo`` evict with ``order.popitem(last=False)``; here
  ``order`` is an :class:`_PinAwareOrder`, whose ``popitem`` from the front
  returns the oldest *unpinned* block.
* ``leaf-lru`` already skips the running request's own hit prefix
  (``_evict_leaf(pinned)``); here it also skips every other running
  request's blocks (and so their ancestors, which have cached children).

The engine-exact evictions (``vllm``, ``sglang``, ``sglang-fifo``) are not
here: their reference models serve one request at a time, so the replay runs
them without timing and without lower tiers (:mod:`pyverify.fleet.engine_caches`).

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

from collections import OrderedDict
from typing import Sequence

from pyverify.cache.lru import ChainOrderLRU, FifoCache
from pyverify.cache.names import FIFO, LEAF_LRU, LRU
from pyverify.cache.tree import LeafFirstLRU

#: Eviction policies a timed replay offers (the engines' models serve one request at a time: engine_caches).
REPLAY_EVICTIONS = (LRU, FIFO, LEAF_LRU)


def run_in(held, chain: Sequence[int], start: int) -> int:
    """``start`` plus the length of the run of ``chain[start:]`` whose blocks are all keys of ``held``."""
    end = start
    for block in chain[start:] if start else chain:
        if block not in held:
            break
        end += 1
    return end


class AllPinned(RuntimeError):
    """Every cached block is pinned; admission control (:meth:`GpuTier.fits`) should have prevented this."""


class _PinAwareOrder(OrderedDict):
    """An ``OrderedDict`` whose ``popitem(last=False)`` skips keys pinned in ``pins``."""

    def __init__(self, pins: dict[int, int]) -> None:
        super().__init__()
        self.pins = pins

    def popitem(self, last: bool = True):
        if last or not self.pins:
            return super().popitem(last)
        for key in self:
            if key not in self.pins:
                del self[key]
                return key, None
        raise AllPinned("every cached block is pinned by a running request")


class _Either:
    """Membership in either of two containers (the request's own pins and every running request's)."""

    def __init__(self, first, second) -> None:
        self.first, self.second = first, second

    def __contains__(self, item) -> bool:
        return item in self.first or item in self.second


class _Pinning:
    """Pin counts shared by the GPU cache classes below."""

    pins: dict[int, int]

    def _held(self):
        """The container whose keys are the cached blocks (membership without a Python-level ``__contains__``)."""
        return self.order

    def prefix_hits(self, chain: Sequence[int]) -> int:
        """simulate's ``prefix_hits``, read straight from the container: the replay's hottest loop."""
        return run_in(self._held(), chain, 0)

    def pin(self, chain: Sequence[int]) -> list[int]:
        """Pin the chain's blocks that are cached now; return them (to :meth:`unpin` later)."""
        cached = self._held()
        held = [block for block in chain if block in cached]
        pins = self.pins
        for block in held:
            pins[block] = pins.get(block, 0) + 1
        return held

    def unpin(self, held: Sequence[int]) -> None:
        pins = self.pins
        for block in held:
            count = pins[block] - 1
            if count:
                pins[block] = count
            else:
                del pins[block]

    def fits(self, chain: Sequence[int]) -> bool:
        """Whether the pinned blocks and this chain together fit in the capacity."""
        pins = self.pins
        extra = len({block for block in chain if block not in pins})
        return len(pins) + extra <= self.capacity

    def keep_generated(self, block, parent) -> bool:
        """Cache ``block``, a block of generated tokens that follows ``parent`` in its chain (the step model's
        decode KV), pinned as the request's other blocks; whether it was (``False``: every cached block is
        pinned, so it is not cached)."""
        order = self.order
        if len(order) >= self.capacity:
            if len(order) <= len(self.pins):
                return False
            order.popitem(last=False)
        order[block] = None
        self.pins[block] = self.pins.get(block, 0) + 1
        return True


class PinnedLRU(_Pinning, ChainOrderLRU):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.pins = {}
        self.order = _PinAwareOrder(self.pins)


class PinnedFifo(_Pinning, FifoCache):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.pins = {}
        self.order = _PinAwareOrder(self.pins)


class PinnedLeafLRU(_Pinning, LeafFirstLRU):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.pins = {}

    def _held(self):
        return self.last_use

    def _evict_leaf(self, pinned: set[int]) -> bool:
        return super()._evict_leaf(_Either(pinned, self.pins) if self.pins else pinned)

    def keep_generated(self, block, parent) -> bool:
        """As :meth:`_Pinning.keep_generated`, as a child of ``parent`` (which must be cached)."""
        if parent is not None and parent not in self.last_use:
            return False
        if len(self.last_use) >= self.capacity and not self._evict_leaf(set()):
            return False
        self.parent[block] = parent
        if parent is not None:
            self.children[parent] = self.children.get(parent, 0) + 1
        self.children.setdefault(block, 0)
        self._touch(block)
        self.pins[block] = self.pins.get(block, 0) + 1
        return True


class Unbounded:
    """An uncapacitated cache: a set; nothing is ever evicted, so pinning is moot."""

    def __init__(self) -> None:
        self.held: set[int] = set()

    def __contains__(self, block: int) -> bool:
        return block in self.held

    def prefix_hits(self, chain: Sequence[int]) -> int:
        held, hits = self.held, 0
        for block in chain:
            if block not in held:
                break
            hits += 1
        return hits

    def serve(self, chain: Sequence[int], hits: int) -> None:
        self.held.update(chain[hits:])

    def pin(self, chain: Sequence[int]) -> list[int]:
        return []

    def unpin(self, held: Sequence[int]) -> None:
        pass

    def fits(self, chain: Sequence[int]) -> bool:
        return True

    def keep_generated(self, block, parent) -> bool:
        self.held.add(block)
        return False  # nothing to pin: nothing is ever evicted


_GPU_CACHES = {LRU: PinnedLRU, FIFO: PinnedFifo, LEAF_LRU: PinnedLeafLRU}


def gpu_cache(capacity: int | None, eviction: str):
    """One host's GPU cache: ``capacity`` blocks (None: unlimited) under ``eviction``."""
    if capacity is None:
        return Unbounded()
    if eviction not in _GPU_CACHES:
        raise ValueError(f"replay offers eviction {', '.join(REPLAY_EVICTIONS)}, not {eviction!r}")
    return _GPU_CACHES[eviction](capacity)


class LowerTier:
    """A host-DRAM or pool tier: LRU of ``capacity`` blocks, or unlimited (``None``)."""

    def __init__(self, capacity: int | None) -> None:
        self.capacity = capacity
        self.cache = Unbounded() if capacity is None else ChainOrderLRU(capacity)

    def read_and_write(self, rest: Sequence[int]) -> int:
        """The blocks the tiers above did not serve: how many leading ones this tier serves.

        Those are touched (most recently used); the others are written (rules 1-5 above).
        """
        cache = self.cache
        hits = run_in(cache.held if isinstance(cache, Unbounded) else cache.order, rest, 0)
        cache.serve(rest, hits)
        return hits


class LocalTiers:
    """What a router sees of one host with a host-DRAM tier: the prefix its GPU and DRAM serve together."""

    def __init__(self, gpu, dram: LowerTier) -> None:
        self.gpu, self.dram = gpu, dram

    def prefix_hits(self, chain: Sequence[int]) -> int:
        cache = self.dram.cache
        return run_in(
            cache.held if isinstance(cache, Unbounded) else cache.order,
            chain,
            self.gpu.prefix_hits(chain),
        )
