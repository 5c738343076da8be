"""LMCache lookup-hash logs, JSONL: each request's chunk hashes, into the instance model.

LMCache stores KV caches in chunks of ``chunk_size`` tokens (256 by default)
keyed by **prefix** hashes: chunk i's hash covers every token up to the end of
that chunk, and the last chunk of a prompt may be partial (LMCache's
``ChunkedTokenDatabase``; docs.lmcache.ai, "LMCache Engine": "Uses prefix
token hashes to index the chunks"). Two forms of a lookup line are read, told
apart field by field (one file may mix them):

LMCache's own log. LMCache's chunk statistics (``chunk_statistics`` with the
``file_hash`` strategy) write one lookup per line to ``chunk_hashes_*.jsonl``
(LMCache/LMCache on GitHub, ``lmcache/v1/lookup_client/record_strategies/file_hash.py``
writes ``{"timestamp": time.time(), "lookup_id": ..., "chunk_hashes": [...]}``;
``record_strategies/base.py`` makes each hash ``hex(hash)`` of the chunk's
prefix hash, a negative one first taken modulo 2**64; the folder's
``examples/chunk_statistics/analyze_chunk_hashes.py`` reads them back)::

    {"timestamp": 1733900000.25, "lookup_id": "req-7",
     "chunk_hashes": ["0xc6cf1e2bd4a01f00", "0xc3d1a4ff5b2c0a00"]}

The older form pyverify has read since before LMCache published one (a log
written one lookup per line, as issue 23 names the fields)::

    {"chunk_hashes": [-4120913748016316416, 881902136524219392], "chunk_size": 256, "seq_len": 300}

* ``chunk_hashes``: a non-empty list of the lookup's chunk hashes, shortest
  prefix first; each an integer (any sign and size up to 64 bits signed or
  unsigned: Python's ``hash`` is signed), a hex string ``0x...`` of at most 16
  digits (LMCache's form), or another string of at most 128 characters (a hex
  digest). An integer and LMCache's hex string of the same 64 bits are the
  same hash (both are taken modulo 2**64); other strings are compared as they
  are. Equal hashes are equal prefixes; pyverify numbers distinct hashes 0, 1,
  2, ... in order of first appearance, and checks prefix closure;
* ``chunk_size``: tokens per chunk, the instance's block size; every line
  that gives it gives the same one (one line of error naming the line
  otherwise). LMCache's log does not record it (its engine's configuration
  holds it): then ``--source-block-size`` says it, and a log that gives
  neither is refused, naming the flag, rather than guessed;
* ``seq_len`` (optional): the lookup's tokens, kept as ``input_tokens`` (the
  last chunk weighs what is left, as in Mooncake's traces); it must fill every
  chunk but the last (``seq_len > chunk_size x (chunks - 1)``);
* ``timestamp`` (optional): seconds, as LMCache's log writes ``time.time()``,
  stored as ``arrival_ms`` (milliseconds); time order is checked as for every
  trace;
* ``shapes`` and ``dtypes`` (optional, together): the KV tensors of one chunk,
  e.g. ``"shapes": [[32, 2, 256, 8, 128]], "dtypes": ["bfloat16"]`` (one
  dtype per shape, or one for all; ``torch.`` prefixes are read too): a chunk
  then holds the sum of each shape's elements times its dtype's bytes, the
  same on every line that gives them, and the notes give that size and the
  bytes per token (``--kv-bytes-per-token``) for GiB budgets;
* any other field is ignored (``lookup_id`` included).
"""

from __future__ import annotations

from typing import Any

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.model import Instance, check_block_size_tokens
from pyverify.inputs.records import (
    ImportOptions,
    TraceBuilder,
    is_int,
    optional_timestamp,
    required_list,
)
from pyverify.inputs.stream import Input

#: The fields that say a JSONL record is an LMCache lookup.
LMCACHE_FIELDS = ("chunk_hashes", "chunk_size", "seq_len")

#: Longest string hash accepted.
MAX_HASH_CHARS = 128

#: LMCache's hex form of a 64-bit hash (``hex(hash)``, record_strategies/base.py).
HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

#: Bytes per element of the dtypes a chunk's KV tensors may have (PyTorch's names, no ``torch.``).
DTYPE_BYTES = {
    "float64": 8,
    "double": 8,
    "float32": 4,
    "float": 4,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2": 1,
    "float8_e5m2fnuz": 1,
    "uint8": 1,
    "int8": 1,
}

