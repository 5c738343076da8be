"""``pyverify replay``: a fleet in time, with a GPU tier per host, an optional pool tier, and routers.

The model is stated in :mod:`pyverify.fleet` (service, tiers, routers, event
loop); this module parses flags, runs one replay per router, and prints.
"""

from __future__ import annotations

import argparse
import math

from pyverify.commands.cache_options import add_kv_size_options
from pyverify.inputs.kv_models import kv_size
from pyverify.commands.input_options import add_input_options, load_with
from pyverify.commands.argtypes import chart_path, fleet_size, positive_int
from pyverify.commands.basic import INPUT_HELP, print_json, slack_value
from pyverify.commands.cache_options import positive_number
from pyverify.errors import UserError
from pyverify.fleet.routers import DEFAULT_LOAD_WEIGHT, DEFAULT_OVERLAP_WEIGHT, ROUTERS
from pyverify.fleet.service import (DEFAULT_DECODE_TOKENS_PER_S, DEFAULT_MAX_RUNNING, DEFAULT_PREFILL_TOKENS_PER_S,
                                    DEFAULT_TOKENS_PER_BLOCK, SOURCES)
from pyverify.fleet.tiers import REPLAY_EVICTIONS
from pyverify.sim.simulate import EVICTION_HELP, LRU

ORDER = 25

DESCRIPTION = (
    "Replay a trace on a fleet in time. Requests arrive at their timestamps (times --arrival-scale), are routed "
    "on arrival, wait in a FIFO queue per host and run at most --max-running at a time. Prefill time = tokens "
    "the host must compute / --prefill-tokens-per-s (plus the pool transfer for pool hits); decode time = "
    "output_length / --decode-tokens-per-s. A running request's blocks (hit or computed) are pinned in its "
    "host's GPU cache until it ends; a request starts only when they fit beside the blocks already pinned. "
    "Decode KV is not cached and not counted against any capacity. Tiers: each host's GPU cache "
    "(--capacity blocks, --eviction); with --pool-capacity, a shared pool (LRU): a GPU miss that the pool "
    "holds is a pool hit, loaded into the GPU (inserting it may evict there); every recomputed block is "
    "also written to the pool. --no-timing serves requests one at a time in file order, exactly as "
    "'simulate --model per-host'."
)


def pool_capacity(text: str):
    if text.strip().lower() in ("inf", "infinite", "unlimited"):
        return None
    return positive_int(text)


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def router_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in ROUTERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown router {(unknown or [text])[0]!r}; choose from: {', '.join(ROUTERS)}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"routers repeat in {text!r}")
    return names


