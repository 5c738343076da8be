"""Engine logs: does pyverify's vLLM pool hold what a real vLLM engine held (``pyverify trace
check-events``)?

What :func:`check_vllm_events` guarantees: it replays each prompt the KV-event log stores, per
rank, through pyverify's exact vLLM block pool (``--eviction vllm``) and compares, after every
line of the log, the blocks the engine says it holds with the blocks the pool holds; the first
line where they differ is reported. It assumes what :data:`ASSUMED` says. The readers and the
pool are imported by the call that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyverify.inputs.records import ImportOptions

__all__ = ["ASSUMED", "EventLogCheck", "check_vllm_events"]

#: What the replay assumes of the engine's run.
ASSUMED = "each prompt is its full blocks exactly; requests run one at a time; nothing cached before the log"


@dataclass(frozen=True)
class EventLogCheck:
    """The engine's hits and pyverify's pool's, and where their held blocks first differ."""

    trace: str
    format: str
    kind: str  # the input as its reader describes it
    requests: int
    block_size_tokens: int
    capacity_blocks_per_rank: int
    capacity_given: bool  # False: the most blocks the log shows one rank holding
    engine_hit_blocks: int
    model_hit_blocks: int
    model_unscheduled_requests: int
    lines: int
    lines_where_held_blocks_agree: int
    first_difference: dict[str, Any] | None

    @property
    def agrees(self) -> bool:
        return self.first_difference is None

    @property
    def capacity_from(self) -> str:
        return (
            "--capacity"
            if self.capacity_given
            else "the most blocks the log shows one rank holding"
        )

    def to_dict(self) -> dict[str, Any]:
        """What ``pyverify trace check-events --json`` prints."""
        return {
            "trace": self.trace,
            "format": self.format,
            "requests": self.requests,
            "block_size_tokens": self.block_size_tokens,
            "capacity_blocks_per_rank": self.capacity_blocks_per_rank,
            "capacity_from": self.capacity_from,
            "engine_hit_blocks": self.engine_hit_blocks,
            "model_hit_blocks": self.model_hit_blocks,
            "model_unscheduled_requests": self.model_unscheduled_requests,
            "lines": self.lines,
            "lines_where_held_blocks_agree": self.lines_where_held_blocks_agree,
            "first_difference": self.first_difference,
            "assumed": ASSUMED,
        }


def check_vllm_events(
    path: str, *, reading: ImportOptions | None = None, capacity: int | None = None
) -> EventLogCheck:
    """Replay the vLLM KV-event log at ``path`` through pyverify's vLLM pool of ``capacity``
    blocks per rank (default: the most blocks the log shows one rank holding) and compare the
    held blocks line by line. Raises :class:`~pyverify.errors.UserError` for an input that is not
    such a log."""
    from pyverify.api.reading import read_input
    from pyverify.cache.vllm import VllmBlockPool
    from pyverify.errors import located
    from pyverify.inputs.kv_events import read_engine_log
    from pyverify.inputs.records import ImportOptions
    from pyverify.inputs.stream import open_source

    reading = reading if reading is not None else ImportOptions()
    loaded = read_input(path, reading)  # any format, read as every command reads it
    if loaded.format.key != "vllm-kv-events":
        raise located(
            path, None, f"trace check-events reads a vLLM KV-event log; this is a {loaded.kind}"
        )
    order = ImportOptions(allow_unsorted=reading.allow_unsorted)
    with open_source(path) as source:
        _, _, first = read_engine_log(source, order)
    pool_blocks = capacity or max(1, first.peak)
    size = first.block_size
    pools: dict = {}
    tally = {
        "lines": 0,
        "agree": 0,
        "engine_hits": 0,
        "model_hits": 0,
        "unscheduled": 0,
        "requests": 0,
    }
    first_difference: dict | None = None

    def on_line(line, added, log) -> None:
        nonlocal first_difference
        touched = set()
        for chain, stored, rank in added:
            chain = tuple(block for block in chain if block not in log.unseen)  # never held
            pool = pools.get(rank)
            if pool is None:
                pool = pools[rank] = VllmBlockPool(pool_blocks, size)
            hit = pool.run(chain, len(chain) * size)
            tally["requests"] += 1
            tally["engine_hits"] += len(chain) - stored
            if hit is None:
                tally["unscheduled"] += 1
            else:
                tally["model_hits"] += hit
            touched.add(rank)
        ranks = touched | {rank for rank in pools}
        engine = {rank: log.held(rank) for rank in ranks}
        model = {rank: set(pools[rank].copies) if rank in pools else set() for rank in ranks}
        tally["lines"] += 1
        if all(engine[rank] == model[rank] for rank in ranks):
            tally["agree"] += 1
        elif first_difference is None:
            rank = next(
                rank
                for rank in sorted(ranks, key=lambda r: -1 if r is None else r)
                if engine[rank] != model[rank]
            )
            first_difference = {
                "line": line,
                "rank": rank,
                "engine_held": len(engine[rank]),
                "model_held": len(model[rank]),
                "only_engine": len(engine[rank] - model[rank]),
                "only_model": len(model[rank] - engine[rank]),
            }

    with open_source(path) as source:
        read_engine_log(source, order, on_line)
    return EventLogCheck(
        trace=path,
        format=loaded.format.key,
        kind=loaded.kind,
        requests=tally["requests"],
        block_size_tokens=size,
        capacity_blocks_per_rank=pool_blocks,
        capacity_given=bool(capacity),
        engine_hit_blocks=tally["engine_hits"],
        model_hit_blocks=tally["model_hits"],
        model_unscheduled_requests=tally["unscheduled"],
        lines=tally["lines"],
        lines_where_held_blocks_agree=tally["agree"],
        first_difference=first_difference,
    )
