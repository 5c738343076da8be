"""Exact LRU miss-ratio curves for every capacity in one pass (stack distances).

Mattson et al. (1970): LRU is a *stack algorithm*, so a reference hits in an
LRU cache of C blocks exactly when its **stack distance** -- the number of
distinct blocks referenced since the previous reference to the same block --
is less than C. One histogram of stack distances therefore gives the miss
count at every capacity at once: ``misses(C) = cold + #{d >= C}``, where the
cold (first) references are the distinct blocks.

Why this is exact for pyverify's caches, which hit only on the longest cached
*prefix* of a chain, and not only for a flat block-by-block LRU
-----------------------------------------------------------------------------

:mod:`pyverify.sim.simulate` (LRU) touches every block of a request's chain in
chain order: the hit prefix is moved to most-recent, then each missing block
is fetched (evicting the least recent block when full). Replaying the same
blocks one by one through a *flat* LRU cache (hit iff present) does the same
moves. The two can differ only if, in the flat replay, some block hits after
an earlier block of the same chain missed. On a prefix-closed trace that
never happens:

*Claim.* Let block b follow its parent p in a chain. At this reference,
d(p) <= d(b), where d is measured in the flat sequence (p is referenced
immediately before b).

*Proof.* Every earlier reference to b was immediately preceded by a reference
to p (prefix closure: b has one parent). Let t_b be b's previous reference;
then p was referenced at t_b - 1 or later. If p's previous reference is at
t_b - 1, the blocks seen since then are b plus those seen since t_b, and
those seen since t_b (up to p's current reference) plus p itself are what b
has seen; the two counts are equal. If p was referenced after t_b, p's
window is inside b's and omits b, so d(p) < d(b). If b is new, d(b) is
infinite. []

Hence along a chain the distances never decrease, flat-LRU hits form a prefix
of the chain, and a cache of C blocks -- pooled, or per host -- misses on
exactly the same references in both models, at every C >= 1 (even C smaller
than a chain). The tests check this against :func:`pyverify.sim.simulate.simulate`
at many capacities and against libCacheSim's LRU on the flat sequence.

For per-host caches under a *static* routing, each host's requests form a
prefix-closed sub-trace read only by that host, so the same argument applies
host by host: with every host given C blocks, the fleet's misses are
``cold + #{d >= C}`` over the distances measured within each host's own
sub-sequence. (Online routing such as prefix-affinity depends on C itself,
so it gets no one-pass curve; it is simulated per capacity.)

Both facts are also kernel-checked Lean theorems for one cache
(``lean/PrefixPool/LruPrefix.lean``): ``lru_misses_eq_far`` (misses are the
cold references plus those at distance >= C) and ``prefix_lru_eq_flat`` (on
prefix-closed chains the longest-prefix LRU misses what flat LRU misses),
and per host ``per_host_lru_eq_far`` (``LruCurve.lean``: cold (host, block)
pairs plus each host's references at distance >= C);
tests/test_lean_mirror.py checks this module against their Python mirrors.

FIFO is not a stack algorithm, and on prefix-closed traces longest-prefix
FIFO differs from flat FIFO, so no curve is offered for FIFO.

Computing the distances
-----------------------

:func:`lru_curve` bins the distances in one compiled pass,
:func:`pyverify.sim.kernels.stack_distance.distance_histogram` (Olken's
Fenwick-tree method over words of dead-mark bits, O(n log n), 0.19 bytes per reference of working memory),
whenever numba is available and the trace is large enough to repay numba's
start-up (:func:`pyverify.sim.kernels.use_kernels`). Otherwise, and as independent
references for the tests, two implementations here give every distance:

Vectorised with numpy, O(n log n):

With ``prev[t]`` the previous reference to the block at t, ``next[i]`` the
next one (``n`` if none) and ``E(t)`` the number of references at or before
t that are re-references, the distinct blocks strictly between p = prev[t]
and t are those i in (p, t) with next[i] > t, which counts out as::

    d(t) = t - E(t) - p + S(p),   S(p) = #{i < p : next[i] < next[p]}

S ("smaller to the left") is computed bit by bit, most significant first, by
stable partitions (a wavelet-matrix construction): log2(n) vectorised passes.
:func:`stack_distances_fenwick` is the textbook one-reference-at-a-time
Fenwick-tree method in plain Python, kept as an independent reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.counting import reference_hosts
from pyverify.sim.kernels import CURVE_BREAK_EVEN, use_kernels

#: Stack distance recorded for a first (cold) reference.
COLD = -1


def previous_reference(ids: np.ndarray) -> np.ndarray:
    """``prev[t]``: index of the previous reference to ``ids[t]``, or -1."""
    n = ids.size
    index_dtype = np.int32 if n < 2**31 - 1 else np.int64
    order = np.argsort(ids, kind="stable").astype(index_dtype, copy=False)
    prev = np.full(n, -1, dtype=index_dtype)
    if n > 1:
        same = ids[order[1:]] == ids[order[:-1]]
        prev[order[1:][same]] = order[:-1][same]
    return prev


def _smaller_to_left(values: np.ndarray, bits: int) -> np.ndarray:
    """For each i, ``#{j < i : values[j] < values[i]}`` (values in [0, 2**bits))."""
    n = values.size
    counts = np.zeros(n, dtype=np.int64)
    order = np.arange(n, dtype=values.dtype)  # positions, grouped by the bits seen so far
    current = values.copy()
    positions = np.arange(n, dtype=np.int64)
    for k in range(bits - 1, -1, -1):
        high = current >> (k + 1)
        bit = ((current >> k) & 1).astype(bool)
        start = np.empty(n, dtype=bool)
        start[0] = True
        np.not_equal(high[1:], high[:-1], out=start[1:])
        group_start = np.maximum.accumulate(np.where(start, positions, 0))
        zeros_before = np.cumsum(~bit, dtype=np.int64)
        zeros_before -= ~bit  # exclusive count
        zeros_before -= zeros_before[group_start]
        counts[order[bit]] += zeros_before[bit]
        keep = ~bit
        order = np.concatenate((order[keep], order[bit]))
        current = np.concatenate((current[keep], current[bit]))
    return counts


