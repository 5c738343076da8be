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


def last_block_tokens(input_tokens: int, block_size: int, blocks: int) -> int:
    """Tokens in the last of ``blocks`` blocks of a prompt of ``input_tokens`` tokens."""
    return min(block_size, input_tokens - block_size * (blocks - 1))


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
    if block_size < 1:
        raise UserError(f"{where}: block_size_tokens: must be at least 1, got {block_size}")
    weights: list[int] = []
    tails = np.zeros(len(chains), dtype=np.int64)
    sources = set()
    for index, chain in enumerate(chains):
        k = len(chain)
        fields = extra[index] if index < len(extra) else {}
        given = fields.get("block_tokens")
        total = fields.get("input_tokens")
        if given is not None:
            if not isinstance(given, (list, tuple)) or len(given) != k:
                raise UserError(f"{where}: requests[{index}].block_tokens: expected a list of {k} token counts, one per block")
            for position, value in enumerate(given):
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise UserError(f"{where}: requests[{index}].block_tokens[{position}]: expected a positive integer, got {value!r}")
            weights.extend(given)
            sources.add("block_tokens")
        elif total is not None:
            if total <= block_size * (k - 1):
                raise UserError(f"{where}: requests[{index}].input_tokens: {total} tokens cannot fill {k} blocks of "
                                f"{block_size} tokens (needs more than {block_size * (k - 1)})")
            weights.extend([block_size] * (k - 1))
            weights.append(last_block_tokens(total, block_size, k))
            tails[index] = max(0, total - block_size * k)
            sources.add("input_tokens")
        else:
            weights.extend([block_size] * k)
            sources.add("block size")
    source = {
        frozenset({"input_tokens"}): f"input_tokens (blocks of {block_size}, last block partial)",
        frozenset({"block_tokens"}): "block_tokens given per block",
        frozenset({"block size"}): f"{block_size} tokens per block (no prompt lengths given)",
    }.get(frozenset(sources), f"mixed: {', '.join(sorted(sources))} (blocks of {block_size})")
    return TokenWeights(np.asarray(weights, dtype=np.int64), tails, source)


def instance_token_weights(instance, where: str | None = None) -> TokenWeights | None:
    """:func:`token_weights` of an :class:`~pyverify.inputs.model.Instance`."""
    return token_weights(instance.chains, instance.block_size_tokens, instance.extra, where or instance.name)


__all__ = ["TokenWeights", "instance_token_weights", "last_block_tokens", "token_weights"]
