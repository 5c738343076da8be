"""The one cache interface (pyverify/cache/protocol.py): every cache answers prefix_hits, start and
finish, and serving a request alone through them is each policy's own reference run."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.cache.names import ENGINE_EVICTIONS, EVICTIONS, SGLANG, SGLANG_FIFO, VLLM
from pyverify.cache.pinning import PINNED_CACHES
from pyverify.cache.policies import engine_cache, new_cache
from pyverify.cache.protocol import hits_one_at_a_time, serve_alone
from pyverify.cache.sglang import sglang_hits
from pyverify.cache.unbounded import Unbounded
from pyverify.cache.vllm import vllm_hits
from pyverify.sim.simulate import _uncapacitated_hits

from .strategies import prefix_closed_chains


def every_cache(capacity: int):
    """One empty cache of every kind the simulators drive, by name."""
    caches = {f"block {name}": new_cache(name, capacity) for name in EVICTIONS}
    caches.update({f"pinned {name}": cls(capacity) for name, cls in PINNED_CACHES.items()})
    caches.update({f"engine {name}": engine_cache(name, capacity, 1) for name in ENGINE_EVICTIONS})
    caches["unbounded"] = Unbounded()
    return caches


def state_of(cache) -> bytes:
    """Everything a cache holds, in order (to tell whether a call changed it)."""
    return pickle.dumps(cache)


@settings(max_examples=60, deadline=None)
@given(prefix_closed_chains(), st.integers(1, 6), st.data())
def test_prefix_hits_is_a_peek_and_serve_alone_answers_it(chains, capacity, data):
    for name, cache in every_cache(capacity).items():
        for index, chain in enumerate(chains):
            probe = data.draw(st.sampled_from(chains))
            before = state_of(cache)
            peeked = cache.prefix_hits(probe)
            assert state_of(cache) == before, f"{name}: prefix_hits changed the cache"
            held = cache.prefix_hits(chain)
            hits = serve_alone(cache, index, chain, len(chain))
            if name.startswith("engine"):  # the engines cap hits (input_len - 1) or refuse
                assert hits is None or hits <= held, name
            else:
                assert hits == held, f"{name}: served {hits} hits where {held} were held"
            assert peeked >= 0


@settings(max_examples=60, deadline=None)
@given(prefix_closed_chains(), st.integers(1, 6))
def test_the_pinned_caches_serving_alone_are_simulates_caches(chains, capacity):
    cache_of = [0] * len(chains)
    for name, pinned in PINNED_CACHES.items():
        assert hits_one_at_a_time(chains, cache_of, lambda: pinned(capacity)) == hits_one_at_a_time(
            chains, cache_of, lambda: new_cache(name, capacity)
        ), name
    assert hits_one_at_a_time(chains, cache_of, Unbounded)[0] == _uncapacitated_hits(
        chains, cache_of
    )


@settings(max_examples=60, deadline=None)
@given(prefix_closed_chains(), st.integers(1, 12), st.integers(1, 2))
def test_the_engines_through_the_interface_are_their_reference_runs(chains, capacity, caches):
    """vllm_hits and sglang_hits drive the engines' models directly (the parity-checked runs)."""
    cache_of = [index % caches for index in range(len(chains))]
    tokens = [len(chain) for chain in chains]
    through = {
        name: hits_one_at_a_time(chains, cache_of, lambda: engine_cache(name, capacity, 1), tokens)
        for name in (VLLM, SGLANG, SGLANG_FIFO)
    }
    assert through[VLLM] == vllm_hits(chains, tokens, cache_of, capacity, 1)
    assert through[SGLANG] == sglang_hits(chains, tokens, cache_of, capacity, 1, 1, "lru")
    assert through[SGLANG_FIFO] == sglang_hits(chains, tokens, cache_of, capacity, 1, 1, "fifo")


@pytest.mark.parametrize("name", sorted(PINNED_CACHES))
def test_a_start_that_does_not_fit_beside_the_running_ones_waits_and_changes_nothing(name):
    cache = PINNED_CACHES[name](3)
    hits, running = cache.start(0, [1, 2], None)
    assert hits == 0
    before = state_of(cache)
    assert cache.start(1, [5, 6], None) is None  # 2 pinned + 2 new > 3
    assert state_of(cache) == before
    cache.finish(running)
    assert cache.start(1, [5, 6], None) is not None  # nothing runs: it starts


def test_vllms_start_waits_while_the_pool_is_busy_and_never_schedules_a_prompt_too_long():
    cache = engine_cache(VLLM, 4, 1)
    hits, running = cache.start(0, [1, 2, 3], 3)
    before = state_of(cache)
    assert cache.start(1, [7, 8], 2) is None and state_of(cache) == before
    cache.finish(running)
    assert cache.start(1, [7, 8], 2) is not None
    assert serve_alone(engine_cache(VLLM, 4, 1), 0, [1, 2, 3, 4, 5], 5) is None
