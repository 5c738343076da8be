"""One pass split over the machine's cores: numpy's gathers and scatters, hashlib and the compiled kernels let
go of the GIL, so threads of one process run them side by side on a 2-core machine.

The readers and counters that split their work (the Parquet row groups, the prefix-closure read-back, the
JSONL byte parser, the per-host count) all go through :func:`on_cores`, so they agree on how many threads
a machine gets, and a one-core machine or a single part runs in the calling thread with no pool at all.
Work started early and waited for later (the content digest, numba's import) goes through :func:`beside`.
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


def beside(function: Callable[[], Result]) -> Callable[[], Result]:
    """``function()`` begun on a second (daemon) thread; call the result to wait for its value, or for the
    error it raised, raised again in the caller."""
    import threading

    outcome: list = []

    def run() -> None:
        try:
            outcome.append((function(), None))
        except BaseException as error:  # noqa: BLE001 (handed to the caller, who raises it)
            outcome.append((None, error))

    worker = threading.Thread(target=run, name="pyverify-beside", daemon=True)
    worker.start()

    def result() -> Result:
        worker.join()
        value, error = outcome[0]
        if error is not None:
            raise error
        return value

    return result


__all__ = ["beside", "cores", "on_cores"]
