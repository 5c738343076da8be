"""Reading inputs: every format pyverify reads, told apart by content, and how a trace is named.

What each guarantees:

* :func:`read_input` reads any accepted format (gzip or not, ``-`` for standard input) into a
  validated, prefix-closed instance, exactly as ``pyverify trace import`` reads it with the same
  :class:`~pyverify.inputs.records.ImportOptions`; a bad input raises
  :class:`~pyverify.errors.UserError` naming the file, the field and the reason.
* :func:`read_trace_file` reads a trace file (Parquet, CSV, Mooncake JSONL) straight into arrays,
  with the same content as :func:`read_input` would give.
* :func:`content_sha256` is the trace's content digest (``pyverify.content/1``): equal for the
  same requests in any format, on either path; :func:`instance_sha256` is the digest of a
  ``pyverify.instance/1`` file's canonical JSON, by which certificates name it.

The readers (NumPy, pyarrow, numba) are imported by the call that uses them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from pyverify.api._traces import Trace, as_instance
from pyverify.inputs.model import ROOT

if TYPE_CHECKING:  # the types a reading gives, for annotations (importing them loads NumPy)
    import numpy as np

    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.load import Loaded
    from pyverify.inputs.model import Instance
    from pyverify.inputs.records import ImportOptions

__all__ = [
    "MOONCAKE_KEYS",
    "RICHER_THAN_MOONCAKE",
    "ROOT",
    "content_sha256",
    "content_sha256_beside",
    "distinct_blocks",
    "flat_references",
    "formats",
    "instance_sha256",
    "is_plain_mooncake",
    "is_stdin",
    "may_give_sizes",
    "prefix_tree",
    "read_as_arrays",
    "read_input",
    "read_trace_file",
    "reading_options",
    "richer_than_mooncake",
    "stem_of",
    "write_parquet",
]


def reading_options(**flags) -> ImportOptions:
    """How to read an input (``allow_unsorted``, ``block_size``, ``tokenizer``,
    ``source_block_size``, ``rag_order``, ``rag_lengths``, ``progress``, ...): the fields of
    :class:`~pyverify.inputs.records.ImportOptions`, each defaulting to plain reading."""
    from pyverify.inputs.records import ImportOptions

    return ImportOptions(**flags)


def read_input(path: str | Path, options: ImportOptions | None = None) -> Loaded:
    """The input at ``path`` (``-``: standard input), in whatever format, read and validated; with
    what it was (``format``, ``compression``, ``notes``)."""
    from pyverify.inputs.load import load_described

    return load_described(path) if options is None else load_described(path, options)


def read_trace_file(path: str | Path, allow_unsorted: bool = False) -> ColumnarTrace:
    """A trace file (Parquet or CSV by content, else Mooncake JSONL) as arrays."""
    from pyverify.inputs.columnar import read_columnar

    return read_columnar(path, allow_unsorted=allow_unsorted)


def read_as_arrays(
    path: str, options: ImportOptions | None = None, *, per_record: bool = False
) -> tuple[ColumnarTrace, Loaded]:
    """The input at ``path`` as arrays, whatever its format, and what it was: the column readers
    for the trace files they read (Mooncake JSONL, CSV, Parquet; their ``Loaded`` holds no
    instance and no notes), else the instance readers, converted once. ``per_record``: read with
    the instance readers whatever the format (re-blocking, tokenizing). Refuses an input whose
    blocks differ in size, which one columnar trace cannot hold."""
    from pyverify.errors import UserError, shown
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.columnar.formats import is_hash_ids_csv, is_hash_ids_jsonl, is_parquet
    from pyverify.inputs.load import CSV, MOONCAKE, PARQUET, Loaded

    if not per_record and (is_parquet(path) or is_hash_ids_csv(path) or is_hash_ids_jsonl(path)):
        allow_unsorted = options.allow_unsorted if options is not None else False
        trace = read_trace_file(path, allow_unsorted=allow_unsorted)
        fmt = PARQUET if is_parquet(path) else CSV if is_hash_ids_csv(path) else MOONCAKE
        return trace, Loaded(None, fmt, None)
    loaded = read_input(path, options)
    instance = loaded.instance
    if any("block_tokens" in item for item in instance.extra):
        # The columnar trace has one block size; blocks of varying size (RAGPulse's chunks) would lose their weights.
        raise UserError(
            f"{shown(path)}: its blocks differ in size (block_tokens), which a Parquet trace cannot hold; "
            "write an instance (.json) instead"
        )
    return ColumnarTrace.from_instance(instance), loaded


def write_parquet(trace: ColumnarTrace, path: str | Path) -> None:
    """Write ``trace`` as Parquet (integers stay integers), as ``trace import -o x.parquet``."""
    from pyverify.inputs.columnar import write_parquet as write

    write(trace, path)


def distinct_blocks(trace: ColumnarTrace) -> int:
    """The number of distinct block ids: the misses of one uncapacitated pooled cache."""
    from pyverify.sim.counting import pooled_misses

    return pooled_misses(trace.ids)


def formats() -> list:
    """Every input format, in the order the readers try them (each with ``key``, ``title`` and
    ``signature``, what tells it by content)."""
    from pyverify.inputs.load import FORMATS

    return list(FORMATS)


def content_sha256(trace: Trace) -> str:
    """Hex SHA-256 of the trace's ``pyverify.content/1`` encoding, equal across formats."""
    from pyverify.inputs.columnar.digest import content_sha256 as digest

    return digest(trace)


