"""``pyverify mrc --sample-rate R``: a SHARDS estimate of the pooled LRU curve, labelled as one."""

from __future__ import annotations

import argparse

from pyverify.commands.engine_options import is_trace_file
from pyverify.commands.output import aligned_table
from pyverify.errors import UserError
from pyverify.commands.input_options import (
    identity_of,
    load_described_with,
    needs_instance_reader,
    read_trace_with,
)

ESTIMATE_NOTE = (
    "ESTIMATE (SHARDS spatial sampling, Waldspurger et al., FAST 2015); measured error against the exact "
    "curve: see docs/howto/large-traces.md, 'Approximate curves'"
)


def sample_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a sampling rate in (0, 1], got {text!r}"
        ) from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a sampling rate in (0, 1], got {text!r}")
    return value


def add_sample_rate(parser) -> None:
    parser.add_argument(
        "--sample-rate",
        type=sample_rate,
        metavar="R",
        help="estimate the pooled chain-order LRU curve from a spatial sample of about R of the blocks (SHARDS); "
        "output is labelled as an estimate (default: exact)",
    )


def refuse_what_an_estimate_cannot_do(args) -> None:
    """One line naming every flag the estimate would otherwise ignore (it draws no chart, has no optimum, ...)."""
    asked = {
        "--model per-host": args.model != "pooled",
        "--routing": args.routing is not None,
        "--fleet": args.fleet is not None,
        "--verify": args.verify,
        "--policy opt": "opt" in args.policy,
        "--chart": args.chart is not None,
        "--target-hit-rate": getattr(args, "target_hit_rate", None) is not None,
        "--kv-model/--kv-bytes-per-token (GiB)": getattr(args, "kv_model", None) is not None
        or getattr(args, "kv_bytes_per_token", None) is not None
        or getattr(args, "kv_model_config", None) is not None,
    }
    cannot = [flag for flag, given in asked.items() if given]
    if cannot:
        raise UserError(
            f"--sample-rate: the estimate is a table of the pooled chain-order LRU curve only; it cannot do "
            f"{', '.join(cannot)} (drop --sample-rate: the exact curves can)"
        )


def run_mrc_estimate(args, print_json) -> int:
    from pyverify.api import ColumnarTrace
    from pyverify.api.curves import estimated_lru_curve, log_capacities
    from pyverify.api.names import LRU_NAME, LRU_NOTE
    from pyverify.api.reading import content_sha256

    refuse_what_an_estimate_cannot_do(args)
    if is_trace_file(args.instance) and not needs_instance_reader(args):
        trace = read_trace_with(args, args.instance)
        identity = {"sha256": content_sha256(trace)}
    else:  # the same naming as the exact curve's (input_options.identity_of)
        loaded = load_described_with(args, args.instance)
        trace = ColumnarTrace.from_instance(loaded.instance)
        identity = identity_of(loaded)
    curve = estimated_lru_curve(trace, args.sample_rate)
    if (
        curve.references and not curve.sampled_references
    ):  # an empty sample estimates a hit rate of 1
        raise UserError(
            f"--sample-rate {args.sample_rate:g}: the sample took none of the "
            f"{curve.references} block references, so there is nothing to estimate "
            "from; raise the rate"
        )
    capacities = args.capacities or log_capacities(
        max(1, int(curve.histogram.size / args.sample_rate))
    )
    points = curve.points(capacities)
    result = {
        "instance": trace.name,
        **identity,
        "model": "pooled",
        "eviction": "lru",
        "lru": LRU_NOTE,
        "estimate": True,
        "method": "SHARDS_adj",
        "sample_rate": args.sample_rate,
        "references": curve.references,
        "sampled_references": curve.sampled_references,
        "note": ESTIMATE_NOTE,
        "points": points,
    }
    if args.json:
        print_json(result)
        return 0
    print(
        f"{trace.name}: ESTIMATED {LRU_NAME} miss-ratio curve, one pooled cache of C blocks; {curve.references} block references, "
        f"{curve.sampled_references} sampled (rate {args.sample_rate})"
    )
    print(f"  {ESTIMATE_NOTE}")
    print(f"  {LRU_NOTE}")
    columns = [
        ("C blocks", "capacity_blocks", "d"),
        ("est. miss ratio", "estimated_miss_ratio", ".4f"),
        ("est. hit rate", "estimated_hit_rate", ".4f"),
    ]
    for line in aligned_table(columns, points):
        print(f"  {line}")
    return 0
