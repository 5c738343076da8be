"""``pyverify audit``: the main job (see :mod:`pyverify.reports.audit`)."""

from __future__ import annotations

import json
from pathlib import Path

from pyverify.commands.argtypes import positive_seconds
from pyverify.reports.audit import DEFAULT_INSTANCE, DEFAULT_OUTPUT, STEPS, run_audit

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
    parser.add_argument("instance", nargs="?", default=DEFAULT_INSTANCE, help=f"instance file (default: {DEFAULT_INSTANCE})")
    parser.add_argument("-o", "--output", type=Path, default=Path(DEFAULT_OUTPUT), help=f"report directory (default: ./{DEFAULT_OUTPUT}/)")
    parser.add_argument("--registry", type=Path, default=Path("lean/theorems.json"), help="theorem registry (default: lean/theorems.json)")
    parser.add_argument("--time-limit", type=positive_seconds, default=60.0, help="seconds per solver call (default: 60)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def run(args) -> int:
    from pyverify.progress import progress_bar

    with progress_bar(len(STEPS), "audit", unit="step") as advance:
        started = [False]

        def step(name: str) -> None:
            if started[0]:
                advance()
            started[0] = True

        summary = run_audit(args.instance, args.output, args.registry, args.time_limit, step)
        advance()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"pyverify audit: {summary['instance']['name']} ({summary['instance']['sha256'][:12]}...)")
    for record in summary["steps"]:
        print(f"  {record['step']:11} {record['seconds']:7.2f} s  {record['result']}")
    print(f"report: {args.output}/report.md, {args.output}/report.html")
    return 0
