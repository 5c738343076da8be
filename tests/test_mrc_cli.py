"""``pyverify mrc`` as a user reads it: what its LRU is, the capacity for a target hit rate, aligned columns."""

from __future__ import annotations

import json
import re

import pytest

from pyverify.cli import build_parser

from .helpers import run_cli

ENGINE_NOTE = "chain-order LRU (not an engine's leaf-first LRU)"


def trace(tmp_path, lines=None):
    """A small Mooncake trace: a shared system prompt and a few conversations that grow."""
    lines = lines or [
        [1, 2],
        [1, 3],
        [1, 2, 4],
        [1, 3, 5],
        [1, 2, 4, 6],
        [1, 7],
        [1, 3, 5, 8],
        [1, 2],
    ]
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": i,
                    "input_length": 512 * len(ids),
                    "output_length": 1,
                    "hash_ids": ids,
                }
            )
            + "\n"
            for i, ids in enumerate(lines)
        )
    )
    return str(path)


def mrc_help() -> str:
    parser = build_parser()
    sub = next(
        action
        for action in parser._actions
        if hasattr(action, "choices") and action.choices and "mrc" in action.choices
    )
    return parser.format_help() + sub.choices["mrc"].format_help()


def test_mrc_says_its_lru_is_chain_order_everywhere(capsys, tmp_path, monkeypatch):
    path = trace(tmp_path)
    status, out, err = run_cli(capsys, "mrc", path)
    assert status == 0, err
    assert ENGINE_NOTE in out.splitlines()[0]
    assert "budgets --eviction lru,leaf-lru" in out
    status, out, err = run_cli(capsys, "mrc", path, "--json")
    assert "leaf-first" in json.loads(out)["lru"]
    status, out, err = run_cli(capsys, "mrc", path, "--sample-rate", "1")
    assert status == 0 and ENGINE_NOTE in out
    assert (
        " ".join(mrc_help().split()).count("not an engine's leaf-first LRU") >= 2
    )  # the command list, and mrc --help

    drawn = {}

    def fake_chart(curves, ceiling, path, title, xlabel):  # the chart's labels, without drawing it
        drawn.update(labels=[label for label, _, _ in curves], title=title)
        return []

    monkeypatch.setattr("pyverify.commands.traces.mrc_chart", fake_chart)
    status, out, err = run_cli(
        capsys, "mrc", path, "--policy", "lru,opt", "--chart", str(tmp_path / "c.png")
    )
    assert status == 0, err
    assert ENGINE_NOTE in drawn["title"] and ENGINE_NOTE in drawn["labels"][0]


def conversations(seed=3, requests=60):
    """A prefix-closed trace of growing conversations over one shared system prompt (block 0)."""
    import random

    rng = random.Random(seed)
    chains, next_id = [], 1
    for _ in range(requests):
        if chains and rng.random() < 0.6:
            base = list(rng.choice(chains))
            base = base[: rng.randint(1, len(base))]
        else:
            base = [0]
        grown = [next_id + k for k in range(rng.randint(1, 3))]
        next_id += len(grown)
        chains.append(tuple(base + grown))
    return chains


def write_chains(tmp_path, chains):
    return trace(tmp_path, [list(chain) for chain in chains])


def smallest_by_brute_force(chains, policy, rate):
    """The first capacity, counting up from 1, whose pooled run hits at least ``rate`` of the block references."""
    import math

    import numpy as np

    from pyverify.optimal.belady import min_run_flat
    from pyverify.sim.simulate import POOLED, simulate

    references = sum(map(len, chains))
    needed = math.ceil(rate * references)
    ids = np.array([b for chain in chains for b in chain])
    lengths = np.array([len(chain) for chain in chains])
    for capacity in range(1, len({b for chain in chains for b in chain}) + 1):
        if policy == "opt":
            hits = references - min_run_flat(ids, lengths, None, capacity)[2]
        else:
            hits = sum(
                simulate(chains, None, POOLED, capacity=capacity, eviction=policy).hit_blocks
            )
        if hits >= needed:
            return capacity
    return None


RATES = ["0.05", "0.2", "0.35", "1/2", "0.99"]


@pytest.mark.parametrize("rate", RATES)
def test_mrc_target_hit_rate_is_the_smallest_capacity(capsys, tmp_path, rate):
    from fractions import Fraction

    chains = conversations()
    path = write_chains(tmp_path, chains)
    status, out, err = run_cli(
        capsys,
        "mrc",
        path,
        "--policy",
        "lru,opt",
        "--target-hit-rate",
        rate,
        "--kv-bytes-per-token",
        "1024",
        "--json",
    )
    assert status == 0, err
    found = json.loads(out)["target"]["by_policy"]
    for policy in ("lru", "opt"):
        expected = smallest_by_brute_force(chains, policy, Fraction(rate))
        assert found[policy]["capacity_blocks"] == expected, policy
        assert found[policy]["reached"] is (expected is not None)
        if expected is not None:
            assert found[policy]["capacity_gib"] == expected * 512 * 1024 / 2**30
    status, out, err = run_cli(
        capsys, "mrc", path, "--policy", "lru,opt", "--target-hit-rate", rate
    )
    assert status == 0 and "smallest capacity per cache with block hit rate >=" in out
    if smallest_by_brute_force(chains, "lru", Fraction(rate)) is None:
        assert "not reached (even uncapacitated:" in out


