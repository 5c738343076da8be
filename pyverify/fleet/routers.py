"""Routers of ``pyverify replay``: each picks a host for a request when it arrives.

A router sees, at the arrival instant, every host's cache (its GPU; with a
host-DRAM tier, the prefix its GPU and DRAM serve together: a modelling
choice, a router told of both local tiers; the pool is shared, so it does not
tell hosts apart) and its
``load`` (requests running plus queued there) and ``routed`` (requests sent
there so far). Rules, ties included (every rule ends with the lowest host id):

``round-robin``
    Request ``i`` (file order) goes to host ``i mod F``: simulate's round-robin.
``random``
    ``random.Random(seed).randrange(F)`` per request in file order: simulate's random.
``least-loaded``
    Fewest requests running plus queued; ties: fewest routed so far.
    Without timing nothing is ever running at an arrival, so this is round-robin.
``prefix-affinity``
    simulate's prefix-affinity rule (:mod:`pyverify.sim.routing`), applied to the
    host caches at arrival: the longest cached prefix among hosts that have been
    routed fewer than ``ceil(slack * (i + 1) / F)`` requests; ties: fewest routed.
``kv-aware``
    The highest score ``overlap_weight * overlap_blocks - load_weight * load``,
    where ``overlap_blocks`` is the host's cached prefix (GPU, then DRAM) for this chain and
    ``load`` is running plus queued requests; ties: smaller load, then fewest
    routed. This is the shape of NVIDIA Dynamo's KV router (a per-worker cost
    that weighs the prefill blocks a worker would save through cache overlap,
    ``overlap_score_weight``, against its active load;
    https://docs.nvidia.com/dynamo/latest/components/router/README.html and
    https://docs.nvidia.com/dynamo/design-docs/router-design) and of llm-d's
    scheduler (weighted scorers summed per endpoint, a prefix-cache scorer
    beside a queue/load scorer, highest total picked;
    https://llm-d.ai/docs/0.8/architecture/core/router/epp/scheduling).
    It is neither system's exact formula: Dynamo counts load in KV blocks and
    llm-d normalises each scorer to [0, 1]; here overlap is in blocks and load
    in requests, and the weights are named so a run says what it used.
"""

from __future__ import annotations

import math
import random as _random
from dataclasses import dataclass
from typing import Sequence

ROUTERS = ("round-robin", "random", "least-loaded", "prefix-affinity", "kv-aware")

#: kv-aware defaults. ASSUMPTION: equal weights (one block of overlap is worth one request of load);
#: Dynamo's documented default overlap_score_weight is 1.0, with load in blocks rather than requests.
DEFAULT_OVERLAP_WEIGHT = 1.0
DEFAULT_LOAD_WEIGHT = 1.0


@dataclass(frozen=True)
class RouterOptions:
    seed: int = 0
    slack: float = 1.25
    overlap_weight: float = DEFAULT_OVERLAP_WEIGHT
    load_weight: float = DEFAULT_LOAD_WEIGHT


class Router:
    """Picks a host per arrival; ``name`` is one of :data:`ROUTERS`."""

    def __init__(self, name: str, fleet: int, options: RouterOptions = RouterOptions()) -> None:
        if name not in ROUTERS:
            raise ValueError(f"unknown router {name!r}; expected one of {ROUTERS}")
        self.name, self.fleet, self.options = name, fleet, options
        self._rng = _random.Random(options.seed)

    def fixed_picks(self, n: int) -> list[int] | None:
        """The hosts of requests 0..n-1 when they depend on neither cache state nor load, else ``None``.

        ``random`` draws them from this router's own stream, as ``n`` calls of :meth:`pick` would."""
        if self.name == "round-robin":
            return [index % self.fleet for index in range(n)]
        if self.name == "random":
            return [self._rng.randrange(self.fleet) for _ in range(n)]
        return None

    def pick(
        self,
        index: int,
        chain: Sequence[int],
        caches: Sequence,
        load: Sequence[int],
        routed: Sequence[int],
    ) -> int:
        fleet = self.fleet
        if self.name == "round-robin":
            return index % fleet
        if self.name == "random":
            return self._rng.randrange(fleet)
        if self.name == "least-loaded":
            return min(range(fleet), key=lambda host: (load[host], routed[host], host))
        overlaps = [cache.prefix_hits(chain) for cache in caches]
        if self.name == "prefix-affinity":
            cap = math.ceil(self.options.slack * (index + 1) / fleet)
            eligible = [host for host in range(fleet) if routed[host] < cap]
            return min(eligible, key=lambda host: (-overlaps[host], routed[host], host))
        overlap_weight, load_weight = self.options.overlap_weight, self.options.load_weight
        return min(
            range(fleet),
            key=lambda host: (
                -(overlap_weight * overlaps[host] - load_weight * load[host]),
                load[host],
                routed[host],
                host,
            ),
        )
