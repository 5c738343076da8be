"""What every engine returns: references and distinct blocks, pooled and per host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pyverify.cost.reuse import HostReuse, ReuseReport

if TYPE_CHECKING:
    from pyverify.sim.accounting import Tally
    from pyverify.sim.window import Window


@dataclass(frozen=True)
class Measure:
    """What ``simulate`` reports beyond the counts: the measured window, in blocks and tokens, of one model
    (``per_host``: the hosts' caches, else the pool), with tokens per block ``block_size`` (None: blocks only)."""

    window: "Window"
    per_host: bool
    block_size: int | None = None


@dataclass(frozen=True, eq=False)
class FleetCounts:
    """Uncapacitated counts of one trace under one routing.

    ``distinct`` is the pooled miss count (distinct block ids). When the trace
    is routed to a fleet, ``host_requests``, ``host_references`` and
    ``host_distinct`` hold, per host, the requests it serves, their block
    references and the distinct blocks among them; per-host misses are the
    sum of ``host_distinct`` (distinct (host, block) pairs).
    """

    references: int
    distinct: int
    host_requests: np.ndarray | None = None
    host_references: np.ndarray | None = None
    host_distinct: np.ndarray | None = None
    measured: "Tally | None" = (
        None  # with a Measure: the measured requests' tally (engines that can)
    )
    weights_source: str | None = (
        None  # where the token weights came from, as pyverify.sim.tokens says it
    )

    @property
    def pooled_misses(self) -> int:
        return self.distinct

    @property
    def per_host_misses(self) -> int | None:
        return None if self.host_distinct is None else int(self.host_distinct.sum())

    def same_as(self, other: "FleetCounts") -> bool:
        """Equal in every count (how the tests compare engines)."""
        arrays = ("host_requests", "host_references", "host_distinct")
        return (self.references, self.distinct) == (other.references, other.distinct) and all(
            (getattr(self, a) is None and getattr(other, a) is None)
            or (
                getattr(self, a) is not None
                and getattr(other, a) is not None
                and np.array_equal(getattr(self, a), getattr(other, a))
            )
            for a in arrays
        )

    def reuse_report(self) -> ReuseReport:
        """The reuse report (:mod:`pyverify.cost.reuse`) of these counts; needs a routed fleet."""
        if self.host_distinct is None:
            raise ValueError("the reuse report needs per-host counts")
        hosts = tuple(
            HostReuse(
                h,
                int(self.host_requests[h]),
                int(self.host_references[h]),
                int(self.host_distinct[h]),
            )
            for h in range(self.host_distinct.size)
        )
        return ReuseReport(references=self.references, distinct=self.distinct, hosts=hosts)


def fleet_counts(
    hosts_of_requests: np.ndarray,
    lengths: np.ndarray,
    fleet_size: int,
    references: int,
    distinct: int,
    host_distinct: np.ndarray,
) -> FleetCounts:
    """Assemble :class:`FleetCounts` from per-request hosts and lengths and the per-host distinct counts."""
    requests = np.bincount(hosts_of_requests, minlength=fleet_size).astype(np.int64)
    refs = np.zeros(fleet_size, dtype=np.int64)
    np.add.at(refs, hosts_of_requests, lengths)
    return FleetCounts(
        references, distinct, requests, refs, np.asarray(host_distinct, dtype=np.int64)
    )


__all__ = ["FleetCounts", "Measure", "fleet_counts"]
