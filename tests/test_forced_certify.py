"""``certify --admission forced`` and the checker's forced-admission rules (issue 21).

The checker replays a forced witness by rules 1-5 (rule 5: a request's first
min(k, C) blocks are held when it ends) and recounts the forced optimum with
its own code (pyverify/trusted/recount.py). Coordinated forgeries -- every
field that would betray them edited to agree -- must still be refused.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.certify.certificate import certify, dumps
from pyverify.certify.placement import Problem, canonical_forced_schedule
from pyverify.errors import UserError
from pyverify.inputs.load import load_input
from pyverify.optimal.belady import min_misses
from pyverify.optimal.forced import forced_misses, forced_run
from pyverify.trusted import recount
from pyverify.trusted.check import CheckFailed, basis_of, claim_statement, replay, verify_quiet

from .conftest import REPO
from .strategies import prefix_closed_chains
from .test_forced_min import exhaustive_forced_fleet

INSTANCE = REPO / "instances" / "greedy-gap-30.json"


def write(tmp_path, cert, name="cert.json"):
    target = tmp_path / name
    target.write_text(dumps(cert))
    return target


def check(tmp_path, cert, instance=INSTANCE):
    return verify_quiet(str(write(tmp_path, cert, "forged.json")), str(instance))


def restate(cert):
    """Make the claim and basis agree with the (forged) numbers and model, as a careful forger would."""
    cm = cert["cache_model"]
    admission = cm.get("admission", "bypass")
    cert["claim"]["statement"] = claim_statement(
        cm["model"],
        cm["capacity"],
        cert["status"],
        cert["objective"],
        cert["bound"],
        cm["routing"],
        cm.get("hosts"),
        admission,
    )
    cert["basis"] = basis_of(cm["capacity"], cert["status"], admission)


@pytest.fixture(scope="module")
def instance():
    return load_input(str(INSTANCE))


@pytest.fixture(scope="module")
def forced_small(instance):
    """CP-SAT and Z3 with the forced constraint (small route)."""
    return certify(
        instance,
        "pooled",
        3,
        time_limit=120,
        workers=1,
        instance_path=str(INSTANCE),
        admission="forced",
    ).certificate


@pytest.fixture(scope="module")
def forced_large(instance):
    """The forced rule's run as the witness (the trace-scale route), forced by a solver limit of 0."""
    return certify(
        instance,
        "pooled",
        3,
        time_limit=120,
        instance_path=str(INSTANCE),
        admission="forced",
        solver_limit=0,
    ).certificate


@pytest.fixture(scope="module")
def bypass_large(instance):
    return certify(
        instance,
        "pooled",
        3,
        time_limit=120,
        instance_path=str(INSTANCE),
        solver_limit=0,
        greedy_policies=[],
    ).certificate


def test_forced_certificates_verify_on_both_routes(tmp_path, instance, forced_small, forced_large):
    expected = forced_misses(instance.chains, None, 3)
    assert expected == 32 > min_misses(instance.chains, None, 3) == 28
    for cert in (forced_small, forced_large):
        assert cert["cache_model"]["admission"] == "forced"
        assert cert["status"] == "OPTIMAL" and cert["objective"] == cert["bound"] == expected
        assert cert["solvers"]["min"]["problem"]["admission"] == "forced"
        assert "greedy" not in cert
        status, lines = check(tmp_path, cert)
        assert status == 0, lines[-1]
        assert lines[-1].startswith(
            "VERIFIED OPTIMAL on this instance only, for caches that admit every block they fetch and keep"
        )
        assert any("not proved in Lean" in line for line in lines)
    assert forced_small["solvers"]["cp-sat"]["problem"]["admission"] == "forced"
    assert forced_small["solvers"]["z3"]["below_objective"] == "unsat"


def test_bypass_certificates_are_unchanged(bypass_large):
    assert "admission" not in bypass_large["cache_model"]
    assert "admission" not in bypass_large["solvers"]["min"]["problem"]
    assert "forced" not in bypass_large["claim"]["statement"]


def test_forced_needs_a_capacity_and_no_greedy(instance):
    with pytest.raises(UserError, match="needs --capacity"):
        certify(instance, "pooled", None, admission="forced")
    with pytest.raises(UserError, match="--greedy"):
        certify(instance, "pooled", 3, admission="forced", greedy_policies=["lru"])


def test_forgery_bypass_witness_claimed_forced(tmp_path, bypass_large):
    """The bypass optimum's run (28 misses) relabelled forced everywhere: it discards blocks it fetched."""
    forged = copy.deepcopy(bypass_large)
    forged["cache_model"]["admission"] = "forced"
    forged["solvers"]["min"]["problem"]["admission"] = "forced"
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1
    assert "forced admission holds every block" in lines[-1], lines[-1]


def test_forgery_lower_count_with_a_consistent_witness(tmp_path, forced_large, bypass_large):
    """Claim fewer misses than the forced optimum, with a witness that replays to exactly that count under rules 1-4."""
    forged = copy.deepcopy(forced_large)
    chains = load_input(str(INSTANCE)).chains
    target = forced_large["objective"] - 1
    # A consistent-looking witness: the bypass optimum's run (28 misses), a legal run by rules 1-4.
    witness = copy.deepcopy(bypass_large["witness"])
    assert replay(chains, [0] * len(chains), 3, witness, "w") < target
    forged["witness"] = witness
    forged["objective"] = forged["bound"] = replay(chains, [0] * len(chains), 3, witness, "w")
    forged["solvers"]["min"].update(objective=forged["objective"], bound=forged["objective"])
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "forced admission holds every block" in lines[-1], lines[-1]
    # The genuine witness with a lower objective: the replay refuses the number.
    forged = copy.deepcopy(forced_large)
    forged["objective"] = forged["bound"] = target
    forged["solvers"]["min"].update(objective=target, bound=target)
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "replays to 32 misses" in lines[-1], lines[-1]


