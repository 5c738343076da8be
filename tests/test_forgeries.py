"""Coordinated forgeries (issue #10, item 7): certificates edited in several consistent places.

Single-field edits are covered by tests/test_check_proofs.py. These edit every
field that would betray the forgery at once, as a careful forger would, and
the checker must still refuse: it recounts the optimum itself (Belady's MIN,
pyverify/trusted/recount.py), recounts LRU for a run labelled 'lru', and lets
no replayed run beat a claimed optimum. Each test fails on the checker before
these fixes (which trusted the CP-SAT and Z3 records and never tied a greedy
run to its label).
"""

from __future__ import annotations

import copy
import json

import pytest

from pyverify.trusted.check import basis_of, claim_statement, verify_quiet

from .conftest import REPO

CERT = REPO / "proofs" / "greedy-gap-30.pooled-c4.json"
INSTANCE = REPO / "instances" / "greedy-gap-30.json"


@pytest.fixture
def cert():
    return json.loads(CERT.read_text())


def greedy_entry(cert, policy):
    return next(g for g in cert["greedy"] if g["policy"] == policy)


def check(tmp_path, cert):
    target = tmp_path / "forged.json"
    target.write_text(json.dumps(cert))
    return verify_quiet(str(target), str(INSTANCE))


def restate(cert):
    """Make the claim and basis match the forged numbers, as a forger would."""
    cm = cert["cache_model"]
    cert["claim"]["statement"] = claim_statement(
        cm["model"], cm["capacity"], cert["status"], cert["objective"], cert["bound"]
    )
    cert["basis"] = basis_of(cm["capacity"], cert["status"])


def test_the_genuine_certificate_verifies(tmp_path, cert):
    status, lines = check(tmp_path, cert)
    assert status == 0 and lines[-1].startswith("VERIFIED OPTIMAL")
    assert any("recounted here: 24 misses" in line for line in lines)
    assert any(line.startswith("relied on: flat relaxation") for line in lines)


def test_7a_lru_run_claimed_optimal_everywhere(tmp_path, cert):
    """Witness replaced by the LRU run; objective, bound, CP-SAT, Z3 and MIN records all set to 40."""
    forged = copy.deepcopy(cert)
    lru = greedy_entry(forged, "lru")
    forged["witness"] = copy.deepcopy(lru["run"])
    assert lru["misses"] == 40
    forged["objective"] = forged["bound"] = 40
    forged["solvers"]["cp-sat"].update(objective=40, bound=40, status="OPTIMAL")
    forged["solvers"]["z3"]["objective"] = 40
    forged["solvers"]["min"].update(objective=40, bound=40)
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1
    assert "MIN" in lines[-1] or "fewer than the claimed optimum" in lines[-1], lines[-1]
    # Even with the recorded MIN count left alone (24), the bound 40 exceeds the recount.
    forged["solvers"]["min"].update(objective=24, bound=24)
    status, lines = check(tmp_path, forged)
    assert status == 1 and lines[-1].startswith("FAILED")


def test_7a_without_the_greedy_runs(tmp_path, cert):
    """The same forgery with the tell-tale greedy runs removed: the recount alone refuses it."""
    forged = copy.deepcopy(cert)
    forged["witness"] = copy.deepcopy(greedy_entry(forged, "lru")["run"])
    del forged["greedy"]
    forged["objective"] = forged["bound"] = 40
    forged["solvers"]["cp-sat"].update(objective=40, bound=40)
    forged["solvers"]["z3"]["objective"] = 40
    del forged["solvers"]["min"]
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "Belady's MIN, recounted here" in lines[-1], lines[-1]


