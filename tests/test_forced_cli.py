"""The forced-admission optimum where pyverify prints hit rates: mrc --policy opt-forced, simulate/budgets --optimum."""

from __future__ import annotations

import json

import pytest

from pyverify.cli import main
from pyverify.optimal.belady import min_misses
from pyverify.optimal.forced import forced_misses
from pyverify.inputs.load import load_input

from .conftest import REPO

INSTANCE = REPO / "instances" / "greedy-gap-30.json"


@pytest.fixture
def trace(tmp_path):
    """A small Mooncake-format trace (512-token blocks), so budgets can convert GiB to blocks."""
    rows = [[0, 1, 2], [0, 1, 3], [4], [0, 1, 2, 5], [4, 6], [0, 7], [4], [0, 1, 3]] * 3
    path = tmp_path / "tiny.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"timestamp": i, "input_length": 512 * len(r), "output_length": 1, "hash_ids": r}
            )
            + "\n"
            for i, r in enumerate(rows)
        )
    )
    return path, rows


def run(capsys, argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


def test_mrc_opt_forced_points_and_verify(capsys):
    chains = load_input(str(INSTANCE)).chains
    code, out = run(
        capsys,
        [
            "mrc",
            INSTANCE,
            "--policy",
            "lru,opt,opt-forced",
            "--capacities",
            "1,2,3,4",
            "--verify",
            "--json",
        ],
    )
    assert code == 0
    result = json.loads(out)
    assert result["verified"] is True
    for point in result["points"]:
        c = point["capacity_blocks"]
        assert (
            point["opt_forced_misses"]
            == forced_misses(chains, None, c)
            == point["forced_recount_misses"]
        )
        assert point["opt_misses"] == min_misses(chains, None, c) <= point["opt_forced_misses"]
    code, out = run(capsys, ["mrc", INSTANCE, "--policy", "opt-forced", "--capacities", "3"])
    assert code == 0
    assert (
        "forced misses" in out
        and "admits every block it fetches and keeps the running request's blocks" in out
    )
    assert "reached at C = " in out and "by LRU (not printed)" in out


def test_mrc_opt_forced_per_host(capsys):
    chains = load_input(str(INSTANCE)).chains
    routing = load_input(str(INSTANCE)).routing
    code, out = run(
        capsys,
        [
            "mrc",
            INSTANCE,
            "--model",
            "per-host",
            "--policy",
            "opt-forced",
            "--capacities",
            "2,3",
            "--json",
        ],
    )
    assert code == 0
    result = json.loads(out)
    fleet = result["fleet_size"]
    assert fleet == max(routing) + 1  # fold onto the instance's own hosts: its routing
    for point in result["points"]:
        assert point["opt_forced_misses"] == forced_misses(
            chains, list(routing), point["capacity_blocks"]
        )


def test_simulate_optimum_prints_both_in_plain_words(capsys, trace):
    path, rows = trace
    code, out = run(
        capsys,
        [
            "simulate",
            path,
            "--model",
            "pooled",
            "--capacity",
            "3",
            "--eviction",
            "tail-first",
            "--optimum",
        ],
    )
    assert code == 0
    assert "admitting every block" in out and "any cache" in out
    assert "keeps the running request's blocks" in out and "bypass" in out
    code, out = run(
        capsys,
        [
            "simulate",
            path,
            "--model",
            "pooled",
            "--capacity",
            "3",
            "--eviction",
            "tail-first",
            "--optimum",
            "--json",
        ],
    )
    result = json.loads(out)
    references = sum(map(len, rows))
    forced, bypass = result["optimum"]["forced"], result["optimum"]["bypass"]
    assert forced["block_hits"] == references - forced_misses(rows, None, 3)
    assert bypass["block_hits"] == references - min_misses(rows, None, 3)
    assert (
        result["hits"] <= forced["block_hits"] <= bypass["block_hits"]
    )  # tail-first admits every block and pins


def test_simulate_optimum_needs_a_capacity(capsys, trace):
    path, _ = trace
    assert main(["simulate", str(path), "--model", "pooled", "--optimum"]) == 2


def test_budgets_optimum_rows(capsys, trace):
    path, rows = trace
    # 512 tokens x 1024 bytes = 0.5 MiB per block: 1/512, 2/512 and 4/512 GiB are 1, 2 and 4 blocks.
    budgets = ",".join(str(b / 512) for b in (1, 2, 4))
    code, out = run(
        capsys,
        [
            "budgets",
            path,
            "--kv-bytes-per-token",
            "1024",
            "--budgets-gib",
            budgets,
            "--eviction",
            "leaf-lru",
            "--optimum",
            "--json",
        ],
    )
    assert code == 0
    points = json.loads(out)["points"]
    references = sum(map(len, rows))
    for forced, bypass, engine in zip(points["opt-forced"], points["opt"], points["leaf-lru"]):
        c = forced["capacity_blocks"]
        assert forced["block_hits"] == references - forced_misses(rows, None, c)
        assert bypass["block_hits"] == references - min_misses(rows, None, c)
        assert engine["block_hits"] <= forced["block_hits"] <= bypass["block_hits"]
    code, out = run(
        capsys,
        ["budgets", path, "--kv-bytes-per-token", "1024", "--budgets-gib", budgets, "--optimum"],
    )
    assert "opt-forced:" in out and "forced-admission optimum" in out


def test_simulate_optimum_same_on_the_array_path(capsys, trace):
    path, _ = trace
    argv = [
        "simulate",
        path,
        "--model",
        "per-host",
        "--fleet",
        "2",
        "--capacity",
        "2",
        "--eviction",
        "leaf-lru",
        "--optimum",
        "--warmup-fraction",
        "0.5",
        "--json",
    ]
    code, out = run(capsys, argv)
    simulator = json.loads(out)
    code, out = run(capsys, argv + ["--backend", "numpy"])
    arrays = json.loads(out)
    assert arrays["backend"].startswith("numpy")
    assert arrays["optimum"] == simulator["optimum"]
    assert arrays["optimum"]["forced"]["measured_from_request"] == 12
