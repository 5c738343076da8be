"""``pyverify cost``: weigh the time a pool saves against the time its transfers take."""

from __future__ import annotations

from typing import Any

from pyverify.reports.charts import chart_targets
from pyverify.commands.argtypes import (
    capacity_blocks,
    capacity_gib,
    chart_path,
    fleet_size,
    input_file,
)
from pyverify.commands.basic import INPUT_HELP, about_file, add_routing_options
from pyverify.commands.output import print_json
from pyverify.commands.cache_options import add_kv_size_options, kv_flag_words
from pyverify.inputs.kv_models import blocks_for_gib, kv_size
from pyverify.cost.params import (
    PARAMETERS,
    Params,
    parse_params,
    parse_sweep,
)  # cheap: the parser lists the names
from pyverify.commands.input_options import add_input_options, identity_of, load_described_with
from pyverify.cost.params import PREFILL_RATE_MODEL, prefill_rate_note
from pyverify.errors import UserError, shown
from pyverify.sim.routing import DEFAULT_TRACE_FLEET, POLICIES, RoutingOptions, default_fleet, route
from pyverify.sim.simulate import EVICTIONS, LRU, PER_HOST, POOLED, simulate

ORDER = 40

MODEL_CHOICES = ("per-host", "pooled", "both")

#: Fleet size for an input that gives no routing (a trace): the simulator's default,
#: 16 (the Mooncake paper's section 5.3.2 compares local and global caches on 10 prefill nodes).


