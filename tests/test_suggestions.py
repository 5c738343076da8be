"""A typo gets one line that names the closest subcommand, flag or choice (difflib, pyverify.commands.argtypes)."""

from __future__ import annotations

import pytest

from .helpers import run_cli


@pytest.mark.parametrize("argv, prog, suggestion", [
    (["simulat", "x"], "pyverify", "(did you mean 'simulate'?)"),
    (["trace", "imprt", "x"], "pyverify trace", "(did you mean 'import'?)"),
    (["simulate", "x", "--model", "poold"], "pyverify simulate", "(did you mean 'pooled'?)"),
    (["simulate", "x", "--model", "pooled", "--capcity", "3"], "pyverify simulate", "unrecognized arguments: --capcity 3 (did you mean '--capacity'?)"),
    (["mrc", "x", "--capacitis=3"], "pyverify mrc", "(did you mean '--capacities'?)"),
    (["sweep", "x", "--routing", "round-robn"], "pyverify sweep", "(did you mean 'round-robin'?)"),
    (["budgets", "x", "--kv-model", "llama-3.1-8b", "--eviction", "leaf-lr"], "pyverify budgets", "(did you mean 'leaf-lru'?)"),
])
def test_typos_get_a_suggestion_in_one_line(capsys, argv, prog, suggestion):
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith(f"{prog}: error: ") and len(err.strip().splitlines()) == 1
    assert suggestion in err


def test_nothing_close_suggests_nothing(capsys):
    status, out, err = run_cli(capsys, "validate", "x", "--zzzzzz")
    assert status == 2 and "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err
