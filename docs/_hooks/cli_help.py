"""MkDocs hook: write every command's ``--help`` into the page that holds ``<!-- cli-help -->``,
and the Python API's signatures and docstrings into the page that holds ``<!-- api-reference -->``.

The flag reference is generated from the argparse parser the program itself runs
(:func:`pyverify.cli.build_parser`), so it cannot drift from the code. Help is formatted at a
fixed width so that the page does not depend on the terminal that built it.
"""

from __future__ import annotations

import argparse
import os

Parser = argparse.ArgumentParser

MARKER = "<!-- cli-help -->"
API_MARKER = "<!-- api-reference -->"
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


def api_reference() -> str:
    """Every name :mod:`pyverify.api` exports, with its signature and docstring, in ``__all__`` order."""
    import inspect

    from pyverify import api

    parts = [inspect.getdoc(api) + "\n"]
    for name in api.__all__:
        value = getattr(api, name)
        if not value.__module__.startswith(api.__name__):
            continue  # re-exported (the trace type): documented where it is defined
        kind = "class" if inspect.isclass(value) else "def"
        signature = str(inspect.signature(value)) if kind == "def" else ""
        parts.append(f"### `{name}`\n\n```python\n{kind} {name}{signature}\n```\n")
        parts.append((inspect.getdoc(value) or "") + "\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, cli_reference())
    if API_MARKER in markdown:
        markdown = markdown.replace(API_MARKER, api_reference())
    return markdown