def test_7b_capacity_changed_in_every_place(tmp_path, cert):
    """Capacity 4 -> 5 in the cache model and both solver records, claim text edited: the optimum at 5 is 20."""
    forged = copy.deepcopy(cert)
    forged["cache_model"]["capacity"] = 5
    for name in ("cp-sat", "z3", "min"):
        forged["solvers"][name]["problem"]["capacity"] = 5
    del forged[
        "greedy"
    ]  # the 'lru' run would betray the edit (LRU at 5 differs); a forger drops it
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "exceeds the fewest misses, 20" in lines[-1], lines[-1]
    # With the recorded MIN count also edited to 24, the recount (20) still disagrees.
    forged["solvers"]["min"].update(objective=24, bound=24)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "20" in lines[-1], lines[-1]


def test_7c_greedy_label_tied_to_its_policy(tmp_path, cert):
    """The 'lru' entry holds the optimal 24-miss run: real LRU misses 40 times."""
    forged = copy.deepcopy(cert)
    lru = greedy_entry(forged, "lru")
    lru["run"] = copy.deepcopy(forged["witness"])
    lru["misses"] = forged["objective"]
    status, lines = check(tmp_path, forged)
    assert status == 1 and "labelled 'lru', but LRU misses 40 times" in lines[-1], lines[-1]


def test_other_greedy_labels_are_not_part_of_the_verdict(tmp_path, cert):
    """A label the checker cannot recompute is said to be unchecked; relabelling 'most-frequent' as 'lru' is caught."""
    status, lines = check(tmp_path, cert)
    assert any("'most-frequent'" in line and "label not checked" in line for line in lines)
    forged = copy.deepcopy(cert)
    greedy_entry(forged, "most-frequent")["policy"] = "lru"
    greedy_entry(forged, "lru")["policy"] = "most-frequent"
    status, lines = check(tmp_path, forged)
    assert status == 1 and "labelled 'lru'" in lines[-1]


def test_a_replayed_run_that_beats_the_objective_refutes_optimal(tmp_path, cert):
    """Claim OPTIMAL at 32 with the witness the most-frequent run, while the certificate's own 'lru' slot holds a 24-miss run."""
    forged = copy.deepcopy(cert)
    mf = greedy_entry(forged, "most-frequent")
    witness = forged["witness"]
    forged["witness"] = copy.deepcopy(mf["run"])
    mf["run"], mf["misses"] = witness, 24
    forged["objective"] = forged["bound"] = 32
    forged["solvers"]["cp-sat"].update(objective=32, bound=32)
    forged["solvers"]["z3"]["objective"] = 32
    del forged["solvers"]["min"]
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and lines[-1].startswith("FAILED")


def test_basis_must_say_what_the_verdict_rests_on(tmp_path, cert):
    forged = copy.deepcopy(cert)
    forged["basis"] = forged["basis"][:2]  # drop the flat-relaxation caveat
    status, lines = check(tmp_path, forged)
    assert status == 1 and "basis" in lines[-1]


def test_feasible_bound_cannot_exceed_the_optimum(tmp_path, cert):
    """A FEASIBLE certificate still may not claim a lower bound above the true optimum."""
    forged = copy.deepcopy(cert)
    forged["status"] = "FEASIBLE"
    forged["solvers"]["cp-sat"]["status"] = "FEASIBLE"
    forged["witness"] = copy.deepcopy(greedy_entry(forged, "lru")["run"])
    forged["objective"] = 40
    forged["bound"] = forged["solvers"]["cp-sat"]["bound"] = 30
    forged["solvers"]["cp-sat"]["objective"] = 40
    forged["solvers"]["z3"].update(objective=40, below_objective="sat")
    del forged["solvers"]["min"]
    restate(forged)
    status, lines = check(tmp_path, forged)
    assert status == 1 and "exceeds the fewest misses, 24" in lines[-1], lines[-1]


