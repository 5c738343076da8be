"""Approximate LRU miss-ratio curves by spatial sampling (SHARDS), labelled as estimates.

SHARDS (Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC Construction
with SHARDS", USENIX FAST 2015) keeps every reference to a block whose hash
falls below a threshold: with ``T / P = R``, a block is sampled when
``hash(block) mod P < T``, so about a fraction R of the *blocks* are kept,
each with all of its references. Within the sampled sub-trace, a stack
distance d stands for about d / R distinct blocks of the full trace, so a
sampled re-reference at distance d hits a cache of C blocks when
``d < C * R``. The exact curve of :mod:`pyverify.sim.mrc` is computed on the
sub-trace and rescaled; the cost falls by the factor R.

pyverify's caches hit on the longest cached prefix of a chain, which on a
prefix-closed trace is the same as a flat LRU over the reference sequence
(the proof is in :mod:`pyverify.sim.mrc`), so sampling blocks of the flat
sequence is sound here.

The *SHARDS_adj* correction of the paper is applied: the miss ratio is
divided by the expected number of sampled references ``N * R`` instead of
the number actually sampled, which removes most of the error that comes from
sampling a few more or fewer hot blocks than the rate says.

Every figure from this module is an **estimate**; ``bench/shards_error.py``
measures its error against the exact curve on the traces at hand, and the
README states it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyverify.sim.mrc import COLD, stack_distances

#: The modulus of the sampling hash (the paper's P).
MODULUS = 1 << 24


def splitmix64(values: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser (Steele, Lea and Flood, OOPSLA 2014): a well-mixed 64-bit hash of each id."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def sampled(ids: np.ndarray, rate: float) -> np.ndarray:
    """Whether each reference's block is in the sample (every reference to a sampled block is)."""
    threshold = np.uint64(max(1, round(rate * MODULUS)))
    return (splitmix64(ids) % np.uint64(MODULUS)) < threshold


@dataclass(frozen=True)
class ShardsCurve:
    """An estimated LRU miss-ratio curve from a spatial sample (see the module docstring)."""

    rate: float
    references: int
    sampled_references: int
    sampled_cold: int
    histogram: np.ndarray  # of sampled stack distances

    def miss_ratio(self, capacity: int | np.ndarray) -> float | np.ndarray:
        """Estimated miss ratio with ``capacity`` blocks (SHARDS_adj)."""
        capacity = np.asarray(capacity, dtype=np.float64)
        tail = np.concatenate((np.cumsum(self.histogram[::-1])[::-1], [0]))
        # A sampled distance d hits when d < C * R: the first distance that misses is ceil(C * R).
        first_miss = np.minimum(np.ceil(capacity * self.rate).astype(np.int64), self.histogram.size)
        expected = self.references * self.rate
        ratio = (
            np.clip((self.sampled_cold + tail[first_miss]) / expected, 0.0, 1.0)
            if expected
            else np.zeros_like(capacity)
        )
        return float(ratio) if np.ndim(ratio) == 0 else ratio

    def hit_rate(self, capacity: int | np.ndarray) -> float | np.ndarray:
        return 1 - self.miss_ratio(capacity)

    def points(self, capacities) -> list[dict]:
        ratios = np.atleast_1d(self.miss_ratio(np.asarray(capacities)))
        return [
            {
                "capacity_blocks": int(c),
                "estimated_miss_ratio": float(r),
                "estimated_hit_rate": float(1 - r),
            }
            for c, r in zip(capacities, ratios)
        ]


def shards_curve(ids: np.ndarray, rate: float) -> ShardsCurve:
    """The SHARDS estimate of the pooled LRU curve of the reference sequence ``ids`` at sampling ``rate``."""
    if not 0 < rate <= 1:
        raise ValueError(f"sampling rate must be in (0, 1], got {rate}")
    ids = np.asarray(ids, dtype=np.int64)
    kept = ids[sampled(ids, rate)]
    distances = stack_distances(kept)
    cold = int(np.count_nonzero(distances == COLD))
    reused = distances[distances != COLD]
    histogram = np.bincount(reused) if reused.size else np.zeros(0, dtype=np.int64)
    return ShardsCurve(
        rate=rate,
        references=int(ids.size),
        sampled_references=int(kept.size),
        sampled_cold=cold,
        histogram=histogram,
    )


def curve_error(estimate: ShardsCurve, exact, capacities) -> dict:
    """Mean and largest absolute difference in miss ratio between an estimate and the exact curve."""
    capacities = np.asarray(capacities)
    truth = exact.misses(capacities) / exact.references
    difference = np.abs(np.atleast_1d(estimate.miss_ratio(capacities)) - truth)
    return {"mean_abs_error": float(difference.mean()), "max_abs_error": float(difference.max())}


__all__ = ["MODULUS", "ShardsCurve", "curve_error", "sampled", "shards_curve", "splitmix64"]
