"""What one ``pyverify replay`` run is asked (:class:`ReplaySettings`) and what it did: the records both
event loops fill.

Here, apart from the loops, so the Python event loop (:mod:`pyverify.fleet.replay`) and the compiled one
(:mod:`pyverify.fleet.compiled_replay`) import them without importing each other.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Sequence


@dataclass(frozen=True)
class ReplaySettings:
    """One run's configuration, beside the trace, the router and the service model.

    A tier's capacity is its size in blocks, ``None`` for a tier without a limit, and (the lower tiers)
    ``False`` for no such tier."""

    #: GPU cache blocks per host (``None``: no limit).
    capacity: int | None = None
    #: The GPU caches' eviction (:data:`pyverify.fleet.tiers.REPLAY_EVICTIONS` or an engine's).
    eviction: str = "lru"
    #: A host-DRAM tier (LRU) below each GPU.
    host_capacity: int | None | bool = False
    #: One pool tier (LRU) shared by the fleet.
    pool_capacity: int | None | bool = False
    #: Requests at their timestamps, queued and served in time; ``False``: one at a time in file order.
    timed: bool = True
    #: Arrival time = timestamp x this (< 1 compresses the trace: more load).
    arrival_scale: float = 1.0
    #: SGLang's radix cache page in tokens (``--eviction sglang``; ``None``: the trace's block size).
    page_size: int | None = None

    @property
    def lower_tiers(self) -> bool:
        """Whether a host-DRAM or pool tier is below the GPUs."""
        return self.host_capacity is not False or self.pool_capacity is not False


#: Instants at which a timed run records every host's load, evenly spaced from 0 to the last arrival (excluded).
LOAD_SAMPLES = 50


@dataclass
class HostStats:
    requests: int = 0
    gpu_hit_blocks: int = 0
    host_hit_blocks: int = 0
    pool_hit_blocks: int = 0
    recomputed_blocks: int = 0
    # Most requests left waiting (not running): just after an arrival (streams), or after a step's
    # admissions (steps).
    max_queue: int = 0
    busy_prefill_s: float = 0.0


@dataclass
class ReplayRun:
    """What one replay did: per request its host, tier hits and times (seconds; None without timing)."""

    router: str
    host_of: list[int]
    gpu_hits: list[int]
    host_hits: list[int]
    pool_hits: list[int]
    references: int
    arrival: list[float] | None
    start: list[float] | None
    first_token: list[float] | None
    hosts: list[HostStats] = field(default_factory=list)
    with_host: bool = False  # whether a host-DRAM tier was below each GPU
    with_pool: bool = False  # whether a pool tier took the recomputed blocks
    #: Load over time (timed runs): at each of ``sample_s``, per host, requests arrived before it and not yet ended.
    sample_s: list[float] = field(default_factory=list)
    load_samples: list[list[int]] = field(default_factory=list)
    #: Engine evictions: the requests the engine would never schedule (no hits, nothing changed).
    unscheduled: list[int] = field(default_factory=list)
    #: When each request ended (seconds), where the service model says it (the step model); ``None``:
    #: first token plus the decode time of :meth:`pyverify.fleet.service.ServiceModel.decode_seconds`.
    finish: list[float] | None = None

    @property
    def gpu_hit_blocks(self) -> int:
        return sum(self.gpu_hits)

    @property
    def host_hit_blocks(self) -> int:
        return sum(self.host_hits)

    @property
    def pool_hit_blocks(self) -> int:
        return sum(self.pool_hits)

    @property
    def hit_blocks(self) -> int:
        return self.gpu_hit_blocks + self.host_hit_blocks + self.pool_hit_blocks

    @property
    def recomputed_blocks(self) -> int:
        return self.references - self.hit_blocks


def load_samples_at(
    sample_s: Sequence[float],
    arrival: Sequence[float],
    finish: Sequence[float],
    host_of: Sequence[int],
    fleet: int,
) -> list[list[int]]:
    """Per sample instant, per host, the requests that arrived before it and end after it
    (``arrival < at < finish``), counted from the run's own times, so that events at the very
    instant of a sample (a zero-length step ending then) cannot fall on either side of it."""
    arrivals: list[list[float]] = [[] for _ in range(fleet)]
    ends: list[list[float]] = [[] for _ in range(fleet)]
    instant: list[dict[float, int]] = [{} for _ in range(fleet)]  # arrival == finish
    for start, end, host in zip(arrival, finish, host_of):
        arrivals[host].append(start)
        ends[host].append(end)
        if start == end:
            instant[host][start] = instant[host].get(start, 0) + 1
    for column in (*arrivals, *ends):
        column.sort()
    # arrived before `at`, less those ended by it; a request arriving and ending at `at` is in
    # neither count's complement, so it is added back
    return [
        [
            bisect_left(arrivals[host], at)
            - bisect_right(ends[host], at)
            + instant[host].get(at, 0)
            for host in range(fleet)
        ]
        for at in sample_s
    ]
