"""Charts for the cost model: net time saved against pool bandwidth, and TTFT distributions.

Both panels show *estimates* (:mod:`pyverify.cost.estimate`), and say so in their titles.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from pyverify.reports.charts import save_figure
from pyverify.cost.estimate import NEVER_PAYS, NO_FETCHES, BreakEven, Estimate, TokenSplit, estimate

#: Published bandwidths drawn for reference: (GB/s, label). Sources in pyverify.cost.params.
REFERENCE_BANDWIDTHS: tuple[tuple[float, str], ...] = (
    (87.0, "Mooncake TE, 4x200 Gbps"),
    (190.0, "Mooncake TE, 8x400 Gbps"),
)


def bandwidth_grid(be: BreakEven, assumed_gb_s: float, points: int = 200) -> np.ndarray:
    """Log-spaced bandwidths covering the break-even, the assumed value and the references."""
    marks = [assumed_gb_s] + [bw for bw, _ in REFERENCE_BANDWIDTHS]
    if be.bandwidth_gb_s is not None:
        marks.append(be.bandwidth_gb_s)
    lo = min(marks) / 3
    hi = max(marks) * 3
    return np.geomspace(lo, hi, points)


def net_curve(split: TokenSplit, est: Estimate, bandwidths: np.ndarray) -> np.ndarray:
    """Total net saving (s) at each bandwidth, by the same formulas as the report."""
    return np.array(
        [
            estimate(split, replace(est.params, pool_bandwidth_gb_s=float(bw))).net_total
            for bw in bandwidths
        ]
    )


def draw_bandwidth(axes, split: TokenSplit, est: Estimate, be: BreakEven) -> None:
    bandwidths = bandwidth_grid(be, est.params.pool_bandwidth_gb_s)
    net = net_curve(split, est, bandwidths)
    axes.plot(
        bandwidths, net, color="#1f4e79", linewidth=2, label="net time saved by the pool (estimate)"
    )
    axes.axhline(0, color="black", linewidth=0.8)
    for bw, label in REFERENCE_BANDWIDTHS:
        axes.axvline(bw, color="#999999", linewidth=0.8, linestyle=":")
        # Labels sit at the foot of their lines, rotated: the net curve is high at these
        # bandwidths, so nothing crosses them there (the legend is at the upper left).
        axes.annotate(
            label,
            (bw, 0.02),
            xycoords=("data", "axes fraction"),
            rotation=90,
            fontsize=6,
            ha="right",
            va="bottom",
            color="#666666",
        )
    axes.axvline(
        est.params.pool_bandwidth_gb_s,
        color="#2e7d32",
        linewidth=1,
        linestyle="--",
        label=f"assumed: {est.params.pool_bandwidth_gb_s:g} GB/s",
    )
    if be.bandwidth_gb_s is not None:
        axes.plot(
            [be.bandwidth_gb_s],
            [0],
            marker="o",
            color="#c62828",
            zorder=5,
            label=f"break-even: {be.bandwidth_gb_s:.3g} GB/s",
        )
    elif be.status == NEVER_PAYS:
        axes.text(
            0.02,
            0.05,
            "never pays: fixed latency exceeds prefill saved",
            transform=axes.transAxes,
            color="#c62828",
            fontsize=8,
        )
    elif be.status == NO_FETCHES:
        axes.text(
            0.02,
            0.92,
            "the pool supplies nothing: no difference",
            transform=axes.transAxes,
            fontsize=8,
        )
    axes.set_xscale("log")
    top = float(np.max(np.abs(net))) if be.status == NO_FETCHES else max(float(net[-1]), 1e-9)
    if be.status != NO_FETCHES:
        # linear axis, clipped below: the curve falls steeply under the break-even (net ~ -1/B)
        axes.set_ylim(-1.5 * abs(top), 1.15 * abs(top))
    axes.set_xlabel("pool bandwidth per fetch (GB/s, log scale)")
    axes.set_ylabel("net prefill time saved, all requests (s)")
    axes.set_title("Net time saved against pool bandwidth (model estimate)", fontsize=9)
    axes.legend(fontsize=7, loc="upper left", frameon=False)
    axes.spines[["top", "right"]].set_visible(False)


def _ecdf(values_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values = np.sort(np.asarray(values_s, dtype=float)) * 1000.0
    return values, np.arange(1, len(values) + 1) / len(values)


def draw_ttft(axes, per_host: np.ndarray | None, pooled: np.ndarray | None) -> None:
    for values, label, style, color in (
        (per_host, "a separate cache on each server", "--", "#c77c02"),
        (pooled, "local caches plus a shared pool", "-", "#1f4e79"),
    ):
        if values is None or len(values) == 0:
            continue
        x, y = _ecdf(values)
        median = float(np.median(values)) * 1000.0
        axes.step(
            x,
            y,
            where="post",
            linestyle=style,
            color=color,
            linewidth=1.6,
            label=f"{label} (median {median:.0f} ms)",
        )
    axes.set_xscale("symlog", linthresh=1.0)
    axes.set_xlabel("estimated time to first token (ms, symlog scale)")
    axes.set_ylabel("share of requests at or below")
    axes.set_ylim(0, 1.02)
    axes.set_title("Estimated TTFT distribution (service time only, no queueing)", fontsize=9)
    axes.legend(fontsize=7, loc="lower right", frameon=False)
    axes.spines[["top", "right"]].set_visible(False)


def cost_chart(
    path: str | Path,
    title: str,
    split: TokenSplit,
    est: Estimate,
    be: BreakEven | None,
    show_pooled: bool = True,
    show_per_host: bool = True,
) -> list[Path]:
    """Write the cost chart: the bandwidth panel (when the pool is modelled) and the TTFT panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if (show_pooled and be is not None) else 1
    figure, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.2), squeeze=False)
    column = 0
    if panels == 2:
        draw_bandwidth(axes[0][0], split, est, be)
        column = 1
    draw_ttft(
        axes[0][column],
        est.ttft_per_host if show_per_host else None,
        est.ttft_pooled if show_pooled else None,
    )
    figure.suptitle(title, fontsize=10)
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


__all__: Sequence[str] = (
    "REFERENCE_BANDWIDTHS",
    "bandwidth_grid",
    "cost_chart",
    "draw_bandwidth",
    "draw_ttft",
    "net_curve",
)
