"""One pass split over the machine's cores: numpy's gathers and scatters, hashlib and the compiled kernels let
go of the GIL, so threads of one process run them side by side on a 2-core machine.

The readers and counters that split their work (the Parquet row groups, the prefix-closure read-back, the
JSONL byte parser, the per-host count) all go through :func:`on_cores`, so they agree on how many threads
a machine gets, and a one-core machine or a single part runs in the calling thread with no pool at all.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def on_cores(function: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """``[function(item) for item in items]``, in order, on up to :func:`cores` threads (one item or one core:
    in this thread; concurrent.futures is imported only when a pool is started)."""
    items = list(items)
    workers = min(cores(), len(items))
    if workers <= 1:
        return [function(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers, thread_name_prefix="pyverify") as pool:
        return list(pool.map(function, items))


__all__ = ["cores", "on_cores"]
