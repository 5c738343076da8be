"""LRU miss counts agree with libCacheSim, an LRU we did not write.

Like with like: libCacheSim's LRU is a *flat* cache (a block hits when it is
present), replaying the flat block sequence (every request's chain, in order;
each block an object of size 1, cache size C objects). pyverify's caches hit
on the longest cached prefix only; on a prefix-closed trace the two coincide
for LRU (proof in pyverify/sim/mrc.py), so we compare pyverify.sim.simulate (longest
prefix), the one-pass curve, and libCacheSim at the same capacities.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from pyverify.sim.mrc import lru_curve
from pyverify.sim.simulate import LRU, POOLED, simulate

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .strategies import prefix_closed_chains

lcs = pytest.importorskip("libcachesim")

TRACE = MOONCAKE_SYNTHETIC


def libcachesim_lru_misses(sequence, capacity: int) -> int:
    cache = lcs.LRU(capacity, hashpower=16)
    request = lcs.Request()
    request.obj_size = 1
    hits = 0
    for block in sequence:
        request.obj_id = int(block)
        hits += bool(cache.get(request))
    return len(sequence) - hits


def test_by_hand():
    # 1 2 3 1 2 4 1 5 2 3 with C = 3: misses 1 2 3 . . 4 . 5 2 3 -> 7
    assert libcachesim_lru_misses([1, 2, 3, 1, 2, 4, 1, 5, 2, 3], 3) == 7


@settings(max_examples=60)
@given(prefix_closed_chains(max_nodes=12, max_requests=25))
def test_random_prefix_closed_traces(chains):
    flat = [block for chain in chains for block in chain]
    curve = lru_curve(chains)
    for capacity in range(1, len(set(flat)) + 1):
        expected = libcachesim_lru_misses(flat, capacity)
        assert simulate(chains, None, POOLED, capacity=capacity, eviction=LRU).misses == expected
        assert curve.misses(capacity) == expected


@pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)
def test_mooncake_trace_at_several_capacities():
    from pyverify.inputs.mooncake import import_mooncake

    chains = import_mooncake(TRACE).chains
    flat = np.fromiter((b for chain in chains for b in chain), dtype=np.int64)
    curve = lru_curve(chains)
    for capacity in (1, 64, 1000, 5859, 20000, 43924):
        expected = libcachesim_lru_misses(flat.tolist(), capacity)
        assert curve.misses(capacity) == expected, capacity
        if capacity in (1000, 20000):
            assert simulate(chains, None, POOLED, capacity=capacity).misses == expected
