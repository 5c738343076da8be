"""Charts people would rather look at than tables (PNG and SVG, matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pyverify.errors import UserError
from pyverify.fileio import atomic_path

CHART_SUFFIXES = (".png", ".svg")


def chart_targets(path: str | Path) -> list[Path]:
    """The files a chart path names: ``x.png`` or ``x.svg`` alone, or both for a bare stem."""
    path = Path(path)
    if path.suffix.lower() in CHART_SUFFIXES:
        return [path]
    if path.suffix:
        raise UserError(f"{path}: chart: unsupported file type {path.suffix!r}; use .png, .svg, or no suffix for both")
    return [path.with_suffix(suffix) for suffix in CHART_SUFFIXES]


def save_figure(figure, path: str | Path) -> list[Path]:
    """Write ``figure`` atomically to every target of ``path``; return the files written."""
    written = []
    for target in chart_targets(path):
        with atomic_path(target, suffix=target.suffix) as tmp:
            figure.savefig(tmp, format=target.suffix[1:], dpi=150, bbox_inches="tight")
        written.append(target)
    return written


def fleet_sweep_chart(rows: Sequence, path: str | Path, title: str) -> list[Path]:
    """Hit rate against fleet size: solid bars pooled, hollow bars per-host (as in the seed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [str(row.fleet_size) for row in rows]
    positions = range(len(rows))
    width = 0.38
    figure, axes = plt.subplots(figsize=(7, 4))
    pooled = axes.bar([p - width / 2 for p in positions], [row.pooled_hit_rate for row in rows], width,
                      color="#1f4e79", edgecolor="#1f4e79", label="one pooled cache")
    per_host = axes.bar([p + width / 2 for p in positions], [row.per_host_hit_rate for row in rows], width,
                        facecolor="none", edgecolor="#1f4e79", linewidth=1.5, label="a separate cache on each server")
    for bars in (pooled, per_host):
        axes.bar_label(bars, fmt="%.4f", fontsize=8, padding=2)
    axes.set_xticks(list(positions), labels)
    axes.set_xlabel("hosts in the fleet")
    axes.set_ylabel("hit rate (hits / block references)")
    axes.set_ylim(0, 1.22)
    axes.set_title(title, fontsize=10)
    axes.legend(loc="upper center", ncol=2, fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)
