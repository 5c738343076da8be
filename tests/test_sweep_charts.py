"""What ``sweep --chart`` draws: read back from the matplotlib figure before it is saved."""

from __future__ import annotations

import json

import pytest
from matplotlib.patches import Rectangle

from .helpers import run_cli

POLICIES = "round-robin,random,prefix-hash,prefix-affinity"


def conversation_trace(tmp_path):
    """Conversations over one shared first block: prefix-hash sends every request to one host."""
    from .test_mrc_cli import conversations

    path = tmp_path / "conv.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": i,
                    "input_length": 512 * len(c),
                    "output_length": 1,
                    "hash_ids": list(c),
                }
            )
            + "\n"
            for i, c in enumerate(conversations(seed=5, requests=200))
        )
    )
    return str(path)


@pytest.fixture
def drawn(monkeypatch):
    """The figures the charts would save, with their axes as drawn (the files are not written)."""
    figures = []

    def keep(figure, path):
        figure.canvas.draw()
        figures.append(
            [
                {
                    "bars": [
                        patch.get_height() for patch in axes.patches if isinstance(patch, Rectangle)
                    ],
                    "lines": [
                        (line.get_label(), list(line.get_ydata())) for line in axes.get_lines()
                    ],
                    "ylim": axes.get_ylim(),
                    "ticks": [tick.get_text() for tick in axes.get_xticklabels()],
                }
                for axes in figure.axes
            ]
        )
        return []

    monkeypatch.setattr("pyverify.reports.charts.save_figure", keep)
    return figures


def test_one_fleet_several_routings_draws_bars_with_load_beside_hit_rate(capsys, tmp_path, drawn):
    path = conversation_trace(tmp_path)
    status, out, err = run_cli(
        capsys,
        "sweep",
        path,
        "--fleets",
        "16",
        "--routing",
        POLICIES,
        "--chart",
        str(tmp_path / "r.png"),
        "--json",
    )
    assert status == 0, err
    rows = json.loads(out)["by_routing"]
    loads = json.loads(out)["max_load_ratio"]
    [[hits, load]] = drawn
    assert hits["ticks"] == load["ticks"] == POLICIES.split(",")
    assert hits["bars"] == pytest.approx(
        [rows[p][0]["per_host_hit_rate"] for p in POLICIES.split(",")]
    )
    assert load["bars"] == pytest.approx([loads[p]["16"] for p in POLICIES.split(",")])
    assert max(load["bars"]) == pytest.approx(
        16.0
    )  # prefix-hash: every request on one host, and it shows
    pooled = rows["round-robin"][0]["pooled_hit_rate"]
    assert any(
        "pooled" in label and ys == pytest.approx([pooled, pooled]) for label, ys in hits["lines"]
    )  # drawn, not only in the legend
    assert any(
        ys == pytest.approx([1.0, 1.0]) for _, ys in load["lines"]
    )  # even load, for reference
    assert hits["ylim"][1] <= 1.0


def test_single_policy_sweep_chart_stops_at_hit_rate_one(capsys, tmp_path, drawn):
    from .conftest import LAB_INSTANCE

    status, out, err = run_cli(
        capsys, "sweep", str(LAB_INSTANCE), "--chart", str(tmp_path / "s.png")
    )
    assert status == 0, err
    [[axes]] = drawn
    assert max(axes["bars"]) > 0.9 and axes["ylim"][1] <= 1.0


def test_several_fleets_several_routings_keeps_the_line_chart(capsys, tmp_path, drawn):
    path = conversation_trace(tmp_path)
    status, out, err = run_cli(
        capsys,
        "sweep",
        path,
        "--fleets",
        "2,4,16",
        "--routing",
        "round-robin,prefix-hash",
        "--chart",
        str(tmp_path / "m.png"),
    )
    assert status == 0, err
    [[axes]] = drawn
    assert (
        any("pooled" in label and len(ys) == 3 for label, ys in axes["lines"])
        and axes["ylim"][1] <= 1.0
    )
