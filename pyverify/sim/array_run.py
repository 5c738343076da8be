"""One demand-cache run on a trace held as arrays: capacitated runs on traces of any size.

:func:`pyverify.sim.simulate.simulate` takes Python chains: a trace of 100M
block references held as tuples of Python ints takes about 10 GB before the
run starts. A trace file read as a :class:`~pyverify.inputs.columnar.ColumnarTrace`
(int64 ids and chain offsets, optional host and prompt-length columns) takes
16 bytes per reference. This module replays the same compiled kernels that
``simulate()`` uses above its size threshold (:mod:`pyverify.sim.kernels`)
on those arrays directly, and counts hits in blocks and tokens with the same
rules (:func:`pyverify.sim.tokens.weights_of_lengths`,
:func:`pyverify.sim.accounting.tally_offsets`). ``tests/test_array_run.py``
checks that both paths give the same hits and tallies.

Uncapacitated runs use the LRU kernel with room for every distinct block: a
cache that never has to evict holds every block it has fetched, which is the
uncapacitated cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pyverify.sim.names import EVICTIONS, FIFO, LEAF_LRU, LRU, TAIL_FIRST
from pyverify.sim.tokens import NO_LENGTH, TokenWeights, weights_of_lengths

if TYPE_CHECKING:
    from pyverify.inputs.columnar import ColumnarTrace


class ArrayReplay:
    """A trace prepared once for the replay kernels (dense ids, requests grouped by cache),
    then replayed at any number of capacities and policies (a budget sweep does 15 or more).

    Needs numba (:func:`pyverify.sim.kernels.available`).
    """

    def __init__(self, trace: "ColumnarTrace", cache_of: np.ndarray) -> None:
        from pyverify.cache.lru_kernel import requests_by_cache

        self.name = trace.name
        self.ids, self.universe, self.starts, self.order, self.bounds = requests_by_cache(
            trace.ids, trace.offsets, cache_of
        )

    def hits(self, capacity: int | None, eviction: str) -> np.ndarray:
        """Hits per request (int64), as ``simulate(...).hit_blocks``."""
        from pyverify.cache.lru_kernel import link_array, replay
        from pyverify.cache.tree_kernel import tree_replay

        if eviction not in EVICTIONS:
            raise ValueError(f"unknown eviction policy {eviction!r}; expected one of {EVICTIONS}")
        arrays = (self.ids, self.starts, self.order, self.bounds)
        if capacity is None:
            capacity, eviction = max(self.universe, 1), LRU  # never full: nothing is evicted
        if eviction in (LRU, FIFO):
            return replay(*arrays, link_array(self.universe), capacity, eviction == LRU)
        hits, prefix_closed = tree_replay(*arrays, self.universe, capacity, eviction == LEAF_LRU)
        if not prefix_closed:  # a ColumnarTrace is validated prefix-closed when it is read
            raise ValueError(
                f"{self.name}: not prefix-closed, which {LEAF_LRU} and {TAIL_FIRST} replay on arrays requires"
            )
        return hits


def array_hits(
    trace: "ColumnarTrace", cache_of: np.ndarray, capacity: int | None, eviction: str
) -> np.ndarray:
    """Hits per request (int64), as ``simulate(...).hit_blocks``, for caches ``cache_of[i]``: one replay."""
    return ArrayReplay(trace, cache_of).hits(capacity, eviction)


def trace_token_weights(trace: "ColumnarTrace", where: str) -> TokenWeights | None:
    """:func:`pyverify.sim.tokens.token_weights` of a columnar trace (prompt lengths from ``input_tokens``,
    per-block counts from ``block_tokens`` where a request gives them)."""
    lengths = np.diff(trace.offsets)
    totals = None
    if trace.input_tokens is not None:
        given = ~np.isnan(trace.input_tokens)
        totals = np.where(given, trace.input_tokens, NO_LENGTH).astype(np.int64)
    per_block = None
    if trace.block_tokens is not None:  # -1 where a request gives none
        chained = np.flatnonzero(lengths > 0)
        giving = chained[trace.block_tokens[trace.offsets[chained]] >= 0]
        per_block = {
            int(index): trace.block_tokens[trace.offsets[index] : trace.offsets[index + 1]].tolist()
            for index in giving
        }
    return weights_of_lengths(lengths, trace.block_size_tokens, totals, where, per_block)


__all__ = ["ArrayReplay", "array_hits", "trace_token_weights"]
