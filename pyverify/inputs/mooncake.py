"""Trace importers: Mooncake JSONL into the instance model, streaming.

Mooncake's trace format (kvcache-ai/Mooncake, ``FAST25-release/traces/``) is
one JSON object per line::

    {"timestamp": 0, "input_length": 40160, "output_length": 6, "hash_ids": [0, 1, ...]}

``hash_ids`` are remapped prefix block hashes, one per 512-token block; equal
ids mean a reusable KV block, so each id names the whole prefix up to its
block, exactly as a chain does in :mod:`pyverify.inputs.model`.

What :func:`import_mooncake` checks, line by line, stopping at the first
problem with a one-line :class:`~pyverify.errors.UserError` of the form
``FILE: line N[.FIELD[POS]]: REASON``:

* each non-blank line is a JSON object (blank lines are skipped; unknown keys
  are ignored, so later versions of the format with extra fields still load);
* ``hash_ids`` is a non-empty list of non-negative integers (``true`` is not an
  integer, and neither is ``1.0``);
* ``timestamp`` is a non-negative number, ``input_length`` and
  ``output_length`` are non-negative integers, when present (the released
  traces always carry all three);
* prefix closure (docs/explanation/model.md): every id keeps one parent
  throughout the file; the first violation is reported with its line and its
  position in ``hash_ids``;
* time order (decreasing timestamps are an error unless ``allow_unsorted``;
  see :mod:`pyverify.inputs.records`). Equal timestamps are fine (the
  synthetic trace has many).

The importer streams: it holds the chains it builds and one dict of parents,
never the whole text. An imported instance has no routing (traces carry none),
``hosts`` as asked (default 1), and ``block_size_tokens`` 512. The file may be
gzip-compressed or standard input (:mod:`pyverify.inputs.stream`).

Block size. Mooncake's blocks are 512 tokens. kvcache-simulator's own input
format (``kvcache_sim/trace.py``) adds a per-record ``block_size``, e.g.
``{"block_size": 64, "hash_ids": [2001, 2002], "input_length": 128}``. The rule
here is kvcache-simulator's: every record that gives ``block_size`` gives the
same one (a trace has one block size: a cache of blocks of mixed sizes counts
blocks that do not weigh the same, so pyverify refuses rather than guess; the
error names the line), and records that give none share the trace's. A file
that gives none is read at ``--source-block-size`` (default 512, Mooncake's);
a file whose ``block_size`` differs from ``--source-block-size`` is refused.
kvcache-simulator's optional per-record ``block_tokens`` (one positive token
count per block) is kept and weighs the blocks, as it does there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.model import Instance, check_block_size_tokens
from pyverify.inputs.records import (
    MAX_BLOCK_ID,
    ImportOptions,
    TraceBuilder,
    is_int,
    optional_count,
    optional_timestamp,
    required_list,
)
from pyverify.inputs.stream import Input, open_source

#: Tokens per Mooncake block (the paper's and the trace README's block size).
MOONCAKE_BLOCK_TOKENS = 512

#: The fields that say a JSONL record is a Mooncake request.
MOONCAKE_FIELDS = ("hash_ids", "input_length", "output_length")

#: kvcache-simulator's per-record fields that change how the whole trace is read (its block size,
#: its blocks' weights), on whichever record they stand: a fast reader that cannot carry them must
#: leave such a file to :func:`read_mooncake`.
SIZE_FIELDS = frozenset({"block_size", "block_tokens"})


@dataclass(frozen=True)
class TraceRecord:
    """One validated trace line."""

    line: int
    hash_ids: tuple[int, ...]
    timestamp: float | int | None
    input_length: int | None
    output_length: int | None
    block_size: int | None = None  # kvcache-simulator's per-record block size, when given
    block_tokens: tuple[int, ...] | None = (
        None  # kvcache-simulator's per-block token counts, when given
    )


def check_hash_ids(data: dict, shown: str, where: str, key: str = "hash_ids") -> list[int]:
    """``data[key]`` as a non-empty list of block ids 0 .. 2**63-1; one line of error otherwise."""
    hash_ids = required_list(
        data, key, shown, where, "block ids", "a request has at least one block"
    )
    for position, block in enumerate(hash_ids):
        if not is_int(block):
            raise located(
                shown, f"{where}.{key}[{position}]", f"block id {block!r} is not an integer"
            )
        if block < 0:
            raise located(shown, f"{where}.{key}[{position}]", f"block id {block} is negative")
        if block > MAX_BLOCK_ID:
            raise located(
                shown, f"{where}.{key}[{position}]", f"block id {block} is larger than 2**63-1"
            )
    return hash_ids


class BlockSizeRule:
    """One block size per trace (module docstring): the records' ``block_size``, else ``--source-block-size``, else a default."""

    def __init__(self, display: str, asked: int | None, default: int) -> None:
        self.display, self.asked, self.default = display, asked, default
        self.given: int | None = None
        self.given_line = 0

    def see(self, line: int, value: int | None) -> None:
        if value is None:
            return
        if self.given is None:
            if self.asked is not None and value != self.asked:
                raise located(
                    self.display,
                    f"line {line}.block_size",
                    f"{value} tokens, but --source-block-size says {self.asked}: drop the flag or fix the file",
                )
            self.given, self.given_line = value, line
        elif value != self.given:
            raise located(
                self.display,
                f"line {line}.block_size",
                f"{value} tokens, but line {self.given_line} says {self.given}: a trace has one block size "
                "(blocks of mixed sizes would be counted as equal cache slots)",
            )

    @property
    def size(self) -> int:
        return (
            self.given
            if self.given is not None
            else self.asked
            if self.asked is not None
            else self.default
        )

    def note(self) -> str:
        """``, blocks of N tokens (...)`` when the size is not the format's default (else nothing: descriptions stay as they were)."""
        if self.given is not None:
            return f", blocks of {self.given} tokens (the records' block_size)"
        if self.asked is not None:
            return f", blocks of {self.asked} tokens (--source-block-size)"
        return ""


