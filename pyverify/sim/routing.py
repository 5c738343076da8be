"""Routing: which host serves each request, for a fleet of a given size.

A policy maps ``(instance, fleet_size, options)`` to one host id per request.
Policies are named so that every reported number says how its routing was
derived. Each policy's rule, including how it breaks ties and caps load, is
stated here and is the whole of its definition.

Static policies (the routing does not depend on any cache):

``given``
    The instance's own routing, unchanged. Only for ``fleet_size == hosts``.
``fold``
    Shrink the instance's own routing to a smaller fleet: host ``h`` becomes
    ``h mod fleet_size``. Folding only merges hosts, so per-host caches of the
    smaller fleet see a union of what the larger fleet's caches saw; with power
    of two fleet sizes each fleet refines the next smaller one.
``round-robin``
    Request ``i`` (in file order) goes to host ``i mod fleet_size``. Needs no
    routing in the instance: the default for traces.
``random``
    Each request goes to a host drawn uniformly and independently by
    ``random.Random(seed).randrange(fleet_size)``, in file order (``seed``
    defaults to 0, so a run is reproducible; the seed is part of the result).
``route-key``
    Hash of the request's ``route_key`` field (a session or user id): host =
    first 8 bytes of SHA-256 of the UTF-8 key, big-endian, ``mod fleet_size``.
    Needs a ``route_key`` on every request (traces carry none).
``prefix-hash``
    The same hash of the request's first block id (its prompt opening, written
    in decimal): requests that share an opening always meet on one host. This
    is what a stateless router can do when it sees the prompt but keeps no
    cache state.

Online policy (the routing depends on what each host's cache holds, so it is
computed by running the per-host caches while routing;
:func:`prefix_affinity_routing`):

``prefix-affinity``
    In the spirit of Mooncake's cache-aware scheduler: request ``i`` goes to
    the host whose cache holds the longest prefix of its chain *right now*
    (longest-prefix rule of :mod:`pyverify.sim.simulate`, same capacity and
    eviction as the run being measured). Load cap: a host may take request
    ``i`` (0-based) only if it has served fewer than
    ``ceil(slack * (i + 1) / fleet_size)`` requests so far (``slack`` >= 1,
    default 1.25: no host serves more than 25 % above an even share, the
    bounded-load rule of consistent hashing with bounded loads, Mirrokni,
    Thorup and Zadimoghaddam, SODA 2018). Some host always qualifies, since
    the loads sum to ``i``. Ties: longest prefix first, then fewest requests
    served so far, then the lowest host id. A request whose prefix no
    eligible host holds therefore goes to the least-loaded host. Load counts
    requests, not tokens or time: pyverify does not model service time.

The routing an online policy returns is an ordinary routing: replaying it with
:func:`pyverify.sim.simulate.simulate` (per-host, same capacity and eviction)
reproduces the caches the router saw, which the tests check.
"""

from __future__ import annotations

import hashlib
import math
import random as _random
from dataclasses import dataclass
from typing import Callable, Sequence

from pyverify.errors import UserError
from pyverify.inputs.model import Instance
from pyverify.sim.names import (  # noqa: F401 (re-exported where they were defined)
    DEFAULT_TRACE_FLEET,
    POLICY_NAMES,
    UNROUTED_FLEET_SIZES,
    default_fleet_for,
    default_policy_for,
)
from pyverify.cache.names import EVICTIONS, LRU
from pyverify.cache.policies import new_cache
from pyverify.cache.protocol import serve_alone
from pyverify.cache.unbounded import Unbounded


@dataclass(frozen=True)
class RoutingOptions:
    """Parameters some policies take; the others ignore them.

    ``seed`` (random); ``capacity`` and ``eviction`` of the per-host caches a
    prefix-affinity router consults (``None``: uncapacitated); ``slack`` the
    prefix-affinity load cap.
    """

    seed: int = 0
    capacity: int | None = None
    eviction: str = LRU
    slack: float = 1.25


DEFAULT_OPTIONS = RoutingOptions()

RoutingPolicy = Callable[[Instance, int, RoutingOptions], tuple[int, ...]]


def _own_routing(instance: Instance, policy: str) -> tuple[int, ...]:
    if instance.routing is None:
        raise UserError(
            f"routing policy {policy!r} needs an instance that gives a host for every request; this one gives none"
        )
    return instance.routing


