"""Routing policies: each policy's stated rule, checked directly; the online
prefix-affinity router against a replay of its routing through simulate."""

from __future__ import annotations

import hashlib
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyverify.errors import UserError
from pyverify.inputs.model import Instance
from pyverify.sim.routing import POLICIES, RoutingOptions, prefix_affinity_routing, route
from pyverify.sim.simulate import FIFO, LRU, PER_HOST, simulate

from .strategies import prefix_closed_chains


def instance(chains, extra=()):
    return Instance(
        name="t", fleet_size=1, chains=tuple(tuple(c) for c in chains), extra=tuple(extra)
    )


def test_round_robin_and_random_rules():
    inst = instance([(1,)] * 7)
    assert route(inst, 3, "round-robin") == (0, 1, 2, 0, 1, 2, 0)
    rng = random.Random(5)
    assert route(inst, 4, "random", RoutingOptions(seed=5)) == tuple(
        rng.randrange(4) for _ in range(7)
    )
    assert route(inst, 4, "random") == route(inst, 4, "random", RoutingOptions(seed=0))


def test_route_key_and_prefix_hash_are_sha256_mod_fleet():
    keys = ["alice", "bob", "alice", "carol"]
    inst = instance([(1, 2), (3,), (1, 4), (5,)], [{"route_key": k} for k in keys])
    expected = tuple(int(hashlib.sha256(k.encode()).hexdigest()[:16], 16) % 5 for k in keys)
    assert route(inst, 5, "route-key") == expected
    assert route(inst, 5, "prefix-hash") == tuple(
        int(hashlib.sha256(str(c[0]).encode()).hexdigest()[:16], 16) % 5 for c in inst.chains
    )
    with pytest.raises(UserError, match="requests\\[0\\] has none"):
        route(instance([(1,)]), 2, "route-key")


def test_old_call_signature_and_unknown_policy():
    inst = Instance(name="t", fleet_size=4, chains=((1,), (2,)), routing=(3, 1))
    assert route(inst, 2, "fold") == (1, 1)
    with pytest.raises(UserError, match="unknown routing policy"):
        route(inst, 2, "nearest")


def test_prefix_affinity_by_hand():
    # 2 hosts, slack 1 (caps 1, 1, 2, 2, 3): request 0 -> host 0 (tie: load, then id);
    # request 1 shares nothing -> least loaded host 1; request 2 extends (1, 2): host 0 holds 2 blocks;
    # request 3 (5,) -> host 1 (host 0 has load 2 = cap 2); request 4 (1, 2, 9) -> host 0 (cap 3).
    chains = [(1, 2), (5, 6), (1, 2, 3), (5,), (1, 2, 9)]
    run = prefix_affinity_routing(chains, 2, slack=1.0)
    assert run.routing == (0, 1, 0, 1, 0)
    assert run.hit_blocks == (0, 0, 2, 1, 2)


def test_prefix_affinity_cap_overrides_affinity():
    # With slack 1 and 2 hosts, four identical requests must alternate.
    run = prefix_affinity_routing([(1, 2)] * 4, 2, slack=1.0)
    assert run.routing == (0, 1, 0, 1)
    assert run.hit_blocks == (0, 0, 2, 2)
    # With a generous cap they all stay on host 0.
    assert prefix_affinity_routing([(1, 2)] * 4, 2, slack=4.0).routing == (0, 0, 0, 0)


@given(
    prefix_closed_chains(),
    st.integers(1, 5),
    st.one_of(st.none(), st.integers(1, 6)),
    st.sampled_from([LRU, FIFO]),
    st.sampled_from([1.0, 1.25, 2.0]),
)
def test_prefix_affinity_replays_through_simulate_and_respects_cap(
    chains, fleet, capacity, eviction, slack
):
    run = prefix_affinity_routing(chains, fleet, capacity, eviction, slack)
    replay = simulate(chains, run.routing, PER_HOST, capacity=capacity, eviction=eviction)
    assert replay.hit_blocks == run.hit_blocks
    loads = [0] * fleet
    for index, host in enumerate(run.routing):
        loads[host] += 1
        assert max(loads) <= math.ceil(slack * (index + 1) / fleet)


@given(prefix_closed_chains(), st.integers(1, 5))
def test_prefix_affinity_never_worse_than_its_best_match(chains, fleet):
    """Uncapacitated and uncapped, each request hits at least as much as on any host it could use:
    its hit count equals the longest prefix any host held, recomputed with plain sets."""
    run = prefix_affinity_routing(chains, fleet, slack=float(len(chains) + 1))
    held = [set() for _ in range(fleet)]
    for chain, host, hits in zip(chains, run.routing, run.hit_blocks):

        def match(cache):
            count = 0
            for block in chain:
                if block not in cache:
                    break
                count += 1
            return count

        assert hits == match(held[host]) == max(match(cache) for cache in held)
        held[host].update(chain)


@pytest.mark.parametrize("policy", ["round-robin", "random", "prefix-hash", "prefix-affinity"])
def test_policies_return_valid_hosts(policy):
    chains = [(i % 3, 10 + i) for i in range(20)]
    routing = route(instance(chains), 4, policy)
    assert len(routing) == 20 and set(routing) <= set(range(4))
    assert policy in POLICIES
