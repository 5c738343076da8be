"""Token weights: how many prompt tokens each block reference stands for.

Serving engines count prefix-cache hits in tokens (vLLM's
``prefix_cache_hits`` / ``prefix_cache_queries`` counters; kvcache-simulator's
``hitTokens / totalTokens``), so a hit on a short last block is worth less
than a hit on a full one. For request i with a chain of k blocks and a block
size of b tokens:

* when the input gives per-block token counts (``block_tokens``, a list as
  long as the chain, as kvcache-simulator reads it), those are the weights;
* else when it gives the prompt length T (``input_tokens``; Mooncake's
  ``input_length``), every block weighs b except the last, which holds the
  rest: ``T - b * (k - 1)``. T must satisfy ``b * (k - 1) < T``; tokens beyond
  ``b * k`` (a partial tail that was never hashed into a block, as vLLM
  caches only full blocks) belong to no block: they are counted in the
  request's tokens and always missed;
* else every block weighs b.

With no block size at all (an instance without ``block_size_tokens``) there
are no token weights and reports show block counts only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from pyverify.errors import RequestError, UserError


@dataclass(frozen=True)
class TokenWeights:
    """Token weights of every reference, held compactly: in most traces every block weighs ``block_size`` but
    each request's last (``last_block[i]``), so no array of one weight per reference is made unless some
    request gives its blocks' counts (``given``, then the weights themselves, flat in reference order as
    :func:`pyverify.cache.arrays.flatten`). At 20M references the flat array cost 0.25 s to fill and as much
    again to sum cumulatively, in a run that took 2.4 s.

    ``lengths[i]`` is request i's chain length; ``uncached_tail[i]`` its tokens
    beyond its last block (always misses); ``source`` says where the numbers came from.
    """

    lengths: np.ndarray
    block_size: int
    last_block: np.ndarray
    uncached_tail: np.ndarray
    source: str
    given: np.ndarray | None = None

    @cached_property
    def block_tokens(self) -> np.ndarray:
        """The weight of every reference, flat (made on first use)."""
        if self.given is not None:
            return self.given
        weights = np.full(int(self.lengths.sum()), self.block_size, dtype=np.int64)
        rows = np.flatnonzero(self.lengths > 0)
        weights[np.cumsum(self.lengths)[rows] - 1] = self.last_block[rows]
        return weights

    def hit_tokens(self, offsets: np.ndarray, hit_blocks: np.ndarray) -> np.ndarray:
        """Tokens in each request's hit prefix: the sum of its first ``hit_blocks[i]`` block weights."""
        if self.given is not None:
            running = np.zeros(
                self.given.size + 1, dtype=np.int64
            )  # filled in place: one array, not two
            np.cumsum(self.given, out=running[1:])
            starts = offsets[:-1]
            return running[starts + hit_blocks] - running[starts]
        # Every hit block weighs block_size, but a hit on the last block weighs last_block.
        whole = (hit_blocks == self.lengths) & (self.lengths > 0)
        return hit_blocks * self.block_size - np.where(whole, self.block_size - self.last_block, 0)

    def tokens_from(self, first: int) -> int:
        """Tokens of requests ``first``, ``first + 1``, ...: their blocks' weights and their uncached tails."""
        tail = int(self.uncached_tail[first:].sum())
        if self.given is not None:
            return int(self.given[int(self.lengths[:first].sum()) :].sum()) + tail
        lengths = self.lengths[first:]
        short = np.where(lengths > 0, self.block_size - self.last_block[first:], 0)
        return int(lengths.sum()) * self.block_size - int(short.sum()) + tail

    @property
    def total(self) -> int:
        return self.tokens_from(0)


def token_weights(
    chains: Sequence[Sequence[int]],
    block_size: int | None,
    extra: Sequence[dict[str, Any]] = (),
    where: str = "input",
) -> TokenWeights | None:
    """The weights of every reference (rules in the module docstring), or ``None`` without a block size.

    ``where`` names the input in error messages, which read
    ``WHERE: requests[i].FIELD: REASON``.
    """
    if block_size is None:
        return None
    lengths = np.fromiter(map(len, chains), dtype=np.int64, count=len(chains))
    fields = list(extra[: len(chains)]) + [{}] * (len(chains) - len(extra))
    input_tokens = np.array(
        [
            item.get("input_tokens") if item.get("input_tokens") is not None else NO_LENGTH
            for item in fields
        ],
        dtype=np.int64,
    )
    given = {
        index: item["block_tokens"]
        for index, item in enumerate(fields)
        if item.get("block_tokens") is not None
    }
    return weights_of_lengths(lengths, block_size, input_tokens, where, given)


#: ``input_tokens`` entry of a request that gives no prompt length.
NO_LENGTH = -1


