"""Hit rates in blocks and in tokens, over a measurement window, from a run's witness.

A run (:class:`pyverify.sim.simulate.Run`) records per request how many
leading blocks hit. This module turns that into the two figures engines and
papers report, over the counted requests of a :class:`~pyverify.sim.window.Window`:

* **block hit rate** = hit blocks / block references;
* **token hit rate** = tokens of the hit blocks / prompt tokens
  (weights from :mod:`pyverify.sim.tokens`; ``None`` when the input gives no
  block size).

Both use the same hits; only the weights differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pyverify.sim.tokens import TokenWeights
from pyverify.sim.window import WHOLE_TRACE, Window


@dataclass(frozen=True)
class Tally:
    """Counts over the measured requests (``first_request`` .. end)."""

    first_request: int
    requests: int
    block_references: int
    block_hits: int
    tokens: int | None
    token_hits: int | None

    @property
    def block_hit_rate(self) -> float:
        return self.block_hits / self.block_references if self.block_references else 0.0

    @property
    def token_hit_rate(self) -> float | None:
        if self.tokens is None:
            return None
        return self.token_hits / self.tokens if self.tokens else 0.0

    def to_json(self) -> dict:
        return {
            "measured_from_request": self.first_request,
            "measured_requests": self.requests,
            "block_references": self.block_references,
            "block_hits": self.block_hits,
            "block_hit_rate": self.block_hit_rate,
            "tokens": self.tokens,
            "token_hits": self.token_hits,
            "token_hit_rate": self.token_hit_rate,
        }


def chain_offsets(chains: Sequence[Sequence[int]]) -> np.ndarray:
    """``offsets[i]``: index of request i's first reference in the flat order (length n + 1)."""
    lengths = np.fromiter((len(chain) for chain in chains), dtype=np.int64, count=len(chains))
    return np.concatenate(([0], np.cumsum(lengths)))


def hit_tokens_per_request(
    offsets: np.ndarray, hit_blocks: np.ndarray, weights: TokenWeights
) -> np.ndarray:
    """Tokens in each request's hit prefix: the sum of its first ``hit_blocks[i]`` block weights."""
    return weights.hit_tokens(offsets, np.asarray(hit_blocks, dtype=np.int64))


def tally(
    chains: Sequence[Sequence[int]],
    hit_blocks: Sequence[int],
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> Tally:
    """Block and token hits of a run over the window's requests."""
    return tally_offsets(chain_offsets(chains), hit_blocks, weights, window)


def tally_offsets(
    offsets: np.ndarray,
    hit_blocks: Sequence[int] | np.ndarray,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> Tally:
    """:func:`tally` for a trace given by its chain offsets (see :func:`chain_offsets`)."""
    n = offsets.size - 1
    hits = np.asarray(hit_blocks, dtype=np.int64)
    if hits.shape != (n,):
        raise ValueError("one hit count per request is needed")
    first = window.first_measured(n)
    block_refs = int(offsets[n] - offsets[first])
    block_hits = int(hits[first:].sum())
    tokens = token_hits = None
    if weights is not None:
        per_request = hit_tokens_per_request(offsets, hits, weights)
        token_hits = int(per_request[first:].sum())
        tokens = weights.tokens_from(first)
    return Tally(first, n - first, block_refs, block_hits, tokens, token_hits)


__all__ = ["Tally", "chain_offsets", "hit_tokens_per_request", "tally", "tally_offsets"]
