"""Argument types shared by the subcommands: each rejects bad values with one clear line."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where it is used: fractions (and decimal) cost a run that takes no hit rate 2 ms
    from fractions import Fraction


def did_you_mean(word: str, candidates) -> str:
    """`` (did you mean 'X'?)`` for the candidate closest to a mistyped ``word``, or ``''`` (difflib).

    The one place names are suggested: the parser (subcommands, flags, choices) and the list types use it.
    """
    import difflib

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""

from pyverify.inputs.model import MAX_HOSTS


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


#: The largest fleet a command accepts: the bound every input format has on hosts.
MAX_FLEET = MAX_HOSTS


def fleet_size(text: str) -> int:
    """A number of hosts, 1 .. :data:`MAX_FLEET`."""
    value = positive_int(text)
    if value > MAX_FLEET:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_FLEET} hosts, got {value}")
    return value


class InputName(str):
    """A command-line value naming a file the command reads (see :func:`refuse_writing_inputs`)."""


class OutputName(str):
    """A command-line value naming files the command writes: ``targets``, every file it names."""

    targets: tuple = ()


def input_file(text: str) -> str:
    """A file the command reads: no output of the same run may be written over it."""
    return InputName(text)


def output_file(text: str) -> str:
    """A file the command may write: checked before any work (see :func:`pyverify.fileio.check_output_file`)."""
    from pathlib import Path

    from pyverify.errors import UserError
    from pyverify.fileio import check_output_file

    try:
        check_output_file(text)
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    name = OutputName(text)
    name.targets = (Path(text),)
    return name


def chart_path(text: str) -> str:
    """A chart path (``x.png``, ``x.svg`` or a stem for both), every file checked before any work."""
    from pyverify.errors import UserError
    from pyverify.reports.charts import check_chart_targets

    try:
        targets = check_chart_targets(text)
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    name = OutputName(text)
    name.targets = tuple(targets)
    return name


def refuse_writing_inputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, a run that would write over one of its own inputs.

    The outputs are the values parsed by :func:`output_file` and :func:`chart_path`
    (every file a chart path names: ``--chart c`` writes ``c.png`` and ``c.svg``);
    the inputs those parsed by :func:`input_file`. Both are declared where the
    arguments are, so a new command is covered by declaring its arguments.
    """
    values = [item for value in vars(args).values()
              for item in (value if isinstance(value, list) else [value])]  # --rag-lengths: a list
    outputs = [target for value in values if isinstance(value, OutputName)
               for target in value.targets]
    if not outputs:
        return
    from pyverify.fileio import check_output_file

    inputs = [value for value in values if isinstance(value, InputName)]
    for target in outputs:
        check_output_file(target, inputs)


def target_hit_rate(text: str) -> "Fraction":
    """``--target-hit-rate``: a number in (0, 1], kept exact (0.3 of 10 references is 3 hits)."""
    from fractions import Fraction

    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a hit rate in (0, 1], such as 0.5, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a hit rate in (0, 1], got {text!r}")
    return value
