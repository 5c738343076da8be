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
    """Every name :mod:`pyverify.api` exports, with its signature and docstring, in ``__all__`` order;
    then each family module of the package (``pyverify.api.reading``, ...) with the functions and
    classes it defines that the face does not hand on."""
    import importlib
    import inspect
    import pkgutil

    from pyverify import api

    parts = [inspect.getdoc(api) + "\n"]
    shown = set()
    for name in api.__all__:
        parts.extend(_documented(name, getattr(api, name), api.__name__, shown))
    for family in pkgutil.iter_modules(api.__path__):
        if family.name.startswith("_"):
            continue
        module = importlib.import_module(f"{api.__name__}.{family.name}")
        parts.append(f"## `{module.__name__}`\n\n{inspect.getdoc(module)}\n")
        for name in getattr(module, "__all__", []):
            parts.extend(_documented(name, getattr(module, name), module.__name__, shown))
    return "\n".join(parts)


def _documented(name: str, value, package: str, shown: set) -> list[str]:
    """The reference entry of a function or class defined in ``package`` (once), else nothing: a
    constant, or a name handed on from where it is defined (the trace type) is documented there."""
    import inspect

    if not (inspect.isclass(value) or inspect.isfunction(value)) or value in shown:
        return []
    if not value.__module__.startswith(package):
        return []
    shown.add(value)
    kind = "class" if inspect.isclass(value) else "def"
    signature = str(inspect.signature(value)) if kind == "def" else ""
    return [
        f"### `{name}`\n\n```python\n{kind} {name}{signature}\n```\n",
        (inspect.getdoc(value) or "") + "\n",
    ]


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, cli_reference())
    if API_MARKER in markdown:
        markdown = markdown.replace(API_MARKER, api_reference())
    return markdown
