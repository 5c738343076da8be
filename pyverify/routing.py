"""Routing: which host serves each request, for a fleet of a given size.

A policy maps ``(instance, fleet_size)`` to one host id per request. Policies
are named so that every reported number says how its routing was derived.

``given``
    The instance's own routing, unchanged. Only for ``fleet_size == hosts``.
``fold``
    Shrink the instance's own routing to a smaller fleet: host ``h`` becomes
    ``h mod fleet_size``. Folding only merges hosts, so per-host caches of the
    smaller fleet see a union of what the larger fleet's caches saw; with power
    of two fleet sizes each fleet refines the next smaller one.
"""

from __future__ import annotations

from typing import Callable

from pyverify.errors import UserError
from pyverify.model import Instance

RoutingPolicy = Callable[[Instance, int], tuple[int, ...]]


def _own_routing(instance: Instance, policy: str) -> tuple[int, ...]:
    if instance.routing is None:
        raise UserError(f"routing policy {policy!r} needs an instance that gives a host for every request; this one gives none")
    return instance.routing


def given(instance: Instance, fleet_size: int) -> tuple[int, ...]:
    routing = _own_routing(instance, "given")
    if fleet_size != instance.hosts:
        raise UserError(f"routing policy 'given' works only at the instance's own fleet size {instance.hosts}, not {fleet_size}")
    return routing


def fold(instance: Instance, fleet_size: int) -> tuple[int, ...]:
    routing = _own_routing(instance, "fold")
    if not 1 <= fleet_size <= instance.hosts:
        raise UserError(f"routing policy 'fold' shrinks the instance's fleet: fleet size {fleet_size} must be between 1 and {instance.hosts}")
    return tuple(host % fleet_size for host in routing)


POLICIES: dict[str, RoutingPolicy] = {
    "given": given,
    "fold": fold,
}


def route(instance: Instance, fleet_size: int, policy: str) -> tuple[int, ...]:
    """Route every request of ``instance`` to one of ``fleet_size`` hosts by ``policy``."""
    try:
        function = POLICIES[policy]
    except KeyError:
        raise UserError(f"unknown routing policy {policy!r}; choose one of: {', '.join(POLICIES)}") from None
    return function(instance, fleet_size)
