"""Charts people would rather look at than tables (PNG and SVG, matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pyverify.errors import UserError
from pyverify.fileio import atomic_outputs, check_output_file, refuse_folder_name

CHART_SUFFIXES = (".png", ".svg")


def chart_targets(path: str | Path) -> list[Path]:
    """The files a chart path names: ``x.png`` or ``x.svg`` alone, or both for a bare stem."""
    path = Path(path)
    if path.suffix.lower() in CHART_SUFFIXES:
        return [path]
    if path.suffix:
        raise UserError(
            f"{path}: chart: unsupported file type {path.suffix!r}; use .png, .svg, or no suffix for both"
        )
    return [path.with_suffix(suffix) for suffix in CHART_SUFFIXES]


def save_figure(figure, path: str | Path) -> list[Path]:
    """Write ``figure`` atomically to every target of ``path``; return the files written."""
    targets = chart_targets(path)
    with atomic_outputs(targets) as temporaries:  # PNG and SVG land together or not at all
        for tmp, target in zip(temporaries, targets):
            figure.savefig(tmp, format=target.suffix[1:], dpi=150, bbox_inches="tight")
    return targets


def check_chart_targets(path: str | Path) -> list[Path]:
    """Refuse, before any work, a chart path whose files cannot be written (see :func:`check_output_file`)."""
    refuse_folder_name(path)  # 'charts/' would otherwise name charts.png and charts.svg
    return [check_output_file(target) for target in chart_targets(path)]


def fleet_sweep_chart(rows: Sequence, path: str | Path, title: str) -> list[Path]:
    """Hit rate against fleet size: solid bars pooled, hollow bars per-host (as in the seed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [str(row.fleet_size) for row in rows]
    positions = range(len(rows))
    width = 0.38
    figure, axes = plt.subplots(figsize=(7, 4))
    pooled = axes.bar(
        [p - width / 2 for p in positions],
        [row.pooled_hit_rate for row in rows],
        width,
        color="#1f4e79",
        edgecolor="#1f4e79",
        label="one pooled cache",
    )
    per_host = axes.bar(
        [p + width / 2 for p in positions],
        [row.per_host_hit_rate for row in rows],
        width,
        facecolor="none",
        edgecolor="#1f4e79",
        linewidth=1.5,
        label="a separate cache on each server",
    )
    for bars in (pooled, per_host):
        axes.bar_label(bars, fmt="%.4f", fontsize=8, padding=2)
    axes.set_xticks(list(positions), labels)
    axes.set_xlabel("hosts in the fleet")
    axes.set_ylabel("hit rate (hits / block references)")
    highest = max([row.pooled_hit_rate for row in rows] + [row.per_host_hit_rate for row in rows])
    axes.set_ylim(0, hit_rate_top(highest))
    axes.set_title(title, fontsize=10)
    # Below the plot: a hit rate axis stops at 1.0, so there is no empty band above the bars to hold it.
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


def clear_of_lines(
    axes, labels: Sequence, lines: Sequence[float], axis: str, gap_points: float = 2.0
) -> None:
    """Move each value label that a reference line crosses to just past that line, away from its bar.

    ``labels`` are the annotations of ``bar_label`` (offset in points from the bar's end); ``lines`` are
    the reference lines' values on ``axis`` (``"y"``: horizontal lines over upright bars, ``"x"``:
    vertical lines over bars drawn sideways). Lines are taken in order away from the bars, so a label
    moved past one is checked against the next."""
    figure = axes.figure
    renderer = figure.canvas.get_renderer()
    along = 1 if axis == "y" else 0
    for label in labels:
        for value in sorted(lines):
            point = (0.0, value) if axis == "y" else (value, 0.0)
            at = axes.transData.transform(point)[along]
            box = label.get_window_extent(renderer)
            start, end = (box.y0, box.y1) if axis == "y" else (box.x0, box.x1)
            gap = gap_points * figure.dpi / 72
            if start - gap <= at <= end + gap:
                shift = (
                    (at + gap - start) * 72 / figure.dpi
                )  # pixels to the points the offset is in
                dx, dy = label.xyann
                label.xyann = (dx, dy + shift) if axis == "y" else (dx + shift, dy)


def hit_rate_top(highest: float) -> float:
    """The top of a hit-rate axis: room above the highest value for its label, never past 1.0."""
    return min(1.0, highest * 1.15) if highest > 0 else 1.0


def routing_load_chart(rows_by_policy: dict, path: str | Path, title: str) -> list[Path]:
    """One fleet size, several routing policies: per-host hit rate and load side by side, one bar per policy.

    Left: each policy's per-host hit rate, with the pooled cache (the same for
    every routing) as a reference line across. Right: each policy's max load
    ratio (the busiest host's requests over the even share), with 1.0, even
    load, as the reference: a routing that keeps prefixes together may do so
    by sending one host many times its share.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = list(rows_by_policy)
    rows = [rows_by_policy[policy][0] for policy in policies]
    positions = list(range(len(policies)))
    figure, (hits, load) = plt.subplots(1, 2, figsize=(10, 4.6), gridspec_kw={"wspace": 0.3})
    bars = hits.bar(
        positions,
        [row.per_host_hit_rate for row in rows],
        0.6,
        color="#7fa7cf",
        edgecolor="#1f4e79",
        label="per-host caches (this routing)",
    )
    hit_labels = hits.bar_label(bars, fmt="%.4f", fontsize=8, padding=2)
    pooled = rows[0].pooled_hit_rate
    hits.axhline(
        pooled,
        color="#1f4e79",
        linestyle="--",
        linewidth=1.6,
        label=f"one pooled cache, any routing ({pooled:.4f})",
    )
    hits.set_ylim(0, hit_rate_top(max([pooled] + [row.per_host_hit_rate for row in rows])))
    hits.set_ylabel("hit rate (hits / block references)")
    hits.set_title("hit rate", fontsize=9)
    bars = load.bar(
        positions,
        [row.max_load_ratio for row in rows],
        0.6,
        color="#e8a87c",
        edgecolor="#a0522d",
        label="busiest host's requests / even share",
    )
    load_labels = load.bar_label(bars, fmt="%.2fx", fontsize=8, padding=2)
    load.axhline(
        1.0, color="black", linestyle=":", linewidth=1.2, label="1.0 = perfectly even load"
    )
    load.set_ylim(0, max(row.max_load_ratio for row in rows) * 1.2)
    load.set_ylabel("max load ratio")
    load.set_title("load on the busiest host", fontsize=9)
    for axes in (hits, load):
        axes.set_xticks(positions, policies, rotation=15)
        axes.set_xlabel("routing policy")
        axes.legend(
            fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1
        )
        axes.spines[["top", "right"]].set_visible(False)
        axes.grid(alpha=0.3, axis="y")
    figure.suptitle(title, fontsize=10)
    # A reference line at a bar's height ran through its value label: each such label goes above the line.
    clear_of_lines(hits, hit_labels, [pooled], "y")
    clear_of_lines(load, load_labels, [1.0], "y")
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


def policy_fleet_chart(rows_by_policy: dict, path: str | Path, title: str) -> list[Path]:
    """Hit rate against fleet size, one per-host line per routing policy, pooled beside them.

    The pooled line is drawn once: a pooled cache does not depend on routing
    (uncapacitated, or with the pool sized F x the per-host capacity).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axes = plt.subplots(figsize=(7.5, 4.6))
    first = next(iter(rows_by_policy.values()))
    sizes = [row.fleet_size for row in first]
    # The pooled line is wide and pale so that per-host lines that coincide with
    # it (a routing that keeps each prefix on one host) stay visible on top.
    axes.plot(
        sizes,
        [row.pooled_hit_rate for row in first],
        color="#1f4e79",
        linewidth=7,
        alpha=0.25,
        solid_capstyle="round",
        label="one pooled cache (any routing)",
        zorder=1,
    )
    markers = "ovD^<>ph*"
    offsets = np.linspace(-0.06, 0.06, len(rows_by_policy)) if len(rows_by_policy) > 1 else [0.0]
    highest = max(row.pooled_hit_rate for row in first)
    for index, (policy, rows) in enumerate(rows_by_policy.items()):
        # Nudge each policy's markers sideways (in log2 units) so equal values do not hide each other.
        xs = [row.fleet_size * 2 ** offsets[index] for row in rows]
        ys = [row.per_host_hit_rate for row in rows]
        highest = max(highest, *ys)
        axes.plot(
            xs,
            ys,
            linestyle="--",
            linewidth=1.2,
            marker=markers[index % len(markers)],
            markersize=6,
            markerfacecolor="none",
            label=f"per-host caches, {policy} routing",
            zorder=2 + index,
        )
    axes.set_xscale("log", base=2)
    axes.set_xticks(sizes, [str(size) for size in sizes])
    axes.minorticks_off()
    axes.set_xlabel("hosts in the fleet")
    axes.set_ylabel("hit rate (hits / block references)")
    axes.set_ylim(0, hit_rate_top(highest))
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    axes.grid(alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


def mrc_chart(
    curves: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    ceiling: float,
    path: str | Path,
    title: str,
    xlabel: str,
) -> list[Path]:
    """Hit rate against cache capacity on a log axis, the uncapacitated ceiling marked (cf. Mooncake Fig. 9).

    ``curves`` holds ``(label, capacities, hit_rates)``; capacities are in the
    unit ``xlabel`` names (blocks or tokens).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.5, 4.8))
    highest = ceiling
    for label, capacities, hit_rates in curves:
        axes.plot(capacities, hit_rates, drawstyle="steps-post", linewidth=1.8, label=label)
        highest = max(highest, *hit_rates) if len(hit_rates) else highest
    axes.axhline(
        ceiling,
        color="black",
        linestyle=":",
        linewidth=1.2,
        label=f"uncapacitated ceiling {ceiling:.4f} (1 - distinct / references)",
    )
    axes.set_xscale("log")
    axes.set_xlabel(xlabel)
    axes.set_ylabel("hit rate (hits / block references)")
    # Fit the axis to the data (a per-host curve may never pass 0.15), with room above the ceiling.
    axes.set_ylim(0, min(1.0, highest * 1.12) if highest > 0 else 1.0)
    axes.set_title(title, fontsize=10)
    # Below the plot, so it never covers the ceiling line or a curve.
    axes.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1)
    axes.grid(alpha=0.3, which="both")
    axes.spines[["top", "right"]].set_visible(False)
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)
