r"""Z3 on the general statement, within a bound (``pyverify bounded-check``).

Statement, for fixed N and K: for every list :math:`x_0, \dots, x_{L-1}` with
:math:`0 \le L \le N` and every :math:`x_t \in \{0, \dots, K-1\}` (one-block
requests, i.e. prompt openings), one pooled uncapacitated demand cache that
starts empty misses exactly :math:`|\{x_0, \dots, x_{L-1}\}|` times.

Encoding (all symbolic; nothing is enumerated):

* the list: a length ``L`` (Int, ``0 <= L <= N``) and one-hot Booleans
  ``is[t][v]`` (request ``t`` asks for opening ``v``; exactly one per ``t``);
  ``active[t] = t < L``;
* the cache, by its operational definition: ``held[0][v] = false``;
  ``held[t+1][v] = held[t][v] or (active[t] and is[t][v])``;
  request ``t`` misses iff ``active[t]`` and not ``held[t][x_t]``;
* distinct: opening ``v`` counts iff some active ``t`` has ``is[t][v]``.

Z3 is asked for a list with ``misses != distinct``; ``unsat`` proves the
statement for every list within the bound. This is a bounded check of the
same statement as the Lean theorem ``pooled_misses_eq_distinct`` (which holds
for all lists and all chains), on small instances only, and is reported as
exactly that.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TextIO

import z3

STATEMENT = (
    "for every list of at most {N} one-block requests over at most {K} openings, "
    "pooled uncapacitated misses (cache starting empty) = number of distinct openings"
)


@dataclass
class BoundedResult:
    max_length: int
    openings: int
    result: str  # "unsat" = proved; "sat" = counterexample; "unknown" = timed out
    wall_time_s: float
    counterexample: list[int] | None = None

    @property
    def statement(self) -> str:
        return STATEMENT.format(N=self.max_length, K=self.openings)

    def describe(self) -> str:
        verdict = {"unsat": "PROVED", "sat": "COUNTEREXAMPLE", "unknown": "UNKNOWN (time limit)"}[
            self.result
        ]
        tail = f": {self.counterexample}" if self.counterexample is not None else ""
        return f"N = {self.max_length:3d}, K = {self.openings:3d}: {verdict} in {self.wall_time_s:.2f} s ({self.statement}){tail}"

    def to_json(self) -> dict:
        return {
            "max_length": self.max_length,
            "openings": self.openings,
            "result": self.result,
            "proved": self.result == "unsat",
            "statement": self.statement,
            "wall_time_s": round(self.wall_time_s, 3),
            "counterexample": self.counterexample,
        }


def prove(
    max_length: int, openings: int, timeout_s: float | None = None, offset: int = 0
) -> BoundedResult:
    """Ask Z3 for a counterexample to the statement at (N, K); unsat proves it.

    ``offset`` (tests only) checks the false statement misses = distinct + offset
    instead, to show the encoding can produce counterexamples (is not vacuous).
    """
    started = time.perf_counter()
    n, k = max_length, openings
    solver = z3.Solver()
    solver.set(
        "ctrl_c", False
    )  # Z3 would swallow Ctrl-C and answer 'unknown'; let Python stop the run
    if timeout_s is not None:
        solver.set("timeout", max(1, int(timeout_s * 1000)))
    length = z3.Int("L")
    solver.add(0 <= length, length <= n)
    active = [length > t for t in range(n)]
    asks = [[z3.Bool(f"is_{t}_{v}") for v in range(k)] for t in range(n)]
    for row in asks:
        solver.add(z3.PbEq([(b, 1) for b in row], 1))
    held = [z3.BoolVal(False)] * k
    misses = []
    for t in range(n):
        hit = z3.Or([z3.And(asks[t][v], held[v]) for v in range(k)])
        misses.append(z3.If(z3.And(active[t], z3.Not(hit)), 1, 0))
        following = [z3.Bool(f"held_{t + 1}_{v}") for v in range(k)]
        for v in range(k):
            solver.add(following[v] == z3.Or(held[v], z3.And(active[t], asks[t][v])))
        held = following
    distinct = [
        z3.If(z3.Or([z3.And(active[t], asks[t][v]) for t in range(n)]), 1, 0) for v in range(k)
    ]
    solver.add(z3.Sum(misses) != z3.Sum(distinct) + offset)
    result = solver.check()
    counterexample = None
    if result == z3.sat:
        model = solver.model()
        size = model.eval(length).as_long()
        counterexample = [
            next(v for v in range(k) if z3.is_true(model.eval(asks[t][v]))) for t in range(size)
        ]
    return BoundedResult(n, k, str(result), time.perf_counter() - started, counterexample)


def search(start: int, budget_s: float, progress: TextIO | None = None) -> list[BoundedResult]:
    """Prove at N = K = start, start+1, ..., each within ``budget_s``; stop at the first not proved."""
    results: list[BoundedResult] = []
    n = start
    while True:
        result = prove(n, n, timeout_s=budget_s)
        results.append(result)
        if progress is not None:
            print(result.describe(), file=progress, flush=True)
        if result.result != "unsat":
            return results
        n += 1
