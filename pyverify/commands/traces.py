"""``pyverify trace import`` and ``pyverify mrc``: real traces, and LRU at every capacity."""

from __future__ import annotations

import json

from pyverify.reports.charts import mrc_chart
from pyverify.commands.argtypes import positive_int
from pyverify.commands.basic import about_file, add_routing_options, fleet_list, print_json
from pyverify.commands.mrc_estimate import add_sample_rate, run_mrc_estimate
from pyverify.errors import UserError
from pyverify.fileio import write_text_atomic
from pyverify.inputs.load import load_input
from pyverify.inputs.model import instance_sha256
from pyverify.sim.mrc import log_capacities, lru_curve
from pyverify.progress import progress_bar
from pyverify.sim.routing import ONLINE_POLICIES, POLICIES, RoutingOptions, default_policy, route
from pyverify.sim.simulate import LRU, PER_HOST, POOLED, simulate
from pyverify.inputs.mooncake import import_mooncake

ORDER = 20


def register(subparsers) -> None:
    trace = subparsers.add_parser("trace", help="import a request trace (Mooncake JSONL) as an instance")
    trace_commands = trace.add_subparsers(dest="trace_command", metavar="ACTION")
    trace_commands.required = True
    imp = trace_commands.add_parser(
        "import",
        help="validate a Mooncake JSONL trace and write it as a pyverify.instance/1 file",
        description=(
            "Read a Mooncake JSONL trace (one object per line: timestamp, input_length, output_length, hash_ids; "
            "one hash id per 512-token block), check every line and prefix closure, and write the instance "
            "atomically. Errors name the line. Decreasing timestamps are an error unless --allow-unsorted "
            "(then a warning, and the file order is kept as the replay order)."
        ),
    )
    imp.add_argument("trace", help="Mooncake .jsonl trace, or a Parquet/CSV trace with a hash_ids column")
    imp.add_argument("-o", "--output", required=True, metavar="INSTANCE",
                     help="instance JSON file to write; a name ending in .parquet writes the columnar trace instead (needs pyarrow)")
    imp.add_argument("--hosts", type=positive_int, default=1, help="fleet size recorded in the instance (default: 1; traces carry no routing)")
    imp.add_argument("--name", help="instance name (default: the trace file's stem)")
    imp.add_argument("--allow-unsorted", action="store_true", help="accept decreasing timestamps with a warning")
    imp.add_argument("--json", action="store_true", help="machine-readable summary")
    imp.set_defaults(func=run_import)

    mrc = subparsers.add_parser(
        "mrc",
        help="exact LRU miss-ratio curve: hit rate at every cache capacity, in one pass",
        description=(
            "Exact LRU hit rate at every capacity from one pass of stack distances (Mattson et al. 1970). It is "
            "exact for pyverify's longest-prefix caches on prefix-closed traces (proof in pyverify/sim/mrc.py). "
            "pooled: one cache of C blocks. per-host: every host caches C blocks, requests routed by a static "
            "policy (default round-robin for a trace, fold for an instance with routing; prefix-affinity depends "
            "on C and has no one-pass curve: use 'sweep --capacity')."
        ),
    )
    mrc.add_argument("instance", help="instance JSON file or Mooncake .jsonl trace")
    mrc.add_argument("--model", choices=(POOLED, PER_HOST), default=POOLED, help="one pooled cache (default) or one per host")
    mrc.add_argument("--fleet", type=positive_int, help="fleet size for per-host (default: the instance's hosts, or 16 for a trace)")
    mrc.add_argument("--routing", choices=sorted(POLICIES), help="static routing policy for per-host")
    add_routing_options(mrc)
    mrc.add_argument("--capacities", type=fleet_list, metavar="C1,C2,...",
                     help="capacities (blocks per cache) to print (default: about 10 per decade from 1 block to the capacity that reaches the ceiling)")
    mrc.add_argument("--verify", action="store_true",
                     help="also replay pyverify.sim.simulate's LRU at each printed capacity and report agreement (exit 1 on any difference)")
    mrc.add_argument("--chart", metavar="PATH", help="write the curve (log capacity axis; .png, .svg, or a stem for both)")
    mrc.add_argument("--json", action="store_true", help="machine-readable output")
    add_sample_rate(mrc)
    mrc.set_defaults(func=run_mrc)


def run_import(args) -> int:
    if str(args.output).lower().endswith(".parquet"):
        return run_import_parquet(args)
    with progress_bar(None, "import", unit="req") as advance:
        instance = import_mooncake(args.trace, hosts=args.hosts, name=args.name, allow_unsorted=args.allow_unsorted, progress=advance)
    text = json.dumps(instance.to_json(), separators=(",", ":")) + "\n"
    write_text_atomic(args.output, text)
    summary = {
        "trace": args.trace,
        "output": args.output,
        "name": instance.name,
        "sha256": instance_sha256(instance),
        "requests": instance.n_requests,
        "block_references": instance.n_references,
        "distinct_blocks": len({block for chain in instance.chains for block in chain}),
        "block_size_tokens": instance.block_size_tokens,
        "prefix_closed": True,
    }
    if args.json:
        print_json(summary)
    else:
        print(f"{args.trace}: valid Mooncake trace, prefix-closed; wrote {args.output}")
        for key, value in summary.items():
            if key not in ("trace", "output"):
                print(f"  {key:17} {value}")
    return 0


