"""The measurement window: warm the caches up, then count only the later requests.

A cache that starts empty misses on everything at first; engines report hit
rates of a warm cache. kvcache-simulator measures the last 50 % of requests:
with n requests and a warm-up fraction w, requests ``0 .. floor(n * w) - 1``
run (they fill the caches and change them exactly as before) but are not
counted; requests ``floor(n * w) .. n - 1`` are. pyverify uses the same
arithmetic; the default ``w = 0`` counts every request.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from pyverify.errors import UserError


@dataclass(frozen=True)
class Window:
    """Count requests from index ``floor(n * warmup_fraction)`` on."""

    warmup_fraction: float = 0.0

    def __post_init__(self) -> None:
        if not (0.0 <= self.warmup_fraction < 1.0):
            raise UserError(
                f"--warmup-fraction: expected a number in [0, 1), got {self.warmup_fraction!r}"
            )

    def first_measured(self, n_requests: int) -> int:
        """Index of the first counted request (kvcache-simulator's ``warmup_requests``)."""
        return max(0, min(n_requests, math.floor(n_requests * self.warmup_fraction)))

    def describe(self, n_requests: int) -> str:
        start = self.first_measured(n_requests)
        if start == 0:
            return f"all {n_requests} requests"
        return (
            f"requests {start}..{n_requests - 1} ({n_requests - start} of {n_requests}; "
            f"the first {start} warm the caches up)"
        )


#: Count every request.
WHOLE_TRACE = Window()


def warmup_fraction(text: str) -> float:
    """argparse type for ``--warmup-fraction``."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0.0 <= value < 1.0):
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), such as 0.5, got {text!r}")
    return value


__all__ = ["WHOLE_TRACE", "Window", "warmup_fraction"]
