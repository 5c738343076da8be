"""``pyverify validate``, ``simulate`` and ``sweep``: the model's everyday commands."""

from __future__ import annotations

import argparse
from contextlib import contextmanager

from pyverify.commands.argtypes import (
    add_flag_check,
    capacity_blocks,
    chart_path,
    choice_list,
    fleet_size,
    input_file,
    positive_int,
)
from pyverify.errors import RequestError, UserError, shown
from pyverify.commands.input_options import (
    add_input_options,
    described_block_size,
    identity_of,
    load_described_with,
)
from pyverify.inputs.model import INSTANCE_FORMAT, instance_sha256
from pyverify.progress import progress_bar
from pyverify.commands.engine_options import (
    add_engine_options,
    arrays_apply,
    counts_apply,
    run_simulate_counts,
)
from pyverify.commands.output import print_json
from pyverify.commands.simulation import Simulation, optima_tallies, report_simulation
from pyverify.commands.cache_options import (
    add_cache_options,
    check_page_size,
    prompt_tokens_of,
    resolve_cache_size,
    window_of,
)

# The names only: the simulators and the per-record readers are imported by the runs that use them.
from pyverify.sim.names import (
    ENGINE_EVICTIONS,
    LRU,
    LRU_NOTE,
    MODELS,
    PER_HOST,
    POLICY_NAMES,
    POOLED,
    SGLANG,
    SGLANG_FIFO,
    UNROUTED_FLEET_SIZES,
    eviction_name,
)

ORDER = 10

#: What every command's input argument accepts (formats are told apart by content).
INPUT_HELP = (
    "input file, or - for standard input: a pyverify instance JSON, a Mooncake JSONL trace, "
    "or another accepted format (told apart by content, gzip or not; see README 'Input formats')"
)


def fleet_list(text: str) -> list[int]:
    """Parse ``2,4,8,16`` into fleet sizes (1 .. MAX_FLEET, no repeats)."""
    return _number_list(text, fleet_size, "fleet sizes, such as 2,4,8,16")


def capacity_list(text: str) -> list[int]:
    """Parse ``64,128,256`` into capacities (positive, no repeats)."""
    return _number_list(text, capacity_blocks, "capacities, such as 64,128,256")


def _number_list(text: str, parse, what: str) -> list[int]:
    sizes = [parse(part.strip()) for part in text.split(",") if part.strip()]
    if not sizes:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {what}")
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"values repeat in {text!r}")
    return sizes


@contextmanager
def about_file(path: str, field: str):
    """Prefix a UserError raised inside with ``path: field:`` so it names the file."""
    try:
        yield
    except RequestError:
        raise  # names its file and request already
    except UserError as error:
        raise UserError(f"{path}: {field}: {error}") from None


def slack_value(text: str) -> float:
    """The prefix-affinity slack S, 1 .. MAX_FLEET: a slack of the fleet size or more caps nothing
    (each host may take every request), and a bound keeps ceil(S x (i+1) / F) a 64-bit integer."""
    from pyverify.commands.argtypes import MAX_FLEET, bounded_number

    return bounded_number(text, 1, MAX_FLEET, "a slack", low_open=False)


def policy_list(text: str) -> list[str]:
    """Parse ``round-robin,prefix-affinity`` into known routing policies (no repeats)."""
    return choice_list(text, POLICY_NAMES, "routing policy")


def add_routing_options(parser) -> None:
    """``--seed`` and ``--affinity-slack``: the parameters of the random and prefix-affinity policies."""
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the 'random' routing policy (default: 0)"
    )
    parser.add_argument(
        "--affinity-slack",
        type=slack_value,
        default=1.25,
        metavar="S",
        help="prefix-affinity load cap: no host takes more than ceil(S * (i+1) / F) of the first i+1 "
        "requests (default: 1.25)",
    )


