"""A certificate is linked only to a theorem about its own model (pyverify/lean/scope.py).

The campaign: every certificate model (pooled or per host, capacity or none,
openings or block chains) against every registered theorem, each certificate
made by `certify`, valid and consistent, with only its ``theorem`` field set.
Which pairs the bridge may accept is written out below by hand, from the
theorems' statements, not computed from scope.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pyverify.certify.certificate import certify, write_certificate
from pyverify.cli import main
from pyverify.errors import CheckFailed
from pyverify.inputs.model import load_instance
from pyverify.lean import catalog
from pyverify.lean.bridge import link_certificate, load_registry
from pyverify.lean.scope import SCOPES, certificate_model, mismatch

from .conftest import REPO

REGISTRY = REPO / "lean" / "theorems.json"

OPENINGS = {
    "format": "pyverify.instance/1",
    "name": "openings",
    "hosts": 2,
    "requests": [
        {"blocks": [b], "host": h}
        for b, h in ((1, 0), (2, 1), (1, 1), (3, 0), (2, 1), (1, 0), (3, 1))
    ],
}
CHAINS = {
    "format": "pyverify.instance/1",
    "name": "chains",
    "hosts": 2,
    "requests": [
        {"blocks": c, "host": h}
        for c, h in (([1, 2], 0), ([1, 3], 1), ([1, 2, 4], 1), ([5], 0), ([1, 3], 0))
    ],
}

#: (model, capacity, requests) -> the theorems about that model, from their statements.
ABOUT = {
    ("pooled", None, "openings"): {
        "pooled_misses_eq_distinct",
        "demand_misses_ge_distinct",
        "pooled_block_misses_eq_distinct",
        "prefix_misses_ge_distinct_blocks",
    },
    ("pooled", None, "chains"): {
        "pooled_block_misses_eq_distinct",
        "prefix_misses_ge_distinct_blocks",
    },
    ("per-host", None, "openings"): {
        "per_host_misses_eq_distinct_pairs",
        "per_host_misses_eq_sum",
        "per_host_block_misses_eq_distinct_pairs",
        "fleet_misses_ge_distinct_host_blocks",
    },
    ("per-host", None, "chains"): {
        "per_host_block_misses_eq_distinct_pairs",
        "fleet_misses_ge_distinct_host_blocks",
    },
    ("pooled", 2, "openings"): {
        "demand_misses_ge_distinct",
        "prefix_run_is_flat_run",
        "min_run_valid",
        "min_misses_le",
        "min_run_is_prefix_run",
        "prefix_misses_ge_min",
        "prefix_misses_ge_distinct_blocks",
    },
    ("pooled", 2, "chains"): {
        "prefix_run_is_flat_run",
        "min_run_is_prefix_run",
        "prefix_misses_ge_min",
        "prefix_misses_ge_distinct_blocks",
    },
    ("per-host", 2, "openings"): {
        "fleet_misses_ge_per_host_min",
        "per_host_min_is_fleet_run",
        "fleet_misses_ge_distinct_host_blocks",
    },
    ("per-host", 2, "chains"): {
        "fleet_misses_ge_per_host_min",
        "per_host_min_is_fleet_run",
        "fleet_misses_ge_distinct_host_blocks",
    },
}
#: The theorems that state an exact count, by model: the only ones a link's prediction may come from.
COUNTS = {
    "pooled": {"pooled_misses_eq_distinct", "pooled_block_misses_eq_distinct"},
    "per-host": {
        "per_host_misses_eq_distinct_pairs",
        "per_host_misses_eq_sum",
        "per_host_block_misses_eq_distinct_pairs",
    },
}


def test_every_catalog_theorem_has_a_scope():
    assert set(SCOPES) == {spec.name for spec in catalog.THEOREMS}
    assert set(SCOPES) == set(load_registry(REGISTRY))


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """One genuine certificate per model in ABOUT: (instance path, certificate JSON)."""
    directory = tmp_path_factory.mktemp("scope")
    made = {}
    for requests, data in (("openings", OPENINGS), ("chains", CHAINS)):
        path = directory / f"{requests}.json"
        path.write_text(json.dumps(data))
        instance = load_instance(path)
        for model, capacity, kind in ABOUT:
            if kind == requests:
                done = certify(
                    instance, model, capacity, 30.0, [], use_z3=False, instance_path=str(path)
                )
                made[(model, capacity, kind)] = (path, done.certificate)
    return made


def named(tmp_path: Path, key, certificates, theorem: str | None) -> Path:
    instance_path, cert = certificates[key]
    cert = copy.deepcopy(cert)
    if theorem is not None:
        cert["theorem"] = theorem
    target = tmp_path / f"{key[0]}-{key[1]}-{key[2]}-{theorem}.json"
    write_certificate(cert, target, instance_path)
    return target


@pytest.mark.parametrize("key", list(ABOUT), ids=lambda k: f"{k[0]}-c{k[1]}-{k[2]}")
def test_every_model_against_every_theorem(tmp_path, certificates, key):
    registry = load_registry(REGISTRY)
    instance_path = certificates[key][0]
    refused = {}
    for theorem in sorted(registry):
        path = named(tmp_path, key, certificates, theorem)
        if theorem not in ABOUT[key]:
            with pytest.raises(CheckFailed) as failure:
                link_certificate(path, instance_path, registry)
            refused[theorem] = str(failure.value)
            continue
        entry = link_certificate(path, instance_path, registry)
        assert entry.theorems[0].name == theorem
        if key[1] is None:
            assert entry.link.covered and entry.link.agrees
            assert entry.link.predicting_theorem in COUNTS[key[0]]
        else:
            assert (
                not entry.link.covered and entry.link.bound is not None and entry.link.bound.holds
            )
    for theorem, message in refused.items():
        assert (
            "\n" not in message
            and f"names {theorem!r}, which is not about this certificate's model" in message
        ), message
    assert len(refused) == len(registry) - len(ABOUT[key])


@pytest.mark.parametrize("key", list(ABOUT), ids=lambda k: f"{k[0]}-c{k[1]}-{k[2]}")
def test_unnamed_certificates_are_predicted_by_a_theorem_about_them(tmp_path, certificates, key):
    entry = link_certificate(
        named(tmp_path, key, certificates, None), certificates[key][0], load_registry(REGISTRY)
    )
    if key[1] is None:
        assert entry.link.predicting_theorem in COUNTS[key[0]] & ABOUT[key]
        model = certificate_model(
            entry.certificate_data, load_instance(certificates[key][0]).chains
        )
        assert mismatch(SCOPES[entry.link.predicting_theorem], model) is None
    else:
        assert entry.link.predicting_theorem is None and not entry.link.covered


def test_a_round_robin_certificate_is_per_host(tmp_path):
    path = tmp_path / "openings.json"
    path.write_text(json.dumps(OPENINGS))
    done = certify(
        load_instance(path),
        "per-host",
        None,
        30.0,
        [],
        use_z3=False,
        instance_path=str(path),
        routing="round-robin",
        hosts=3,
    )
    registry = load_registry(REGISTRY)
    for theorem, accepted in (
        ("per_host_misses_eq_distinct_pairs", True),
        ("pooled_misses_eq_distinct", False),
    ):
        cert = copy.deepcopy(done.certificate)
        cert["theorem"] = theorem
        target = tmp_path / f"{theorem}.json"
        write_certificate(cert, target, path)
        if accepted:
            assert link_certificate(target, path, registry).link.agrees
        else:
            with pytest.raises(
                CheckFailed,
                match="is about one pooled cache; the certificate about one cache per host",
            ):
                link_certificate(target, path, registry)


def test_the_bridge_command_refuses_in_one_line(tmp_path, certificates, capsys):
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    named(proofs, ("pooled", None, "openings"), certificates, "per_host_misses_eq_distinct_pairs")
    status = main(
        [
            "bridge",
            "--proofs",
            str(proofs),
            "--registry",
            str(REGISTRY),
            "--instances",
            str(tmp_path),
            "--instances",
            str(certificates[("pooled", None, "openings")][0].parent),
        ]
    )
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and err.startswith("pyverify bridge: refused: ")
    assert (
        "names 'per_host_misses_eq_distinct_pairs', which is not about this certificate's model"
        in err
    )
