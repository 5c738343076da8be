"""Estimated curves, and the capacities a curve is shown at (the exact curves are
:func:`pyverify.api.lru_curve` and :func:`pyverify.api.optimal_curve`).

What :func:`estimated_lru_curve` guarantees: nothing exact. It is SHARDS (Waldspurger et al.,
FAST 2015, with its SHARDS_adj correction): the exact pooled chain-order LRU curve of the blocks
whose hash falls in a sample of about ``sample_rate`` of them, rescaled
(:mod:`pyverify.sim.shards`); ``bench/shards_error.py`` measures its error against
:func:`pyverify.api.lru_curve`, the exact curve.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyverify.api._traces import Trace

if TYPE_CHECKING:
    from pyverify.sim.shards import ShardsCurve

__all__ = ["estimated_lru_curve", "log_capacities"]


def estimated_lru_curve(trace: Trace, sample_rate: float) -> ShardsCurve:
    """The SHARDS estimate of one pooled LRU cache's miss-ratio curve, from the block references
    whose id hashes into the sample at ``sample_rate`` (0 < rate <= 1); ``points(capacities)``
    gives the estimated miss ratio and hit rate at each capacity."""
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.sim.shards import shards_curve

    columns = trace if isinstance(trace, ColumnarTrace) else ColumnarTrace.from_instance(trace)
    return shards_curve(columns.ids, sample_rate)


def log_capacities(largest: int, per_decade: int = 10) -> list[int]:
    """Capacities 1 .. ``largest`` spaced evenly on a log axis, both ends included."""
    from pyverify.sim.mrc import log_capacities as spaced

    return spaced(largest, per_decade)
