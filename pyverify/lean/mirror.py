"""Python twins of the capacitated run models in ``lean/PrefixPool/Flat.lean``.

A *step* is ``(block, held)``: the block served and what the cache holds just
before it. A *flat run* is a list of steps; a *prefix run* is a list of
requests, each the list of steps of its chain. Each function here has the
name of its Lean definition; tests/test_lean_mirror.py checks the theorem's
statement on random runs, and scripts/gen_lean_examples.py writes the values
computed here into lean/PrefixPool/Generated.lean for the kernel to compare.

The LRU section also mirrors ``lean/PrefixPool/LruPrefix.lean``
(:func:`lru_misses`, :func:`far_references`, :func:`prefix_lru_misses`, the
definitions of ``lru_misses_eq_far`` and ``prefix_lru_eq_flat``) and
``LruPerHost.lean`` (:func:`per_host_prefix_lru`, :func:`per_host_lru`), and the
Belady section ``min_misses`` (``min_misses_mono``).

:func:`lru_prefix_run` records, block by block, the states of the same LRU
cache that :func:`pyverify.sim.simulate.simulate` runs (so ``prefix_misses``
of it equals the simulator's misses; a test checks that).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Sequence

Step = tuple[int, list[int]]


def fits(capacity: int, held: Sequence[int]) -> bool:
    """At most ``capacity`` distinct blocks are held (Lean: ``fits``)."""
    return len(set(held)) <= capacity


def flat_valid(run: Sequence[Step], capacity: int) -> bool:
    """A run of a flat demand cache of ``capacity`` blocks that starts empty:
    each step holds at most ``capacity`` blocks, and only blocks held at the step
    before or requested by it (Lean: ``flat_valid``)."""
    allowed: set[int] = set()
    for block, held in run:
        if not set(held) <= allowed or not fits(capacity, held):
            return False
        allowed = set(held) | {block}
    return True


def step_hits(reading: bool, step: Step) -> bool:
    block, held = step
    return reading and block in held


def request_misses(steps: Sequence[Step], reading: bool = True) -> int:
    """Misses of one request: it hits while reading its prefix and finding each
    block held; from the first miss on, every block misses (Lean: ``request_misses``)."""
    misses = 0
    for step in steps:
        reading = step_hits(reading, step)
        misses += 0 if reading else 1
    return misses


def prefix_misses(run: Sequence[Sequence[Step]]) -> int:
    """Block misses of a prefix run (Lean: ``prefix_misses``)."""
    return sum(request_misses(steps) for steps in run)


def prefix_valid(run: Sequence[Sequence[Step]], capacity: int) -> bool:
    """A run of a capacitated demand cache with longest-prefix hits that starts
    empty: at most ``capacity`` blocks at every step, nothing enters on a hit,
    only the fetched block on a miss (Lean: ``prefix_valid``)."""
    allowed: set[int] = set()
    for steps in run:
        reading = True
        for step in steps:
            block, held = step
            if not set(held) <= allowed or not fits(capacity, held):
                return False
            reading = step_hits(reading, step)
            allowed = set(held) if reading else set(held) | {block}
    return True


def flatten(run: Sequence[Sequence[Step]]) -> list[Step]:
    return [step for steps in run for step in steps]


def lru_prefix_run(chains: Sequence[Sequence[int]], capacity: int) -> list[list[Step]]:
    """The prefix run of a pooled LRU cache of ``capacity`` blocks on ``chains``,
    step by step, as :func:`pyverify.sim.simulate._capacitated_hits` runs it
    (held lists sorted, since only the set matters)."""
    cache: OrderedDict[int, None] = OrderedDict()
    run: list[list[Step]] = []
    for chain in chains:
        hits = 0
        for block in chain:
            if block not in cache:
                break
            hits += 1
        steps: list[Step] = [(block, sorted(cache)) for block in chain[:hits]]
        for block in chain[:hits]:
            cache.move_to_end(block)
        for block in chain[hits:]:
            steps.append((block, sorted(cache)))
            if block in cache:  # held, but after the first missing block: refetched
                cache.move_to_end(block)
                continue
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
        run.append(steps)
    return run


# --- LRU and the move-to-front stack (lean/PrefixPool/Lru.lean) ----------------------


def mtf_stack(requests: Sequence[int]) -> list[int]:
    """Every block requested, most recent first (Lean: ``mtf_stack``)."""
    stack: list[int] = []
    for r in requests:
        stack = [r] + [b for b in stack if b != r]
    return stack


def lru_cache(requests: Sequence[int], capacity: int) -> list[int]:
    """What an LRU cache of ``capacity`` blocks that starts empty holds after
    ``requests``, most recently used first (Lean: ``lru_cache``)."""
    cache: list[int] = []
    for r in requests:
        if r in cache:
            cache = [r] + [b for b in cache if b != r]
        else:
            cache = ([r] + cache)[:capacity]
    return cache


def lru_hits(requests: Sequence[int], capacity: int) -> int:
    """Hits of that LRU cache (Lean: ``lru_hits``)."""
    cache: list[int] = []
    hits = 0
    for r in requests:
        if r in cache:
            hits += 1
            cache = [r] + [b for b in cache if b != r]
        else:
            cache = ([r] + cache)[:capacity]
    return hits


def lru_misses(requests: Sequence[int], capacity: int) -> int:
    """Misses of an LRU cache of ``capacity`` blocks that starts empty, on a flat
    sequence (Lean: ``lru_misses``, ``lean/PrefixPool/LruPrefix.lean``): a request
    misses when its block is not held."""
    cache: list[int] = []
    misses = 0
    for r in requests:
        if r in cache:
            cache = [r] + [b for b in cache if b != r]
        else:
            misses += 1
            cache = ([r] + cache)[:capacity]
    return misses


def far_references(requests: Sequence[int], capacity: int) -> int:
    """Requests that repeat a block after at least ``capacity`` distinct blocks
    were requested since its previous request (Lean: ``far_references``)."""
    return sum(
        1
        for i, r in enumerate(requests)
        if r in requests[:i] and len(set(since(r, requests[:i]))) >= capacity
    )


def prefix_lru_misses(chains: Sequence[Sequence[int]], capacity: int) -> int:
    """Block misses of pyverify's LRU prefix cache of ``capacity`` blocks that
    starts empty (Lean: ``prefix_lru_misses``, ``lean/PrefixPool/LruPrefix.lean``):
    a request misses its chain's blocks after the longest held prefix; then
    every block of the chain goes through one LRU step in chain order (a held
    block moves to the front, a missing one enters at the front and the cache
    keeps its first ``capacity``)."""
    cache: list[int] = []
    misses = 0
    for chain in chains:
        hits = 0
        for block in chain:
            if block not in cache:
                break
            hits += 1
        misses += len(chain) - hits
        for block in chain:
            if block in cache:
                cache = [block] + [b for b in cache if b != block]
            else:
                cache = ([block] + cache)[:capacity]
    return misses


def per_host_prefix_lru(
    chains: Sequence[Sequence[int]], routing: Sequence[int], capacity: int, fleet: int
) -> int:
    """Separate LRU prefix caches, one per host ``0 .. fleet - 1``, each on the
    chains routed to it in request order (Lean: ``per_host_prefix_lru``,
    ``lean/PrefixPool/LruPerHost.lean``)."""
    return sum(
        prefix_lru_misses([c for c, h in zip(chains, routing) if h == host], capacity)
        for host in range(fleet)
    )


def per_host_lru(
    chains: Sequence[Sequence[int]], routing: Sequence[int], capacity: int, fleet: int
) -> int:
    """Flat LRU on each host's flattened chains, summed over hosts ``0 .. fleet - 1``
    (Lean: ``per_host_lru``)."""
    return sum(
        lru_misses([b for c, h in zip(chains, routing) if h == host for b in c], capacity)
        for host in range(fleet)
    )


def since(r: int, requests: Sequence[int]) -> list[int]:
    """The requests after the last request of ``r`` (all of them if ``r`` is
    never requested) (Lean: ``since``, ``lean/PrefixPool/StackDistance.lean``)."""
    last = max((i for i, x in enumerate(requests) if x == r), default=None)
    return list(requests) if last is None else list(requests[last + 1 :])


# --- Belady's MIN (lean/PrefixPool/Belady.lean) -----------------------------------------


def next_use(block: int, rest: Sequence[int]) -> int:
    """Requests of ``rest`` before the next request of ``block`` (``len(rest)`` if none)."""
    return rest.index(block) if block in rest else len(rest)


def min_step(held: Sequence[int], r: int, rest: Sequence[int], capacity: int) -> list[int]:
    """What MIN holds after request ``r`` with ``rest`` to come (Lean: ``min_step``):
    a hit changes nothing; a miss with room keeps ``r`` in front; a full cache
    drops, of ``r`` and the held blocks, the first one used furthest in the future."""
    if r in held:
        return list(held)
    if len(held) < capacity:
        return [r] + list(held)
    best = r
    for c in held:  # the first one used furthest in the future, r first
        if next_use(best, rest) < next_use(c, rest):
            best = c
    return [b for b in [r] + list(held) if b != best]


def run_of(step, blocks: Sequence[int], capacity: int) -> list[Step]:
    """The run a cache that starts empty and moves by ``step(held, r, rest, capacity)`` makes:
    each request with what is held before it (the shape of Lean's ``min_run`` and ``forced_min_run``)."""
    held: list[int] = []
    run: list[Step] = []
    for i, r in enumerate(blocks):
        run.append((r, list(held)))
        held = step(held, r, blocks[i + 1 :], capacity)
    return run


def min_run(blocks: Sequence[int], capacity: int) -> list[Step]:
    """MIN's run in bypass form, as Lean's ``min_run`` builds it (held most recent first)."""
    return run_of(min_step, blocks, capacity)


# --- the counterexamples (lean/PrefixPool/Counterexamples.lean) -------------------------


def per_host_lru_misses(requests: Sequence[tuple[int, int]], capacity: int, fleet: int) -> int:
    """Misses of one flat LRU cache of ``capacity`` blocks per host ``0 ..
    fleet - 1``, all starting empty, each serving its own host's blocks in
    request order; requests are ``(host, block)`` pairs (Lean:
    ``per_host_lru_misses``; requests routed to a host ``>= fleet`` are not
    counted, as in Lean's ``sum_below``)."""
    return sum(lru_misses([b for h, b in requests if h == host], capacity) for host in range(fleet))


def fifo_step(capacity: int, queue: list[int], r: int) -> list[int]:
    """One request to a FIFO cache holding ``queue``, newest entry first (Lean:
    ``fifo_step``): a hit changes nothing; a miss puts ``r`` in front and keeps
    the first ``capacity`` entries (the oldest leaves when the cache was full)."""
    return queue if r in queue else ([r] + queue)[:capacity]


def fifo_misses(requests: Sequence[int], capacity: int) -> int:
    """Misses of a flat FIFO cache of ``capacity`` blocks that starts empty
    (Lean: ``fifo_misses``)."""
    queue: list[int] = []
    misses = 0
    for r in requests:
        misses += r not in queue
        queue = fifo_step(capacity, queue, r)
    return misses


#: Lean's ``min_split_requests``: ``(host, chain)`` pairs.
MIN_SPLIT_REQUESTS = [(0, [4]), (1, [2]), (1, [2]), (0, [4])]
#: Lean's ``lru_split_requests``: ``(host, block)`` pairs.
LRU_SPLIT_REQUESTS = [(0, 3), (1, 4), (1, 1), (0, 3)]
#: Lean's ``anomaly_requests`` (Belady, Nelson and Shedler 1969).
ANOMALY_REQUESTS = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]


