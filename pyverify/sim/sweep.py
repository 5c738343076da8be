"""Fleet sweep: pooled against per-host misses as the fleet grows.

For each fleet size F the requests are routed to F hosts by a named routing
policy (:mod:`pyverify.sim.routing`; for an instance with its own routing the
default, ``fold``, maps host h to h mod F; for a trace, which has none, the
default is ``round-robin``), then both cache models run over the same
requests with :func:`pyverify.sim.simulate.simulate`.

Uncapacitated (``capacity=None``): the pooled count does not depend on
routing; the per-host count grows as hosts are split.

Capacitated (``capacity=C`` blocks per host, any eviction policy of
:mod:`pyverify.sim.simulate`): every host's cache
holds C blocks, and the pool is given the **same total memory**, F x C blocks.
That is the paper's local-versus-global comparison (Mooncake FAST'25, 5.3):
per-node caches against one shared pool of the same total size. An online
policy (prefix-affinity) routes while consulting per-host caches of that same
capacity.

Each row counts hits in blocks and, when the input has a block size, in
tokens (:mod:`pyverify.sim.tokens`), over the requests of a measurement
window (:mod:`pyverify.sim.window`; default: every request).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

from pyverify.inputs.model import Instance
from pyverify.sim.accounting import tally
from pyverify.sim.routing import ONLINE_POLICIES, UNROUTED_FLEET_SIZES, RoutingOptions, route  # noqa: F401 (re-exported)
from pyverify.sim.simulate import LRU, PER_HOST, POOLED, Run, simulate
from pyverify.sim.tokens import TokenWeights
from pyverify.sim.window import WHOLE_TRACE, Window


@dataclass(frozen=True)
class SweepRow:
    fleet_size: int
    references: int
    pooled_misses: int
    pooled_hit_rate: float
    per_host_misses: int
    per_host_hit_rate: float
    routing: str = "fold"
    capacity_per_host: int | None = None
    pool_capacity: int | None = None
    eviction: str | None = None
    max_load_ratio: float = 1.0
    #: Token-weighted hit rates over the same requests (None without a block size).
    pooled_token_hit_rate: float | None = None
    per_host_token_hit_rate: float | None = None
    tokens: int | None = None

    #: The counts a row reports; the context (routing, capacities, eviction,
    #: load, window) is the same for a whole sweep and is reported once beside the rows.
    #: ``references``, ``*_misses`` and ``*_hit_rate`` count blocks of the measured requests.
    CORE = (
        "fleet_size",
        "references",
        "pooled_misses",
        "pooled_hit_rate",
        "per_host_misses",
        "per_host_hit_rate",
        "tokens",
        "pooled_token_hit_rate",
        "per_host_token_hit_rate",
    )
    TOKEN_KEYS = ("tokens", "pooled_token_hit_rate", "per_host_token_hit_rate")

    def to_json(self) -> dict:
        data = asdict(self)
        # token figures only where the input has a block size (else they would all be null)
        return {
            key: data[key]
            for key in self.CORE
            if data[key] is not None or key not in self.TOKEN_KEYS
        }


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


def default_fleets_for(instance: Instance) -> list[int]:
    """:func:`default_fleet_sizes` up to the default fleet (pyverify.sim.routing.default_fleet): the
    instance's hosts, or 2, 4, 8, 16 for a trace that names no fleet."""
    from pyverify.sim.routing import default_fleet

    if instance.routing is None and instance.fleet_size <= 1:
        return list(UNROUTED_FLEET_SIZES)
    return default_fleet_sizes(default_fleet(instance))


def max_load_ratio(routing: Sequence[int], fleet_size: int) -> float:
    """Requests on the busiest host over the even share (1.0 is perfectly even)."""
    # Count only the hosts that occur: memory follows the requests, never the largest host number.
    busiest = max(Counter(routing).values()) if len(routing) else 0
    return busiest * fleet_size / len(routing) if len(routing) else 1.0


def sweep_row(
    instance: Instance,
    fleet_size: int,
    routing_policy: str = "fold",
    capacity: int | None = None,
    eviction: str = LRU,
    options: RoutingOptions | None = None,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> tuple[SweepRow, Run, Run]:
    """One fleet size: the row, and the pooled and per-host runs behind it."""
    base = options or RoutingOptions()
    options = RoutingOptions(seed=base.seed, capacity=capacity, eviction=eviction, slack=base.slack)
    routing = route(instance, fleet_size, routing_policy, options)
    pool_capacity = None if capacity is None else capacity * fleet_size
    pooled = simulate(instance.chains, routing, POOLED, capacity=pool_capacity, eviction=eviction)
    per_host = simulate(instance.chains, routing, PER_HOST, capacity=capacity, eviction=eviction)
    pooled_tally = tally(instance.chains, pooled.hit_blocks, weights, window)
    per_host_tally = tally(instance.chains, per_host.hit_blocks, weights, window)
    row = SweepRow(
        fleet_size=fleet_size,
        references=pooled_tally.block_references,
        pooled_misses=pooled_tally.block_references - pooled_tally.block_hits,
        pooled_hit_rate=pooled_tally.block_hit_rate,
        per_host_misses=per_host_tally.block_references - per_host_tally.block_hits,
        per_host_hit_rate=per_host_tally.block_hit_rate,
        pooled_token_hit_rate=pooled_tally.token_hit_rate,
        per_host_token_hit_rate=per_host_tally.token_hit_rate,
        tokens=pooled_tally.tokens,
        routing=routing_policy,
        capacity_per_host=capacity,
        pool_capacity=pool_capacity,
        eviction=eviction if capacity is not None else None,
        max_load_ratio=max_load_ratio(routing, fleet_size),
    )
    return row, pooled, per_host


def sweep(
    instance: Instance,
    fleet_sizes: Sequence[int],
    routing_policy: str = "fold",
    capacity: int | None = None,
    eviction: str = LRU,
    options: RoutingOptions | None = None,
    progress: Callable[[], None] | None = None,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> list[SweepRow]:
    """Pooled and per-host misses at each fleet size (uncapacitated unless ``capacity``)."""
    rows = []
    for size in fleet_sizes:
        rows.append(
            sweep_row(instance, size, routing_policy, capacity, eviction, options, weights, window)[
                0
            ]
        )
        if progress is not None:
            progress()
    return rows


def sweep_policies(
    instance: Instance,
    fleet_sizes: Sequence[int],
    policies: Sequence[str],
    capacity: int | None = None,
    eviction: str = LRU,
    options: RoutingOptions | None = None,
    progress: Callable[[], None] | None = None,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> dict[str, list[SweepRow]]:
    """:func:`sweep` once per routing policy, same fleet sizes and caches."""
    return {
        policy: sweep(
            instance, fleet_sizes, policy, capacity, eviction, options, progress, weights, window
        )
        for policy in policies
    }


__all__ = [
    "ONLINE_POLICIES",
    "SweepRow",
    "default_fleet_sizes",
    "default_fleets_for",
    "max_load_ratio",
    "sweep",
    "sweep_policies",
    "sweep_row",
]