def test_forgery_forced_certificate_relabelled_bypass(tmp_path, forced_large):
    """Admission removed everywhere: then the recount is bypass MIN (28), and 32 is not optimal."""
    forged = copy.deepcopy(forced_large)
    del forged["cache_model"]["admission"]
    del forged["solvers"]["min"]["problem"]["admission"]
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and lines[-1].startswith("FAILED"), lines[-1]


def test_forgery_bypass_solver_record_in_a_forced_certificate(tmp_path, forced_large):
    forged = copy.deepcopy(forced_large)
    del forged["solvers"]["min"]["problem"]["admission"]
    status, lines = check(tmp_path, forged)
    assert status == 1 and "is not this certificate's problem" in lines[-1], lines[-1]


@pytest.fixture(scope="module")
def per_host(instance):
    return certify(
        instance,
        "per-host",
        2,
        time_limit=120,
        instance_path=str(INSTANCE),
        admission="forced",
        solver_limit=0,
        routing="round-robin",
        hosts=3,
    ).certificate


def test_forgery_per_host_hosts_swapped(tmp_path, instance, per_host):
    status, lines = check(tmp_path, per_host)
    assert status == 0, lines[-1]
    # Hosts 0 and 1 swapped in the witness, and the witness rebuilt as the forced optimum of the swapped routing.
    swapped = [{0: 1, 1: 0}.get(t % 3, t % 3) for t in range(instance.n_requests)]
    run = forced_run(instance.chains, swapped, 2)
    forged = copy.deepcopy(per_host)
    forged["witness"] = run.as_witness()
    forged["objective"] = forged["bound"] = run.misses
    forged["solvers"]["min"].update(objective=run.misses, bound=run.misses)
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "reads cache" in lines[-1], lines[-1]


def test_forgery_bypass_greedy_run_in_a_forced_certificate(
    tmp_path, forced_large, bypass_large, instance
):
    """A greedy run that bypasses, added to a forced certificate: replayed by rule 5, it is refused."""
    full = certify(
        instance, "pooled", 3, time_limit=120, instance_path=str(INSTANCE), solver_limit=0
    ).certificate
    forged = copy.deepcopy(forced_large)
    forged["greedy"] = [g for g in full["greedy"] if g["policy"] == "most-frequent"]
    status, lines = check(tmp_path, forged)
    assert status == 1 and "forced admission holds every block" in lines[-1], lines[-1]


@settings(max_examples=200, deadline=None)
@given(
    prefix_closed_chains(max_nodes=6, max_requests=8),
    st.integers(1, 3),
    st.integers(1, 2),
    st.data(),
)
def test_recount_is_the_optimum_and_the_canonical_schedule_replays(chains, capacity, hosts, data):
    """The checker's own count equals exhaustive search; CP-SAT-style hits give a forced run by rules 1-5."""
    routing = data.draw(
        st.lists(st.integers(0, hosts - 1), min_size=len(chains), max_size=len(chains))
    )
    optimum = exhaustive_forced_fleet(chains, routing, capacity)
    assert (
        recount.forced_misses(chains, routing, capacity)
        == optimum
        == forced_misses(chains, routing, capacity)
    )
    run = forced_run(chains, routing, capacity)
    assert replay(chains, routing, capacity, run.as_witness(), "witness", forced=True) == optimum
    canonical = canonical_forced_schedule(chains, routing, run.hit_blocks, capacity)
    witness = {"cache_of": list(routing), "hit_blocks": list(run.hit_blocks), "dropped": canonical}
    assert replay(chains, routing, capacity, witness, "canonical", forced=True) == optimum


def test_cpsat_and_z3_with_forced_admission_agree_with_the_rule():
    from pyverify.certify import cpsat, z3check

    cases = [
        ([[3], [2], [3]], 1),
        ([[9], [1, 2], [9]], 2),
        ([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]], 2),
        ([[0], [2], [0, 1], [2]], 2),
    ]
    for chains, capacity in cases:
        problem = Problem(
            "pooled", tuple(map(tuple, chains)), (0,) * len(chains), capacity, "forced"
        )
        solved = cpsat.solve(problem, workers=1)
        assert solved.status == "OPTIMAL"
        assert solved.objective == z3check.optimum(problem) == forced_misses(chains, None, capacity)


def test_replay_refuses_a_dropped_hit_under_forced_admission():
    chains = [[1, 2], [1, 3]]
    witness = {"cache_of": [0, 0], "hit_blocks": [0, 1], "dropped": [[], [1]]}
    assert replay(chains, [0, 0], 2, witness, "w") == 3  # legal with bypass
    with pytest.raises(CheckFailed, match="block 1, which request 1 hit"):
        replay(chains, [0, 0], 2, witness, "w", forced=True)


def test_cli_certify_forced_json(tmp_path, capsys):
    from pyverify.cli import main

    out = tmp_path / "forced.json"
    code = main(
        [
            "certify",
            str(INSTANCE),
            "--model",
            "pooled",
            "--capacity",
            "3",
            "--admission",
            "forced",
            "--no-z3",
            "-o",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["admission"] == "forced" and summary["objective"] == 32
    assert json.loads(out.read_text())["cache_model"]["admission"] == "forced"
