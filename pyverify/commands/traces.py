"""``pyverify trace import`` and ``pyverify mrc``: real traces, and LRU at every capacity."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # annotations only
    import numpy as np

    from pyverify.inputs.records import ImportOptions


from pyverify.reports.charts import mrc_chart
from pyverify.commands.argtypes import chart_path, fleet_size, output_file, positive_int
from pyverify.commands.basic import INPUT_HELP, about_file, add_routing_options, capacity_list, print_json
from pyverify.commands.mrc_estimate import add_sample_rate, run_mrc_estimate
from pyverify.errors import UserError, shown
from pyverify.fileio import write_text_atomic
from pyverify.inputs.load import load_described, load_input
from pyverify.inputs.model import instance_sha256
from pyverify.progress import progress_bar
from pyverify.sim.routing import ONLINE_POLICIES, POLICIES, RoutingOptions, default_fleet, default_policy, route
from pyverify.sim.simulate import LRU, PER_HOST, POOLED, simulate

ORDER = 20


def register(subparsers) -> None:
    trace = subparsers.add_parser("trace", help="import a request trace (Mooncake JSONL and other formats) as an instance")
    trace_commands = trace.add_subparsers(dest="trace_command", metavar="ACTION")
    trace_commands.required = True
    imp = trace_commands.add_parser(
        "import",
        help="validate a trace and write it as a pyverify.instance/1 file",
        description=(
            "Read a trace in any accepted format, told apart by content (Mooncake JSONL: one object per line with "
            "timestamp, input_length, output_length, hash_ids, one hash id per 512-token block; a pyverify instance; "
            "see README 'Input formats' for the others), gzip-compressed or not, from a file or '-' (standard input); "
            "check every line and prefix closure, and write the instance atomically. Errors name the line. "
            "Decreasing timestamps are an error unless --allow-unsorted (then a warning, and the file order is kept "
            "as the replay order)."
        ),
    )
    imp.add_argument("trace", help="trace file in any accepted format (Mooncake JSONL, an instance, token ids, chat, Parquet/CSV with hash_ids), or - for standard input")
    imp.add_argument("-o", "--output", type=output_file, required=True, metavar="INSTANCE",
                     help="instance JSON file to write; a name ending in .parquet writes the columnar trace instead (needs pyarrow)")
    imp.add_argument("--hosts", type=fleet_size,
                     help="fleet size recorded in the instance (default: 1 for a trace, which carries no routing; an instance keeps its own)")
    imp.add_argument("--name", help="instance name (default: the file's stem, without .gz; 'stdin' for -)")
    imp.add_argument("--allow-unsorted", action="store_true", help="accept decreasing timestamps with a warning")
    imp.add_argument("--block-size", type=positive_int, metavar="TOKENS",
                     help="tokens per block: for a token-id log or chat JSONL, the size of the hashed blocks (default: 16, "
                          "vLLM's); for chains of ids (Mooncake, an instance), a whole multiple of their block size to "
                          "re-block to (every Kth id; see README 'Input formats')")
    imp.add_argument("--tokenizer", metavar="PATH|bytes",
                     help="chat JSONL only: a tokenizer.json (needs the 'tokenizers' package: pip install 'pyverify[tokenizers]'), "
                          "or 'bytes' (default: one token per UTF-8 byte, needs nothing)")
    imp.add_argument("--json", action="store_true", help="machine-readable summary")
    imp.set_defaults(func=run_import)

    mrc = subparsers.add_parser(
        "mrc",
        help="exact LRU and optimal (Belady MIN) miss-ratio curves: hit rate at every cache capacity, in one pass",
        description=(
            "Exact LRU hit rate at every capacity from one pass of stack distances (Mattson et al. 1970). It is "
            "exact for pyverify's longest-prefix caches on prefix-closed traces (proof in pyverify/sim/mrc.py). "
            "pooled: one cache of C blocks. per-host: every host caches C blocks, requests routed by a static "
            "policy (default round-robin for a trace, fold for an instance with routing; prefix-affinity depends "
            "on C and has no one-pass curve: use 'sweep --capacity'). --policy lru,opt adds the optimal curve: the "
            "fewest misses any eviction with hindsight achieves at each capacity (Belady's MIN, a stack algorithm; "
            "docs/min-flat-relaxation.md), and the capacity LRU needs to match it. A trace file (Parquet, CSV, "
            "Mooncake JSONL) of 256 MiB or more is read as arrays, not Python objects: the same numbers."
        ),
    )
    mrc.add_argument("instance", help=INPUT_HELP)
    mrc.add_argument("--model", choices=(POOLED, PER_HOST), default=POOLED, help="one pooled cache (default) or one per host")
    mrc.add_argument("--fleet", type=fleet_size, help="fleet size for per-host (default: the instance's hosts, or 16 for a trace)")
    mrc.add_argument("--routing", choices=sorted(POLICIES), help="static routing policy for per-host")
    add_routing_options(mrc)
    mrc.add_argument("--policy", type=curve_policies, default=("lru",), metavar="lru[,opt]",
                     help="curves to compute: lru (default), opt (Belady's MIN: the optimum), or both, comma-separated")
    mrc.add_argument("--capacities", type=capacity_list, metavar="C1,C2,...",
                     help="capacities (blocks per cache) to print (default: about 10 per decade from 1 block to the capacity that reaches the ceiling)")
    mrc.add_argument("--verify", action="store_true",
                     help="also replay pyverify.sim.simulate's LRU (and MIN, for opt) at each printed capacity and report agreement (exit 1 on any difference)")
    mrc.add_argument("--chart", type=chart_path, metavar="PATH", help="write the curve (log capacity axis; .png, .svg, or a stem for both)")
    mrc.add_argument("--json", action="store_true", help="machine-readable output")
    add_sample_rate(mrc)
    mrc.set_defaults(func=run_mrc)


def import_options(args, advance) -> ImportOptions:
    """The ``trace import`` flags as :class:`ImportOptions`."""
    from pyverify.inputs.records import ImportOptions

    return ImportOptions(hosts=args.hosts, name=args.name, allow_unsorted=args.allow_unsorted,
                         block_size=args.block_size, tokenizer=args.tokenizer, progress=advance)


CURVE_POLICIES = ("lru", "opt")


def curve_policies(text: str) -> tuple[str, ...]:
    import argparse

    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in CURVE_POLICIES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected lru, opt or lru,opt, not {text!r}")
    return names


#: What ``trace import -o`` writes, by the output's suffix.
OUTPUT_SUFFIXES = (".json", ".parquet")


def run_import(args) -> int:
    suffix = Path(str(args.output)).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise UserError(f"{shown(args.output)}: trace import writes an instance (.json) or the columnar trace (.parquet); "
                        f"{'a name ending in ' + shown(suffix, 20) if suffix else 'a name without a suffix'} says neither")
    if suffix == ".parquet":
        return run_import_parquet(args)
    with progress_bar(None, "import", unit="req") as advance:
        loaded = load_described(args.trace, import_options(args, advance))
    instance = loaded.instance
    text = json.dumps(instance.to_json(), separators=(",", ":")) + "\n"
    write_text_atomic(args.output, text)
    summary = {
        "trace": args.trace,
        "output": args.output,
        "format": loaded.format.key,
        "compression": loaded.compression,
        "name": instance.name,
        "sha256": instance_sha256(instance),
        "requests": instance.n_requests,
        "block_references": instance.n_references,
        "distinct_blocks": len({block for chain in instance.chains for block in chain}),
        "block_size_tokens": instance.block_size_tokens,
        "prefix_closed": True,
        "notes": list(loaded.notes),
    }
    if args.json:
        print_json(summary)
    else:
        print(f"{shown(args.trace)}: valid {loaded.kind}, prefix-closed; wrote {shown(args.output)}")
        for note in loaded.notes:
            print(f"  note: {note}")
        for key, value in summary.items():
            if key not in ("trace", "output", "format", "compression", "notes"):
                print(f"  {key:17} {value}")
    return 0


def run_import_parquet(args) -> int:
    """``trace import ... -o x.parquet``: validate (same rules) and write the columnar form, atomically."""
    from pyverify.commands.engine_options import is_trace_file
    from pyverify.inputs.columnar import ColumnarTrace, read_columnar, write_parquet
    from pyverify.sim.counting import pooled_misses

    if is_trace_file(args.trace) and args.block_size is None and args.tokenizer is None:
        trace = read_columnar(args.trace, allow_unsorted=args.allow_unsorted)  # as arrays: no Python object per block
    else:  # any other input (an instance, token ids, chat, standard input) as every command reads it
        with progress_bar(None, "import", unit="req") as advance:
            trace = ColumnarTrace.from_instance(load_described(args.trace, import_options(args, advance)).instance)
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
        print(f"{shown(args.trace)}: valid trace, prefix-closed; wrote {shown(args.output)} (Parquet, one row per request)")
        for key, value in summary.items():
            if key not in ("trace", "output"):
                print(f"  {key:17} {value}")
    return 0


def run_mrc(args) -> int:
    import numpy as np

    from pyverify.sim.counting import reference_hosts
    from pyverify.sim.mrc import log_capacities, lru_curve_of_references
    from pyverify.sim.opt_curve import capacity_to_match, optimal_curve_flat

    if args.sample_rate is not None:
        return run_mrc_estimate(args, print_json)
    if args.model != PER_HOST and (args.routing or args.fleet):
        raise UserError("--routing/--fleet: only for --model per-host (a pooled cache does not depend on routing)")
    source = _curve_input(args)
    routing, fleet, routing_policy = source.routing, source.fleet, source.policy
    hosts = None if routing is None else reference_hosts(routing, source.lengths)
    policies = args.policy
    curves = {}
    if "lru" in policies:
        curves["lru"] = lru_curve_of_references(source.ids, hosts, fleet)
    if "opt" in policies:
        curves["opt"] = optimal_curve_flat(source.ids, source.lengths, routing, fleet)
    first = curves[policies[0]]
    full = max(max(c.max_useful_capacity for c in curves.values()), 1)
    capacities = args.capacities or log_capacities(full)
    points = first.points(capacities)
    if "lru" not in policies:  # only opt: name its fields like the other curve's
        points = [{"capacity_blocks": p["capacity_blocks"]} for p in points]
    if "opt" in curves:
        opt_misses = curves["opt"].misses(np.asarray(capacities))
        for point, misses in zip(points, opt_misses.tolist()):
            point["opt_misses"] = int(misses)
            point["opt_hit_rate"] = float(1 - misses / curves["opt"].references) if curves["opt"].references else 0.0
            if "lru" in curves:
                point["lru_capacity_to_match_opt"] = capacity_to_match(curves["lru"], int(misses))
    block = source.block_size_tokens
    if "lru" in curves and source.weights is not None:
        _add_token_hit_rates(source, points)
    for point in points:
        if block:
            point["capacity_tokens"] = point["capacity_blocks"] * block
    if args.verify:
        from pyverify.sim.belady_min import min_run_flat

        with progress_bar(len(points) * len(curves), "verify", unit="capacity") as advance:
            for point in points:
                if "lru" in curves:
                    point["simulated_misses"] = source.lru_misses(point["capacity_blocks"])
                    advance()
                if "opt" in curves:
                    point["min_run_misses"] = min_run_flat(source.ids, source.lengths, routing, point["capacity_blocks"])[2]
                    advance()
    charts = []
    where = "pooled cache" if args.model == POOLED else f"per-host caches, {fleet} hosts, {routing_policy} routing"
    if args.chart:
        grid = log_capacities(full, per_decade=60)
        unit = block or 1
        labels = {"lru": "LRU", "opt": "optimum (Belady MIN)"}
        charts = mrc_chart(
            [(f"{labels[name]}, {where}", [c * unit for c in grid], curves[name].hit_rate(grid).tolist()) for name in policies],
            first.ceiling_hit_rate, args.chart,
            title=f"{source.name}: exact {' and '.join(labels[name] for name in policies)} hit rate against cache capacity",
            xlabel=f"capacity per cache ({'tokens, ' + str(block) + ' per block' if block else 'blocks'}; log scale)",
        )
    mismatches = [p for p in points if ("simulated_misses" in p and p["simulated_misses"] != p["misses"])
                  or ("min_run_misses" in p and p["min_run_misses"] != p["opt_misses"])]
    result = {
        "instance": source.name,
        "sha256": source.sha256,
        **({"engine": source.engine} if source.engine else {}),
        "model": args.model,
        "fleet_size": fleet,
        "routing": routing_policy,
        "eviction": LRU if policies == ("lru",) else list(policies),
        "references": first.references,
        "cold_misses": first.cold,
        "ceiling_hit_rate": first.ceiling_hit_rate,
        "capacity_reaching_ceiling": full,
        "block_size_tokens": block,
        "points": points,
        "verified": (not mismatches) if args.verify else None,
        "charts": [str(path) for path in charts],
    }
    if "opt" in curves:
        result["opt_capacity_reaching_ceiling"] = max(curves["opt"].max_useful_capacity, 1)
    if args.json:
        print_json(result)
        return 1 if mismatches else 0
    where = "one pooled cache" if args.model == POOLED else f"{fleet} per-host caches ({routing_policy} routing), each"
    names = " and ".join({"lru": "LRU", "opt": "optimal (Belady MIN)"}[name] for name in policies)
    engine = f"; engine {source.engine}" if source.engine else ""
    print(f"{source.name}: exact {names} miss-ratio curve{'s' if len(policies) > 1 else ''}, {where} of C blocks; "
          f"{first.references} block references{engine}")
    print(f"  ceiling (uncapacitated) hit rate {first.ceiling_hit_rate:.4f} = 1 - {first.cold}/{first.references}, "
          f"reached at C = {full} blocks" + (f" (the optimum reaches it at C = {result['opt_capacity_reaching_ceiling']})" if "opt" in curves and "lru" in curves else ""))
    header = f"{'C blocks':>10}" + (f" {'C tokens':>12}" if block else "")
    if "lru" in curves:
        header += f" {'misses':>10} {'hit rate':>9}" + (f" {'token hr':>9}" if "token_hit_rate" in points[0] else "")
        header += f" {'simulated':>10}" if args.verify else ""
    if "opt" in curves:
        header += f" {'opt misses':>10} {'opt hit':>8}" + (f" {'MIN run':>10}" if args.verify else "")
        if "lru" in curves:
            header += f" {'LRU needs C':>12}"
    print(header)
    for point in points:
        line = f"{point['capacity_blocks']:>10}" + (f" {point['capacity_tokens']:>12}" if block else "")
        if "lru" in curves:
            line += f" {point['misses']:>10} {point['hit_rate']:>9.4f}" + (f" {point['token_hit_rate']:>9.4f}" if "token_hit_rate" in point else "")
            line += f" {point['simulated_misses']:>10}" if args.verify else ""
        if "opt" in curves:
            line += f" {point['opt_misses']:>10} {point['opt_hit_rate']:>8.4f}" + (f" {point['min_run_misses']:>10}" if args.verify else "")
            if "lru" in curves:
                line += f" {point['lru_capacity_to_match_opt'] if point['lru_capacity_to_match_opt'] is not None else '-':>12}"
        print(line)
    if args.verify:
        checked = " and ".join(name for name, key in (("pyverify.sim.simulate's LRU run", "lru"), ("a MIN run (pyverify.sim.belady_min)", "opt")) if key in curves)
        print(f"verify: every curve point equals {checked}" if not mismatches
              else f"verify: {len(mismatches)} capacities DIFFER from the per-capacity runs")
    for path in charts:
        print(f"chart: {shown(path)}")
    return 1 if mismatches else 0


def _add_token_hit_rates(source: "CurveInput", points) -> None:
    """Beside each point's block hit rate, its token hit rate (hits weighed by their tokens; pyverify.sim.tokens)."""
    from pyverify.sim.engine_curves import chain_order_distances_flat, weighted_curve_flat

    distances = chain_order_distances_flat(source.ids, source.lengths, source.routing, source.fleet)
    curve = weighted_curve_flat(distances, source.lengths, source.weights)
    for point, weighted in zip(points, curve.points([p["capacity_blocks"] for p in points])):
        point["token_hit_rate"] = weighted["token_hit_rate"]


