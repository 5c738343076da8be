"""``pyverify validate``, ``simulate`` and ``sweep``: the model's everyday commands."""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager

from pyverify.commands.argtypes import positive_int
from pyverify.commands.engine_options import add_engine_options, counts_apply, run_simulate_counts
from pyverify.reports.charts import fleet_sweep_chart, policy_fleet_chart
from pyverify.errors import UserError
from pyverify.inputs.load import load_input
from pyverify.inputs.model import instance_sha256
from pyverify.progress import progress_bar
from pyverify.sim.routing import POLICIES, RoutingOptions, default_policy, route
from pyverify.sim.simulate import EVICTIONS, LRU, MODELS, PER_HOST, simulate
from pyverify.sim.sweep import UNROUTED_FLEET_SIZES, default_fleets_for, sweep_policies

ORDER = 10


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


def slack_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {text!r}") from None
    if not value >= 1 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 1, got {text!r}")
    return value


def policy_list(text: str) -> list[str]:
    """Parse ``round-robin,prefix-affinity`` into known routing policies (no repeats)."""
    policies = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [policy for policy in policies if policy not in POLICIES]
    if unknown or not policies:
        raise argparse.ArgumentTypeError(f"unknown routing policy {(unknown or [text])[0]!r}; choose from: {', '.join(POLICIES)}")
    if len(set(policies)) != len(policies):
        raise argparse.ArgumentTypeError(f"routing policies repeat in {text!r}")
    return policies


def add_routing_options(parser) -> None:
    """``--seed`` and ``--affinity-slack``: the parameters of the random and prefix-affinity policies."""
    parser.add_argument("--seed", type=int, default=0, help="seed of the 'random' routing policy (default: 0)")
    parser.add_argument("--affinity-slack", type=slack_value, default=1.25, metavar="S",
                        help="prefix-affinity load cap: no host takes more than ceil(S * (i+1) / F) of the first i+1 "
                             "requests (default: 1.25)")


def capacity_in_blocks(args, instance) -> int | None:
    """``--capacity`` (blocks) or ``--capacity-tokens`` (rounded down to whole blocks)."""
    tokens = getattr(args, "capacity_tokens", None)
    if tokens is None:
        return args.capacity
    if instance.block_size_tokens is None:
        raise UserError(f"{args.instance}: block_size_tokens: not given, so --capacity-tokens cannot be converted to blocks; use --capacity")
    blocks = tokens // instance.block_size_tokens
    if blocks < 1:
        raise UserError(f"--capacity-tokens: {tokens} tokens is less than one block of {instance.block_size_tokens} tokens")
    return blocks


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2))


