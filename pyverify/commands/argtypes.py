"""Argument types shared by the subcommands: each rejects bad values with one clear line."""

from __future__ import annotations

import argparse

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


def output_file(text: str) -> str:
    """A file the command may write: checked before any work (see :func:`pyverify.fileio.check_output_file`)."""
    from pyverify.errors import UserError
    from pyverify.fileio import check_output_file

    try:
        check_output_file(text)
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def chart_path(text: str) -> str:
    """A chart path (``x.png``, ``x.svg`` or a stem for both), every file checked before any work."""
    from pyverify.errors import UserError
    from pyverify.reports.charts import check_chart_targets

    try:
        check_chart_targets(text)
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text