# --- routing by the first block (lean/PrefixPool/RoutedByRoot.lean) --------------------


def root_routed(route: Callable[[int], int], host: int, chain: Sequence[int]) -> bool:
    """Request ``(host, chain)`` is on ``route`` of its chain's first block; an
    empty chain may be on any host (Lean: ``root_routed``)."""
    return not chain or host == route(chain[0])


def routed_by_root(
    requests: Sequence[tuple[int, Sequence[int]]], route: Callable[[int], int]
) -> bool:
    """Every ``(host, chain)`` request is on ``route`` of its chain's first block,
    for the one function ``route`` (Lean: ``routed_by_root``). pyverify's
    ``prefix-hash`` routing is ``route = lambda b: stable_hash(str(b)) % fleet``."""
    return all(root_routed(route, host, chain) for host, chain in requests)


def min_misses(blocks: Sequence[int], capacity: int) -> int:
    """Misses of MIN's run with ``capacity`` blocks, starting empty (Lean: ``min_misses``):
    the steps whose block is not held."""
    return sum(1 for block, held in min_run(blocks, capacity) if block not in held)


# --- pooled memory (lean/PrefixPool/PooledMemory.lean) ------------------------------------


def times(n: int, m: int) -> int:
    """``n × m``, ``m`` added up ``n`` times (Lean: ``Natural.times``)."""
    product = 0
    for _ in range(n):
        product += m
    return product


