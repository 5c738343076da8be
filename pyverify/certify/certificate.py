"""Assemble a ``pyverify.certificate/1`` from the searchers' results, and write it.

Two routes, chosen by size (:data:`SOLVER_LIMIT` block references):

* **small instances** -- the greedy policies (capacitated models), CP-SAT
  (seeded with the best greedy run), and Z3's two questions at CP-SAT's
  objective; plus Belady's MIN count as a record. ``OPTIMAL`` only when
  CP-SAT proved optimality *and* Z3 answered sat at the objective and unsat
  one below (and, uncapacitated, the bound is the compulsory floor);
  otherwise ``FEASIBLE`` with the best bound CP-SAT proved.
* **large instances** -- no solver model is built (Z3's literal model alone
  has a variable per cache, step and held block). The witness is Belady's MIN
  run on the flat sequence (:mod:`pyverify.optimal.belady`), optimal by
  Belady's theorem and the flat relaxation (docs/min-flat-relaxation.md);
  uncapacitated, it keeps every live block and meets the compulsory floor.

Either way the trusted checker recounts MIN itself and accepts ``OPTIMAL``
only when the witness's misses equal its own count. ``time_limit`` bounds the
whole call, model building included: the solvers get what remains, and a
call that runs out before it has a witness raises :class:`Stopped` (no
certificate, never OPTIMAL).

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
from pyverify.certify import greedy
from pyverify.certify.placement import (
    Problem,
    canonical_forced_schedule,
    canonical_schedule,
    problem_from_instance,
)
from pyverify.optimal.belady import min_run
from pyverify.optimal.forced import ADMISSIONS, BYPASS, FORCED, forced_run
from pyverify.trusted.check import CERTIFICATE_FORMAT, basis_of, claim_statement, verify
from pyverify.errors import UserError
from pyverify.inputs.model import Instance, instance_sha256
from pyverify.inputs.columnar.digest import content_sha256

#: Above this many block references, certify uses MIN (no solver model). CP-SAT and
#: Z3 prove the lab instances (512 references) in seconds; Z3's literal model grows
#: with references x blocks held, and on a slice of the Mooncake trace it took 7 s at
#: 812 references and 36 s at 1,973 (capacity 256): 1,000 keeps it well inside a minute.
from pyverify.certify import SOLVER_LIMIT  # noqa: E402,F401 (re-exported)

#: The searchers' names as a certificate carries them. Committed certificates and the golden outputs
#: hold these words, so they keep the modules' former paths (now pyverify.optimal.belady and
#: pyverify.optimal.forced), as the checker's basis texts do.
MIN_NAME = "Belady MIN, bypass form, on each cache's flat block sequence (pyverify.sim.belady_min)"
FORCED_NAME = "Belady's rule, forced admission with the running request pinned, per cache (pyverify.sim.forced_min)"


class Stopped(UserError):
    """The time limit ran out before a witness existed: no certificate (status UNKNOWN)."""


@dataclass
class Certified:
    certificate: dict[str, Any]
    cpsat: Any  # cpsat.CpSatResult, or None on the MIN route
    z3: Any  # z3check.Z3Confirmation, or None
    wall_time_s: float  # from ``started`` (the command's start) to the certificate built
    skipped: tuple[str, ...] = ()  # greedy policies not run: too little of the time limit was left


def certify(
    instance: Instance,
    model: str,
    capacity: int | None = None,
    time_limit: float | None = 60.0,
    greedy_policies: list[str] | None = None,
    use_z3: bool = True,
    instance_path: str | None = None,
    workers: int = 2,
    routing: str = "given",
    hosts: int | None = None,
    solver_limit: int = SOLVER_LIMIT,
    admission: str = BYPASS,
    read_with: dict[str, Any] | None = None,
    started: float | None = None,
) -> Certified:
    """Certify the fewest misses; ``routing="round-robin"`` with ``hosts`` routes request t to host t mod hosts.

    ``admission="forced"``: caches that admit every block they fetch (rule 5 of
    :mod:`.placement`); needs a capacity; no greedy runs (the greedy policies
    here may bypass); the witness is the forced rule's run
    (:mod:`pyverify.optimal.forced`) or, on small instances, CP-SAT's with the
    forced constraint, confirmed by Z3 on its literal forced encoding.

    ``read_with``: the reading flags the instance was read with
    (:func:`pyverify.inputs.records.reading_record`), recorded so that the
    checker reads the input the same way.

    ``started``: the ``time.perf_counter()`` the time limit counts from (the
    command's start, so reading the input counts; default: now). On a trace
    above the solver limit, MIN (the witness) runs first; a greedy run starts
    only while more time is left than MIN took, else it is skipped and named
    in :attr:`Certified.skipped`.
    """
    started = time.perf_counter() if started is None else started
    if admission not in ADMISSIONS:
        raise UserError(f"unknown admission {admission!r}; choose from: {', '.join(ADMISSIONS)}")
    forced = admission == FORCED
    if forced and capacity is None:
        raise UserError(
            "--admission forced: needs --capacity (without a limit every block is kept, and forced admission changes nothing)"
        )
    if forced and greedy_policies:
        raise UserError(
            "--greedy: not with --admission forced (the greedy policies recorded here may bypass a block)"
        )

    def remaining() -> float | None:
        return None if time_limit is None else time_limit - (time.perf_counter() - started)

    def deadline() -> None:
        left = remaining()
        if left is not None and left <= 0:
            raise Stopped(
                f"status UNKNOWN: --time-limit {time_limit:g} s ran out after {time.perf_counter() - started:.1f} s, "
                "before a witness was found; no certificate written"
            )

    problem = _problem(instance, model, capacity, instance_path, routing, hosts, admission)
    digest = instance_sha256(
        instance
    )  # of the file's canonical JSON, as certified (names its pyverify.instance/1 form)
    if greedy_policies is None:
        greedy_policies = list(greedy.POLICIES) if capacity is not None and not forced else []
    unknown = [policy for policy in greedy_policies if policy not in greedy.POLICIES]
    if unknown:
        raise UserError(
            f"unknown greedy policy {unknown[0]!r}; choose from: {', '.join(greedy.POLICIES)}"
        )
    small = problem.references <= solver_limit
    if not small:
        deadline()  # reading a trace may have used the time already (a small instance always gets its fallback witness)
    min_started = time.perf_counter()
    searcher = forced_run if forced else min_run
    best = searcher(
        problem.chains, problem.cache_of, capacity, deadline=None if small else deadline
    )
    min_seconds = time.perf_counter() - min_started
    content = content_sha256(
        instance
    )  # the identity verify checks: the same content in any format (after MIN: a witness first)
    problem_record = {
        "content_sha256": content,
        "model": model,
        "capacity": capacity,
        **({"admission": FORCED} if forced else {}),
    }
    min_record = {
        "name": FORCED_NAME if forced else MIN_NAME,
        "version": __version__,
        "problem": problem_record,
        "status": "OPTIMAL",
        "objective": best.misses,
        "bound": best.misses,
        "wall_time_s": round(min_seconds, 3),
    }
    greedy_runs, skipped = [], []
    for policy in greedy_policies:
        # Small instances: greedy runs are CP-SAT's fallback witness, always computed. On a trace they
        # are informational and cannot be cut short, so one starts only if it can likely finish in time
        # (a greedy pass costs about what MIN's did).
        left = remaining()
        if not small and left is not None and left < min_seconds:
            skipped.append(policy)
            continue
        hits = greedy.POLICIES[policy](problem)
        greedy_runs.append((policy, hits, problem.references - sum(hits)))

    solved = confirmation = None
    if small:
        fallback = greedy_runs if not forced else [("forced rule", best.hit_blocks, best.misses)]
        status, objective, bound, witness, records = _solve(
            problem, fallback, remaining, use_z3, workers
        )
        solved, confirmation = records
        if capacity is not None and status == "OPTIMAL" and objective != best.misses:
            what = "the forced rule's" if forced else "MIN's"
            raise AssertionError(
                f"CP-SAT's optimum {objective} differs from {what} {best.misses}: the argument fails here"
            )
        cpsat_record, z3_record = _solver_records(
            solved, confirmation, problem_record, objective, remaining
        )
    else:
        status, objective, bound, witness = "OPTIMAL", best.misses, best.misses, best.as_witness()
        cpsat_record = z3_record = None
    if capacity is None:
        min_record = (
            None  # uncapacitated, the floor is the bound; MIN is recorded only with a capacity
        )

    cache_model = cache_model_record(model, capacity, routing, hosts, forced)
    cert: dict[str, Any] = {
        "format": CERTIFICATE_FORMAT,
        "instance": {
            "name": instance.name,
            "sha256": digest,
            "content_sha256": content,
            **({"path": instance_path} if instance_path else {}),
            **({"read_with": read_with} if read_with else {}),
        },
        "cache_model": cache_model,
        "claim": {
            "statement": claim_statement(
                model, capacity, status, objective, bound, routing, hosts, admission
            ),
            "scope": "this instance",
        },
        "basis": basis_of(capacity, status, admission),
        "status": status,
        "objective": objective,
        "bound": bound,
        "floor": problem.floor(),
        "solvers": {
            "cp-sat": cpsat_record,
            "z3": z3_record,
            **({"min": min_record} if min_record else {}),
        },
    }
    if greedy_runs:
        cert["greedy"] = [
            {
                "policy": policy,
                "description": greedy.DESCRIPTIONS[policy],
                "misses": misses,
                "run": greedy.run_of(problem, hits),
            }
            for policy, hits, misses in greedy_runs
        ]
    cert["witness"] = witness
    cert["created_by"] = {"tool": "pyverify certify", "version": __version__}
    return Certified(cert, solved, confirmation, time.perf_counter() - started, tuple(skipped))


def cache_model_record(
    model: str, capacity: int | None, routing: str, hosts: int | None, forced: bool
) -> dict[str, Any]:
    """The certificate's ``cache_model``: what was optimised (both certificate forms write it the same way)."""
    record: dict[str, Any] = {
        "model": model,
        "capacity": capacity,
        "eviction": "offline-optimal",
        "warm_start": False,
        "routing": routing,
    }
    if forced:
        record["admission"] = FORCED
    if routing == "round-robin":
        record["hosts"] = hosts
    return record


def _problem(
    instance: Instance,
    model: str,
    capacity: int | None,
    instance_path: str | None,
    routing: str,
    hosts: int | None,
    admission: str = BYPASS,
) -> Problem:
    if routing == "given":
        return problem_from_instance(
            instance, model, capacity, instance_path or "<instance>", admission
        )
    if routing != "round-robin" or model != "per-host" or not hosts or hosts < 1:
        raise UserError(
            "--routing: certificates take the instance's given routing, or round-robin with --fleet N (per-host only)"
        )
    pooled = problem_from_instance(instance, "pooled", capacity, instance_path or "<instance>")
    return Problem(
        model,
        pooled.chains,
        tuple(t % hosts for t in range(instance.n_requests)),
        capacity,
        admission,
    )


def _solve(problem: Problem, greedy_runs, remaining, use_z3: bool, workers: int):
    """The small-instance route: CP-SAT, then Z3 at its objective, within what remains of the time limit."""
    from pyverify.certify import (
        cpsat,
        z3check,
    )  # imported only when used: the MIN route needs no solver

    best_greedy = min(greedy_runs, key=lambda run: run[2]) if greedy_runs else None
    left = remaining()
    solved = cpsat.solve(
        problem,
        time_limit=None if left is None else round(max(left, 0.001), 3),
        workers=workers,
        hint=best_greedy[1] if best_greedy else None,
    )
    if solved.hit_blocks is not None:
        hit_blocks, objective = solved.hit_blocks, solved.objective
    elif best_greedy is not None:
        hit_blocks, objective = best_greedy[1], best_greedy[2]
    else:
        raise Stopped(
            f"status UNKNOWN: CP-SAT found no run within the time limit ({solved.status}); raise --time-limit"
        )
    assert objective == problem.references - sum(hit_blocks)
    left = remaining()
    confirmation = (
        z3check.confirm(
            problem, objective, timeout_s=max(left, 0.001) if left is not None else None
        )
        if use_z3
        else None
    )
    optimal = (
        solved.status == "OPTIMAL"
        and solved.objective == objective == solved.bound
        and confirmation is not None
        and confirmation.at_objective == "sat"
        and confirmation.below_objective == "unsat"
        and (problem.capacity is not None or solved.bound == problem.floor())
    )
    if problem.admission == FORCED:
        dropped = canonical_forced_schedule(
            problem.chains, problem.cache_of, hit_blocks, problem.capacity
        )
    else:
        dropped = canonical_schedule(problem.chains, problem.cache_of, hit_blocks)
    witness = {
        "cache_of": list(problem.cache_of),
        "hit_blocks": list(hit_blocks),
        "dropped": dropped,
    }
    return (
        "OPTIMAL" if optimal else "FEASIBLE",
        objective,
        solved.bound,
        witness,
        (solved, confirmation),
    )


def _solver_records(solved, confirmation, problem_record, objective, remaining):
    cpsat_record = {
        "name": "OR-Tools CP-SAT",
        "version": solved.version,
        "problem": problem_record,
        "status": solved.status,
        "objective": solved.objective,
        "bound": solved.bound,
        "wall_time_s": round(solved.wall_time_s, 3),
        "parameters": {
            **solved.parameters,
            "variables": solved.variables,
            "constraints": solved.constraints,
        },
    }
    z3_record = (
        None
        if confirmation is None
        else {
            "name": "Z3",
            "version": confirmation.version,
            "problem": problem_record,
            "objective": objective,
            "at_objective": confirmation.at_objective,
            "below_objective": confirmation.below_objective,
            "wall_time_s": round(confirmation.wall_time_s, 3),
            "parameters": {"formulation": "literal residency per cache and step"},
        }
    )
    return cpsat_record, z3_record


def dumps(cert: dict[str, Any]) -> str:
    """Indented JSON, with every list of plain numbers on one line (witness rows stay readable)."""

    def render(value: Any, indent: str) -> str:
        if isinstance(value, dict) and value:
            inner = indent + "  "
            items = [
                f"{inner}{json.dumps(key)}: {render(item, inner)}" for key, item in value.items()
            ]
            return "{\n" + ",\n".join(items) + "\n" + indent + "}"
        if (
            isinstance(value, list)
            and value
            and any(isinstance(item, (dict, list)) for item in value)
        ):
            inner = indent + "  "
            return (
                "[\n"
                + ",\n".join(inner + render(item, inner) for item in value)
                + "\n"
                + indent
                + "]"
            )
        return json.dumps(value)

    return render(cert, "") + "\n"


def write_certificate(
    cert: dict[str, Any],
    target: str | Path,
    instance_path: str | Path,
    instance: Instance | None = None,
) -> Path | None:
    """Write ``cert`` to ``target`` atomically, only if the trusted checker accepts it.

    With ``instance`` (the instance as certify read it), an input the trusted checker does not read
    itself gets its canonical instance written beside the certificate (:func:`canonical_target`),
    atomically with it; returns where (else None)."""
    canonical = (
        None if instance is None else canonical_target(target, instance_path, cert["instance"])
    )
    return write_checked(
        cert,
        target,
        instance_path,
        canonical,
        lambda tmp: tmp.write_text(dumps(cert), encoding="utf-8"),
        lambda: instance.to_json(),
    )


#: The input formats (:mod:`pyverify.inputs.load` keys) the trusted checker reads itself
#: (:mod:`pyverify.trusted.reader`); every other input reaches it as a canonical instance.
DIRECT_FORMATS = ("pyverify-instance", "mooncake-jsonl", "kvcache-simulator-jsonl")


def canonical_target(
    target: str | Path, instance_path: str | Path | None, named: dict[str, Any]
) -> Path | None:
    """Where the canonical instance of a certificate written to ``target`` goes (``C.instance.json``
    for ``C.json``), or None when the trusted checker reads the input itself: a file (not standard
    input) in a format of :data:`DIRECT_FORMATS`, read with no flag but ``OWN_READING_FLAGS``."""
    from pyverify.inputs.detect import read_head
    from pyverify.inputs.load import detect_format
    from pyverify.inputs.stream import is_stdin, open_source
    from pyverify.trusted.check import OWN_READING_FLAGS

    path = Path(target)
    canonical = path.with_name(f"{path.stem if path.suffix else path.name}.instance.json")
    if instance_path is None or is_stdin(str(instance_path)):
        return canonical
    if any(key not in OWN_READING_FLAGS for key in named.get("read_with", {})):
        return canonical
    with open_source(instance_path) as source:
        key = detect_format(read_head(source), source.display).key
    return None if key in DIRECT_FORMATS else canonical


#: How every canonical instance certify writes begins (compact JSON, "format" first): a file of
#: that name that begins otherwise is not one, and is never written over.
CANONICAL_START = b'{"format":"pyverify.instance/1"'


def _is_canonical(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(len(CANONICAL_START)) == CANONICAL_START


def write_checked(
    cert: dict[str, Any],
    target: str | Path,
    instance_path: str | Path,
    canonical: Path | None,
    write,
    instance_json,
    read_already=None,
) -> Path | None:
    """Write the certificate (``write(tmp)``) and, if ``canonical``, the instance
    (``instance_json()``) there, atomically together and only if the trusted checker accepts the
    pair; returns ``canonical``."""
    from pyverify.fileio import atomic_outputs, refuse_inputs
    from pyverify.certify.accelerate import accelerated

    targets = [Path(target)]
    if canonical is not None:
        refuse_inputs(canonical, [str(instance_path)])
        if canonical.exists() and not _is_canonical(canonical):
            raise UserError(
                f"{canonical}: exists and is not a canonical instance certify wrote: "
                "refusing to write over it (certify writes the canonical instance of "
                f"{target} there; move that file or name another -o)"
            )
        cert["instance"]["canonical_file"] = canonical.name
        targets.append(canonical)
    try:
        with atomic_outputs(targets) as temporaries:
            write(temporaries[0])
            at = None
            if canonical is not None:
                at = str(temporaries[1])
                text = json.dumps(instance_json(), separators=(",", ":"), ensure_ascii=False)
                temporaries[1].write_text(text + "\n", encoding="utf-8")
            lines: list[str] = []
            with accelerated():  # numba, if installed: the user's verify runs on NumPy alone
                status = verify(
                    str(temporaries[0]),
                    str(instance_path),
                    lines.append,
                    read_already=read_already,
                    canonical_at=at,
                )
            if status != 0:
                raise UserError(
                    f"{target}: not written: the checker rejected the certificate ({lines[-1]})"
                )
    finally:
        cert["instance"].pop("canonical_file", None)  # the caller's certificate stays as it was
    return canonical