#: Most tensors a chunk's ``shapes`` may list, and most dimensions per shape.
MAX_TENSORS, MAX_DIMS = 1024, 8


def hash_key(value: Any, shown: str, field: str) -> Any:
    """A chunk or block hash as a dict key (int or str), or one line of error (shared with the vLLM KV-event reader)."""
    if is_int(value):
        if not -(2**63) <= value < 2**64:
            raise located(shown, field, f"hash {value} is outside 64 bits")
        return value
    if isinstance(value, str):
        if not 0 < len(value) <= MAX_HASH_CHARS:
            raise located(
                shown,
                field,
                f"expected a hash of 1 to {MAX_HASH_CHARS} characters, got {len(value)}",
            )
        return "s" + value  # never equal to an integer hash
    raise located(shown, field, f"expected an integer or a string hash, got {type(value).__name__}")


def chunk_key(value: Any, shown: str, field: str) -> Any:
    """A chunk hash as a dict key: LMCache's ``0x...`` and an integer of the same 64 bits give the
    same key."""
    if (
        isinstance(value, str)
        and value[:2] in ("0x", "0X")
        and 2 < len(value) <= 18
        and HEX_DIGITS.issuperset(value[2:])
    ):
        return int(value, 16)
    key = hash_key(value, shown, field)
    return key % 2**64 if isinstance(key, int) else key


def chunk_bytes(data: dict[str, Any], shown: str, where: str) -> int | None:
    """Bytes of one chunk's KV tensors from ``shapes`` and ``dtypes`` (module docstring), or
    ``None`` without them."""
    shapes, dtypes = data.get("shapes"), data.get("dtypes")
    if shapes is None and dtypes is None:
        return None
    if shapes is None or dtypes is None:
        given, lacking = ("dtypes", "shapes") if shapes is None else ("shapes", "dtypes")
        raise located(shown, where, f"gives {given} without {lacking}: a chunk's bytes need both")
    if not (isinstance(shapes, list) and 0 < len(shapes) <= MAX_TENSORS):
        raise located(
            shown, f"{where}.shapes", f"expected a list of 1 to {MAX_TENSORS} tensor shapes"
        )
    names = [dtypes] * len(shapes) if isinstance(dtypes, str) else dtypes
    if not (isinstance(names, list) and len(names) == len(shapes)):
        raise located(
            shown,
            f"{where}.dtypes",
            f"expected a dtype name, or a list of {len(shapes)}: one per shape",
        )
    total = 0
    for index, (shape, name) in enumerate(zip(shapes, names)):
        if not (
            isinstance(shape, list)
            and 0 < len(shape) <= MAX_DIMS
            and all(is_int(n) and 0 < n < 2**31 for n in shape)
        ):
            raise located(
                shown,
                f"{where}.shapes[{index}]",
                f"expected 1 to {MAX_DIMS} positive dimensions, got {shape!r}"[:200],
            )
        size = DTYPE_BYTES.get(name.removeprefix("torch.")) if isinstance(name, str) else None
        if size is None:
            field = f"{where}.dtypes" if isinstance(dtypes, str) else f"{where}.dtypes[{index}]"
            raise located(
                shown,
                field,
                f"{str(name)[:40]!r} is not a dtype pyverify knows "
                f"({', '.join(sorted(DTYPE_BYTES))})",
            )
        elements = 1
        for n in shape:
            elements *= n
        total += elements * size
    if total >= 2**63:
        raise located(shown, f"{where}.shapes", f"{total} bytes per chunk: larger than 2**63")
    return total


