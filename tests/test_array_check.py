"""The trusted checker's replay, recounts and digest, held to independent references on
Hypothesis instances.

* the replay (vectorised, :mod:`pyverify.trusted.runs`) to :func:`reference_replay` below, which
  steps through the requests with Python sets: verdict for verdict, the exact words of each
  refusal. Runs are a genuine MIN or forced run, then possibly one entry changed, so that every
  refusal is met;
* the recounts (:mod:`pyverify.trusted.recount`) to the searchers' MIN and forced runs
  (:mod:`pyverify.sim`), both as the checker runs them (plain Python) and with the numba loops
  certify lends to its own check (:mod:`pyverify.certify.accelerate`);
* each of those lent loops to the trusted code it replaces: the compiled replay to the NumPy
  replay on genuine and forged runs (same verdict, same words), the renumbering to
  ``np.unique``, next uses to :func:`pyverify.trusted.recount.next_uses`;
* the content digest to :mod:`pyverify.inputs.columnar.digest`.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numpy as np

from pyverify.certify.accelerate import lent_loops
from pyverify.errors import CheckFailed
from pyverify.optimal.belady import min_run
from pyverify.optimal.forced import forced_run
from pyverify.trusted import recount
from pyverify.trusted.check import replay

from .strategies import routed_instances


@pytest.fixture(params=["compiled", "python"])
def loops(request, monkeypatch):
    """Run the checker as ``verify`` does (NumPy, plain Python), or as certify's check lends it."""
    monkeypatch.setattr(recount, "lent", lent_loops() if request.param == "compiled" else {})
    return request.param


def reference_replay(chains, caches, capacity, run, what, forced=False) -> int:
    """Rules 1-5 step by step on sets: the replay as the checker's docstring states it."""
    n = len(chains)
    for key in ("cache_of", "hit_blocks", "dropped"):
        if len(run[key]) != n:
            raise CheckFailed(
                f"{what}.{key} has {len(run[key])} entries, the instance has {n} requests"
            )
    held: dict[int, set[int]] = {}
    misses = 0
    for t, chain in enumerate(chains):
        q, h, dropped = run["cache_of"][t], run["hit_blocks"][t], run["dropped"][t]
        if q != caches[t]:
            raise CheckFailed(
                f"{what}.cache_of[{t}] is {q}, but request {t} reads cache {caches[t]}"
            )
        if h > len(chain):
            raise CheckFailed(
                f"{what}.hit_blocks[{t}] is {h}, but request {t} has only {len(chain)} blocks"
            )
        resident = held.get(q, set())
        for j in range(h):
            if chain[j] not in resident:
                raise CheckFailed(
                    f"{what}.hit_blocks[{t}]: block {chain[j]} counted as a hit but not held by cache {q}"
                )
        if h < len(chain) and chain[h] in resident:
            raise CheckFailed(
                f"{what}.hit_blocks[{t}]: block {chain[h]} is held by cache {q}, so the hit prefix is longer than {h}"
            )
        if len(set(dropped)) != len(dropped):
            raise CheckFailed(f"{what}.dropped[{t}] repeats a block")
        fetched = set(chain[h:])
        for b in dropped:
            if b not in resident and b not in fetched:
                raise CheckFailed(
                    f"{what}.dropped[{t}]: cache {q} drops block {b}, which it neither held nor fetched"
                )
        if forced:
            for j, b in enumerate(chain if capacity is None else chain[:capacity]):
                if b in set(dropped):
                    how = "hit" if j < h else "fetched"
                    raise CheckFailed(
                        f"{what}.dropped[{t}]: cache {q} drops block {b}, which request {t} {how}: "
                        "forced admission holds every block of the request (up to the capacity) when it ends"
                    )
        resident = (resident | fetched) - set(dropped)
        if capacity is not None and len(resident) > capacity:
            raise CheckFailed(
                f"{what}.dropped[{t}]: cache {q} would hold {len(resident)} blocks, capacity is {capacity}"
            )
        held[q] = resident
        misses += len(chain) - h
    return misses  # fmt: skip


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
def test_recounts_equal_the_searchers_optima(loops, instance, capacity, pooled):
    chains, hosts, routing = instance
    caches = [0] * len(chains) if pooled else routing
    assert recount.min_misses(chains, caches, capacity) == min_run(chains, caches, capacity).misses
    forced = forced_run(chains, caches, capacity).misses
    assert recount.forced_misses(chains, caches, capacity) == forced