def merged_min_run(pairs: Sequence[tuple[int, int]], capacity: int, fleet: int) -> list[Step]:
    """The pooled run the proof of ``pooled_min_le_per_host_min`` builds (Lean:
    ``merged_min_run`` from empty hosts): ``pairs`` are ``(host, block)`` in
    request order; every host runs MIN with ``capacity`` blocks on its own
    blocks, and before each request the pool holds what hosts ``0 .. fleet - 1``
    hold together (``union_below``, host 0 first, repeats kept)."""
    held: dict[int, list[int]] = {}
    run: list[Step] = []
    for i, (host, block) in enumerate(pairs):
        run.append((block, [b for g in range(fleet) for b in held.get(g, [])]))
        own_rest = [b for h, b in pairs[i + 1 :] if h == host]
        held[host] = min_step(held.get(host, []), block, own_rest, capacity)
    return run


# --- forced admission (lean/PrefixPool/BeladyForced.lean) -------------------------------


def admits(run: Sequence[Step]) -> bool:
    """Every step holds the block requested at the step before: the cache
    admits every block it is asked for (Lean: ``admits_after []``)."""
    return all(run[i - 1][0] in run[i][1] for i in range(1, len(run)))


def forced_valid(run: Sequence[Step], capacity: int) -> bool:
    """A flat demand-cache run of ``capacity`` blocks that starts empty and
    admits every block (Lean: ``forced_valid``)."""
    return flat_valid(run, capacity) and admits(run)


