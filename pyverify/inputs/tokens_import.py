"""Request logs of token ids, hashed into chained block ids as vLLM's prefix cache does.

The input is JSONL, one request per line, with its prompt's token ids in
``prompt_token_ids`` (vLLM's name for them) or ``token_ids``::

    {"prompt_token_ids": [151644, 8948, 198, ...], "timestamp": 1200, "output_tokens": 31}

Optional fields: ``timestamp`` (milliseconds, as in Mooncake's traces; must
not decrease unless ``--allow-unsorted``), ``output_tokens`` (or Mooncake's
``output_length``), ``route_key`` (a string for the route-key policy) and
``cache_salt`` (vLLM's per-request salt; it enters the first block's hash
only, so requests with different salts share nothing). Other fields are
ignored.

How blocks are hashed (vLLM, "Automatic Prefix Caching",
https://docs.vllm.ai/en/latest/design/prefix_caching/): the prompt is cut into
blocks of ``block_size`` tokens; block j's hash is a hash of the parent's hash
(block j-1's, or a fixed root value), the tuple of the block's tokens, and
extra keys (here only the cache salt, on the first block). So a block's hash
names its whole prefix, which is what a chain of block ids is in
:mod:`pyverify.inputs.model`, and the imported trace is prefix-closed by
construction. Only **full** blocks are hashed and cached, as in vLLM ("a
cached block is a full block with a block hash", vLLM API docs,
``vllm.v1.core.block_pool``, https://docs.vllm.ai/en/v0.11.2/api/vllm/v1/core/block_pool/); the
partial tail of a prompt (``len(tokens) mod block_size`` tokens) gets no block
id. Each request's ``input_tokens`` records its whole prompt length, so
token-weighted accounting counts the tail, always recomputed, as a miss: for a
request of ``n`` tokens and ``k`` full blocks, ``n - k * block_size`` tokens.
A prompt shorter than one block has no block at all: such requests are left
out of the instance (a chain has at least one block), and the import says how
many and how many tokens they held (:mod:`pyverify.inputs.blocktokens` states
the token rule for every format). One difference is not modelled: vLLM
recomputes at least a prompt's last token to get its logits, so a prompt that
is a whole number of blocks, all cached, hits one block fewer in vLLM.

The hash function (:func:`block_id`) is pyverify's own, stable across runs
and machines (not Python's salted ``hash``, and not vLLM's, whose root value
is random per process unless ``PYTHONHASHSEED`` is set): SHA-256 over a
domain tag, the parent id as a signed 64-bit big-endian integer (the root is
-1), the extra key's length and bytes, the token count as a 32-bit integer
and each token as an unsigned 64-bit big-endian integer; the first 8 bytes of
the digest, big-endian, with the top bit cleared, give an id in
``0 .. 2**63 - 1``. The ids differ from vLLM's, but two blocks get equal ids
exactly when vLLM's would be equal (up to collisions: with ``n`` distinct
blocks, a collision among 63-bit ids has probability about ``n**2 / 2**64``;
one that breaks prefix closure is reported as an error, never hidden).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any, Sequence

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.model import MAX_BLOCK_SIZE_TOKENS, ROOT, Instance, check_block_size_tokens
from pyverify.inputs.records import (
    ImportOptions,
    TraceBuilder,
    is_int,
    optional_count,
    optional_text,
    optional_timestamp,
    required_list,
)
from pyverify.inputs.stream import Input

#: vLLM's default KV-cache block size on GPUs, in tokens (``--block-size``).
DEFAULT_BLOCK_SIZE = 16

#: The largest block size (the instance schema's bound on ``block_size_tokens``).
MAX_BLOCK_SIZE = MAX_BLOCK_SIZE_TOKENS

#: The fields that hold a request's prompt token ids (the first is vLLM's name).
TOKEN_FIELDS = ("prompt_token_ids", "token_ids")

#: The largest token id accepted (tokens are hashed as unsigned 64-bit integers).
MAX_TOKEN_ID = 2**63 - 1

_DOMAIN = b"pyverify.chained-block-hash/1\x00"
_ID_MASK = 2**63 - 1


def block_id(parent: int, tokens: Sequence[int], extra: bytes = b"") -> int:
    """The id of a block of ``tokens`` whose parent block has id ``parent`` (``ROOT`` for the first block)."""
    digest = hashlib.sha256(_DOMAIN)
    digest.update(struct.pack(">qI", parent, len(extra)))
    digest.update(extra)
    digest.update(struct.pack(f">I{len(tokens)}Q", len(tokens), *tokens))
    return int.from_bytes(digest.digest()[:8], "big") & _ID_MASK


def chain_of_tokens(
    tokens: Sequence[int], block_size: int, salt: str | None = None
) -> tuple[int, ...]:
    """The chained ids of the full blocks of ``tokens`` (the partial tail gets none)."""
    ids: list[int] = []
    parent = ROOT
    for start in range(0, len(tokens) - block_size + 1, block_size):
        extra = salt.encode("utf-8") if (start == 0 and salt) else b""
        parent = block_id(parent, tokens[start : start + block_size], extra)
        ids.append(parent)
    return tuple(ids)


def check_block_size(block_size: int) -> int:
    return check_block_size_tokens(block_size, "--block-size", None)


class HashedTrace:
    """Turns requests given as token ids into an instance: hashing, closure, short requests.

    Shared by the token-id reader below and the chat reader
    (:mod:`pyverify.inputs.chat_import`), which tokenizes first.
    """

    def __init__(self, source: Input, options: ImportOptions) -> None:
        self.source = source
        self.block_size = check_block_size(options.block_size or DEFAULT_BLOCK_SIZE)
        self.builder = TraceBuilder(
            source.display, options.allow_unsorted, options.warn, options.progress
        )
        self.options = options
        self.short_requests = 0
        self.short_tokens = 0

    def add(
        self,
        line: int,
        field: str,
        tokens: Sequence[int],
        data: dict[str, Any],
        where: str | None = None,
    ) -> None:
        """Hash one request's ``tokens`` (from ``field`` of ``data``, at ``where`` on ``line``) and record it."""
        shown, where = self.source.display, where or f"line {line}"
        timestamp = optional_timestamp(data, shown, where)
        output = optional_count(data, "output_tokens", shown, where)
        if output is None:
            output = optional_count(data, "output_length", shown, where)
        route_key = optional_text(data, "route_key", shown, where)
        salt = optional_text(data, "cache_salt", shown, where)
        chain = chain_of_tokens(tokens, self.block_size, salt)
        if not chain:
            self.builder.check_time(line, timestamp)
            self.short_requests += 1
            self.short_tokens += len(tokens)
            return
        violation = self.builder.prefix_violation(chain)
        if violation is not None:
            position, _ = violation
            start = position * self.block_size
            tokens_at = (
                f"{field}[{start}:{start + self.block_size}]"
                if field in TOKEN_FIELDS
                else f"{field} (tokens {start}..{start + self.block_size - 1})"
            )
            raise located(
                shown,
                f"{where}.{tokens_at}",
                f"hash collision: block id {chain[position]} was given to a different prefix earlier "
                "(two 63-bit SHA-256 ids met; re-import with another --block-size)",
            )
        self.builder.add(line, chain, timestamp, len(tokens), output, route_key)

    def notes(self) -> list[str]:
        if not self.short_requests:
            return []
        return [
            f"left out {self.short_requests} request(s) shorter than one block of {self.block_size} tokens "
            f"({self.short_tokens} tokens in all): vLLM caches no block of them, so they neither hit nor are hit, "
            "but each takes a block while it runs and can evict one (not in --eviction vllm|sglang replays)"
        ]

    def instance(self, what: str, key: str) -> Instance:
        shown = self.source.label
        if not self.builder.chains and self.short_requests:
            raise located(
                self.source.display,
                None,
                f"no request has a full block of {self.block_size} tokens; choose a smaller --block-size",
            )
        requests = len(self.builder.chains)
        return self.builder.instance(
            name=self.options.name or self.source.stem,
            fleet_size=1 if self.options.hosts is None else self.options.hosts,
            description=(
                f"Imported from the {what} {shown} ({requests} requests): chained block hashes of "
                f"{self.block_size}-token blocks, full blocks only, as vLLM's prefix cache."
            ),
            source=f"{key}:{shown}",
            block_size_tokens=self.block_size,
        )