@pytest.mark.parametrize(
    "key, index, value, message",
    [
        ("hit_blocks", 3, 1.0, "not a non-negative integer"),
        ("hit_blocks", 0, True, "not a non-negative integer"),
        ("cache_of", 5, -1, "not a non-negative integer"),
        ("dropped", 2, [1, "x"], "other than a non-negative integer"),
        ("dropped", 2, 7, "not a list of block ids"),
    ],
)
def test_run_arrays_are_typed_one_line_exit_2(capsys, tmp_path, cert, key, index, value, message):
    """The run arrays are checked by a plain loop (not jsonschema, too slow on a trace's witness): same contract."""
    from .helpers import assert_one_line_error, run_cli

    cert["witness"][key][index] = value
    target = tmp_path / "typed.json"
    target.write_text(json.dumps(cert))
    status, out, err = run_cli(capsys, "verify", str(target), str(INSTANCE))
    assert_one_line_error(status, out, err, str(target), message)
    assert f"witness.{key}[{index}]" in err


# --- solver records of runs that never happened (issue 20) ----------------------------------
#
# The checker runs no solver, so a record of a CP-SAT or Z3 run that never
# happened, consistent with the rest of the file, cannot be told from a real
# one. Such a certificate still verifies when its verdict is true (it rests on
# the witness and the floor or the MIN recount), but nothing may print the
# forged records as facts: every line that shows one says it was reported by
# the certifier and not re-checked, and none is listed as relied on.

LAB = REPO / "proofs" / "lab-512x32x16.pooled.json"
LAB_PER_HOST = REPO / "proofs" / "lab-512x32x16.per-host-16.json"
LAB_INSTANCE = REPO / "instances" / "lab-512x32x16.json"
NEVER = "0.0-never-ran"


def invented_cpsat(cert):
    """A CP-SAT record agreeing with the certificate's numbers, of a run that never happened."""
    cm = cert["cache_model"]
    return {
        "name": "OR-Tools CP-SAT",
        "version": NEVER,
        "problem": {
            "instance_sha256": cert["instance"]["sha256"],
            "model": cm["model"],
            "capacity": cm["capacity"],
        },
        "status": "OPTIMAL",
        "objective": cert["objective"],
        "bound": cert["objective"],
        "wall_time_s": 4242.0,
        "parameters": {"num_workers": 64},
    }


def invented_z3(cert):
    record = invented_cpsat(cert)
    return {
        "name": "Z3",
        "version": NEVER,
        "problem": record["problem"],
        "objective": cert["objective"],
        "at_objective": "sat",
        "below_objective": "unsat",
        "wall_time_s": 4242.0,
    }


def forge_lab_versions(cert):
    for record in cert["solvers"].values():
        record.update(version=NEVER, wall_time_s=4242.0)


def forge_lab_records_outright(cert):
    cert["solvers"] = {"cp-sat": invented_cpsat(cert), "z3": invented_z3(cert)}


def forge_min_only_with_solvers_added(cert):
    """The capacitated certificate as the MIN route would write it, then CP-SAT and Z3 records added."""
    cert["solvers"]["cp-sat"], cert["solvers"]["z3"] = invented_cpsat(cert), invented_z3(cert)
    cert["solvers"]["min"]["version"] = NEVER


def forge_capacitated_cpsat_only(cert):
    cert["solvers"]["cp-sat"] = invented_cpsat(cert)
    cert["solvers"]["z3"] = invented_z3(cert)
    del cert["solvers"]["min"]


FORGED_RECORDS = [
    ("lab pooled: versions and times", LAB, LAB_INSTANCE, forge_lab_versions),
    ("lab per-host: versions and times", LAB_PER_HOST, LAB_INSTANCE, forge_lab_versions),
    ("lab pooled: both records invented", LAB, LAB_INSTANCE, forge_lab_records_outright),
    (
        "capacitated: MIN record kept, solvers invented",
        CERT,
        INSTANCE,
        forge_min_only_with_solvers_added,
    ),
    (
        "capacitated: MIN record dropped, solvers invented",
        CERT,
        INSTANCE,
        forge_capacitated_cpsat_only,
    ),
]


def forged_file(tmp_path, source, forge):
    cert = json.loads(source.read_text())
    forge(cert)
    restate(cert)
    target = tmp_path / "forged-records.json"
    target.write_text(json.dumps(cert))
    return target