@dataclass
class CurveInput:
    """What ``mrc`` needs of its input, however it was read: flat arrays, the routing, token weights,
    and a per-capacity LRU run for ``--verify``."""

    name: str
    sha256: str | None
    engine: str | None
    block_size_tokens: int | None
    ids: "np.ndarray"
    lengths: "np.ndarray"
    routing: Any  # one host per request, or None for one pooled cache
    fleet: int
    policy: str | None
    weights: Any  # TokenWeights | None
    lru_misses: Callable[[int], int]


def _curve_input(args) -> CurveInput:
    """The input as instance (Python chains: every input) or, for a big trace file, as arrays
    replayed by the compiled kernels (as ``simulate`` and ``budgets`` do)."""
    import numpy as np

    from pyverify.commands.engine_options import big_trace_file, kernels_available
    from pyverify.sim.counting import flatten

    per_host = args.model == PER_HOST
    if per_host and args.routing in ONLINE_POLICIES:
        raise UserError(f"--routing: {args.routing} depends on the cache capacity, so it has no one-pass curve; "
                        "use 'pyverify sweep --routing prefix-affinity --capacity C' at each capacity")
    if big_trace_file(args.instance) and kernels_available():
        from pyverify.commands.array_simulate import ENGINE, route_trace
        from pyverify.inputs.columnar import read_columnar
        from pyverify.sim.array_run import ArrayReplay, trace_token_weights

        trace = read_columnar(args.instance)
        routing, fleet, policy = route_trace(trace, args) if per_host else (None, 1, None)
        replay = ArrayReplay(trace, routing if per_host else np.zeros(trace.n_requests, dtype=np.int64))

        def lru_misses(capacity: int) -> int:
            return trace.n_references - int(replay.hits(capacity, LRU).sum())

        return CurveInput(trace.name, None, ENGINE, trace.block_size_tokens, trace.ids, np.diff(trace.offsets),
                          routing, fleet, policy, trace_token_weights(trace, args.instance), lru_misses)
    from pyverify.sim.tokens import instance_token_weights

    instance = load_input(args.instance)
    policy, fleet, routing = None, 1, None
    if per_host:
        policy = args.routing or default_policy(instance)
        fleet = args.fleet or default_fleet(instance)
        with about_file(args.instance, "routing"):
            routing = route(instance, fleet, policy, RoutingOptions(seed=args.seed, slack=args.affinity_slack))
    ids, lengths = flatten(instance.chains)

    def lru_misses(capacity: int) -> int:
        return simulate(instance.chains, routing, args.model, capacity=capacity, eviction=LRU).misses

    return CurveInput(instance.name, instance_sha256(instance), None, instance.block_size_tokens, ids, lengths,
                      routing, fleet, policy, instance_token_weights(instance, args.instance), lru_misses)
