"""``pyverify bridge``: relate the certificates in proofs/ to the Lean theorems."""

from __future__ import annotations

import json
from pathlib import Path

from pyverify.project import ROOT, project_file

ORDER = 50


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bridge",
        help="relate instance certificates to the Lean theorems, keeping the two apart",
        description=(
            "For each certificate: (a) the instance fact, re-checked by the trusted checker; (b) the general "
            "Lean theorem, as Lean prints it; (c) the link: hypotheses met, the count the theorem predicts for "
            "this instance, and whether the certificate agrees. Runs the Lean check on the sources beside the "
            "registry first. Exit 1 with one line when something must be refused."
        ),
    )
    parser.add_argument(
        "--proofs",
        type=Path,
        default=project_file("proofs"),
        help=f"directory of certificates (default: proofs/ in the pyverify checkout, {ROOT})",
    )
    parser.add_argument(
        "--registry",
        type=Path,
        default=project_file("lean/theorems.json"),
        help="theorem registry (default: lean/theorems.json in the pyverify checkout; the Lean sources beside it are checked)",
    )
    parser.add_argument(
        "--instances",
        type=Path,
        action="append",
        help="where to look for the certificates' instances, by SHA-256 (default: instances/ in the pyverify checkout; repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args) -> int:
    from pyverify.api import bridge
    from pyverify.reports.markdown import bridge_markdown

    report = bridge(args.proofs, args.registry, args.instances or [project_file("instances")])
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(bridge_markdown(report, heading="#"))
    return 0
