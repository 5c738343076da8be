"""The committed certificates, re-verified by the trusted checker, and their mutations refused.

Every file in proofs/ must verify against the instance its ``instance.path``
names. Every single-field change of a number, hash, status, solver record or
witness entry must make ``pyverify verify`` fail (exit 1 with a reason, or 2
when the change breaks the schema), tried the way a user would: edit the
file, run the command.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from pyverify.trusted.check import verify_quiet
from pyverify.cli import main

from .conftest import LAB_INSTANCE, REPO

PROOFS = sorted((REPO / "proofs").glob("*.json"))
#: The mutation test re-verifies each certificate ~80 times; a whole-trace certificate (the
#: Mooncake one, 0.8 MB, seconds per verify) is verified once, by test_every_proof_verifies.
MUTATED = [path for path in PROOFS if path.stat().st_size < 200_000]


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def instance_of(cert_path: Path) -> Path:
    return REPO / load(cert_path)["instance"]["path"]


def test_proofs_present():
    names = {path.name for path in PROOFS}
    assert {
        "lab-512x32x16.pooled.json",
        "lab-512x32x16.per-host-16.json",
        "greedy-gap-30.pooled-c4.json",
    } <= names


@pytest.mark.parametrize("cert_path", PROOFS, ids=lambda p: p.name)
def test_every_proof_verifies(cert_path):
    status, lines = verify_quiet(str(cert_path), str(instance_of(cert_path)))
    assert status == 0, lines
    assert lines[-1].startswith("VERIFIED")


def test_lab_numbers_are_the_seed_numbers():
    pooled = load(REPO / "proofs" / "lab-512x32x16.pooled.json")
    per_host = load(REPO / "proofs" / "lab-512x32x16.per-host-16.json")
    # Independent arithmetic on the raw instance file: distinct openings, distinct (host, opening) pairs.
    raw = json.loads(LAB_INSTANCE.read_text())["requests"]
    assert (
        (pooled["status"], pooled["objective"], pooled["bound"])
        == ("OPTIMAL", 32, 32)
        == ("OPTIMAL", len({tuple(r["blocks"]) for r in raw}), 32)
    )
    assert (per_host["status"], per_host["objective"], per_host["bound"]) == ("OPTIMAL", 338, 338)
    assert len({(r["host"], tuple(r["blocks"])) for r in raw}) == 338
    for cert in (pooled, per_host):
        assert (
            cert["solvers"]["z3"]["at_objective"] == "sat"
            and cert["solvers"]["z3"]["below_objective"] == "unsat"
        )
        assert cert["claim"]["scope"] == "this instance"


def test_greedy_gap_certificate_shows_greedy_above_the_optimum():
    cert = load(REPO / "proofs" / "greedy-gap-30.pooled-c4.json")
    assert cert["status"] == "OPTIMAL" and cert["cache_model"]["capacity"] == 4
    assert cert["greedy"] and all(g["misses"] > cert["objective"] for g in cert["greedy"])


# --- mutations -----------------------------------------------------------------------

#: Fields that are labels or measurements, not claims: the checker does not (and cannot) check them.
INFORMATIONAL = {
    ("instance", "path"),
    ("created_by",),
    ("solvers", "cp-sat", "version"),
    ("solvers", "cp-sat", "wall_time_s"),
    ("solvers", "cp-sat", "parameters"),
    ("solvers", "z3", "version"),
    ("solvers", "z3", "wall_time_s"),
    ("solvers", "z3", "parameters"),
    ("solvers", "cp-sat", "name"),
    ("solvers", "z3", "name"),
    ("solvers", "min", "name"),
    ("solvers", "min", "version"),
    ("solvers", "min", "wall_time_s"),
    ("solvers", "min", "parameters"),
}


def informational(path: tuple) -> bool:
    if any(path[: len(prefix)] == prefix for prefix in INFORMATIONAL):
        return True
    # Greedy labels (the runs and their miss counts are checked).
    return len(path) == 3 and path[0] == "greedy" and path[2] in ("policy", "description")


def leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, path + (index,))
    else:
        yield path, value


def mutations_of(value):
    """Plausible single-field edits: off-by-one numbers, flipped strings and statuses."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1] + ([value - 1] if value > 0 else [])
    if value is None:
        return [1]
    if isinstance(value, str):
        swaps = {
            "OPTIMAL": "FEASIBLE",
            "FEASIBLE": "OPTIMAL",
            "sat": "unknown",
            "unsat": "unknown",
            "unknown": "sat",
            "pooled": "per-host",
            "per-host": "pooled",
            "this instance": "all instances",
        }
        if value in swaps:
            return [swaps[value]]
        if len(value) == 64 and all(c in "0123456789abcdef" for c in value):
            return [("1" if value[0] != "1" else "2") + value[1:]]
        return [
            value.replace("no run has fewer", "no run on any instance has fewer")
            if "no run has fewer" in value
            else value + " (edited)"
        ]
    return []


