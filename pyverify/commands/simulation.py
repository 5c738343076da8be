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


@dataclass(frozen=True)
class Simulation:
    name: str
    sha256: str | None  # of the instance; None when the input was never built as one (array path)
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
    witness: Callable[[], dict[str, Any]] | None  # asked for with --witness; built only when printed


__all__ = ["Simulation"]
