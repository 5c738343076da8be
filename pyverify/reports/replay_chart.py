"""``pyverify replay --chart``: hit rate by tier and time to first token, one row per run.

Rows, not columns: ``--compare`` draws 30-odd runs, whose names (router, tiers,
timing) read only as horizontal labels, with each value at its bar's end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pyverify.reports.charts import clear_of_lines, save_figure

#: Inches a run's row takes (its label's line of text, with air between rows).
ROW_INCHES = 0.3


def run_names(summaries: Sequence[dict]) -> list[str]:
    """A run's row label: its router, with its tiers and timing when the runs differ in those."""
    if len({(s["timed"], s["tiers"]) for s in summaries}) == 1:
        return [summary["router"] for summary in summaries]
    return [f"{s['router']}, {s['tiers']}{'' if s['timed'] else ', untimed'}" for s in summaries]


def replay_chart(
    summaries: Sequence[dict], bounds: dict, path: str | Path, title: str
) -> list[Path]:
    """Top: GPU, host-DRAM and pool hit rate stacked per run, the total at the bar's end, with the floor,
    MIN and the forced optimum as lines. Below (when some run is timed): TTFT p50, p90 and p99 of the
    timed runs only (an untimed run has no TTFT; the panel says how many it leaves out)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = run_names(summaries)
    timed = [(name, s) for name, s in zip(names, summaries) if "ttft_s" in s]
    rows = [len(summaries)] + ([len(timed)] if timed else [])
    height = ROW_INCHES * sum(rows) + 1.2 * len(rows) + 0.4
    figure, panels = plt.subplots(
        len(rows),
        1,
        figsize=(9, height),
        squeeze=False,
        gridspec_kw={"height_ratios": [count + 3 for count in rows]},
    )
    hits = panels[0][0]
    positions = list(range(len(summaries)))
    gpu = [s["hit_rate_by_tier"]["gpu"] for s in summaries]
    host = [s["hit_rate_by_tier"]["host"] for s in summaries]
    pool = [s["hit_rate_by_tier"]["pool"] for s in summaries]
    hits.barh(positions, gpu, 0.7, color="#1f4e79", label="GPU hits")
    hits.barh(positions, host, 0.7, left=gpu, color="#4f81bd", label="host DRAM hits")
    ends = hits.barh(
        positions,
        pool,
        0.7,
        left=[g + h for g, h in zip(gpu, host)],
        color="#8fb3d9",
        label="pool hits",
    )
    lines = [bounds["floor_hit_rate"]]
    hits.axvline(
        bounds["floor_hit_rate"],
        color="black",
        linestyle="--",
        linewidth=1,
        label="floor: references - distinct",
    )
    if bounds["min_pool_blocks"] is not None:
        lines += [bounds["min_pooled_hit_rate"], bounds["forced_hit_rate"]]
        hits.axvline(
            bounds["min_pooled_hit_rate"],
            color="#b03a2e",
            linestyle=":",
            linewidth=1.5,
            label=f"MIN, one pool of {bounds['min_pool_blocks']} blocks",
        )
        hits.axvline(
            bounds["forced_hit_rate"],
            color="#7d3c98",
            linestyle="-.",
            linewidth=1,
            label="forced-admission optimum, same pool",
        )
    # Room past the longest bar and the lines for a value label, moved past a line if need be.
    hits.set_xlim(0, max([1e-9, *lines, *(s["hit_rate"] for s in summaries)]) * 1.3)
    labels = hits.bar_label(
        ends, labels=[f"{s['hit_rate']:.3f}" for s in summaries], padding=3, fontsize=7
    )
    hits.set_yticks(positions, names, fontsize=7)
    hits.set_ylim(len(summaries) - 0.5, -0.5)  # the first run on top
    hits.set_xlabel("hit rate (hits / block references)")
    hits.legend(
        loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False
    )  # beside: clear of rows
    hits.spines[["top", "right"]].set_visible(False)
    if timed:
        draw_ttft(panels[1][0], timed, len(summaries) - len(timed))
    figure.suptitle(title, fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.4 / height))  # the title's line above the panels
    clear_of_lines(hits, labels, lines, "x")
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


def draw_ttft(axes, timed: Sequence[tuple[str, dict]], untimed: int) -> None:
    """p50, p90 and p99 as three thin bars in each timed run's row; p50 and p99 written at the row's end."""
    positions = list(range(len(timed)))
    thickness = 0.26
    longest = max(max(s["ttft_s"][key] for key in ("p50", "p90", "p99")) for _, s in timed)
    for offset, (key, shade) in enumerate(
        (("p50", "#1f4e79"), ("p90", "#4f81bd"), ("p99", "#8fb3d9"))
    ):
        axes.barh(
            [p + (offset - 1) * thickness for p in positions],
            [s["ttft_s"][key] for _, s in timed],
            thickness,
            color=shade,
            label=f"TTFT {key}",
        )
    for position, (_, s) in zip(positions, timed):
        ttft = s["ttft_s"]
        end = max(ttft["p50"], ttft["p90"], ttft["p99"])
        axes.annotate(
            f"p50 {ttft['p50']:.2f} s, p99 {ttft['p99']:.2f} s",
            (end, position),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    axes.set_xlim(0, max(longest, 1e-9) * 1.45)
    axes.set_yticks(positions, [name for name, _ in timed], fontsize=7)
    axes.set_ylim(len(timed) - 0.5, -0.5)
    axes.set_xlabel("time to first token (s)")
    note = (
        f"; {untimed} untimed run{'s' if untimed != 1 else ''} (no TTFT) left out"
        if untimed
        else ""
    )
    axes.set_title(f"time to first token, timed runs{note}", fontsize=8)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
