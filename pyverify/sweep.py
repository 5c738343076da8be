"""Fleet sweep: pooled against per-host misses as the fleet grows.

For each fleet size F the requests are routed to F hosts by a named routing
policy (:mod:`pyverify.routing`; the default, ``fold``, maps the instance's
host h to h mod F), then both cache models run uncapacitated over the same
requests. The pooled count does not depend on routing; the per-host count
grows as hosts are split.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from pyverify.model import Instance
from pyverify.routing import route
from pyverify.simulate import PER_HOST, POOLED, Run, simulate


@dataclass(frozen=True)
class SweepRow:
    fleet_size: int
    references: int
    pooled_misses: int
    pooled_hit_rate: float
    per_host_misses: int
    per_host_hit_rate: float

    def to_json(self) -> dict:
        return asdict(self)


def default_fleet_sizes(hosts: int) -> list[int]:
    """Powers of two from 2 up to ``hosts``, then ``hosts`` itself if it is not one.

    A fleet of one host has nothing to pool, so the sweep starts at two
    (a one-host instance sweeps just [1]).
    """
    sizes = []
    size = 2
    while size <= hosts:
        sizes.append(size)
        size *= 2
    if not sizes or sizes[-1] != hosts:
        sizes.append(hosts)
    return sizes


def sweep_row(instance: Instance, fleet_size: int, routing_policy: str = "fold") -> tuple[SweepRow, Run, Run]:
    """One fleet size: the row, and the pooled and per-host runs behind it."""
    routing = route(instance, fleet_size, routing_policy)
    pooled = simulate(instance.chains, routing, POOLED)
    per_host = simulate(instance.chains, routing, PER_HOST)
    row = SweepRow(
        fleet_size=fleet_size,
        references=pooled.references,
        pooled_misses=pooled.misses,
        pooled_hit_rate=pooled.hit_rate,
        per_host_misses=per_host.misses,
        per_host_hit_rate=per_host.hit_rate,
    )
    return row, pooled, per_host


def sweep(instance: Instance, fleet_sizes: Sequence[int], routing_policy: str = "fold") -> list[SweepRow]:
    """Pooled and per-host uncapacitated misses at each fleet size."""
    return [sweep_row(instance, size, routing_policy)[0] for size in fleet_sizes]
