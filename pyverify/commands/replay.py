"""``pyverify replay``: a fleet in time, with a GPU tier per host, an optional pool tier, and routers.

The model is stated in :mod:`pyverify.fleet` (service, tiers, routers, event
loop); this module parses flags, runs one replay per router, and prints.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

from pyverify.commands.cache_options import add_kv_size_options
from pyverify.commands.input_options import (
    add_input_options,
    load_with,
    needs_instance_reader,
    read_trace_with,
)
from pyverify.commands.argtypes import (
    add_flag_check,
    add_old_spelling,
    cache_amount,
    capacity_blocks,
    capacity_gib,
    capacity_tokens,
    chart_path,
    choice_list,
    fleet_size,
    input_file,
    output_file,
    positive_int,
)
from pyverify.commands.basic import INPUT_HELP, slack_value
from pyverify.commands.output import print_json
from pyverify.commands.cache_options import (
    blocks_of,
    capacity_flag_problem,
    check_page_size,
    kv_flag_words,
    kv_given,
    kv_of,
    positive_number,
    resolve_cache_size,
)
from pyverify.errors import RequestError, UserError
from pyverify.api.memory import kv_size
from pyverify.api.names import (
    ENGINE_EVICTIONS,
    EVICTION_HELP,
    LRU,
    LRU_NOTE,
    SGLANG,
    SGLANG_FIFO,
    VLLM,
    eviction_name,
)
from pyverify.api.replay import (
    DEFAULT_DECODE_GROWTH,
    DEFAULT_DECODE_TOKENS_PER_S,
    DEFAULT_KV_AWARE_LOAD,
    DEFAULT_KV_MODEL,
    DEFAULT_LOAD_WEIGHT,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    DEFAULT_MAX_RUNNING,
    DEFAULT_OVERLAP_WEIGHT,
    DEFAULT_PREFILL_TOKENS_PER_S,
    DYNAMO_TIMING,
    KV_AWARE_LOADS,
    LINEAR_TIMING,
    PREFILL_RATE_MODEL,
    REPLAY_ENGINES,
    REPLAY_EVICTIONS,
    ROUTERS,
    SERVICE_MODELS,
    SOURCES,
    STEP_TIMINGS,
    STEPS,
    STREAMS,
)

if TYPE_CHECKING:  # annotations only: --help imports no numpy
    from pyverify.api.replay import ColumnarTrace

ORDER = 25

DESCRIPTION = (
    "Replay a trace on a fleet in time. Requests arrive at their timestamps (times --arrival-scale), are routed "
    "on arrival, wait in a FIFO queue per host and run at most --max-num-seqs at a time. Service (--service): "
    "'steps' (default) runs each host as an engine does, one step (forward pass) at a time, each carrying the "
    "running requests' decodes and prefill chunks and then newly admitted requests' chunks under a budget of "
    "--max-num-batched-tokens tokens (chunked prefill, as vLLM's scheduler and Dynamo's mocker); a step lasts "
    "prefill tokens / --prefill-tokens-per-s plus, with decodes, a decode step that grows with their number "
    "(or what --step-table says), plus the load of host-DRAM and pool hits it admits; first token at the end "
    "of a request's last prefill chunk, then output_length - 1 decode steps; full blocks of generated tokens "
    "are cached on the GPU (decode KV). The step model runs in the Python event loop. 'streams' runs every "
    "request as an independent stream at the full rates: prefill time = tokens the host must compute / "
    "--prefill-tokens-per-s (plus the transfer of host-DRAM and pool hits), decode time = "
    "(output_length - 1) / --decode-tokens-per-s, no decode KV. Cache contents are exact for the model's "
    "eviction; times are a model. A running request's blocks (hit or computed) are pinned in its "
    "host's GPU cache until it ends; a request starts only when they fit beside the blocks already pinned. "
    "Tiers: each host's GPU cache "
    "(--capacity blocks, --eviction); with --host-capacity, a host-DRAM tier (LRU) below each GPU; with "
    "--pool-capacity, one shared pool (LRU). A request reads its GPU prefix, then the longest run of its next "
    "blocks in host DRAM, then in the pool, and recomputes the rest; every tier asked keeps what it lacked "
    "(write-through), and the GPU inserts every block after its prefix (inserting may evict there). "
    "--no-timing serves requests one at a time in file order, exactly as 'simulate --model per-host'. "
    "--compare runs every tier configuration the capacities allow (GPU only, + host DRAM, + pool), timed and "
    "not, for every router. --eviction vllm, sglang and sglang-fifo (the engines' own caches, as in simulate) run "
    "the GPU tier only; with --no-timing a run equals 'simulate --model per-host --eviction ENGINE'. vllm also runs "
    "timed, several requests overlapping on a host as vLLM's scheduler allows (a request waits while too few blocks "
    "are free); sglang and sglang-fifo run with --no-timing only (their model serves one request at a time). Beside every run: the floor, MIN and the forced-admission optimum for one pool of "
    "the fleet's GPU memory, and the forced-admission optimum of the run's own routing."
)


def tier_capacity(text: str):
    """--host-capacity, --pool-capacity: unlimited (inf), or blocks, tokens or GiB as the GPU tier's."""
    if text.strip().lower() in ("inf", "infinite", "unlimited"):
        return None
    return cache_amount(text)


