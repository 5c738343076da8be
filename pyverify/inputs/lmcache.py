"""LMCache lookup-hash logs, JSONL: each request's chunk hashes, into the instance model.

LMCache stores KV caches in chunks of ``chunk_size`` tokens (256 by default)
keyed by **prefix** hashes: chunk i's hash covers every token up to the end of
that chunk, and the last chunk of a prompt may be partial (LMCache's
``ChunkedTokenDatabase``; docs.lmcache.ai, "LMCache Engine": "Uses prefix
token hashes to index the chunks"). LMCache publishes no standard file for
them, so pyverify states the shape it reads (a log written one lookup per
line, as issue 23 names the fields)::

    {"chunk_hashes": [-4120913748016316416, 881902136524219392], "chunk_size": 256, "seq_len": 300}

* ``chunk_hashes``: a non-empty list of the lookup's chunk hashes, shortest
  prefix first; each an integer (any sign and size up to 64 bits signed or
  unsigned: Python's ``hash`` is signed) or a string of at most 128 characters
  (a hex digest). Equal hashes are equal prefixes; pyverify numbers distinct
  hashes 0, 1, 2, ... in order of first appearance, and checks prefix closure;
* ``chunk_size``: tokens per chunk, the instance's block size; every line
  gives the same one (one line of error naming the line otherwise);
* ``seq_len``: the lookup's tokens, kept as ``input_tokens`` (the last chunk
  weighs what is left, as in Mooncake's traces); it must fill every chunk but
  the last (``seq_len > chunk_size x (chunks - 1)``);
* any other field is ignored (timestamps included: their unit is not fixed by
  any published format, so pyverify does not guess it).
"""

from __future__ import annotations

from typing import Any

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.model import Instance, check_block_size_tokens
from pyverify.inputs.records import ImportOptions, TraceBuilder, is_int, required_list
from pyverify.inputs.stream import Input

#: The fields that say a JSONL record is an LMCache lookup.
LMCACHE_FIELDS = ("chunk_hashes", "chunk_size", "seq_len")

#: Longest string hash accepted.
MAX_HASH_CHARS = 128


def hash_key(value: Any, shown: str, field: str) -> Any:
    """A chunk or block hash as a dict key (int or str), or one line of error (shared with the vLLM KV-event reader)."""
    if is_int(value):
        if not -(2**63) <= value < 2**64:
            raise located(shown, field, f"hash {value} is outside 64 bits")
        return value
    if isinstance(value, str):
        if not 0 < len(value) <= MAX_HASH_CHARS:
            raise located(shown, field, f"expected a hash of 1 to {MAX_HASH_CHARS} characters, got {len(value)}")
        return "s" + value  # never equal to an integer hash
    raise located(shown, field, f"expected an integer or a string hash, got {type(value).__name__}")


def shown_hash(value: Any) -> str:
    """A hash as the log wrote it, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_lmcache(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    """Read an opened LMCache lookup-hash log (module docstring); one line of error at the first bad line."""
    shown = source.display
    builder = TraceBuilder(shown, options.allow_unsorted, options.warn, options.progress)
    ids: dict[Any, int] = {}
    chunk_size: int | None = None
    size_line = 0
    for line, where, data in iter_objects(source.handle, shown):
        hashes = required_list(data, "chunk_hashes", shown, where, "chunk hashes", "a lookup has at least one chunk")
        chain = tuple(ids.setdefault(hash_key(value, shown, f"{where}.chunk_hashes[{position}]"), len(ids))
                      for position, value in enumerate(hashes))
        if "chunk_size" not in data:
            raise located(shown, where, "missing field 'chunk_size'")
        size = check_block_size_tokens(data["chunk_size"], shown, f"{where}.chunk_size")
        if chunk_size is None:
            chunk_size, size_line = size, line
        elif size != chunk_size:
            raise located(shown, f"{where}.chunk_size", f"{size} tokens, but line {size_line} says {chunk_size}: a log has one chunk size")
        if "seq_len" not in data:
            raise located(shown, where, "missing field 'seq_len'")
        seq_len = data["seq_len"]
        if not (is_int(seq_len) and size * (len(chain) - 1) < seq_len <= 2**63 - 1):
            raise located(shown, f"{where}.seq_len", f"expected more than {size * (len(chain) - 1)} tokens for {len(chain)} chunks "
                                                     f"of {size}, got {seq_len!r}")
        violation = builder.prefix_violation(chain)
        if violation is not None:
            position = violation[0]
            before = "the start" if position == 0 else f"chunk hash {shown_hash(hashes[position - 1])}"
            raise located(shown, f"{where}.chunk_hashes[{position}]",
                          f"not prefix-closed: chunk hash {shown_hash(hashes[position])} follows {before} here but followed "
                          "another chunk earlier (a prefix hash names one prefix)")
        builder.add(line, chain, None, seq_len, None)
    instance = builder.instance(
        name=options.name or source.stem,
        hosts=1 if options.hosts is None else options.hosts,
        description=f"Imported from the LMCache lookup-hash log {source.label} ({len(builder.chains)} lookups, "
                    f"chunks of {chunk_size} tokens as blocks).",
        source=f"lmcache-jsonl:{source.label}",
        block_size_tokens=chunk_size,
    )
    return instance, [f"chunks of {chunk_size} tokens are the blocks; {len(ids)} distinct chunk hashes numbered 0..{len(ids) - 1}"]


__all__ = ["LMCACHE_FIELDS", "hash_key", "read_lmcache"]
