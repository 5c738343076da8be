"""A prompt's full blocks: the part of a chain a serving engine hashes and caches.

A trace may name a partial last block (Mooncake's ``hash_ids`` do); the engines never hash it,
so their caches (:mod:`pyverify.cache.vllm`, :mod:`pyverify.cache.sglang`) see only
``tokens // block_size`` blocks of a chain. A prompt with more full blocks than its chain names
cannot be served: the engine would cache blocks the trace does not name.
"""

from __future__ import annotations

from typing import Sequence


class PromptBeyondChain(ValueError):
    """Request ``index``'s prompt holds more full blocks than its chain names (``reason`` says how
    many); the command names the request and its prompt length as its input file does
    (errors.RequestError)."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"requests[{index}]: {reason}")
        self.index, self.reason = index, reason


def full_blocks(index: int, chain: Sequence[int], tokens: int, block_size: int) -> Sequence[int]:
    """The first ``tokens // block_size`` blocks of request ``index``'s chain (the whole chain
    when it has no partial last block); :class:`PromptBeyondChain` when it names fewer."""
    full = tokens // block_size
    if full > len(chain):
        raise PromptBeyondChain(
            index,
            f"{tokens} tokens make {full} full blocks of {block_size}, but the chain names "
            f"{len(chain)}: the engine would cache blocks the trace does not name",
        )
    return chain if full == len(chain) else chain[:full]