def content_sha256_beside(trace: ColumnarTrace) -> Callable[[], str]:
    """:func:`content_sha256` taken on a second thread while the caller computes; call the result
    for the digest (the arrays must not change until then)."""
    from pyverify.inputs.columnar.digest import content_sha256_beside as digest_beside

    return digest_beside(trace)


def instance_sha256(instance: Instance) -> str:
    """Hex SHA-256 of the instance's canonical JSON (how certificates name an instance file)."""
    from pyverify.inputs.model import instance_sha256 as digest

    return digest(instance)


def flat_references(chains: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, lengths)``: every block id in reference order (int64), and each chain's length: the
    flat form the kernels and the optima take."""
    from pyverify.cache.arrays import flatten

    return flatten(chains)


def prefix_tree(trace: Trace):
    """The trace's prefix (radix) tree as a ``networkx.DiGraph`` rooted at :data:`ROOT`: edges go
    parent to child, each block has one parent (the trace is prefix-closed), and the node
    attribute ``requests`` counts the requests whose chains pass through the block."""
    from pyverify.inputs.model import prefix_tree as tree_of

    return tree_of(as_instance(trace))


def is_stdin(path: object) -> bool:
    """Whether ``path`` means standard input: only the string ``-`` as typed on a command line."""
    from pyverify.inputs.stream import is_stdin as means_stdin

    return means_stdin(path)


def stem_of(path: object) -> str:
    """The default instance name for ``path``: ``t`` for ``t.jsonl`` and ``t.jsonl.gz``;
    ``stdin`` for ``-``."""
    from pyverify.inputs.stream import stem_of as stem

    return stem(path)


#: Hash-id JSONL formats whose records say what Mooncake's do not: a block size, conversations, components.
RICHER_THAN_MOONCAKE = ("kvcache-simulator-jsonl", "qwen-bailian-jsonl", "ragpulse-jsonl")

#: The fields of a Mooncake record (the released traces have no others).
MOONCAKE_KEYS = frozenset({"hash_ids", "timestamp", "input_length", "output_length"})


def richer_than_mooncake(path: str) -> bool:
    """Whether the file at ``path`` is one of :data:`RICHER_THAN_MOONCAKE`, by its first record,
    or a Mooncake file that :func:`may_give_sizes` on a later one (never standard input: it can be
    read only once). Unreadable or unknown inputs say no: the reader reports them."""
    if path == "-" or not os.path.isfile(path):
        return False
    from pyverify.errors import UserError
    from pyverify.inputs.detect import read_head
    from pyverify.inputs.stream import open_source

    try:
        with open_source(path) as source:
            head = read_head(source)
            if head.first_object is None:
                return False  # a Parquet file, say: its reader decides
            if is_plain_mooncake(head.first_object):
                # Settled without the per-record readers' module (start-up time): each of those
                # formats is told by the fields of a first record, and Mooncake's alone are not one;
                # but kvcache-simulator's block_size and block_tokens count on any record (the
                # strict reader honours them there).
                return not source.compression and may_give_sizes(path)
            from pyverify.inputs.load import detect_format

            return detect_format(head, source.display).key in RICHER_THAN_MOONCAKE
    except (UserError, OSError):
        return False


def may_give_sizes(path: str) -> bool:
    """Whether the file at ``path`` may hold a ``block_size`` or ``block_tokens`` key on some
    record: it holds the bytes ``block_`` or a backslash (an escape may spell a key). Mooncake's
    traces hold neither, so they stay on the array path; a file that does is read per record,
    which honours those keys wherever they stand (the array readers give them too, by the strict
    reader, but the array replays weigh no block by its own block_tokens). A search or two of the
    mapped file, at memory speed."""
    import mmap

    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as text:
            if text.find(b"\\") >= 0:
                return True
            # Mooncake's keys and numbers hold no "k", which one byte search (memchr) finds at
            # memory speed: 2 ms for 45 MB here, where the search for "block_" took 58 ms.
            return text.find(b"k") >= 0 and text.find(b"block_") >= 0


def is_plain_mooncake(record: object) -> bool:
    """Whether a first record is Mooncake's and nothing more: a list of ``hash_ids`` and no field but Mooncake's.
    Every format of :data:`RICHER_THAN_MOONCAKE` is told by a field Mooncake's records lack or by ``hash_ids`` that
    is not a list, so none can claim such a record (``tests/test_startup.py`` checks this against the detectors)."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("hash_ids"), list)
        and record.keys() <= MOONCAKE_KEYS
    )