@SETTINGS
@given(routed_instances(), st.integers(1, 6), st.booleans(), st.booleans(), st.data())
def test_replay_equals_the_reference_replay_verdict_for_verdict(
    instance, capacity, forced, uncapacitated, data
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
    expected = outcome(lambda: reference_replay(chains, routing, limit, run, "witness", forced))
    assert outcome(lambda: replay(chains, routing, limit, run, "witness", forced)) == expected
    with lending(lent_loops()):  # certify's own check: the compiled replay, word for word
        assert outcome(lambda: replay(chains, routing, limit, run, "witness", forced)) == expected


@contextmanager
def lending(loops):
    before = dict(recount.lent)
    recount.lent.clear()
    recount.lent.update(loops)
    try:
        yield
    finally:
        recount.lent.clear()
        recount.lent.update(before)


def forged_runs(chains, hosts, routing, capacity, forced):
    """Runs most of which are illegal somewhere: a genuine run with one or two entries changed
    (a cache, a hit count or the drops), or hits and drops drawn at random outright."""
    blocks = sorted({block for chain in chains for block in chain}) + [10_001, 2**63 - 1]
    n, drops = len(chains), st.lists(st.sampled_from(blocks), max_size=4)
    outright = st.fixed_dictionaries(
        {
            "cache_of": st.just(list(routing)),
            "hit_blocks": st.lists(st.integers(0, 5), min_size=n, max_size=n),
            "dropped": st.lists(drops, min_size=n, max_size=n),
        }
    )

    @st.composite
    def changed(draw):
        run = (forced_run if forced else min_run)(chains, routing, capacity).as_witness()
        for _ in range(draw(st.integers(1, 2))):
            change = draw(
                st.sampled_from(["drop less", "drop own", "hits", "drop any", "cache_of"])
            )
            dropping = [t for t in range(n) if run["dropped"][t]]
            t = draw(st.sampled_from(dropping if change == "drop less" and dropping else range(n)))
            if change == "cache_of":
                run["cache_of"][t] += 1
            elif change == "hits":
                run["hit_blocks"][t] = max(0, run["hit_blocks"][t] + draw(st.sampled_from([-1, 1])))
            elif change == "drop less":
                del run["dropped"][t][draw(st.integers(0, max(0, len(run["dropped"][t]) - 1))) :]
            else:  # a block of the request itself (forced admission pins it), or any
                run["dropped"][t] += draw(
                    st.lists(st.sampled_from(chains[t]), min_size=1, max_size=2)
                    if change == "drop own"
                    else drops
                )
        return run

    return changed() | changed() | changed() | outright


@SETTINGS
@given(routed_instances(), st.integers(1, 6), st.booleans(), st.booleans(), st.data())
def test_the_compiled_replay_says_what_the_numpy_replay_says_on_forged_runs(
    instance, capacity, forced, uncapacitated, data
):
    """Runs legal or not: the replay certify lends and verify's NumPy replay agree on the verdict
    and the words (and both with the step-by-step reference)."""
    chains, hosts, routing = instance
    run = data.draw(forged_runs(chains, hosts, routing, capacity, forced))
    limit = None if uncapacitated and not forced else capacity
    with lending({}):
        said = outcome(lambda: replay(chains, routing, limit, run, "witness", forced))
    with lending(lent_loops()):
        assert outcome(lambda: replay(chains, routing, limit, run, "witness", forced)) == said
    assert outcome(lambda: reference_replay(chains, routing, limit, run, "witness", forced)) == said


@pytest.mark.parametrize(
    "hits, dropped, forced, expected",
    [
        ([0, 3], [[], []], False, "block 3 counted as a hit but not held by cache 0"),
        ([0, 1], [[], []], False, "block 2 is held by cache 0, so the hit prefix is longer than 1"),
        ([0, 2], [[], [9, 3, 9]], False, "dropped[1] repeats a block"),
        ([0, 2], [[], [3, 9]], False, "cache 0 drops block 9, which it neither held nor fetched"),
        ([0, 2], [[], [3, 2]], True, "drops block 2, which request 1 hit: forced admission"),
        ([0, 2], [[], []], False, "cache 0 would hold 3 blocks, capacity is 2"),
    ],
)
def test_each_refusal_names_the_same_block_in_both_replays(hits, dropped, forced, expected):
    """A refusal past a request's first block: the compiled replay names the block the NumPy
    replay names."""
    chains, run = [(1, 2), (1, 2, 3)], {"cache_of": [0, 0], "hit_blocks": hits, "dropped": dropped}
    with lending({}):
        said = outcome(lambda: replay(chains, [0, 0], 2, run, "witness", forced))
    assert expected in said
    with lending(lent_loops()):
        assert outcome(lambda: replay(chains, [0, 0], 2, run, "witness", forced)) == said


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 40), max_size=60) | st.lists(st.integers(0, 2**63 - 1), max_size=30),
    st.integers(0, 2**62),
)
def test_the_lent_renumbering_and_next_uses_equal_the_trusted_ones(values, shift):
    values = np.array(values, dtype=np.int64) + (shift if values and max(values) <= 40 else 0)
    blocks, index = lent_loops()["unique"](values)
    expected_blocks, expected_index = np.unique(values, return_inverse=True)
    assert blocks.dtype == expected_blocks.dtype and index.dtype == expected_index.dtype
    assert np.array_equal(blocks, expected_blocks)
    assert np.array_equal(index, expected_index.ravel())
    following = lent_loops()["next_uses"](expected_index.ravel())
    assert np.array_equal(following, recount.next_uses(expected_index.ravel()))


