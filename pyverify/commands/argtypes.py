"""Argument types shared by the subcommands: each rejects bad values with one clear line."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

if (
    TYPE_CHECKING
):  # imported where it is used: fractions (and decimal) cost a run that takes no hit rate 2 ms
    from fractions import Fraction


from pyverify.suggestions import did_you_mean, unknown_name


def add_flag_check(parser, check) -> None:
    """Have ``parser`` refuse a combination of flags before any input is read.

    ``check(args)`` returns the problem in one line (starting with the flag it is about), or
    raises it as a UserError, or returns None; the parser (pyverify.cli) reports it as argparse
    reports a bad flag, under the command's name ('pyverify replay: error: ...'), exit status 2.
    """
    parser.flag_checks = [*getattr(parser, "flag_checks", ()), check]


class _OldSpelling(argparse.Action):
    """A flag's old name: stores into the new flag's place and says, once, on stderr, that the
    spelling is going away."""

    def __init__(self, option_strings, dest, new: str, **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        import sys

        print(
            f"pyverify: {option_string} is deprecated and will be removed in the next release; "
            f"use {self.new}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_old_spelling(parser, old: str, new: str, dest: str, **kwargs) -> None:
    """Accept ``old`` as a hidden alias of ``new`` (same ``dest``, same values) for one release."""
    parser.add_argument(
        old, dest=dest, new=new, action=_OldSpelling, help=argparse.SUPPRESS, **kwargs
    )


def choice_list(text: str, choices, what: str) -> list[str]:
    """Comma-separated names from ``choices``, no repeats; an unknown one gets the closest name."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in choices]
    if unknown or not names:
        raise argparse.ArgumentTypeError(unknown_name(what, (unknown or [text])[0], choices))
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"values repeat in {_short(text)}")
    return names


from pyverify.api.names import KV_BYTES_PER_TOKEN_RANGE, MAX_CACHE_BLOCKS, MAX_CACHE_GIB, MAX_HOSTS

#: The largest whole number any flag takes: past it a count no longer fits the compiled kernels'
#: 64-bit integers (numba's "Int value is too large").
MAX_FLAG_INT = 2**62


def positive_int(text: str, most: int = MAX_FLAG_INT, unit: str = "") -> int:
    """An integer from 1 to ``most``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    if value > most:
        raise argparse.ArgumentTypeError(f"expected at most {most}{unit}, got {_short(text)}")
    return value


def _short(text: str) -> str:
    """``text`` quoted, cut to 40 characters (a value past a bound can be thousands of digits)."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def bounded_number(
    text: str, low: float, high: float, what: str = "a number", low_open: bool = True
) -> float:
    """A finite number in (``low``, ``high``] (or [``low``, ``high``] when not ``low_open``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    above = value > low if low_open else value >= low
    if not (above and value <= high and math.isfinite(value)):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise argparse.ArgumentTypeError(f"expected {what} in {interval}, got {_short(text)}")
    return value


def kv_model_name(text: str) -> str:
    """``--kv-model``: a name in the catalog (pyverify.inputs.kv_models), checked before reading."""
    from pyverify.errors import UserError
    from pyverify.api.memory import lookup

    try:
        return lookup(text).name
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--kv-model: ")) from None


def capacity_blocks(text: str) -> int:
    """A cache size in blocks, 1 .. :data:`~pyverify.inputs.kv_models.MAX_CACHE_BLOCKS`."""
    return positive_int(text, MAX_CACHE_BLOCKS, " blocks")


def capacity_tokens(text: str) -> int:
    """A cache size in tokens, 1 .. :data:`~pyverify.inputs.kv_models.MAX_CACHE_BLOCKS`."""
    return positive_int(text, MAX_CACHE_BLOCKS, " tokens")


def capacity_gib(text: str) -> float:
    """KV memory in GiB, > 0 and at most :data:`~pyverify.inputs.kv_models.MAX_CACHE_GIB`."""
    return bounded_number(text, 0, MAX_CACHE_GIB, "a number of GiB")


#: The units a cache size may be given in, as they are typed (any case), and their names.
CAPACITY_UNITS = {
    "": "blocks",
    "block": "blocks",
    "blocks": "blocks",
    "token": "tokens",
    "tokens": "tokens",
    "gib": "GiB",
}


@dataclass(frozen=True)
class CacheAmount:
    """A cache size as the user gave it: a number of blocks, tokens or GiB. It becomes blocks once
    the input's block size (and, for GiB, the KV bytes per token) is known: cache_options.blocks_of."""

    value: float
    unit: str

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit}"


def cache_amount(text: str) -> CacheAmount:
    """A cache size with its unit: ``5000`` or ``5000blocks``, ``2000000tokens``, ``64GiB`` (a space
    may come before the unit), bounded as --capacity, --capacity-tokens and --capacity-gib are."""
    import re

    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(
            "expected a number of blocks, tokens or GiB (5000, 2000000tokens, "
            f"64GiB), got {_short(text)}"
        )
    number, unit = match.group(1), match.group(2).lower()
    if unit not in CAPACITY_UNITS:
        names = ("blocks", "tokens", "GiB")
        typed = match.group(2)
        close = did_you_mean(typed, names) or did_you_mean(unit, [name.lower() for name in names])
        raise argparse.ArgumentTypeError(
            f"unknown unit {_short(typed)}; choose from: {', '.join(names)}{close}"
        )
    unit = CAPACITY_UNITS[unit]
    parse = {"blocks": capacity_blocks, "tokens": capacity_tokens, "GiB": capacity_gib}[unit]
    return CacheAmount(parse(number), unit)


def kv_bytes_per_token(text: str) -> float:
    """KV bytes per token, in :data:`~pyverify.inputs.kv_models.KV_BYTES_PER_TOKEN_RANGE`."""
    low, high = KV_BYTES_PER_TOKEN_RANGE
    return bounded_number(text, low, high, "a number of bytes", low_open=False)


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
    values = [
        item
        for value in vars(args).values()
        for item in (value if isinstance(value, list) else [value])
    ]  # --rag-lengths: a list
    outputs = [
        target for value in values if isinstance(value, OutputName) for target in value.targets
    ]
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
        raise argparse.ArgumentTypeError(
            f"expected a hit rate in (0, 1], such as 0.5, got {text!r}"
        ) from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a hit rate in (0, 1], got {text!r}")
    return value