def furthest_held(rest: Sequence[int], held: Sequence[int]) -> int:
    """Of the held blocks, the first one used furthest in the future (0 if
    nothing is held) (Lean: ``furthest_held``)."""
    if not held:
        return 0
    best = held[0]
    for c in held[1:]:
        if next_use(best, rest) < next_use(c, rest):
            best = c
    return best


def forced_min_step(held: Sequence[int], r: int, rest: Sequence[int], capacity: int) -> list[int]:
    """Forced MIN's next state (Lean: ``forced_min_step``): a hit keeps
    ``held``; a miss inserts ``r`` in front, first evicting the held block used
    furthest in the future when ``capacity`` blocks are held."""
    if r in held:
        return list(held)
    if len(held) < capacity:
        return [r] + list(held)
    victim = furthest_held(rest, held)
    return [r] + [b for b in held if b != victim]


def forced_min_run(blocks: Sequence[int], capacity: int) -> list[Step]:
    """Forced MIN's run from empty, as Lean's ``forced_min_run`` builds it."""
    return run_of(forced_min_step, blocks, capacity)


def forced_min_misses(blocks: Sequence[int], capacity: int) -> int:
    """Misses of forced MIN with ``capacity`` blocks (Lean: ``forced_min_misses``)."""
    return sum(1 for block, held in forced_min_run(blocks, capacity) if block not in held)
