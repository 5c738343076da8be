"""Vectorised uncapacitated counting equals the simulator (and the Lean facts)."""

from __future__ import annotations

import numpy as np
from hypothesis import given

from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.counting import count_uncapacitated, reference_hosts
from pyverify.sim.simulate import PER_HOST, POOLED, simulate

from .strategies import routed_instances


@given(routed_instances())
def test_fast_counts_equal_simulate(case):
    chains, hosts, routing = case
    ids, lengths = flatten(chains)
    pooled, per_host = count_uncapacitated(ids, reference_hosts(routing, lengths), hosts)
    assert pooled == simulate(chains, routing, POOLED).misses
    assert per_host == simulate(chains, routing, PER_HOST).misses


def test_sparse_ids_are_renumbered():
    ids = np.array([2**62, 5, 2**62, 7], dtype=np.int64)
    dense, universe = dense_ids(ids)
    assert universe == 3 and dense.tolist() == [2, 0, 2, 1]
    assert count_uncapacitated(ids, np.array([0, 0, 1, 1], dtype=np.int32), 2) == (3, 4)