def register(subparsers) -> None:
    parser = subparsers.add_parser("replay", help="replay a trace on a fleet in time: queues, GPU and pool tiers, routers, TTFT",
                                   description=DESCRIPTION)
    parser.add_argument("trace", help=INPUT_HELP + "; timed replays need a timestamp on every request")
    add_input_options(parser)
    parser.add_argument("--router", "--routing", dest="router", type=router_list, default=["round-robin"], metavar="ROUTER[,ROUTER...]",
                        help=f"router, or several to compare: {', '.join(ROUTERS)} (default: round-robin)")
    parser.add_argument("--fleet", type=fleet_size, help="hosts (default: the input's hosts, or 16 for a trace)")
    parser.add_argument("--capacity", type=positive_int, metavar="BLOCKS", help="GPU cache blocks per host (default: no limit)")
    parser.add_argument("--eviction", choices=REPLAY_EVICTIONS, default=LRU,
                        help="GPU eviction (default: lru): " + "; ".join(f"{name}: {EVICTION_HELP[name]}" for name in REPLAY_EVICTIONS))
    parser.add_argument("--pool-capacity", type=pool_capacity, default=False, metavar="N|inf",
                        help="add a shared pool tier of N blocks (LRU) or unlimited (inf); default: no pool")
    parser.add_argument("--no-timing", action="store_true",
                        help="one request at a time in file order, no clock: the model of 'simulate --model per-host'")
    parser.add_argument("--arrival-scale", type=positive_number, default=1.0, metavar="S",
                        help="arrival time = timestamp x S (S < 1 compresses the trace: more load; default: 1)")
    parser.add_argument("--prefill-tokens-per-s", type=positive_number, default=DEFAULT_PREFILL_TOKENS_PER_S, metavar="R",
                        help=f"prefill rate of one host (default: {DEFAULT_PREFILL_TOKENS_PER_S:.0f}, {SOURCES['prefill_tokens_per_s']})")
    parser.add_argument("--decode-tokens-per-s", type=positive_number, default=DEFAULT_DECODE_TOKENS_PER_S, metavar="R",
                        help=f"decode rate of one running request (default: {DEFAULT_DECODE_TOKENS_PER_S:g}, {SOURCES['decode_tokens_per_s']})")
    parser.add_argument("--max-running", type=positive_int, default=DEFAULT_MAX_RUNNING, metavar="N",
                        help=f"requests one host runs at once; more wait in a FIFO queue (default: {DEFAULT_MAX_RUNNING}, {SOURCES['max_running']})")
    # KV bytes per token, for bytes moved and pool transfer time (default: the cost model's, see SOURCES)
    add_kv_size_options(parser)
    parser.add_argument("--pool-bandwidth-gb-s", type=positive_number, metavar="GB_S",
                        help=f"pool -> GPU bandwidth (default: {SOURCES['pool_bandwidth_gb_s']})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random router (default: 0)")
    parser.add_argument("--affinity-slack", type=slack_value, default=1.25, metavar="S",
                        help="prefix-affinity load cap, as in simulate: at most ceil(S * (i+1) / F) of the first i+1 requests per host (default: 1.25)")
    parser.add_argument("--overlap-weight", type=non_negative, default=DEFAULT_OVERLAP_WEIGHT, metavar="W",
                        help=f"kv-aware score = W x GPU prefix-hit blocks - load weight x (running + queued requests) (default: {DEFAULT_OVERLAP_WEIGHT:g})")
    parser.add_argument("--load-weight", type=non_negative, default=DEFAULT_LOAD_WEIGHT, metavar="W",
                        help=f"kv-aware load weight (default: {DEFAULT_LOAD_WEIGHT:g}; both weights are an ASSUMPTION: sweep them)")
    parser.add_argument("--chart", type=chart_path, metavar="PATH", help="chart of hit rate and TTFT per router (.png, .svg, or a stem for both)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run_replay)


def service_of(args, instance):
    from dataclasses import replace

    from pyverify.fleet.service import ServiceModel

    service = ServiceModel(prefill_tokens_per_s=args.prefill_tokens_per_s, decode_tokens_per_s=args.decode_tokens_per_s,
                           max_running=args.max_running, block_tokens=instance.block_size_tokens or DEFAULT_TOKENS_PER_BLOCK)
    kv = kv_size(args.kv_model, args.kv_dtype, args.kv_bytes_per_token, getattr(args, "kv_model_config", None))
    if kv is not None:
        service = replace(service, kv_bytes_per_token=kv.bytes_per_token)
    if args.pool_bandwidth_gb_s is not None:
        service = replace(service, pool_bandwidth_gb_s=args.pool_bandwidth_gb_s)
    return service


def per_request(instance, key: str):
    return [extra.get(key) for extra in instance.extra] if instance.extra else [None] * instance.n_requests


def run_replay(args) -> int:
    from pyverify.fleet.replay import replay
    from pyverify.fleet.report import bounds, run_summary
    from pyverify.fleet.routers import Router, RouterOptions
    from pyverify.progress import progress_bar
    from pyverify.sim.routing import default_fleet

    instance = load_with(args, args.trace)
    fleet = args.fleet or default_fleet(instance)
    service = service_of(args, instance)
    arrivals = per_request(instance, "arrival_ms")
    if not args.no_timing:
        missing = next((index for index, value in enumerate(arrivals) if value is None), None)
        if missing is not None:
            raise UserError(f"{args.trace}: requests[{missing}].timestamp: a timed replay needs a timestamp on every request (or use --no-timing)")
    options = RouterOptions(seed=args.seed, slack=args.affinity_slack, overlap_weight=args.overlap_weight, load_weight=args.load_weight)
    runs = []
    with progress_bar(instance.n_requests * len(args.router), "replay", unit="request") as advance:
        for name in args.router:
            runs.append(replay(instance.chains, Router(name, fleet, options), args.capacity, args.eviction, args.pool_capacity,
                               service, arrival_ms=None if args.no_timing else arrivals,
                               input_tokens=per_request(instance, "input_tokens"), output_tokens=per_request(instance, "output_tokens"),
                               arrival_scale=args.arrival_scale, timed=not args.no_timing, progress=advance))
    bound = bounds(instance.chains, fleet, args.capacity)
    summaries = [run_summary(run, service, bound) for run in runs]
    pool_text = "no pool" if args.pool_capacity is False else ("pool unlimited" if args.pool_capacity is None else f"pool {args.pool_capacity} blocks (LRU)")
    gpu_text = "GPU uncapacitated" if args.capacity is None else f"GPU {args.capacity} blocks/host ({args.eviction})"
    timing_text = "no timing (one request at a time)" if args.no_timing else (
        f"arrivals x {args.arrival_scale:g}, prefill {service.prefill_tokens_per_s:.0f} tok/s, decode {service.decode_tokens_per_s:g} tok/s, "
        f"max {service.max_running} running/host")
    charts = []
    if args.chart:
        from pyverify.reports.replay_chart import replay_chart

        charts = replay_chart(summaries, bound.to_json(), args.chart, f"{instance.name}: {fleet} hosts, {gpu_text}, {pool_text}")
    if args.json:
        print_json({
            "instance": instance.name, "fleet_size": fleet, "capacity": args.capacity, "eviction": args.eviction,
            "pool": args.pool_capacity is not False,  # pool_capacity: blocks, "inf", or null without a pool
            "pool_capacity": None if args.pool_capacity is False else ("inf" if args.pool_capacity is None else args.pool_capacity), "timed": not args.no_timing, "arrival_scale": args.arrival_scale,
            "service": service.to_json(),
            "router_options": {"seed": args.seed, "affinity_slack": args.affinity_slack,
                               "overlap_weight": args.overlap_weight, "load_weight": args.load_weight},
            "bounds": bound.to_json(), "runs": summaries, "charts": [str(path) for path in charts],
        })
        return 0
    print(f"{instance.name}: {instance.n_requests} requests, {fleet} hosts, {gpu_text}, {pool_text}; {timing_text}")
    print(f"  block references {bound.references}; floor (references - distinct) {bound.floor_hits} hits = {bound.floor_hits / bound.references:.4f}"
          + ("" if bound.min_pool_blocks is None else
             f"; MIN with one pool of {bound.min_pool_blocks} blocks (the fleet's GPU memory) {bound.min_pooled_hits} hits = "
             f"{bound.min_pooled_hits / bound.references:.4f}"))
    header = f"{'router':>16} {'gpu hr':>7} {'pool hr':>7} {'hit rate':>8} {'recomputed':>10} {'to floor':>9} {'to MIN':>8}"
    if not args.no_timing:
        header += f" {'TTFT p50':>9} {'p90':>8} {'p99':>8} {'mean':>8} {'queue mean':>10} {'queue p99':>9}"
    print(header + f" {'max load':>8} {'max queue':>9}")
    for summary in summaries:
        rates = summary["hit_rate_by_tier"]
        line = (f"{summary['router']:>16} {rates['gpu']:>7.4f} {rates['pool']:>7.4f} {summary['hit_rate']:>8.4f} "
                f"{summary['recomputed_blocks']:>10} {summary['below_floor_blocks']:>9} {summary['below_min_pooled_blocks']:>8}")
        if not args.no_timing:
            ttft, queue = summary["ttft_s"], summary["queueing_s"]
            line += (f" {ttft['p50']:>8.3f}s {ttft['p90']:>7.3f}s {ttft['p99']:>7.3f}s {ttft['mean']:>7.3f}s "
                     f"{queue['mean']:>9.3f}s {queue['p99']:>8.3f}s")
        print(line + f" {summary['load']['max_load_ratio']:>8.3f} {summary['load']['max_queue']:>9}")
    for summary in summaries:
        hosts = summary["hosts"]
        busiest = max(hosts, key=lambda host: (host["prefill_busy_s"], -host["host"]))
        busy = "" if args.no_timing else f"; most prefill time: host {busiest['host']}, {busiest['prefill_busy_s']:.1f} s"
        print(f"  {summary['router']}: requests per host {summary['load']['min_requests']}..{summary['load']['max_requests']}, "
              f"longest queue {summary['load']['max_queue']}{busy}")
    if args.pool_capacity is not False:
        for summary in summaries:
            moved = summary["moved"]
            print(f"  {summary['router']}: moved pool->GPU {moved['pool_to_gpu_blocks']} blocks ({moved['pool_to_gpu_bytes'] / 2**30:.1f} GiB), "
                  f"GPU->pool {moved['gpu_to_pool_blocks']} blocks ({moved['gpu_to_pool_bytes'] / 2**30:.1f} GiB)")
    print("  'to floor' / 'to MIN': hit blocks short of each bound (negative: above it; the pool tier is memory beyond the fleet's GPUs)")
    for path in charts:
        print(f"chart: {path}")
    return 0
