"""How many prompt tokens each block of a request stands for, in every input format.

Formats differ in what a chain's last block is, and ``input_tokens`` (the
prompt's length, recorded by every importer when known) tells them apart with
one rule. For a request of ``k`` blocks of ``B`` tokens and ``n`` prompt tokens:

* block ``i`` (0-based) stands for ``min(B, max(0, n - i*B))`` tokens. In a
  Mooncake trace the last id names a partial block, so the last block weighs
  ``n - B*(k-1)`` (kvcache-simulator's rule too);
* the **uncached tail** is ``max(0, n - k*B)`` tokens. In a token-id or chat
  import (:mod:`pyverify.inputs.tokens_import`) chains hold full blocks only,
  as vLLM caches them, so the prompt's last ``n mod B`` tokens have no block:
  they are recomputed every time, a miss in token-weighted accounting;
* with ``n`` unknown (an instance without ``input_tokens``), every block
  weighs ``B`` and there is no tail.
"""

from __future__ import annotations


def block_token_counts(
    blocks: int, block_size: int, input_tokens: int | None
) -> tuple[list[int], int]:
    """``(tokens of each block, uncached tail tokens)`` for one request (see the module docstring)."""
    if input_tokens is None:
        return [block_size] * blocks, 0
    weights = [min(block_size, max(0, input_tokens - i * block_size)) for i in range(blocks)]
    return weights, max(0, input_tokens - blocks * block_size)


__all__ = ["block_token_counts"]
