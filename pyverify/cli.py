"""The ``pyverify`` command.

Each subcommand lives in the module that owns its job and registers itself
through a ``register(subparsers)`` function that adds its parser and sets
``func`` to a handler ``handler(args) -> int``. This module only assembles
them and turns :class:`~pyverify.errors.UserError` into one line on stderr
with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from pyverify import __version__
from pyverify.errors import UserError

# Modules that contribute subcommands, in the order they appear in --help.
COMMAND_MODULES = [
    "pyverify.commands.basic",
]


class _Parser(argparse.ArgumentParser):
    """argparse, but bad flags exit 2 with one line (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pyverify",
        description="Check claims about prefix (KV) cache reuse in an LLM inference fleet.",
    )
    parser.add_argument("--version", action="version", version=f"pyverify {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as error:
        print(f"pyverify: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pyverify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