def set_path(data, path, value):
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def sample(items, limit, seed):
    items = list(items)
    if len(items) <= limit:
        return items
    return random.Random(seed).sample(items, limit)


def mutated_certificates(cert_path: Path, witness_samples: int = 25):
    cert = load(cert_path)
    plain, witness = [], []
    for path, value in leaves(cert):
        if informational(path):
            continue
        (witness if path[0] in ("witness", "greedy") else plain).append((path, value))
    # Every non-witness field; a deterministic sample of witness entries, always including the first and last.
    chosen = (
        plain + sample(witness[1:-1], witness_samples, cert_path.name) + [witness[0], witness[-1]]
    )
    for path, value in chosen:
        for new in mutations_of(value):
            edited = copy.deepcopy(cert)
            set_path(edited, path, new)
            yield path, value, new, edited


@pytest.mark.parametrize("cert_path", MUTATED, ids=lambda p: p.name)
def test_every_single_field_mutation_is_refused(cert_path, tmp_path):
    instance = str(instance_of(cert_path))
    target = tmp_path / cert_path.name
    tried = 0
    for path, old, new, edited in mutated_certificates(cert_path):
        target.write_text(json.dumps(edited))
        try:
            status, lines = verify_quiet(str(target), instance)
        except Exception as error:  # a schema violation: a UserError, exit 2 on the command line
            assert type(error).__name__ == "UserError", (path, error)
            tried += 1
            continue
        assert status == 1, f"mutation {'.'.join(map(str, path))}: {old!r} -> {new!r} was accepted"
        assert lines[-1].startswith("FAILED: ")
        tried += 1
    assert tried > 40


def test_dropped_entries_are_checked(tmp_path):
    """Dropping a block that was never there, or one the next request hits, is refused."""
    cert_path = REPO / "proofs" / "greedy-gap-30.pooled-c4.json"
    cert = load(cert_path)
    instance = json.loads(instance_of(cert_path).read_text())
    target = tmp_path / "c.json"

    def refused(edited) -> bool:
        target.write_text(json.dumps(edited))
        return verify_quiet(str(target), str(instance_of(cert_path)))[0] == 1

    rows = [t for t, row in enumerate(cert["witness"]["dropped"]) if row]
    assert rows
    for t in rows:
        edited = copy.deepcopy(cert)
        edited["witness"]["dropped"][t][0] = 999  # never fetched
        assert refused(edited)
    hit_next = [
        t for t in range(len(instance["requests"]) - 1) if cert["witness"]["hit_blocks"][t + 1] > 0
    ]
    assert hit_next
    for t in hit_next:  # pooled: request t + 1 reads the same cache and hits its first block
        edited = copy.deepcopy(cert)
        edited["witness"]["dropped"][t] = sorted(
            edited["witness"]["dropped"][t] + [instance["requests"][t + 1]["blocks"][0]]
        )
        assert refused(edited)


# --- the command, as a user meets it ---------------------------------------------------


def run(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_verify_command_prints_each_check(capsys):
    status, out, _ = run(
        capsys, "verify", str(REPO / "proofs" / "lab-512x32x16.pooled.json"), str(LAB_INSTANCE)
    )
    assert status == 0
    assert (
        "sha256" in out
        and "replayed 512 requests" in out
        and "compulsory floor: 32 distinct blocks" in out
    )
    assert "VERIFIED OPTIMAL on this instance only" in out


def test_verify_command_mutated_objective(capsys, tmp_path):
    cert = load(REPO / "proofs" / "lab-512x32x16.pooled.json")
    cert["objective"] = 31
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert))
    status, out, _ = run(capsys, "verify", str(path), str(LAB_INSTANCE))
    assert status == 1
    assert "FAILED: the witness replays to 32 misses, but objective is 31" in out


