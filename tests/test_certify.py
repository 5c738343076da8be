"""certify: the lab numbers, speed, honest statuses, atomic output, and CP-SAT against Z3.

CP-SAT encodes the reduced interval form of the placement model and Z3 the
residency rules literally (pyverify/certify/placement.py); on random small
instances their optima must agree, and each optimum must be certified and
accepted by the trusted checker.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.certify import cpsat, greedy, z3check
from pyverify.certify.certificate import certify, write_certificate
from pyverify.certify.placement import Problem, problem_from_instance
from pyverify.trusted.check import replay, verify_quiet
from pyverify.cli import main
from pyverify.errors import UserError
from pyverify.inputs.model import Instance, load_instance
from pyverify.sim.simulate import per_host_misses, pooled_misses

from .conftest import LAB_INSTANCE, REPO
from .strategies import routed_instances


@pytest.fixture(scope="module")
def lab():
    return load_instance(LAB_INSTANCE)


@pytest.mark.parametrize("model, expected", [("pooled", 32), ("per-host", 338)])
def test_lab_certified_fast(lab, model, expected):
    started = time.perf_counter()
    done = certify(lab, model, None, time_limit=60, instance_path=str(LAB_INSTANCE))
    elapsed = time.perf_counter() - started
    cert = done.certificate
    assert (cert["status"], cert["objective"], cert["bound"], cert["floor"]) == (
        "OPTIMAL",
        expected,
        expected,
        expected,
    )
    assert cert["solvers"]["cp-sat"]["status"] == "OPTIMAL"
    assert (cert["solvers"]["z3"]["at_objective"], cert["solvers"]["z3"]["below_objective"]) == (
        "sat",
        "unsat",
    )
    assert done.cpsat.wall_time_s < 10 and done.z3.wall_time_s < 10 and elapsed < 20


def test_certify_command_summary_and_file(capsys, tmp_path):
    out_path = tmp_path / "sub" / "lab.json"
    status = main(["certify", str(LAB_INSTANCE), "--model", "pooled", "-o", str(out_path)])
    out = capsys.readouterr().out
    assert status == 0
    assert (
        "status        OPTIMAL" in out and "misses        32" in out and "bound         32" in out
    )
    assert "Z3            confirmed" in out
    assert verify_quiet(str(out_path), str(LAB_INSTANCE))[0] == 0


def test_certify_json(capsys):
    status = main(
        [
            "certify",
            str(REPO / "instances" / "greedy-gap-30.json"),
            "--model",
            "pooled",
            "--capacity",
            "4",
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert status == 0
    assert (summary["status"], summary["objective"], summary["bound"]) == ("OPTIMAL", 24, 24)
    assert {g["policy"]: g["misses"] for g in summary["greedy"]} == {"lru": 40, "most-frequent": 32}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "pooled", "--capacity", "0"], "expected a positive integer"),
        (["--model", "everywhere"], "invalid choice"),
        (["--model", "pooled", "--time-limit", "-1"], "positive number of seconds"),
        (["--model", "pooled", "--greedy", "random"], "unknown greedy policy 'random'"),
    ],
)
def test_certify_bad_flags(capsys, argv, message):
    try:
        status = main(["certify", str(LAB_INSTANCE), *argv])
    except SystemExit as exit_:
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.count("\n") == 1


def test_certify_malformed_instance_leaves_no_file(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": "pyverify.instance/1", "name": "x", "hosts": 1, "requests": [{"blocks": []}]}'
    )
    out = tmp_path / "cert.json"
    status = main(["certify", str(bad), "--model", "pooled", "-o", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and "requests[0].blocks" in err
    assert list(tmp_path.iterdir()) == [bad]


def test_per_host_needs_routing(capsys, tmp_path):
    path = tmp_path / "i.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "x",
                "hosts": 2,
                "requests": [{"blocks": [1]}],
            }
        )
    )
    status = main(["certify", str(path), "--model", "per-host"])
    assert status == 2 and "gives none" in capsys.readouterr().err


def test_rejected_certificate_is_not_written(tmp_path):
    instance = Instance(name="t", fleet_size=1, chains=((1,), (1,), (2,)), routing=(0, 0, 0))
    instance_path = tmp_path / "t.json"
    instance_path.write_text(json.dumps(instance.to_json()))
    cert = certify(instance, "pooled", None, instance_path=str(instance_path)).certificate
    cert["witness"]["hit_blocks"][0] = 1  # a hit on an empty cache
    target = tmp_path / "c.json"
    with pytest.raises(UserError, match="not written"):
        write_certificate(cert, target, instance_path)
    assert not target.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def capacitated_hard_problem() -> Problem:
    chains = tuple(((t * 7919) % 23,) for t in range(400))
    return Problem("pooled", chains, (0,) * len(chains), 5)


def test_time_limit_never_yields_optimal(tmp_path):
    """A solver stopped by its time limit reports FEASIBLE/UNKNOWN, and so does the certificate."""
    result = cpsat.solve(capacitated_hard_problem(), time_limit=0.001, workers=1)
    assert result.status in ("FEASIBLE", "UNKNOWN")
    chains = capacitated_hard_problem().chains
    instance = Instance(name="hard", fleet_size=1, chains=chains, routing=(0,) * len(chains))
    path = tmp_path / "hard.json"
    path.write_text(json.dumps(instance.to_json()))
    done = certify(instance, "pooled", 5, time_limit=0.001, use_z3=False, instance_path=str(path))
    cert = done.certificate
    assert (
        cert["status"] == "FEASIBLE" and "optimality not established" in cert["claim"]["statement"]
    )
    target = tmp_path / "c.json"
    write_certificate(cert, target, path)
    status, lines = verify_quiet(str(target), str(path))
    assert status == 0 and lines[-1].startswith("VERIFIED as FEASIBLE only")
    assert not any("OPTIMAL on this instance" in line for line in lines)
    # Relabelling it OPTIMAL (with a matching statement) is refused: the records (CP-SAT stopped) do not support it.
    from pyverify.trusted.check import claim_statement

    cert["status"] = "OPTIMAL"
    cert["claim"]["statement"] = claim_statement(
        "pooled", 5, "OPTIMAL", cert["objective"], cert["bound"]
    )
    target.write_text(json.dumps(cert))
    status, lines = verify_quiet(str(target), str(path))
    assert status == 1 and "the records support FEASIBLE" in lines[-1]


# --- random small instances: two encodings, one answer ------------------------------------


def problems():
    @st.composite
    def draw(draw_):
        chains, hosts, routing = draw_(routed_instances(max_hosts=3))
        chains = chains[:14]
        routing = routing[: len(chains)]
        model = draw_(st.sampled_from(["pooled", "per-host"]))
        capacity = draw_(st.one_of(st.none(), st.integers(1, 4)))
        cache_of = tuple(routing) if model == "per-host" else (0,) * len(chains)
        return Problem(model, tuple(map(tuple, chains)), cache_of, capacity)

    return draw()


@settings(max_examples=40, deadline=None)
@given(problems())
def test_cpsat_and_z3_agree_and_the_checker_accepts(problem):
    solved = cpsat.solve(problem, workers=1)
    assert solved.status == "OPTIMAL" and solved.objective == solved.bound
    assert z3check.optimum(problem) == solved.objective
    confirmation = z3check.confirm(problem, solved.objective)
    assert (confirmation.at_objective, confirmation.below_objective) == ("sat", "unsat")
    floor = problem.floor()
    assert solved.objective >= floor
    if problem.capacity is None:
        # Uncapacitated: the optimum is the compulsory floor, and the simulator's keep-everything run attains it.
        expected = (
            pooled_misses(problem.chains)
            if problem.model == "pooled"
            else per_host_misses(problem.chains, problem.cache_of)
        )
        assert solved.objective == floor == expected
    # Both solvers' runs replay under the trusted checker's rules with the reported misses.
    from pyverify.certify.placement import canonical_schedule

    witness = {
        "cache_of": list(problem.cache_of),
        "hit_blocks": list(solved.hit_blocks),
        "dropped": canonical_schedule(problem.chains, problem.cache_of, solved.hit_blocks),
    }
    assert (
        replay(problem.chains, problem.cache_of, problem.capacity, witness, "w") == solved.objective
    )
    assert (
        replay(problem.chains, problem.cache_of, problem.capacity, confirmation.witness, "z3")
        <= solved.objective
    )
    # Greedy runs are legal runs, so never below the optimum.
    for policy in greedy.POLICIES.values():
        hits = policy(problem)
        assert replay(
            problem.chains, problem.cache_of, problem.capacity, greedy.run_of(problem, hits), "g"
        ) == problem.references - sum(hits)
        assert problem.references - sum(hits) >= solved.objective


def test_problem_from_instance_pooled_ignores_routing():
    instance = Instance(name="t", fleet_size=2, chains=((1,), (1,)), routing=(0, 1))
    assert problem_from_instance(instance, "pooled", None).cache_of == (0, 0)
    assert problem_from_instance(instance, "per-host", None).cache_of == (0, 1)
    assert problem_from_instance(instance, "per-host", None).floor() == 2


# --- --time-limit counts the whole search, from the command's start ------------------------


def test_time_spent_before_the_search_counts_against_the_limit(lab):
    from pyverify.certify.certificate import Stopped

    with pytest.raises(
        Stopped, match="time-limit 5 s ran out"
    ):  # a trace (above the solver limit): no witness in time
        certify(
            lab, "pooled", 64, time_limit=5, started=time.perf_counter() - 6, solver_limit=0
        )  # reading took 6 s of 5
    small = certify(lab, "pooled", 64, time_limit=5, started=time.perf_counter() - 6, use_z3=False)
    assert (
        small.certificate["status"] != "OPTIMAL"
    )  # a small instance keeps its greedy fallback witness, never OPTIMAL


def test_greedy_runs_that_would_not_fit_are_skipped_on_a_trace(lab, monkeypatch):
    from pyverify.certify import certificate

    real = certificate.min_run

    def slow_min(*args, **kwargs):
        run = real(*args, **kwargs)
        time.sleep(
            1.2
        )  # MIN "took" at least 1.2 s, so at most 0.8 s of the 2 s limit is left: less than MIN took
        return run

    monkeypatch.setattr(certificate, "min_run", slow_min)
    done = certify(lab, "pooled", 64, time_limit=2, solver_limit=0)
    assert done.skipped == ("lru", "most-frequent") and "greedy" not in done.certificate
    assert done.certificate["status"] == "OPTIMAL"  # the witness is MIN's, whatever was skipped
    unhurried = certify(lab, "pooled", 64, time_limit=600, solver_limit=0)
    assert unhurried.skipped == () and [g["policy"] for g in unhurried.certificate["greedy"]] == [
        "lru",
        "most-frequent",
    ]
    assert unhurried.certificate["objective"] == done.certificate["objective"]


def test_certify_prints_where_the_time_went(capsys, tmp_path):
    status = main(
        [
            "certify",
            str(LAB_INSTANCE),
            "--model",
            "pooled",
            "--capacity",
            "64",
            "-o",
            str(tmp_path / "c.json"),
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert status == 0 and summary["greedy_skipped"] == []
    assert (
        0 < summary["check_time_s"] <= summary["total_time_s"]
        and summary["wall_time_s"] <= summary["total_time_s"]
    )


def test_every_cpsat_solve_sets_the_inclusion_presolve_workaround(monkeypatch):
    """OR-Tools 9.15 (pinned) can report a wrong OPTIMAL after its inclusion presolve
    (google/or-tools#5293): every solve switches that step off, and the certificate says so."""
    solvers = []
    real = cpsat.cp_model.CpSolver

    def recording_solver():
        solvers.append(real())
        return solvers[-1]

    monkeypatch.setattr(cpsat.cp_model, "CpSolver", recording_solver)
    instance = Instance(name="tiny", fleet_size=1, chains=((1, 2), (3,), (1, 2), (3,)))
    cert = certify(instance, "pooled", 1, time_limit=30).certificate
    assert solvers
    assert all(solver.parameters.presolve_inclusion_work_limit == 0 for solver in solvers)
    assert cert["solvers"]["cp-sat"]["parameters"]["presolve_inclusion_work_limit"] == 0
