"""The ``pyverify`` command.

Each subcommand family is a module in :mod:`pyverify.commands` with a
``register(subparsers)`` function that adds its parser and sets
``func`` to a handler ``handler(args) -> int``. This module only assembles
them and turns :class:`~pyverify.errors.UserError` into one line on stderr
with exit status 2 (bad input), and :class:`~pyverify.errors.CheckFailed` into
one line with exit status 1 (a check that ran and failed).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from pyverify import __version__
from pyverify.errors import CheckFailed, UserError

def command_modules() -> list:
    """Every module in :mod:`pyverify.commands` that defines ``register``.

    Each module may set ``ORDER`` (an int) to place its commands in --help;
    adding a command family is adding a module, with no list to keep in sync.
    """
    import pyverify.commands as package

    modules = [importlib.import_module(f"{package.__name__}.{info.name}") for info in pkgutil.iter_modules(package.__path__)]
    modules = [module for module in modules if hasattr(module, "register")]
    return sorted(modules, key=lambda module: (getattr(module, "ORDER", 100), module.__name__))


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
    for module in command_modules():
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as error:
        print(f"pyverify: error: {error}", file=sys.stderr)
        return 2
    except CheckFailed as failure:
        print(f"pyverify: refused: {failure}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("pyverify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
