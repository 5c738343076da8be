"""Replaying caches request by request: the runs behind ``simulate``'s report.

What each guarantees: :func:`run_caches` gives the exact hits per request of demand caches that
start empty (one pooled cache, or one per host under the routing given), with the eviction named
when there is a capacity; :func:`engine_cache_hits` replays a serving engine's own cache (vLLM's
block pool, SGLang's radix cache) exactly, fed each prompt's length in tokens, and says which
requests it would never schedule. A prompt longer than its chain raises
:class:`~pyverify.cache.prompts.PromptBeyondChain` (handed on here). The simulators are imported
by the call that uses them.
"""

from __future__ import annotations

from typing import Any, Sequence

from pyverify.api.names import LRU
from pyverify.cache.prompts import PromptBeyondChain  # cheap: an exception class

__all__ = ["PromptBeyondChain", "caches_read", "engine_cache_hits", "run_caches"]


def run_caches(
    chains: Sequence[Sequence[int]],
    routing: Sequence[int] | None,
    model: str,
    *,
    capacity: int | None = None,
    eviction: str = LRU,
) -> Any:
    """Demand caches that start empty over ``chains``: the run's ``hits``, ``hit_blocks`` (per
    request), ``cache_of`` (the cache each request read), ``references`` and a ``witness``."""
    from pyverify.sim.simulate import simulate

    return simulate(chains, routing, model, capacity=capacity, eviction=eviction)


def caches_read(model: str, routing: Sequence[int] | None, n_requests: int) -> tuple[int, ...]:
    """Which cache each request reads under ``model`` (all cache 0 when pooled, else its host)."""
    from pyverify.sim.simulate import caches_read as cache_of

    return cache_of(model, routing, n_requests)


def engine_cache_hits(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int],
    capacity: int,
    eviction: str,
    prompt_tokens: Sequence[int] | None = None,
    block_size: int | None = None,
    page_size: int | None = None,
) -> tuple[list[int], list[int]]:
    """Hit blocks per request under the serving engine's own cache named by ``eviction``
    (``vllm``, ``sglang``, ``sglang-fifo``) of ``capacity`` blocks, and the requests it would
    never schedule."""
    from pyverify.sim.simulate import engine_hits

    return engine_hits(chains, cache_of, capacity, eviction, prompt_tokens, block_size, page_size)
