"""Routing: which host serves each request, and the fleet a command assumes when none is given.

What each guarantees: :func:`route` gives one host in ``0 .. fleet_size - 1`` per request, in
trace order, by the policy named (one of :data:`pyverify.api.names.POLICY_NAMES`); a given
routing is kept (``given``) or folded onto the fleet (``fold``). The defaults are every
command's: the input's own fleet and routing when it has them, else round-robin over 16 hosts.

The routers are imported by the call that uses them.
"""

from __future__ import annotations

from pyverify.api._traces import Trace, as_instance
from pyverify.api.names import LRU

__all__ = [
    "default_fleet",
    "default_policy",
    "depends_on_cache_state",
    "describe_hosts",
    "hosts_source",
    "route",
]


def route(
    trace: Trace,
    fleet_size: int,
    policy: str,
    *,
    seed: int = 0,
    capacity: int | None = None,
    eviction: str = LRU,
    slack: float = 1.25,
) -> tuple[int, ...]:
    """The host of every request of ``trace`` under ``policy`` over ``fleet_size`` hosts.

    ``seed``: of the ``random`` policy; ``capacity`` and ``eviction``: of the per-host caches a
    ``prefix-affinity`` router consults; ``slack``: its load cap (no host takes more than
    ``ceil(slack * (i + 1) / fleet_size)`` of the first ``i + 1`` requests). Raises
    :class:`~pyverify.errors.UserError` for an unknown policy or a routing the input refuses."""
    from pyverify.sim.routing import RoutingOptions, route as route_with

    options = RoutingOptions(seed=seed, capacity=capacity, eviction=eviction, slack=slack)
    return route_with(as_instance(trace), fleet_size, policy, options)


def default_fleet(trace: Trace) -> int:
    """Every command's fleet size when none is given: the input's own hosts when it routes or
    names a fleet, else 16."""
    from pyverify.sim.routing import default_fleet as fleet_of

    return fleet_of(as_instance(trace))


def default_policy(trace: Trace) -> str:
    """Every command's routing when none is given: ``fold`` for an input that routes, else
    ``round-robin``."""
    from pyverify.sim.routing import default_policy as policy_of

    return policy_of(as_instance(trace))


def hosts_source(trace: Trace) -> str:
    """Where the input's host count comes from, and what the commands do with it."""
    from pyverify.sim.routing import hosts_source as source_of

    return source_of(as_instance(trace))


def describe_hosts(trace: Trace) -> str:
    """``16 hosts (given by its routing)``: the host count and where it comes from."""
    from pyverify.sim.routing import describe_hosts as described

    return described(as_instance(trace))


def depends_on_cache_state(policy: str) -> bool:
    """Whether ``policy`` routes by the caches' state as requests arrive (``prefix-affinity``), so
    that its routing changes with the caches' capacity and eviction."""
    from pyverify.sim.routing import ONLINE_POLICIES

    return policy in ONLINE_POLICIES
