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
from typing import Any, Sequence

import numpy as np

from pyverify.errors import UserError


@dataclass(frozen=True)
class TokenWeights:
    """Per-reference token weights, flat in reference order (as :func:`pyverify.sim.counting.flatten`).

    ``block_tokens[t]`` is the weight of reference t; ``uncached_tail[i]`` the
    tokens of request i beyond its last block (always misses); ``source``
    says where the numbers came from.
    """

    block_tokens: np.ndarray
    uncached_tail: np.ndarray
    source: str

    @property
    def total(self) -> int:
        return int(self.block_tokens.sum() + self.uncached_tail.sum())


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
    input_tokens = np.array([item.get("input_tokens") if item.get("input_tokens") is not None else NO_LENGTH
                             for item in fields], dtype=np.int64)
    given = {index: item["block_tokens"] for index, item in enumerate(fields) if item.get("block_tokens") is not None}
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
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    weights = np.full(int(offsets[-1]), block_size, dtype=np.int64)
    tails = np.zeros(n, dtype=np.int64)
    totals = np.full(n, NO_LENGTH, dtype=np.int64) if input_tokens is None else np.asarray(input_tokens, dtype=np.int64)
    by_length = totals != NO_LENGTH
    if given:
        by_length[list(given)] = False
    # A prompt length must leave the last block at least one token.
    short = np.flatnonzero(by_length & (totals <= block_size * (lengths - 1)))
    first_short = int(short[0]) if short.size else n
    for index in sorted(given):  # rare (instances written by hand): checked one by one, in request order
        if index > first_short:
            break
        k, counts = int(lengths[index]), given[index]
        if not isinstance(counts, (list, tuple)) or len(counts) != k:
            raise UserError(f"{where}: requests[{index}].block_tokens: expected a list of {k} token counts, one per block")
        for position, value in enumerate(counts):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"{where}: requests[{index}].block_tokens[{position}]: expected a positive integer, got {value!r}")
        weights[offsets[index]:offsets[index + 1]] = counts
    if short.size:
        raise short_prompt_error(where, first_short, int(lengths[first_short]), int(totals[first_short]), block_size)
    rows = np.flatnonzero(by_length & (lengths > 0))
    last = offsets[rows + 1] - 1
    weights[last] = np.minimum(block_size, totals[rows] - block_size * (lengths[rows] - 1))
    tails[rows] = np.maximum(0, totals[rows] - block_size * lengths[rows])
    sources = set()
    if given:
        sources.add("block_tokens")
    if by_length.any():
        sources.add("input_tokens")
    if n - len(given) - int(np.count_nonzero(by_length)) > 0:
        sources.add("block size")
    partial = bool(np.any(weights[last] < block_size))
    uncached = bool(np.any(tails[rows] > 0))
    source = describe_weights(sources, block_size, partial, uncached)
    return TokenWeights(weights, tails, source)


def short_prompt_error(where: str, index: int, blocks: int, total: int, block_size: int) -> UserError:
    """The refusal of a prompt length that leaves its last block no token (every reader and engine says it so)."""
    return UserError(f"{where}: requests[{index}].input_tokens: {total} tokens cannot fill {blocks} blocks of "
                     f"{block_size} tokens (needs more than {block_size * (blocks - 1)})")


def describe_weights(sources: set[str], block_size: int, partial: bool, uncached: bool) -> str:
    """Where the token weights came from (``sources``: ``block_tokens``, ``input_tokens``, ``block size``) and, from
    prompt lengths, what they made of the blocks: a Mooncake trace's last block holds the rest of the prompt (often
    partial); a token-id log hashes full blocks only and leaves the tail uncached."""
    shape = ", ".join(["last block partial" if partial else "full blocks",
                       *(["tokens past the last block never cached"] if uncached else [])])
    return {
        frozenset({"input_tokens"}): f"input_tokens (blocks of {block_size}, {shape})",
        frozenset({"block_tokens"}): "block_tokens given per block",
        frozenset({"block size"}): f"{block_size} tokens per block (no prompt lengths given)",
    }.get(frozenset(sources), f"mixed: {', '.join(sorted(sources))} (blocks of {block_size})")


def instance_token_weights(instance, where: str | None = None) -> TokenWeights | None:
    """:func:`token_weights` of an :class:`~pyverify.inputs.model.Instance`."""
    return token_weights(instance.chains, instance.block_size_tokens, instance.extra, where or instance.name)


__all__ = ["NO_LENGTH", "TokenWeights", "describe_weights", "instance_token_weights", "short_prompt_error", "token_weights",
           "weights_of_lengths"]
