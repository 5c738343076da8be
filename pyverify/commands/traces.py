"""``pyverify trace import`` and ``pyverify mrc``: real traces, and LRU at every capacity."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # annotations only
    import numpy as np

    from pyverify.inputs.columnar.trace import ColumnarTrace
    from pyverify.inputs.load import Loaded
    from pyverify.inputs.records import ImportOptions


from pyverify.reports.charts import mrc_chart
from pyverify.commands.argtypes import (
    chart_path,
    fleet_size,
    input_file,
    output_file,
    target_hit_rate,
)
from pyverify.commands.cache_options import add_kv_size_options, gib_of_blocks
from pyverify.commands.basic import (
    INPUT_HELP,
    about_file,
    add_routing_options,
    capacity_list,
)
from pyverify.commands.output import print_json
from pyverify.commands.engine_options import (
    add_trace_engine_option,
    load_kernels_before_reading,
    trace_on_arrays,
)
from pyverify.commands.input_options import (
    add_input_options,
    described_block_size,
    identity_of,
    import_options,
    load_described_with,
    needs_instance_reader,
    read_trace_with,
)
from pyverify.commands.mrc_estimate import add_sample_rate, run_mrc_estimate
from pyverify.commands.output import aligned_table
from pyverify.errors import UserError, shown
from pyverify.fileio import write_error, write_text_atomic
from pyverify.inputs.kv_models import kv_size
from pyverify.inputs.load import load_described
from pyverify.inputs.model import instance_sha256
from pyverify.progress import progress_bar
from pyverify.sim.routing import (
    ONLINE_POLICIES,
    POLICIES,
    RoutingOptions,
    default_fleet,
    default_policy,
    route,
)
from pyverify.sim.simulate import LRU, LRU_NAME, LRU_NOTE, PER_HOST, POOLED, simulate

ORDER = 20


def register(subparsers) -> None:
    trace = subparsers.add_parser(
        "trace", help="import a request trace (Mooncake JSONL and other formats) as an instance"
    )
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
    imp.add_argument(
        "trace",
        type=input_file,
        help="trace file in any accepted format (Mooncake JSONL, an instance, token ids, chat, Parquet/CSV with hash_ids), or - for standard input",
    )
    imp.add_argument(
        "-o",
        "--output",
        type=output_file,
        required=True,
        metavar="INSTANCE",
        help="instance JSON file to write; a name ending in .parquet writes the columnar trace instead (needs pyarrow)",
    )
    imp.add_argument(
        "--hosts",
        type=fleet_size,
        help="fleet size recorded in the instance (default: 1 for a trace, which carries no routing; an instance keeps its own)",
    )
    imp.add_argument(
        "--name", help="instance name (default: the file's stem, without .gz; 'stdin' for -)"
    )
    imp.add_argument(
        "--routing",
        choices=tuple(POLICIES),
        metavar="POLICY",
        help="route once and record the hosts in the instance ("
        + ", ".join(POLICIES)
        + "): an online "
        "policy such as prefix-affinity then becomes a static routing that certify, mrc and sweep "
        "read with --routing given (prefix-affinity routes with uncapacitated caches)",
    )
    imp.add_argument(
        "--fleet",
        type=fleet_size,
        metavar="N",
        help="fleet size for --routing (default: 16 for a trace)",
    )
    add_routing_options(imp)
    add_input_options(imp)
    imp.add_argument("--json", action="store_true", help="machine-readable summary")
    imp.set_defaults(func=run_import)
    formats = trace_commands.add_parser(
        "formats", help="list the input formats pyverify reads, and how each is told apart"
    )
    formats.add_argument("--json", action="store_true", help="machine-readable list")
    formats.set_defaults(func=run_formats)
    from pyverify.commands import engine_check

    engine_check.register(trace_commands)

    mrc = subparsers.add_parser(
        "mrc",
        help=f"exact {LRU_NAME} and optimal (Belady MIN) miss-ratio curves: hit rate at every cache capacity, in one pass",
        description=(
            f"Exact {LRU_NAME} hit rate at every capacity from one pass of stack distances (Mattson et al. 1970). It is "
            "exact for pyverify's longest-prefix caches on prefix-closed traces (proof in pyverify/sim/mrc.py). "
            "Chain-order LRU touches a request's blocks root first, so it can evict a parent before its child; "
            "engines evict leaf-first (a block with no cached child), which can hit more or less at the same capacity "
            "(compare with 'budgets --eviction lru,leaf-lru'). "
            "pooled: one cache of C blocks. per-host: every host caches C blocks, requests routed by a static "
            "policy (default round-robin for a trace, fold for an instance with routing; prefix-affinity depends "
            "on C and has no one-pass curve: use 'sweep --capacity'). --policy lru,opt adds the optimal curve: the "
            "fewest misses any eviction with hindsight achieves at each capacity (Belady's MIN, a stack algorithm; "
            "docs/min-flat-relaxation.md), and the capacity LRU needs to match it; that optimum may discard a block it "
            "fetches (bypass). opt-forced adds the optimum of a cache that admits every block it fetches and keeps the "
            "running request's blocks, as vLLM and SGLang do (pyverify/optimal/forced.py; one run per printed capacity). A trace file (Parquet, CSV, "
            "Mooncake JSONL) is read as arrays, not Python objects, at any size: the same numbers (--backend python reads it "
            "per record)."
        ),
    )
    mrc.add_argument("instance", type=input_file, help=INPUT_HELP)
    mrc.add_argument(
        "--model",
        choices=(POOLED, PER_HOST),
        default=POOLED,
        help="one pooled cache (default) or one per host",
    )
    mrc.add_argument(
        "--fleet",
        type=fleet_size,
        help="fleet size for per-host (default: the instance's hosts, or 16 for a trace)",
    )
    mrc.add_argument(
        "--routing", choices=sorted(POLICIES), help="static routing policy for per-host"
    )
    add_routing_options(mrc)
    mrc.add_argument(
        "--policy",
        type=curve_policies,
        default=("lru",),
        metavar="lru[,opt][,opt-forced]",
        help="curves to compute, comma-separated: lru (default; chain-order LRU, not an engine's leaf-first "
        "LRU); opt, the best any cache of C blocks could do (Belady's MIN, bypass: a fetched block may be "
        "discarded); opt-forced, the best a cache of C blocks that admits every block it fetches and keeps "
        "the running request's blocks could do (forced admission, as serving engines)",
    )
    mrc.add_argument(
        "--capacities",
        type=capacity_list,
        metavar="C1,C2,...",
        help="capacities (blocks per cache) to print (default: about 10 per decade from 1 block to the capacity that reaches the ceiling)",
    )
    mrc.add_argument(
        "--verify",
        action="store_true",
        help="also replay pyverify.sim.simulate's LRU (and MIN, for opt; the checker's own forced recount, for opt-forced) "
        "at each printed capacity and report agreement (exit 1 on any difference)",
    )
    mrc.add_argument(
        "--chart",
        type=chart_path,
        metavar="PATH",
        help="write the curve (log capacity axis; .png, .svg, or a stem for both)",
    )
    mrc.add_argument(
        "--target-hit-rate",
        type=target_hit_rate,
        metavar="X",
        help="also print the smallest capacity per cache whose block hit rate is at least X (0 < X <= 1), "
        "for each curve, read off the exact curve; 'not reached' when even an uncapacitated cache "
        "falls short. In GiB too with --kv-model or --kv-bytes-per-token",
    )
    add_kv_size_options(mrc)
    mrc.add_argument("--json", action="store_true", help="machine-readable output")
    add_sample_rate(mrc)
    add_trace_engine_option(mrc)
    add_input_options(mrc)
    mrc.set_defaults(func=run_mrc)


def trace_import_options(args, advance) -> ImportOptions:
    """The ``trace import`` flags as :class:`ImportOptions`: the reading flags, and the instance's hosts and name."""
    return import_options(args, advance, hosts=args.hosts, name=args.name)


