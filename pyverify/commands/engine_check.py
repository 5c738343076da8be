"""``pyverify trace check-events LOG``: a recorded vLLM run against pyverify's model of the same engine.

The log (vLLM KV events, :mod:`pyverify.inputs.kv_events`) says what the
engine computed (``BlockStored``) and evicted (``BlockRemoved``), so after each
line it says which blocks the engine held. pyverify replays the same requests,
in the same order, through its exact model of vLLM's block pool
(``--eviction vllm``, :mod:`pyverify.cache.vllm`) of ``--capacity`` blocks
per data-parallel rank (default: the most blocks the log shows one rank
holding), and compares, line by line, the set of block hashes each holds, and
the hits: the engine's are the prefix blocks before each stored run.

What the events cannot say, and what is assumed: a request's prompt length
(taken as its full blocks exactly: a partial last block would take a slot
the log never shows); requests the engine ran concurrently (pyverify runs one at a
time); blocks cached before the recording began. So the report states the
agreement it finds; it proves nothing about the engine.
"""

from __future__ import annotations

from pyverify.commands.argtypes import capacity_blocks
from pyverify.commands.output import print_json
from pyverify.commands.input_options import add_input_options, import_options
from pyverify.errors import shown


def register(trace_commands) -> None:
    check = trace_commands.add_parser(
        "check-events",
        help="compare a recorded vLLM KV-event log with pyverify's model of vLLM's block pool (--eviction vllm)",
        description=__doc__.split("\n\n", 1)[1].replace("``", "'"),
    )
    check.add_argument(
        "trace",
        help="a vLLM KV-event log (JSONL: event batches or bare events), or - for standard input",
    )
    check.add_argument(
        "--capacity",
        type=capacity_blocks,
        metavar="BLOCKS",
        help="blocks in pyverify's pool per rank (vLLM's num_gpu_blocks - 1; default: the most blocks the log shows one rank holding)",
    )
    add_input_options(check)
    check.add_argument("--json", action="store_true", help="machine-readable report")
    check.set_defaults(func=run_check_events)


def run_check_events(args) -> int:
    from pyverify.errors import located
    from pyverify.inputs.kv_events import read_engine_log
    from pyverify.inputs.load import load_described
    from pyverify.inputs.records import ImportOptions
    from pyverify.inputs.stream import open_source
    from pyverify.cache.vllm import VllmBlockPool

    loaded = load_described(
        args.trace, import_options(args)
    )  # any format, read as every command reads it; this one must be an event log
    if loaded.format.key != "vllm-kv-events":
        raise located(
            args.trace,
            None,
            f"trace check-events reads a vLLM KV-event log; this is a {loaded.kind}",
        )
    with open_source(args.trace) as source:
        _, _, first = read_engine_log(source, ImportOptions(allow_unsorted=args.allow_unsorted))
    capacity = args.capacity or max(1, first.peak)
    size = first.block_size
    pools: dict = {}
    tally = {
        "lines": 0,
        "agree": 0,
        "engine_hits": 0,
        "model_hits": 0,
        "unscheduled": 0,
        "requests": 0,
    }
    first_difference: dict | None = None

    def on_line(line, added, log) -> None:
        nonlocal first_difference
        touched = set()
        for chain, stored, rank in added:
            chain = tuple(block for block in chain if block not in log.unseen)  # never held
            pool = pools.get(rank)
            if pool is None:
                pool = pools[rank] = VllmBlockPool(capacity, size)
            hit = pool.run(chain, len(chain) * size)
            tally["requests"] += 1
            tally["engine_hits"] += len(chain) - stored
            if hit is None:
                tally["unscheduled"] += 1
            else:
                tally["model_hits"] += hit
            touched.add(rank)
        ranks = touched | {rank for rank in pools}
        engine = {rank: log.held(rank) for rank in ranks}
        model = {rank: set(pools[rank].copies) if rank in pools else set() for rank in ranks}
        tally["lines"] += 1
        if all(engine[rank] == model[rank] for rank in ranks):
            tally["agree"] += 1
        elif first_difference is None:
            rank = next(
                rank
                for rank in sorted(ranks, key=lambda r: -1 if r is None else r)
                if engine[rank] != model[rank]
            )
            first_difference = {
                "line": line,
                "rank": rank,
                "engine_held": len(engine[rank]),
                "model_held": len(model[rank]),
                "only_engine": len(engine[rank] - model[rank]),
                "only_model": len(model[rank] - engine[rank]),
            }

    with open_source(args.trace) as source:
        read_engine_log(source, ImportOptions(allow_unsorted=args.allow_unsorted), on_line)
    report = {
        "trace": args.trace,
        "format": loaded.format.key,
        "requests": tally["requests"],
        "block_size_tokens": size,
        "capacity_blocks_per_rank": capacity,
        "capacity_from": "--capacity"
        if args.capacity
        else "the most blocks the log shows one rank holding",
        "engine_hit_blocks": tally["engine_hits"],
        "model_hit_blocks": tally["model_hits"],
        "model_unscheduled_requests": tally["unscheduled"],
        "lines": tally["lines"],
        "lines_where_held_blocks_agree": tally["agree"],
        "first_difference": first_difference,
        "assumed": "each prompt is its full blocks exactly; requests run one at a time; nothing cached before the log",
    }
    # A difference is a check that ran and failed: exit status 1, the report printed either way.
    status = 0 if first_difference is None else 1
    if args.json:
        print_json(report)
        return status
    print(
        f"{shown(args.trace)}: {loaded.kind}, {tally['requests']} requests (BlockStored events), blocks of {size} tokens; "
        f"pyverify's vLLM pool (--eviction vllm) of {capacity} blocks per rank ({report['capacity_from']})"
    )
    print(f"  engine hit blocks      {tally['engine_hits']}  (the prefix before each stored run)")
    print(
        f"  pyverify's vllm pool   {tally['model_hits']}"
        + (
            f"  ({tally['unscheduled']} requests too big for the pool)"
            if tally["unscheduled"]
            else ""
        )
    )
    print(f"  held blocks agree      after {tally['agree']} of {tally['lines']} lines")
    if first_difference is not None:
        where = "" if first_difference["rank"] is None else f" (rank {first_difference['rank']})"
        print(
            f"  first difference       line {first_difference['line']}{where}: the engine held {first_difference['engine_held']} blocks, "
            f"pyverify {first_difference['model_held']} ({first_difference['only_engine']} only in the engine, "
            f"{first_difference['only_model']} only in pyverify)"
        )
    print(f"  assumed                {report['assumed']}")
    return status


__all__ = ["register", "run_check_events"]
