"""What ``pyverify replay`` prints beside its runs: time percentiles, tier counts, and bounds.

Bounds (the same for every router, so computed once per trace and capacity):

* ``floor``: references - distinct blocks, the most hits any set of caches can
  get (every block must miss once, the first time anyone asks for it; one
  uncapacitated pool reaches it);
* ``min_pooled``: Belady's MIN (:mod:`pyverify.optimal.belady`, bypass form)
  for one pool holding the fleet's whole GPU memory, F x C blocks; no
  demand cache of that size, and so no F GPU caches of C blocks each
  (``pooled_min_le_per_host_min`` in ``lean/``), hits more. Without a GPU
  capacity it equals the floor. The pool tier is *extra* memory, so a run
  with a pool can pass this bound; never the floor.
* ``forced``: the forced-admission optimum (:mod:`pyverify.optimal.forced`)
  for the same one pool of F x C blocks: the fewest misses of a cache that
  admits every block it computes and keeps the running request's, as serving
  engines do (no bypass). It is the best an engine-like cache with all of the
  fleet's GPU memory can do; it does *not* bound F separate caches (``[0],
  [1, 6], [0]`` on 2 hosts of 1 block: host 0 keeps ``0``, which one forced
  cache of 2 blocks must drop for ``[1, 6]``), so it is printed as a distance.

Per run, beside those (it depends on the run's routing):

* ``forced_routed``: the forced-admission optimum of the run's own F caches
  of C blocks, each serving its requests in file order (a host's FIFO queue
  keeps file order): the most GPU hits any admit-every-block policy gets with
  this routing. ``lru`` and ``leaf-lru`` never pass it, timed or not (pins
  only forbid evictions; tested); ``fifo`` can, by evicting a block of the
  request that is running (:mod:`pyverify.optimal.forced`).

Every gap is "hit blocks short of the bound"; a negative gap means the run
is above it. Only memory beyond the fleet's GPUs (a host or pool tier) puts
total hits above MIN; nothing puts them above the floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pyverify.fleet.run import ReplayRun
from pyverify.inputs.columnar import ColumnarTrace


@dataclass(frozen=True)
class Bounds:
    references: int
    floor_hits: int
    min_pooled_hits: int
    min_pool_blocks: int | None
    forced_hits: int

    def to_json(self) -> dict:
        return {
            "references": self.references,
            "floor_hits": self.floor_hits,
            "floor_hit_rate": self.floor_hits / self.references if self.references else 0.0,
            "floor_meaning": "references - distinct blocks: the most hits any caches can get",
            "min_pooled_hits": self.min_pooled_hits,
            "min_pooled_hit_rate": self.min_pooled_hits / self.references
            if self.references
            else 0.0,
            "min_pool_blocks": self.min_pool_blocks,
            "min_meaning": "Belady's MIN for one pool of the fleet's total GPU memory (F x capacity blocks)",
            "forced_hits": self.forced_hits,
            "forced_hit_rate": self.forced_hits / self.references if self.references else 0.0,
            "forced_meaning": "the forced-admission optimum (every block admitted, the running request's kept) "
            "for the same one pool of F x capacity blocks",
        }


#: References from which MIN runs compiled (README: compiled kernels, ~1M references).
COMPILED_FROM_REFERENCES = 1_000_000


def bounds(trace: ColumnarTrace, fleet: int, capacity: int | None) -> Bounds:
    from pyverify.optimal.belady import min_run_flat
    from pyverify.sim.counting import pooled_misses
    from pyverify.optimal.forced import forced_run_flat

    references = trace.n_references
    floor = references - pooled_misses(trace.ids)  # every distinct block misses once
    if capacity is None:
        return Bounds(references, floor, floor, None, floor)
    blocks = fleet * capacity
    ids, lengths = trace.ids, trace.lengths
    # MIN without a witness runs compiled (pyverify.sim.kernels); loading the kernel costs seconds, so smaller
    # traces take the Python loop (asking for the witness), as the project's other commands do below ~1M references.
    python_loop = references < COMPILED_FROM_REFERENCES
    return Bounds(
        references,
        floor,
        references - min_run_flat(ids, lengths, None, blocks, witness=python_loop)[2],
        blocks,
        references - forced_run_flat(ids, lengths, None, blocks)[2],
    )


TIME_PERCENTILES = (50, 90, 99)


def forced_routed_hits(trace: ColumnarTrace, host_of: Sequence[int], capacity: int | None) -> int:
    """The forced-admission optimum's hits for F caches of ``capacity`` blocks under the routing ``host_of``."""
    from pyverify.sim.counting import per_host_misses, reference_hosts
    from pyverify.optimal.forced import forced_run_flat

    references = trace.n_references
    if capacity is None:  # uncapacitated: every host misses each block it sees once
        fleet = max(host_of, default=-1) + 1
        hosts = reference_hosts(host_of, trace.lengths)
        return references - per_host_misses(trace.ids, hosts, fleet)
    return references - forced_run_flat(trace.ids, trace.lengths, host_of, capacity)[2]


def time_summary(seconds: Sequence[float]) -> dict:
    """p50, p90, p99 (numpy's default linear interpolation) and the mean, in seconds."""
    values = np.asarray(seconds, dtype=float)
    summary = {f"p{q}": float(np.percentile(values, q)) for q in TIME_PERCENTILES}
    summary["mean"] = float(values.mean())
    return summary


def request_ends(run: ReplayRun, service, output_tokens=None) -> list[float] | None:
    """When each request ends (seconds): as the step model recorded it (``run.finish``), else its first
    token plus its decode, as the streams event loop frees its slot; a request the engine never schedules
    ends as it arrives. None for an untimed run."""
    if run.start is None:
        return None
    if run.finish is not None:
        return list(run.finish)
    never = set(run.unscheduled)
    ends = []
    for index in range(len(run.host_of)):
        output = output_tokens[index] if output_tokens is not None else None
        decode = 0.0 if index in never else service.decode_seconds(output or 0)
        ends.append(run.first_token[index] + decode)
    return ends


