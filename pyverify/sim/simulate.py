"""Demand-cache runs: pooled or per-host, uncapacitated or capacitated.

Semantics (docs/explanation/model.md), one definition used everywhere:

* Every cache starts empty and gains a block only by missing on it.
* A request reads exactly one cache: the pool (``pooled``) or its own host's
  cache (``per-host``). It hits on the longest prefix of its chain present in
  that cache; every later block of the chain is a miss, fetched and then held
  (if a capacity is set, the eviction policy makes room first).
* Counting is in blocks: hit rate = hits / block references. Token-weighted
  figures and a measurement window are applied to a run's witness afterwards
  (:mod:`pyverify.sim.accounting`); the run itself does not depend on them.

Eviction policies (only with a capacity; ``capacity`` counts blocks per cache) are
the caches of :mod:`pyverify.cache`: ``lru`` and ``fifo`` (:mod:`pyverify.cache.lru`),
``leaf-lru`` and ``tail-first`` (:mod:`pyverify.cache.tree`), and the serving
engines' own caches ``vllm`` (:mod:`pyverify.cache.vllm`) and ``sglang``/``sglang-fifo``
(:mod:`pyverify.cache.sglang`). Every policy hits on the longest cached prefix; with
``leaf-lru`` and ``tail-first`` the cached set is always prefix-closed, so "cached" and
"hit" coincide.

Each run returns its witness (:class:`Run`): per request, which cache it read
and how many leading blocks hit. :mod:`pyverify.trusted.check` replays witnesses
without calling this module.

The functions at the end of this module (:func:`distinct_count`,
:func:`pooled_misses`, :func:`per_host_misses`, :func:`distinct_pairs`,
:func:`distinct_host_blocks`, :func:`openings_of`, :func:`demand_misses`,
:func:`demand_valid`) mirror the
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
``pooled_block_misses_eq_distinct``). In ``PerHostBlocks.lean`` and
``PerHostBlocksEq.lean`` a request is ``(host, chain)``: Lean's
``per_host_block_misses`` is ``per_host_misses(chains, routing)`` and
``distinct_host_blocks`` is ``distinct_host_blocks(chains, routing)``
(theorems ``per_host_blocks_ge_pooled`` and
``per_host_block_misses_eq_distinct_pairs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from pyverify.cache.protocol import hits_one_at_a_time
from pyverify.sim.kernels import (
    REPLAY_BREAK_EVEN,
    SGLANG_BREAK_EVEN,
    TREE_REPLAY_BREAK_EVEN,
    use_kernels,
)
from pyverify.sim.names import (  # noqa: F401 (the names, re-exported where they were defined)
    CHAIN_LRU,
    ENGINE_EVICTIONS,
    EVICTION_HELP,
    EVICTIONS,
    FIFO,
    LEAF_LRU,
    LRU,
    LRU_NAME,
    LRU_NOTE,
    MODELS,
    PER_HOST,
    POOLED,
    SGLANG,
    SGLANG_FIFO,
    TAIL_FIRST,
    VLLM,
)


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
    runs: int = 1,
    prompt_tokens: Sequence[int] | None = None,
    block_size: int | None = None,
    page_size: int | None = None,
) -> Run:
    """Run demand caches that start empty over ``chains``.

    ``capacity`` is the per-cache limit in blocks (``None``: uncapacitated).
    ``eviction`` is one of :data:`EVICTIONS` and matters only with a capacity,
    or one of :data:`ENGINE_EVICTIONS`, which needs one.
    ``runs``: how many runs over these chains the caller is making (one per
    budget, say). It only decides whether a compiled kernel repays its
    start-up (:mod:`pyverify.sim.kernels`); the result is the same.

    The engines (:data:`ENGINE_EVICTIONS`) also read ``prompt_tokens`` (each
    prompt's length; ``None``: every block full) and ``block_size`` (tokens
    per block; ``None``: unknown, every block full, so one unit per block),
    and SGLang ``page_size`` (tokens; ``None``: the block size).
    """
    if capacity is not None and capacity < 1:
        raise ValueError("capacity must be at least 1 block")
    if eviction not in EVICTIONS + ENGINE_EVICTIONS:
        raise ValueError(
            f"unknown eviction policy {eviction!r}; expected one of {EVICTIONS + ENGINE_EVICTIONS}"
        )
    cache_of = caches_read(model, routing, len(chains))
    references = sum(len(chain) for chain in chains)
    work = references * runs
    if eviction in ENGINE_EVICTIONS:
        if capacity is None:
            raise ValueError(f"the {eviction} engine needs a capacity (its pool size)")
        hit_blocks = engine_hits(
            chains, cache_of, capacity, eviction, prompt_tokens, block_size, page_size, runs
        )[0]
    elif capacity is None:
        hit_blocks = _uncapacitated_hits(chains, cache_of)
    else:
        hit_blocks = None
        if eviction in (LRU, FIFO) and use_kernels(work, REPLAY_BREAK_EVEN):
            from pyverify.cache.lru_kernel import capacitated_hits  # same moves, compiled

            hit_blocks = capacitated_hits(chains, cache_of, capacity, lru=eviction == LRU)
        elif eviction in (LEAF_LRU, TAIL_FIRST) and use_kernels(work, TREE_REPLAY_BREAK_EVEN):
            from pyverify.cache.tree_kernel import tree_hits

            hit_blocks = tree_hits(chains, cache_of, capacity, eviction)
        if hit_blocks is None:  # no kernel, or one that declined these chains
            hit_blocks = _capacitated_hits(chains, cache_of, capacity, eviction)
    return Run(
        model=model,
        capacity=capacity,
        eviction=eviction if capacity is not None else None,
        cache_of=cache_of,
        hit_blocks=tuple(hit_blocks),
        references=references,
    )


def engine_hits(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int],
    capacity: int,
    eviction: str,
    prompt_tokens: Sequence[int] | None = None,
    block_size: int | None = None,
    page_size: int | None = None,
    runs: int = 1,
) -> tuple[list[int], list[int]]:
    """Hit blocks per request under a serving engine's own cache, and the requests it would never schedule.

    Without a block size the chains' blocks are taken as full blocks of one
    unit each (the engines' rules then depend only on block counts).
    Above a size (``runs`` calls together, as for :func:`simulate`) the
    engines run as compiled kernels (:mod:`pyverify.sim.kernels`): the same
    moves, the same results.
    """
    from pyverify.cache.policies import engine_cache
    from pyverify.cache.prompts import full_blocks

    size = block_size or 1
    if prompt_tokens is None or block_size is None:
        prompt_tokens = [len(chain) * size for chain in chains]
    # A trace that names a partial last block (Mooncake's hash_ids do): the engine never hashes it.
    chains = [
        full_blocks(index, chain, tokens, size)
        for index, (chain, tokens) in enumerate(zip(chains, prompt_tokens, strict=True))
    ]
    work = sum(map(len, chains)) * runs
    compiled = None
    if eviction == VLLM and use_kernels(work, TREE_REPLAY_BREAK_EVEN):  # the same moves, compiled
        from pyverify.cache.vllm_kernel import vllm_kernel_hits

        compiled = vllm_kernel_hits(chains, prompt_tokens, cache_of, capacity, size)
    elif eviction in (SGLANG, SGLANG_FIFO) and use_kernels(work, SGLANG_BREAK_EVEN):
        from pyverify.cache.sglang_kernel import sglang_kernel_hits

        policy = "fifo" if eviction == SGLANG_FIFO else "lru"
        compiled = sglang_kernel_hits(
            chains, prompt_tokens, cache_of, capacity, size, page_size or size, policy
        )
    if compiled is not None:
        return compiled
    return hits_one_at_a_time(
        chains, cache_of, lambda: engine_cache(eviction, capacity, size, page_size), prompt_tokens
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
    # The reference implementation: pyverify.cache.lru_kernel compiles the
    # same moves for lru and fifo, pyverify.cache.tree_kernel for
    # leaf-lru and tail-first; both are tested against this function.
    from pyverify.cache.policies import new_cache

    return hits_one_at_a_time(chains, cache_of, lambda: new_cache(eviction, capacity))[0]


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


def distinct_host_blocks(chains: Sequence[Sequence[int]], routing: Sequence[int]) -> int:
    """Number of distinct ``(host, block)`` pairs over routed chains (Lean:
    ``distinct_host_blocks``, ``lean/PrefixPool/PerHostBlocksEq.lean``): on
    prefix-closed chains, the per-host uncapacitated misses."""
    return len(
        {(host, block) for chain, host in zip(chains, routing, strict=True) for block in chain}
    )


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
