"""The forced-admission optimum (pyverify.optimal.forced) against exhaustive search.

The exhaustive search enumerates every run of the forced-admission model on
tiny prefix-closed traces: after each request its cache may hold any set
that contains the request's first min(k, C) blocks, holds nothing it neither
held nor fetched, and has at most C blocks (so every eviction choice an
engine could make, and voluntary evictions too); hits are the longest held
prefix. Its minimum is the optimum by definition, so equality with the rule
is the test that the rule is optimal.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.optimal.belady import min_misses
from pyverify.cache.arrays import flatten
from pyverify.optimal.forced import forced_misses, forced_run, forced_run_flat
from pyverify.sim.simulate import simulate

from .strategies import prefix_closed_chains


def exhaustive_forced(chains, capacity: int) -> int:
    """The fewest misses over every forced-admission run of one cache (prefix hits)."""
    chains = tuple(tuple(c) for c in chains)

    @lru_cache(maxsize=None)
    def best(t: int, held: frozenset) -> int:
        if t == len(chains):
            return 0
        chain = chains[t]
        hits = 0
        while hits < len(chain) and chain[hits] in held:
            hits += 1
        required = frozenset(chain[: min(len(chain), capacity)])
        optional = sorted((held | set(chain)) - required)
        room = capacity - len(required)
        result = None
        for size in range(0, min(room, len(optional)) + 1):
            for extra in itertools.combinations(optional, size):
                cost = best(t + 1, required | frozenset(extra))
                result = cost if result is None or cost < result else result
        return len(chain) - hits + result

    return best(0, frozenset())


def exhaustive_forced_fleet(chains, routing, capacity: int) -> int:
    per_host: dict[int, list] = {}
    for chain, host in zip(chains, routing):
        per_host.setdefault(host, []).append(chain)
    return sum(exhaustive_forced(c, capacity) for c in per_host.values())


def exhaustive_pinned_victims(chains, capacity: int) -> int:
    """Block by block, as an engine runs: admit each missed block, evicting any held unpinned block when full."""
    chains = tuple(tuple(c) for c in chains)

    @lru_cache(maxsize=None)
    def best(t: int, held: frozenset) -> int:
        if t == len(chains):
            return 0
        chain = chains[t]
        hits = 0
        while hits < len(chain) and chain[hits] in held:
            hits += 1
        states = {held}
        for j in range(hits, len(chain)):
            pinned = set(chain[:j])
            following = set()
            for state in states:
                if chain[j] in state:
                    following.add(state)
                elif len(state) < capacity:
                    following.add(state | {chain[j]})
                else:
                    victims = [b for b in state if b not in pinned]
                    if not victims:  # full of the running request's blocks: computed, not cached
                        following.add(state)
                    for v in victims:
                        following.add((state - {v}) | {chain[j]})
            states = following
        return len(chain) - hits + min(best(t + 1, s) for s in states)

    return best(0, frozenset())


def misses_of(chains, capacity, eviction, routing=None) -> int:
    run = simulate(
        chains,
        routing,
        "pooled" if routing is None else "per-host",
        capacity=capacity,
        eviction=eviction,
    )
    return run.references - run.hits


def test_smallest_difference_from_bypass():
    pages = [[3], [2], [3]]
    assert min_misses(pages, None, 1) == 2
    assert forced_misses(pages, None, 1) == 3 == exhaustive_forced(pages, 1)


def test_pinning_matters():
    """Unpinned forced admission would keep {9, 2} (2 without its parent) and miss 3 times; engines pin: 4."""
    chains = [[9], [1, 2], [9]]
    assert (
        forced_misses(chains, None, 2)
        == 4
        == exhaustive_forced(chains, 2)
        == exhaustive_pinned_victims(chains, 2)
    )
    assert min_misses(chains, None, 2) == 3


def test_chain_longer_than_the_cache_keeps_its_first_blocks():
    run = forced_run([[1, 2, 3, 4], [1, 2, 5]], None, 2)
    assert run.hit_blocks == (0, 2)
    assert run.dropped == ((3, 4), (5,))  # blocks beyond capacity: computed, not cached
    assert run.misses == 5


@settings(max_examples=300, deadline=None)
@given(prefix_closed_chains(max_nodes=6, max_requests=7), st.integers(1, 4))
def test_forced_rule_is_the_exhaustive_optimum(chains, capacity):
    forced = forced_misses(chains, None, capacity)
    assert forced == exhaustive_forced(chains, capacity)
    assert forced == exhaustive_pinned_victims(
        chains, capacity
    )  # every eviction choice of a block-by-block engine
    assert forced >= min_misses(chains, None, capacity)


@settings(max_examples=300, deadline=None)
@given(prefix_closed_chains(max_nodes=10, max_requests=25), st.integers(1, 6))
def test_forced_run_is_a_prefix_cache_run_and_bounds(chains, capacity):
    ids, lengths = flatten(chains)
    hit_blocks, dropped, misses = forced_run_flat(
        ids, lengths, None, capacity, witness=True, closure=True
    )
    assert misses == forced_misses(chains, None, capacity)
    assert min_misses(chains, None, capacity) <= misses
    # Engine policies that admit every block and keep the running request's blocks cannot do better.
    for eviction in ("leaf-lru", "tail-first"):
        assert misses <= misses_of(chains, capacity, eviction)
    # Replay the witness: hits held, forced admission, capacity.
    held: set = set()
    for chain, h, gone in zip(chains, hit_blocks, dropped):
        assert all(b in held for b in chain[:h]) and (h == len(chain) or chain[h] not in held)
        after = (held | set(chain)) - set(gone)
        assert set(chain[: min(len(chain), capacity)]) <= after and len(after) <= capacity
        held = after


def test_fifo_can_beat_it_by_evicting_a_block_in_use():
    """kvcache-simulator's FIFO evicts the running request's hit block: not a forced-admission cache in this sense."""
    chains = [[0], [2], [0, 1], [2]]
    assert (
        misses_of(chains, 2, "fifo")
        == 3
        < forced_misses(chains, None, 2)
        == 4
        == exhaustive_forced(chains, 2)
    )


@settings(max_examples=150, deadline=None)
@given(
    prefix_closed_chains(max_nodes=6, max_requests=8),
    st.integers(1, 3),
    st.integers(1, 3),
    st.data(),
)
def test_per_host_is_the_sum_over_hosts(chains, capacity, hosts, data):
    routing = data.draw(
        st.lists(st.integers(0, hosts - 1), min_size=len(chains), max_size=len(chains))
    )
    assert forced_misses(chains, routing, capacity) == exhaustive_forced_fleet(
        chains, routing, capacity
    )
    assert forced_misses(chains, routing, capacity) >= min_misses(chains, routing, capacity)


@settings(max_examples=300, deadline=None)
@given(prefix_closed_chains(), st.integers(1, 6), st.integers(1, 3), st.data())
def test_compiled_rule_makes_the_loops_choices(chains, capacity, hosts, data):
    """The compiled forced rule (pyverify.optimal.forced._forced_one_cache) = the Python loop: hits, misses, the witness."""
    from pyverify.optimal import forced

    routing = data.draw(
        st.lists(st.integers(0, hosts - 1), min_size=len(chains), max_size=len(chains))
    )
    ids, lengths = flatten(chains)
    ids = ids * 7 + 3  # ids that are not dense: the witness names the original ids
    expected = forced_run_flat(
        ids, lengths, routing, capacity, witness=True, closure=True
    )  # closure=True: the loop
    got = forced._run_compiled(
        ids,
        lengths,
        forced.np.asarray(routing, dtype=forced.np.int64),
        capacity,
        None,
        witness=True,
    )
    assert got == (list(expected[0]), list(expected[1]), expected[2])
