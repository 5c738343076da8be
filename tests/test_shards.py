"""SHARDS estimates: exact at rate 1, consistent sampling, small error on a large trace, labelled in the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from pyverify.sim.mrc import curve_from_distances, log_capacities, stack_distances
from pyverify.sim.shards import curve_error, sampled, shards_curve
from tests.helpers import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from synthetic import synthetic_trace  # noqa: E402


def exact_curve(ids):
    return curve_from_distances(stack_distances(ids))


def test_rate_one_is_the_exact_curve():
    ids, _ = synthetic_trace(50_000, seed=3)
    exact = exact_curve(ids)
    capacities = np.arange(1, exact.max_useful_capacity + 2)
    estimate = shards_curve(ids, 1.0)
    assert np.array_equal(
        estimate.miss_ratio(capacities), exact.misses(capacities) / exact.references
    )


def test_a_sampled_block_keeps_every_reference():
    ids = np.array([5, 9, 5, 7, 9, 5, 1 << 40, 1 << 40] * 1000, dtype=np.int64)
    keep = sampled(ids, 0.5)
    for block in np.unique(ids):
        assert len(set(keep[ids == block].tolist())) == 1


def test_estimate_is_close_on_a_large_trace_and_monotone():
    ids, _ = synthetic_trace(2_000_000, seed=1)
    exact = exact_curve(ids)
    capacities = log_capacities(exact.max_useful_capacity)
    estimate = shards_curve(ids, 0.05)
    assert estimate.sampled_references < 0.2 * ids.size
    error = curve_error(estimate, exact, capacities)
    assert error["mean_abs_error"] < 0.02, error
    ratios = estimate.miss_ratio(np.asarray(capacities))
    assert np.all(np.diff(ratios) <= 1e-12)


def test_cli_labels_the_estimate(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    ids, lengths = synthetic_trace(20_000, seed=2)
    bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
    path.write_text(
        "".join(
            json.dumps({"hash_ids": ids[a:b].tolist()}) + "\n"
            for a, b in zip(bounds[:-1], bounds[1:])
        )
    )
    status, out, err = run_cli(capsys, "mrc", str(path), "--sample-rate", "0.5", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["estimate"] is True and "SHARDS" in data["note"]
    status, out, _ = run_cli(capsys, "mrc", str(path), "--sample-rate", "0.5")
    assert "ESTIMATED" in out
    status, out, err = run_cli(capsys, "mrc", str(path), "--sample-rate", "0")
    assert status == 2


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--policy", "lru,opt"], "--policy opt"),
        (["--policy", "opt"], "--policy opt"),
        (["--chart", "CHART"], "--chart"),
        (["--chart", "CHART", "--policy", "lru,opt"], "--policy opt, --chart"),
        (["--verify"], "--verify"),
        (["--target-hit-rate", "0.5"], "--target-hit-rate"),
        (["--kv-model", "llama-3.1-8b"], "--kv-model/--kv-bytes-per-token (GiB)"),
    ],
)
def test_the_estimate_refuses_what_it_cannot_do(tmp_path, capsys, flags, named):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"hash_ids": [1, 2 + i % 3]}) + "\n" for i in range(30)))
    chart = tmp_path / "s.png"
    flags = [str(chart) if flag == "CHART" else flag for flag in flags]
    status, out, err = run_cli(capsys, "mrc", str(path), "--sample-rate", "0.5", *flags)
    assert (status, out) == (2, "")
    assert (
        err.startswith("pyverify mrc: error: --sample-rate: ")
        and len(err.strip().splitlines()) == 1
    )
    assert f"cannot do {named} (" in err
    assert not chart.exists()
