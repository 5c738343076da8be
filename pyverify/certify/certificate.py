"""Assemble a ``pyverify.certificate/1`` from the searchers' results, and write it.

:func:`certify` runs, in order: the greedy policies (capacitated models), CP-SAT
(seeded with the best greedy run), and Z3's two questions at CP-SAT's
objective. It derives the status honestly: ``OPTIMAL`` only when CP-SAT proved
optimality *and* Z3 answered sat at the objective and unsat one below (and,
uncapacitated, the bound is the compulsory floor); otherwise ``FEASIBLE``
with the best bound CP-SAT proved. The witness is CP-SAT's run, or the best
greedy run if CP-SAT found none within its time limit.

:func:`write_certificate` writes atomically and only after the trusted checker
(:mod:`pyverify.trusted.check`) has accepted the file: a certificate that does not
verify is never left on disk.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyverify import __version__
from pyverify.certify import cpsat, greedy, z3check
from pyverify.certify.placement import canonical_schedule, problem_from_instance
from pyverify.trusted.check import CERTIFICATE_FORMAT, claim_statement, verify
from pyverify.errors import UserError
from pyverify.fileio import atomic_path
from pyverify.inputs.model import Instance, instance_sha256


@dataclass
class Certified:
    certificate: dict[str, Any]
    cpsat: cpsat.CpSatResult
    z3: z3check.Z3Confirmation | None
    wall_time_s: float


def certify(
    instance: Instance,
    model: str,
    capacity: int | None = None,
    time_limit: float | None = 60.0,
    greedy_policies: list[str] | None = None,
    use_z3: bool = True,
    instance_path: str | None = None,
    workers: int = 2,
) -> Certified:
    started = time.perf_counter()
    problem = problem_from_instance(instance, model, capacity, instance_path or "<instance>")
    digest = instance_sha256(instance)
    if greedy_policies is None:
        greedy_policies = list(greedy.POLICIES) if capacity is not None else []
    greedy_runs = []
    for policy in greedy_policies:
        if policy not in greedy.POLICIES:
            raise UserError(f"unknown greedy policy {policy!r}; choose from: {', '.join(greedy.POLICIES)}")
        hits = greedy.POLICIES[policy](problem)
        greedy_runs.append((policy, hits, problem.references - sum(hits)))
    best_greedy = min(greedy_runs, key=lambda run: run[2]) if greedy_runs else None

    solved = cpsat.solve(problem, time_limit=time_limit, workers=workers, hint=best_greedy[1] if best_greedy else None)
    if solved.hit_blocks is not None:
        hit_blocks, objective = solved.hit_blocks, solved.objective
    elif best_greedy is not None:
        hit_blocks, objective = best_greedy[1], best_greedy[2]
    else:
        raise UserError(f"CP-SAT found no run within the time limit ({solved.status}); raise --time-limit")
    assert objective == problem.references - sum(hit_blocks)

    confirmation = z3check.confirm(problem, objective, timeout_s=time_limit) if use_z3 else None
    floor = problem.floor()
    optimal = (
        solved.status == "OPTIMAL"
        and solved.objective == objective == solved.bound
        and confirmation is not None
        and confirmation.at_objective == "sat"
        and confirmation.below_objective == "unsat"
        and (capacity is not None or solved.bound == floor)
    )
    status = "OPTIMAL" if optimal else "FEASIBLE"
    problem_record = {"instance_sha256": digest, "model": model, "capacity": capacity}
    cert: dict[str, Any] = {
        "format": CERTIFICATE_FORMAT,
        "instance": {"name": instance.name, "sha256": digest, **({"path": instance_path} if instance_path else {})},
        "cache_model": {"model": model, "capacity": capacity, "eviction": "offline-optimal", "warm_start": False, "routing": "given"},
        "claim": {"statement": claim_statement(model, capacity, status, objective, solved.bound), "scope": "this instance"},
        "status": status,
        "objective": objective,
        "bound": solved.bound,
        "floor": floor,
        "solvers": {
            "cp-sat": {
                "name": "OR-Tools CP-SAT",
                "version": solved.version,
                "problem": problem_record,
                "status": solved.status,
                "objective": solved.objective,
                "bound": solved.bound,
                "wall_time_s": round(solved.wall_time_s, 3),
                "parameters": {**solved.parameters, "variables": solved.variables, "constraints": solved.constraints},
            },
            "z3": None
            if confirmation is None
            else {
                "name": "Z3",
                "version": confirmation.version,
                "problem": problem_record,
                "objective": objective,
                "at_objective": confirmation.at_objective,
                "below_objective": confirmation.below_objective,
                "wall_time_s": round(confirmation.wall_time_s, 3),
                "parameters": {"timeout_s": time_limit, "formulation": "literal residency per cache and step"},
            },
        },
    }
    if greedy_runs:
        cert["greedy"] = [
            {"policy": policy, "description": greedy.DESCRIPTIONS[policy], "misses": misses, "run": greedy.run_of(problem, hits)}
            for policy, hits, misses in greedy_runs
        ]
    cert["witness"] = {
        "cache_of": list(problem.cache_of),
        "hit_blocks": list(hit_blocks),
        "dropped": canonical_schedule(problem.chains, problem.cache_of, hit_blocks),
    }
    cert["created_by"] = {"tool": "pyverify certify", "version": __version__}
    return Certified(cert, solved, confirmation, time.perf_counter() - started)


def dumps(cert: dict[str, Any]) -> str:
    """Indented JSON, with every list of plain numbers on one line (witness rows stay readable)."""

    def render(value: Any, indent: str) -> str:
        if isinstance(value, dict) and value:
            inner = indent + "  "
            items = [f"{inner}{json.dumps(key)}: {render(item, inner)}" for key, item in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + indent + "}"
        if isinstance(value, list) and value and any(isinstance(item, (dict, list)) for item in value):
            inner = indent + "  "
            return "[\n" + ",\n".join(inner + render(item, inner) for item in value) + "\n" + indent + "]"
        return json.dumps(value)

    return render(cert, "") + "\n"


def write_certificate(cert: dict[str, Any], target: str | Path, instance_path: str | Path) -> None:
    """Write ``cert`` to ``target`` atomically, only if the trusted checker accepts it."""
    with atomic_path(target) as tmp:
        tmp.write_text(dumps(cert), encoding="utf-8")
        lines: list[str] = []
        if verify(str(tmp), str(instance_path), lines.append) != 0:
            raise UserError(f"{target}: not written: the checker rejected the certificate ({lines[-1]})")
