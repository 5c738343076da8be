"""``pyverify tree``: the prefix tree's summary, drawing, and its size limit."""

from __future__ import annotations

import json

from pyverify.cli import main

SMALL = {
    "format": "pyverify.instance/1",
    "name": "small",
    "hosts": 1,
    "requests": [{"blocks": [1, 2, 3]}, {"blocks": [1, 2, 4]}, {"blocks": [5]}, {"blocks": [1, 6]}],
}


def test_summary_and_drawing(tmp_path, capsys):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    assert main(["tree", str(path), "--json", "--draw", str(tmp_path / "t.svg")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "instance": "small",
        "blocks": 6,
        "first_blocks": 2,
        "leaves": 4,
        "max_depth": 3,
        "max_children": 2,
        "shared_blocks": 2,
        "drawings": [str(tmp_path / "t.svg")],
    }
    assert "<svg" in (tmp_path / "t.svg").read_text()


def test_too_big_to_draw_prints_the_statistics_and_skips_only_the_drawing(tmp_path, capsys):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({**SMALL, "requests": [{"blocks": [i]} for i in range(300)]}))
    assert main(["tree", str(path), "--draw", str(tmp_path / "t.png")]) == 0
    out = capsys.readouterr().out
    assert "blocks             300" in out
    assert "drawing skipped: the tree has 300 blocks; --draw draws at most 200" in out
    assert not (tmp_path / "t.png").exists()
    assert main(["tree", str(path), "--draw", str(tmp_path / "t.png"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["blocks"] == 300
        and summary["drawings"] == []
        and "300 blocks" in summary["drawing_skipped"]
    )


def test_the_roots_branching_counts(tmp_path, capsys):
    """A star of openings (as the lab instance is): the widest branching is the root's."""
    path = tmp_path / "star.json"
    path.write_text(
        json.dumps({**SMALL, "requests": [{"blocks": [i]} for i in range(7)] + [{"blocks": [0]}]})
    )
    assert main(["tree", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["max_children"], summary["first_blocks"], summary["shared_blocks"]) == (7, 7, 1)
    assert main(["tree", str(path)]) == 0
    assert "the widest branching at any node, the root included" in capsys.readouterr().out