def per_request_records(run: ReplayRun, service, output_tokens=None, **labels) -> list[dict]:
    """One record per request of ``run``: where it went, what it hit in each tier, and when.

    ``request`` is the request's 0-based position in the trace; times are seconds from the first
    arrival (None for an untimed run); ``labels`` (the run's timing and tiers) go on every record.
    """
    ends = request_ends(run, service, output_tokens)
    never = set(run.unscheduled)
    records = []
    for index, host in enumerate(run.host_of):
        timed = ends is not None
        arrival = run.arrival[index] if timed else None
        first = run.first_token[index] if timed else None
        records.append(
            {
                "request": index,
                "router": run.router,
                **labels,
                "host": host,
                "scheduled": index not in never,
                "hit_blocks": {
                    "gpu": run.gpu_hits[index],
                    "host": run.host_hits[index],
                    "pool": run.pool_hits[index],
                },
                "arrival_s": arrival,
                "first_token_s": first,
                "ttft_s": None if first is None else first - arrival,
                "finish_s": ends[index] if timed else None,
            }
        )
    return records


def peak_load(run: ReplayRun, service, output_tokens=None) -> dict | None:
    """The most requests one host held at once (arrived, not ended: running + queued), where, when.

    Exact, from every arrival and every end (``load_over_time`` only samples the load): a request
    ends when its decode does (:func:`request_ends`), one the engine never
    schedules ends as it arrives; at one instant ends come before arrivals, as the event loop
    finishes requests before it routes the next. None for an untimed run.
    """
    ends = request_ends(run, service, output_tokens)
    if ends is None:
        return None
    events = []
    for index, host in enumerate(run.host_of):
        events.append((run.arrival[index], 1, host))
        events.append((ends[index], 0, host))
    events.sort(key=lambda event: (event[0], event[1]))
    load: dict[int, int] = {}
    peak = {"requests": 0, "host": None, "at_s": None}
    for time, arrives, host in events:
        load[host] = load.get(host, 0) + (1 if arrives else -1)
        if load[host] > peak["requests"]:
            peak = {"requests": load[host], "host": host, "at_s": time}
    return peak


def run_summary(
    run: ReplayRun, service, bound: Bounds, forced_routed: int, output_tokens=None
) -> dict:
    """One run as JSON: tier hits, moves, times, per-host load, distance to the bounds."""
    references = run.references
    hits = run.hit_blocks
    tiers = {"gpu": run.gpu_hit_blocks, "host": run.host_hit_blocks, "pool": run.pool_hit_blocks}
    # Write-through (pyverify.fleet.tiers): the host tier gets what it lacked (pool hits and recomputed blocks),
    # the pool gets every recomputed block.
    to_host = run.pool_hit_blocks + run.recomputed_blocks if run.with_host else 0
    to_pool = run.recomputed_blocks if run.with_pool else 0
    moved = {
        "host_to_gpu_blocks": run.host_hit_blocks,
        "pool_to_gpu_blocks": run.pool_hit_blocks,
        "gpu_to_host_blocks": to_host,
        "gpu_to_pool_blocks": to_pool,
    }
    data = {
        "router": run.router,
        "references": references,
        "hit_blocks_by_tier": tiers,
        "hit_rate_by_tier": {tier: count / references for tier, count in tiers.items()},
        "hit_blocks": hits,
        "hit_rate": hits / references,
        "recomputed_blocks": run.recomputed_blocks,
        "moved": {
            **moved,
            **{
                key.replace("_blocks", "_tokens"): count * service.block_tokens
                for key, count in moved.items()
            },
            **{
                key.replace("_blocks", "_bytes"): count * service.block_bytes
                for key, count in moved.items()
            },
        },
        "below_floor_blocks": bound.floor_hits - hits,
        "below_min_pooled_blocks": bound.min_pooled_hits - hits,
        "below_forced_blocks": bound.forced_hits - hits,
        "forced_routed_hits": forced_routed,
        "gpu_below_forced_routed_blocks": forced_routed - run.gpu_hit_blocks,
    }
    if run.start is not None:
        ttft = [first - arrive for first, arrive in zip(run.first_token, run.arrival)]
        queueing = [begin - arrive for begin, arrive in zip(run.start, run.arrival)]
        data["ttft_s"] = time_summary(ttft)
        data["queueing_s"] = time_summary(queueing)
        data["peak_load"] = peak_load(run, service, output_tokens)
        data["load_over_time"] = {
            "seconds": run.sample_s,
            "requests_per_host": run.load_samples,
            "meaning": "per host, requests arrived before each instant and not yet "
            "ended (running + queued), sampled at "
            f"{len(run.sample_s)} evenly spaced instants: the load between "
            "them is not seen (peak_load is exact)",
        }
    requests = [host.requests for host in run.hosts]
    data["hosts"] = [
        {
            "host": index,
            "requests": host.requests,
            "gpu_hit_blocks": host.gpu_hit_blocks,
            "host_hit_blocks": host.host_hit_blocks,
            "pool_hit_blocks": host.pool_hit_blocks,
            "recomputed_blocks": host.recomputed_blocks,
            "max_queue": host.max_queue,
            "prefill_busy_s": host.busy_prefill_s,
        }
        for index, host in enumerate(run.hosts)
    ]
    data["load"] = {
        "min_requests": min(requests),
        "max_requests": max(requests),
        "max_load_ratio": max(requests) / (sum(requests) / len(requests)),
        "max_queue": max(host.max_queue for host in run.hosts),
    }
    return data
