"""Sweeps: the pooled cache against per-host caches as the fleet grows (``pyverify sweep``).

What :func:`sweep` guarantees: each row holds the exact hits of demand caches that start empty,
replayed as :func:`pyverify.api.simulate` replays them, of one pool of ``F x capacity`` blocks and
of ``F`` per-host caches of ``capacity`` blocks, on the routing named over ``F`` hosts, counted in
the window given (and weighed in tokens when the input gives block sizes).

The simulators are imported by the call that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from pyverify.api._traces import Trace, as_instance
from pyverify.api.names import LRU

if TYPE_CHECKING:
    from pyverify.sim.tokens import TokenWeights
    from pyverify.sim.window import Window

__all__ = ["Sweep", "default_fleet_sizes", "sweep", "token_weights"]


@dataclass(frozen=True)
class Sweep:
    """One row per fleet size and routing (see the module docstring)."""

    fleet_sizes: tuple[int, ...]
    routings: tuple[str, ...]
    by_routing: dict[
        str, list[Any]
    ]  # routing -> its rows (pyverify.sim.sweep.SweepRow), in fleet order

    @property
    def rows(self) -> list[Any]:
        """Every row, routing by routing."""
        return [row for rows in self.by_routing.values() for row in rows]


def token_weights(trace: Trace, where: str | None = None) -> TokenWeights | None:
    """How many tokens each block reference stands for, or None when the input gives no block
    size (blocks are then counted, not weighed). ``where`` names the input in errors."""
    from pyverify.sim.tokens import instance_token_weights

    return instance_token_weights(as_instance(trace), where)


def default_fleet_sizes(trace: Trace) -> list[int]:
    """The fleet sizes ``sweep`` takes when none are given: powers of two up to the input's own
    fleet, or 2, 4, 8, 16 for a trace that names none."""
    from pyverify.sim.sweep import default_fleets_for

    return default_fleets_for(as_instance(trace))


def sweep(
    trace: Trace,
    *,
    fleet_sizes: Sequence[int] | None = None,
    routings: Sequence[str] | None = None,
    capacity: int | None = None,
    eviction: str = LRU,
    seed: int = 0,
    slack: float = 1.25,
    weights: TokenWeights | None = None,
    window: Window | None = None,
    progress: Callable[[], None] | None = None,
) -> Sweep:
    """Pooled against per-host caches at each fleet size, for each routing (default: the input's
    own, else round-robin). ``capacity``: blocks per host (None: uncapacitated); ``weights``: from
    :func:`token_weights`, for the token hit rates; ``progress`` is called after each fleet size."""
    from pyverify.sim.routing import RoutingOptions, default_policy
    from pyverify.sim.sweep import sweep_policies
    from pyverify.sim.window import WHOLE_TRACE

    instance = as_instance(trace)
    sizes = tuple(fleet_sizes or default_fleet_sizes(instance))
    policies = tuple(routings or [default_policy(instance)])
    by_routing = sweep_policies(
        instance,
        sizes,
        policies,
        capacity,
        eviction,
        RoutingOptions(seed=seed, slack=slack),
        progress=progress,
        weights=weights,
        window=window if window is not None else WHOLE_TRACE,
    )
    return Sweep(sizes, policies, by_routing)
