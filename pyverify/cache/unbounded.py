"""An uncapacitated cache: a set of blocks; nothing is ever evicted.

No kernel beside it: with nothing to evict, a run's hits are counted without replaying it
(:mod:`pyverify.sim.counting`: the distinct blocks, on a prefix-closed trace).
"""

from __future__ import annotations

from typing import Sequence

from pyverify.cache.protocol import BlockCache


class Unbounded(BlockCache):
    """Every block fetched stays; so no request keeps another's blocks in use, and pinning is moot."""

    def __init__(self) -> None:
        super().__init__(None)
        self.held: set[int] = set()

    def blocks_held(self):
        return self.held

    def serve(self, chain: Sequence[int], hits: int) -> None:
        self.held.update(chain[hits:])

    def keep_generated(self, block, parent) -> bool:
        """Cache ``block``, a block of generated tokens (:meth:`pyverify.cache.pinning.Pinning.keep_generated`);
        ``False``: nothing to pin, since nothing is ever evicted."""
        self.held.add(block)
        return False