def register(subparsers) -> None:
    validate = subparsers.add_parser(
        "validate", help="say what an input is and check it: schema, routing, prefix closure"
    )
    validate.add_argument("instance", help=INPUT_HELP)
    validate.add_argument("--json", action="store_true", help="machine-readable output")
    add_input_options(validate)
    validate.set_defaults(func=run_validate)

    sim = subparsers.add_parser(
        "simulate", help="run demand caches that start empty over an input (an instance or a trace)"
    )
    sim.add_argument("instance", help=INPUT_HELP)
    sim.add_argument(
        "--model",
        choices=MODELS,
        default=POOLED,
        help="one pooled cache (default), or one cache per host",
    )
    sim.add_argument(
        "--routing",
        choices=sorted(POLICY_NAMES),
        help="how requests reach hosts (default: fold, the instance's own routing, or round-robin "
        "for an input without one, as in every command)",
    )
    sim.add_argument(
        "--fleet",
        type=fleet_size,
        help="fleet size for the routing policy (default: the instance's hosts, or 16 for an input that names no fleet)",
    )
    add_cache_options(sim, per="cache", engines=True)
    sim.add_argument(
        "--page-size",
        type=positive_int,
        metavar="TOKENS",
        help="with --eviction sglang or sglang-fifo: the radix cache's page size in tokens, a multiple of the input's "
        "block size (default: the block size; page size 1 needs a trace imported with --block-size 1)",
    )
    add_routing_options(sim)
    sim.add_argument(
        "--optimum",
        action="store_true",
        help="with a capacity, also print the two optima at that capacity over the same requests: the best a "
        "cache that admits every block it fetches and keeps the running request's blocks could do (forced admission, "
        "as vLLM and SGLang), and the "
        "best any cache could do (bypass: it may discard a fetched block)",
    )
    sim.add_argument(
        "--witness", action="store_true", help="include the per-request witness in --json output"
    )
    sim.add_argument("--json", action="store_true", help="machine-readable output")
    add_engine_options(sim)
    add_input_options(sim)
    add_flag_check(sim, engine_refusal)
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
            f"{','.join(map(str, UNROUTED_FLEET_SIZES))} for an instance without routing. "
            "Column 'max load': requests on the busiest host divided by the even share (requests / F); "
            "1.000 is perfectly even, 2.000 means one host serves twice its share."
        ),
    )
    sw.add_argument("instance", type=input_file, help=INPUT_HELP)
    sw.add_argument("--fleets", type=fleet_list, help="comma-separated fleet sizes")
    sw.add_argument(
        "--routing",
        type=policy_list,
        metavar="POLICY[,POLICY...]",
        help=f"routing policy, or several to compare ({', '.join(POLICY_NAMES)}); default: fold, or round-robin "
        "for an instance without routing",
    )
    add_cache_options(sw, per="host (the pool gets F times as much)")
    add_routing_options(sw)
    sw.add_argument(
        "--chart",
        type=chart_path,
        metavar="PATH",
        help="write the hit-rate chart (.png, .svg, or a stem for both)",
    )
    sw.add_argument("--json", action="store_true", help="machine-readable output")
    add_input_options(sw)
    sw.set_defaults(func=run_sweep)


def run_validate(args) -> int:
    from pyverify.inputs.columnar.digest import content_sha256
    from pyverify.sim.routing import describe_hosts, hosts_source

    loaded = load_described_with(args, args.instance)
    instance = loaded.instance
    summary = {
        "file": args.instance,
        "format": loaded.format.key,
        "compression": loaded.compression,
        "name": instance.name,
        # One meaning of "sha256" in every command's report: the content digest (pyverify.content/1), equal in any
        # format; instance_sha256 is the canonical JSON's, of the pyverify.instance/1 file 'trace import' would write.
        "sha256": content_sha256(instance),
        "instance_sha256": instance_sha256(instance),
        "hosts": instance.fleet_size,
        "hosts_source": hosts_source(instance),
        "requests": instance.n_requests,
        "block_references": instance.n_references,
        "distinct_blocks": len({b for chain in instance.chains for b in chain}),
        "block_size_tokens": instance.block_size_tokens,
        "routing": "given" if instance.routing is not None else "none (choose a policy)",
        "prefix_closed": True,
    }
    if args.json:
        print_json({"valid": True, **summary, "notes": list(loaded.notes)})
    else:
        print(
            f"{shown(args.instance)}: {loaded.kind}, {instance.n_requests} requests, valid and prefix-closed"
        )
        if loaded.format.key != "pyverify-instance":
            print(
                f"  imported as a {INSTANCE_FORMAT} instance named {instance.name!r} (what 'trace import' would write)"
            )
        for note in loaded.notes:
            print(f"  note: {note}")
        for key, value in summary.items():
            if key == "hosts":
                value = describe_hosts(instance)
            if key == "block_size_tokens":
                value = described_block_size(value, loaded)
            if key not in ("file", "format", "compression", "hosts_source"):
                print(f"  {key:17} {value}")
    return 0


