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
    from pyverify.api.engine_logs import check_vllm_events

    checked = check_vllm_events(args.trace, reading=import_options(args), capacity=args.capacity)
    report = checked.to_dict()
    first_difference, size, capacity = (
        checked.first_difference,
        checked.block_size_tokens,
        checked.capacity_blocks_per_rank,
    )
    # A difference is a check that ran and failed: exit status 1, the report printed either way.
    status = 0 if first_difference is None else 1
    if args.json:
        print_json(report)
        return status
    print(
        f"{shown(args.trace)}: {checked.kind}, {checked.requests} requests (BlockStored events), blocks of {size} tokens; "
        f"pyverify's vLLM pool (--eviction vllm) of {capacity} blocks per rank ({report['capacity_from']})"
    )
    print(
        f"  engine hit blocks      {checked.engine_hit_blocks}  (the prefix before each stored run)"
    )
    print(
        f"  pyverify's vllm pool   {checked.model_hit_blocks}"
        + (
            f"  ({checked.model_unscheduled_requests} requests too big for the pool)"
            if checked.model_unscheduled_requests
            else ""
        )
    )
    print(
        f"  held blocks agree      after {checked.lines_where_held_blocks_agree} of {checked.lines} lines"
    )
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
