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

Eviction policies (only with a capacity; ``capacity`` counts blocks per cache):

``lru`` -- chain-order LRU, pyverify's original policy
    The hit prefix is touched root first, then each missing block is fetched
    (evicting the least recently used block). Within a request the root ends
    up *older* than its descendants, so a full cache evicts a parent before
    its child: the cached set need not be prefix-closed. Equal to a flat LRU
    over the block-by-block sequence (proof in :mod:`pyverify.sim.mrc`).
``fifo`` -- first in, first out
    Blocks leave in the order they entered. A block already held does not
    enter again: a held block after the first miss of a chain (its parent was
    evicted) keeps its entry time. This is kvcache-simulator's FIFO.
``leaf-lru`` -- leaf-first LRU (kvcache-simulator's LRU: its idealisation of SGLang's radix cache)
    SGLang without the differences :mod:`pyverify.sim.sglang_radix` lists
    (points 1-4: the ``input_len - 1`` limit, whole-node eviction, the split
    remainder's refresh, the extra page); ``--eviction sglang`` is the exact cache.
    Evict the least recently used block *that has no cached child*, so the
    cached set stays a prefix tree. The request's hit prefix is pinned while
    its missing blocks are inserted one by one in chain order; a block is
    inserted only if its parent is cached, and insertion stops when no
    unpinned leaf is left. Newly inserted blocks are not pinned (as in
    kvcache-simulator), so when a chain has more blocks than the cache can
    hold beside its pinned prefix, the newest block is evicted to make room
    for the next, that one then has no parent, and insertion stops: the cache
    keeps the chain's first C-1 blocks.
``tail-first`` -- vLLM's free-queue order, idealised (a finished request frees its blocks tail first)
    The block-level idealisation of vLLM's pool that the one-pass curve
    needs; ``simulate --eviction vllm`` runs the engine's pool exactly
    (:mod:`pyverify.sim.vllm_pool`, which lists the differences). Evictable blocks wait in a queue; the front is evicted first. A hit takes
    a block out of the queue while the request runs; new blocks are in use
    too; when the request finishes, its blocks rejoin the queue's end in
    reverse chain order, so the tail is evicted first. Requests run one at a
    time. If a chain has more blocks than the cache, its first C are kept.
    The queue order is the priority (last request that used the block, deeper
    first), which makes this a stack algorithm with a one-pass curve
    (:mod:`pyverify.sim.tail_first_mrc`). It equals ``leaf-lru`` on every
    request sequence in which no chain has more blocks than the cache (both
    evict the least recently used leaf; they differ only in what happens
    when a chain does not fit), which the tests check.

Every policy hits on the longest cached prefix; with ``leaf-lru`` and ``tail-first``
the cached set is always prefix-closed, so "cached" and "hit" coincide.

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

import heapq
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

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
            from pyverify.sim.kernels.replay import capacitated_hits  # same moves, compiled

            hit_blocks = capacitated_hits(chains, cache_of, capacity, lru=eviction == LRU)
        elif eviction in (LEAF_LRU, TAIL_FIRST) and use_kernels(work, TREE_REPLAY_BREAK_EVEN):
            from pyverify.sim.kernels.tree_replay import tree_hits

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


class PromptBeyondChain(ValueError):
    """Request ``index``'s prompt holds more full blocks than its chain names (``reason`` says how
    many); the command names the request and its prompt length as its input file does
    (errors.RequestError)."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"requests[{index}]: {reason}")
        self.index, self.reason = index, reason


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
    from pyverify.sim.sglang_radix import sglang_hits
    from pyverify.sim.vllm_pool import vllm_hits

    size = block_size or 1
    if prompt_tokens is None or block_size is None:
        prompt_tokens = [len(chain) * size for chain in chains]
    full_chains = []
    for index, (chain, tokens) in enumerate(zip(chains, prompt_tokens, strict=True)):
        full = tokens // size
        if full > len(chain):
            raise PromptBeyondChain(
                index,
                f"{tokens} tokens make {full} full blocks of {size}, but "
                f"the chain names {len(chain)}: the engine would cache "
                "blocks the trace does not name",
            )
        # A trace that names a partial last block (Mooncake's hash_ids do): the engine never hashes it.
        full_chains.append(chain if full == len(chain) else chain[:full])
    chains = full_chains
    work = sum(map(len, chains)) * runs
    if eviction == VLLM:
        if use_kernels(work, TREE_REPLAY_BREAK_EVEN):  # the same moves, compiled
            from pyverify.sim.kernels.vllm_pool import vllm_kernel_hits

            compiled = vllm_kernel_hits(chains, prompt_tokens, cache_of, capacity, size)
            if compiled is not None:
                return compiled
        return vllm_hits(chains, prompt_tokens, cache_of, capacity, size)
    if eviction in (SGLANG, SGLANG_FIFO):
        policy = "fifo" if eviction == SGLANG_FIFO else "lru"
        if use_kernels(work, SGLANG_BREAK_EVEN):  # the same moves, compiled
            from pyverify.sim.kernels.sglang_radix import sglang_kernel_hits

            compiled = sglang_kernel_hits(
                chains, prompt_tokens, cache_of, capacity, size, page_size or size, policy
            )
            if compiled is not None:
                return compiled
        return sglang_hits(
            chains, prompt_tokens, cache_of, capacity, size, page_size or size, policy
        )
    raise ValueError(f"unknown engine {eviction!r}; expected one of {ENGINE_EVICTIONS}")


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
    # same moves for lru and fifo, pyverify.sim.kernels.tree_replay for
    # leaf-lru and tail-first; both are tested against this function.
    held: dict[int, BlockCache] = {}
    hit_blocks = []
    for chain, cache_id in zip(chains, cache_of):
        cache = held.get(cache_id)
        if cache is None:
            cache = held[cache_id] = new_cache(eviction, capacity)
        hits = cache.prefix_hits(chain)
        cache.serve(chain, hits)
        hit_blocks.append(hits)
    return hit_blocks


# --- one capacitated cache per policy ----------------------------------------
#
# Each cache answers two questions per request: how many leading blocks of the
# chain it holds (prefix_hits, no side effects), and what it holds afterwards
# (serve). The prefix-affinity router (pyverify.sim.routing) asks every host's
# cache the first question and the chosen host the second, so routing and
# replay share one definition.


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


class ChainOrderLRU(BlockCache):
    """``lru``: touch the hit prefix root first, then fetch each later block."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: OrderedDict[int, None] = OrderedDict()  # least recent first

    def __contains__(self, block: int) -> bool:
        return block in self.order

    def serve(self, chain: Sequence[int], hits: int) -> None:
        order = self.order
        for block in chain[:hits]:
            order.move_to_end(block)
        for block in chain[hits:]:
            if block in order:  # held, but after the first missing block: refetched, refreshed
                order.move_to_end(block)
                continue
            if len(order) >= self.capacity:
                order.popitem(last=False)
            order[block] = None


class FifoCache(BlockCache):
    """``fifo``: evict the block that entered first; a held block never re-enters."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: OrderedDict[int, None] = OrderedDict()  # oldest entry first

    def __contains__(self, block: int) -> bool:
        return block in self.order

    def serve(self, chain: Sequence[int], hits: int) -> None:
        order = self.order
        for block in chain[hits:]:
            if block in order:
                continue
            if len(order) >= self.capacity:
                order.popitem(last=False)
            order[block] = None


class LeafFirstLRU(BlockCache):
    """``leaf-lru``: evict the least recently used unpinned block with no cached child.

    ``last_use`` holds every cached block's last touch (a counter that grows by
    one per touch, so no two blocks tie). Leaves wait in a heap keyed by last
    touch; an entry is stale (skipped) once its block has left, gained a
    child, or been touched again.
    """

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.last_use: dict[int, int] = {}
        self.parent: dict[int, int | None] = {}
        self.children: dict[int, int] = {}
        self.leaves: list[tuple[int, int]] = []
        self.clock = 0

    def __contains__(self, block: int) -> bool:
        return block in self.last_use

    def _touch(self, block: int) -> None:
        self.clock += 1
        self.last_use[block] = self.clock
        if self.children.get(block, 0) == 0:
            heapq.heappush(self.leaves, (self.clock, block))

    def _evict_leaf(self, pinned: set[int]) -> bool:
        skipped = []
        try:
            while self.leaves:
                entry = heapq.heappop(self.leaves)
                used, block = entry
                if self.last_use.get(block) != used or self.children.get(block, 0):
                    continue  # stale
                if block in pinned:
                    skipped.append(entry)
                    continue
                del self.last_use[block]
                parent = self.parent[block]
                if parent is not None:
                    self.children[parent] -= 1
                    if self.children[parent] == 0 and parent in self.last_use:
                        heapq.heappush(self.leaves, (self.last_use[parent], parent))
                return True
            return False
        finally:
            for entry in skipped:
                heapq.heappush(self.leaves, entry)

    def serve(self, chain: Sequence[int], hits: int) -> None:
        for block in chain[:hits]:
            self._touch(block)
        pinned = set(chain[:hits])
        for position in range(hits, len(chain)):
            block = chain[position]
            if block in self.last_use:
                continue  # cannot happen on a prefix-closed trace (the cached set is a prefix tree)
            if len(self.last_use) >= self.capacity and not self._evict_leaf(pinned):
                break
            parent = chain[position - 1] if position else None
            if parent is not None and parent not in self.last_use:
                break  # its parent was just evicted: the rest of the chain cannot attach
            self.parent[block] = parent
            if parent is not None:
                self.children[parent] = self.children.get(parent, 0) + 1
            self.children.setdefault(block, 0)
            self._touch(block)


class TailFirstFreeQueue(BlockCache):
    """``tail-first``: evict from the front of the free queue; a request frees its blocks tail first."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.cached: set[int] = set()
        self.free: OrderedDict[int, None] = OrderedDict()  # evictable blocks, next victim first

    def __contains__(self, block: int) -> bool:
        return block in self.cached

    def serve(self, chain: Sequence[int], hits: int) -> None:
        for block in chain[:hits]:
            self.free.pop(block, None)  # in use while the request runs (twice in one chain: once)
        held = hits
        for block in chain[hits:]:
            if block in self.cached:  # cannot happen on a prefix-closed trace
                self.free.pop(block, None)
            else:
                if len(self.cached) >= self.capacity:
                    if not self.free:
                        break  # every cached block is in use: the chain does not fit
                    victim, _ = self.free.popitem(last=False)
                    self.cached.remove(victim)
                self.cached.add(block)
            held += 1
        for block in reversed(chain[:held]):
            self.free[block] = None


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
