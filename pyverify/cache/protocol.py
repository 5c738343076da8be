"""What every block cache answers, whatever its eviction policy.

Each cache answers two questions per request: how many leading blocks of the
chain it holds (``prefix_hits``, no side effects), and what it holds afterwards
(``serve``). The prefix-affinity router (:mod:`pyverify.sim.routing`) asks every
host's cache the first question and the chosen host the second, so routing and
replay share one definition.
"""

from __future__ import annotations

from typing import Sequence


class BlockCache:
    """A demand cache of ``capacity`` blocks that hits on the longest held prefix."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    def __contains__(self, block: int) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def prefix_hits(self, chain: Sequence[int]) -> int:
        hits = 0
        for block in chain:
            if block not in self:
                break
            hits += 1
        return hits

    def serve(self, chain: Sequence[int], hits: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
