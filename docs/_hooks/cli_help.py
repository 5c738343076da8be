"""MkDocs hook: write every command's ``--help`` into the page that holds ``<!-- cli-help -->``.

The flag reference is generated from the argparse parser the program itself runs
(:func:`pyverify.cli.build_parser`), so it cannot drift from the code. Help is formatted at a
fixed width so that the page does not depend on the terminal that built it.
"""

from __future__ import annotations

import argparse
import os

Parser = argparse.ArgumentParser

MARKER = "<!-- cli-help -->"
WIDTH = "100"


def _commands(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, Parser]]:
    """(``pyverify trace import``, its parser) for every command and subcommand, in --help order."""
    found = []
    for action in parser._actions:  # argparse has no public walk over its subcommands
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((f"{prefix} {name}", sub))
                found.extend(_commands(sub, f"{prefix} {name}"))
    return found


def cli_reference() -> str:
    from pyverify.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parts = []
        for name, parser in _commands(build_parser(), "pyverify"):
            parts.append(f"### `{name}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
        return "\n".join(parts)
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