def run_import_parquet(args) -> int:
    """``trace import ... -o x.parquet``: validate (same rules) and write the columnar form, atomically."""
    from pyverify.inputs.columnar import read_columnar, write_parquet
    from pyverify.sim.counting import pooled_misses

    trace = read_columnar(args.trace, allow_unsorted=args.allow_unsorted)
    write_parquet(trace, args.output)
    summary = {
        "trace": args.trace,
        "output": args.output,
        "requests": trace.n_requests,
        "block_references": trace.n_references,
        "distinct_blocks": pooled_misses(trace.ids),
        "block_size_tokens": trace.block_size_tokens,
        "prefix_closed": True,
    }
    if args.json:
        print_json(summary)
    else:
        print(f"{args.trace}: valid trace, prefix-closed; wrote {args.output} (Parquet, one row per request)")
        for key, value in summary.items():
            if key not in ("trace", "output"):
                print(f"  {key:17} {value}")
    return 0


def run_mrc(args) -> int:
    if args.sample_rate is not None:
        return run_mrc_estimate(args, print_json)
    instance = load_input(args.instance)
    routing_policy = None
    fleet = 1
    if args.model == PER_HOST:
        routing_policy = args.routing or default_policy(instance)
        if routing_policy in ONLINE_POLICIES:
            raise UserError(f"--routing: {routing_policy} depends on the cache capacity, so it has no one-pass curve; "
                            "use 'pyverify sweep --routing prefix-affinity --capacity C' at each capacity")
        fleet = args.fleet or (instance.hosts if instance.routing is not None else 16)
        with about_file(args.instance, "routing"):
            routing = route(instance, fleet, routing_policy, RoutingOptions(seed=args.seed, slack=args.affinity_slack))
        curve = lru_curve(instance.chains, routing, fleet)
    else:
        if args.routing or args.fleet:
            raise UserError("--routing/--fleet: only for --model per-host (a pooled cache does not depend on routing)")
        routing = None
        curve = lru_curve(instance.chains)
    full = max(curve.max_useful_capacity, 1)
    capacities = args.capacities or log_capacities(full)
    points = curve.points(capacities)
    block = instance.block_size_tokens
    for point in points:
        if block:
            point["capacity_tokens"] = point["capacity_blocks"] * block
    if args.verify:
        with progress_bar(len(points), "verify", unit="capacity") as advance:
            for point in points:
                run = simulate(instance.chains, routing, args.model, capacity=point["capacity_blocks"], eviction=LRU)
                point["simulated_misses"] = run.misses
                advance()
    charts = []
    if args.chart:
        grid = log_capacities(full, per_decade=60)
        unit = block or 1
        where = "pooled cache" if args.model == POOLED else f"per-host caches, {fleet} hosts, {routing_policy} routing"
        charts = mrc_chart(
            [(f"LRU, {where}", [c * unit for c in grid], curve.hit_rate(grid).tolist())],
            curve.ceiling_hit_rate, args.chart,
            title=f"{instance.name}: exact LRU hit rate against cache capacity",
            xlabel=f"capacity per cache ({'tokens, ' + str(block) + ' per block' if block else 'blocks'}; log scale)",
        )
    mismatches = [p for p in points if "simulated_misses" in p and p["simulated_misses"] != p["misses"]]
    result = {
        "instance": instance.name,
        "sha256": instance_sha256(instance),
        "model": args.model,
        "fleet_size": fleet,
        "routing": routing_policy,
        "eviction": LRU,
        "references": curve.references,
        "cold_misses": curve.cold,
        "ceiling_hit_rate": curve.ceiling_hit_rate,
        "capacity_reaching_ceiling": full,
        "block_size_tokens": block,
        "points": points,
        "verified": (not mismatches) if args.verify else None,
        "charts": [str(path) for path in charts],
    }
    if args.json:
        print_json(result)
    else:
        where = "one pooled cache" if args.model == POOLED else f"{fleet} per-host caches ({routing_policy} routing), each"
        print(f"{instance.name}: exact LRU miss-ratio curve, {where} of C blocks; {curve.references} block references")
        print(f"  ceiling (uncapacitated) hit rate {curve.ceiling_hit_rate:.4f} = 1 - {curve.cold}/{curve.references}, "
              f"reached at C = {full} blocks")
        header = f"{'C blocks':>10}" + (f" {'C tokens':>12}" if block else "") + f" {'misses':>10} {'hit rate':>9}"
        print(header + (f" {'simulated':>10}" if args.verify else ""))
        for point in points:
            line = f"{point['capacity_blocks']:>10}" + (f" {point['capacity_tokens']:>12}" if block else "")
            line += f" {point['misses']:>10} {point['hit_rate']:>9.4f}"
            if args.verify:
                line += f" {point['simulated_misses']:>10}"
            print(line)
        if args.verify:
            print("verify: every curve point equals pyverify.sim.simulate's LRU run" if not mismatches
                  else f"verify: {len(mismatches)} capacities DIFFER from pyverify.sim.simulate")
        for path in charts:
            print(f"chart: {path}")
    return 1 if mismatches else 0
