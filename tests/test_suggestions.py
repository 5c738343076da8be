"""A typo gets one line that names the closest subcommand, flag or choice (difflib, pyverify.commands.argtypes)."""

from __future__ import annotations

import pytest

from .helpers import run_cli


@pytest.mark.parametrize(
    "argv, prog, suggestion",
    [
        (["simulat", "x"], "pyverify", "(did you mean 'simulate'?)"),
        (["trace", "imprt", "x"], "pyverify trace", "(did you mean 'import'?)"),
        (["simulate", "x", "--model", "poold"], "pyverify simulate", "(did you mean 'pooled'?)"),
        (
            ["simulate", "x", "--model", "pooled", "--capcity", "3"],
            "pyverify simulate",
            "unrecognized arguments: --capcity 3 (did you mean '--capacity'?)",
        ),
        (["mrc", "x", "--capacitis=3"], "pyverify mrc", "(did you mean '--capacities'?)"),
        (
            ["sweep", "x", "--routing", "round-robn"],
            "pyverify sweep",
            "(did you mean 'round-robin'?)",
        ),
        (
            ["budgets", "x", "--kv-model", "llama-3.1-8b", "--eviction", "leaf-lr"],
            "pyverify budgets",
            "(did you mean 'leaf-lru'?)",
        ),
        # Every choice-like value a user types, in a list or looked up in a catalog, goes through the same suggestion.
        (["replay", "x", "--router", "kv-awar"], "pyverify replay", "(did you mean 'kv-aware'?)"),
        (
            ["replay", "x", "--router", "round-robin,randm"],
            "pyverify replay",
            "(did you mean 'random'?)",
        ),
        (
            ["replay", "x", "--kv-model", "llama-3-8b"],
            "pyverify replay",
            "(did you mean 'llama-3.1-8b'?)",
        ),
        (
            ["simulate", "x", "--capacity-gib", "1", "--kv-model", "qwen2.5-7"],
            "pyverify simulate",
            "(did you mean 'qwen2.5-7b'?)",
        ),
        (
            ["sweep", "x", "--routing", "round-robin,prefix-afinity"],
            "pyverify sweep",
            "(did you mean 'prefix-affinity'?)",
        ),
        (["mrc", "x", "--policy", "lru,opt-forcd"], "pyverify mrc", "(did you mean 'opt-forced'?)"),
    ],
)
def test_typos_get_a_suggestion_in_one_line(capsys, argv, prog, suggestion):
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith(f"{prog}: error: ") and len(err.strip().splitlines()) == 1
    assert suggestion in err


def test_nothing_close_suggests_nothing(capsys):
    status, out, err = run_cli(capsys, "validate", "x", "--zzzzzz")
    assert status == 2 and "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err


@pytest.mark.parametrize(
    "argv, suggestion",
    [
        (["--param", "pool_bandwith_gb_s=10"], "(did you mean 'pool_bandwidth_gb_s'?)"),
        (["--param", "pool_bandwith_gb_s"], "(did you mean 'pool_bandwidth_gb_s'?)"),
        (["--sweep", "pool_bandwith_gb_s=1:10:3"], "(did you mean 'pool_bandwidth_gb_s'?)"),
    ],
)
def test_cost_parameter_typos_get_a_suggestion(capsys, argv, suggestion):
    from .conftest import REPO

    status, out, err = run_cli(
        capsys, "cost", str(REPO / "instances" / "lab-512x32x16.json"), *argv
    )
    assert (status, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert suggestion in err
