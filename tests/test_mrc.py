"""Exact LRU miss-ratio curves: the vectorised stack distances against the
plain Fenwick method, and the curve against pyverify.sim.simulate's longest-prefix
LRU at every capacity (pooled and per-host), and against a flat LRU."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyverify.sim.mrc import (
    COLD,
    log_capacities,
    lru_curve,
    stack_distances,
    stack_distances_fenwick,
    sums_from,
)
from pyverify.sim.simulate import LRU, PER_HOST, POOLED, simulate

from .helpers import flat_lru_misses
from .strategies import prefix_closed_chains, routed_instances


def test_distances_by_hand():
    # a b c a b d a: a's second reference has b, c between -> 2; b: c, a -> 2; a again: b, d -> 2
    assert stack_distances(np.array([1, 2, 3, 1, 2, 4, 1])).tolist() == [
        COLD,
        COLD,
        COLD,
        2,
        2,
        COLD,
        2,
    ]
    assert stack_distances(np.array([7, 7, 7])).tolist() == [COLD, 0, 0]
    assert stack_distances(np.array([], dtype=np.int64)).tolist() == []


@given(st.lists(st.integers(0, 12), max_size=80))
def test_vectorised_equals_fenwick(sequence):
    assert stack_distances(np.array(sequence, dtype=np.int64)).tolist() == stack_distances_fenwick(
        sequence
    )


@given(st.lists(st.sampled_from([0, 2**40, 2**62, 17]), max_size=30))
def test_sparse_huge_ids(sequence):
    assert stack_distances(np.array(sequence, dtype=np.int64)).tolist() == stack_distances_fenwick(
        sequence
    )


@given(prefix_closed_chains(max_nodes=15, max_requests=30))
def test_pooled_curve_equals_longest_prefix_lru_at_every_capacity(chains):
    curve = lru_curve(chains)
    flat = [block for chain in chains for block in chain]
    distinct = len(set(flat))
    assert curve.cold == distinct
    for capacity in range(1, distinct + 2):
        run = simulate(chains, None, POOLED, capacity=capacity, eviction=LRU)
        assert curve.misses(capacity) == run.misses == flat_lru_misses(flat, capacity)


@given(routed_instances())
def test_per_host_curve_equals_simulate(case):
    chains, hosts, routing = case
    curve = lru_curve(chains, routing, hosts)
    assert curve.cold == len({(h, b) for chain, h in zip(chains, routing) for b in chain})
    for capacity in range(1, 10):
        assert (
            curve.misses(capacity) == simulate(chains, routing, PER_HOST, capacity=capacity).misses
        )


def test_non_prefix_closed_shows_why_closure_matters():
    """Without prefix closure, flat LRU can hit a block whose predecessor missed:
    (1, 2) then (3, 2) with capacity 2 -- the curve counts flat LRU."""
    flat = [1, 2, 3, 2]
    assert flat_lru_misses(flat, 2) == 3
    # the longest-prefix simulation would miss 2 in (3, 2) as well: 4 misses
    assert simulate([(1, 2), (3, 2)], None, POOLED, capacity=2).misses == 4


def test_curve_api():
    curve = lru_curve([(1, 2), (1, 3), (1, 2)])
    assert curve.references == 6 and curve.cold == 3
    assert curve.misses(np.array([1, 2, 3, 100])).tolist() == [
        6,
        4,
        3,
        3,
    ]  # by hand with simulate below
    assert [
        simulate([(1, 2), (1, 3), (1, 2)], None, POOLED, capacity=c).misses for c in (1, 2, 3)
    ] == [6, 4, 3]
    assert curve.ceiling_hit_rate == 0.5 and curve.max_useful_capacity == 3
    assert log_capacities(1000, per_decade=1) == [1, 10, 100, 1000]


@given(
    st.lists(st.integers(0, 10**12), max_size=40),
    st.lists(st.integers(0, 50), min_size=1, max_size=12),
    st.booleans(),
)
def test_sums_from_equals_the_slice_sums(histogram, starts, as_scalar):
    """The curves' tail sums (one reduceat over the pieces between the starts) against a sum of each slice;
    starts repeat, come in any order and run past the end."""
    hist = np.array(histogram, dtype=np.int64)
    if as_scalar:
        assert int(sums_from(hist, starts[0])) == sum(histogram[starts[0] :])
        assert np.shape(sums_from(hist, starts[0])) == ()
    else:
        assert sums_from(hist, np.array(starts)).tolist() == [sum(histogram[s:]) for s in starts]


def test_sums_from_refuses_a_negative_start():
    with pytest.raises(ValueError):
        sums_from(np.array([1, 2, 3]), np.array([1, -1]))