def resolve_tiers(args, trace) -> None:
    """The lower tiers' sizes in whole blocks, converted as the GPU tier's (cache_options.blocks_of)."""
    kv = kv_of(args)
    for name in ("host_capacity", "pool_capacity"):
        amount = getattr(args, name)
        if amount is not None and amount is not False:
            flag = f"--{name.replace('_', '-')}"
            setattr(
                args,
                name,
                blocks_of(
                    amount, flag, trace.block_size_tokens, kv, args.trace, "give it in blocks"
                ),
            )


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def router_list(text: str) -> list[str]:
    return choice_list(text, ROUTERS, "router")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay a trace on a fleet in time: queues, GPU and pool tiers, routers, TTFT",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "trace",
        type=input_file,
        help=INPUT_HELP + "; timed replays need a timestamp on every request",
    )
    add_input_options(parser)
    parser.add_argument(
        "--router",
        "--routing",
        dest="router",
        type=router_list,
        default=["round-robin"],
        metavar="ROUTER[,ROUTER...]",
        help=f"router, or several to compare: {', '.join(ROUTERS)} (default: round-robin). "
        "dynamo: Dynamo 1.6.1's KV router cost with its defaults, equal costs drawn at random from "
        "--seed (as Dynamo draws them); sglang: the SGLang router's cache_aware policy as "
        "sglang-router 0.3.2 runs it, with its defaults, its tree over block ids, ties to the lowest "
        "host id; see pyverify.fleet.routers",
    )
    parser.add_argument(
        "--fleet", type=fleet_size, help="hosts (default: the input's hosts, or 16 for a trace)"
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--capacity",
        type=capacity_blocks,
        metavar="BLOCKS",
        help="GPU cache blocks per host (default: no limit)",
    )
    size.add_argument(
        "--capacity-tokens",
        type=capacity_tokens,
        metavar="TOKENS",
        help="GPU cache tokens per host, rounded down to whole blocks of the input's block size",
    )
    size.add_argument(
        "--capacity-gib",
        type=capacity_gib,
        metavar="GIB",
        help="GPU KV memory per host in GiB (2**30 bytes), rounded down to whole blocks; needs --kv-model or --kv-bytes-per-token",
    )
    parser.add_argument(
        "--eviction",
        choices=REPLAY_EVICTIONS + ENGINE_EVICTIONS,
        default=LRU,
        help="GPU eviction (default: lru): "
        + "; ".join(f"{name}: {EVICTION_HELP[name]}" for name in REPLAY_EVICTIONS)
        + "; "
        + "; ".join(f"{name}: {EVICTION_HELP[name]}" for name in ENGINE_EVICTIONS)
        + ". The engine evictions take no --host-capacity or --pool-capacity. vllm runs timed with "
        "overlapping requests (ref-counted blocks, checked against vLLM's own BlockPool with up to 8 "
        "running): the queue head waits while too few blocks are free, and a prompt the empty pool cannot "
        "hold is never scheduled; with --service steps also chunk-by-chunk allocation, decode KV and "
        "preemption of the last admitted request when a running one cannot grow, as vLLM's scheduler; sglang and sglang-fifo need --no-timing (their model serves a request "
        "alone: lock_ref on nodes held by several running requests is not modelled)",
    )
    parser.add_argument(
        "--page-size",
        type=positive_int,
        metavar="TOKENS",
        help="with --eviction sglang or sglang-fifo: the radix cache's page size in tokens, a multiple of the "
        "input's block size (default: the block size)",
    )
    sizes = (
        "N blocks, or with a unit as the GPU tier takes them: Ntokens (rounded down to whole "
        "blocks), NGiB (needs --kv-model, --kv-model-config or --kv-bytes-per-token)"
    )
    tier = "N[tokens|GiB]|inf"
    parser.add_argument(
        "--host-capacity",
        type=tier_capacity,
        default=False,
        metavar=tier,
        help=f"add a host-DRAM tier per host (LRU) of {sizes}, or unlimited (inf); default: none",
    )
    parser.add_argument(
        "--pool-capacity",
        type=tier_capacity,
        default=False,
        metavar=tier,
        help=f"add a shared pool tier (LRU) of {sizes}, or unlimited (inf); default: no pool",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="run GPU only, GPU + host DRAM (with --host-capacity), GPU + pool (with --pool-capacity) "
        "and all three (with both), each timed and with --no-timing, for every router",
    )
    parser.add_argument(
        "--no-timing",
        action="store_true",
        help="one request at a time in file order, no clock: the model of 'simulate --model per-host'",
    )
    parser.add_argument(
        "--arrival-scale",
        type=positive_number,
        default=1.0,
        metavar="S",
        help="arrival time = timestamp x S (S < 1 compresses the trace: more load; default: 1)",
    )
    parser.add_argument(
        "--prefill-tokens-per-s",
        type=positive_number,
        metavar="R",
        help="prefill rate of one host (default: the rate measured on the --kv-model where "
        f"pyverify has one, else {DEFAULT_PREFILL_TOKENS_PER_S:.0f}, "
        f"{SOURCES['prefill_tokens_per_s']}, with a note when the KV size comes from "
        "another model)",
    )
    parser.add_argument(
        "--decode-tokens-per-s",
        type=positive_number,
        default=DEFAULT_DECODE_TOKENS_PER_S,
        metavar="R",
        help=f"decode rate of one running request (default: {DEFAULT_DECODE_TOKENS_PER_S:.1f}, {SOURCES['decode_tokens_per_s']})",
    )
    parser.add_argument(
        "--max-num-seqs",
        dest="max_running",
        type=positive_int,
        default=DEFAULT_MAX_RUNNING,
        metavar="N",
        help=f"requests one host runs at once (vLLM's max_num_seqs); more wait in a FIFO queue "
        f"(default: {DEFAULT_MAX_RUNNING}, {SOURCES['max_running']})",
    )
    add_old_spelling(
        parser, "--max-running", "--max-num-seqs", "max_running", type=positive_int, metavar="N"
    )
    parser.add_argument(
        "--service",
        choices=SERVICE_MODELS,
        default=STEPS,
        help="service model of a timed replay: steps (an engine's batched steps with chunked prefill; "
        "default) or streams (independent streams at the full rates, no decode KV)",
    )
    parser.add_argument(
        "--max-num-batched-tokens",
        type=positive_int,
        default=DEFAULT_MAX_NUM_BATCHED_TOKENS,
        metavar="N",
        help=f"with --service steps: tokens one step carries, prefill chunks and decodes (vLLM's "
        f"max_num_batched_tokens; default: {DEFAULT_MAX_NUM_BATCHED_TOKENS}, "
        f"{SOURCES['max_num_batched_tokens']})",
    )
    parser.add_argument(
        "--step-table",
        type=input_file,
        metavar="PATH",
        help='with --service steps: a step\'s time from a JSON table {"prefill": [[tokens, seconds], ...], '
        '"decode": [[decodes, seconds], ...]}, each read by linear interpolation and the two parts added '
        "(default: prefill tokens / --prefill-tokens-per-s, and a decode step of "
        f"(1 + {DEFAULT_DECODE_GROWTH:.4f} x (decodes - 1)) / --decode-tokens-per-s: "
        f"{SOURCES['decode_growth']})",
    )
    parser.add_argument(
        "--step-timing",
        choices=STEP_TIMINGS,
        default=LINEAR_TIMING,
        help="with --service steps: how long a step lasts: linear (default; the rates, or --step-table) "
        f"or dynamo ({SOURCES['step_timing'].split('dynamo: ')[1]}; a step's prefill by its chunks, its "
        "decode by the KV its decodes hold over the host's capacity)",
    )
    # KV bytes per token, for bytes moved and pool transfer time (default: the cost model's, see SOURCES)
    add_kv_size_options(parser)
    parser.add_argument(
        "--pool-bandwidth-gb-s",
        type=positive_number,
        metavar="GB_S",
        help=f"pool -> GPU bandwidth (default: {SOURCES['pool_bandwidth_gb_s']}; "
        f"plus {SOURCES['fetch_latency_ms']})",
    )
    parser.add_argument(
        "--host-bandwidth-gb-s",
        type=positive_number,
        metavar="GB_S",
        help=f"host DRAM -> GPU bandwidth (default: {SOURCES['host_bandwidth_gb_s']}; "
        f"plus {SOURCES['host_fetch_latency_ms']})",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random router (default: 0)"
    )
    parser.add_argument(
        "--affinity-slack",
        type=slack_value,
        default=1.25,
        metavar="S",
        help="prefix-affinity load cap, as in simulate: at most ceil(S * (i+1) / F) of the first i+1 requests per host (default: 1.25)",
    )
    parser.add_argument(
        "--overlap-weight",
        type=non_negative,
        default=DEFAULT_OVERLAP_WEIGHT,
        metavar="W",
        help=f"kv-aware score = W x GPU prefix-hit blocks - load weight x load (--kv-aware-load) (default: {DEFAULT_OVERLAP_WEIGHT:g})",
    )
    parser.add_argument(
        "--load-weight",
        type=non_negative,
        default=DEFAULT_LOAD_WEIGHT,
        metavar="W",
        help=f"kv-aware load weight (default: {DEFAULT_LOAD_WEIGHT:g}; both weights are an ASSUMPTION: sweep them)",
    )
    parser.add_argument(
        "--kv-aware-load",
        choices=KV_AWARE_LOADS,
        default=DEFAULT_KV_AWARE_LOAD,
        help="what kv-aware counts as a host's load: the blocks of its requests running plus queued, or "
        f"their number (default: {DEFAULT_KV_AWARE_LOAD})",
    )
    parser.add_argument(
        "--backend",
        choices=REPLAY_ENGINES,
        default="auto",
        help="who runs the replay: compiled (numba, no per-block Python; timed or not, lru, fifo or no capacity, "
        "any tiers and router; untimed GPU-only round-robin or random also leaf-lru and the engines' evictions), "
        "python (the event loop, every configuration), "
        "or auto (compiled when supported, else python; default). Both give the same run, field for field. "
        "Memory: compiled holds a slot per host x distinct block per tier (at most 8 GiB), "
        "python what the caches hold; auto takes python where it is cheaper or the "
        "tables pass 8 GiB",
    )
    add_old_spelling(parser, "--engine", "--backend", "backend", choices=REPLAY_ENGINES)
    parser.add_argument(
        "--chart",
        type=chart_path,
        metavar="PATH",
        help="chart of hit rate and TTFT per router (.png, .svg, or a stem for both)",
    )
    parser.add_argument(
        "--per-request",
        type=output_file,
        metavar="PATH",
        help="write one JSON line per request and run: request (its 0-based position in the "
        "trace), router, host, hit_blocks by tier, arrival_s, first_token_s, ttft_s, "
        "finish_s (null when untimed)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    for check in (timing_refusal, engine_refusal, compiled_refusal, capacity_flag_problem):
        add_flag_check(parser, check)
    parser.set_defaults(func=run_replay)


def prefill_rate_of(args):
    """``--prefill-tokens-per-s``; else the rate measured on the ``--kv-model`` (the default KV model
    when no KV size is given); else the default rate, with the note ``cost`` prints for that case."""
    from pyverify.api.replay import prefill_rate

    return prefill_rate(
        args.prefill_tokens_per_s,
        args.kv_model,
        kv_given=kv_given(args),
        kv_words=kv_flag_words(args),
    )


def service_words(service) -> str:
    """The service model, named for the header (and that the step model runs in the Python event loop)."""
    if service.service == STREAMS:
        return "service streams (independent streams, no decode KV)"
    timing = (
        "dynamo step time"
        if service.step_timing == DYNAMO_TIMING
        else "--step-table"
        if service.step_table is not None
        else "linear step time"
    )
    return (
        f"service steps ({service.max_num_batched_tokens} tokens/step, {timing}, decode KV cached; "
        "Python event loop)"
    )


def kv_words(args, service) -> str:
    """The KV model the transfer times use, named for the header."""
    named = (
        args.kv_model
        or getattr(args, "kv_model_config", None)
        or (
            "--kv-bytes-per-token"
            if args.kv_bytes_per_token is not None
            else f"{DEFAULT_KV_MODEL} (default)"
        )
    )
    return f"KV {named}, {service.kv_bytes_per_token:g} bytes/token"


def service_of(args, trace):
    from pyverify.api.replay import service_model

    kv = kv_size(
        args.kv_model,
        args.kv_dtype,
        args.kv_bytes_per_token,
        getattr(args, "kv_model_config", None),
    )
    return service_model(
        prefill_tokens_per_s=prefill_rate_of(args).tokens_per_s,
        decode_tokens_per_s=args.decode_tokens_per_s,
        max_running=args.max_running,
        block_tokens=trace.block_size_tokens,
        service=args.service,
        max_num_batched_tokens=args.max_num_batched_tokens,
        step_table=args.step_table,
        step_timing=args.step_timing,
        kv_bytes_per_token=None if kv is None else kv.bytes_per_token,
        pool_bandwidth_gb_s=args.pool_bandwidth_gb_s,
        host_bandwidth_gb_s=args.host_bandwidth_gb_s,
    )


def read_trace(args) -> "ColumnarTrace":
    """The input, read once as the one trace type every run takes: a trace file (Mooncake JSONL, CSV,
    Parquet) by the array readers, anything else (or with a re-blocking or tokenizing flag) by the
    instance readers, converted once, as ``simulate`` reads it."""
    from pyverify.api.replay import columnar_trace
    from pyverify.commands.engine_options import is_trace_file

    if not needs_instance_reader(args) and is_trace_file(args.trace):
        return read_trace_with(args, args.trace)
    return columnar_trace(load_with(args, args.trace))


def capacity_text(capacity) -> str:
    return "unlimited" if capacity is None else f"{capacity} blocks"


def run_replay(args) -> int:
    from pyverify.api.replay import own_fleet_size, replay_fleet, router_options
    from pyverify.commands.replay_text import print_runs
    from pyverify.progress import progress_bar

    timing_refusal(args)
    engine_refusal(args)
    compiled_refusal(args)
    trace = read_trace(args)
    args.capacity = resolve_cache_size(args, trace, args.trace).blocks
    resolve_tiers(args, trace)
    check_engine_inputs(args, trace)
    fleet = args.fleet or own_fleet_size(trace)
    service = service_of(args, trace)
    if not args.no_timing:
        missing = first_without_timestamp(trace)
        if missing is not None:
            raise RequestError(
                args.trace,
                missing,
                "timestamp",
                "a timed replay needs a timestamp on every request (or use --no-timing)",
            )
    options = router_options(
        seed=args.seed,
        slack=args.affinity_slack,
        overlap_weight=args.overlap_weight,
        load_weight=args.load_weight,
        kv_aware_load=args.kv_aware_load,
        block_tokens=service.block_tokens,
    )
    rate = prefill_rate_of(args)
    passes = (2 if args.compare else 1) * len(tier_configurations_of(args))
    total = trace.n_requests * len(args.router) * passes
    with progress_bar(total, "replay", unit="request") as advance:
        report = replay_fleet(
            trace,
            routers=args.router,
            fleet_size=fleet,
            capacity=args.capacity,
            eviction=args.eviction,
            host_capacity=args.host_capacity,
            pool_capacity=args.pool_capacity,
            compare=args.compare,
            timed=not args.no_timing,
            arrival_scale=args.arrival_scale,
            page_size=args.page_size,
            service=service,
            options=options,
            rate=rate,
            kv_model=args.kv_model or getattr(args, "kv_model_config", None),
            backend=args.backend,
            per_request=bool(args.per_request),
            progress=advance,
            where=args.trace,
        )
    summaries, bound = report.runs, report.bounds
    if args.per_request:
        from pyverify.fileio import write_text_atomic

        write_text_atomic(
            args.per_request,
            "".join(json.dumps(record, allow_nan=False) + "\n" for record in report.per_request),
        )
    gpu_text = (
        "GPU uncapacitated"
        if args.capacity is None
        else f"GPU {args.capacity} blocks/host, {eviction_name(args.eviction)}"
    )
    host_text = (
        ""
        if args.host_capacity is False
        else f", host DRAM {capacity_text(args.host_capacity)}/host (LRU)"
    )
    pool_text = (
        ", no pool"
        if args.pool_capacity is False
        else f", pool {capacity_text(args.pool_capacity)} (LRU)"
    )
    rate_from = (
        "--prefill-tokens-per-s"
        if args.prefill_tokens_per_s is not None
        else f"measured on {PREFILL_RATE_MODEL}"
    )
    timing_text = (
        f"arrivals x {args.arrival_scale:g}, {kv_words(args, service)}, {service_words(service)}, "
        f"prefill {service.prefill_tokens_per_s:.0f} tok/s ({rate_from}), "
        f"decode {service.decode_tokens_per_s:.1f} tok/s, max {service.max_running} running/host"
    )
    if args.no_timing:
        timing_text = "no timing (one request at a time)"
    elif args.compare:
        timing_text = f"timed ({timing_text}) and untimed"
    charts = []
    if args.chart:
        from pyverify.reports.replay_chart import replay_chart

        charts = replay_chart(
            summaries,
            bound.to_json(),
            args.chart,
            f"{trace.name}: {fleet} hosts, {gpu_text}{host_text}{pool_text}",
        )
    if args.json:
        print_json(report.to_dict(charts))
        return 0
    print(
        f"{trace.name}: {trace.n_requests} requests, {fleet} hosts, {gpu_text}{host_text}{pool_text}; {timing_text}"
    )
    if rate.note and not args.no_timing:
        print(f"  NOTE: {rate.note}")
    for name in args.router:
        settings = options.to_json(name)
        if name in ("kv-aware", "dynamo", "sglang"):
            print(f"  {name}: " + ", ".join(f"{key} {value}" for key, value in settings.items()))
    if args.capacity is not None and args.eviction == LRU:
        print(f"  {LRU_NOTE}")
    print_runs(summaries, bound, compare=args.compare)
    for summary in summaries:
        if (
            "unscheduled_requests" in summary
        ):  # an engine eviction: its hits in tokens, and what it refused
            tokens = (
                ""
                if summary["token_hits"] is None
                else f"token hits {summary['token_hits']} of {summary['tokens']}, "
            )
            print(
                f"  {summary['router']}: {tokens}{len(summary['unscheduled_requests'])} request(s) the engine never "
                "schedules (counted as misses)"
            )
    for path in charts:
        print(f"chart: {path}")
    return 0


def timing_refusal(args) -> None:
    if args.compare and args.no_timing:
        raise UserError(
            "--compare runs every configuration both timed and with --no-timing; drop --no-timing"
        )
    if args.step_timing == DYNAMO_TIMING and args.step_table is not None:
        raise UserError(
            "--step-table and --step-timing dynamo each say how long a step lasts; give one"
        )


def engine_refusal(args) -> None:
    """One line (exit 2) for what the engine evictions are not offered with; before the input is read."""
    if args.page_size is not None and args.eviction not in (SGLANG, SGLANG_FIFO):
        raise UserError(f"--page-size: only with --eviction {SGLANG} or {SGLANG_FIFO}")
    if args.eviction not in ENGINE_EVICTIONS:
        return
    if not args.no_timing and args.eviction != VLLM:
        raise UserError(
            f"--eviction {args.eviction}: only with --no-timing: its reference model serves one request at a time "
            "per host, and with timing requests would run at once, each holding its blocks, which it does not model"
        )
    if args.host_capacity is not False or args.pool_capacity is not False:
        raise UserError(
            f"--eviction {args.eviction}: GPU tier only, not with --host-capacity or --pool-capacity "
            "(what the engine's hit cap and refusals mean for a lower tier is not defined here)"
        )


def compiled_refusal(args) -> None:
    """One line (exit 2) when ``--backend compiled`` cannot run every requested run; before the input is read."""
    if args.backend != "compiled":
        return
    from pyverify.api.replay import compiled_refusal as refusal

    reason = refusal(
        args.router,
        # The capacity is not known before the input is read; only whether one was given.
        capacity_given=not (
            args.capacity is None and args.capacity_tokens is None and args.capacity_gib is None
        ),
        eviction=args.eviction,
        host_capacity=args.host_capacity,
        pool_capacity=args.pool_capacity,
        compare=args.compare,
        timed=not args.no_timing,
        service=args.service,
    )
    if reason is not None:
        raise UserError(f"--backend compiled: {reason}; use --backend auto or python")


def first_without_timestamp(trace) -> int | None:
    """The first request that gives no timestamp, or ``None``."""
    import numpy as np

    if trace.timestamps is None:
        return 0 if trace.n_requests else None
    missing = np.flatnonzero(np.isnan(trace.timestamps))
    return int(missing[0]) if missing.size else None


def check_engine_inputs(args, trace) -> None:
    """What the engine evictions need of the input, checked as simulate checks it: a capacity, a page size
    that fits the block size, and no prompt longer than its chain's blocks."""
    if args.eviction not in ENGINE_EVICTIONS:
        return
    if args.capacity is None:
        raise UserError(
            f"--eviction {args.eviction}: needs a capacity (--capacity BLOCKS, --capacity-tokens or --capacity-gib): "
            "the engine's pool size"
        )
    block = trace.block_size_tokens
    check_page_size(args.trace, block, args.page_size, args.capacity)
    if block is None or trace.input_tokens is None:
        return
    import numpy as np

    # As simulate --eviction vllm|sglang reads them: a prompt's tokens are its input_tokens when given.
    given = np.nan_to_num(trace.input_tokens, nan=0.0)
    too_long = np.flatnonzero(given // block > trace.lengths)
    if too_long.size:
        index = int(too_long[0])
        tokens, blocks = int(given[index]), int(trace.lengths[index])
        raise RequestError(
            args.trace,
            index,
            "input_tokens",
            f"{tokens} tokens make {tokens // block} full blocks of {block}, but the "
            f"chain names {blocks}: the engine would cache blocks the trace does "
            "not name",
        )


def tier_configurations_of(args) -> list[tuple]:
    from pyverify.api.replay import tier_configurations

    return tier_configurations(args.host_capacity, args.pool_capacity, args.compare)
