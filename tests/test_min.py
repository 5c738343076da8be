"""Belady's MIN on the flat sequence is the prefix-cache optimum (docs/min-flat-relaxation.md).

Three independent computations are compared on Hypothesis-generated
prefix-closed instances: the searcher :func:`pyverify.optimal.belady.min_run`,
CP-SAT's proven optimum of the placement model, and an exhaustive search over
every run of rules 1-4 (tiny instances); plus the trusted checker's own
recount. MIN's run must also replay as a legal prefix-cache run.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.certify import cpsat
from pyverify.certify.placement import Problem
from pyverify.optimal.belady import min_run, next_uses
from pyverify.trusted import recount
from pyverify.trusted.check import replay
from .strategies import prefix_closed_chains, routed_instances

import numpy as np


def exhaustive_prefix_misses(chains, cache_of, capacity) -> int:
    """Fewest misses over every run of rules 1-4 (placement.py), cache by cache, by dynamic programming."""
    total = 0
    for q in sorted(set(cache_of)):
        mine = tuple(tuple(c) for c, host in zip(chains, cache_of) if host == q)

        @lru_cache(maxsize=None)
        def best(t: int, held: frozenset) -> int:
            if t == len(mine):
                return 0
            chain = mine[t]
            hits = 0
            while hits < len(chain) and chain[hits] in held:
                hits += 1
            pool = sorted(held | set(chain))
            return (
                len(chain)
                - hits
                + min(
                    best(t + 1, frozenset(keep))
                    for size in range(min(capacity, len(pool)) + 1)
                    for keep in combinations(pool, size)
                )
            )

        total += best(0, frozenset())
    return total


def assert_legal(chains, cache_of, capacity, run):
    assert replay(chains, list(cache_of), capacity, run.as_witness(), "min") == run.misses


@settings(max_examples=60, deadline=None)
@given(prefix_closed_chains(max_nodes=10, max_requests=16), st.integers(1, 11))
def test_min_equals_cpsat_pooled(chains, capacity):
    cache_of = (0,) * len(chains)
    run = min_run(chains, cache_of, capacity)
    assert_legal(chains, cache_of, capacity, run)
    solved = cpsat.solve(
        Problem("pooled", tuple(map(tuple, chains)), cache_of, capacity), workers=1
    )
    assert solved.status == "OPTIMAL"
    assert run.misses == solved.objective == recount.min_misses(chains, cache_of, capacity)


@settings(max_examples=50, deadline=None)
@given(routed_instances(max_hosts=3), st.integers(1, 6))
def test_min_equals_cpsat_per_host(instance, capacity):
    chains, _, routing = instance
    run = min_run(chains, routing, capacity)
    assert_legal(chains, routing, capacity, run)
    solved = cpsat.solve(
        Problem("per-host", tuple(map(tuple, chains)), tuple(routing), capacity), workers=1
    )
    assert solved.status == "OPTIMAL"
    assert run.misses == solved.objective == recount.min_misses(chains, routing, capacity)


@settings(max_examples=80, deadline=None)
@given(prefix_closed_chains(max_nodes=5, max_requests=7), st.integers(1, 3), st.booleans())
def test_min_equals_exhaustive_search(chains, capacity, two_hosts):
    cache_of = tuple(t % 2 if two_hosts else 0 for t in range(len(chains)))
    run = min_run(chains, cache_of, capacity)
    assert_legal(chains, cache_of, capacity, run)
    assert run.misses == exhaustive_prefix_misses(chains, cache_of, capacity)


@settings(max_examples=60, deadline=None)
@given(prefix_closed_chains(max_nodes=12, max_requests=25))
def test_uncapacitated_min_is_the_floor(chains):
    run = min_run(chains, None, None)
    assert_legal(chains, (0,) * len(chains), None, run)
    assert run.misses == len({b for c in chains for b in c})


def test_capacity_smaller_than_a_chain():
    # One chain of 5 blocks read three times with C = 2: keep the first two blocks.
    chains = [(1, 2, 3, 4, 5)] * 3
    run = min_run(chains, None, 2)
    assert run.hit_blocks == (0, 2, 2)
    assert run.misses == 5 + 3 + 3 == exhaustive_prefix_misses(chains, (0, 0, 0), 2)


def test_bypass_keeps_the_parent():
    # C = 1: a demand cache would have to keep block 2 (the last fetched); bypass MIN keeps 1.
    run = min_run([(1, 2), (1,), (1, 2)], None, 1)
    assert run.hit_blocks == (0, 1, 1)
    assert run.dropped[0] == (2,)


def test_next_uses():
    assert next_uses(np.array([5, 6, 5, 5, 7])).tolist() == [2, 5, 3, 5, 5]


def test_bad_capacity():
    with pytest.raises(ValueError):
        min_run([(1,)], None, 0)


@settings(max_examples=40, deadline=None)
@given(routed_instances(max_hosts=3), st.integers(1, 5))
def test_chunked_loop_gives_the_same_run(instance, capacity):
    """The loop converts CHUNK references at a time; tiny chunks must not change the run."""
    from pyverify.optimal import belady

    chains, _, routing = instance
    whole = min_run(chains, routing, capacity)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(belady, "CHUNK", 3)
        assert min_run(chains, routing, capacity) == whole


def all_prefix_closed_traces(max_nodes: int, max_requests: int):
    """Every trace of 1..max_requests requests, each the root path of a node of a tree on max_nodes nodes.

    Trees are parent lists (node i's parent is the root or an earlier node), which
    covers every rooted forest up to relabelling; requests are all sequences of nodes.
    """
    from itertools import product

    for parents in product(*[range(-1, i) for i in range(max_nodes)]):
        paths = []
        for node in range(max_nodes):
            path = []
            while node != -1:
                path.append(node)
                node = parents[node]
            paths.append(tuple(reversed(path)))
        for length in range(1, max_requests + 1):
            for targets in product(range(max_nodes), repeat=length):
                yield [paths[t] for t in targets]


def test_min_is_optimal_on_every_small_trace():
    """A bounded check by enumeration: all traces of at most 4 requests over trees of 4 nodes, C = 1..3.

    (Trees with fewer nodes appear as the nodes no request reads.) Complete for that
    size, not a proof beyond it.
    """
    checked = 0
    for chains in all_prefix_closed_traces(4, 4):
        cache_of = (0,) * len(chains)
        for capacity in (1, 2, 3):
            assert min_run(chains, cache_of, capacity).misses == exhaustive_prefix_misses(
                chains, cache_of, capacity
            ), (chains, capacity)
            checked += 1
    assert checked == 24 * (4 + 16 + 64 + 256) * 3


@settings(max_examples=60, deadline=None)
@given(routed_instances(max_hosts=3), st.integers(1, 6))
def test_count_only_loop_agrees_with_the_witness_loop(instance, capacity):
    """min_run_flat without a witness uses an array loop (compiled by numba when installed): same hits."""
    from pyverify.optimal import belady
    from pyverify.cache.arrays import flatten

    chains, _, routing = instance
    ids, lengths = flatten(chains)
    with_witness = belady.min_run_flat(ids, lengths, routing, capacity, witness=True)
    count_only = belady.min_run_flat(ids, lengths, routing, capacity, witness=False)
    assert list(count_only[0]) == list(with_witness[0]) and count_only[2] == with_witness[2]
    # The same loop uncompiled (plain Python), on the pooled sequence.
    keys, universe = belady.dense_ids(ids)
    keys = keys.astype(np.int64)
    flags = belady._hits_one_cache(keys, next_uses(keys), capacity, max(universe, 1))
    assert int(ids.size - flags.sum()) == min_run(chains, None, capacity).misses
