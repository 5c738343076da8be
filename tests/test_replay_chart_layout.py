"""The replay and sweep charts' layout, read from the figures as drawn: no text lies on another, no
reference line runs through a value label, and the TTFT panel holds only the runs that have a TTFT.

``replay --compare --chart`` drew 32 bars with labels turned upright and tiny, values written over
the bars and 16 empty TTFT slots for the untimed runs; the sweep chart's 1.0 line ran through the
"1.00x" label of a bar at even load.
"""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace

import pytest
from matplotlib.text import Text

ROUTERS = ["round-robin", "random", "least-loaded", "prefix-affinity"]
TIERS = ["gpu", "gpu+host", "gpu+pool", "gpu+host+pool"]


@pytest.fixture
def drawn(monkeypatch):
    """The figures the charts saved and then closed, kept open to be read (drawn again, at screen dpi)."""
    figures = []

    def keep(figure):
        figure.canvas.draw()
        figures.append(figure)

    monkeypatch.setattr("matplotlib.pyplot.close", keep)
    return figures


def compare_runs(seed: int) -> list[dict]:
    """32 runs as ``--compare`` makes them: 4 routers x 4 tier sets, timed and untimed."""
    rng = random.Random(seed)
    runs = []
    for timed, tiers, router in itertools.product((True, False), TIERS, ROUTERS):
        gpu = rng.uniform(0.05, 0.55)
        host = rng.uniform(0, 0.1) if "host" in tiers else 0.0
        pool = rng.uniform(0, 0.1) if "pool" in tiers else 0.0
        run = {
            "router": router,
            "tiers": tiers,
            "timed": timed,
            "hit_rate": gpu + host + pool,
            "hit_rate_by_tier": {"gpu": gpu, "host": host, "pool": pool},
        }
        if timed:
            run["ttft_s"] = {
                "p50": rng.uniform(0, 0.5),
                "p90": rng.uniform(0.5, 3),
                "p99": rng.uniform(3, 5),
            }
        runs.append(run)
    return runs


def texts(figure):
    renderer = figure.canvas.get_renderer()
    return [
        (text.get_text(), text.get_window_extent(renderer))
        for text in figure.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]


def overlapping(figure) -> list[tuple[str, str]]:
    boxes = texts(figure)
    return [
        (a, b)
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if box_a.x0 < box_b.x1 - 0.5
        and box_b.x0 < box_a.x1 - 0.5
        and box_a.y0 < box_b.y1 - 0.5
        and box_b.y0 < box_a.y1 - 0.5
    ]


def crossed_labels(figure, axes, labels, axis: str) -> list[str]:
    """Value labels a reference line (a two-point line across the axes) runs through."""
    renderer = figure.canvas.get_renderer()
    crossed = []
    for line in axes.get_lines():
        data = line.get_xdata() if axis == "x" else line.get_ydata()
        if len(set(data)) != 1:
            continue
        point = (data[0], 0.0) if axis == "x" else (0.0, data[0])
        at = axes.transData.transform(point)[0 if axis == "x" else 1]
        for label in labels:
            box = label.get_window_extent(renderer)
            low, high = (box.x0, box.x1) if axis == "x" else (box.y0, box.y1)
            if low - 1 <= at <= high + 1:  # a pixel of air at least: the line has a width
                crossed.append(label.get_text())
    return crossed


@pytest.mark.parametrize("seed", [1, 2])
def test_compare_chart_of_32_runs_is_one_row_each_and_nothing_overlaps(drawn, tmp_path, seed):
    from pyverify.reports.replay_chart import replay_chart

    runs = compare_runs(seed)
    # a run right at the lines: its value label would sit on them
    runs[0]["hit_rate_by_tier"] = {"gpu": 0.6, "host": 0.0, "pool": 0.0}
    runs[0]["hit_rate"] = 0.6
    bounds = {
        "floor_hit_rate": 0.64,
        "min_pool_blocks": 16000,
        "min_pooled_hit_rate": 0.605,
        "forced_hit_rate": 0.62,
    }
    replay_chart(runs, bounds, tmp_path / "x.png", "32 runs")
    [figure] = drawn
    hits, ttft = figure.axes
    assert overlapping(figure) == []
    assert [tick.get_rotation() for tick in hits.get_yticklabels()] == [0.0] * 32
    assert len(hits.get_yticklabels()) == 32
    timed = [f"{r['router']}, {r['tiers']}" for r in runs if r["timed"]]
    assert [tick.get_text() for tick in ttft.get_yticklabels()] == timed
    assert "16 untimed runs" in ttft.get_title()
    values = [text for text in hits.texts if text.get_text().startswith("0.")]
    assert len(values) == 32 and crossed_labels(figure, hits, values, "x") == []


def test_sweep_chart_reference_lines_cross_no_value_label(drawn, tmp_path):
    from pyverify.reports.charts import routing_load_chart

    rows = {
        name: [SimpleNamespace(per_host_hit_rate=rate, pooled_hit_rate=0.6396, max_load_ratio=load)]
        for name, rate, load in (
            ("round-robin", 0.1357, 0.99),
            ("random", 0.1236, 1.14),
            ("prefix-hash", 0.6396, 1.0),
            ("prefix-affinity", 0.632, 1.05),
        )
    }
    routing_load_chart(
        rows, tmp_path / "x.png", "sweep"
    )  # bars at and just under the pooled line and even load
    [figure] = drawn
    hits, load = figure.axes
    assert crossed_labels(figure, hits, hits.texts, "y") == []
    assert crossed_labels(figure, load, load.texts, "y") == []