def stack_distances(
    ids: np.ndarray, hosts: np.ndarray | None = None, fleet_size: int = 1
) -> np.ndarray:
    """LRU stack distance of every reference (``COLD`` for first references), in one pooled cache or, with
    ``hosts`` (each reference's host), in its own host's cache.

    ``ids`` is the flat reference sequence. Distance d means: d distinct other
    blocks were referenced since this block's previous reference (by the same
    host), so the reference hits in an LRU cache of C blocks exactly when d < C.
    Compiled (:func:`pyverify.sim.kernels.stack_distance.distances_of`) where
    the kernels pay off, else :func:`stack_distances_numpy` (per host: on the
    pairs (block, host) in host order); the tests hold the two equal.
    """
    ids = np.asarray(ids)
    if use_kernels(ids.size, CURVE_BREAK_EVEN):
        from pyverify.sim.kernels.stack_distance import distances_of

        dense, universe = dense_ids(ids)
        return distances_of(dense, universe, COLD, hosts, fleet_size)
    if hosts is None:
        return stack_distances_numpy(ids)
    ids, _ = dense_ids(ids)
    order = np.argsort(hosts, kind="stable")  # each host's references, in trace order
    keys = ids[order].astype(np.int64) * fleet_size + hosts[order]
    distances = np.empty(ids.size, dtype=np.int64)
    distances[order] = stack_distances_numpy(keys)
    return distances


def stack_distances_numpy(ids: np.ndarray) -> np.ndarray:
    """:func:`stack_distances`, vectorised in numpy (no compiler): an offline count of smaller values to the left."""
    ids = np.asarray(ids)
    n = ids.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    ids, _ = dense_ids(ids)
    prev = previous_reference(ids)
    has_prev = prev >= 0
    next_ = np.full(n, n, dtype=prev.dtype)
    next_[prev[has_prev]] = np.nonzero(has_prev)[0].astype(prev.dtype)
    smaller = _smaller_to_left(next_, int(n).bit_length())
    reuses_so_far = np.cumsum(has_prev, dtype=np.int64)
    t = np.nonzero(has_prev)[0]
    p = prev[has_prev].astype(np.int64)
    distances = np.full(n, COLD, dtype=np.int64)
    distances[t] = t - reuses_so_far[t] - p + smaller[p]
    return distances


def stack_distances_fenwick(ids: Sequence[int]) -> list[int]:
    """The same distances, one reference at a time with a Fenwick tree (plain Python).

    A 1 marks the latest reference of every block; the distance of a
    re-reference is the number of marks strictly between its previous
    reference and now.
    """
    n = len(ids)
    tree = [0] * (n + 1)

    def add(i: int, delta: int) -> None:
        i += 1
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(i: int) -> int:  # sum of marks at positions < i
        total = 0
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    last: dict[int, int] = {}
    out = []
    for t, block in enumerate(ids):
        p = last.get(block)
        if p is None:
            out.append(COLD)
        else:
            out.append(prefix(t) - prefix(p + 1))
            add(p, -1)
        add(t, 1)
        last[block] = t
    return out


