"""CP-SAT (OR-Tools) model of the offline placement problem: untrusted search.

Encodes the *interval* form from :mod:`.placement` ("Canonical schedules"):

* one 0/1 variable ``hit[t, j]`` for each block reference ``(t, j)``, fixed
  to 0 when the block was not referenced through the same cache at an earlier
  step (it was never fetched there, so it cannot be resident);
* ``hit[t, j+1] -> hit[t, j]`` (hits are a leading prefix);
* with a capacity ``C``: after each step ``t`` of cache ``q``,
  ``sum(hit[next use of b in q after t] for b referenced in q up to t) <= C``
  (the blocks held after ``t`` are those whose next use is a hit);
* minimise ``references - sum(hit)``.

With forced admission (``problem.admission == "forced"``, rule 5 of
:mod:`.placement`) the request's pinned blocks count as held after it
whatever their next use, and a block pinned by the cache's previous step
hits when every block before it in the chain hits (it is resident).

Without a capacity the model has one variable per block reference and one
implication per adjacent pair: linear size. The solver still has to find the
optimum and prove the bound; nothing in the model states the floor.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from ortools import __version__ as ORTOOLS_VERSION
from ortools.sat.python import cp_model

from pyverify.certify.placement import Problem


#: CP-SAT parameters set on every solve, against known wrong answers of the pinned OR-Tools
#: (recorded in the certificate's ``solvers.cp-sat.parameters``).
WORKAROUNDS = {"presolve_inclusion_work_limit": 0}


@dataclass
class CpSatResult:
    status: str  # OPTIMAL, FEASIBLE, INFEASIBLE, MODEL_INVALID, UNKNOWN
    objective: int | None
    bound: int
    hit_blocks: tuple[int, ...] | None
    wall_time_s: float
    parameters: dict[str, Any] = field(default_factory=dict)
    version: str = ORTOOLS_VERSION
    variables: int = 0
    constraints: int = 0


def solve(
    problem: Problem,
    time_limit: float | None = None,
    workers: int = 2,
    hint: tuple[int, ...] | None = None,
) -> CpSatResult:
    """Minimise misses with CP-SAT; ``hint`` (hit counts of a known run) seeds the search."""
    started = time.perf_counter()
    model = cp_model.CpModel()
    hit: dict[tuple[int, int], Any] = {}
    seen: dict[tuple[int, int], tuple[int, int]] = {}  # (cache, block) -> last reference (t, j)
    next_use: dict[
        tuple[int, int], tuple[int, int]
    ] = {}  # reference -> next reference of the same block in the same cache
    for t, (chain, q) in enumerate(zip(problem.chains, problem.cache_of)):
        for j, b in enumerate(chain):
            hit[(t, j)] = model.new_bool_var(f"hit_{t}_{j}")
            if (q, b) in seen:
                next_use[seen[(q, b)]] = (t, j)
            else:  # never fetched into this cache before: cannot be resident
                model.add(hit[(t, j)] == 0)
            seen[(q, b)] = (t, j)
        for j in range(1, len(chain)):
            model.add_implication(hit[(t, j)], hit[(t, j - 1)])

    if problem.admission == "forced":
        # A block pinned by the cache's previous step is resident now: hit it if everything before it hit.
        previous: dict[int, set[int]] = {}
        for t, (chain, q) in enumerate(zip(problem.chains, problem.cache_of)):
            resident = previous.get(q, set())
            for j, b in enumerate(chain):
                if b in resident and j == 0:
                    model.add(hit[(t, j)] == 1)
                elif b in resident:
                    model.add_implication(hit[(t, j - 1)], hit[(t, j)])
            previous[q] = set(problem.pinned(t))

    if problem.capacity is not None:
        # live[q]: for each block referenced in q so far, its latest reference.
        live: dict[int, dict[int, tuple[int, int]]] = {}
        for t, (chain, q) in enumerate(zip(problem.chains, problem.cache_of)):
            cache = live.setdefault(q, {})
            for j, b in enumerate(chain):
                cache[b] = (t, j)
            # Held after t: blocks whose next use is a hit, and (forced admission) the request's pinned blocks.
            pinned = set(problem.pinned(t))
            held = [
                hit[next_use[ref]]
                for b, ref in cache.items()
                if ref in next_use and b not in pinned
            ]
            if len(held) > problem.capacity - len(pinned):
                model.add(sum(held) <= problem.capacity - len(pinned))

    references = problem.references
    model.minimize(references - sum(hit.values()))
    if hint is not None:
        for (t, j), var in hit.items():
            model.add_hint(var, 1 if j < hint[t] else 0)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    # OR-Tools installs its own SIGINT handler by default and leaves Python's
    # removed after the solve, so Ctrl-C would kill pyverify without cleanup.
    solver.parameters.catch_sigint_signal = False
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    # OR-Tools 9.15 can report a wrong OPTIMAL after its inclusion-detection presolve
    # (google/or-tools#5293, open); switching that presolve step off avoids it.
    for name, value in WORKAROUNDS.items():
        setattr(solver.parameters, name, value)
    status = solver.solve(model)
    name = solver.status_name(status)
    elapsed = time.perf_counter() - started
    parameters = {
        "num_workers": workers,
        "max_time_in_seconds": time_limit,
        **WORKAROUNDS,
        "formulation": "interval (one hit variable per block reference)",
    }
    proto = model.proto
    stats = {"variables": len(proto.variables), "constraints": len(proto.constraints)}
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        hit_blocks = []
        for t, chain in enumerate(problem.chains):
            h = 0
            while h < len(chain) and solver.boolean_value(hit[(t, h)]):
                h += 1
            hit_blocks.append(h)
        objective = int(round(solver.objective_value))
        return CpSatResult(
            name,
            objective,
            _ceil_bound(solver.best_objective_bound),
            tuple(hit_blocks),
            elapsed,
            parameters,
            **stats,
        )
    return CpSatResult(
        name, None, _ceil_bound(solver.best_objective_bound), None, elapsed, parameters, **stats
    )


def _ceil_bound(value: float) -> int:
    """The objective is an integer, so a proven bound b proves ceil(b) (tolerance 1e-6)."""
    if not math.isfinite(value):
        return 0
    return max(0, math.ceil(value - 1e-6))
