"""The smallest capacity that reaches a target block hit rate.

A target rate X asks for at least ``ceil(X x references)`` block hits
(:func:`hits_needed`, exact: X is a :class:`~fractions.Fraction`, so 0.3 of
10 references is 3 hits, never 2.9999...).

* A stack algorithm (chain-order LRU, vLLM's order, Belady's MIN) has a
  curve whose hits never fall as the capacity grows, so the smallest
  capacity is read off the exact curve: :func:`smallest_on_curve` (a
  :class:`~pyverify.sim.mrc.MissRatioCurve`) and
  :func:`smallest_on_weighted` (a windowed
  :class:`~pyverify.sim.engine_curves.WeightedCurve`).
* FIFO and leaf-first LRU are not stack algorithms: their hits can fall
  when the capacity grows (Belady's anomaly, for FIFO), so no search over
  simulations proves a smallest capacity. :func:`crossing_by_bisection`
  finds a capacity C that reaches the target while C - 1 does not; a
  smaller one may exist, and the callers say so.

No capacity does better than the uncapacitated cache (every first reference
misses), so a target above its hit rate is "not reached".
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

from pyverify.sim.mrc import MissRatioCurve
from pyverify.sim.engine_curves import WeightedCurve


def hits_needed(rate: Fraction, references: int) -> int:
    """The fewest hits of ``references`` whose hit rate is at least ``rate``."""
    return math.ceil(rate * references)


def smallest_on_curve(curve: MissRatioCurve, rate: Fraction) -> int | None:
    """The smallest capacity per cache at which ``curve`` hits at least ``rate`` of its references (None: never)."""
    if curve.references == 0:
        return None
    allowed_misses = curve.references - hits_needed(rate, curve.references)
    if allowed_misses < curve.cold:
        return None
    tail = np.concatenate(
        (np.cumsum(curve.histogram[::-1])[::-1], [0])
    )  # tail[c] = re-references at distance >= c
    misses = (
        curve.cold + tail
    )  # misses at capacity c, for c = 0 .. max useful capacity (non-increasing)
    # the first capacity (>= 1) whose misses are within the allowance
    return max(1, int(np.argmax(misses <= allowed_misses)))


def smallest_on_weighted(curve: WeightedCurve, rate: Fraction) -> int | None:
    """The smallest capacity at which a windowed curve hits at least ``rate`` of its measured block references."""
    if curve.blocks == 0:
        return None
    needed = hits_needed(rate, curve.blocks)
    running = np.concatenate(
        ([0], np.cumsum(curve.block_hist))
    )  # running[c] = hits at capacity c (non-decreasing)
    if running[-1] < needed:
        return None
    return max(1, int(np.searchsorted(running, needed, side="left")))


def crossing_by_bisection(
    hits_at: Callable[[int], int], references: int, rate: Fraction, enough: int
) -> int | None:
    """A capacity C that reaches ``rate`` while C - 1 does not (or C = 1), by bisection over simulations.

    ``hits_at(c)``: block hits at capacity c; ``enough``: a capacity that never
    evicts (the distinct blocks), whose hits are the most any capacity gets.
    Not proven smallest for a policy that is not a stack algorithm (module docstring).
    """
    if references == 0:
        return None
    needed = hits_needed(rate, references)
    if hits_at(enough) < needed:
        return None
    if hits_at(1) >= needed:
        return 1
    low, high = 1, enough  # low does not reach, high does
    while high - low > 1:
        middle = (low + high) // 2
        if hits_at(middle) >= needed:
            high = middle
        else:
            low = middle
    return high


__all__ = ["crossing_by_bisection", "hits_needed", "smallest_on_curve", "smallest_on_weighted"]
