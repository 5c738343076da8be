"""The one interface every cache implements, and the loop that serves requests one at a time.

A cache answers three calls (:class:`Cache`), whatever its eviction policy, and both
``simulate`` (:mod:`pyverify.sim.simulate`, :mod:`pyverify.sim.routing`) and ``replay``
(:mod:`pyverify.fleet.replay`) drive caches through them alone:

* ``prefix_hits(chain)``: how many leading blocks of the chain the cache holds now. A peek:
  it changes nothing (no access time stamped, no node split), so a router may ask every
  host's cache and serve on one.
* ``start(index, chain, tokens)``: request ``index`` (its chain of block ids, its prompt's
  length in tokens) starts: the cache serves it (hits, fetches, evicts) and returns
  ``(hit_blocks, handle)``, or ``None`` when it cannot start now and changed nothing (too
  few blocks free beside the requests still running; with nothing running, an engine that
  would never schedule it). ``tokens`` matters to the serving engines' caches only
  (:mod:`pyverify.cache.vllm`, :mod:`pyverify.cache.sglang`); the block caches read none.
* ``finish(handle)``: the request ``start`` returned ``handle`` for ends; what it kept in
  use may now be evicted.

Serving a request alone is :func:`serve_alone` (start, then finish at once): what simulate
does for every request, and replay without timing. With timing, replay starts a request,
lets others start beside it, and finishes it when its decode ends.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence


class Cache(Protocol):
    """What every cache answers (module docstring)."""

    def prefix_hits(self, chain: Sequence[int]) -> int: ...

    def start(
        self, index: int, chain: Sequence[int], tokens: int | None
    ) -> tuple[int, Any] | None: ...

    def finish(self, handle: Any) -> None: ...


def serve_alone(cache: Cache, index: int, chain: Sequence[int], tokens: int | None) -> int | None:
    """Request ``index`` starts and ends at once: its hit blocks, or ``None`` when ``cache`` never
    schedules it (nothing else runs, so it never could)."""
    started = cache.start(index, chain, tokens)
    if started is None:
        return None
    hits, handle = started
    cache.finish(handle)
    return hits


def hits_one_at_a_time(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int],
    new_cache: Callable[[], Cache],
    prompt_tokens: Sequence[int] | None = None,
) -> tuple[list[int], list[int]]:
    """Serve every request alone, in order, on its own cache (``cache_of[i]``; each made by
    ``new_cache`` when first read): the hit blocks per request, and the requests never scheduled
    (they count 0 hits). ``prompt_tokens``: each prompt's length (``None``: not known)."""
    caches: dict[int, Cache] = {}
    hit_blocks: list[int] = []
    unscheduled: list[int] = []
    tokens = None
    for index, (chain, cache_id) in enumerate(zip(chains, cache_of)):
        cache = caches.get(cache_id)
        if cache is None:
            cache = caches[cache_id] = new_cache()
        if prompt_tokens is not None:
            tokens = prompt_tokens[index]
        hits = serve_alone(cache, index, chain, tokens)
        if hits is None:
            unscheduled.append(index)
            hits = 0
        hit_blocks.append(hits)
    return hit_blocks, unscheduled


def run_in(held, chain: Sequence[int], start: int) -> int:
    """``start`` plus the length of the run of ``chain[start:]`` whose blocks are all in ``held``
    (a container whose membership test runs in C: the caches' hottest loop)."""
    end = start
    for block in chain[start:] if start else chain:
        if block not in held:
            break
        end += 1
    return end


class BlockCache:
    """A demand cache of ``capacity`` blocks that hits on the longest held prefix.

    Subclasses say which blocks they hold (:meth:`blocks_held`) and how a request changes them
    (:meth:`serve`); a block cache keeps nothing in use after a request, so :meth:`finish`
    does nothing (:mod:`pyverify.cache.pinning` adds that).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    def blocks_held(self):  # pragma: no cover - overridden
        """A container whose members are the cached blocks."""
        raise NotImplementedError

    def __contains__(self, block: int) -> bool:
        return block in self.blocks_held()

    def prefix_hits(self, chain: Sequence[int]) -> int:
        return run_in(self.blocks_held(), chain, 0)

    def start(self, index: int, chain: Sequence[int], tokens: int | None) -> tuple[int, None]:
        hits = self.prefix_hits(chain)
        self.serve(chain, hits)
        return hits, None

    def finish(self, handle: None) -> None:
        pass

    def serve(self, chain: Sequence[int], hits: int) -> None:  # pragma: no cover - overridden
        """Serve ``chain``, whose first ``hits`` blocks are held: the policy's moves."""
        raise NotImplementedError
