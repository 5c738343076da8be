"""``pyverify budgets``: hit rates at KV memory budgets in GiB, kvcache-simulator style."""

from __future__ import annotations

import argparse

from pyverify.commands.array_simulate import ENGINE as ARRAYS_ENGINE
from pyverify.commands.basic import INPUT_HELP
from pyverify.commands.output import print_json
from pyverify.commands.engine_options import (
    add_trace_engine_option,
    load_kernels_before_reading,
    trace_on_arrays,
)
from pyverify.commands.argtypes import capacity_gib, choice_list, target_hit_rate
from pyverify.commands.cache_options import add_kv_size_options, gib_of_blocks
from pyverify.commands.input_options import (
    add_input_options,
    identity_of,
    load_described_with,
    read_trace_with,
)
from pyverify.errors import UserError
from pyverify.inputs.kv_models import DEFAULT_BUDGETS_GIB, kv_size
from pyverify.sim.simulate import ENGINE_EVICTIONS, EVICTION_HELP, EVICTIONS, LEAF_LRU, TAIL_FIRST
from pyverify.sim.window import Window, warmup_fraction

ORDER = 12


def budget_list(text: str) -> list[float]:
    values = []
    for part in text.split(","):
        if part.strip():
            values.append(capacity_gib(part.strip()))
    if not values:
        raise argparse.ArgumentTypeError("expected comma-separated GiB budgets, such as 1,2,4,8")
    return sorted(set(values))


def eviction_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    engines = [name for name in names if name in ENGINE_EVICTIONS]
    if engines:
        raise argparse.ArgumentTypeError(
            f"{engines[0]!r} is a serving engine's exact cache, replayed by 'pyverify simulate "
            f"--eviction {engines[0]}' only; budgets takes {', '.join(EVICTIONS)} "
            f"({TAIL_FIRST} is vLLM's free queue, idealised)"
        )
    if not names or not set(names) <= set(EVICTIONS):
        return choice_list(text, EVICTIONS, "eviction policy")  # refuses, naming the closest
    return list(dict.fromkeys(names))