def iter_records(source: Input) -> Iterator[TraceRecord]:
    """Yield each line of an opened Mooncake JSONL trace as a validated :class:`TraceRecord`.

    Checks the per-line shape only (see the module docstring); prefix closure
    and time order need the whole stream (:func:`read_mooncake`).
    """
    shown = source.display
    for line_number, where, data in iter_objects(source.handle, shown):
        hash_ids = check_hash_ids(data, shown, where)
        timestamp = optional_timestamp(data, shown, where)
        input_length = optional_count(data, "input_length", shown, where)
        output_length = optional_count(data, "output_length", shown, where)
        block_size = data.get("block_size")
        if block_size is not None:
            check_block_size_tokens(block_size, shown, f"{where}.block_size")
        counts = data.get("block_tokens")
        if counts is not None:
            if not isinstance(counts, list) or len(counts) != len(hash_ids):
                raise located(
                    shown,
                    f"{where}.block_tokens",
                    f"expected a list of {len(hash_ids)} token counts, one per block",
                )
            for position, value in enumerate(counts):
                check_block_size_tokens(value, shown, f"{where}.block_tokens[{position}]")
            counts = tuple(counts)
        yield TraceRecord(
            line_number, tuple(hash_ids), timestamp, input_length, output_length, block_size, counts
        )


def iter_mooncake(path: str | Path) -> Iterator[TraceRecord]:
    """:func:`iter_records` of the file at ``path`` (``-`` for standard input; gzip or not)."""
    with open_source(path) as source:
        yield from iter_records(source)


def read_mooncake(source: Input, options: ImportOptions = ImportOptions()) -> Instance:
    """Read an opened Mooncake JSONL trace as an :class:`~pyverify.inputs.model.Instance`.

    Raises a one-line UserError at the first bad line (see the module docstring).
    """
    builder = TraceBuilder(source.display, options.allow_unsorted, options.warn, options.progress)
    sizes = BlockSizeRule(source.display, options.source_block_size, MOONCAKE_BLOCK_TOKENS)
    for record in iter_records(source):
        sizes.see(record.line, record.block_size)
        violation = builder.prefix_violation(record.hash_ids)
        if violation is not None:
            position, reason = violation
            raise located(source.display, f"line {record.line}.hash_ids[{position}]", reason)
        builder.add(
            record.line,
            record.hash_ids,
            record.timestamp,
            record.input_length,
            record.output_length,
        )
        if record.block_tokens is not None:
            builder.extra[-1]["block_tokens"] = list(record.block_tokens)
    shown = source.label
    return builder.instance(
        name=options.name or source.stem,
        fleet_size=1 if options.hosts is None else options.hosts,
        description=f"Imported from the Mooncake JSONL trace {shown} ({len(builder.chains)} requests{sizes.note()}).",
        source=f"mooncake-jsonl:{shown}",
        block_size_tokens=sizes.size,
    )


def import_mooncake(
    path: str | Path,
    hosts: int = 1,
    name: str | None = None,
    allow_unsorted: bool = False,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Instance:
    """Import the Mooncake JSONL trace at ``path`` (see :func:`read_mooncake`).

    ``progress``, if given, is called with 1 after each request is imported
    (for a progress bar). ``warn`` receives the one warning about decreasing
    timestamps when ``allow_unsorted`` is set (default: print to stderr).
    """
    options = ImportOptions(
        hosts=hosts, name=name, allow_unsorted=allow_unsorted, warn=warn, progress=progress
    )
    with open_source(path) as source:
        return read_mooncake(source, options)


__all__ = [
    "BlockSizeRule",
    "MOONCAKE_BLOCK_TOKENS",
    "SIZE_FIELDS",
    "check_hash_ids",
    "MOONCAKE_FIELDS",
    "TraceRecord",
    "import_mooncake",
    "iter_mooncake",
    "iter_records",
    "read_mooncake",
]
