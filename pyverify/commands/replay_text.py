"""The text output of ``pyverify replay``: the bounds, one line per run, per-host load and bytes moved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from pyverify.api.replay import MOONCAKE_GLOBAL_GAIN, local_against_global

if TYPE_CHECKING:
    from pyverify.api.replay import Bounds


def print_bounds(bound: Bounds) -> None:
    references = bound.references
    print(
        f"  block references {references}; floor (references - distinct) {bound.floor_hits} hits = "
        f"{bound.floor_hits / references:.4f}"
    )
    if bound.min_pool_blocks is not None:
        print(
            f"  one pool of {bound.min_pool_blocks} blocks (the fleet's GPU memory): MIN {bound.min_pooled_hits} hits = "
            f"{bound.min_pooled_hits / references:.4f}; forced-admission optimum {bound.forced_hits} hits = "
            f"{bound.forced_hits / references:.4f}"
        )


def print_local_against_global(pairs: Sequence[dict]) -> None:
    if not pairs:
        return
    for timed in (True, False):
        chosen = [pair for pair in pairs if pair["timed"] == timed]
        if chosen:
            ratios = ", ".join(
                f"{pair['router']} {pair['global_over_local']:.2f}x"
                if pair["global_over_local"] is not None
                else f"{pair['router']} - (local 0)"
                for pair in chosen
            )
            print(
                f"  global pool / local DRAM hit rate, {'timed' if timed else 'untimed'}: {ratios}"
            )
    paper = ", ".join(f"{gain}x ({trace})" for trace, gain in MOONCAKE_GLOBAL_GAIN.items())
    print(
        f"  the Mooncake paper (FAST'25, 5.3.2) reports {paper} for its own system: its scheduler, replication "
        "and timing differ from this model"
    )


def print_runs(summaries: Sequence[dict], bound: Bounds, compare: bool) -> None:
    print_bounds(bound)
    timed = any(summary["timed"] for summary in summaries)
    lead = f"{'timing':>8} {'tiers':>13} " if compare else ""
    header = (
        f"{lead}{'router':>16} {'gpu hr':>7} {'host hr':>7} {'pool hr':>7} {'hit rate':>8} {'recomputed':>10} "
        f"{'to floor':>8} {'to MIN':>7} {'to forced':>9} {'gpu to routed forced':>20}"
    )
    if timed:
        header += f" {'TTFT p50':>9} {'p90':>8} {'p99':>8} {'mean':>8} {'queue mean':>10} {'queue p99':>9}"
    print(header + f" {'max load':>8} {'max queue':>9}")
    for summary in summaries:
        rates = summary["hit_rate_by_tier"]
        lead = (
            f"{'timed' if summary['timed'] else 'untimed':>8} {summary['tiers']:>13} "
            if compare
            else ""
        )
        line = (
            f"{lead}{summary['router']:>16} {rates['gpu']:>7.4f} {rates['host']:>7.4f} {rates['pool']:>7.4f} "
            f"{summary['hit_rate']:>8.4f} {summary['recomputed_blocks']:>10} {summary['below_floor_blocks']:>8} "
            f"{summary['below_min_pooled_blocks']:>7} {summary['below_forced_blocks']:>9} "
            f"{summary['gpu_below_forced_routed_blocks']:>20}"
        )
        if timed:
            if summary["timed"]:
                ttft, queue = summary["ttft_s"], summary["queueing_s"]
                line += (
                    f" {ttft['p50']:>8.3f}s {ttft['p90']:>7.3f}s {ttft['p99']:>7.3f}s {ttft['mean']:>7.3f}s "
                    f"{queue['mean']:>9.3f}s {queue['p99']:>8.3f}s"
                )
            else:
                line += f" {'-':>9} {'-':>8} {'-':>8} {'-':>8} {'-':>10} {'-':>9}"
        print(
            line + f" {summary['load']['max_load_ratio']:>8.3f} {summary['load']['max_queue']:>9}"
        )
    if not compare:
        print_details(summaries)
    print_local_against_global(local_against_global(summaries))
    print(
        "  'to floor' / 'to MIN' / 'to forced': hit blocks short of each bound (negative: above it; host DRAM and the pool "
        "are memory beyond the fleet's GPUs); 'gpu to routed forced': GPU hit blocks short of the forced-admission "
        "optimum of the same hosts under the run's own routing"
    )


def print_details(summaries: Sequence[dict]) -> None:
    for summary in summaries:
        load = summary["load"]
        busy = ""
        if summary["timed"]:
            busiest = max(
                summary["hosts"], key=lambda host: (host["prefill_busy_s"], -host["host"])
            )
            busy = f"; most prefill time: host {busiest['host']}, {busiest['prefill_busy_s']:.1f} s"
        peak = ""
        if summary["timed"] and summary["peak_load"]["host"] is not None:
            most = summary[
                "peak_load"
            ]  # exact, from every arrival and end (load_over_time samples)
            peak = (
                f"; load peaks at {most['requests']} requests (running + queued; host {most['host']}, "
                f"{most['at_s']:.0f} s)"
            )
        print(
            f"  {summary['router']}: requests per host {load['min_requests']}..{load['max_requests']}, "
            f"longest queue {load['max_queue']}{busy}{peak}"
        )
    for summary in summaries:
        moved = summary["moved"]
        parts = [
            f"{source}->{target} {moved[f'{source}_to_{target}_blocks']} blocks "
            f"({moved[f'{source}_to_{target}_bytes'] / 2**30:.1f} GiB)"
            for source, target, present in (
                ("host", "gpu", summary["host_capacity"] is not None),
                ("gpu", "host", summary["host_capacity"] is not None),
                ("pool", "gpu", summary["pool_capacity"] is not None),
                ("gpu", "pool", summary["pool_capacity"] is not None),
            )
            if present
        ]
        if parts:
            print(f"  {summary['router']}: moved " + ", ".join(parts))
