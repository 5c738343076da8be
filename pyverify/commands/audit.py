"""``pyverify audit``: the main job (see :mod:`pyverify.reports.audit`)."""

from __future__ import annotations

import json
from pathlib import Path

from pyverify.commands.argtypes import positive_int, positive_seconds
from pyverify.commands.basic import INPUT_HELP
from pyverify.commands.input_options import add_input_options, import_options
from pyverify.project import DEFAULT_INSTANCE, DEFAULT_OUTPUT, DEFAULT_REGISTRY, ROOT, project_file

ORDER = 1


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="the main job: validate, sweep, certify, verify, Lean check, bridge, report",
        description=(
            "Run the whole check of one instance (default: the committed lab instance) and write a report "
            "directory: report.md, report.html, the sweep chart, the certificates and summary.json."
        ),
    )
    parser.add_argument(
        "instance",
        nargs="?",
        default=str(project_file(DEFAULT_INSTANCE)),
        help=f"{INPUT_HELP}; default: {DEFAULT_INSTANCE} in the pyverify checkout, {ROOT}",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path(DEFAULT_OUTPUT),
        help=f"report directory (default: ./{DEFAULT_OUTPUT}/)",
    )
    parser.add_argument(
        "--registry",
        type=Path,
        default=project_file(DEFAULT_REGISTRY),
        help=f"theorem registry (default: {DEFAULT_REGISTRY} in the pyverify checkout)",
    )
    parser.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=60.0,
        help="seconds per solver call (default: 60)",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--node-tokens",
        type=positive_int,
        metavar="TOKENS",
        help="KV cache per node in the memory-limit step's local-against-global line (default: 3,000,000, the "
        "Mooncake paper's per-node capacity, FAST'25 section 5.3.2; needs the instance's block size)",
    )
    size.add_argument(
        "--node-blocks",
        type=positive_int,
        metavar="BLOCKS",
        help="the same in blocks (default for an instance with no block size: an equal share of its distinct blocks)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_input_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from pyverify.progress import step_reporter
    from pyverify.api.lean import AUDIT_STEPS, audit

    header = [] if args.json else [f"pyverify audit: {args.instance} -> {args.output}/"]

    def start(name: str) -> None:
        # The header waits for the first step: a refusal before any work (a folder that is
        # not pyverify's to replace) is then the run's only line, as for every bad input.
        while header:
            print(header.pop(), flush=True)
        steps.start(name)

    with step_reporter(len(AUDIT_STEPS), quiet=args.json) as steps:
        summary = audit(
            args.instance,
            args.output,
            registry=args.registry,
            time_limit=args.time_limit,
            on_start=start,
            on_done=lambda record: steps.done(
                f"  {record.name:12} {record.seconds:7.2f} s  {record.result}"
            ),
            node_tokens=args.node_tokens,
            node_blocks=args.node_blocks,
            reading=import_options(args),
        )
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"instance {summary['instance']['name']} (SHA-256 {summary['instance']['sha256'][:12]}...)"
    )
    print(f"report: {args.output}/report.md, {args.output}/report.html")
    return 0