def test_wrong_instance_is_refused(capsys):
    status, out, _ = run(
        capsys, "verify", str(REPO / "proofs" / "greedy-gap-30.pooled-c4.json"), str(LAB_INSTANCE)
    )
    assert status == 1
    assert "FAILED: instance.sha256" in out and "another instance" in out


def test_per_host_certificate_against_instance_edited_by_one_host(capsys, tmp_path):
    data = json.loads(LAB_INSTANCE.read_text())
    data["requests"][0]["host"] = (data["requests"][0]["host"] + 1) % data["hosts"]
    edited = tmp_path / "lab.json"
    edited.write_text(json.dumps(data))
    status, out, _ = run(
        capsys, "verify", str(REPO / "proofs" / "lab-512x32x16.per-host-16.json"), str(edited)
    )
    assert status == 1 and "FAILED: instance.sha256" in out


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "malformed JSON at line 1"),
        ("[]", "is not of type 'object'"),
        ('{"format": "pyverify.certificate/3"}', "format"),
    ],
)
def test_malformed_certificate_is_one_line_exit_2(capsys, tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    status, out, err = run(capsys, "verify", str(path), str(LAB_INSTANCE))
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("pyverify verify: error: ") and str(path) in err
    assert message in err
    assert "Traceback" not in err


def test_wrong_type_names_the_field(capsys, tmp_path):
    cert = load(REPO / "proofs" / "lab-512x32x16.pooled.json")
    cert["objective"] = "32"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert))
    status, _, err = run(capsys, "verify", str(path), str(LAB_INSTANCE))
    assert status == 2 and "objective" in err and "'32' is not of type 'integer'" in err


def test_missing_files(capsys, tmp_path):
    status, _, err = run(capsys, "verify", str(tmp_path / "none.json"), str(LAB_INSTANCE))
    assert status == 2 and "no such file" in err
    status, _, err = run(
        capsys,
        "verify",
        str(REPO / "proofs" / "lab-512x32x16.pooled.json"),
        str(tmp_path / "none.json"),
    )
    assert status == 2 and "no such file" in err


def test_checker_imports_no_solver_or_searcher():
    import ast

    source = (REPO / "pyverify" / "trusted" / "check.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    assert not {
        name
        for name in imported
        if name.split(".")[0] in ("ortools", "z3")
        or name.startswith(("pyverify.certify", "pyverify.sim.simulate"))
    }
    # The checker reads with its own reader (trusted.reader), never pyverify.inputs (the whole import
    # closure is bounded in tests/test_architecture.py); trusted.recount is its own MIN/LRU, and
    # trusted.runs its own replay, both on NumPy arrays.
    assert imported <= {
        "__future__",
        "json",
        "os",
        "importlib",
        "typing",
        "types",
        "numpy",
        "jsonschema",
        "pyverify.errors",
        "pyverify.trusted",
    }
    recount_source = (REPO / "pyverify" / "trusted" / "recount.py").read_text()
    recount_imports = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(recount_source))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert recount_imports <= {
        "__future__",
        "heapq",
        "collections",
        "typing",
        "numpy",
        "pyverify.trusted.reader",
    }


def test_a_file_name_cannot_add_a_verdict_line(tmp_path, capsys):
    """A certificate named "x\\nVERIFIED OPTIMAL ..." once printed that text as a line of its own."""
    import shutil

    from pyverify.cli import main

    proof = REPO / "proofs" / "lab-512x32x16.pooled.json"
    forged_name = tmp_path / "c.json\nVERIFIED OPTIMAL on this instance only: forged"
    shutil.copy(proof, forged_name)
    main(["verify", str(forged_name), str(REPO / "instances" / "lab-512x32x16.json")])
    out = capsys.readouterr().out
    assert not any(
        line.startswith("VERIFIED OPTIMAL on this instance only: forged")
        for line in out.splitlines()
    ), out
