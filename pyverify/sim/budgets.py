"""Hit rates at a list of KV memory budgets (GiB), as kvcache-simulator sweeps them.

Each budget becomes whole blocks (:func:`pyverify.inputs.kv_models.blocks_for_gib`);
then, per eviction policy:

* ``lru`` (chain-order) and ``tail-first`` are stack algorithms: one pass of
  distances (:mod:`pyverify.sim.mrc`, :mod:`pyverify.sim.engine_curves`)
  answers every budget at once;
* ``fifo`` and ``leaf-lru`` are not: each budget is one run of
  :func:`pyverify.sim.simulate.simulate` (compiled, :mod:`pyverify.sim.kernels`,
  once the budgets' runs together are large enough to repay the start-up).

Counts are blocks and, with token weights, tokens, over the window's requests.
A budget smaller than one block caches nothing (every reference misses).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from pyverify.inputs.kv_models import blocks_for_gib
from pyverify.sim.accounting import tally_offsets
from pyverify.cache.arrays import flatten
from pyverify.sim.engine_curves import (
    WeightedCurve,
    lru_weighted_curve,
    tail_first_ranks_flat,
    weighted_curve_flat,
)
from pyverify.sim.simulate import LRU, POOLED, TAIL_FIRST, simulate
from pyverify.sim.tokens import TokenWeights
from pyverify.sim.window import WHOLE_TRACE, Window

#: kvcache-simulator's default budgets (GiB).
from pyverify.inputs.kv_models import DEFAULT_BUDGETS_GIB  # noqa: E402,F401 (re-exported)


def _lru_curve(ids, lengths, weights, window) -> WeightedCurve:
    return lru_weighted_curve(ids, lengths, None, 1, weights, window)


def _tail_first_curve(ids, lengths, weights, window) -> WeightedCurve:
    return weighted_curve_flat(tail_first_ranks_flat(ids, lengths), lengths, weights, window)


#: Policies answered for every budget by one pass: each gives the curve ``(ids, lengths, weights, window)``.
ONE_PASS = {LRU: _lru_curve, TAIL_FIRST: _tail_first_curve}


@dataclass(frozen=True)
class BudgetPoint:
    eviction: str
    gib: float
    capacity_blocks: int
    block_references: int
    block_hits: int
    block_hit_rate: float
    tokens: int | None
    token_hits: int | None
    token_hit_rate: float | None
    method: str

    def to_json(self) -> dict:
        return asdict(self)


def budget_sweep(
    chains: Sequence[Sequence[int]],
    budgets_gib: Sequence[float],
    bytes_per_token: float,
    block_tokens: int,
    eviction: str,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> list[BudgetPoint]:
    """One pooled cache at each budget (module docstring)."""
    ids, lengths = flatten(chains)

    def replay(capacity: int) -> Sequence[int]:
        return simulate(
            chains, None, POOLED, capacity=capacity, eviction=eviction, runs=len(budgets_gib)
        ).hit_blocks

    return budget_sweep_flat(
        ids, lengths, replay, budgets_gib, bytes_per_token, block_tokens, eviction, weights, window
    )


def budget_sweep_flat(
    ids: np.ndarray,
    lengths: np.ndarray,
    replay: Callable[[int], Sequence[int]],
    budgets_gib: Sequence[float],
    bytes_per_token: float,
    block_tokens: int,
    eviction: str,
    weights: TokenWeights | None = None,
    window: Window = WHOLE_TRACE,
) -> list[BudgetPoint]:
    """:func:`budget_sweep` of a trace given as flat ids and chain lengths.

    ``replay(capacity)`` gives the hits per request of one pooled cache of
    ``capacity`` blocks under ``eviction`` (used for policies with no
    one-pass curve): ``simulate()`` on chains, or the compiled kernels on
    arrays (:func:`pyverify.sim.array_run.array_hits`).
    """
    capacities = [blocks_for_gib(gib, bytes_per_token, block_tokens) for gib in budgets_gib]
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    empty = tally_offsets(offsets, np.zeros(lengths.size, dtype=np.int64), weights, window)
    points = []
    if eviction in ONE_PASS:
        curve = ONE_PASS[eviction](ids, lengths, weights, window)
        block_hits = curve.block_hits(capacities)
        token_hits = curve.token_hits(capacities)
        for i, (gib, capacity) in enumerate(zip(budgets_gib, capacities)):
            hits_t = None if token_hits is None else int(token_hits[i])
            points.append(
                _point(eviction, gib, capacity, empty, int(block_hits[i]), hits_t, "one pass")
            )
        return points
    for gib, capacity in zip(budgets_gib, capacities):
        if capacity < 1:
            points.append(
                _point(eviction, gib, 0, empty, 0, None if weights is None else 0, "no cache")
            )
            continue
        measured = tally_offsets(offsets, replay(capacity), weights, window)
        points.append(
            _point(
                eviction,
                gib,
                capacity,
                empty,
                measured.block_hits,
                measured.token_hits,
                "simulated",
            )
        )
    return points


@dataclass(frozen=True)
class TargetPoint:
    """The smallest pooled capacity (blocks) whose measured block hit rate reaches a target, and how it was found."""

    policy: str  # an eviction policy, or "opt" (Belady's MIN)
    capacity_blocks: (
        int | None
    )  # None: not reached, even uncapacitated (or not computed: see method)
    method: str
    ceiling_hit_rate: float  # the uncapacitated block hit rate over the measured requests

    def to_json(self) -> dict:
        return {**asdict(self), "reached": self.capacity_blocks is not None}


#: How a capacity is found for a policy with no one-pass curve (pyverify.sim.target), and what that means.
BISECTION = "bisection of simulations"
#: Why there is no optimum with a warm-up (see :func:`target_capacity`).
OPTIMUM_NOT_COMPUTED = (
    "not computed with a warm-up: MIN is the optimum of the whole trace, "
    "not of the measured requests"
)
BISECTION_NOTE = (
    "bisection of simulations: fifo and leaf-lru are not stack algorithms, so the capacity found reaches "
    "the target and one block less does not, but a smaller capacity may also reach it"
)


def target_capacity(
    ids: np.ndarray,
    lengths: np.ndarray,
    replay: Callable[[int], Sequence[int]],
    policy: str,
    rate,
    window: Window = WHOLE_TRACE,
) -> TargetPoint:
    """The smallest capacity of one pooled cache whose block hit rate over ``window`` is at least ``rate``.

    ``lru`` and ``vllm``: read off the exact one-pass curve. ``opt``: Belady's
    MIN curve, over the whole trace only (MIN minimises misses over the whole
    trace, not over a window: with a warm-up it is not the optimum of the
    measured requests, so it is not computed). ``fifo`` and ``leaf-lru``:
    :func:`~pyverify.sim.target.crossing_by_bisection` over ``replay``.
    """
    from pyverify.optimal.curve import optimal_curve_flat
    from pyverify.sim.target import crossing_by_bisection, smallest_on_curve, smallest_on_weighted

    uncapacitated = _lru_curve(ids, lengths, None, window)
    ceiling = (
        float(uncapacitated.block_hist.sum() / uncapacitated.blocks)
        if uncapacitated.blocks
        else 0.0
    )
    if policy == "opt":
        if window.warmup_fraction:
            return TargetPoint(policy, None, OPTIMUM_NOT_COMPUTED, ceiling)
        return TargetPoint(
            policy,
            smallest_on_curve(optimal_curve_flat(ids, lengths), rate),
            "exact curve, one pass",
            ceiling,
        )
    if policy in ONE_PASS:
        curve = ONE_PASS[policy](ids, lengths, None, window)
        return TargetPoint(
            policy, smallest_on_weighted(curve, rate), "exact curve, one pass", ceiling
        )
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])

    def hits_at(capacity: int) -> int:
        return tally_offsets(offsets, replay(capacity), None, window).block_hits

    distinct = max(1, int(np.unique(ids).size))  # a cache this large never evicts
    return TargetPoint(
        policy,
        crossing_by_bisection(hits_at, uncapacitated.blocks, rate, distinct),
        BISECTION,
        ceiling,
    )


def _point(eviction, gib, capacity, empty, block_hits, token_hits, method) -> BudgetPoint:
    refs, tokens = empty.block_references, empty.tokens
    return BudgetPoint(
        eviction=eviction,
        gib=gib,
        capacity_blocks=capacity,
        block_references=refs,
        block_hits=block_hits,
        block_hit_rate=block_hits / refs if refs else 0.0,
        tokens=tokens,
        token_hits=token_hits,
        token_hit_rate=(token_hits / tokens if tokens else 0.0) if token_hits is not None else None,
        method=method,
    )


__all__ = [
    "BISECTION",
    "BISECTION_NOTE",
    "OPTIMUM_NOT_COMPUTED",
    "DEFAULT_BUDGETS_GIB",
    "BudgetPoint",
    "ONE_PASS",
    "TargetPoint",
    "budget_sweep",
    "budget_sweep_flat",
    "target_capacity",
]
