"""The checker's array replay, recounts and digest equal its plain-Python ones (the reference) on Hypothesis instances.

Both forms of each array loop are tested: compiled by numba, and run as plain
Python (what the checker does without numba). Runs are a genuine MIN or
forced run, then possibly one entry changed, so that every refusal of the
plain replay is met, and its exact words must come out of both.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyverify.sim.belady_min import min_run
from pyverify.sim.forced_min import forced_run
from pyverify.certify.accelerate import numba_compile
from pyverify.trusted import array_check, array_recount, compiled, recount
from pyverify.trusted.array_digest import content_sha256_arrays
from pyverify.trusted.check import CheckFailed, replay
from pyverify.trusted.digest import content_sha256

from .strategies import routed_instances


@pytest.fixture(params=["compiled", "python"])
def loops(request, monkeypatch):
    """Run the array loops compiled, or as the plain Python they are written in."""
    if request.param == "python":
        monkeypatch.setattr(array_check, "kernel", lambda function: function)
        monkeypatch.setattr(array_recount, "kernel", lambda function: function)
    else:
        monkeypatch.setattr(
            compiled, "compiler", numba_compile
        )  # numba, as certify's check runs them
        monkeypatch.setattr(array_check, "kernel", compiled.kernel)
        monkeypatch.setattr(array_recount, "kernel", compiled.kernel)
    return request.param


def flat(chains):
    ids = np.array([b for c in chains for b in c], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(c) for c in chains]))).astype(np.int64)
    return ids, offsets


def packed(run):
    counts = [len(d) for d in run["dropped"]]
    return {
        "cache_of": np.array(run["cache_of"], dtype=np.int64),
        "hit_blocks": np.array(run["hit_blocks"], dtype=np.int64),
        "dropped_offsets": np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        "dropped_blocks": np.array([b for d in run["dropped"] for b in d], dtype=np.int64),
    }


def outcome(function):
    try:
        return function()
    except CheckFailed as failure:
        return f"refused: {failure}"


SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(routed_instances(), st.integers(1, 6), st.booleans())
def test_recounts_equal_the_plain_ones(loops, instance, capacity, pooled):
    chains, hosts, routing = instance
    caches = [0] * len(chains) if pooled else routing
    ids, offsets = flat(chains)
    counts = array_check.ArrayCounts(type("T", (), {"ids": ids, "offsets": offsets})(), caches)
    assert counts.min_misses(capacity) == recount.min_misses(chains, caches, capacity)
    assert counts.forced_misses(capacity) == recount.forced_misses(chains, caches, capacity)
    assert counts.floor() == len({(q, b) for q, c in zip(caches, chains) for b in c})


@SETTINGS
@given(routed_instances(), st.integers(1, 6), st.booleans(), st.booleans(), st.data())
def test_replay_equals_the_plain_replay_verdict_for_verdict(
    loops, instance, capacity, forced, uncapacitated, data
):
    chains, hosts, routing = instance
    run = (forced_run if forced else min_run)(chains, routing, capacity).as_witness()
    change = data.draw(
        st.sampled_from(["none", "cache_of", "hit_blocks", "drop more", "drop less", "drop again"])
    )
    t = data.draw(st.integers(0, len(chains) - 1))
    if change in ("cache_of", "hit_blocks"):
        run[change][t] = max(0, run[change][t] + data.draw(st.sampled_from([-1, 1])))
    elif change == "drop more":
        run["dropped"][t] = sorted(set(run["dropped"][t]) | {data.draw(st.integers(0, 10_002))})
    elif change == "drop less" and run["dropped"][t]:
        run["dropped"][t] = run["dropped"][t][1:]
    elif change == "drop again" and run["dropped"][t]:
        run["dropped"][t] = run["dropped"][t] + run["dropped"][t][:1]
    limit = None if uncapacitated and not forced else capacity
    ids, offsets = flat(chains)
    caches = np.array(routing, dtype=np.int64)
    plain = outcome(lambda: replay(chains, routing, limit, run, "witness", forced))
    arrays = outcome(
        lambda: array_check.replay_arrays(
            ids, offsets, caches, limit, packed(run), "witness", forced
        )
    )
    assert arrays == plain


BIG = 2**63 - 9  # block ids go up to 2**63 - 1: pairing them with a cache must not overflow


@pytest.mark.parametrize(
    "forged", [None, [BIG + 7], [2**63 - 1], [BIG, BIG + 7], [BIG + 7, 2**63 - 1]]
)
def test_block_ids_up_to_2_63_are_renumbered_without_overflow(loops, forged):
    """Ids far above the number of references take the renumbering path; forged ids near 2**63 alias nothing."""
    chains = [(BIG, BIG + 7), (BIG,), (5, 6), (BIG, BIG + 7, 3), (BIG, BIG + 7)]
    routing = [0, 1, 0, 0, 1]
    run = min_run(chains, routing, 2).as_witness()
    if forged is not None:
        run["dropped"][1] = forged  # cache 1 never held BIG + 7 (nor any of these) by request 1
    ids, offsets = flat(chains)
    assert outcome(
        lambda: array_check.replay_arrays(
            ids, offsets, np.array(routing), 2, packed(run), "witness"
        )
    ) == outcome(lambda: replay(chains, routing, 2, run, "witness"))
    counts = array_check.ArrayCounts(type("T", (), {"ids": ids, "offsets": offsets})(), routing)
    assert counts.min_misses(2) == recount.min_misses(chains, routing, 2)
    assert counts.floor() == len({(q, b) for q, c in zip(routing, chains) for b in c})


@settings(max_examples=100, deadline=None)
@given(routed_instances(), st.booleans(), st.lists(st.integers(0, 5000), min_size=1, max_size=25))
def test_array_digest_equals_the_plain_digest(instance, routed, tokens):
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.model import Instance

    chains, hosts, routing = instance
    extra = tuple(
        {"input_tokens": tokens[t % len(tokens)], "arrival_ms": float(t) / 3}
        for t in range(len(chains))
    )
    made = Instance(
        name="h",
        hosts=hosts,
        chains=tuple(chains),
        routing=tuple(routing) if routed else None,
        block_size_tokens=16,
        extra=extra,
    )
    assert content_sha256_arrays(ColumnarTrace.from_instance(made)) == content_sha256(made)
