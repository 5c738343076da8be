"""One-pass hit curves for engine-like eviction, weighted by tokens, over a window.

vLLM's order is a stack algorithm
---------------------------------

Under ``tail-first`` eviction (:mod:`pyverify.sim.simulate`), requests run one at a
time; a finished request's blocks rejoin the free queue tail first and the
front is evicted. So the queue is always ordered by the priority

    pi(b) = (last request that used b, -depth of b)     (smallest evicted first)

which depends only on the trace, not on the capacity. Two facts make the
cache of C blocks the C blocks of highest priority among those seen so far:

1. *The lowest-priority cached block is a leaf.* If b has a cached child c,
   every request that used c used b, so last(c) <= last(b), and on a tie c is
   deeper; either way pi(c) < pi(b).
2. *A request's own blocks rank above everything else* once it has run
   (they were used last), deeper ones lower. If its chain has more than C
   blocks, the C shallowest are the top C, which is what the free queue
   keeps (the running request's blocks are never evictable).

So contents at capacity C are included in contents at C + 1 (Mattson's
inclusion property), and the top-C set is prefix-closed, so "cached" and
"hit on the longest cached prefix" coincide. A reference to b by request r
therefore hits exactly when its *rank* -- the number of blocks of higher
priority just before r -- is below C. The blocks of higher priority are
those used by requests strictly between b's previous request p and r (the
set D), and b's ancestors (used by p, or later and then in D):

    rank(b, r) = |D  union  ancestors(b)|.

Computing ranks with the ordinary LRU stack-distance kernel: write every
request's chain *tail first* into one sequence U. The stack distance of b's
occurrence in U (from :func:`pyverify.sim.mrc.stack_distances`) counts the
distinct blocks after b's previous occurrence (b's ancestors, in p's reversed
chain), those of requests p+1 .. r-1 (D), and the blocks written before b in
r's reversed chain, b's k - 1 - j descendants in r (j = b's 0-based position,
k = r's chain length). No descendant of b can be in D or be an ancestor
(every request using a descendant uses b, so none lies strictly between p and
r), hence

    rank(b, r) = stack_distance_U(b in r) - (k - 1 - j).

The tests check the curve against per-capacity runs of ``tail-first`` at every
capacity, and against ``leaf-lru`` where every chain fits.

Leaf-first LRU as kvcache-simulator runs it (``leaf-lru``) is the same policy
until a chain has more blocks than the cache can hold beside its hit prefix;
then it keeps C - 1 blocks, not C, and later contents need not be nested
across capacities, so it is simulated per capacity. Chain-order ``lru`` has
its own one-pass curve (:mod:`pyverify.sim.mrc`); FIFO is not a stack
algorithm.

Token weights and the window
----------------------------

A curve in blocks is a histogram of distances. Weighting each reference by
its tokens (:mod:`pyverify.sim.tokens`) and keeping only the references of
measured requests (:mod:`pyverify.sim.window`) gives token hits at every
capacity from the same distances: ``hits(C) = sum of weights of measured
references with distance < C``. Hits are a prefix of each chain under both
one-pass policies, so this is exactly what per-capacity runs count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.counting import reference_hosts
from pyverify.sim.mrc import COLD, stack_distances, sums_from
from pyverify.sim.tokens import TokenWeights
from pyverify.sim.window import WHOLE_TRACE, Window


def chain_order_distances(
    chains: Sequence[Sequence[int]], routing: Sequence[int] | None = None, fleet_size: int = 1
) -> np.ndarray:
    """Per reference (flat chain order): chain-order LRU stack distance, as :func:`pyverify.sim.mrc.lru_curve` uses."""
    return chain_order_distances_flat(*flatten(chains), routing, fleet_size)


def chain_order_distances_flat(
    ids: np.ndarray, lengths: np.ndarray, routing=None, fleet_size: int = 1
) -> np.ndarray:
    """:func:`chain_order_distances` of a trace given as flat ids and chain lengths."""
    hosts = None if routing is None else reference_hosts(routing, lengths)
    return stack_distances(ids, hosts, fleet_size)


def tail_first_ranks(
    chains: Sequence[Sequence[int]], routing: Sequence[int] | None = None, fleet_size: int = 1
) -> np.ndarray:
    """Per reference (flat chain order): its rank under ``tail-first`` eviction (module docstring), or ``COLD``.

    The reference hits in a cache of C blocks exactly when ``0 <= rank < C``.
    """
    return tail_first_ranks_flat(*flatten(chains), routing, fleet_size)


def tail_first_ranks_flat(
    ids: np.ndarray, lengths: np.ndarray, routing=None, fleet_size: int = 1
) -> np.ndarray:
    """:func:`tail_first_ranks` of a trace given as flat ids and chain lengths."""
    n = ids.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    position = np.arange(n, dtype=np.int64) - starts  # j, 0-based within the chain
    deeper = np.repeat(lengths, lengths) - 1 - position  # k - 1 - j
    reversed_index = starts + deeper  # where reference t sits in U
    tail_first = np.empty(n, dtype=ids.dtype)
    tail_first[reversed_index] = ids
    hosts = (
        None if routing is None else reference_hosts(routing, lengths)
    )  # same host for a whole chain
    distances_u = stack_distances(tail_first, hosts, fleet_size)[reversed_index]
    return np.where(distances_u == COLD, COLD, distances_u - deeper)


@dataclass(frozen=True)
class LastBlockShortfalls:
    """Compact token weights, kept by request rather than by distance: every block is ``block_size`` tokens
    but a request's last, which lacks ``shortfalls[i]`` of them and lies at stack distance ``distances[i]``
    (reused last blocks only: a cold one is in no bin). Then the tokens hit at capacity c are
    ``block_size`` times the blocks hit, less the shortfalls of last blocks at a distance below c: one
    array per measured request, where a histogram of tokens would have as many bins as there are blocks
    (7.4M at 20M references, 30 ms to build each time)."""

    block_size: int
    distances: np.ndarray
    shortfalls: np.ndarray

    def histogram(self, block_hist: np.ndarray) -> np.ndarray:
        """Tokens at each distance, ``block_hist``'s bins."""
        token_hist = block_hist * self.block_size
        np.subtract.at(token_hist, self.distances, self.shortfalls)
        return token_hist

    def below(self, capacities: np.ndarray) -> np.ndarray:
        """For each capacity c, the shortfalls of the last blocks at a distance below c (int64)."""
        cuts, where = np.unique(capacities, return_inverse=True)
        # bin j holds the distances d with cuts[j-1] <= d < cuts[j]; below cuts[k] lie bins 0..k
        bins = np.searchsorted(cuts, self.distances, side="right")
        per_bin = np.bincount(
            bins, weights=self.shortfalls, minlength=cuts.size + 1
        )  # exact: integers far below 2**53
        return np.cumsum(per_bin[: cuts.size]).astype(np.int64)[where.reshape(capacities.shape)]