@dataclass(frozen=True)
class MissRatioCurve:
    """Exact LRU misses at every capacity, from a histogram of stack distances.

    ``histogram[d]`` counts re-references at distance d; ``cold`` counts first
    references (= distinct blocks, or distinct (host, block) pairs per host).
    ``caches`` is 1 (pooled) or the fleet size (per-host, each cache C blocks).
    """

    references: int
    cold: int
    histogram: np.ndarray
    caches: int = 1

    @property
    def max_useful_capacity(self) -> int:
        """The smallest capacity per cache at which every re-reference hits."""
        return int(self.histogram.size)

    @property
    def ceiling_hit_rate(self) -> float:
        """Uncapacitated hit rate: 1 - cold / references (no capacity does better)."""
        return 1 - self.cold / self.references if self.references else 0.0

    def misses(self, capacity: int | np.ndarray) -> int | np.ndarray:
        """Misses with ``capacity`` blocks per cache (scalar or array, each >= 1)."""
        capacity = np.asarray(capacity, dtype=np.int64)
        if np.any(capacity < 1):
            raise ValueError("capacity must be at least 1 block")
        result = self.cold + sums_from(
            self.histogram, capacity
        )  # the re-references at distance capacity or more
        return int(result) if result.ndim == 0 else result

    def hit_rate(self, capacity: int | np.ndarray) -> float | np.ndarray:
        return 1 - self.misses(capacity) / self.references

    def points(self, capacities: Sequence[int]) -> list[dict]:
        return [
            {
                "capacity_blocks": int(c),
                "misses": int(m),
                "hit_rate": float(1 - m / self.references),
            }
            for c, m in zip(capacities, self.misses(np.asarray(capacities)))
        ]


def sums_from(histogram: np.ndarray, starts: int | np.ndarray) -> np.ndarray:
    """``histogram[s:].sum()`` for each ``s`` in ``starts`` (``s >= 0``; 0 past the end), in the shape of ``starts``.

    One pass of ``np.add.reduceat`` over the pieces between the distinct starts, then a cumulative sum over
    those few pieces: a curve read at a few capacities makes no array of the histogram's length (at 20M
    references the histogram has 7.4M bins, and each cumulative copy of it cost 40-120 ms).
    """
    starts = np.asarray(starts, dtype=np.int64)
    if np.any(starts < 0):
        raise ValueError("a sum starts at bin 0 or later")
    starts = np.minimum(starts, histogram.size)
    cuts, where = np.unique(starts, return_inverse=True)
    inside = cuts[cuts < histogram.size]  # the rest start past the end: an empty sum
    pieces = (
        np.add.reduceat(histogram, inside) if inside.size else np.zeros(0, dtype=histogram.dtype)
    )
    tails = np.zeros(cuts.size, dtype=pieces.dtype)
    tails[: inside.size] = np.cumsum(pieces[::-1])[::-1]
    return tails[where.reshape(starts.shape)]


def curve_from_distances(distances: np.ndarray, caches: int = 1) -> MissRatioCurve:
    distances = np.asarray(distances)
    cold = int(np.count_nonzero(distances == COLD))
    reused = distances[distances != COLD]
    histogram = np.bincount(reused) if reused.size else np.zeros(0, dtype=np.int64)
    return MissRatioCurve(
        references=int(distances.size), cold=cold, histogram=histogram, caches=caches
    )


def lru_curve(
    chains: Sequence[Sequence[int]],
    routing: Sequence[int] | None = None,
    fleet_size: int = 1,
) -> MissRatioCurve:
    """The exact LRU miss-ratio curve of a prefix-closed trace.

    ``routing=None``: one pooled cache. Otherwise one cache per host (every
    host gets the same capacity), the routing being static (known in advance).
    """
    ids, lengths = flatten(chains)
    hosts = None if routing is None else reference_hosts(routing, lengths)
    return lru_curve_of_references(ids, hosts, fleet_size)


def lru_curve_of_references(
    ids: np.ndarray, hosts: np.ndarray | None = None, fleet_size: int = 1
) -> MissRatioCurve:
    """:func:`lru_curve` from flat arrays: block ids, and each reference's host (``None``: pooled)."""
    ids = np.asarray(ids)
    if hosts is not None and hosts.size and int(hosts.max()) >= fleet_size:
        raise ValueError(f"host {int(hosts.max())} is outside a fleet of {fleet_size}")
    caches = 1 if hosts is None else fleet_size
    if use_kernels(ids.size, CURVE_BREAK_EVEN):
        from pyverify.sim.kernels.stack_distance import lru_histogram

        dense, universe = dense_ids(ids)
        histogram, cold = lru_histogram(dense, universe, hosts, caches)
        return MissRatioCurve(
            references=int(ids.size), cold=cold, histogram=histogram, caches=caches
        )
    return curve_from_distances(stack_distances(ids, hosts, fleet_size), caches=caches)


def log_capacities(max_capacity: int, per_decade: int = 10) -> list[int]:
    """Capacities 1 .. max_capacity spaced evenly on a log axis (always including both ends)."""
    if max_capacity < 1:
        return [1]
    count = max(2, int(np.ceil(np.log10(max_capacity) * per_decade)) + 1)
    values = np.unique(np.round(np.logspace(0, np.log10(max_capacity), count)).astype(np.int64))
    values = values[(values >= 1) & (values <= max_capacity)]
    return sorted(set(values.tolist()) | {1, max_capacity})


__all__ = [
    "COLD",
    "MissRatioCurve",
    "curve_from_distances",
    "log_capacities",
    "lru_curve",
    "lru_curve_of_references",
    "previous_reference",
    "stack_distances",
    "stack_distances_fenwick",
    "stack_distances_numpy",
    "sums_from",
]