def register(subparsers) -> None:
    validate = subparsers.add_parser("validate", help="check an instance file: schema, routing, prefix closure")
    validate.add_argument("instance", help="instance JSON file or Mooncake .jsonl trace")
    validate.add_argument("--json", action="store_true", help="machine-readable output")
    validate.set_defaults(func=run_validate)

    sim = subparsers.add_parser("simulate", help="run demand caches that start empty over an instance")
    sim.add_argument("instance", help="instance JSON file or Mooncake .jsonl trace")
    sim.add_argument("--model", choices=MODELS, required=True, help="one pooled cache, or one cache per host")
    sim.add_argument("--routing", choices=sorted(POLICIES),
                     help="how requests reach hosts (default: given, the instance's own routing; "
                          "round-robin for a trace file that gives none)")
    sim.add_argument("--fleet", type=positive_int, help="fleet size for the routing policy (default: the instance's hosts)")
    sim.add_argument("--capacity", type=positive_int, help="blocks each cache holds (default: no limit)")
    sim.add_argument("--eviction", choices=EVICTIONS, default=LRU, help="eviction policy when a capacity is set (default: lru)")
    add_routing_options(sim)
    sim.add_argument("--witness", action="store_true", help="include the per-request witness in --json output")
    sim.add_argument("--json", action="store_true", help="machine-readable output")
    add_engine_options(sim)
    sim.set_defaults(func=run_simulate)

    sw = subparsers.add_parser(
        "sweep",
        help="pooled against per-host hit rate as the fleet grows",
        description=(
            "For each fleet size F, route the requests to F hosts and count misses for one pooled cache and "
            "for a separate cache per host. Default routing policy: 'fold' when the instance gives a routing "
            "(its host h serves as host h mod F, so each smaller fleet merges hosts of the larger one); "
            "'round-robin' when it gives none, as for a Mooncake .jsonl trace (request i goes to host i mod F). "
            "Uncapacitated by default; with --capacity C every host caches C blocks and the pool gets the same "
            f"total, F x C blocks. Default fleets: powers of two up to the instance's hosts, or "
            f"{','.join(map(str, UNROUTED_FLEET_SIZES))} for an instance without routing."
        ),
    )
    sw.add_argument("instance", help="instance JSON file or Mooncake .jsonl trace")
    sw.add_argument("--fleets", type=fleet_list, help="comma-separated fleet sizes")
    sw.add_argument("--routing", type=policy_list, metavar="POLICY[,POLICY...]",
                    help=f"routing policy, or several to compare ({', '.join(POLICIES)}); default: fold, or round-robin "
                         "for an instance without routing")
    capacity = sw.add_mutually_exclusive_group()
    capacity.add_argument("--capacity", type=positive_int, metavar="BLOCKS", help="blocks each host caches (pool: F x BLOCKS); default: no limit")
    capacity.add_argument("--capacity-tokens", type=positive_int, metavar="TOKENS",
                          help="tokens each host caches, rounded down to whole blocks of the instance's block size")
    sw.add_argument("--eviction", choices=EVICTIONS, default=LRU, help="eviction policy when a capacity is set (default: lru)")
    add_routing_options(sw)
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
    if counts_apply(args):
        return run_simulate_counts(args, print_json)
    args.routing = args.routing or "given"
    instance = load_input(args.instance)
    fleet = args.fleet or instance.hosts
    with about_file(args.instance, "routing"):
        options = RoutingOptions(seed=args.seed, capacity=args.capacity, eviction=args.eviction, slack=args.affinity_slack)
        routing = route(instance, fleet, args.routing, options) if (args.model == PER_HOST or instance.routing is not None) else None
    run = simulate(instance.chains, routing, args.model, capacity=args.capacity, eviction=args.eviction)
    result = {
        "instance": instance.name,
        "sha256": instance_sha256(instance),
        "model": run.model,
        "fleet_size": fleet if routing is not None else None,
        "routing": args.routing if routing is not None else None,
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
        if routing is None:
            print(f"{instance.name}: one pooled demand cache, {capacity} (no routing needed: every host reads the pool)")
        else:
            print(f"{instance.name}: {run.model} demand cache(s), {capacity}, {fleet} hosts ({args.routing} routing)")
        print(f"  block references {run.references}")
        print(f"  hits             {run.hits}")
        print(f"  misses           {run.misses}")
        print(f"  hit rate         {run.hit_rate:.4f}")
    return 0


def run_sweep(args) -> int:
    instance = load_input(args.instance)
    sizes = args.fleets or default_fleets_for(instance)
    policies = args.routing or [default_policy(instance)]
    capacity = capacity_in_blocks(args, instance)
    options = RoutingOptions(seed=args.seed, slack=args.affinity_slack)
    with about_file(args.instance, "routing"), progress_bar(len(sizes) * len(policies), "sweep", unit="fleet") as advance:
        by_policy = sweep_policies(instance, sizes, policies, capacity, args.eviction, options, progress=advance)
    rows = [row for policy_rows in by_policy.values() for row in policy_rows]
    if capacity is None:
        cache_text = "uncapacitated"
    else:
        tokens = f" = {capacity * instance.block_size_tokens} tokens" if instance.block_size_tokens else ""
        cache_text = f"{args.eviction.upper()}, {capacity} blocks{tokens} per host, pool F x {capacity} blocks"
    charts = []
    if args.chart:
        title = f"{instance.name}: hit rate as the fleet grows ({cache_text})"
        if len(policies) == 1:
            charts = fleet_sweep_chart(rows, args.chart, title=f"{instance.name}: hit rate as the fleet grows ({cache_text}, {policies[0]} routing)")
        else:
            charts = policy_fleet_chart(by_policy, args.chart, title=title)
    if args.json:
        data = {
            "instance": instance.name,
            "sha256": instance_sha256(instance),
            "routing": policies[0] if len(policies) == 1 else policies,
            "capacity": capacity,
            "pool_capacity": None if capacity is None else {str(size): capacity * size for size in sizes},
            "eviction": args.eviction if capacity is not None else None,
            "seed": args.seed,
            "affinity_slack": args.affinity_slack,
        }
        if len(policies) == 1:
            data["rows"] = [row.to_json() for row in rows]
        data["by_routing"] = {policy: [row.to_json() for row in policy_rows] for policy, policy_rows in by_policy.items()}
        data["max_load_ratio"] = {policy: {str(row.fleet_size): row.max_load_ratio for row in policy_rows}
                                  for policy, policy_rows in by_policy.items()}
        data["charts"] = [str(path) for path in charts]
        print_json(data)
    else:
        print(f"{instance.name}: {cache_text}, {rows[0].references} block references")
        print(f"{'routing':>16} {'hosts':>6} {'pooled misses':>14} {'pooled hit rate':>16} {'per-host misses':>16} {'per-host hit rate':>18} {'max load':>9}")
        for row in rows:
            print(f"{row.routing:>16} {row.fleet_size:>6} {row.pooled_misses:>14} {row.pooled_hit_rate:>16.4f} "
                  f"{row.per_host_misses:>16} {row.per_host_hit_rate:>18.4f} {row.max_load_ratio:>9.3f}")
        for path in charts:
            print(f"chart: {path}")
    return 0
