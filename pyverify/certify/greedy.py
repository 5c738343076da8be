"""Greedy (online, non-clairvoyant) runs to compare with the certified optimum.

``lru``
    The project's simulator (:func:`pyverify.sim.simulate.simulate`) with LRU
    eviction: on a miss with a full cache, drop the least recently used block.
``most-frequent``
    Keep the most popular blocks: after each request, the cache keeps the
    ``C`` blocks, among those it held and those the request fetched, that are
    requested most often through this cache over the whole trace (ties: the
    most recently used, then the shallower). A static, frequency-based
    placement; a heap of ranks makes it O(log C) per block reference.

Each returns a run's hit counts; :func:`run_of` adds the canonical residency
schedule (:func:`.placement.canonical_schedule`), which is legal whenever the
greedy's own residency was (lemma in :mod:`.placement`), so the checker can
replay the greedy run like any witness.
"""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Callable

from pyverify.certify.placement import PER_HOST, Problem, canonical_schedule
from pyverify.sim.simulate import LRU, simulate


def lru(problem: Problem) -> tuple[int, ...]:
    model_routing = problem.cache_of if problem.model == PER_HOST else None
    return simulate(
        problem.chains, model_routing, problem.model, capacity=problem.capacity, eviction=LRU
    ).hit_blocks


def most_frequent(problem: Problem) -> tuple[int, ...]:
    popularity = Counter(
        (q, b) for q, chain in zip(problem.cache_of, problem.chains) for b in chain
    )
    held: dict[int, dict[int, tuple]] = {}  # cache -> {block: its current rank}
    weakest: dict[
        int, list[tuple]
    ] = {}  # cache -> min-heap of (rank, block), stale entries skipped
    hit_blocks = []
    for t, (chain, q) in enumerate(zip(problem.chains, problem.cache_of)):
        cache = held.setdefault(q, {})
        heap = weakest.setdefault(q, [])
        h = 0
        while h < len(chain) and chain[h] in cache:
            h += 1
        hit_blocks.append(h)
        for depth, b in enumerate(chain):
            # Rank: popularity, then recency, then shallower first (so ties keep a chain's prefix).
            rank = (popularity[(q, b)], t, -depth)
            cache[b] = rank
            heapq.heappush(heap, (rank, b))
        while problem.capacity is not None and len(cache) > problem.capacity:
            rank, b = heapq.heappop(heap)
            if cache.get(b) == rank:
                del cache[b]
        if len(heap) > 4 * len(cache) + 64:
            heap[:] = [(rank, b) for b, rank in cache.items()]
            heapq.heapify(heap)
    return tuple(hit_blocks)


POLICIES: dict[str, Callable[[Problem], tuple[int, ...]]] = {
    "lru": lru,
    "most-frequent": most_frequent,
}
DESCRIPTIONS = {
    "lru": "on a miss with a full cache, evict the least recently used block (pyverify.sim.simulate)",
    "most-frequent": "keep the blocks requested most often over the whole trace (ties: most recently used)",
}


def run_of(problem: Problem, hit_blocks: tuple[int, ...]) -> dict:
    """A run in certificate form: cache read, hit counts, canonical residency."""
    return {
        "cache_of": list(problem.cache_of),
        "hit_blocks": list(hit_blocks),
        "dropped": canonical_schedule(problem.chains, problem.cache_of, hit_blocks),
    }