def run_simulate(args) -> int:
    if args.eviction in ENGINE_EVICTIONS or args.page_size is not None:
        return report_simulation(
            args, simulate_engine(args)
        )  # the engines' caches run on Python chains only
    if counts_apply(args):
        return run_simulate_counts(args)
    if arrays_apply(args):
        from pyverify.commands.array_simulate import simulate_on_arrays

        return report_simulation(args, simulate_on_arrays(args))
    return report_simulation(args, simulate_in_python(args))


def simulate_in_python(args) -> Simulation:
    """``simulate`` on the input loaded as an instance (Python chains): every input, every option."""
    from pyverify.inputs.columnar.digest import content_sha256
    from pyverify.sim.accounting import tally
    from pyverify.sim.routing import RoutingOptions, default_fleet, default_policy, route
    from pyverify.sim.simulate import simulate
    from pyverify.sim.tokens import instance_token_weights

    loaded = load_described_with(args, args.instance)
    instance = loaded.instance
    size = resolve_cache_size(args, instance, args.instance)
    window = window_of(args)
    weights = instance_token_weights(instance, args.instance)
    fleet = args.fleet or default_fleet(instance)
    args.routing = args.routing or default_policy(instance)
    with about_file(args.instance, "routing"):
        options = RoutingOptions(
            seed=args.seed, capacity=size.blocks, eviction=args.eviction, slack=args.affinity_slack
        )
        routing = (
            route(instance, fleet, args.routing, options)
            if (args.model == PER_HOST or instance.routing is not None)
            else None
        )
    run = simulate(
        instance.chains, routing, args.model, capacity=size.blocks, eviction=args.eviction
    )
    optima = None
    if getattr(args, "optimum", False):
        import numpy as np

        from pyverify.cache.arrays import flatten

        ids, lengths = flatten(instance.chains)
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        optima = optima_tallies(
            args, ids, lengths, offsets, run.cache_of, size.blocks, weights, window
        )
    return Simulation(
        name=instance.name,
        sha256=content_sha256(instance),
        engine=None,
        model=run.model,
        fleet=fleet if routing is not None else None,
        routing=args.routing if routing is not None else None,
        size=size,
        eviction=run.eviction,
        references=run.references,
        hits=run.hits,
        n_requests=instance.n_requests,
        window=window,
        weights_source=weights.source if weights else None,
        measured=tally(instance.chains, run.hit_blocks, weights, window),
        witness=run.witness if args.witness else None,
        optima=optima,
        instance_sha256=identity_of(loaded).get("instance_sha256"),
    )


def engine_refusal(args) -> None:
    """What ``simulate --eviction vllm|sglang`` (and --page-size) cannot do; checked at parse time."""
    if args.eviction not in ENGINE_EVICTIONS and args.page_size is None:
        return
    if args.page_size is not None and args.eviction not in (SGLANG, SGLANG_FIFO):
        raise UserError(f"--page-size: only with --eviction {SGLANG}")
    if args.routing == "prefix-affinity":
        raise UserError(
            f"--routing prefix-affinity: not with --eviction {args.eviction} (it routes by the block-level caches)"
        )
    if getattr(args, "optimum", False):
        raise UserError(
            f"--optimum: not with --eviction {args.eviction} (the optima are block-level)"
        )