def weights_of_lengths(
    lengths: np.ndarray,
    block_size: int | None,
    input_tokens: np.ndarray | None = None,
    where: str = "input",
    given: dict[int, Any] | None = None,
) -> TokenWeights | None:
    """:func:`token_weights` from arrays: each chain's length, each request's prompt
    length (:data:`NO_LENGTH` where none is given; ``None``: none anywhere), and
    the per-block counts of the requests that give them (``given``, by request).
    Traces of any size take this path (:mod:`pyverify.sim.array_run`): it
    makes no Python object per block.
    """
    if block_size is None:
        return None
    if block_size < 1:
        raise UserError(f"{where}: block_size_tokens: must be at least 1, got {block_size}")
    given = given or {}
    n = lengths.size
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = (
        np.full(int(offsets[-1]), block_size, dtype=np.int64) if given else None
    )  # only when some request gives its own
    last_block = np.full(n, block_size, dtype=np.int64)
    tails = np.zeros(n, dtype=np.int64)
    totals = (
        np.full(n, NO_LENGTH, dtype=np.int64)
        if input_tokens is None
        else np.asarray(input_tokens, dtype=np.int64)
    )
    by_length = totals != NO_LENGTH
    if given:
        by_length[list(given)] = False
    # A prompt length must leave the last block at least one token.
    short = np.flatnonzero(by_length & (totals <= block_size * (lengths - 1)))
    first_short = int(short[0]) if short.size else n
    for index in sorted(
        given
    ):  # rare (instances written by hand): checked one by one, in request order
        if index > first_short:
            break
        k, counts = int(lengths[index]), given[index]
        if not isinstance(counts, (list, tuple)) or len(counts) != k:
            raise RequestError(
                where, index, "block_tokens", f"expected a list of {k} token counts, one per block"
            )
        for position, value in enumerate(counts):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise RequestError(
                    where,
                    index,
                    f"block_tokens[{position}]",
                    f"expected a positive integer, got {value!r}",
                )
        flat[offsets[index] : offsets[index + 1]] = counts
    if short.size:
        raise short_prompt_error(
            where, first_short, int(lengths[first_short]), int(totals[first_short]), block_size
        )
    rows = np.flatnonzero(by_length & (lengths > 0))
    last_block[rows] = np.minimum(block_size, totals[rows] - block_size * (lengths[rows] - 1))
    tails[rows] = np.maximum(0, totals[rows] - block_size * lengths[rows])
    if flat is not None:
        flat[offsets[rows + 1] - 1] = last_block[rows]
    sources = set()
    if given:
        sources.add("block_tokens")
    if by_length.any():
        sources.add("input_tokens")
    if n - len(given) - int(np.count_nonzero(by_length)) > 0:
        sources.add("block size")
    partial = bool(np.any(last_block[rows] < block_size))
    uncached = bool(np.any(tails[rows] > 0))
    source = describe_weights(sources, block_size, partial, uncached)
    return TokenWeights(lengths, block_size, last_block, tails, source, flat)


def short_prompt_error(
    where: str, index: int, blocks: int, total: int, block_size: int
) -> UserError:
    """The refusal of a prompt length that leaves its last block no token (every reader and engine says it so)."""
    return RequestError(
        where,
        index,
        "input_tokens",
        f"{total} tokens cannot fill {blocks} blocks of {block_size} tokens "
        f"(needs more than {block_size * (blocks - 1)})",
    )


def describe_weights(sources: set[str], block_size: int, partial: bool, uncached: bool) -> str:
    """Where the token weights came from (``sources``: ``block_tokens``, ``input_tokens``, ``block size``) and, from
    prompt lengths, what they made of the blocks: a Mooncake trace's last block holds the rest of the prompt (often
    partial); a token-id log hashes full blocks only and leaves the tail uncached."""
    shape = ", ".join(
        [
            "last block partial" if partial else "full blocks",
            *(["tokens past the last block never cached"] if uncached else []),
        ]
    )
    return {
        frozenset({"input_tokens"}): f"input_tokens (blocks of {block_size}, {shape})",
        frozenset({"block_tokens"}): "block_tokens given per block",
        frozenset({"block size"}): f"{block_size} tokens per block (no prompt lengths given)",
    }.get(frozenset(sources), f"mixed: {', '.join(sorted(sources))} (blocks of {block_size})")


def instance_token_weights(instance, where: str | None = None) -> TokenWeights | None:
    """:func:`token_weights` of an :class:`~pyverify.inputs.model.Instance`."""
    return token_weights(
        instance.chains, instance.block_size_tokens, instance.extra, where or instance.name
    )


__all__ = [
    "NO_LENGTH",
    "TokenWeights",
    "describe_weights",
    "instance_token_weights",
    "short_prompt_error",
    "token_weights",
    "weights_of_lengths",
]
