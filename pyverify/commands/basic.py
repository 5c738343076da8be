"""``pyverify validate``, ``simulate`` and ``sweep``: the model's everyday commands."""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager

from pyverify.charts import fleet_sweep_chart
from pyverify.errors import UserError
from pyverify.inputs import load_input
from pyverify.model import instance_sha256
from pyverify.routing import POLICIES, route
from pyverify.simulate import EVICTIONS, LRU, MODELS, PER_HOST, simulate
from pyverify.sweep import default_fleet_sizes, sweep

ORDER = 10


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def fleet_list(text: str) -> list[int]:
    """Parse ``2,4,8,16`` into fleet sizes (positive, no repeats)."""
    sizes = [positive_int(part.strip()) for part in text.split(",") if part.strip()]
    if not sizes:
        raise argparse.ArgumentTypeError("expected a comma-separated list of fleet sizes, such as 2,4,8,16")
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"fleet sizes repeat in {text!r}")
    return sizes


@contextmanager
def about_file(path: str, field: str):
    """Prefix a UserError raised inside with ``path: field:`` so it names the file."""
    try:
        yield
    except UserError as error:
        raise UserError(f"{path}: {field}: {error}") from None


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2))


def register(subparsers) -> None:
    validate = subparsers.add_parser("validate", help="check an instance file: schema, routing, prefix closure")
    validate.add_argument("instance", help="instance JSON file")
    validate.add_argument("--json", action="store_true", help="machine-readable output")
    validate.set_defaults(func=run_validate)

    sim = subparsers.add_parser("simulate", help="run demand caches that start empty over an instance")
    sim.add_argument("instance", help="instance JSON file")
    sim.add_argument("--model", choices=MODELS, required=True, help="one pooled cache, or one cache per host")
    sim.add_argument("--routing", choices=sorted(POLICIES), default="given",
                     help="how requests reach hosts (default: given, the instance's own routing)")
    sim.add_argument("--fleet", type=positive_int, help="fleet size for the routing policy (default: the instance's hosts)")
    sim.add_argument("--capacity", type=positive_int, help="blocks each cache holds (default: no limit)")
    sim.add_argument("--eviction", choices=EVICTIONS, default=LRU, help="eviction policy when a capacity is set (default: lru)")
    sim.add_argument("--witness", action="store_true", help="include the per-request witness in --json output")
    sim.add_argument("--json", action="store_true", help="machine-readable output")
    sim.set_defaults(func=run_simulate)

    sw = subparsers.add_parser(
        "sweep",
        help="pooled against per-host hit rate as the fleet grows",
        description=(
            "For each fleet size F, route the requests to F hosts and count uncapacitated misses for one "
            "pooled cache and for a separate cache per host. Default routing policy 'fold': the instance's "
            "host h serves as host h mod F (so each smaller fleet merges hosts of the larger one)."
        ),
    )
    sw.add_argument("instance", help="instance JSON file")
    sw.add_argument("--fleets", type=fleet_list, help="comma-separated fleet sizes (default: powers of two from 2 to the instance's hosts)")
    sw.add_argument("--routing", choices=sorted(POLICIES), default="fold", help="routing policy for each fleet size (default: fold)")
    sw.add_argument("--chart", metavar="PATH", help="write the hit-rate chart (.png, .svg, or a stem for both)")
    sw.add_argument("--json", action="store_true", help="machine-readable output")
    sw.set_defaults(func=run_sweep)


def run_validate(args) -> int:
    instance = load_input(args.instance)
    summary = {
        "file": args.instance,
        "name": instance.name,
        "sha256": instance_sha256(instance),
        "hosts": instance.hosts,
        "requests": instance.n_requests,
        "block_references": instance.n_references,
        "distinct_blocks": len({b for chain in instance.chains for b in chain}),
        "routing": "given" if instance.routing is not None else "none (choose a policy)",
        "prefix_closed": True,
    }
    if args.json:
        print_json({"valid": True, **summary})
    else:
        print(f"{args.instance}: valid pyverify.instance/1, prefix-closed")
        for key, value in summary.items():
            if key != "file":
                print(f"  {key:17} {value}")
    return 0


def run_simulate(args) -> int:
    instance = load_input(args.instance)
    fleet = args.fleet or instance.hosts
    with about_file(args.instance, "routing"):
        routing = route(instance, fleet, args.routing) if (args.model == PER_HOST or instance.routing is not None) else None
    run = simulate(instance.chains, routing, args.model, capacity=args.capacity, eviction=args.eviction)
    result = {
        "instance": instance.name,
        "sha256": instance_sha256(instance),
        "model": run.model,
        "fleet_size": fleet,
        "routing": args.routing,
        "capacity": run.capacity,
        "eviction": run.eviction,
        "references": run.references,
        "hits": run.hits,
        "misses": run.misses,
        "hit_rate": run.hit_rate,
    }
    if args.json:
        if args.witness:
            result["witness"] = run.witness()
        print_json(result)
    else:
        capacity = "uncapacitated" if run.capacity is None else f"capacity {run.capacity} blocks, {run.eviction}"
        print(f"{instance.name}: {run.model} demand cache(s), {capacity}, {fleet} hosts ({args.routing} routing)")
        print(f"  block references {run.references}")
        print(f"  hits             {run.hits}")
        print(f"  misses           {run.misses}")
        print(f"  hit rate         {run.hit_rate:.4f}")
    return 0


def run_sweep(args) -> int:
    instance = load_input(args.instance)
    sizes = args.fleets or default_fleet_sizes(instance.hosts)
    with about_file(args.instance, "routing"):
        rows = sweep(instance, sizes, args.routing)
    charts = []
    if args.chart:
        charts = fleet_sweep_chart(rows, args.chart, title=f"{instance.name}: hit rate as the fleet grows (uncapacitated, {args.routing} routing)")
    if args.json:
        print_json({
            "instance": instance.name,
            "sha256": instance_sha256(instance),
            "routing": args.routing,
            "capacity": None,
            "rows": [row.to_json() for row in rows],
            "charts": [str(path) for path in charts],
        })
    else:
        print(f"{instance.name}: uncapacitated demand caches, {args.routing} routing, {rows[0].references} block references")
        print(f"{'hosts':>6} {'pooled misses':>14} {'pooled hit rate':>16} {'per-host misses':>16} {'per-host hit rate':>18}")
        for row in rows:
            print(f"{row.fleet_size:>6} {row.pooled_misses:>14} {row.pooled_hit_rate:>16.4f} {row.per_host_misses:>16} {row.per_host_hit_rate:>18.4f}")
        for path in charts:
            print(f"chart: {path}")
    return 0