def token_ids(data: dict[str, Any], shown: str, where: str) -> tuple[str, list[int]]:
    """The record's token-id field and its validated list."""
    present = [field for field in TOKEN_FIELDS if field in data]
    if not present:
        raise located(shown, where, "missing field 'prompt_token_ids' (or 'token_ids')")
    if len(present) > 1:
        raise located(shown, where, "both 'prompt_token_ids' and 'token_ids': give one")
    field = present[0]
    tokens = required_list(
        data, field, shown, where, "token ids", "a prompt has at least one token"
    )
    for position, token in enumerate(tokens):
        if not (is_int(token) and 0 <= token <= MAX_TOKEN_ID):
            raise located(
                shown,
                f"{where}.{field}[{position}]",
                f"token id {token!r} is not an integer from 0 to 2**63-1",
            )
    return field, tokens


def read_token_log(
    source: Input, options: ImportOptions = ImportOptions()
) -> tuple[Instance, list[str]]:
    """Read an opened token-id JSONL log as an instance (see the module docstring); also return notes."""
    trace = HashedTrace(source, options)
    shown = source.display
    for line, where, data in iter_objects(source.handle, shown):
        field, tokens = token_ids(data, shown, where)
        trace.add(line, field, tokens, data)
    return trace.instance("token-id log", "token-ids-jsonl"), trace.notes()


__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "HashedTrace",
    "TOKEN_FIELDS",
    "block_id",
    "chain_of_tokens",
    "read_token_log",
]
