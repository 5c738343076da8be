"""Memory budgets: one pooled cache's hit rate at each KV budget in GiB (``pyverify budgets``).

What :func:`memory_budgets` guarantees: each point is the exact hit count of one pooled demand
cache that starts empty, at the whole number of blocks the budget holds (KV bytes per token x
block tokens, kvcache-simulator's rounding), counted over the window given. ``lru`` and
``tail-first`` are read for every budget off one pass of stack distances; the other evictions are
replayed per budget. With ``optimum``, rows ``opt`` (Belady's MIN, bypass form: no demand cache
of that size misses fewer times) and ``opt-forced`` (the optimum of a cache that admits what it
fetches). With ``target_hit_rate``, the smallest capacity that reaches it, per eviction and for
the optimum (a bisection, labelled so, where no curve exists).

A trace given as arrays (:class:`~pyverify.inputs.columnar.ColumnarTrace`) is replayed by the
compiled kernels; an instance by the plain-Python caches; both give the same hits. The
simulators are imported by the call that uses them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from pyverify.api._traces import Trace
from pyverify.api.names import POOLED

if TYPE_CHECKING:
    from pyverify.sim.budgets import BISECTION, BISECTION_NOTE, ONE_PASS, OPTIMUM_NOT_COMPUTED
    from pyverify.sim.tokens import TokenWeights
    from pyverify.sim.window import Window

__all__ = [
    "BISECTION",
    "BISECTION_NOTE",
    "ONE_PASS",
    "OPTIMUM_NOT_COMPUTED",
    "Budgets",
    "memory_budgets",
]

#: How a target was found and what that means, written beside the search (which loads NumPy).
_FROM_THE_SEARCH = {"BISECTION", "BISECTION_NOTE", "ONE_PASS", "OPTIMUM_NOT_COMPUTED"}


def __getattr__(name: str):
    if name in _FROM_THE_SEARCH:
        from pyverify.sim import budgets

        return getattr(budgets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Budgets:
    """The points of each eviction (and the optima) at every budget, and the targets if asked."""

    by_eviction: dict[str, list[Any]]  # eviction or "opt"/"opt-forced" -> BudgetPoint per budget
    weights: TokenWeights | None  # tokens per block reference (None: blocks only)
    targets: list[Any] | None  # TargetPoint per eviction, then the optimum's


def memory_budgets(
    trace: Trace,
    *,
    budgets_gib: Sequence[float],
    kv_bytes_per_token: float,
    evictions: Sequence[str],
    window: Window | None = None,
    optimum: bool = False,
    target_hit_rate: Any = None,
    where: str | None = None,
) -> Budgets:
    """One pooled cache per budget and eviction (see the module docstring). The trace must give
    its block size in tokens; ``where`` names the input in errors."""
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.sim.window import WHOLE_TRACE

    window = window if window is not None else WHOLE_TRACE
    sweep = _on_arrays if isinstance(trace, ColumnarTrace) else _on_instance
    weights, by_eviction, (ids, lengths, replayer) = sweep(
        trace, budgets_gib, kv_bytes_per_token, evictions, window, where
    )
    if optimum:
        by_eviction.update(
            _optima(ids, lengths, trace, budgets_gib, kv_bytes_per_token, weights, window)
        )
    targets = None
    if target_hit_rate is not None:
        from pyverify.sim.budgets import target_capacity

        targets = [
            target_capacity(ids, lengths, replayer(policy), policy, target_hit_rate, window)
            for policy in [*evictions, "opt"]
        ]
    return Budgets(by_eviction, weights, targets)


def _on_instance(instance, budgets_gib, bytes_per_token, evictions, window, where):
    """Every eviction's budgets on an instance (Python chains)."""
    from pyverify.cache.arrays import flatten
    from pyverify.sim.budgets import budget_sweep
    from pyverify.sim.simulate import simulate
    from pyverify.sim.tokens import instance_token_weights

    weights = instance_token_weights(instance, where)
    by_eviction = {
        policy: budget_sweep(
            instance.chains,
            budgets_gib,
            bytes_per_token,
            instance.block_size_tokens,
            policy,
            weights,
            window,
        )
        for policy in evictions
    }

    def replayer(policy):
        def replay(capacity):
            return simulate(
                instance.chains, None, POOLED, capacity=capacity, eviction=policy, runs=20
            ).hit_blocks

        return replay

    return weights, by_eviction, (*flatten(instance.chains), replayer)


def _on_arrays(trace, budgets_gib, bytes_per_token, evictions, window, where):
    """The same on a trace held as arrays, replayed by the compiled kernels."""
    import numpy as np

    from pyverify.sim.array_run import ArrayReplay, trace_token_weights
    from pyverify.sim.budgets import budget_sweep_flat

    weights = trace_token_weights(trace, where)
    prepared = ArrayReplay(
        trace, np.zeros(trace.n_requests, dtype=np.int64)
    )  # once for every budget and policy
    lengths = np.diff(trace.offsets)
    by_eviction = {}
    for policy in evictions:

        def replay(capacity, policy=policy):
            return prepared.hits(capacity, policy)

        by_eviction[policy] = budget_sweep_flat(
            trace.ids,
            lengths,
            replay,
            budgets_gib,
            bytes_per_token,
            trace.block_size_tokens,
            policy,
            weights,
            window,
        )

    def replayer(policy):
        return lambda capacity: prepared.hits(capacity, policy)

    return weights, by_eviction, (trace.ids, lengths, replayer)


def _optima(ids, lengths, trace, budgets_gib, bytes_per_token, weights, window):
    """Rows ``opt-forced`` and ``opt`` (one run of each optimum per budget)."""
    from pyverify.optimal.belady import min_run_flat
    from pyverify.optimal.forced import forced_run_flat
    from pyverify.sim.budgets import budget_sweep_flat

    rows = {}
    for name, search, method in (
        ("opt-forced", forced_run_flat, "forced-admission optimum"),
        ("opt", min_run_flat, "bypass optimum (MIN)"),
    ):

        def replay(capacity, search=search):
            return search(ids, lengths, None, capacity)[0]

        points = budget_sweep_flat(
            ids,
            lengths,
            replay,
            budgets_gib,
            bytes_per_token,
            trace.block_size_tokens,
            name,
            weights,
            window,
        )
        rows[name] = [
            dataclasses.replace(p, method=method if p.method == "simulated" else p.method)
            for p in points
        ]
    return rows
