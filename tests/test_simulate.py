"""Demand-cache simulation: hand-computed runs, then the statements the Lean
half proves, checked as properties on random prefix-closed instances."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyverify.sim.simulate import (
    FIFO,
    LRU,
    PER_HOST,
    POOLED,
    distinct_count,
    per_host_misses,
    pooled_misses,
    simulate,
)

from .strategies import prefix_closed_chains, routed_instances

CHAINS = [(1, 2), (1, 3), (1, 2)]


def test_pooled_uncapacitated_by_hand():
    run = simulate(CHAINS, None, POOLED)
    assert run.hit_blocks == (0, 1, 2)
    assert (run.hits, run.misses, run.references) == (3, 3, 6)
    assert run.hit_rate == 0.5
    assert run.witness() == {"cache_of": [0, 0, 0], "hit_blocks": [0, 1, 2]}


def test_per_host_uncapacitated_by_hand():
    run = simulate(CHAINS, [0, 1, 0], PER_HOST)
    assert run.cache_of == (0, 1, 0)
    assert run.hit_blocks == (0, 0, 2)
    assert run.misses == 4


def test_lru_capacity_two_by_hand():
    # [1,2] -> hit 1, insert 3 evicting 2 -> [1,3] -> hit 1, insert 2 evicting 3.
    assert simulate(CHAINS, None, POOLED, capacity=2, eviction=LRU).hit_blocks == (0, 1, 1)


def test_fifo_capacity_two_by_hand():
    # [1,2] -> hit 1 (no refresh), insert 3 evicting 1 -> [2,3] -> block 1 missing: no hit.
    assert simulate(CHAINS, None, POOLED, capacity=2, eviction=FIFO).hit_blocks == (0, 1, 0)


def test_hits_stop_at_first_missing_block():
    # Capacity 1 keeps only block 2 of (1, 2); the next (1, 2) cannot hit on 2 alone.
    run = simulate([(1, 2), (1, 2)], None, POOLED, capacity=1)
    assert run.hit_blocks == (0, 0)
    assert run.misses == 4


def test_openings_match_lean_mirror_definitions():
    openings = [(5,), (7,), (5,), (9,), (7,)]
    assert distinct_count(openings) == 3
    assert pooled_misses(openings) == 3
    assert per_host_misses(openings, [0, 1, 1, 0, 1]) == 4  # host 0 sees {5, 9}; host 1 sees {7, 5}


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError):
        simulate(CHAINS, None, "shared")
    with pytest.raises(ValueError):
        simulate(CHAINS, None, PER_HOST)
    with pytest.raises(ValueError):
        simulate(CHAINS, None, POOLED, capacity=0)


# --- the general statements, on random instances ----------------------------


@given(prefix_closed_chains())
def test_pooled_misses_eq_distinct(chains):
    assert simulate(chains, None, POOLED).misses == len({b for chain in chains for b in chain})


@given(routed_instances())
def test_per_host_misses_eq_distinct_pairs_and_ge_pooled(instance):
    chains, _, routing = instance
    per_host = simulate(chains, routing, PER_HOST).misses
    pairs = {(host, block) for chain, host in zip(chains, routing) for block in chain}
    assert per_host == len(pairs)
    assert per_host >= simulate(chains, None, POOLED).misses


@given(routed_instances(), st.data())
def test_merging_hosts_never_raises_per_host_misses(instance, data):
    """Refining a fleet (splitting hosts) never lowers per-host misses."""
    chains, hosts, fine = instance
    merge = data.draw(
        st.lists(st.integers(0, hosts - 1), min_size=hosts, max_size=hosts), label="merge"
    )
    coarse = [merge[host] for host in fine]
    assert simulate(chains, fine, PER_HOST).misses >= simulate(chains, coarse, PER_HOST).misses


def random_demand_run(chains, cache_of, capacity, rng):
    """Misses of one random but valid demand-cache run, written independently of
    pyverify.sim.simulate: caches start empty, a block enters only on a miss (and
    may be bypassed), any block may be evicted at any time, at most
    ``capacity`` blocks are held, and hits are the longest resident prefix."""
    caches: dict[int, set[int]] = {}
    misses = 0
    for chain, cache_id in zip(chains, cache_of):
        held = caches.setdefault(cache_id, set())
        for block in list(held):
            if rng.random() < 0.2:
                held.discard(block)
        hits = 0
        while hits < len(chain) and chain[hits] in held:
            hits += 1
        misses += len(chain) - hits
        for block in chain[hits:]:
            if rng.random() < 0.3:
                continue  # bypass: fetched for this request, not kept
            if capacity is not None and len(held) >= capacity and block not in held:
                held.discard(rng.choice(sorted(held)))
            held.add(block)
    return misses


@given(
    routed_instances(),
    st.sampled_from([POOLED, PER_HOST]),
    st.one_of(st.none(), st.integers(1, 6)),
    st.integers(0, 2**32 - 1),
)
def test_no_demand_run_beats_the_distinct_blocks(instance, model, capacity, seed):
    chains, _, routing = instance
    cache_of = [0] * len(chains) if model == POOLED else routing
    floor = len({b for chain in chains for b in chain})
    assert random_demand_run(chains, cache_of, capacity, random.Random(seed)) >= floor
    for eviction in (LRU, FIFO):
        assert (
            simulate(chains, routing, model, capacity=capacity, eviction=eviction).misses >= floor
        )


@given(routed_instances(), st.integers(1, 6))
def test_capacity_never_beats_uncapacitated(instance, capacity):
    chains, _, routing = instance
    for model in (POOLED, PER_HOST):
        unlimited = simulate(chains, routing, model).misses
        assert simulate(chains, routing, model, capacity=capacity, eviction=LRU).misses >= unlimited
        big = max(1, len({b for chain in chains for b in chain}))
        assert simulate(chains, routing, model, capacity=big, eviction=LRU).misses == unlimited
