"""What ``pyverify simulate`` reports, however the run was computed.

The simulator (Python chains, every input and option) and the array path
(:mod:`pyverify.commands.array_simulate`, big trace files) both produce a
:class:`Simulation`; one function prints it (``basic.report_simulation``),
so the two cannot drift apart in what they say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # annotations only: the CLI's start-up loads no numpy
    from pyverify.commands.cache_options import CacheSize
    from pyverify.sim.accounting import Tally
    from pyverify.sim.window import Window


#: Plain words for the two optima wherever a capacitated hit rate is printed beside them.
OPTIMUM_WORDS = {
    "forced": (
        "the best block hit rate any cache of this size could reach if it admits every block it fetches and keeps "
        "the running request's blocks until it ends (forced admission, as vLLM and SGLang)"
    ),
    "bypass": "the best block hit rate any cache of this size could reach (bypass: it may discard a block it fetched)",
}


@dataclass(frozen=True)
class Simulation:
    name: str
    sha256: str  # the content digest of the instance (pyverify.inputs.columnar.digest), however it was read
    engine: str | None  # None: the simulator
    model: str
    fleet: int | None  # None when no routing was needed
    routing: str | None
    size: "CacheSize"
    eviction: str | None
    references: int
    hits: int
    n_requests: int
    window: "Window"
    weights_source: str | None
    measured: "Tally"
    witness: (
        Callable[[], dict[str, Any]] | None
    )  # asked for with --witness; built only when printed
    optima: dict[str, "Tally"] | None = (
        None  # --optimum: the forced and bypass optima, counted over the same requests
    )
    unscheduled: tuple[int, ...] | None = (
        None  # --eviction vllm|sglang: requests the engine would never schedule
    )
    instance_sha256: str | None = (
        None  # a pyverify.instance/1 file's canonical-JSON SHA-256 (input_options.identity_of)
    )


def optima_tallies(
    args, ids, lengths, offsets, cache_of, capacity, weights, window
) -> dict[str, "Tally"] | None:
    """``simulate --optimum``: the two optima at this capacity, tallied like the run (None unless asked)."""
    if not getattr(args, "optimum", False):
        return None
    from pyverify.errors import UserError
    from pyverify.sim.accounting import tally_offsets
    from pyverify.sim.forced_min import optimum_hits

    if capacity is None:
        raise UserError(
            "--optimum: needs a capacity (uncapacitated, every run that keeps what it fetched is optimal)"
        )
    return {
        name: tally_offsets(offsets, hits, weights, window)
        for name, hits in optimum_hits(ids, lengths, cache_of, capacity).items()
    }


__all__ = ["OPTIMUM_WORDS", "Simulation", "optima_tallies"]
