"""Each flag word means one thing: ``--backend`` is how a run is computed (the answer is the same
either way); an engine is a serving engine (``--eviction vllm|sglang``). The old ``--engine``
spelling of the backend flags stays one release as a hidden alias that says it is going."""

from __future__ import annotations

import pytest

from pyverify.cli import build_parser

from .conftest import REPO

INSTANCE = str(REPO / "instances" / "lab-512x32x16.json")


@pytest.mark.parametrize(
    "command, value",
    [("simulate", "python"), ("mrc", "python"), ("budgets", "python"), ("replay", "python")],
)
def test_the_old_spelling_still_works_and_says_it_is_going(capsys, command, value):
    parser = build_parser()
    extra = ["--kv-bytes-per-token", "1000"] if command == "budgets" else []
    new = parser.parse_args([command, INSTANCE, "--backend", value, *extra])
    assert capsys.readouterr().err == ""
    old = parser.parse_args([command, INSTANCE, "--engine", value, *extra])
    assert old.backend == new.backend == value
    err = capsys.readouterr().err
    assert "--engine is deprecated" in err and "use --backend" in err and err.count("\n") == 1


@pytest.mark.parametrize("command", ["simulate", "mrc", "budgets", "replay"])
def test_help_names_the_backend_and_hides_the_old_spelling(capsys, command):
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = capsys.readouterr().out
    assert "--backend" in text and "--engine" not in text


def test_a_bad_value_under_the_old_spelling_is_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["simulate", INSTANCE, "--engine", "turbo"])
    assert stop.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
