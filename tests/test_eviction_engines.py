"""Engine-like eviction: hand-computed runs, brute-force reference
implementations of each policy's definition, and the one-pass curve for
vLLM's order against per-capacity runs.

Every test that runs a policy runs it twice, with the Python reference
caches and with the compiled kernels (:mod:`pyverify.sim.kernels`), so the
kernels pass the same property tests as the code they replace."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyverify.sim.kernels as kernels
import pyverify.sim.simulate as simulate_module
from pyverify.sim.engine_curves import tail_first_ranks, weighted_curve
from pyverify.sim.simulate import FIFO, LEAF_LRU, LRU, PER_HOST, POOLED, TAIL_FIRST, simulate

from .strategies import prefix_closed_chains, routed_instances

IMPLEMENTATIONS = ["python", "compiled"] if kernels.available() else ["python"]
each_implementation = pytest.mark.parametrize("implementation", IMPLEMENTATIONS)


@contextmanager
def replay_by(implementation):
    """``simulate()`` replays with the Python caches, or with the kernels at every size."""
    with pytest.MonkeyPatch.context() as patch:
        if implementation == "python":
            patch.setattr(simulate_module, "use_kernels", lambda *args: False)
        else:
            patch.setattr(kernels, "MIN_REFERENCES", 0)
            patch.setattr(simulate_module, "REPLAY_BREAK_EVEN", 0)
            patch.setattr(simulate_module, "TREE_REPLAY_BREAK_EVEN", 0)
        yield


# --- by hand ----------------------------------------------------------------


@each_implementation
def test_leaf_first_keeps_the_shared_parent_where_chain_order_evicts_it(implementation):
    with replay_by(implementation):
        chains = [(1, 2, 3), (1, 4), (1, 2, 3)]
        # chain-order LRU: after (1,4) the order is 3,1,4 (2 was evicted), so (1,2,3) hits only 1.
        assert simulate(chains, None, POOLED, capacity=3, eviction=LRU).hit_blocks == (0, 1, 1)
        # leaf-first: (1,4) evicts the leaf 3, keeping 1 -> 2; then (1,2,3) hits 1 and 2.
        assert simulate(chains, None, POOLED, capacity=3, eviction=LEAF_LRU).hit_blocks == (0, 1, 2)
        # vLLM: (1,2,3) frees 3,2,1 in that order, so 3 is evicted first as well.
        assert simulate(chains, None, POOLED, capacity=3, eviction=TAIL_FIRST).hit_blocks == (
            0,
            1,
            2,
        )


@each_implementation
def test_a_chain_longer_than_the_cache(implementation):
    with replay_by(implementation):
        # leaf-lru inserts 1 and 2, then evicts its own newest leaf 2 to make room for 3,
        # whose parent is then gone: it keeps C - 1 = 1 block. vLLM keeps the first C = 2.
        chains = [(1, 2, 3), (1, 2)]
        assert simulate(chains, None, POOLED, capacity=2, eviction=LEAF_LRU).hit_blocks == (0, 1)
        assert simulate(chains, None, POOLED, capacity=2, eviction=TAIL_FIRST).hit_blocks == (0, 2)


@each_implementation
def test_fifo_does_not_reinsert_a_held_block(implementation):
    with replay_by(implementation):
        # capacity 3: after (8) evicts 1, request (1,2) misses on 1 although 2 is held;
        # 2 keeps its entry time, so (9) evicts 2 and the last (1,2) hits only 1.
        chains = [(1,), (7,), (1, 2), (8,), (1, 2), (9,), (1, 2)]
        assert simulate(chains, None, POOLED, capacity=3, eviction=FIFO).hit_blocks == (
            0,
            0,
            1,
            0,
            0,
            0,
            1,
        )


def test_tail_first_ranks_by_hand():
    # (1,2,3) then (1,4) then (1,2,3): before the third request the priority order
    # (highest first) is 1, 4 (request 1), then 2, 3 (request 0): ranks 0, 2, 3.
    ranks = tail_first_ranks([(1, 2, 3), (1, 4), (1, 2, 3)])
    assert ranks.tolist() == [-1, -1, -1, 0, -1, 0, 2, 3]


# --- reference implementations of the definitions -----------------------------


def leaf_lru_reference(chains, capacity):
    """Leaf-first LRU by definition, scanning every cached block (no heap)."""
    last_use, parent, clock, out = {}, {}, 0, []
    for chain in chains:
        hits = 0
        while hits < len(chain) and chain[hits] in last_use:
            hits += 1
        for block in chain[:hits]:
            clock += 1
            last_use[block] = clock
        pinned = set(chain[:hits])
        for position in range(hits, len(chain)):
            if len(last_use) >= capacity:
                has_child = {parent[b] for b in last_use if parent[b] is not None}
                leaves = [b for b in last_use if b not in has_child and b not in pinned]
                if not leaves:
                    break
                del last_use[min(leaves, key=last_use.get)]
            up = chain[position - 1] if position else None
            if up is not None and up not in last_use:
                break
            parent[chain[position]] = up
            clock += 1
            last_use[chain[position]] = clock
        out.append(hits)
    return tuple(out)


def top_priority_reference(chains, capacity):
    """vLLM's order by the proof's characterisation: after each request the cache
    is the `capacity` seen blocks of highest (last request, -depth)."""
    last, depth, cached, out = {}, {}, set(), []
    for r, chain in enumerate(chains):
        hits = 0
        while hits < len(chain) and chain[hits] in cached:
            hits += 1
        out.append(hits)
        for j, block in enumerate(chain):
            last[block], depth[block] = r, j
        ranked = sorted(last, key=lambda b: (last[b], -depth[b]), reverse=True)
        cached = set(ranked[:capacity])
    return tuple(out)


@each_implementation
@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.integers(1, 8))
def test_leaf_lru_equals_its_definition(implementation, chains, capacity):
    with replay_by(implementation):
        assert simulate(
            chains, None, POOLED, capacity=capacity, eviction=LEAF_LRU
        ).hit_blocks == leaf_lru_reference(chains, capacity)


@each_implementation
@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.integers(1, 8))
def test_tail_first_free_queue_keeps_the_top_priority_blocks(implementation, chains, capacity):
    with replay_by(implementation):
        assert simulate(
            chains, None, POOLED, capacity=capacity, eviction=TAIL_FIRST
        ).hit_blocks == top_priority_reference(chains, capacity)


@each_implementation
@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.integers(1, 8))
def test_tail_first_and_leaf_lru_agree_when_every_chain_fits(implementation, chains, capacity):
    with replay_by(implementation):
        capacity = max(capacity, max(len(chain) for chain in chains))
        leaf = simulate(chains, None, POOLED, capacity=capacity, eviction=LEAF_LRU)
        tail = simulate(chains, None, POOLED, capacity=capacity, eviction=TAIL_FIRST)
        assert leaf.hit_blocks == tail.hit_blocks


# --- the one-pass curve ----------------------------------------------------------


@each_implementation
@given(prefix_closed_chains(max_nodes=14, max_requests=30))
def test_tail_first_curve_equals_per_capacity_tail_first_runs(implementation, chains):
    with replay_by(implementation):
        curve = weighted_curve(tail_first_ranks(chains), chains)
        distinct = len({b for chain in chains for b in chain})
        capacities = list(range(1, distinct + 2))
        for capacity, hits in zip(capacities, curve.block_hits(capacities)):
            assert (
                hits == simulate(chains, None, POOLED, capacity=capacity, eviction=TAIL_FIRST).hits
            )


@each_implementation
@given(routed_instances())
def test_tail_first_curve_per_host(implementation, instance):
    with replay_by(implementation):
        chains, hosts, routing = instance
        curve = weighted_curve(tail_first_ranks(chains, routing, hosts), chains)
        for capacity in range(1, 8):
            run = simulate(chains, routing, PER_HOST, capacity=capacity, eviction=TAIL_FIRST)
            assert curve.block_hits([capacity])[0] == run.hits


def test_tail_first_curve_on_a_random_larger_trace():
    rng = np.random.default_rng(7)
    parents = [-1]
    for node in range(1, 400):
        parents.append(int(rng.integers(-1, node)))
    chains = []
    for node in rng.integers(0, 400, size=300):
        path = []
        node = int(node)
        while node != -1:
            path.append(node)
            node = parents[node]
        chains.append(tuple(reversed(path)))
    curve = weighted_curve(tail_first_ranks(chains), chains)
    for capacity in (1, 3, 10, 30, 100, 250, 400):
        assert (
            curve.block_hits([capacity])[0]
            == simulate(chains, None, POOLED, capacity=capacity, eviction=TAIL_FIRST).hits
        )


@given(routed_instances(), st.integers(1, 6), st.sampled_from([LEAF_LRU, TAIL_FIRST, FIFO]))
def test_prefix_affinity_routes_with_the_caches_simulate_replays(instance, capacity, eviction):
    from pyverify.sim.routing import prefix_affinity_routing

    chains, hosts, _ = instance
    routed = prefix_affinity_routing(chains, hosts, capacity, eviction)
    replay = simulate(chains, routed.routing, PER_HOST, capacity=capacity, eviction=eviction)
    assert replay.hit_blocks == routed.hit_blocks