def register(subparsers) -> None:

    parser = subparsers.add_parser(
        "budgets",
        help="hit rate of one pooled cache at KV memory budgets in GiB (blocks and tokens)",
        description=(
            "Convert each GiB budget to whole blocks with the model's KV bytes per token, then count block and "
            "token hits of one pooled cache that starts empty. lru (chain-order) and tail-first are answered for every "
            "budget in one pass; fifo and leaf-lru are simulated per budget (compiled kernels; a trace file is "
            "read as arrays, not Python objects, at any size: the same numbers; --backend python reads it per record). kvcache-simulator's settings are "
            "--eviction fifo,leaf-lru --warmup-fraction 0.5. Policies: "
            + "; ".join(f"{name}: {text}" for name, text in EVICTION_HELP.items())
        ),
    )
    parser.add_argument("instance", help=INPUT_HELP)
    add_kv_size_options(
        parser, required=True
    )  # GiB budgets become blocks only with bytes per token
    parser.add_argument(
        "--budgets-gib",
        type=budget_list,
        default=list(DEFAULT_BUDGETS_GIB),
        metavar="G1,G2,...",
        help="GiB budgets (default: kvcache-simulator's 1,2,4,...,16384)",
    )
    parser.add_argument(
        "--eviction",
        type=eviction_list,
        default=[LEAF_LRU],
        metavar="POLICY[,POLICY...]",
        help=f"eviction policies ({', '.join(EVICTIONS)}; default: leaf-lru)",
    )
    parser.add_argument(
        "--warmup-fraction",
        type=warmup_fraction,
        default=0.0,
        metavar="W",
        help="count only requests from floor(n x W) on (kvcache-simulator: 0.5; default: 0)",
    )
    parser.add_argument(
        "--optimum",
        action="store_true",
        help="also print, at each budget, opt-forced: the best a cache that admits every block it fetches and "
        "keeps the running request's blocks could do (forced admission, as vLLM and SGLang), and opt: "
        "the best any cache could do (bypass: it may discard a fetched block); one run each per budget. "
        "With --warmup-fraction: the whole run's optimum, counted in the measured requests",
    )
    parser.add_argument(
        "--target-hit-rate",
        type=target_hit_rate,
        metavar="X",
        help="also print, per policy and for the optimum (Belady MIN), the smallest capacity (blocks and "
        "GiB) whose block hit rate reaches X (0 < X <= 1): read off the exact curve for lru, tail-first and "
        "the optimum; fifo and leaf-lru have none, so a bisection of simulations finds a capacity that "
        "reaches X where one block less does not (labelled, not proven smallest)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_trace_engine_option(parser)
    add_input_options(parser)
    parser.set_defaults(func=run_budgets)


def run_budgets(args) -> int:
    from pyverify.sim.budgets import ONE_PASS

    kv = kv_size(
        args.kv_model,
        args.kv_dtype,
        args.kv_bytes_per_token,
        getattr(args, "kv_model_config", None),
    )  # one of them is required by the parser
    window = Window(args.warmup_fraction)
    # A trace file is read as arrays and replayed by the compiled kernels, as simulate does; both paths name the
    # instance by its content digest.
    on_arrays = trace_on_arrays(args)
    if on_arrays:
        from pyverify.inputs.columnar.digest import content_sha256_beside

        load_kernels_before_reading(args.instance)
        trace = read_trace_with(args, args.instance)
        sha256 = content_sha256_beside(trace)  # on a second core while the budgets are replayed

        def identity() -> dict:
            return {"sha256": sha256()}
    else:
        loaded = load_described_with(args, args.instance)
        trace, known = loaded.instance, identity_of(loaded)

        def identity() -> dict:
            return known

    named = (
        on_arrays and args.backend == "numpy"
    )  # as simulate: only --backend numpy names the engine
    if trace.block_size_tokens is None:
        raise UserError(
            f"{args.instance}: block_size_tokens: not given, so GiB budgets cannot be converted to blocks"
        )
    sweep = _sweep_arrays if on_arrays else _sweep_instance
    weights, by_policy, (ids, lengths, replayer) = sweep(trace, args, kv, window)
    if args.optimum:
        by_policy.update(_optima(trace, args, kv, window, weights, on_arrays))
    targets = None
    if args.target_hit_rate is not None:
        from pyverify.sim.budgets import target_capacity

        targets = [
            target_capacity(ids, lengths, replayer(policy), policy, args.target_hit_rate, window)
            for policy in [*args.eviction, "opt"]
        ]
    if args.json:
        print_json(
            {
                "instance": trace.name,
                **identity(),
                **({"backend": ARRAYS_ENGINE} if named else {}),
                "kv_bytes_per_token": kv.bytes_per_token,
                "kv_bytes_source": kv.source,
                "block_size_tokens": trace.block_size_tokens,
                "window": {
                    "warmup_fraction": window.warmup_fraction,
                    "requests": window.describe(trace.n_requests),
                },
                "token_weights": weights.source if weights else None,
                "points": {
                    policy: [p.to_json() for p in points] for policy, points in by_policy.items()
                },
                **(
                    {
                        "target": _target_json(
                            targets, args.target_hit_rate, trace.block_size_tokens, kv
                        )
                    }
                    if targets
                    else {}
                ),
            }
        )
        return 0
    engine = f"; backend {ARRAYS_ENGINE}" if named else ""
    print(
        f"{trace.name}: one pooled cache; KV {kv.bytes_per_token:g} bytes/token ({kv.source}); "
        f"blocks of {trace.block_size_tokens} tokens{engine}"
    )
    print(
        f"  measured: {window.describe(trace.n_requests)}; tokens from {weights.source if weights else 'n/a'}"
    )
    wide = max(
        [9] + [len(policy) for policy in by_policy]
    )  # the longest name: tail-first, opt-forced
    print(
        f"{'eviction':>{wide}} {'GiB':>8} {'blocks':>8} {'block hit rate':>15} {'token hit rate':>15}  method"
    )
    for policy, points in by_policy.items():
        for p in points:
            token = f"{p.token_hit_rate:>15.4f}" if p.token_hit_rate is not None else f"{'n/a':>15}"
            print(
                f"{policy:>{wide}} {p.gib:>8g} {p.capacity_blocks:>8} {p.block_hit_rate:>15.4f} {token}  {p.method}"
            )
    one_pass = [policy for policy in by_policy if policy in ONE_PASS]
    if one_pass:
        print(f"  ({', '.join(one_pass)}: every budget from one pass of stack distances)")
    if args.optimum:
        from pyverify.commands.simulation import OPTIMUM_WORDS

        print(f"  opt-forced: {OPTIMUM_WORDS['forced']}")
        print(f"  opt: {OPTIMUM_WORDS['bypass']}")
    if targets:
        _print_targets(targets, args.target_hit_rate, trace.block_size_tokens, kv)
    return 0


def _optima(trace, args, kv, window, weights, on_arrays):
    """``--optimum``: rows ``opt-forced`` and ``opt`` (one run of each optimum per budget)."""
    import dataclasses

    import numpy as np

    from pyverify.optimal.belady import min_run_flat
    from pyverify.sim.budgets import budget_sweep_flat
    from pyverify.cache.arrays import flatten
    from pyverify.optimal.forced import forced_run_flat

    if on_arrays:
        ids, lengths = trace.ids, np.diff(trace.offsets)
    else:
        ids, lengths = flatten(trace.chains)
    rows = {}
    for name, search, method in (
        ("opt-forced", forced_run_flat, "forced-admission optimum"),
        ("opt", min_run_flat, "bypass optimum (MIN)"),
    ):

        def replay(capacity, search=search):
            return search(ids, lengths, None, capacity)[0]

        points = budget_sweep_flat(
            ids,
            lengths,
            replay,
            args.budgets_gib,
            kv.bytes_per_token,
            trace.block_size_tokens,
            name,
            weights,
            window,
        )
        rows[name] = [
            dataclasses.replace(p, method=method if p.method == "simulated" else p.method)
            for p in points
        ]
    return rows


def _target_json(targets, rate, block_tokens: int, kv) -> dict:
    from pyverify.sim.budgets import BISECTION, BISECTION_NOTE

    by_policy = {}
    for found in targets:
        blocks = found.capacity_blocks
        by_policy[found.policy] = {
            **found.to_json(),
            "capacity_tokens": None if blocks is None else blocks * block_tokens,
            "capacity_gib": None if blocks is None else gib_of_blocks(blocks, block_tokens, kv),
        }
    return {
        "hit_rate": float(rate),
        "measure": "block hit rate over the measured requests, one pooled cache",
        "by_policy": by_policy,
        **({"bisection": BISECTION_NOTE} if any(f.method == BISECTION for f in targets) else {}),
    }


def _print_targets(targets, rate, block_tokens: int, kv) -> None:
    from pyverify.sim.budgets import BISECTION, BISECTION_NOTE, OPTIMUM_NOT_COMPUTED

    print(
        f"smallest pooled capacity with block hit rate >= {float(rate):g} over the measured requests:"
    )
    names = {
        found.policy: "optimum (Belady MIN)" if found.policy == "opt" else found.policy
        for found in targets
    }
    width = max(len(name) for name in names.values())
    for found in targets:
        blocks = found.capacity_blocks
        if blocks is not None:
            text = f"{blocks} blocks = {blocks * block_tokens} tokens = {gib_of_blocks(blocks, block_tokens, kv):.4g} GiB"
        elif found.method == OPTIMUM_NOT_COMPUTED:
            print(f"  {names[found.policy]:<{width}}  {found.method}")
            continue
        else:
            text = f"not reached (even uncapacitated: {found.ceiling_hit_rate:.4f})"
        print(f"  {names[found.policy]:<{width}}  {text}  ({found.method})")
    if any(found.method == BISECTION for found in targets):
        print(f"  ({BISECTION_NOTE})")


def _sweep_instance(instance, args, kv, window):
    """Every policy's budgets on the input loaded as an instance (Python chains)."""
    from pyverify.sim.budgets import budget_sweep
    from pyverify.cache.arrays import flatten
    from pyverify.sim.simulate import POOLED, simulate
    from pyverify.sim.tokens import instance_token_weights

    weights = instance_token_weights(instance, args.instance)
    by_policy = {
        policy: budget_sweep(
            instance.chains,
            args.budgets_gib,
            kv.bytes_per_token,
            instance.block_size_tokens,
            policy,
            weights,
            window,
        )
        for policy in args.eviction
    }

    def replayer(policy):
        def replay(capacity):
            return simulate(
                instance.chains, None, POOLED, capacity=capacity, eviction=policy, runs=20
            ).hit_blocks

        return replay

    return weights, by_policy, (*flatten(instance.chains), replayer)


def _sweep_arrays(trace, args, kv, window):
    """The same on a big trace file held as arrays, replayed by the compiled kernels (as ``simulate`` does)."""
    import numpy as np

    from pyverify.sim.array_run import ArrayReplay, trace_token_weights
    from pyverify.sim.budgets import budget_sweep_flat

    weights = trace_token_weights(trace, args.instance)
    prepared = ArrayReplay(
        trace, np.zeros(trace.n_requests, dtype=np.int64)
    )  # once for every budget and policy
    lengths = np.diff(trace.offsets)
    by_policy = {}
    for policy in args.eviction:

        def replay(capacity, policy=policy):
            return prepared.hits(capacity, policy)

        by_policy[policy] = budget_sweep_flat(
            trace.ids,
            lengths,
            replay,
            args.budgets_gib,
            kv.bytes_per_token,
            trace.block_size_tokens,
            policy,
            weights,
            window,
        )

    def replayer(policy):
        return lambda capacity: prepared.hits(capacity, policy)

    return weights, by_policy, (trace.ids, lengths, replayer)