@pytest.mark.parametrize("rate", RATES)
def test_budgets_target_hit_rate_per_policy_and_the_optimum(capsys, tmp_path, rate):
    from fractions import Fraction

    from pyverify.sim.simulate import POOLED, simulate

    chains = conversations()
    path = write_chains(tmp_path, chains)
    status, out, err = run_cli(
        capsys,
        "budgets",
        path,
        "--kv-bytes-per-token",
        "1024",
        "--budgets-gib",
        "1",
        "--eviction",
        "lru,tail-first,fifo,leaf-lru",
        "--target-hit-rate",
        rate,
        "--json",
    )
    assert status == 0, err
    found = json.loads(out)["target"]["by_policy"]
    assert set(found) == {"lru", "tail-first", "fifo", "leaf-lru", "opt"}
    for policy in (
        "lru",
        "tail-first",
        "opt",
    ):  # stack algorithms: read off the exact curve, the smallest
        assert found[policy]["capacity_blocks"] == smallest_by_brute_force(
            chains, policy, Fraction(rate)
        ), policy
        assert found[policy]["method"].startswith("exact curve")
    references = sum(map(len, chains))
    for policy in (
        "fifo",
        "leaf-lru",
    ):  # bisection: this capacity reaches it, one block less does not
        capacity = found[policy]["capacity_blocks"]
        assert found[policy]["method"] == "bisection of simulations"
        if capacity is None:
            assert smallest_by_brute_force(chains, policy, Fraction(rate)) is None
            continue

        def rate_at(c):
            return (
                sum(simulate(chains, None, POOLED, capacity=c, eviction=policy).hit_blocks)
                / references
            )

        assert rate_at(capacity) >= Fraction(rate) and (
            capacity == 1 or rate_at(capacity - 1) < Fraction(rate)
        )


def test_budgets_target_says_the_optimum_is_not_computed_with_a_warmup(capsys, tmp_path):
    path = write_chains(tmp_path, conversations())
    status, out, err = run_cli(
        capsys,
        "budgets",
        path,
        "--kv-bytes-per-token",
        "1024",
        "--budgets-gib",
        "1",
        "--target-hit-rate",
        "0.2",
        "--warmup-fraction",
        "0.5",
    )
    assert status == 0, err
    assert "optimum (Belady MIN)  not computed with a warm-up" in out


@pytest.mark.parametrize("command", [["mrc"], ["budgets", "--kv-bytes-per-token", "1024"]])
@pytest.mark.parametrize("rate", ["0", "-0.1", "1.5", "nan", "half"])
def test_target_outside_0_1_is_refused(capsys, tmp_path, command, rate):
    path = write_chains(tmp_path, conversations(requests=5))
    status, out, err = run_cli(capsys, command[0], path, *command[1:], "--target-hit-rate", rate)
    assert (status, out) == (2, "")
    assert (
        "--target-hit-rate: expected a hit rate in (0, 1]" in err
        and len(err.strip().splitlines()) == 1
    )


def test_hits_needed_is_exact():
    from fractions import Fraction

    from pyverify.sim.target import hits_needed

    assert hits_needed(Fraction("0.3"), 10) == 3  # 0.3 * 10 in floating point is 3.0000000000000004
    assert hits_needed(Fraction("0.7"), 10) == 7  # and 0.7 * 10 is 7.000000000000001


def test_mrc_table_columns_are_aligned_and_apart(capsys, tmp_path):
    path = trace(tmp_path)
    status, out, err = run_cli(
        capsys,
        "mrc",
        path,
        "--policy",
        "lru,opt",
        "--verify",
        "--capacities",
        "1,2,100000",
        "--kv-bytes-per-token",
        "131072",
    )
    assert status == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("C blocks"))
    table = lines[start : start + 4]
    header = table[0]
    assert (
        "C GiB  misses  hit rate  token hit rate  simulated  opt misses  opt hit rate  MIN run  LRU needs C"
        in header
    )
    assert len({len(line) for line in table}) == 1  # right-aligned: every row as wide as the header
    # every cell ends where its header ends
    ends = [
        m.end() for m in re.finditer(r"\S+(?: \S+)*", header)
    ]  # names are one space inside, two apart
    for row in table[1:]:
        assert all(row[end - 1] != " " and (end == len(row) or row[end] == " ") for end in ends), (
            row
        )


@pytest.mark.parametrize(
    "command",
    [
        ["mrc", "--policy", "lru,opt"],
        ["budgets", "--kv-bytes-per-token", "1024", "--eviction", "lru,fifo,leaf-lru,tail-first"],
    ],
)
def test_target_on_arrays_equals_target_on_chains(capsys, tmp_path, monkeypatch, command):
    """A trace file is read as arrays (--backend numpy names the engine) or per record (--backend python): the same capacities."""
    from pyverify.sim.kernels import available

    if not available():
        pytest.skip("the array path needs the compiled kernels (numba)")
    path = write_chains(tmp_path, conversations())
    found = []
    for engine in ("python", "numpy"):
        status, out, err = run_cli(
            capsys,
            command[0],
            path,
            *command[1:],
            "--target-hit-rate",
            "0.35",
            "--backend",
            engine,
            "--json",
        )
        assert status == 0, err
        found.append(json.loads(out))
    on_chains, on_arrays = found
    assert "backend" not in on_chains and "backend" in on_arrays
    assert on_arrays["target"] == on_chains["target"]
