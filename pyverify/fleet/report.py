"""What ``pyverify replay`` prints beside its runs: time percentiles, tier counts, and bounds.

Bounds (the same for every router, so computed once per trace and capacity):

* ``floor``: references - distinct blocks, the most hits any set of caches can
  get (every block must miss once, the first time anyone asks for it; one
  uncapacitated pool reaches it);
* ``min_pooled``: Belady's MIN (:mod:`pyverify.sim.belady_min`, bypass form)
  for one pool holding the fleet's whole GPU memory, F x C blocks; no
  demand cache of that size, and so no F GPU caches of C blocks each
  (``pooled_min_le_per_host_min`` in ``lean/``), hits more. Without a GPU
  capacity it equals the floor. The pool tier is *extra* memory, so a run
  with a pool can pass this bound; never the floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pyverify.fleet.replay import ReplayRun


@dataclass(frozen=True)
class Bounds:
    references: int
    floor_hits: int
    min_pooled_hits: int
    min_pool_blocks: int | None

    def to_json(self) -> dict:
        return {
            "references": self.references,
            "floor_hits": self.floor_hits,
            "floor_hit_rate": self.floor_hits / self.references if self.references else 0.0,
            "floor_meaning": "references - distinct blocks: the most hits any caches can get",
            "min_pooled_hits": self.min_pooled_hits,
            "min_pooled_hit_rate": self.min_pooled_hits / self.references if self.references else 0.0,
            "min_pool_blocks": self.min_pool_blocks,
            "min_meaning": "Belady's MIN for one pool of the fleet's total GPU memory (F x capacity blocks)",
        }


def bounds(chains: Sequence[Sequence[int]], fleet: int, capacity: int | None) -> Bounds:
    from pyverify.sim.belady_min import min_misses
    from pyverify.sim.simulate import distinct_count

    references = sum(len(chain) for chain in chains)
    floor = references - distinct_count(chains)
    if capacity is None:
        return Bounds(references, floor, floor, None)
    return Bounds(references, floor, references - min_misses(chains, None, fleet * capacity), fleet * capacity)


TIME_PERCENTILES = (50, 90, 99)


def time_summary(seconds: Sequence[float]) -> dict:
    """p50, p90, p99 (numpy's default linear interpolation) and the mean, in seconds."""
    values = np.asarray(seconds, dtype=float)
    summary = {f"p{q}": float(np.percentile(values, q)) for q in TIME_PERCENTILES}
    summary["mean"] = float(values.mean())
    return summary


def run_summary(run: ReplayRun, service, bound: Bounds) -> dict:
    """One run as JSON: tier hits, moves, times, per-host load, distance to the bounds."""
    references = run.references
    hits = run.gpu_hit_blocks + run.pool_hit_blocks
    written = run.recomputed_blocks if run.with_pool else 0  # every recomputed block is written to the pool
    data = {
        "router": run.router,
        "references": references,
        "hit_blocks_by_tier": {"gpu": run.gpu_hit_blocks, "pool": run.pool_hit_blocks},
        "hit_rate_by_tier": {"gpu": run.gpu_hit_blocks / references, "pool": run.pool_hit_blocks / references},
        "hit_blocks": hits,
        "hit_rate": hits / references,
        "recomputed_blocks": run.recomputed_blocks,
        "moved": {
            "pool_to_gpu_blocks": run.pool_hit_blocks,
            "pool_to_gpu_bytes": run.pool_hit_blocks * service.block_bytes,
            "gpu_to_pool_blocks": written,
            "gpu_to_pool_bytes": written * service.block_bytes,
        },
        "below_floor_blocks": bound.floor_hits - hits,
        "below_min_pooled_blocks": bound.min_pooled_hits - hits,
    }
    if run.start is not None:
        ttft = [first - arrive for first, arrive in zip(run.first_token, run.arrival)]
        queueing = [begin - arrive for begin, arrive in zip(run.start, run.arrival)]
        data["ttft_s"] = time_summary(ttft)
        data["queueing_s"] = time_summary(queueing)
    requests = [host.requests for host in run.hosts]
    data["hosts"] = [{"host": index, "requests": host.requests, "gpu_hit_blocks": host.gpu_hit_blocks,
                      "pool_hit_blocks": host.pool_hit_blocks, "recomputed_blocks": host.recomputed_blocks,
                      "max_queue": host.max_queue, "prefill_busy_s": host.busy_prefill_s}
                     for index, host in enumerate(run.hosts)]
    data["load"] = {"min_requests": min(requests), "max_requests": max(requests),
                    "max_load_ratio": max(requests) / (sum(requests) / len(requests)),
                    "max_queue": max(host.max_queue for host in run.hosts)}
    return data