def simulate_engine(args) -> Simulation:
    """``simulate --eviction vllm|sglang``: the engine's own cache (:mod:`pyverify.cache.vllm`,
    :mod:`pyverify.cache.sglang`), fed each prompt's length in tokens."""
    from pyverify.inputs.columnar.digest import content_sha256
    from pyverify.inputs.load import load_described
    from pyverify.sim.accounting import tally
    from pyverify.sim.routing import RoutingOptions, default_fleet, default_policy, route
    from pyverify.cache.prompts import PromptBeyondChain
    from pyverify.sim.simulate import caches_read, engine_hits
    from pyverify.sim.tokens import instance_token_weights

    engine_refusal(args)
    loaded = load_described(args.instance)
    instance = loaded.instance
    size = resolve_cache_size(args, instance, args.instance)
    if size.blocks is None:
        raise UserError(
            f"--eviction {args.eviction}: needs a capacity (--capacity BLOCKS, --capacity-tokens or --capacity-gib): "
            "the engine's pool size"
        )
    block = instance.block_size_tokens
    page = args.page_size
    check_page_size(args.instance, block, page, size.blocks)
    window = window_of(args)
    weights = instance_token_weights(instance, args.instance)
    prompt_tokens = prompt_tokens_of(instance)
    fleet = args.fleet or default_fleet(instance)
    args.routing = args.routing or default_policy(instance)
    with about_file(args.instance, "routing"):
        options = RoutingOptions(seed=args.seed, capacity=size.blocks, slack=args.affinity_slack)
        routing = (
            route(instance, fleet, args.routing, options)
            if (args.model == PER_HOST or instance.routing is not None)
            else None
        )
    cache_of = caches_read(args.model, routing, instance.n_requests)
    with about_file(args.instance, "requests"):
        try:
            hit_blocks, unscheduled = engine_hits(
                instance.chains, cache_of, size.blocks, args.eviction, prompt_tokens, block, page
            )
        except PromptBeyondChain as error:
            raise RequestError(args.instance, error.index, "input_tokens", error.reason) from None
        except ValueError as error:
            raise UserError(str(error)) from None
    references = instance.n_references
    hits = sum(hit_blocks)
    return Simulation(
        name=instance.name,
        sha256=content_sha256(instance),
        engine=None,
        model=args.model,
        fleet=fleet if routing is not None else None,
        routing=args.routing if routing is not None else None,
        size=size,
        eviction=args.eviction,
        references=references,
        hits=hits,
        n_requests=instance.n_requests,
        window=window,
        weights_source=weights.source if weights else None,
        measured=tally(instance.chains, hit_blocks, weights, window),
        witness=(lambda: {"cache_of": list(cache_of), "hit_blocks": list(hit_blocks)})
        if args.witness
        else None,
        unscheduled=tuple(unscheduled),
        instance_sha256=identity_of(loaded).get("instance_sha256"),
    )