def assert_never_stated_as_fact(lines):
    from pyverify.trusted.check import NOT_RECHECKED

    shown = [line for line in lines if NEVER in line or "4242" in line]
    assert shown, "the forged records are not listed at all"
    for line in shown:
        assert NOT_RECHECKED in line and "relied on:" not in line.replace("not relied on:", ""), (
            line
        )


@pytest.mark.parametrize(
    "what, source, instance, forge", FORGED_RECORDS, ids=[f[0] for f in FORGED_RECORDS]
)
def test_forged_solver_records_are_never_printed_as_facts(
    tmp_path, capsys, what, source, instance, forge
):
    """`pyverify verify` (the command) and the bridge's report on each forgery."""
    from pyverify.cli import main
    from pyverify.lean.bridge import link_certificate, load_registry, BridgeReport
    from pyverify.reports.markdown import bridge_markdown

    target = forged_file(tmp_path, source, forge)
    assert main(["verify", str(target), str(instance)]) == 0  # the verdict itself is true
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].startswith("VERIFIED OPTIMAL")
    assert not any(
        line.startswith("relied on:") and ("CP-SAT" in line or "Z3" in line) for line in printed
    )
    assert_never_stated_as_fact(printed)

    entry = link_certificate(target, instance, load_registry(REPO / "lean" / "theorems.json"))
    report = bridge_markdown(BridgeReport("theorems.json", [entry])).splitlines()
    assert_never_stated_as_fact(report)
    fact = entry.instance_fact()
    assert (
        "solvers" not in fact
        and fact["solver_records"]["checked"] == "reported by the certifier, not re-checked"
    )
    assert_never_stated_as_fact(fact["solver_records"]["lines"])


# --- the instance's identity: its content ----------------------------------------------------------
# Certificates now name their instance by a content digest (pyverify.content/1), so that the same trace in
# another format verifies. A forger who changes the content and recomputes the old canonical-JSON hash
# (instance.sha256), as a careful forger of an old certificate would, must still be refused.


@pytest.fixture(scope="module")
def content_certificate(tmp_path_factory):
    from pyverify.certify.certificate import certify
    from pyverify.inputs.model import load_instance

    folder = tmp_path_factory.mktemp("content")
    done = certify(
        load_instance(INSTANCE),
        "pooled",
        4,
        time_limit=60,
        use_z3=False,
        instance_path=str(INSTANCE),
    )
    return done.certificate, folder


def forged_instance(folder, change):
    data = json.loads(INSTANCE.read_text())
    change(data)
    path = folder / "greedy-gap-30.json"  # the same name: only the content differs
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["requests"][0].update(output_tokens=1),  # content the replay never reads
        lambda d: d["requests"][3].update(arrival_ms=12),
        lambda d: d.update(hosts=d["hosts"] + 1),
        lambda d: d["requests"].append(dict(d["requests"][0])),
    ],
    ids=["output-tokens", "arrival", "fleet", "one-more-request"],
)
def test_changed_content_with_the_old_hash_recomputed_is_refused(
    tmp_path, content_certificate, change
):
    from pyverify.inputs.model import instance_sha256, load_instance

    genuine, folder = content_certificate
    assert verify_quiet(write(tmp_path / "genuine.json", genuine), str(INSTANCE))[0] == 0
    instance = forged_instance(tmp_path, change)
    forged = copy.deepcopy(genuine)
    forged["instance"]["sha256"] = instance_sha256(
        load_instance(instance)
    )  # the old-style hash, recomputed
    status, lines = verify_quiet(write(tmp_path / "forged.json", forged), str(instance))
    assert (
        status == 1
        and lines[-1].startswith("FAILED: instance.content_sha256")
        and "another instance" in lines[-1]
    )
    # Dropping the content digest (posing as an old certificate) leaves the solver records naming the content.
    del forged["instance"]["content_sha256"]
    status, lines = verify_quiet(write(tmp_path / "forged.json", forged), str(instance))
    assert status == 1 and lines[-1].startswith("FAILED: solvers.")


def write(path, cert) -> str:
    path.write_text(json.dumps(cert))
    return str(path)
