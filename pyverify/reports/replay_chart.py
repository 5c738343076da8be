"""``pyverify replay --chart``: hit rate by tier and time to first token, one group of bars per router."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pyverify.reports.charts import save_figure


def replay_chart(summaries: Sequence[dict], bounds: dict, path: str | Path, title: str) -> list[Path]:
    """Left: GPU, host-DRAM and pool hit rate stacked per run, with the floor, MIN and the forced optimum as lines.
    Right (when some run is timed): TTFT p50, p90 and p99 per run (untimed runs: no bar)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = any("ttft_s" in summary for summary in summaries)
    routers = [summary["router"] if len({(s["timed"], s["tiers"]) for s in summaries}) == 1 else
               f"{summary['router']}, {summary['tiers']}{'' if summary['timed'] else ', untimed'}" for summary in summaries]
    positions = list(range(len(routers)))
    many = len(summaries) > 4  # --compare: one bar per (timing, tiers, router), labels turned upright
    width = max(5.5, 0.45 * len(summaries)) if many else 5.5
    figure, panels = plt.subplots(1, 2 if timed else 1, figsize=(width * (2 if timed else 1), 6 if many else 4), squeeze=False)
    rotation = 90 if many else 0
    hits = panels[0][0]
    gpu = [summary["hit_rate_by_tier"]["gpu"] for summary in summaries]
    host = [summary["hit_rate_by_tier"]["host"] for summary in summaries]
    pool = [summary["hit_rate_by_tier"]["pool"] for summary in summaries]
    hits.bar(positions, gpu, 0.6, color="#1f4e79", label="GPU hits")
    hits.bar(positions, host, 0.6, bottom=gpu, color="#4f81bd", label="host DRAM hits")
    stacked = hits.bar(positions, pool, 0.6, bottom=[g + h for g, h in zip(gpu, host)], color="#8fb3d9", label="pool hits")
    hits.bar_label(stacked, labels=[f"{s['hit_rate']:.3f}" for s in summaries], label_type="center", fontsize=6 if many else 8, color="black", rotation=rotation)
    hits.axhline(bounds["floor_hit_rate"], color="black", linestyle="--", linewidth=1, label="floor: references - distinct")
    if bounds["min_pool_blocks"] is not None:
        hits.axhline(bounds["min_pooled_hit_rate"], color="#b03a2e", linestyle=":", linewidth=1.5,
                     label=f"MIN, one pool of {bounds['min_pool_blocks']} blocks")
        hits.axhline(bounds["forced_hit_rate"], color="#7d3c98", linestyle="-.", linewidth=1,
                     label="forced-admission optimum, same pool")
    hits.set_xticks(positions, routers, fontsize=7 if many else 8, rotation=rotation)
    hits.set_ylabel("hit rate (hits / block references)")
    hits.set_ylim(0, 1.15)
    hits.legend(loc="upper left", fontsize=7, frameon=False)
    hits.spines[["top", "right"]].set_visible(False)
    if timed:
        ttft = panels[0][1]
        width = 0.26
        for offset, (key, shade) in enumerate((("p50", "#1f4e79"), ("p90", "#4f81bd"), ("p99", "#8fb3d9"))):
            ttft.bar([p + (offset - 1) * width for p in positions], [summary["ttft_s"][key] if "ttft_s" in summary else 0.0 for summary in summaries],
                     width, color=shade, label=f"TTFT {key}")
        ttft.set_xticks(positions, routers, fontsize=7 if many else 8, rotation=rotation)
        ttft.set_ylabel("time to first token (s)")
        ttft.legend(fontsize=7, frameon=False)
        ttft.spines[["top", "right"]].set_visible(False)
    figure.suptitle(title, fontsize=10)
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)