CURVE_POLICIES = ("lru", "opt", "opt-forced")


def curve_policies(text: str) -> tuple[str, ...]:
    import argparse

    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in CURVE_POLICIES]
    if not names or unknown:
        from pyverify.suggestions import did_you_mean

        raise argparse.ArgumentTypeError(
            f"expected lru, opt, opt-forced or several of them comma-separated, not {text!r}"
            + (did_you_mean(unknown[0], CURVE_POLICIES) if unknown else "")
        )
    return names


#: What ``trace import -o`` writes, by the output's suffix.
OUTPUT_SUFFIXES = (".json", ".parquet")


def run_formats(args) -> int:
    """``trace formats``: every input format, in the order they are tried (the 'unknown format'
    errors point here)."""
    from pyverify.inputs.load import FORMATS

    if args.json:
        print_json(
            [{"key": fmt.key, "title": fmt.title, "told_by": fmt.signature} for fmt in FORMATS]
        )
        return 0
    print(
        "pyverify reads these formats, told apart by content, never by file name (any of them "
        "gzip-compressed or from standard input '-', but Parquet and CSV, which are read from a "
        "file):"
    )
    for fmt in FORMATS:
        print(f"  {fmt.key:24} {fmt.signature}")
    return 0


def run_import(args) -> int:
    from pyverify.inputs.columnar.digest import content_sha256

    suffix = Path(str(args.output)).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise UserError(
            f"{shown(args.output)}: trace import writes an instance (.json) or the columnar trace (.parquet); "
            f"{'a name ending in ' + shown(suffix, 20) if suffix else 'a name without a suffix'} says neither"
        )
    if suffix == ".parquet":
        return run_import_parquet(args)
    with progress_bar(None, "import", unit="req") as advance:
        loaded = load_described(args.trace, trace_import_options(args, advance))
    instance = _routed_once(args, loaded.instance)
    text = json.dumps(instance.to_json(), separators=(",", ":")) + "\n"
    write_text_atomic(args.output, text)
    summary = {
        "trace": args.trace,
        "output": args.output,
        "format": loaded.format.key,
        "compression": loaded.compression,
        "name": instance.name,
        "sha256": content_sha256(instance),  # the identity every command reports, in any format
        "instance_sha256": instance_sha256(
            instance
        ),  # the written pyverify.instance/1 file's canonical JSON
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
        print(
            f"{shown(args.trace)}: valid {loaded.kind}, prefix-closed; wrote {shown(args.output)}"
        )
        for note in loaded.notes:
            print(f"  note: {note}")
        for key, value in summary.items():
            if key == "block_size_tokens":
                value = described_block_size(value, loaded)
            if key not in ("trace", "output", "format", "compression", "notes"):
                print(f"  {key:17} {value}")
    return 0


def _routed_once(args, instance):
    """``--routing POLICY``: the instance with the hosts the policy chose recorded as its routing."""
    import dataclasses

    if args.routing is None:
        if args.fleet is not None:
            raise UserError("--fleet: only with --routing (the fleet the requests are routed over)")
        return instance
    fleet = args.fleet or args.hosts or default_fleet(instance)
    with about_file(args.trace, "routing"):
        routing = route(
            instance, fleet, args.routing, RoutingOptions(seed=args.seed, slack=args.affinity_slack)
        )
    return dataclasses.replace(instance, fleet_size=fleet, routing=tuple(routing))


def _any_input_as_columns(args) -> tuple[ColumnarTrace, Loaded]:
    """The input as arrays, whatever its format, and what it was (its format, notes): the column
    readers for the trace files they read (Mooncake JSONL, CSV, Parquet), else the instance readers
    (instance JSON, token-id and chat JSONL, and re-blocking or tokenizing flags), converted once.
    The array readers' inputs make no notes; their format is told by content, as the instance
    readers tell it."""
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.columnar.formats import is_hash_ids_csv, is_hash_ids_jsonl, is_parquet
    from pyverify.inputs.load import CSV, MOONCAKE, PARQUET, Loaded

    path = args.trace
    if not needs_instance_reader(args) and (
        is_parquet(path) or is_hash_ids_csv(path) or is_hash_ids_jsonl(path)
    ):
        trace = read_trace_with(args, path)
        fmt = PARQUET if is_parquet(path) else CSV if is_hash_ids_csv(path) else MOONCAKE
        return trace, Loaded(None, fmt, None)
    loaded = load_described_with(args, path)
    instance = loaded.instance
    if any("block_tokens" in item for item in instance.extra):
        # The columnar trace has one block size; blocks of varying size (RAGPulse's chunks) would lose their weights.
        raise UserError(
            f"{shown(path)}: its blocks differ in size (block_tokens), which a Parquet trace cannot hold; "
            "write an instance (.json) instead"
        )
    return ColumnarTrace.from_instance(instance), loaded


def run_import_parquet(args) -> int:
    """``trace import ... -o x.parquet``: validate (same rules) and write the columnar form, atomically."""
    from pyverify.inputs.columnar import write_parquet
    from pyverify.sim.counting import pooled_misses

    trace, loaded = _any_input_as_columns(args)
    try:
        write_parquet(trace, args.output)
    except (
        OSError
    ) as error:  # pyarrow's own errors name no file ("Error writing bytes to file"): name it
        raise write_error(Path(args.output), error) from None
    summary = {
        "trace": args.trace,
        "output": args.output,
        "format": loaded.format.key,
        "compression": loaded.compression,
        "requests": trace.n_requests,
        "block_references": trace.n_references,
        "distinct_blocks": pooled_misses(trace.ids),
        "block_size_tokens": trace.block_size_tokens,
        "prefix_closed": True,
        "notes": list(loaded.notes),
    }
    if args.json:
        print_json(summary)
    else:  # as for an instance (run_import): the format, its notes, then the figures
        print(
            f"{shown(args.trace)}: valid {loaded.kind}, prefix-closed; wrote {shown(args.output)} "
            "(Parquet, one row per request)"
        )
        for note in loaded.notes:
            print(f"  note: {note}")
        for key, value in summary.items():
            if key == "block_size_tokens":
                value = described_block_size(value, loaded)
            if key not in ("trace", "output", "format", "compression", "notes"):
                print(f"  {key:17} {value}")
    return 0


def run_mrc(args) -> int:
    import numpy as np

    from pyverify.sim.counting import reference_hosts
    from pyverify.sim.mrc import log_capacities, lru_curve_of_references
    from pyverify.optimal.curve import capacity_to_match, optimal_curve_flat

    if args.sample_rate is not None:
        return run_mrc_estimate(args, print_json)
    if args.model != PER_HOST and (args.routing or args.fleet):
        raise UserError(
            "--routing/--fleet: only for --model per-host (a pooled cache does not depend on routing)"
        )
    source = _curve_input(args)
    routing, fleet, routing_policy = source.routing, source.fleet, source.policy

    def lru_of_references():
        return lru_curve_of_references(
            source.ids, None if routing is None else reference_hosts(routing, source.lengths), fleet
        )

    policies = args.policy
    curves = {}
    token_curve = None
    if "lru" in policies and source.weights is not None:
        # One pass of stack distances serves both columns: the block curve is their histogram, the token
        # curve the same histogram weighed (a second pass cost as much again as the first).
        from pyverify.sim.engine_curves import lru_weighted_curve
        from pyverify.sim.mrc import MissRatioCurve

        token_curve = lru_weighted_curve(source.ids, source.lengths, routing, fleet, source.weights)
        curves["lru"] = MissRatioCurve(
            references=token_curve.blocks,
            cold=token_curve.blocks - int(token_curve.block_hist.sum()),
            histogram=token_curve.block_hist,
            caches=fleet if routing is not None else 1,
        )
    elif "lru" in policies:
        curves["lru"] = lru_of_references()
    if "opt" in policies:
        curves["opt"] = optimal_curve_flat(source.ids, source.lengths, routing, fleet)
    forced = "opt-forced" in policies
    if not curves:  # only opt-forced: the LRU curve gives the ceiling and the default capacities, and is not printed
        curves["lru"] = lru_of_references()
    first = next((curves[name] for name in policies if name in curves), curves.get("lru"))
    full = max(max(c.max_useful_capacity for c in curves.values()), 1)
    capacities = args.capacities or log_capacities(full)
    points = first.points(capacities)
    if "lru" not in policies:  # no lru: name the other curves' fields by their own names
        curves.pop("lru", None)
        points = [{"capacity_blocks": p["capacity_blocks"]} for p in points]
    if forced:
        from pyverify.optimal.forced import forced_curve_points

        with progress_bar(len(capacities), "opt-forced", unit="capacity") as advance:
            forced_misses = []
            for c in capacities:
                forced_misses += forced_curve_points(source.ids, source.lengths, [c], routing)
                advance()
        for point, misses in zip(points, forced_misses):
            point["opt_forced_misses"] = int(misses)
            point["opt_forced_hit_rate"] = (
                float(1 - misses / first.references) if first.references else 0.0
            )
    if "opt" in curves:
        opt_misses = curves["opt"].misses(np.asarray(capacities))
        for point, misses in zip(points, opt_misses.tolist()):
            point["opt_misses"] = int(misses)
            point["opt_hit_rate"] = (
                float(1 - misses / curves["opt"].references) if curves["opt"].references else 0.0
            )
            if "lru" in curves:
                point["lru_capacity_to_match_opt"] = capacity_to_match(curves["lru"], int(misses))
    block = source.block_size_tokens
    kv = kv_size(
        args.kv_model,
        args.kv_dtype,
        args.kv_bytes_per_token,
        getattr(args, "kv_model_config", None),
    )
    if kv is not None and block is None:
        raise UserError(
            f"{args.instance}: block_size_tokens: not given, so capacities cannot be converted to GiB; drop --kv-model/--kv-bytes-per-token"
        )
    target = _target_capacities(args.target_hit_rate, curves, block, kv)
    if token_curve is not None:
        for point, weighted in zip(
            points, token_curve.points([p["capacity_blocks"] for p in points])
        ):
            point["token_hit_rate"] = weighted["token_hit_rate"]
    for point in points:
        if block:
            point["capacity_tokens"] = point["capacity_blocks"] * block
        if kv is not None:
            point["capacity_gib"] = gib_of_blocks(point["capacity_blocks"], block, kv)
    if args.verify:
        from pyverify.optimal.belady import min_run_flat

        with progress_bar(len(points) * len(curves), "verify", unit="capacity") as advance:
            for point in points:
                if "lru" in curves:
                    point["simulated_misses"] = source.lru_misses(point["capacity_blocks"])
                    advance()
                if "opt" in curves:
                    point["min_run_misses"] = min_run_flat(
                        source.ids, source.lengths, routing, point["capacity_blocks"]
                    )[2]
                    advance()
                if forced:
                    point["forced_recount_misses"] = _forced_recount(
                        source, point["capacity_blocks"]
                    )
    charts = []
    where = (
        "pooled cache"
        if args.model == POOLED
        else f"per-host caches, {fleet} hosts, {routing_policy} routing"
    )
    if args.chart:
        grid = log_capacities(full, per_decade=60)
        unit = block or 1
        labels = {
            "lru": LRU_NAME,
            "opt": "optimum (Belady MIN)",
            "opt-forced": "optimum admitting every block",
        }
        series = [
            (
                f"{labels[name]}, {where}",
                [c * unit for c in grid],
                curves[name].hit_rate(grid).tolist(),
            )
            for name in policies
            if name in curves
        ]
        if forced:  # known only at the printed capacities
            series.append(
                (
                    f"{labels['opt-forced']}, {where}",
                    [p["capacity_blocks"] * unit for p in points],
                    [p["opt_forced_hit_rate"] for p in points],
                )
            )
        charts = mrc_chart(
            series,
            first.ceiling_hit_rate,
            args.chart,
            title=f"{source.name}: exact {' and '.join(labels[name] for name in policies)}\nhit rate against cache capacity",
            xlabel=f"capacity per cache ({'tokens, ' + str(block) + ' per block' if block else 'blocks'}; log scale)",
        )
    mismatches = [
        p
        for p in points
        if ("simulated_misses" in p and p["simulated_misses"] != p["misses"])
        or ("min_run_misses" in p and p["min_run_misses"] != p["opt_misses"])
        or ("forced_recount_misses" in p and p["forced_recount_misses"] != p["opt_forced_misses"])
    ]
    result = {
        "instance": source.name,
        **source.identity(),
        **({"backend": source.engine} if source.engine else {}),
        "model": args.model,
        "fleet_size": fleet,
        "routing": routing_policy,
        "eviction": LRU if policies == ("lru",) else list(policies),
        **({"lru": LRU_NOTE} if "lru" in curves else {}),
        "references": first.references,
        "cold_misses": first.cold,
        "ceiling_hit_rate": first.ceiling_hit_rate,
        "capacity_reaching_ceiling": full,
        "block_size_tokens": block,
        "points": points,
        "verified": (not mismatches) if args.verify else None,
        **(
            {"kv_bytes_per_token": kv.bytes_per_token, "kv_bytes_source": kv.source}
            if kv is not None
            else {}
        ),
        **({"target": target} if target is not None else {}),
        "charts": [str(path) for path in charts],
    }
    if "opt" in curves:
        result["opt_capacity_reaching_ceiling"] = max(curves["opt"].max_useful_capacity, 1)
    if args.json:
        print_json(result)
        return 1 if mismatches else 0
    where = (
        "one pooled cache"
        if args.model == POOLED
        else f"{fleet} per-host caches ({routing_policy} routing), each"
    )
    names = " and ".join(
        {"lru": LRU_NAME, "opt": "optimal (Belady MIN)", "opt-forced": "forced-admission optimal"}[
            name
        ]
        for name in policies
    )
    engine = f"; backend {source.engine}" if source.engine else ""
    print(
        f"{source.name}: exact {names} miss-ratio curve{'s' if len(policies) > 1 else ''}, {where} of C blocks; "
        f"{first.references} block references{engine}"
    )
    if "lru" in curves:
        print(f"  {LRU_NOTE}")
    print(
        f"  ceiling (uncapacitated) hit rate {first.ceiling_hit_rate:.4f} = 1 - {first.cold}/{first.references}, "
        f"reached at C = {full} blocks"
        + (" by LRU (not printed)" if not curves else "")
        + (
            f" (the optimum reaches it at C = {result['opt_capacity_reaching_ceiling']})"
            if "opt" in curves and "lru" in curves
            else ""
        )
    )
    if kv is not None:
        print(f"  GiB: blocks x {block} tokens x {kv.bytes_per_token:g} bytes/token ({kv.source})")
    columns = [("C blocks", "capacity_blocks", "d")]
    columns += [("C tokens", "capacity_tokens", "d")] if block else []
    columns += [("C GiB", "capacity_gib", ".4g")] if kv is not None else []
    if "lru" in curves:
        columns += [("misses", "misses", "d"), ("hit rate", "hit_rate", ".4f")]
        columns += (
            [("token hit rate", "token_hit_rate", ".4f")] if "token_hit_rate" in points[0] else []
        )
        columns += [("simulated", "simulated_misses", "d")] if args.verify else []
    if "opt" in curves:
        columns += [("opt misses", "opt_misses", "d"), ("opt hit rate", "opt_hit_rate", ".4f")]
        columns += [("MIN run", "min_run_misses", "d")] if args.verify else []
        columns += [("LRU needs C", "lru_capacity_to_match_opt", "d")] if "lru" in curves else []
    if forced:
        columns += [
            ("forced misses", "opt_forced_misses", "d"),
            ("forced hit rate", "opt_forced_hit_rate", ".4f"),
        ]
        columns += [("recount", "forced_recount_misses", "d")] if args.verify else []
    for line in aligned_table(columns, points):
        print(f"  {line}")
    if "opt" in curves:
        print(
            "  opt: the best any cache of C blocks could do (it may discard a block it fetched: bypass)"
        )
    if forced:
        print(
            "  forced: the best a cache of C blocks could do if it admits every block it fetches and keeps the "
            "running request's blocks, as vLLM and SGLang do (forced admission)"
        )
    if args.verify:
        checked = " and ".join(
            name
            for name, key in (
                ("pyverify.sim.simulate's LRU run", "lru"),
                ("a MIN run (pyverify.optimal.belady)", "opt"),
                ("the checker's forced recount (pyverify.trusted.recount)", "opt-forced"),
            )
            if key in curves or (key == "opt-forced" and forced)
        )
        print(
            f"verify: every curve point equals {checked}"
            if not mismatches
            else f"verify: {len(mismatches)} capacities DIFFER from the per-capacity runs"
        )
    if target is not None:
        _print_target(target, {"lru": LRU_NAME, "opt": "optimum (Belady MIN)"})
    for path in charts:
        print(f"chart: {shown(path)}")
    return 1 if mismatches else 0


def _forced_recount(source: "CurveInput", capacity: int) -> int:
    """The checker's own forced-admission count (pyverify.trusted.recount), for ``--verify``."""
    from pyverify.trusted.recount import forced_misses

    ends = source.lengths.cumsum().tolist()
    ids = source.ids.tolist()
    chains = [ids[end - length : end] for end, length in zip(ends, source.lengths.tolist())]
    caches = [0] * len(chains) if source.routing is None else [int(h) for h in source.routing]
    return forced_misses(chains, caches, capacity)


def _target_capacities(rate, curves, block, kv) -> dict | None:
    """For ``--target-hit-rate``: each curve's smallest capacity reaching ``rate`` (pyverify.sim.target)."""
    from pyverify.sim.target import hits_needed, smallest_on_curve

    if rate is None:
        return None
    by_policy = {}
    for name, curve in curves.items():
        blocks = smallest_on_curve(curve, rate)
        by_policy[name] = {
            "reached": blocks is not None,
            "capacity_blocks": blocks,
            "capacity_tokens": blocks * block if blocks is not None and block else None,
            "capacity_gib": gib_of_blocks(blocks, block, kv)
            if blocks is not None and kv is not None
            else None,
            "ceiling_hit_rate": curve.ceiling_hit_rate,
        }
    references = next(iter(curves.values())).references
    return {
        "hit_rate": str(rate) if rate.denominator != 1 else "1",
        "hit_rate_value": float(rate),
        "measure": "block hit rate over all block references",
        "hits_needed": hits_needed(rate, references),
        "by_policy": by_policy,
    }


def _print_target(target: dict, names: dict[str, str]) -> None:
    print(
        f"smallest capacity per cache with block hit rate >= {target['hit_rate_value']:g} "
        f"({target['hits_needed']} hits), read off the exact curve:"
    )
    width = max(len(names[name]) for name in target["by_policy"])
    for name, found in target["by_policy"].items():
        if not found["reached"]:
            text = f"not reached (even uncapacitated: {found['ceiling_hit_rate']:.4f})"
        else:
            text = f"{found['capacity_blocks']} blocks"
            if found["capacity_tokens"] is not None:
                text += f" = {found['capacity_tokens']} tokens"
            if found["capacity_gib"] is not None:
                text += f" = {found['capacity_gib']:.4g} GiB"
        print(f"  {names[name]:<{width}}  {text}")


@dataclass
class CurveInput:
    """What ``mrc`` needs of its input, however it was read: flat arrays, the routing, token weights,
    and a per-capacity LRU run for ``--verify``."""

    name: str
    identity: Callable[
        [], dict[str, str]
    ]  # sha256, the content digest (and instance_sha256 for an instance file): input_options.identity_of
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
    """The input as instance (Python chains: every input, and ``--backend python``) or, for a trace file at any
    size, as arrays replayed by the compiled kernels (as ``simulate`` and ``budgets`` do)."""
    import numpy as np

    from pyverify.cache.arrays import flatten

    per_host = args.model == PER_HOST
    if per_host and args.routing in ONLINE_POLICIES:
        raise UserError(
            f"--routing: {args.routing} depends on the cache state as requests arrive, so it has no one-pass "
            f"curve; route once ('pyverify trace import {args.instance} -o routed.json --routing {args.routing} "
            "--fleet N' records the hosts it chose), then 'mrc routed.json --model per-host --routing given'"
        )
    if trace_on_arrays(
        args, needs_kernels=False
    ):  # the curves compile only when that repays; --verify replays
        from pyverify.commands.array_simulate import ENGINE, route_trace
        from pyverify.inputs.columnar.digest import content_sha256_beside
        from pyverify.sim.array_run import ArrayReplay, trace_token_weights

        load_kernels_before_reading(args.instance)
        trace = read_trace_with(args, args.instance)
        routing, fleet, policy = route_trace(trace, args) if per_host else (None, 1, None)
        replays: list = []  # built on the first --verify capacity

        def lru_misses(capacity: int) -> int:
            from pyverify.sim.kernels import available

            if not available():  # the per-record simulator, on the chains the arrays hold
                chains = [
                    tuple(int(b) for b in trace.ids[a:b])
                    for a, b in zip(trace.offsets[:-1], trace.offsets[1:])
                ]
                return simulate(
                    chains,
                    None if routing is None else routing.tolist(),
                    args.model,
                    capacity=capacity,
                    eviction=LRU,
                ).misses
            if not replays:
                replays.append(
                    ArrayReplay(
                        trace, routing if per_host else np.zeros(trace.n_requests, dtype=np.int64)
                    )
                )
            return trace.n_references - int(replays[0].hits(capacity, LRU).sum())

        sha256 = content_sha256_beside(trace)  # on a second core while the curve is computed
        return CurveInput(
            trace.name,
            lambda: {"sha256": sha256()},
            ENGINE if args.backend == "numpy" else None,
            trace.block_size_tokens,
            trace.ids,
            np.diff(trace.offsets),
            routing,
            fleet,
            policy,
            trace_token_weights(trace, args.instance),
            lru_misses,
        )
    from pyverify.sim.tokens import instance_token_weights

    loaded = load_described_with(args, args.instance)
    instance = loaded.instance
    policy, fleet, routing = None, 1, None
    if per_host:
        policy = args.routing or default_policy(instance)
        fleet = args.fleet or default_fleet(instance)
        with about_file(args.instance, "routing"):
            routing = route(
                instance, fleet, policy, RoutingOptions(seed=args.seed, slack=args.affinity_slack)
            )
    ids, lengths = flatten(instance.chains)

    def lru_misses(capacity: int) -> int:
        return simulate(
            instance.chains, routing, args.model, capacity=capacity, eviction=LRU
        ).misses

    identity = identity_of(loaded)
    return CurveInput(
        instance.name,
        lambda: identity,
        None,
        instance.block_size_tokens,
        ids,
        lengths,
        routing,
        fleet,
        policy,
        instance_token_weights(instance, args.instance),
        lru_misses,
    )
