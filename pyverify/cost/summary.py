"""Summaries of an estimate: percentiles per request, a one-word verdict, and how a sweep changes it.

What ``pyverify cost`` reports about the per-request times of
:mod:`pyverify.cost.estimate`: :func:`distributions` (median, p90, p99, mean
and total), :func:`verdict`, and for ``--sweep`` the re-estimated
:func:`sweep_rows` and the one-sentence :func:`sweep_conclusion`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # for annotations only: numpy is imported where it computes, so --help stays fast
    import numpy as np

from pyverify.cost.estimate import NO_FETCHES, BreakEven, Estimate, break_even, estimate
from pyverify.cost.params import Params, SweepSpec

# --- distributions --------------------------------------------------------------

PERCENTILES = (50, 90, 99)


def distribution(values_s: np.ndarray) -> dict[str, float]:
    """Median, p90, p99 (numpy.percentile, linear interpolation) in ms, and the total in s."""
    import numpy as np

    values = np.asarray(values_s, dtype=float)
    if values.size == 0:
        return {"median_ms": 0.0, "p90_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0, "total_s": 0.0}
    median, p90, p99 = np.percentile(values, PERCENTILES) * 1000.0
    return {
        "median_ms": float(median),
        "p90_ms": float(p90),
        "p99_ms": float(p99),
        "mean_ms": float(values.mean() * 1000.0),
        "total_s": float(values.sum()),
    }


def distributions(est: Estimate) -> dict[str, dict[str, float]]:
    """The distributions the report prints, over all requests."""
    return {
        "prefill_time_saved": distribution(est.saved),
        "transfer_time_spent": distribution(est.transfer),
        "net_effect": distribution(est.net),
        "ttft_per_host": distribution(est.ttft_per_host),
        "ttft_pooled": distribution(est.ttft_pooled),
    }


# --- sensitivity ----------------------------------------------------------------


def verdict(est: Estimate, be: BreakEven) -> str:
    """One word for the conclusion at these parameters."""
    if be.status == NO_FETCHES:
        return "no difference"
    return (
        "pool pays" if est.net_total > 0 else ("break-even" if est.net_total == 0 else "pool loses")
    )


@dataclass(frozen=True)
class SweepRow:
    name: str
    value: float
    params: Params
    estimate: Estimate
    break_even: BreakEven

    @property
    def verdict(self) -> str:
        return verdict(self.estimate, self.break_even)

    def to_json(self) -> dict[str, Any]:
        dist = distributions(self.estimate)
        return {
            self.name: self.value,
            "prefill_saved_s": dist["prefill_time_saved"]["total_s"],
            "transfer_s": dist["transfer_time_spent"]["total_s"],
            "net_s": self.estimate.net_total,
            "net_median_ms": dist["net_effect"]["median_ms"],
            "ttft_p90_ms": {
                "per_host": dist["ttft_per_host"]["p90_ms"],
                "pooled": dist["ttft_pooled"]["p90_ms"],
            },
            "break_even": self.break_even.to_json(),
            "verdict": self.verdict,
        }


def sweep_rows(split_for, params: Params, spec: SweepSpec) -> list[SweepRow]:
    """Re-estimate with one parameter varied. ``split_for(params)`` gives the token split
    (it changes only when ``block_tokens`` does)."""
    rows = []
    for value in spec.values:
        varied = replace(params, **{spec.name: value})
        split = split_for(varied)
        rows.append(
            SweepRow(spec.name, value, varied, estimate(split, varied), break_even(split, varied))
        )
    return rows


def sweep_conclusion(rows: Sequence[SweepRow]) -> str:
    """How the conclusion changes across a sweep, in one sentence."""
    name = rows[0].name
    verdicts = [row.verdict for row in rows]
    if len(set(verdicts)) == 1:
        return f"the conclusion does not change across {name} = {rows[0].value:g} .. {rows[-1].value:g}: {verdicts[0]} at every value"
    flips = [
        f"between {a.value:g} ({a.verdict}) and {b.value:g} ({b.verdict})"
        for a, b in zip(rows, rows[1:])
        if a.verdict != b.verdict
    ]
    return f"the conclusion changes as {name} varies: " + "; ".join(flips)
