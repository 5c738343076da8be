"""The bridge keeps instance facts and general facts apart, links them only
when the hypotheses hold, and refuses everything a reviewer must not accept."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from pyverify.lean.bridge import (
    LOWER_BOUND_THEOREMS,
    NO_LOWER_BOUND,
    BridgeReport,
    choose_theorems,
    hypotheses_for,
    link_certificate,
    load_registry,
    predicted_misses,
    run_bridge,
)
from pyverify.certify.certificate import certify, write_certificate
from pyverify.cli import main
from pyverify.errors import CheckFailed
from pyverify.lean import runner
from pyverify.inputs.model import Instance, load_instance
from pyverify.reports.markdown import bridge_markdown
from pyverify.reports.wording import overclaims

from .conftest import LAB_INSTANCE, REPO

REGISTRY = REPO / "lean" / "theorems.json"


@pytest.fixture(scope="module")
def lean_result():
    return runner.check(REPO / "lean", emit=lambda line: None)


@pytest.fixture(scope="module")
def lab_certificates(tmp_path_factory):
    """Fresh certificates for the lab instance, pooled and per-host."""
    directory = tmp_path_factory.mktemp("proofs")
    instance = load_instance(LAB_INSTANCE)
    for model in ("pooled", "per-host"):
        done = certify(
            instance, model, None, 60.0, [], use_z3=True, instance_path=str(LAB_INSTANCE)
        )
        write_certificate(done.certificate, directory / f"lab.{model}.json", LAB_INSTANCE)
    return directory


@pytest.fixture
def proofs(tmp_path, lab_certificates):
    target = tmp_path / "proofs"
    shutil.copytree(lab_certificates, target)
    return target


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def bridge(proofs, lean_result, registry=REGISTRY) -> BridgeReport:
    return run_bridge(proofs, registry, [REPO / "instances"], lean_result)


def test_lab_certificates_link_to_the_theorems(proofs, lean_result):
    report = bridge(proofs, lean_result)
    by_model = {entry.certificate_data["cache_model"]["model"]: entry for entry in report.entries}
    pooled, per_host = by_model["pooled"], by_model["per-host"]
    assert pooled.link.covered and pooled.link.predicted == 32 and pooled.link.agrees
    assert per_host.link.covered and per_host.link.predicted == 338 and per_host.link.agrees
    assert pooled.theorems[0].name == "pooled_misses_eq_distinct"
    assert per_host.theorems[0].name == "per_host_misses_eq_distinct_pairs"
    # Three separate parts; the general part names no instance, the instance part no theorem.
    parts = pooled.to_json()
    assert set(parts) == {"instance_fact", "general_fact", "link"}
    assert "lab-512x32x16" not in json.dumps(parts["general_fact"])
    assert "pooled_misses_eq_distinct" not in json.dumps(parts["instance_fact"])
    assert parts["instance_fact"]["claim"]["scope"] == "this instance"


def test_predicted_counts_are_recomputed_from_the_file(proofs, lean_result):
    raw = json.loads(LAB_INSTANCE.read_text())
    openings = {r["blocks"][0] for r in raw["requests"]}
    pairs = {(r["host"], r["blocks"][0]) for r in raw["requests"]}
    predicted = {
        e.certificate_data["cache_model"]["model"]: e.link.predicted
        for e in bridge(proofs, lean_result).entries
    }
    assert predicted == {"pooled": len(openings), "per-host": len(pairs)}


def test_report_passes_the_wording_guard(proofs, lean_result):
    text = bridge_markdown(bridge(proofs, lean_result))
    assert overclaims(text) == []
    assert "(a) Instance fact" in text and "(b) General fact" in text and "(c) Link" in text


def test_capacitated_certificate_is_not_covered_and_not_an_error(tmp_path, lean_result):
    instance_path = tmp_path / "small.json"
    instance_path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "small",
                "hosts": 1,
                "requests": [{"blocks": [b], "host": 0} for b in (1, 2, 3, 1, 2, 3, 1)],
            }
        )
    )
    proofs = tmp_path / "proofs"
    done = certify(
        load_instance(instance_path),
        "pooled",
        2,
        30.0,
        [],
        use_z3=True,
        instance_path=str(instance_path),
    )
    write_certificate(done.certificate, proofs / "small.json", instance_path)
    report = run_bridge(proofs, REGISTRY, [tmp_path], lean_result)
    (entry,) = report.entries
    assert not entry.link.covered
    assert "uncapacitated" in entry.link.why_not
    assert "Not covered by the theorem" in bridge_markdown(report)


# --- refusals -----------------------------------------------------------------


def test_overclaiming_scope_is_refused(proofs, lean_result):
    edit_json(proofs / "lab.pooled.json", lambda c: c["claim"].update(scope="every instance"))
    with pytest.raises(
        CheckFailed, match=r"lab.pooled.json: claim.scope: 'every instance' overclaims"
    ):
        bridge(proofs, lean_result)


def test_tampered_certificate_is_refused(proofs, lean_result):
    edit_json(proofs / "lab.per-host.json", lambda c: c.update(objective=337))
    with pytest.raises(CheckFailed, match=r"lab.per-host.json: fails `pyverify verify`.*FAILED"):
        bridge(proofs, lean_result)


def test_certificate_for_an_unknown_instance_is_refused(proofs, lean_result):
    edit_json(
        proofs / "lab.pooled.json",
        lambda c: c["instance"].update(
            sha256="0" * 64, content_sha256="0" * 64, path="nowhere.json"
        ),
    )
    with pytest.raises(CheckFailed, match="no instance file in .* hashes to 0000"):
        bridge(proofs, lean_result)


def test_unknown_theorem_is_refused(proofs, lean_result):
    edit_json(proofs / "lab.pooled.json", lambda c: c.update(theorem="pooled_is_best_everywhere"))
    with pytest.raises(
        CheckFailed, match="names 'pooled_is_best_everywhere', which is not in the theorem registry"
    ):
        bridge(proofs, lean_result)


def test_capacitated_certificate_linked_to_the_uncapacitated_theorem_is_refused(
    tmp_path, lean_result
):
    instance_path = tmp_path / "small.json"
    instance_path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "small",
                "hosts": 1,
                "requests": [{"blocks": [b], "host": 0} for b in (1, 2, 1, 3, 1)],
            }
        )
    )
    done = certify(
        load_instance(instance_path),
        "pooled",
        1,
        30.0,
        [],
        use_z3=True,
        instance_path=str(instance_path),
    )
    cert = copy.deepcopy(done.certificate)
    cert["theorem"] = "pooled_misses_eq_distinct"
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    (proofs / "small.json").write_text(json.dumps(cert))
    with pytest.raises(
        CheckFailed,
        match="names 'pooled_misses_eq_distinct', which is not about this certificate's model "
        r"\(one pooled cache, capacity 1 blocks per cache, .*\): it is about caches with no capacity",
    ):
        run_bridge(proofs, REGISTRY, [tmp_path], lean_result)


def test_registry_statement_edited_without_its_hash_is_refused(tmp_path, proofs, lean_result):
    registry = tmp_path / "theorems.json"
    data = json.loads(REGISTRY.read_text())
    data["theorems"][0]["statement"] += " ∧ True"
    registry.write_text(json.dumps(data))
    with pytest.raises(CheckFailed, match="statement_sha256 does not match the statement text"):
        load_registry(registry)


def test_registry_statement_and_hash_both_edited_is_refused(tmp_path, proofs, lean_result):
    registry = tmp_path / "theorems.json"
    data = json.loads(REGISTRY.read_text())
    entry = next(t for t in data["theorems"] if t["name"] == "pooled_misses_eq_distinct")
    entry["statement"] = entry["statement"].replace("distinct_count", "pooled_misses")
    entry["statement_sha256"] = hashlib.sha256(entry["statement"].encode()).hexdigest()
    registry.write_text(json.dumps(data))
    with pytest.raises(
        CheckFailed, match="pooled_misses_eq_distinct: statement differs from what Lean prints"
    ):
        bridge(proofs, lean_result, registry)


def test_failed_lean_check_is_refused(tmp_path, proofs):
    project = tmp_path / "lean"
    shutil.copytree(REPO / "lean", project, ignore=shutil.ignore_patterns(".lake"))
    pooled = project / "PrefixPool" / "Pooled.lean"
    pooled.write_text(
        pooled.read_text().replace(
            "cache_misses_nil_eq_count Natural.eqb_lawful requests", "rfl", 1
        )
    )
    failed = runner.check(project, emit=lambda line: None)
    assert not failed.ok
    with pytest.raises(CheckFailed, match="the Lean check has not passed on the current sources"):
        bridge(proofs, failed, project / "theorems.json")


def test_cli_refusal_is_one_line_exit_1(proofs, capsys):
    edit_json(proofs / "lab.pooled.json", lambda c: c["claim"].update(scope="all fleets"))
    status = main(
        [
            "bridge",
            "--proofs",
            str(proofs),
            "--registry",
            str(REGISTRY),
            "--instances",
            str(REPO / "instances"),
        ]
    )
    err = capsys.readouterr().err
    assert status == 1
    assert (
        err.count("\n") == 1
        and err.startswith("pyverify bridge: refused: ")
        and "overclaims" in err
    )


def test_block_chains_link_to_the_block_theorems(tmp_path, lean_result):
    instance_path = tmp_path / "chains.json"
    instance_path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "chains",
                "hosts": 2,
                "requests": [
                    {"blocks": [1, 2], "host": 0},
                    {"blocks": [1, 3], "host": 1},
                    {"blocks": [1, 2, 4], "host": 1},
                ],
            }
        )
    )
    proofs = tmp_path / "proofs"
    instance = load_instance(instance_path)
    for model in ("pooled", "per-host"):
        done = certify(
            instance, model, None, 30.0, [], use_z3=True, instance_path=str(instance_path)
        )
        write_certificate(done.certificate, proofs / f"{model}.json", instance_path)
    entries = {
        e.certificate_data["cache_model"]["model"]: e
        for e in run_bridge(proofs, REGISTRY, [tmp_path], lean_result).entries
    }
    pooled, per_host = entries["pooled"], entries["per-host"]
    assert pooled.theorems[0].name == "pooled_block_misses_eq_distinct"
    assert pooled.link.covered and pooled.link.predicted == 4 and pooled.link.agrees
    # Per host, longer prefix-closed chains are covered by the per-host block theorem:
    # (0, 1), (0, 2), (1, 1), (1, 3), (1, 2), (1, 4) are the 6 pairs, recounted from the file.
    assert [t.name for t in per_host.theorems] == [
        "per_host_block_misses_eq_distinct_pairs",
        "fleet_misses_ge_distinct_host_blocks",
    ]
    assert per_host.link.covered and per_host.link.predicted == 6 and per_host.link.agrees
    assert per_host.link.predicted_by == "distinct (host, block) pairs"
    assert per_host.certificate_data["objective"] == 6
    assert all(h.holds for h in per_host.link.hypotheses)
    assert "prefix-closed chains" in [h.text for h in per_host.link.hypotheses]
    # Without the block theorem in the registry, the opening theorems do not cover these chains.
    registry = {
        name: t
        for name, t in load_registry(REGISTRY).items()
        if name != "per_host_block_misses_eq_distinct_pairs"
    }
    entry = link_certificate(proofs / "per-host.json", instance_path, registry)
    assert entry.theorems[0].name == "per_host_misses_eq_distinct_pairs"
    assert not entry.link.covered and "openings" in entry.link.why_not


#: Per cache model (pooled or per host, openings or longer chains): the theorem giving the count and the
#: theorem proving that no demand cache misses fewer, the two halves of an uncapacitated certificate's claim.
COVERING = {
    ("pooled", "openings"): ("pooled_misses_eq_distinct", "demand_misses_ge_distinct"),
    ("per-host", "openings"): (
        "per_host_misses_eq_distinct_pairs",
        "fleet_misses_ge_distinct_host_blocks",
    ),
    ("pooled", "chains"): ("pooled_block_misses_eq_distinct", "prefix_misses_ge_distinct_blocks"),
    ("per-host", "chains"): (
        "per_host_block_misses_eq_distinct_pairs",
        "fleet_misses_ge_distinct_host_blocks",
    ),
}
SHAPES = {
    "openings": [([1], 0), ([2], 1), ([1], 1), ([3], 0), ([2], 1)],
    "chains": [([1, 2], 0), ([1, 3], 1), ([1, 2, 4], 1)],
}


@pytest.mark.parametrize("model, shape", sorted(COVERING))
def test_covered_certificates_cite_both_halves(tmp_path, model, shape):
    """An uncapacitated certificate is covered only with a count theorem (the cache that keeps every
    block) and a registered lower bound for its model (no demand cache misses fewer); without the
    lower bound in the registry it is not covered."""
    instance_path = tmp_path / "instance.json"
    requests = [{"blocks": blocks, "host": host} for blocks, host in SHAPES[shape]]
    instance_path.write_text(
        json.dumps(
            {"format": "pyverify.instance/1", "name": shape, "hosts": 2, "requests": requests}
        )
    )
    done = certify(
        load_instance(instance_path),
        model,
        None,
        30.0,
        [],
        use_z3=True,
        instance_path=str(instance_path),
    )
    path = tmp_path / "certificate.json"
    write_certificate(done.certificate, path, instance_path)
    registry = load_registry(REGISTRY)
    count, lower = COVERING[(model, shape)]
    entry = link_certificate(path, instance_path, registry)
    assert entry.link.covered and entry.link.agrees
    assert entry.link.predicting_theorem == count
    assert entry.link.lower_bound_theorem == lower
    assert lower in [t.name for t in entry.theorems]
    assert entry.link_json()["no_demand_run_misses_fewer_by_theorem"] == lower
    # An opening is a chain of one block: every candidate bound for the model goes.
    without = {name: t for name, t in registry.items() if name not in LOWER_BOUND_THEOREMS[model]}
    entry = link_certificate(path, instance_path, without)
    assert not entry.link.covered
    assert entry.link.why_not == NO_LOWER_BOUND
    assert entry.link.lower_bound_theorem is None


def test_per_host_block_theorem_needs_prefix_closure(tmp_path):
    """Instances are prefix-closed when loaded; the bridge checks it again
    itself before citing the per-host block theorem, on the whole trace."""
    crossed = Instance(name="crossed", fleet_size=2, chains=((1, 2), (3, 2)), routing=(0, 1))
    cert = {
        "cache_model": {
            "model": "per-host",
            "eviction": "offline-optimal",
            "warm_start": False,
            "capacity": None,
        }
    }
    found = {h.text: h for h in hypotheses_for(cert, crossed, openings_only=False)}
    assert not found["prefix-closed chains"].holds
    tree = Instance(
        name="tree", fleet_size=2, chains=((1, 2), (1, 3), (1, 2, 4)), routing=(0, 1, 1)
    )
    assert all(h.holds for h in hypotheses_for(cert, tree, openings_only=False))
    assert predicted_misses("per-host", tree) == (6, "distinct (host, block) pairs")
    assert choose_theorems("per-host", tree, load_registry(REGISTRY)) == (
        ["per_host_block_misses_eq_distinct_pairs"],
        False,
    )


def test_per_host_block_certificate_with_a_wrong_count_is_refused(tmp_path, lean_result):
    """A verified per-host certificate on chains whose objective is not the pair
    count is refused by the bridge (the verify step is stubbed to pass here)."""
    instance_path = tmp_path / "chains.json"
    instance_path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "chains",
                "hosts": 2,
                "requests": [
                    {"blocks": [1, 2], "host": 0},
                    {"blocks": [1, 3], "host": 1},
                    {"blocks": [1, 2, 4], "host": 1},
                ],
            }
        )
    )
    done = certify(
        load_instance(instance_path),
        "per-host",
        None,
        30.0,
        [],
        use_z3=True,
        instance_path=str(instance_path),
    )
    cert = copy.deepcopy(done.certificate)
    cert["objective"] = 5
    path = tmp_path / "per-host.json"
    path.write_text(json.dumps(cert))
    with pytest.raises(
        CheckFailed,
        match="objective 5 differs from the 6 distinct \\(host, block\\) pairs that "
        "per_host_block_misses_eq_distinct_pairs predicts",
    ):
        link_certificate(
            path, instance_path, load_registry(REGISTRY), verify=lambda c, i: (0, ["OK"]), raw=cert
        )


def test_instance_is_found_by_content_in_any_file(tmp_path):
    """A certificate naming its instance by content digest is found in a file of another name (or format),
    as ``verify`` accepts it; one naming only the canonical SHA-256 is not, since that hash covers the name."""
    from pyverify.lean.bridge import find_instance

    cert_path = tmp_path / "gap.json"
    assert (
        main(
            [
                "certify",
                str(REPO / "instances" / "greedy-gap-30.json"),
                "--model",
                "pooled",
                "--capacity",
                "4",
                "-o",
                str(cert_path),
            ]
        )
        == 0
    )
    raw = json.loads(cert_path.read_text())
    assert "content_sha256" in raw["instance"]
    search = tmp_path / "elsewhere"
    search.mkdir()
    renamed = json.loads((REPO / "instances" / "greedy-gap-30.json").read_text())
    renamed["name"] = "the-same-requests"
    (search / "copy.json").write_text(json.dumps(renamed))
    raw["instance"]["path"] = "nowhere.json"
    assert find_instance(cert_path, raw, [search]) == search / "copy.json"
    del raw["instance"]["content_sha256"]
    with pytest.raises(CheckFailed, match=r"instance.sha256: no instance file in .* hashes to"):
        find_instance(cert_path, raw, [search])


def test_a_trace_certificates_report_says_which_hash_was_checked(tmp_path):
    """A trace certificate is matched by its content digest; its file SHA-256 depends on the path the
    trace was read from and is not checked, so the report must not print it as the instance's identity."""
    import json

    from pyverify.cli import main
    from pyverify.lean.bridge import BridgeEntry
    from pyverify.reports.markdown import instance_fact_markdown

    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hash_ids": [1, 2]}\n{"hash_ids": [1, 3]}\n{"hash_ids": [1, 2, 4]}\n')
    assert main(["certify", str(trace), "--model", "pooled", "-o", str(tmp_path / "c.json")]) == 0
    cert = json.loads((tmp_path / "c.json").read_text())
    entry = BridgeEntry(
        certificate="c.json",
        instance_file=str(trace),
        certificate_data=cert,
        verify_lines=[],
        theorems=[],
        link=None,
    )
    line = next(line for line in instance_fact_markdown(entry) if line.startswith("- instance:"))
    content, sha = cert["instance"]["content_sha256"], cert["instance"]["sha256"]
    assert (
        f"content digest `{content}` (checked)" in line and f"SHA-256 `{sha}` not checked" in line
    )
