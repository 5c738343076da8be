"""The reuse report: how much of a trace repeats, and how much of that per-host caches see.

Vendors' guidance on KV-cache pooling starts here: measure how much of the
workload repeats a prefix first, and expect little from pooling below about
30%. That threshold is a rule of thumb with no published measurement behind it,
so pyverify states it as an assumption. pyverify measures reuse in block
references (the model: each block id names the whole prefix up to it):

* **repeat share** ``= 1 - distinct / references``: the share of block
  references that repeat an earlier one. No demand cache that starts empty can
  hit more often (every distinct block misses at least once), and an
  uncapacitated pool hits exactly this often. It is the ceiling pooling
  approaches and cannot lift.
* **per-host reuse** of host ``h`` ``= 1 - distinct_h / references_h`` over
  the requests routed to ``h``: what that host's own uncapacitated cache can
  reach. Fleet-wide, per-host caches hit ``1 - sum_h distinct_h / references``.
* **what pooling can add** = repeat share - per-host fleet-wide reuse: the work
  the fleet repeats because hosts cannot read each other's caches.

The 30% threshold speaks of a "prefix reuse rate" without defining it in
blocks; applying it to the block repeat share is this module's reading, stated
in every report beside the word "assumption".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

#: A rule of thumb (an assumption: no published measurement behind it).
RULE_OF_THUMB_THRESHOLD = 0.30
RULE_OF_THUMB_SOURCE = (
    "assumption: a rule of thumb in vendors' pooling guidance, with no published measurement behind it; "
    "reading it as the block repeat share is pyverify's"
)


@dataclass(frozen=True)
class HostReuse:
    host: int
    requests: int
    references: int
    distinct: int

    @property
    def repeat_share(self) -> float | None:
        return 1 - self.distinct / self.references if self.references else None


@dataclass(frozen=True)
class ReuseReport:
    references: int
    distinct: int
    hosts: tuple[HostReuse, ...]

    @property
    def repeat_share(self) -> float:
        """``1 - distinct / references``: the ceiling of any demand cache's hit rate."""
        return 1 - self.distinct / self.references if self.references else 0.0

    @property
    def per_host_repeat_share(self) -> float:
        """Fleet-wide hit rate of uncapacitated per-host caches: ``1 - sum distinct_h / references``."""
        return 1 - sum(h.distinct for h in self.hosts) / self.references if self.references else 0.0

    @property
    def pooling_can_add(self) -> float:
        return self.repeat_share - self.per_host_repeat_share

    @property
    def above_rule_of_thumb(self) -> bool:
        return self.repeat_share >= RULE_OF_THUMB_THRESHOLD

    def host_shares(self) -> list[float]:
        return [h.repeat_share for h in self.hosts if h.repeat_share is not None]

    def rule_sentence(self) -> str:
        side = "at or above" if self.above_rule_of_thumb else "below"
        if self.pooling_can_add <= 0:
            consequence = (
                "but on this routing the per-host caches already reach the ceiling, "
                "so pooling can add no hits (uncapacitated)"
            )
        elif self.above_rule_of_thumb:
            consequence = "pooling may pay; check bandwidth next (the break-even)"
        else:
            consequence = "by the rule of thumb, pooling benefits are limited"
        return f"repeat share {self.repeat_share:.1%} is {side} the 30% rule of thumb: {consequence} ({RULE_OF_THUMB_SOURCE})"

    def to_json(self) -> dict[str, Any]:
        shares = self.host_shares()
        return {
            "block_references": self.references,
            "distinct_blocks": self.distinct,
            "repeat_share": self.repeat_share,
            "repeat_share_meaning": "1 - distinct/references: the hit-rate ceiling of any demand cache that starts empty; an uncapacitated pool reaches it, pooling cannot lift it",
            "per_host_repeat_share": self.per_host_repeat_share,
            "pooling_can_add": self.pooling_can_add,
            "per_host": [
                {
                    "host": h.host,
                    "requests": h.requests,
                    "references": h.references,
                    "distinct": h.distinct,
                    "repeat_share": h.repeat_share,
                }
                for h in self.hosts
            ],
            "per_host_summary": {
                "min": min(shares) if shares else None,
                "median": float(np.median(shares)) if shares else None,
                "max": max(shares) if shares else None,
            },
            "rule_of_thumb": {
                "threshold": RULE_OF_THUMB_THRESHOLD,
                "source": RULE_OF_THUMB_SOURCE,
                "at_or_above": self.above_rule_of_thumb,
                "sentence": self.rule_sentence(),
            },
        }


def reuse_report(
    chains: Sequence[Sequence[int]], routing: Sequence[int], hosts: int
) -> ReuseReport:
    """Count references and distinct blocks, fleet-wide and per host."""
    if len(routing) != len(chains):
        raise ValueError("one host per request is needed")
    seen: set[int] = set()
    seen_by: list[set[int]] = [set() for _ in range(hosts)]
    requests = [0] * hosts
    references = [0] * hosts
    for chain, host in zip(chains, routing):
        seen.update(chain)
        seen_by[host].update(chain)
        requests[host] += 1
        references[host] += len(chain)
    return ReuseReport(
        references=sum(references),
        distinct=len(seen),
        hosts=tuple(
            HostReuse(h, requests[h], references[h], len(seen_by[h])) for h in range(hosts)
        ),
    )
