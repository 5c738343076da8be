"""The searchers' witnesses as arrays (the packed certify route) are the runs of their list forms, on Hypothesis instances."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.optimal.belady import min_run, min_witness_arrays
from pyverify.optimal.forced import forced_run, forced_witness_arrays

from .strategies import routed_instances


@settings(max_examples=150, deadline=None)
@given(routed_instances(), st.integers(1, 6), st.booleans(), st.booleans())
def test_array_witness_is_the_list_witness(instance, capacity, forced, pooled):
    chains, hosts, routing = instance
    caches = [0] * len(chains) if pooled else routing
    listed = (forced_run if forced else min_run)(chains, caches, capacity)
    ids = np.array([b for c in chains for b in c], dtype=np.int64)
    lengths = np.array([len(c) for c in chains], dtype=np.int64)
    hits, offsets, blocks, misses = (forced_witness_arrays if forced else min_witness_arrays)(
        ids, lengths, np.array(caches), capacity
    )
    assert hits.tolist() == list(listed.hit_blocks) and misses == listed.misses
    assert [
        tuple(blocks[offsets[t] : offsets[t + 1]].tolist()) for t in range(len(chains))
    ] == list(listed.dropped)
