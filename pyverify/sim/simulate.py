"""Demand-cache runs: pooled or per-host, uncapacitated or capacitated.

Semantics (DESIGN.md, "Model and semantics"), one definition used everywhere:

* Every cache starts empty and gains a block only by missing on it.
* A request reads exactly one cache: the pool (``pooled``) or its own host's
  cache (``per-host``). It hits on the longest prefix of its chain present in
  that cache; every later block of the chain is a miss, fetched and then held
  (if a capacity is set, the eviction policy makes room first).
* Counting is in blocks: hit rate = hits / block references.

Each run returns its witness (:class:`Run`): per request, which cache it read
and how many leading blocks hit. :mod:`pyverify.trusted.check` replays witnesses
without calling this module.

The functions at the end of this module (:func:`distinct_count`,
:func:`pooled_misses`, :func:`per_host_misses`, :func:`distinct_pairs`,
:func:`openings_of`, :func:`demand_misses`, :func:`demand_valid`) mirror the
Lean definitions of the same names in ``lean/PrefixPool/`` (``Pooled.lean``,
``PerHost.lean``), which the theorems ``pooled_misses_eq_distinct``,
``demand_misses_ge_distinct``, ``per_host_misses_eq_sum`` and
``per_host_ge_pooled`` are about. Lean's requests are openings (chains of
length one): Lean's ``pooled_misses rs`` is ``pooled_misses([[r] for r in rs])``
here, and Lean's ``per_host_misses`` over ``(host, opening)`` pairs is
``per_host_misses([[o] for h, o in rs], [h for h, o in rs])``.

For block chains, ``lean/PrefixPool/Blocks.lean`` mirrors this module's
chain-based functions: Lean's ``pooled_block_misses chains`` is
``pooled_misses(chains)``, ``distinct_blocks chains`` is
``distinct_count(chains)``, and ``prefix_closed chains`` holds exactly when
``pyverify.inputs.model.first_prefix_violation(chains) is None`` (theorem
``pooled_block_misses_eq_distinct``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

from pyverify.sim.kernels import REPLAY_BREAK_EVEN, use_kernels

POOLED = "pooled"
PER_HOST = "per-host"
MODELS = (POOLED, PER_HOST)

LRU = "lru"
FIFO = "fifo"
EVICTIONS = (LRU, FIFO)


@dataclass(frozen=True)
class Run:
    """The outcome of one demand-cache run, with its witness.

    ``cache_of[i]`` is the cache request i read (0 for the pool, the host id for
    per-host caches); ``hit_blocks[i]`` is how many leading blocks of request
    i's chain hit. Everything else is derived from these two and the chains.
    """

    model: str
    capacity: int | None
    eviction: str | None
    cache_of: tuple[int, ...]
    hit_blocks: tuple[int, ...]
    references: int

    @property
    def hits(self) -> int:
        return sum(self.hit_blocks)

    @property
    def misses(self) -> int:
        return self.references - self.hits

    @property
    def hit_rate(self) -> float:
        return self.hits / self.references if self.references else 0.0

    def witness(self) -> dict[str, Any]:
        """The witness in certificate form: enough for a checker to replay the run."""
        return {"cache_of": list(self.cache_of), "hit_blocks": list(self.hit_blocks)}


def caches_read(model: str, routing: Sequence[int] | None, n_requests: int) -> tuple[int, ...]:
    """Which cache each request reads under ``model``."""
    if model == POOLED:
        return (0,) * n_requests
    if model == PER_HOST:
        if routing is None:
            raise ValueError("per-host runs need a routing")
        return tuple(routing)
    raise ValueError(f"unknown cache model {model!r}; expected one of {MODELS}")


def simulate(
    chains: Sequence[Sequence[int]],
    routing: Sequence[int] | None,
    model: str,
    capacity: int | None = None,
    eviction: str = LRU,
) -> Run:
    """Run demand caches that start empty over ``chains``.

    ``capacity`` is the per-cache limit in blocks (``None``: uncapacitated).
    ``eviction`` is ``"lru"`` or ``"fifo"`` and matters only with a capacity.
    """
    if capacity is not None and capacity < 1:
        raise ValueError("capacity must be at least 1 block")
    if eviction not in EVICTIONS:
        raise ValueError(f"unknown eviction policy {eviction!r}; expected one of {EVICTIONS}")
    cache_of = caches_read(model, routing, len(chains))
    references = sum(len(chain) for chain in chains)
    if capacity is None:
        hit_blocks = _uncapacitated_hits(chains, cache_of)
    elif use_kernels(references, REPLAY_BREAK_EVEN):  # same moves, compiled (pyverify.sim.kernels.replay)
        from pyverify.sim.kernels.replay import capacitated_hits

        hit_blocks = capacitated_hits(chains, cache_of, capacity, lru=eviction == LRU)
    else:
        hit_blocks = _capacitated_hits(chains, cache_of, capacity, eviction)
    return Run(
        model=model,
        capacity=capacity,
        eviction=eviction if capacity is not None else None,
        cache_of=cache_of,
        hit_blocks=tuple(hit_blocks),
        references=references,
    )


def _uncapacitated_hits(chains: Sequence[Sequence[int]], cache_of: Sequence[int]) -> list[int]:
    held: dict[int, set[int]] = {}
    hit_blocks = []
    for chain, cache_id in zip(chains, cache_of):
        cache = held.setdefault(cache_id, set())
        hits = 0
        for block in chain:
            if block not in cache:
                break
            hits += 1
        cache.update(chain[hits:])
        hit_blocks.append(hits)
    return hit_blocks


def _capacitated_hits(
    chains: Sequence[Sequence[int]], cache_of: Sequence[int], capacity: int, eviction: str
) -> list[int]:
    # The reference implementation: pyverify.sim.kernels.replay compiles the
    # same moves and is tested against this function.
    # An OrderedDict is kept oldest-first: insertion order for FIFO, recency
    # order for LRU (a hit moves the block to the end).
    held: dict[int, OrderedDict[int, None]] = {}
    hit_blocks = []
    for chain, cache_id in zip(chains, cache_of):
        cache = held.setdefault(cache_id, OrderedDict())
        hits = 0
        for block in chain:
            if block not in cache:
                break
            hits += 1
        if eviction == LRU:
            for block in chain[:hits]:
                cache.move_to_end(block)
        for block in chain[hits:]:
            if block in cache:  # held, but after the first missing block: refetched, refreshed
                cache.move_to_end(block)
                continue
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
        hit_blocks.append(hits)
    return hit_blocks


# --- uncapacitated counters mirrored in Lean ---------------------------------


def distinct_count(chains: Sequence[Sequence[int]]) -> int:
    """Number of distinct block ids (distinct openings when chains have length 1)."""
    return len({block for chain in chains for block in chain})


def pooled_misses(chains: Sequence[Sequence[int]]) -> int:
    """Misses of the uncapacitated pooled demand cache that starts empty."""
    return simulate(chains, None, POOLED).misses


def per_host_misses(chains: Sequence[Sequence[int]], routing: Sequence[int]) -> int:
    """Misses of uncapacitated per-host demand caches that start empty."""
    return simulate(chains, routing, PER_HOST).misses


def distinct_pairs(requests: Sequence[tuple[int, int]]) -> int:
    """Number of distinct ``(host, opening)`` pairs: per-host uncapacitated misses."""
    return len(set(requests))


def openings_of(host: int, requests: Sequence[tuple[int, int]]) -> list[int]:
    """The openings ``host`` is asked for, in request order."""
    return [opening for request_host, opening in requests if request_host == host]


def demand_misses(run: Sequence[tuple[int, Sequence[int]]]) -> int:
    """Misses of a demand-cache run given as ``(opening, held_before)`` steps:
    a step misses when its opening is not held just before it."""
    return sum(1 for opening, held in run if opening not in held)


def demand_valid(run: Sequence[tuple[int, Sequence[int]]]) -> bool:
    """A run of a demand cache that starts empty: before each request the
    cache holds only openings requested at earlier steps."""
    earlier: set[int] = set()
    for opening, held in run:
        if not set(held) <= earlier:
            return False
        earlier.add(opening)
    return True
