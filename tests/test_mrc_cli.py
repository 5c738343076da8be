"""``pyverify mrc`` as a user reads it: what its LRU is, the capacity for a target hit rate, aligned columns."""

from __future__ import annotations

import json

import pytest

from pyverify.cli import build_parser

from .helpers import run_cli

ENGINE_NOTE = "chain-order LRU (not an engine's leaf-first LRU)"


def trace(tmp_path, lines=None):
    """A small Mooncake trace: a shared system prompt and a few conversations that grow."""
    lines = lines or [[1, 2], [1, 3], [1, 2, 4], [1, 3, 5], [1, 2, 4, 6], [1, 7], [1, 3, 5, 8], [1, 2]]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"timestamp": i, "input_length": 512 * len(ids), "output_length": 1, "hash_ids": ids}) + "\n"
                            for i, ids in enumerate(lines)))
    return str(path)


def mrc_help() -> str:
    parser = build_parser()
    sub = next(action for action in parser._actions if hasattr(action, "choices") and action.choices and "mrc" in action.choices)
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
    assert " ".join(mrc_help().split()).count("not an engine's leaf-first LRU") >= 2  # the command list, and mrc --help

    drawn = {}

    def fake_chart(curves, ceiling, path, title, xlabel):  # the chart's labels, without drawing it
        drawn.update(labels=[label for label, _, _ in curves], title=title)
        return []

    monkeypatch.setattr("pyverify.commands.traces.mrc_chart", fake_chart)
    status, out, err = run_cli(capsys, "mrc", path, "--policy", "lru,opt", "--chart", str(tmp_path / "c.png"))
    assert status == 0, err
    assert ENGINE_NOTE in drawn["title"] and ENGINE_NOTE in drawn["labels"][0]
