"""Cost: the prefill time a pool saves against the time its transfers take (``pyverify cost``).

What :func:`estimate_cost` guarantees: the hits it weighs are the exact hits of the demand caches
(per host on the routing given, and the pool), replayed as ``simulate`` replays them; the time
model is the one written in :mod:`pyverify.cost.estimate` with the parameters given (every
default's unit and source in :mod:`pyverify.cost.params`), and :data:`LEAVES_OUT` says what it
does not model.

The parameters and their parsers are cheap and imported with this module; the estimate (NumPy)
is imported by the call that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyverify.api._traces import Trace, as_instance
from pyverify.api.names import LRU, PER_HOST, POOLED
from pyverify.cost.params import (
    PARAMETERS,
    PREFILL_RATE_MODEL,
    Params,
    SweepSpec,
    parse_params,
    parse_sweep,
    prefill_rate_note,
)

if TYPE_CHECKING:
    from pyverify.cost.estimate import LEAVES_OUT
    from pyverify.inputs.model import Instance

__all__ = [
    "LEAVES_OUT",
    "PARAMETERS",
    "PREFILL_RATE_MODEL",
    "CostEstimate",
    "Params",
    "SweepSpec",
    "estimate_cost",
    "parse_params",
    "parse_sweep",
    "prefill_rate_note",
]


def __getattr__(name: str):
    # What the time model leaves out is written beside the model, which imports NumPy.
    if name == "LEAVES_OUT":
        from pyverify.cost.estimate import LEAVES_OUT

        return LEAVES_OUT
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class CostEstimate:
    """The caches' hits and the time model's figures for one routing and one set of parameters."""

    params: Params
    per_host: Any  # the per-host caches' run (hits, hit_blocks, hit_rate)
    pooled: Any  # the pool's run, or None when only the per-host caches were asked for
    split: Any  # tokens per request: hit locally, fetched from the pool, recomputed
    estimate: Any  # time saved, spent and TTFT per request
    break_even: Any  # the pool bandwidth at which pooling breaks even (None without the pool)
    reuse: Any  # the reuse report of the routing (repeat shares, what pooling can add)
    sweep_rows: list  # one row per value of the parameter swept (empty: no sweep)
    input_tokens_given: bool  # prompt lengths from each request's input_tokens, not blocks

    def distributions(self) -> dict[str, dict[str, float]]:
        """Median, p90, p99 (and totals) of each per-request figure."""
        from pyverify.cost.summary import distributions

        return distributions(self.estimate)

    def verdict(self) -> str:
        """Whether the pool pays on this trace, in one sentence (with the pool only)."""
        from pyverify.cost.summary import verdict

        return verdict(self.estimate, self.break_even)

    def sweep_conclusion(self) -> str:
        """How the verdict changes across the sweep, in one sentence (with a sweep only)."""
        from pyverify.cost.summary import sweep_conclusion

        return sweep_conclusion(self.sweep_rows)

    def zero_latency_break_even_gb_s(self) -> float:
        """The break-even bandwidth with no per-fetch latency, for any trace."""
        from pyverify.cost.estimate import zero_latency_break_even_gb_s

        return zero_latency_break_even_gb_s(self.params)


def estimate_cost(
    trace: Trace,
    routing: tuple[int, ...],
    fleet_size: int,
    params: Params,
    *,
    pooled: bool = True,
    capacity: int | None = None,
    pool_capacity: int | None = None,
    eviction: str = LRU,
    sweep: SweepSpec | None = None,
) -> CostEstimate:
    """Replay ``trace`` through per-host caches on ``routing`` (``capacity`` blocks each) and,
    with ``pooled``, through one pool of ``pool_capacity`` blocks; weigh the hits with the time
    model under ``params``, and again for each value of ``sweep``."""
    from pyverify.cost.estimate import break_even, estimate, token_split
    from pyverify.cost.reuse import reuse_report
    from pyverify.cost.summary import sweep_rows
    from pyverify.sim.simulate import simulate

    instance = as_instance(trace)
    input_tokens = _input_tokens(instance)
    per_host = simulate(instance.chains, routing, PER_HOST, capacity=capacity, eviction=eviction)
    pool = None
    if pooled:
        pool = simulate(instance.chains, None, POOLED, capacity=pool_capacity, eviction=eviction)
    pooled_hits = pool.hit_blocks if pool is not None else None

    def split_for(p: Params):
        return token_split(
            instance.chains, per_host.hit_blocks, pooled_hits, p.block_tokens, input_tokens
        )

    split = split_for(params)
    return CostEstimate(
        params=params,
        per_host=per_host,
        pooled=pool,
        split=split,
        estimate=estimate(split, params),
        break_even=break_even(split, params) if pool is not None else None,
        reuse=reuse_report(instance.chains, routing, fleet_size),
        sweep_rows=sweep_rows(split_for, params, sweep) if sweep is not None else [],
        input_tokens_given=input_tokens is not None,
    )


def _input_tokens(instance: Instance) -> list[int | None] | None:
    if not instance.extra:
        return None
    tokens = [extra.get("input_tokens") for extra in instance.extra]
    return tokens if any(t is not None for t in tokens) else None