@dataclass(frozen=True)
class WeightedCurve:
    """Hits at every capacity, counted in blocks and in tokens, over measured references.

    ``block_hist[d]``: measured references at distance d; the tokens at each distance are either given
    as ``token_hist`` or kept by request as ``last_blocks`` (compact weights); ``blocks`` / ``tokens`` the
    measured totals (tokens include the uncached tails); ``tokens`` is ``None``, and so are both forms of
    the token counts, without token weights.
    """

    blocks: int
    block_hist: np.ndarray
    tokens: int | None
    token_hist: np.ndarray | None
    last_blocks: LastBlockShortfalls | None = None

    def _cumulative(self, hist: np.ndarray, capacities: np.ndarray) -> np.ndarray:
        """``hist[:c].sum()`` for each capacity c: all of it less what lies at distance c or more."""
        return int(hist.sum()) - sums_from(hist, capacities)

    def block_hits(self, capacities) -> np.ndarray:
        return self._cumulative(self.block_hist, np.asarray(capacities, dtype=np.int64))

    def token_hits(self, capacities) -> np.ndarray | None:
        capacities = np.asarray(capacities, dtype=np.int64)
        if self.last_blocks is not None:
            return self.last_blocks.block_size * self.block_hits(
                capacities
            ) - self.last_blocks.below(capacities)
        if self.token_hist is None:
            return None
        return self._cumulative(self.token_hist, capacities)

    def token_histogram(self) -> np.ndarray | None:
        """Tokens at each distance (``None`` without token weights)."""
        return (
            self.last_blocks.histogram(self.block_hist)
            if self.last_blocks is not None
            else self.token_hist
        )

    def points(self, capacities: Sequence[int]) -> list[dict]:
        capacities = np.asarray(capacities, dtype=np.int64)
        if np.any(capacities < 1):
            raise ValueError("capacity must be at least 1 block")
        block_hits = self.block_hits(capacities)
        token_hits = self.token_hits(capacities)
        out = []
        for i, capacity in enumerate(capacities):
            point = {
                "capacity_blocks": int(capacity),
                "block_hits": int(block_hits[i]),
                "block_hit_rate": float(block_hits[i] / self.blocks) if self.blocks else 0.0,
            }
            if token_hits is not None:
                point["token_hits"] = int(token_hits[i])
                point["token_hit_rate"] = float(token_hits[i] / self.tokens) if self.tokens else 0.0
            out.append(point)
        return out