def run_sweep(args) -> int:
    from pyverify.reports.charts import fleet_sweep_chart, policy_fleet_chart, routing_load_chart
    from pyverify.sim.routing import RoutingOptions, default_policy
    from pyverify.sim.sweep import default_fleets_for, sweep_policies
    from pyverify.sim.tokens import instance_token_weights

    loaded = load_described_with(args, args.instance)
    instance = loaded.instance
    sizes = args.fleets or default_fleets_for(instance)
    policies = args.routing or [default_policy(instance)]
    size = resolve_cache_size(args, instance, args.instance)
    capacity = size.blocks
    window = window_of(args)
    weights = instance_token_weights(instance, args.instance)
    options = RoutingOptions(seed=args.seed, slack=args.affinity_slack)
    with (
        about_file(args.instance, "routing"),
        progress_bar(len(sizes) * len(policies), "sweep", unit="fleet") as advance,
    ):
        by_policy = sweep_policies(
            instance,
            sizes,
            policies,
            capacity,
            args.eviction,
            options,
            progress=advance,
            weights=weights,
            window=window,
        )
    rows = [row for policy_rows in by_policy.values() for row in policy_rows]
    if capacity is None:
        cache_text = "uncapacitated"
    else:
        tokens = (
            f" = {capacity * instance.block_size_tokens} tokens"
            if instance.block_size_tokens
            else ""
        )
        gib = f" ({size.gib:g} GiB)" if size.gib is not None else ""
        cache_text = f"{eviction_name(args.eviction)}, {capacity} blocks{tokens}{gib} per host, pool F x {capacity} blocks"
    charts = []
    if args.chart:
        title = f"{instance.name}: hit rate as the fleet grows ({cache_text})"
        if len(policies) == 1:
            charts = fleet_sweep_chart(
                rows,
                args.chart,
                title=f"{instance.name}: hit rate as the fleet grows ({cache_text}, {policies[0]} routing)",
            )
        elif len(sizes) == 1:  # one fleet: a bar per routing, its load beside its hit rate
            charts = routing_load_chart(
                by_policy,
                args.chart,
                title=f"{instance.name}: {sizes[0]} hosts, routing policies compared ({cache_text})",
            )
        else:
            charts = policy_fleet_chart(by_policy, args.chart, title=title)
    if args.json:
        data = {
            "instance": instance.name,
            **identity_of(
                loaded
            ),  # the content digest, as simulate names the instance (and an instance file's own)
            "routing": policies[0] if len(policies) == 1 else policies,
            "capacity": capacity,
            "pool_capacity": None
            if capacity is None
            else {str(size): capacity * size for size in sizes},
            "eviction": args.eviction if capacity is not None else None,
            "cache_size": size.to_json(),
            "window": {
                "warmup_fraction": window.warmup_fraction,
                "requests": window.describe(instance.n_requests),
            },
            "token_weights": weights.source if weights else None,
            "hit_rates": "references, *_misses and *_hit_rate count blocks; *_token_hit_rate weighs each block by its tokens",
            "seed": args.seed,
            "affinity_slack": args.affinity_slack,
        }
        if len(policies) == 1:
            data["rows"] = [row.to_json() for row in rows]
        data["by_routing"] = {
            policy: [row.to_json() for row in policy_rows]
            for policy, policy_rows in by_policy.items()
        }
        data["max_load_ratio"] = {
            policy: {str(row.fleet_size): row.max_load_ratio for row in policy_rows}
            for policy, policy_rows in by_policy.items()
        }
        data["charts"] = [str(path) for path in charts]
        print_json(data)
    else:
        print(f"{instance.name}: {cache_text}, {rows[0].references} block references")
        if capacity is not None and args.eviction == LRU:
            print(f"  {LRU_NOTE}")
        if size.kv is not None and size.gib is not None:
            print(f"  KV memory: {size.words}; bytes per token from {size.kv.source}")
        print(
            f"  measured: {window.describe(instance.n_requests)}; "
            + (
                f"tokens from {weights.source}"
                if weights
                else "no token figures (the input gives no block size)"
            )
        )
        token_columns = weights is not None
        header = f"{'routing':>16} {'hosts':>6} {'pooled misses':>14} {'pooled hit rate':>16} {'per-host misses':>16} {'per-host hit rate':>18}"
        if token_columns:
            header += f" {'pooled token hr':>16} {'per-host token hr':>18}"
        print(header + f" {'max load':>9}")
        print(
            f"{'':>23} {'(blocks)':>14} {'(blocks)':>16} {'(blocks)':>16} {'(blocks)':>18}"
            + (f" {'(tokens)':>16} {'(tokens)':>18}" if token_columns else "")
        )
        for row in rows:
            line = (
                f"{row.routing:>16} {row.fleet_size:>6} {row.pooled_misses:>14} {row.pooled_hit_rate:>16.4f} "
                f"{row.per_host_misses:>16} {row.per_host_hit_rate:>18.4f}"
            )
            if token_columns:
                line += f" {row.pooled_token_hit_rate:>16.4f} {row.per_host_token_hit_rate:>18.4f}"
            print(line + f" {row.max_load_ratio:>9.3f}")
        for path in charts:
            print(f"chart: {shown(path)}")
    return 0
