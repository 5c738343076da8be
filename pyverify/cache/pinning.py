"""Caches that keep a running request's blocks: the GPU caches of a timed ``replay``.

With timing, several requests run on a host at once (:mod:`pyverify.fleet.replay`). The blocks
a running request holds (hit or computed) are *pinned*: counted in ``pins`` from its
:meth:`Pinning.start` until its :meth:`Pinning.finish`, and eviction skips them. With nothing
pinned the caches are exactly simulate's (:mod:`pyverify.cache.lru`, :mod:`pyverify.cache.tree`),
so a replay with one request at a time is ``simulate --model per-host``.

* ``lru`` and ``fifo`` evict with ``order.popitem(last=False)``; here ``order`` is a
  :class:`_PinAwareOrder`, whose ``popitem`` from the front returns the oldest *unpinned* block.
* ``leaf-lru`` already skips the running request's own hit prefix (``_evict_leaf(pinned)``);
  here it also skips every other running request's blocks (and so their ancestors, which have
  cached children).

A request starts only when the blocks pinned by the running ones and its own chain fit in the
capacity (:meth:`Pinning.fits`); with nothing running it always starts, as simulate serves a
chain longer than the cache.

No kernel beside it: pins live in the replay's compiled event loop
(:mod:`pyverify.fleet.kernel`), which keeps every host's cache in shared arrays
and is tested against these classes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

from pyverify.cache.lru import ChainOrderLRU, FifoCache
from pyverify.cache.names import FIFO, LEAF_LRU, LRU
from pyverify.cache.tree import LeafFirstLRU


class AllPinned(RuntimeError):
    """Every cached block is pinned; admission (:meth:`Pinning.fits`) should have prevented this."""


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


class Pinning:
    """Pin counts and the start/finish of :mod:`pyverify.cache.protocol`, over a block cache's own moves."""

    pins: dict[int, int]
    running: int

    def start(
        self, index: int, chain: Sequence[int], tokens: int | None
    ) -> tuple[int, list[int]] | None:
        """Serve the chain and pin its cached blocks: ``(hit blocks, the pinned blocks)``; ``None``
        (nothing changed) while others run and the chain does not fit beside their pins."""
        if self.running and not self.fits(chain):
            return None
        hits = self.prefix_hits(chain)
        self.serve(chain, hits)
        self.running += 1
        return hits, self.pin(chain)

    def finish(self, held: list[int]) -> None:
        self.unpin(held)
        self.running -= 1

    def pin(self, chain: Sequence[int]) -> list[int]:
        """Pin the chain's blocks that are cached now; return them (to :meth:`unpin` later)."""
        cached = self.blocks_held()
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
        pinned, so it is not cached). The caller adds it to the request's handle, so that
        :meth:`finish` unpins it."""
        order = self.order
        if len(order) >= self.capacity:
            if len(order) <= len(self.pins):
                return False
            order.popitem(last=False)
        order[block] = None
        self.pins[block] = self.pins.get(block, 0) + 1
        return True


class PinnedLRU(Pinning, ChainOrderLRU):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.pins, self.running = {}, 0
        self.order = _PinAwareOrder(self.pins)


class PinnedFifo(Pinning, FifoCache):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.pins, self.running = {}, 0
        self.order = _PinAwareOrder(self.pins)


class PinnedLeafLRU(Pinning, LeafFirstLRU):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.pins, self.running = {}, 0

    def _evict_leaf(self, pinned: set[int]) -> bool:
        return super()._evict_leaf(_Either(pinned, self.pins) if self.pins else pinned)

    def keep_generated(self, block, parent) -> bool:
        """As :meth:`Pinning.keep_generated`, as a child of ``parent`` (which must be cached)."""
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


#: The policies a cache with pins offers (the engines' caches keep their own blocks in use).
PINNED_CACHES = {LRU: PinnedLRU, FIFO: PinnedFifo, LEAF_LRU: PinnedLeafLRU}
