"""The Python API gives the command line's numbers: each result here is held equal to the
committed ``--json`` output of the same command on the same instance (tests/golden)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from pyverify import api
from pyverify.errors import UserError

from .conftest import REPO
from .strategies import prefix_closed_chains

LAB = REPO / "instances" / "lab-512x32x16.json"
GOLDEN = REPO / "tests" / "golden"


def golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def lab():
    return api.load_trace(LAB)


@pytest.mark.parametrize(
    "name, flags",
    [
        ("simulate-lab-pooled", {}),
        ("simulate-lab-per-host-c2", {"model": "per-host", "capacity": 2}),
    ],
)
def test_simulate_gives_the_commands_numbers(lab, name, flags):
    expected = golden(name)
    result = api.simulate(lab, **flags).to_dict()
    for field in ("sha256", "model", "capacity", "eviction", "references", "hits", "misses"):
        assert result[field] == expected[field], field
    assert result["hit_rate"] == expected["hit_rate"]
    assert result["trace"] == expected["instance"]


def test_the_lru_curve_gives_mrcs_points(lab):
    expected = golden("mrc-lab")
    curve = api.lru_curve(lab)
    assert curve.cold_misses == expected["cold_misses"]
    assert curve.ceiling_hit_rate == expected["ceiling_hit_rate"]
    for point in expected["points"]:
        assert curve.misses(point["capacity_blocks"]) == point["misses"]


@given(prefix_closed_chains(max_nodes=30, max_requests=30))
@settings(max_examples=40, deadline=None)
def test_curves_equal_replays_at_every_capacity(chains):
    from pyverify.inputs.model import Instance
    from pyverify.optimal.belady import min_misses

    trace = api.ColumnarTrace.from_instance(
        Instance(name="t", fleet_size=1, chains=tuple(map(tuple, chains)))
    )
    lru, optimal = api.lru_curve(trace), api.optimal_curve(trace)
    distinct = len({block for chain in chains for block in chain})
    for capacity in range(1, distinct + 2):
        replayed = api.simulate(trace, capacity=capacity, eviction="lru")
        assert lru.misses(capacity) == replayed.misses
        assert optimal.misses(capacity) == min_misses(chains, None, capacity)


def test_verify_says_what_the_checker_says(tmp_path):
    certificate = REPO / "proofs" / "lab-512x32x16.pooled.json"
    verdict = api.verify(certificate, LAB)
    assert verdict.ok and any("VERIFIED" in line for line in verdict.lines)
    forged = json.loads(certificate.read_text(encoding="utf-8"))
    forged["objective"] = forged["objective"] - 1
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    assert not api.verify(path, LAB).ok


def test_bad_input_is_a_user_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hash_ids": [1, 2]}\n{"hash_ids": [3, -1]}\n', encoding="utf-8")
    with pytest.raises(UserError):
        api.load_trace(bad)