def test_a_run_that_fetches_and_drops_nothing_is_refused_not_a_crash():
    """With no fetch and no drop there is no event at all: every claimed hit is refused."""
    run = {"cache_of": [0], "hit_blocks": [2], "dropped": [[]]}
    expected = "refused: w.hit_blocks[0]: block 1 counted as a hit but not held by cache 0"
    assert outcome(lambda: reference_replay([(1, 2)], [0], 2, run, "w")) == expected
    assert outcome(lambda: replay([(1, 2)], [0], 2, run, "w")) == expected


BIG = 2**63 - 9  # block ids go up to 2**63 - 1: pairing them with a cache must not overflow


@pytest.mark.parametrize(
    "forged", [None, [BIG + 7], [2**63 - 1], [BIG, BIG + 7], [BIG + 7, 2**63 - 1]]
)
def test_block_ids_up_to_2_63_are_paired_without_overflow(loops, forged):
    """Forged ids near 2**63 alias nothing: a block cache 1 never held cannot be dropped there."""
    chains = [(BIG, BIG + 7), (BIG,), (5, 6), (BIG, BIG + 7, 3), (BIG, BIG + 7)]
    routing = [0, 1, 0, 0, 1]
    run = min_run(chains, routing, 2).as_witness()
    if forged is not None:
        run["dropped"][1] = forged  # cache 1 never held BIG + 7 (nor any of these) by request 1
    assert outcome(lambda: replay(chains, routing, 2, run, "witness")) == outcome(
        lambda: reference_replay(chains, routing, 2, run, "witness")
    )
    assert recount.min_misses(chains, routing, 2) == min_run(chains, routing, 2).misses


@settings(max_examples=100, deadline=None)
@given(routed_instances(), st.booleans(), st.lists(st.integers(0, 5000), min_size=1, max_size=25))
def test_the_digest_equals_the_inputs_one_and_the_reader_gives_its_columns(
    instance, routed, tokens
):
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.columnar.digest import content_sha256 as inputs_digest
    from pyverify.inputs.model import Instance
    from pyverify.trusted.digest import content_sha256
    from pyverify.trusted.reader import instance_from_document

    chains, hosts, routing = instance
    extra = tuple(
        {"input_tokens": tokens[t % len(tokens)], "arrival_ms": float(t) / 3}
        for t in range(len(chains))
    )
    made = Instance(
        name="h",
        fleet_size=hosts,
        chains=tuple(chains),
        routing=tuple(routing) if routed else None,
        block_size_tokens=16,
        extra=extra,
    )
    trace = ColumnarTrace.from_instance(made)
    read = instance_from_document(made.to_json(), "made.json")
    assert content_sha256(trace) == inputs_digest(trace) == content_sha256(read)