def weighted_curve(
    distances: np.ndarray,
    chains: Sequence[Sequence[int]],
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> WeightedCurve:
    """Histogram ``distances`` (flat chain order, ``COLD`` for first references) in blocks and tokens over the window."""
    lengths = np.fromiter((len(chain) for chain in chains), dtype=np.int64, count=len(chains))
    return weighted_curve_flat(distances, lengths, weights, window)


def lru_weighted_curve(
    ids: np.ndarray,
    lengths: np.ndarray,
    routing=None,
    fleet_size: int = 1,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> WeightedCurve:
    """The chain-order LRU curve in blocks and tokens of a trace given as flat ids and chain lengths:
    :func:`weighted_curve_flat` of :func:`chain_order_distances_flat`.

    One pooled cache with compact weights (the common case) is binned in the
    compiled pass itself (:func:`pyverify.sim.kernels.stack_distance.measured_histograms`),
    with each measured request's last reference and its shortfall from a whole
    block: no distance is kept per reference, nor shifted and counted again
    (at 20M references 0.2 s and 320 MB less). Both ways give the same curve
    (``tests/test_tokens.py``).
    """
    from pyverify.sim.kernels import CURVE_BREAK_EVEN, use_kernels

    compact = weights is None or weights.given is None
    if routing is None and compact and use_kernels(ids.size, CURVE_BREAK_EVEN):
        return _binned_in_the_pass(ids, lengths, weights, window)
    return weighted_curve_flat(
        chain_order_distances_flat(ids, lengths, routing, fleet_size), lengths, weights, window
    )


def _binned_in_the_pass(
    ids: np.ndarray, lengths: np.ndarray, weights: TokenWeights | None, window: Window
) -> WeightedCurve:
    from pyverify.sim.kernels.stack_distance import measured_histograms_of

    first = window.first_measured(lengths.size)
    start = int(lengths[:first].sum())
    ends = shortfalls = np.zeros(0, dtype=np.int64)
    if weights is not None:
        last, shortfalls = _last_blocks(lengths, first, weights)
        ends = start + last
    dense, universe = dense_ids(np.asarray(ids))
    block_hist, at_ends = measured_histograms_of(dense, universe, start, ends)
    if weights is None:
        return WeightedCurve(int(ids.size) - start, block_hist, None, None)
    reused = at_ends >= 0  # a cold last block is in no bin
    last_blocks = LastBlockShortfalls(weights.block_size, at_ends[reused], shortfalls[reused])
    return WeightedCurve(
        int(ids.size) - start, block_hist, weights.tokens_from(first), None, last_blocks
    )


def _last_blocks(
    lengths: np.ndarray, first: int, weights: TokenWeights
) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, shortfalls)``: each measured request's last reference, counted from the first measured
    one, and the tokens its block lacks of a whole one (compact weights: every other block is whole)."""
    measured_lengths = lengths[first:]
    rows = np.flatnonzero(measured_lengths > 0)
    return (np.cumsum(measured_lengths) - 1)[rows], weights.block_size - weights.last_block[first:][
        rows
    ]


def weighted_curve_flat(
    distances: np.ndarray,
    lengths: np.ndarray,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> WeightedCurve:
    """:func:`weighted_curve` of a trace given by its chain lengths.

    Shifted by one (``COLD`` is -1), a first reference counts in bin 0 and distance d in bin d + 1, so one
    ``bincount`` makes the histogram without masking out the first references. With compact weights
    (every block ``block_size`` tokens but each request's last), the token histogram is the block one
    times ``block_size`` less each last block's shortfall: a second count over requests, not references.
    The histogram is built out here, not kept as :class:`LastBlockShortfalls` as the compiled pass keeps
    it: this is that pass's oracle in ``tests/test_tokens.py``, so the two share no way of counting tokens.
    """
    first = window.first_measured(lengths.size)
    start = int(lengths[:first].sum())
    shifted = np.asarray(distances)[start:] + 1
    counts = np.bincount(shifted)
    block_hist = counts[1:]
    token_hist = tokens = None
    if weights is not None:
        if weights.given is not None:
            token_hist = np.bincount(shifted, weights=weights.given[start:], minlength=counts.size)[
                1:
            ].astype(np.int64)
        else:
            last, shortfalls = _last_blocks(lengths, first, weights)
            shortfall = np.bincount(shifted[last], weights=shortfalls, minlength=counts.size)
            token_hist = (counts * weights.block_size - shortfall.astype(np.int64))[1:]
        tokens = weights.tokens_from(first)
    return WeightedCurve(int(shifted.size), block_hist, tokens, token_hist)


__all__ = [
    "LastBlockShortfalls",
    "WeightedCurve",
    "chain_order_distances",
    "chain_order_distances_flat",
    "lru_weighted_curve",
    "tail_first_ranks",
    "tail_first_ranks_flat",
    "weighted_curve",
    "weighted_curve_flat",
]
