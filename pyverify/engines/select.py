"""Which engine counts a trace: the user's ``--backend``, or by the trace's size.

``auto`` (the default) keeps small inputs on the in-memory numpy path and
sends a Parquet file of :data:`AUTO_DUCKDB_BYTES` or more to DuckDB, which
reads it out of core; that is about 10^9 block references of the synthetic
benchmark trace, the size at which the numpy arrays and tables pass a few
GiB (``bench/engines_100m.py`` measures both). Dask runs only when asked,
since it needs a cluster (or starts a local one).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pyverify.engines.counts import FleetCounts, Measure
from pyverify.engines.routing import ONE_MACHINE, static_hosts
from pyverify.engines import AUTO_DUCKDB_BYTES, ENGINES, choose  # noqa: F401 (re-exported)
from pyverify.errors import UserError
from pyverify.inputs.columnar import ColumnarTrace, check_parquet_file, is_parquet, read_columnar


def count(
    path: str | Path,
    engine: str,
    fleet_size: int | None,
    policy: str | None,
    seed: int = 0,
    scheduler: str | None = None,
    trace: ColumnarTrace | None = None,
    allow_unsorted: bool = False,
    measure: Measure | None = None,
) -> FleetCounts:
    """Pooled counts (``policy=None``) or pooled and per-host counts, by ``engine`` (already chosen).

    ``trace``: the input already read, else ``path`` is read here (a Mooncake JSONL
    trace with decreasing timestamps only with ``allow_unsorted``). ``measure``
    (DuckDB only): also the measured window's tally, in blocks and tokens, with
    the trace's own block size."""
    if policy == "prefix-affinity":
        raise UserError(ONE_MACHINE)
    if measure is not None and engine != "duckdb":
        raise ValueError(f"engine {engine!r} counts without a measured window")
    fleet = fleet_size or 1
    block_size = None
    if engine in ("duckdb", "dask") and trace is None and is_parquet(path):
        # The engine reads the block ids itself; everything else is checked as every reader does.
        _, block_size, _ = check_parquet_file(path)
    if engine == "duckdb":
        from pyverify.engines import duckdb as engine_module

        source = (
            path
            if trace is None and is_parquet(path)
            else (trace or read_columnar(path, allow_unsorted=allow_unsorted))
        )
        if measure is not None:
            if isinstance(source, ColumnarTrace):
                block_size = source.block_size_tokens
                if source.block_tokens is not None:
                    raise UserError(
                        f"{path}: block_tokens: per-block token counts are counted in memory only; "
                        "use --backend auto or numpy"
                    )
            measure = replace(measure, block_size=block_size)
        return engine_module.count(source, fleet, policy, seed, measure)
    if engine == "dask":
        from pyverify.engines import dask as engine_module

        source = (
            path
            if trace is None and is_parquet(path)
            else (trace or read_columnar(path, allow_unsorted=allow_unsorted))
        )
        return engine_module.count(source, fleet, policy, seed, scheduler=scheduler)
    from pyverify.engines import numpy_engine

    trace = trace or read_columnar(path, allow_unsorted=allow_unsorted)
    hosts = None if policy is None else static_hosts(trace, fleet, policy, seed)
    return numpy_engine.count(trace, hosts, fleet)


__all__ = ["AUTO_DUCKDB_BYTES", "ENGINES", "choose", "count"]
