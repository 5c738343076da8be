"""Engines for the set-count questions on traces too big for the Python simulators.

The uncapacitated counts are set counts on a prefix-closed trace (Lean
theorems ``pooled_misses_eq_distinct`` and ``per_host_misses_eq_sum``):
pooled misses = distinct block ids; per-host misses under a static routing =
distinct (host, block) pairs. Three engines compute them, with exactly the
same results (the tests check it trace by trace):

``numpy``  (:mod:`pyverify.engines.numpy_engine`)
    In memory, on a :class:`~pyverify.inputs.columnar.ColumnarTrace`. Fastest
    while the trace fits comfortably in RAM.
``duckdb`` (:mod:`pyverify.engines.duckdb`)
    Embedded SQL directly on a Parquet file, with a memory limit and spilling
    to disk: one machine, any trace size its disk holds.
``dask``   (:mod:`pyverify.engines.dask`)
    The same counts, and per-host LRU curves host by host, on a
    dask.distributed cluster (a local one when no scheduler is named).

:mod:`pyverify.engines.routing` computes static routings on columnar traces,
host for host the same as :mod:`pyverify.sim.routing`; :mod:`pyverify.engines.select`
picks an engine.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The engines ``--backend`` accepts (kept here, apart from the engines, so the CLI can list them cheaply).
#: ``python`` is the per-record simulator on Python chains: every input and option, and the test oracle
#: the array path (``auto``, ``numpy``) is compared with.
ENGINES = ("auto", "python", "numpy", "duckdb", "dask")

#: Parquet files at least this large go to DuckDB under ``--backend auto``.
AUTO_DUCKDB_BYTES = 1 << 30


def choose(engine: str, path: str | Path) -> str:
    """The engine to run: ``engine`` unless it is ``auto`` (here, beside the names, so the CLI decides without
    importing the engines)."""
    from pyverify.errors import UserError
    from pyverify.inputs.columnar.formats import is_parquet

    if engine not in ENGINES:
        raise UserError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    try:
        big = is_parquet(path) and os.path.getsize(path) >= AUTO_DUCKDB_BYTES
    except OSError:
        big = False
    if big:
        try:
            import duckdb  # noqa: F401
        except ImportError:
            return "numpy"
        return "duckdb"
    return "numpy"
