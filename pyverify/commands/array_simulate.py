"""``simulate`` on a trace file held as arrays: the default for every Parquet, CSV and Mooncake JSONL file.

Chosen by ``--backend auto`` (whatever the file's size) and by ``--backend
numpy`` whenever the question is not a plain count: the trace is read as
columns, routed by the vectorised static policies
(:mod:`pyverify.engines.routing`, equal to :mod:`pyverify.sim.routing`'s),
run (uncapacitated: each (cache, block) pair's first reference misses,
counted by numpy; with a capacity: replayed by the compiled kernels,
:mod:`pyverify.sim.array_run`) and tallied in blocks and tokens. The instance
is named by its content digest (:mod:`pyverify.inputs.columnar.digest`), as
the per-record simulator names it, so the report is the simulator's, field for
field (``tests/test_default_path.py``); under ``--backend numpy`` it also names
the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyverify.commands.cache_options import resolve_cache_size, window_of
from pyverify.commands.simulation import Simulation, optima_tallies
from pyverify.errors import UserError
from pyverify.sim.names import PER_HOST, default_fleet_for, default_policy_for

if TYPE_CHECKING:  # annotations only: the CLI's start-up loads no numpy
    from typing import Callable

    import numpy as np

    from pyverify.inputs.columnar import ColumnarTrace

ENGINE = "numpy (arrays, compiled replay)"


def route_trace(trace: "ColumnarTrace", args) -> tuple["np.ndarray", int, str]:
    """``(host per request, fleet, policy)`` for a trace held as arrays, by every command's
    defaults (:mod:`pyverify.sim.routing`) and the vectorised static policies."""
    from pyverify.engines.routing import static_hosts

    gives_hosts = trace.routing is not None
    fleet = args.fleet or default_fleet_for(int(trace.routing.max()) + 1 if gives_hosts else None)
    policy = args.routing or default_policy_for(gives_hosts)
    try:
        return static_hosts(trace, fleet, policy, args.seed), fleet, policy
    except UserError as error:
        raise UserError(f"{args.instance}: routing: {error}") from None


def simulate_on_arrays(args) -> Simulation:
    from pyverify.commands.input_options import read_trace_with
    from pyverify.inputs.columnar.digest import content_sha256_beside

    trace = read_trace_with(args, args.instance)
    return _simulated(
        args, trace, content_sha256_beside(trace)
    )  # the digest on a second core while this one counts


def _simulated(args, trace: "ColumnarTrace", sha256: "Callable[[], str]") -> Simulation:
    import numpy as np

    from pyverify.engines.numpy_engine import uncapacitated_hits
    from pyverify.sim.accounting import tally_offsets
    from pyverify.sim.array_run import trace_token_weights

    size = resolve_cache_size(args, trace, args.instance)
    window = window_of(args)
    weights = trace_token_weights(trace, args.instance)
    routed = (
        args.model == PER_HOST or trace.routing is not None
    )  # as the simulator: an input's own routing is reported
    hosts, fleet, policy = route_trace(trace, args) if routed else (None, None, None)
    cache_of = hosts if args.model == PER_HOST else np.zeros(trace.n_requests, dtype=np.int64)
    if size.blocks is None:  # nothing is evicted: no replay (and no compiled kernel) needed
        hits = uncapacitated_hits(
            trace.ids, trace.offsets, hosts if args.model == PER_HOST else None, fleet or 1
        )
    else:
        from pyverify.sim.array_run import array_hits

        hits = array_hits(trace, cache_of, size.blocks, args.eviction)

    def witness() -> dict:
        return {"cache_of": cache_of.tolist(), "hit_blocks": hits.tolist()}

    optima = optima_tallies(
        args,
        trace.ids,
        np.diff(trace.offsets),
        trace.offsets,
        cache_of,
        size.blocks,
        weights,
        window,
    )
    return Simulation(
        name=trace.name,
        sha256=sha256(),
        engine=ENGINE if args.backend == "numpy" else None,
        model=args.model,
        fleet=fleet,
        routing=policy,
        size=size,
        eviction=args.eviction if size.blocks is not None else None,
        references=trace.n_references,
        hits=int(hits.sum()),
        n_requests=trace.n_requests,
        window=window,
        weights_source=weights.source if weights else None,
        measured=tally_offsets(trace.offsets, hits, weights, window),
        witness=witness if args.witness else None,
        optima=optima,
    )


__all__ = ["ENGINE", "route_trace", "simulate_on_arrays"]