def register(subparsers) -> None:
    names = ", ".join(PARAMETERS)
    parser = subparsers.add_parser(
        "cost",
        help="estimate the time a pool saves against the time its transfers take",
        description=(
            "Estimate prefill time for per-host caches and for the same caches plus a shared pool, on one routing: "
            "tokens hit locally, fetched from the pool, recomputed; prefill time saved, transfer time spent, net "
            "effect and TTFT (median, p90, p99); the pool bandwidth at which pooling breaks even; and the reuse "
            "report. The formulas are in pyverify/cost/estimate.py; the units and the source of every default in pyverify/cost/params.py. "
            f"Parameters: {names}."
        ),
    )
    parser.add_argument("input", type=input_file, metavar="INPUT", help=INPUT_HELP)
    parser.add_argument(
        "--model",
        choices=MODEL_CHOICES,
        default="both",
        help="which architecture to estimate: per-host caches, pooled (local caches plus a pool), or both compared (default)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a model parameter (repeatable); see the list above",
    )
    parser.add_argument(
        "--sweep",
        metavar="NAME=LO:HI:STEPS",
        help="vary one parameter over STEPS evenly spaced values and report how the conclusion changes",
    )
    parser.add_argument(
        "--fleet",
        type=fleet_size,
        help=f"fleet size (default: the instance's hosts; {DEFAULT_TRACE_FLEET} for an input without routing, as in the Mooncake paper)",
    )
    parser.add_argument(
        "--routing",
        choices=sorted(POLICIES),
        help="routing policy (default: the instance's own routing, folded onto a smaller --fleet; round-robin for an input without one)",
    )
    add_routing_options(parser)
    capacity = parser.add_mutually_exclusive_group()
    capacity.add_argument(
        "--capacity",
        type=capacity_blocks,
        help="blocks each host's local cache holds (default: no limit)",
    )
    capacity.add_argument(
        "--capacity-gib",
        type=capacity_gib,
        metavar="GIB",
        help="KV memory of each host's local cache in GiB, rounded down to whole blocks with the model's "
        "kv_bytes_per_token (the same number the transfer time uses)",
    )
    add_kv_size_options(parser)
    parser.add_argument(
        "--pool-capacity",
        type=capacity_blocks,
        help="blocks the pool holds (default: capacity x fleet, the hosts' memory pooled; no limit without --capacity)",
    )
    parser.add_argument(
        "--eviction",
        choices=EVICTIONS,
        default=LRU,
        help="eviction policy when a capacity is set (default: lru)",
    )
    parser.add_argument(
        "--chart",
        type=chart_path,
        metavar="PATH",
        help="write the chart (.png, .svg, or a stem for both)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_input_options(parser)
    parser.set_defaults(func=run_cost)


def _default_policy(instance, fleet: int) -> str:
    if instance.routing is None:
        return "round-robin"
    return "given" if fleet == instance.fleet_size else "fold"


def _input_tokens(instance) -> list[int | None] | None:
    if not instance.extra:
        return None
    tokens = [extra.get("input_tokens") for extra in instance.extra]
    return tokens if any(t is not None for t in tokens) else None


def run_cost(args) -> int:
    # Everything a user can get wrong is checked before any output is written.
    # The estimate is imported here, not at registration: every command's start-up reads this module.
    from pyverify.cost.estimate import break_even, estimate, token_split
    from pyverify.cost.reuse import reuse_report
    from pyverify.cost.summary import sweep_rows

    params, explicit = parse_params(args.param)
    spec = parse_sweep(args.sweep) if args.sweep else None
    if spec is not None and spec.name in explicit:
        raise UserError(
            f"--sweep {args.sweep!r}: {spec.name} is also set by --param; set it one way"
        )
    if args.chart:
        chart_targets(args.chart)
    if args.pool_capacity is not None and args.model == "per-host":
        raise UserError(
            "--pool-capacity: the per-host model has no pool; use --model pooled or both"
        )

    kv = kv_size(
        args.kv_model,
        args.kv_dtype,
        args.kv_bytes_per_token,
        getattr(args, "kv_model_config", None),
    )
    if kv is not None:
        if "kv_bytes_per_token" in explicit or (
            spec is not None and spec.name == "kv_bytes_per_token"
        ):
            raise UserError(
                "--kv-model/--kv-bytes-per-token: kv_bytes_per_token is also set by --param or --sweep; set it one way"
            )
        params = params.with_value("kv_bytes_per_token", kv.bytes_per_token)
        explicit = [*explicit, "kv_bytes_per_token"]
    sources = {"kv_bytes_per_token": kv.source} if kv is not None else {}
    rate_note = _prefill_rate_note(args, kv, explicit, spec)

    loaded = load_described_with(args, args.input)
    instance = loaded.instance
    if args.capacity_gib is not None:
        if instance.block_size_tokens is None:
            raise UserError(
                f"{args.input}: block_size_tokens: not given, so --capacity-gib cannot be converted to blocks; use --capacity"
            )
        if spec is not None and spec.name == "kv_bytes_per_token":
            raise UserError(
                "--capacity-gib: cannot be combined with --sweep kv_bytes_per_token (the capacity would change with it)"
            )
        args.capacity = blocks_for_gib(
            args.capacity_gib, params.kv_bytes_per_token, instance.block_size_tokens
        )
        if args.capacity < 1:
            raise UserError(f"--capacity-gib: {args.capacity_gib:g} GiB is less than one block")
    if instance.block_size_tokens is not None:
        for name in [*explicit, *([spec.name] if spec else [])]:
            if name == "block_tokens":
                raise UserError(
                    f"{args.input}: block_size_tokens: this input fixes its block size at {instance.block_size_tokens} tokens; "
                    "block_tokens applies only to inputs that do not give one"
                )
        params = params.with_value("block_tokens", instance.block_size_tokens)
        block_source = "the input's block_size_tokens"
        sources["block_tokens"] = f"given by the input ({args.input}: block_size_tokens)"
    else:
        block_source = (
            "--param block_tokens"
            if "block_tokens" in explicit
            else "an assumption: Mooncake's 512-token blocks, the default"
        )
    input_tokens = _input_tokens(instance)

    fleet = args.fleet or default_fleet(instance)
    policy = args.routing or _default_policy(instance, fleet)
    with about_file(args.input, "routing"):
        # prefix-affinity consults the per-host caches, so it sees the run's capacity and eviction
        options = RoutingOptions(
            seed=args.seed,
            capacity=args.capacity,
            eviction=args.eviction,
            slack=args.affinity_slack,
        )
        routing = route(instance, fleet, policy, options)
    pool_capacity = args.pool_capacity or (
        args.capacity * fleet if args.capacity is not None else None
    )

    local_run = simulate(
        instance.chains, routing, PER_HOST, capacity=args.capacity, eviction=args.eviction
    )
    pooled_run = None
    if args.model != "per-host":
        pooled_run = simulate(
            instance.chains, None, POOLED, capacity=pool_capacity, eviction=args.eviction
        )
    pooled_hits = pooled_run.hit_blocks if pooled_run is not None else None

    def split_for(p: Params):
        return token_split(
            instance.chains, local_run.hit_blocks, pooled_hits, p.block_tokens, input_tokens
        )

    split = split_for(params)
    est = estimate(split, params)
    be = break_even(split, params) if pooled_run is not None else None
    reuse = reuse_report(instance.chains, routing, fleet)
    rows = sweep_rows(split_for, params, spec) if spec is not None else []

    charts = []
    if args.chart:
        from pyverify.reports.cost_charts import cost_chart

        charts = cost_chart(
            args.chart,
            f"{instance.name}: {fleet} hosts, {policy} routing, {_capacity_words(args.capacity, pool_capacity, args.eviction)}",
            split,
            est,
            be,
            show_pooled=pooled_run is not None,
            show_per_host=args.model != "pooled",
        )

    result = _result(
        args,
        loaded,
        params,
        block_source,
        input_tokens is not None,
        policy,
        fleet,
        pool_capacity,
        local_run,
        pooled_run,
        split,
        est,
        be,
        reuse,
        rows,
        charts,
        sources,
    )
    result["prefill_rate_model"] = {
        "measured_on": PREFILL_RATE_MODEL
        if "prefill_tokens_per_s_per_gpu" not in explicit
        and not (spec is not None and spec.name == "prefill_tokens_per_s_per_gpu")
        else "set by the user",
        "note": rate_note,
    }
    if args.json:
        print_json(result)
    else:
        _print_text(args, result, est, be, reuse, rows, params)
    return 0


def _pooling_bound(reuse, capacity: int | None, eviction: str, local_run) -> dict[str, Any]:
    """What pooling can add to the block hit rate at most: the ceiling less what the per-host caches already hit.

    A pool cannot pass the ceiling (the repeat share). Uncapacitated, the
    per-host caches hit their repeat share; with a capacity they hit less (this
    run's hit rate), so the bound is the ceiling less that, not the smaller
    uncapacitated difference.
    """
    if capacity is None:
        return {
            "value": reuse.pooling_can_add,
            "assumes": "uncapacitated: ceiling - per-host uncapacitated",
        }
    return {
        "value": reuse.repeat_share - local_run.hit_rate,
        "assumes": f"capacity {capacity} blocks per host ({eviction}): ceiling - this run's per-host hit rate",
    }


def _prefill_rate_note(args, kv, explicit, spec) -> str | None:
    """Say plainly when the KV bytes come from another model than the prefill rate (None when they agree)."""
    rate_given = "prefill_tokens_per_s_per_gpu" in explicit or (
        spec is not None and spec.name == "prefill_tokens_per_s_per_gpu"
    )
    if kv is None or rate_given:
        return None
    return prefill_rate_note(
        kv_flag_words(args), args.kv_model, "--param prefill_tokens_per_s_per_gpu=RATE"
    )


def _capacity_words(capacity: int | None, pool_capacity: int | None, eviction: str) -> str:
    if capacity is None and pool_capacity is None:
        return "uncapacitated"
    local = f"{capacity} blocks per host" if capacity is not None else "unlimited hosts"
    pool = f"pool {pool_capacity} blocks" if pool_capacity is not None else "unlimited pool"
    return f"{local}, {pool}, {eviction}"


def _result(
    args,
    loaded,
    params,
    block_source,
    has_tokens,
    policy,
    fleet,
    pool_capacity,
    local_run,
    pooled_run,
    split,
    est,
    be,
    reuse,
    rows,
    charts,
    sources=None,
) -> dict[str, Any]:
    from pyverify.cost.estimate import LEAVES_OUT, zero_latency_break_even_gb_s
    from pyverify.cost.summary import distributions, sweep_conclusion, verdict

    sources = sources or {}
    instance = loaded.instance
    dist = distributions(est)
    keep = {
        "per-host": ("ttft_per_host",),
        "pooled": ("prefill_time_saved", "transfer_time_spent", "net_effect", "ttft_pooled"),
        "both": tuple(dist),
    }[args.model]
    result: dict[str, Any] = {
        "input": args.input,
        "instance": instance.name,
        **identity_of(
            loaded
        ),  # the content digest, as simulate names the instance (and an instance file's own)
        "model": args.model,
        "fleet_size": fleet,
        "routing": policy,
        "seed": args.seed if policy == "random" else None,
        "affinity_slack": args.affinity_slack if policy == "prefix-affinity" else None,
        "capacity": args.capacity,
        "pool_capacity": pool_capacity if pooled_run is not None else None,
        "eviction": args.eviction
        if (args.capacity is not None or pool_capacity is not None)
        else None,
        "requests": instance.n_requests,
        "block_tokens": params.block_tokens,
        "block_tokens_source": block_source,
        "prompt_tokens_from": (
            "each request's input_tokens (its prompt length: a partial last block counts only its tokens, "
            "tokens past the last block are always recomputed)"
            if has_tokens
            else "blocks x block_tokens"
        ),
        "params": {
            name: {
                "value": getattr(params, name),
                "unit": p.unit,
                "meaning": p.meaning,
                "source": sources.get(name, p.source),
            }
            for name, p in PARAMETERS.items()
        },
        "prefill_rate_tokens_per_s_per_host": params.prefill_rate,
        "reuse": {
            **reuse.to_json(),
            "assumes": "uncapacitated caches on this routing (per_host_repeat_share, pooling_can_add)",
        },
        "pooling_can_add_at_most": _pooling_bound(reuse, args.capacity, args.eviction, local_run),
        "hit_rate": {
            "per_host": local_run.hit_rate,
            "pooled": pooled_run.hit_rate if pooled_run is not None else None,
        },
        "hit_rate_counts": "blocks (token_hit_rate weighs each block by its tokens)",
        "token_hit_rate": {
            "per_host": float(split.local.sum() / split.total.sum()) if split.total.sum() else 0.0,
            "pooled": float((split.local.sum() + split.fetched.sum()) / split.total.sum())
            if pooled_run is not None and split.total.sum()
            else None,
        },
        "tokens": split.totals()
        if pooled_run is not None
        else {
            k: v
            for k, v in split.totals().items()
            if k in ("prompt_tokens", "local_hit_tokens", "recomputed_tokens_per_host")
        },
        # A total of latencies (TTFT) means nothing, so those rows carry none; a total of time saved or spent does.
        "distributions": {
            name: {
                k: v
                for k, v in dist[name].items()
                if not (name.startswith("ttft") and k == "total_s")
            }
            for name in keep
        },
        "distributions_over": "all requests; numpy.percentile (linear); per-request values in ms, totals in s (not for TTFT)",
    }
    if pooled_run is not None:
        result["net_total_s"] = est.net_total
        result["net_total_if_fetch_only_when_faster_s"] = est.net_if_fetch_only_when_faster
        result["verdict"] = verdict(est, be)
        result["break_even"] = {**be.to_json(), "sentence": be.sentence(params)}
        result["zero_latency_break_even_gb_s"] = zero_latency_break_even_gb_s(params)
    if rows:
        result["sweep"] = {
            "parameter": rows[0].name,
            "rows": [row.to_json() for row in rows],
            "conclusion": sweep_conclusion(rows),
        }
    result["leaves_out"] = LEAVES_OUT
    result["charts"] = [str(path) for path in charts]
    return result


def _print_text(args, result, est, be, reuse, rows, params) -> None:
    from pyverify.cost.estimate import LEAVES_OUT

    r = result
    capacity = _capacity_words(r["capacity"], r["pool_capacity"], args.eviction)
    print(
        f"{r['instance']}: {r['requests']} requests, {r['reuse']['block_references']} block references, "
        f"{r['fleet_size']} hosts ({r['routing']} routing), {capacity}"
    )
    print(
        f"  blocks of {r['block_tokens']} tokens ({r['block_tokens_source']}); prompt tokens from {r['prompt_tokens_from']}"
    )

    print("\nReuse (share of block references that repeat an earlier one)")
    shares = r["reuse"]["per_host_summary"]
    bound = r["pooling_can_add_at_most"]
    print(
        f"  {'repeat share, the ceiling of any demand cache':52} {reuse.repeat_share:.4f}  ({reuse.distinct} distinct blocks)"
    )
    print(
        f"  {'per-host caches on this routing, uncapacitated':52} {reuse.per_host_repeat_share:.4f}  "
        f"(hosts: min {shares['min']:.4f}, median {shares['median']:.4f}, max {shares['max']:.4f})"
    )
    if r["capacity"] is not None:
        print(
            f"  {'per-host caches, ' + str(r['capacity']) + ' blocks per host (' + args.eviction + ')':52} "
            f"{r['hit_rate']['per_host']:.4f}  (this run's block hit rate)"
        )
    print(
        f"  {'pooling can add at most':52} {bound['value']:.4f}  ({bound['assumes']}; it approaches the ceiling, it cannot lift it)"
    )
    if r["hit_rate"]["pooled"] is not None:
        pool = (
            "uncapacitated"
            if r["pool_capacity"] is None
            else f"pool of {r['pool_capacity']} blocks"
        )
        print(
            f"  {'pooling adds on this run (' + pool + ')':52} {r['hit_rate']['pooled'] - r['hit_rate']['per_host']:.4f}  "
            f"(pooled {r['hit_rate']['pooled']:.4f} - per-host {r['hit_rate']['per_host']:.4f}, block hit rates)"
        )
    print(f"  {reuse.rule_sentence()}")

    print("\nParameters (change with --param NAME=VALUE; sources in pyverify/cost/params.py)")
    for name, p in r["params"].items():
        print(f"  {name:29} {p['value']:<12.6g} {p['unit']:16} {p['source']}")
    print(f"  host prefill rate R = {params.prefill_rate:,.0f} tokens/s")
    if r["prefill_rate_model"]["note"]:
        print(f"  NOTE: {r['prefill_rate_model']['note']}")

    hr = r["hit_rate"]
    print("\nTokens")
    t = r["tokens"]
    line = f"  prompt {t['prompt_tokens']:,}; hit locally {t['local_hit_tokens']:,}; recomputed per-host {t['recomputed_tokens_per_host']:,}"
    print(line)
    if "fetched_tokens" in t:
        print(
            f"  with the pool: fetched {t['fetched_tokens']:,} (by {t['requests_that_fetch']} requests); recomputed {t['recomputed_tokens_pooled']:,}"
        )
        print(
            f"  block hit rate ({capacity}): per-host {hr['per_host']:.4f}, pooled {hr['pooled']:.4f}"
        )
        th = r["token_hit_rate"]
        print(
            f"  token hit rate ({capacity}): per-host {th['per_host']:.4f}, pooled (local or fetched) {th['pooled']:.4f}"
        )
    else:
        print(f"  block hit rate ({capacity}): per-host {hr['per_host']:.4f}")
        print(f"  token hit rate ({capacity}): per-host {r['token_hit_rate']['per_host']:.4f}")

    labels = {
        "prefill_time_saved": "prefill time saved by the pool",
        "transfer_time_spent": "transfer time spent",
        "net_effect": "net effect (+: pool faster)",
        "ttft_per_host": "est. TTFT, per-host caches",
        "ttft_pooled": "est. TTFT, with the pool",
    }
    print(
        f"\nPer request, all {r['requests']} requests   {'median ms':>11} {'p90 ms':>11} {'p99 ms':>11} {'total s':>11}"
    )
    for name, d in r["distributions"].items():
        total = f"{d['total_s']:>11.2f}" if "total_s" in d else f"{'-':>11}"
        print(
            f"  {labels[name]:33} {d['median_ms']:>11.2f} {d['p90_ms']:>11.2f} {d['p99_ms']:>11.2f} {total}"
        )
    if be is not None:
        print(
            "  (a request the pool does not serve counts as 0 saved; a median of differences is not a difference of medians)"
        )

    if be is not None:
        print("\nVerdict on this trace, at these parameters")
        print(f"  net total {r['net_total_s']:+.2f} s: {r['verdict']}")
        print(f"  break-even: {be.sentence(params)}")
        print(
            f"  (with zero per-fetch latency the break-even is kv_bytes_per_token x R = {r['zero_latency_break_even_gb_s']:.3f} GB/s for any trace)"
        )
        print(
            f"  'fetch only when faster' total: a scheduler that fetched only when faster would net "
            f"{est.net_if_fetch_only_when_faster:+.2f} s"
        )

    if rows:
        name = rows[0].name
        print(f"\nSensitivity: {name} from {rows[0].value:g} to {rows[-1].value:g}")
        print(
            f"  {name:>28} {'saved s':>10} {'transfer s':>11} {'net s':>10} {'TTFT p90 ms per-host/pooled':>28} {'break-even GB/s':>16}  verdict"
        )
        for row in rows:
            j = row.to_json()
            bw = j["break_even"]["bandwidth_gb_s"]
            bw_text = f"{bw:.3f}" if bw is not None else j["break_even"]["status"]
            ttft = f"{j['ttft_p90_ms']['per_host']:.1f} / {j['ttft_p90_ms']['pooled']:.1f}"
            print(
                f"  {row.value:>28g} {j['prefill_saved_s']:>10.2f} {j['transfer_s']:>11.2f} {j['net_s']:>+10.2f} {ttft:>28} {bw_text:>16}  {j['verdict']}"
            )
        print(f"  {r['sweep']['conclusion']}")

    print(f"\n{LEAVES_OUT}")
    for path in r["charts"]:
        print(f"chart: {shown(path)}")