def given(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    routing = _own_routing(instance, "given")
    if fleet_size != instance.fleet_size:
        raise UserError(
            f"routing policy 'given' works only at the instance's own fleet size {instance.fleet_size}, not {fleet_size}"
        )
    return routing


def fold(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    routing = _own_routing(instance, "fold")
    if not 1 <= fleet_size <= instance.fleet_size:
        raise UserError(
            f"routing policy 'fold' shrinks the instance's fleet: fleet size {fleet_size} must be between 1 and {instance.fleet_size}"
        )
    return tuple(host % fleet_size for host in routing)


def round_robin(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    return tuple(index % fleet_size for index in range(instance.n_requests))


def seeded_random(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    rng = _random.Random(options.seed)
    return tuple(rng.randrange(fleet_size) for _ in range(instance.n_requests))


def stable_hash(key: str) -> int:
    """First 8 bytes of SHA-256 of ``key`` (UTF-8), big-endian: the same in every process."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def route_key(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    keys = (
        [extra.get("route_key") for extra in instance.extra]
        if instance.extra
        else [None] * instance.n_requests
    )
    missing = next((index for index, key in enumerate(keys) if key is None), None)
    if missing is not None:
        raise UserError(
            f"routing policy 'route-key' needs a route_key on every request; requests[{missing}] has none"
            " (traces carry none: try prefix-hash)"
        )
    return tuple(stable_hash(key) % fleet_size for key in keys)


def prefix_hash(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    return tuple(stable_hash(str(chain[0])) % fleet_size for chain in instance.chains)


@dataclass(frozen=True)
class AffinityRun:
    """What the prefix-affinity router did: its routing, and the hits it saw."""

    routing: tuple[int, ...]
    hit_blocks: tuple[int, ...]


def prefix_affinity_routing(
    chains: Sequence[Sequence[int]],
    fleet_size: int,
    capacity: int | None = None,
    eviction: str = LRU,
    slack: float = 1.25,
) -> AffinityRun:
    """Route by longest cached prefix under a load cap (rule: module docstring).

    Runs one demand cache per host with the semantics of
    :func:`pyverify.sim.simulate.simulate` (per-host, ``capacity`` blocks each,
    ``eviction``) while routing, because each decision depends on what the
    caches hold at that moment.
    """
    if fleet_size < 1:
        raise UserError(f"fleet size must be at least 1, got {fleet_size}")
    if not slack >= 1:
        raise UserError(
            f"prefix-affinity slack must be at least 1 (some host must always qualify), got {slack}"
        )
    if capacity is not None and capacity < 1:
        raise UserError(f"capacity must be at least 1 block, got {capacity}")
    if eviction not in EVICTIONS:
        raise UserError(f"unknown eviction policy {eviction!r}; expected one of {EVICTIONS}")
    # The very caches simulate() replays with, so routing and replay cannot disagree.
    caches = [
        Unbounded() if capacity is None else new_cache(eviction, capacity)
        for _ in range(fleet_size)
    ]
    loads = [0] * fleet_size
    routing: list[int] = []
    hit_blocks: list[int] = []
    for index, chain in enumerate(chains):
        cap = math.ceil(slack * (index + 1) / fleet_size)
        best_host, best_key = -1, None
        for host in range(fleet_size):
            if loads[host] >= cap:
                continue
            key = (-caches[host].prefix_hits(chain), loads[host])
            if best_key is None or key < best_key:
                best_host, best_key = host, key
        hits = serve_alone(caches[best_host], index, chain, None)
        loads[best_host] += 1
        routing.append(best_host)
        hit_blocks.append(hits)
    return AffinityRun(tuple(routing), tuple(hit_blocks))


def prefix_affinity(
    instance: Instance, fleet_size: int, options: RoutingOptions = DEFAULT_OPTIONS
) -> tuple[int, ...]:
    return prefix_affinity_routing(
        instance.chains, fleet_size, options.capacity, options.eviction, options.slack
    ).routing


POLICIES: dict[str, RoutingPolicy] = {
    "given": given,
    "fold": fold,
    "round-robin": round_robin,
    "random": seeded_random,
    "route-key": route_key,
    "prefix-hash": prefix_hash,
    "prefix-affinity": prefix_affinity,
}

#: Policies whose routing depends on the caches' capacity and eviction.
ONLINE_POLICIES = frozenset({"prefix-affinity"})


def default_policy(instance: Instance) -> str:
    """``fold`` when the instance gives a routing, else ``round-robin`` (traces): every command's default."""
    return default_policy_for(instance.routing is not None)


def default_fleet(instance: Instance) -> int:
    """Every command's default fleet size: the instance's own hosts when it gives a routing or a
    fleet (``trace import --hosts 16``), else :data:`DEFAULT_TRACE_FLEET`."""
    return default_fleet_for(
        instance.fleet_size if (instance.routing is not None or instance.fleet_size > 1) else None
    )


def hosts_source(instance: Instance) -> str:
    """Where an input's host count comes from, and what the commands do with it (:func:`default_fleet`)."""
    if instance.routing is not None:
        return "given by its routing"
    if instance.fleet_size > 1:
        return "named by the input, which gives no routing"
    return f"none named: commands route it to {DEFAULT_TRACE_FLEET} hosts unless --fleet"


def describe_hosts(instance: Instance) -> str:
    """``16 hosts (given by its routing)``: the input's host count, pluralised, and where it comes from."""
    return f"{instance.fleet_size} host{'' if instance.fleet_size == 1 else 's'} ({hosts_source(instance)})"


def route(
    instance: Instance, fleet_size: int, policy: str, options: RoutingOptions | None = None
) -> tuple[int, ...]:
    """Route every request of ``instance`` to one of ``fleet_size`` hosts by ``policy``."""
    try:
        function = POLICIES[policy]
    except KeyError:
        raise UserError(
            f"unknown routing policy {policy!r}; choose one of: {', '.join(POLICIES)}"
        ) from None
    if fleet_size < 1:
        raise UserError(f"fleet size must be at least 1, got {fleet_size}")
    return function(instance, fleet_size, options or DEFAULT_OPTIONS)
