"""Z3 model of the offline placement problem, written apart from the CP-SAT one.

Where :mod:`.cpsat` encodes the reduced interval form, this module encodes the
definition of a run in :mod:`.placement` (rules 1-4) literally, with no lemma:

* ``keep[t][b]``: block ``b`` is resident in cache ``q(t)`` right after step
  ``t`` (that is, in ``R_q^{t+1}``), for every ``b`` referenced in ``q`` up to
  ``t``. Blocks never referenced in ``q`` can never be resident there, so
  they get no variable (rule 3 keeps them out).
* ``before(t, b)``: ``keep[p][b]`` for the previous step ``p`` of the same
  cache, or false if there is none (rule 1; other caches' steps leave the
  set unchanged, rule 3).
* Rule 3: ``keep[t][b] -> before(t, b)`` unless ``b`` is in ``c_t``.
* Rule 2: ``hit[t][j] == hit[t][j-1] and before(t, c[t][j])`` (longest
  resident prefix: the hit count is fixed by the residency).
* Rule 4: ``AtMost(keep[t][...], C)``.
* Rule 5, forced admission only: ``keep[t][b]`` for the request's first
  ``min(k_t, C)`` blocks.
* misses = references - number of true ``hit`` literals.

:func:`confirm` asks two questions in separate solver calls: is there a run
with ``m`` misses or fewer (expected: sat), and with ``m - 1`` or fewer
(expected: unsat). Only the second is a lower-bound proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import z3

from pyverify.certify.placement import Problem

Z3_VERSION = z3.get_version_string()


class _Encoding:
    """The literal model of a run, as Z3 terms, for one problem."""

    def __init__(
        self,
        chains: Sequence[Sequence[int]],
        cache_of: Sequence[int],
        capacity: int | None,
        forced: bool = False,
    ) -> None:
        self.constraints: list = []
        self.keep: list[dict[int, z3.BoolRef]] = []
        self.hits: list[list[z3.BoolRef]] = []
        last_step: dict[int, int] = {}
        for t, (chain, q) in enumerate(zip(chains, cache_of)):
            previous = self.keep[last_step[q]] if q in last_step else {}

            def before(b: int) -> z3.BoolRef:
                return previous.get(b, z3.BoolVal(False))

            row = []
            prefix = z3.BoolVal(True)
            for j, b in enumerate(chain):
                h = z3.Bool(f"hit_{t}_{j}")
                self.constraints.append(h == z3.And(prefix, before(b)))
                row.append(h)
                prefix = h
            self.hits.append(row)

            domain = set(previous) | set(chain)
            keep = {b: z3.Bool(f"keep_{t}_{b}") for b in sorted(domain)}
            for b, var in keep.items():
                if b not in chain:
                    self.constraints.append(z3.Implies(var, before(b)))
            if forced:  # rule 5: the request's first min(k, C) blocks are held right after it
                self.constraints += [
                    keep[b] for b in (chain if capacity is None else chain[:capacity])
                ]
            if capacity is not None and len(keep) > capacity:
                self.constraints.append(z3.AtMost(*keep.values(), capacity))
            self.keep.append(keep)
            last_step[q] = t
        self.references = sum(len(chain) for chain in chains)

    def at_most_misses(self, misses: int):
        """misses <= m, as: number of hits >= references - m."""
        all_hits = [h for row in self.hits for h in row]
        need = self.references - misses
        if need <= 0:
            return z3.BoolVal(True)
        if need > len(all_hits):
            return z3.BoolVal(False)
        return z3.AtLeast(*all_hits, need)


@dataclass
class Z3Confirmation:
    objective: int
    at_objective: str  # "sat" | "unsat" | "unknown": a run with <= objective misses exists
    below_objective: str  # same for objective - 1: "unsat" proves the bound
    wall_time_s: float
    version: str = Z3_VERSION
    witness: dict | None = None  # Z3's own run for the sat question


def _check(encoding: _Encoding, misses: int, timeout_s: float | None):
    solver = z3.Solver()
    solver.set(
        "ctrl_c", False
    )  # Z3 would swallow Ctrl-C and answer 'unknown'; let Python stop the run
    if timeout_s is not None:
        solver.set("timeout", max(1, int(timeout_s * 1000)))
    solver.add(*encoding.constraints)
    solver.add(encoding.at_most_misses(misses))
    result = solver.check()
    return str(result), (solver.model() if result == z3.sat else None)


def confirm(problem: Problem, objective: int, timeout_s: float | None = None) -> Z3Confirmation:
    """Ask Z3 whether runs with ``objective`` and ``objective - 1`` misses exist.

    ``timeout_s`` bounds the whole call, building the encoding included: each
    question gets what is left (none left: "unknown", never a false answer).
    """
    started = time.perf_counter()

    def left() -> float | None:
        return None if timeout_s is None else timeout_s - (time.perf_counter() - started)

    encoding = _Encoding(
        problem.chains, problem.cache_of, problem.capacity, problem.admission == "forced"
    )
    at, model = (
        _check(encoding, objective, left()) if left() is None or left() > 0 else ("unknown", None)
    )
    below, _ = (
        _check(encoding, objective - 1, left())
        if left() is None or left() > 0
        else ("unknown", None)
    )
    elapsed = time.perf_counter() - started
    witness = None
    if model is not None:
        hit_blocks = [
            sum(1 for h in row if z3.is_true(model.eval(h, model_completion=True)))
            for row in encoding.hits
        ]
        dropped, held = [], {}
        for t, (chain, q, keep) in enumerate(zip(problem.chains, problem.cache_of, encoding.keep)):
            after = {
                b for b, var in keep.items() if z3.is_true(model.eval(var, model_completion=True))
            }
            dropped.append(sorted((held.get(q, set()) | set(chain)) - after))
            held[q] = after
        witness = {"cache_of": list(problem.cache_of), "hit_blocks": hit_blocks, "dropped": dropped}
    return Z3Confirmation(objective, at, below, elapsed, witness=witness)


def optimum(problem: Problem, timeout_s: float | None = None) -> int | None:
    """Z3's own minimum number of misses (z3.Optimize), for small problems and tests."""
    encoding = _Encoding(
        problem.chains, problem.cache_of, problem.capacity, problem.admission == "forced"
    )
    opt = z3.Optimize()
    if timeout_s is not None:
        opt.set("timeout", max(1, int(timeout_s * 1000)))
    opt.add(*encoding.constraints)
    hits = [h for row in encoding.hits for h in row]
    total_hits = z3.Sum([z3.If(h, 1, 0) for h in hits]) if hits else z3.IntVal(0)
    opt.maximize(total_hits)
    if opt.check() != z3.sat:
        return None
    return encoding.references - opt.model().eval(total_hits).as_long()