def shown_hash(value: Any) -> str:
    """A hash as the log wrote it, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_lmcache(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    """Read an opened LMCache lookup-hash log (module docstring); one line of error at the first bad line."""
    from pyverify.inputs.bailian import seconds_to_ms

    shown = source.display
    builder = TraceBuilder(shown, options.allow_unsorted, options.warn, options.progress)
    ids: dict[Any, int] = {}
    chunk_size, size_line = options.source_block_size, 0  # line 0: --source-block-size said it
    per_chunk: int | None = None
    bytes_line = first_line = 0
    # (where, chunks, seq_len) of lines read before any chunk size: checked once it is known
    unsized: list[tuple[str, int, int]] = []

    def check_seq_len(where: str, chunks: int, seq_len: Any) -> None:
        if not (is_int(seq_len) and chunk_size * (chunks - 1) < seq_len <= 2**63 - 1):
            raise located(
                shown,
                f"{where}.seq_len",
                f"expected more than {chunk_size * (chunks - 1)} tokens for {chunks} "
                f"chunks of {chunk_size}, got {seq_len!r}",
            )

    for line, where, data in iter_objects(source.handle, shown):
        first_line = first_line or line
        hashes = required_list(
            data, "chunk_hashes", shown, where, "chunk hashes", "a lookup has at least one chunk"
        )
        keys = (
            chunk_key(value, shown, f"{where}.chunk_hashes[{position}]")
            for position, value in enumerate(hashes)
        )
        chain = tuple(ids.setdefault(key, len(ids)) for key in keys)
        if data.get("chunk_size") is not None:
            size = check_block_size_tokens(data["chunk_size"], shown, f"{where}.chunk_size")
            if chunk_size is None:  # the log's one size, shared by the lines read before it
                chunk_size, size_line = size, line
                for earlier in unsized:
                    check_seq_len(*earlier)
            elif size != chunk_size:
                said = f"line {size_line} says" if size_line else "--source-block-size says"
                raise located(
                    shown,
                    f"{where}.chunk_size",
                    f"{size} tokens, but {said} {chunk_size}: a log has one chunk size",
                )
        seq_len = data.get("seq_len")
        if seq_len is not None:
            if chunk_size is not None:
                check_seq_len(where, len(chain), seq_len)
            elif is_int(seq_len):
                unsized.append((where, len(chain), seq_len))
            else:
                raise located(
                    shown, f"{where}.seq_len", f"expected a whole number of tokens, got {seq_len!r}"
                )
        seconds = optional_timestamp(data, shown, where, ms_per_unit=1000)
        size_in_bytes = chunk_bytes(data, shown, where)
        if size_in_bytes is not None:
            if per_chunk is None:
                per_chunk, bytes_line = size_in_bytes, line
            elif size_in_bytes != per_chunk:
                raise located(
                    shown,
                    f"{where}.shapes",
                    f"{size_in_bytes} bytes per chunk, but line {bytes_line} gives "
                    f"{per_chunk}: a log's chunks are of one model",
                )
        violation = builder.prefix_violation(chain)
        if violation is not None:
            position = violation[0]
            before = (
                "the start" if position == 0 else f"chunk hash {shown_hash(hashes[position - 1])}"
            )
            raise located(
                shown,
                f"{where}.chunk_hashes[{position}]",
                f"not prefix-closed: chunk hash {shown_hash(hashes[position])} follows {before} here but followed "
                "another chunk earlier (a prefix hash names one prefix)",
            )
        builder.add(line, chain, None if seconds is None else seconds_to_ms(seconds), seq_len, None)
    if chunk_size is None and builder.chains:
        raise located(
            shown,
            f"line {first_line}",
            "no chunk_size on any line (LMCache's own log records none: its engine's "
            "configuration holds it); give it with --source-block-size "
            "(LMCache's default is 256)",
        )
    instance = builder.instance(
        name=options.name or source.stem,
        fleet_size=1 if options.hosts is None else options.hosts,
        description=f"Imported from the LMCache lookup-hash log {source.label} ({len(builder.chains)} lookups, "
        f"chunks of {chunk_size} tokens as blocks).",
        source=f"lmcache-jsonl:{source.label}",
        block_size_tokens=chunk_size,
    )
    flag = " (--source-block-size)" if size_line == 0 else ""
    notes = [
        f"chunks of {chunk_size} tokens{flag} are the blocks; "
        f"{len(ids)} distinct chunk hashes numbered 0..{len(ids) - 1}"
    ]
    if per_chunk is not None:
        notes.append(
            f"a chunk's KV is {per_chunk} bytes (shapes x dtypes): "
            f"{per_chunk / chunk_size:g} bytes per token (--kv-bytes-per-token for GiB budgets)"
        )
    return instance, notes


__all__ = ["DTYPE_BYTES", "LMCACHE_FIELDS", "chunk_bytes", "chunk_key", "hash_key", "read_lmcache"]
