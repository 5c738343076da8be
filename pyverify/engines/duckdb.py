"""The embedded out-of-core engine: the counts as SQL in DuckDB, directly on Parquet.

DuckDB (https://duckdb.org/docs/) reads the Parquet file in row groups and
aggregates with a memory limit, spilling to a temporary directory past it, so
a trace of any size that the disk holds is counted on one machine. Three
aggregations do everything, validation included:

1. per request: its host (the routing rule of :mod:`pyverify.engines.routing`,
   written in SQL where it can be: ``row % F``, or SHA-256 in DuckDB for
   prefix-hash and route-key; the random routing is computed by numpy and
   joined by row), its length, and whether its list is missing or empty;
2. per block: its smallest and largest parent (the block before it, or -1):
   the number of rows is the pooled misses, and a block whose two differ
   breaks prefix closure (negative ids and nulls are caught here too);
3. per host (only when routed): the distinct (host, block) pairs, whose
   number is the per-host misses.

Each is one streaming hash aggregation over the file; nothing is
materialised, and DuckDB spills the hash tables to disk past the limit.

With ``measure`` (what ``simulate`` reports: the measured window and the
token figures), one more pass joins every reference of the measured requests
with its cache's first sight of the block: on a prefix-closed trace an
uncapacitated cache hits exactly the blocks it has seen in an earlier request
(a block's ancestors came with it), so those references are the hits, and
their token weights (:mod:`pyverify.sim.tokens`: the block size, the last
block holding the rest of ``input_length``) are the token hits.

If any check fails, the in-memory reader (:func:`pyverify.inputs.columnar.read_parquet`)
reads the file to name the first bad row exactly as the numpy path does.

Settings (environment): ``PYVERIFY_DUCKDB_MEMORY`` (default ``2GB``, DuckDB's
``memory_limit``), ``PYVERIFY_DUCKDB_TEMP`` (spill directory; default a new
directory under the system's temporary directory, removed afterwards),
``PYVERIFY_DUCKDB_THREADS`` (default: every core).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from pyverify.engines.counts import FleetCounts, Measure
from pyverify.engines.routing import ONE_MACHINE, STATIC_POLICIES, random_hosts
from pyverify.errors import UserError, located
from pyverify.inputs.columnar import ColumnarTrace, read_parquet, require

DEFAULT_MEMORY = "2GB"

# SHA-256's first 8 bytes, big-endian, as an unsigned integer: pyverify.sim.routing.stable_hash.
STABLE_HASH = "CAST(('0x' || left(sha256({key}), 16)) AS UBIGINT)"


def connect():
    """A DuckDB connection with a memory limit and a spill directory (see the module docstring)."""
    duckdb = require("duckdb")
    temp = os.environ.get("PYVERIFY_DUCKDB_TEMP") or tempfile.mkdtemp(prefix="pyverify-duckdb-")
    connection = duckdb.connect(":memory:")
    connection.execute(
        f"SET memory_limit = '{os.environ.get('PYVERIFY_DUCKDB_MEMORY', DEFAULT_MEMORY)}'"
    )
    connection.execute(f"SET temp_directory = '{temp}'")
    connection.execute("SET preserve_insertion_order = false")
    connection.execute(
        "SET enable_progress_bar = false"
    )  # it would print into the command's output
    threads = os.environ.get("PYVERIFY_DUCKDB_THREADS")
    if threads:
        connection.execute(f"SET threads = {int(threads)}")
    return connection, (None if os.environ.get("PYVERIFY_DUCKDB_TEMP") else temp)


def count(
    source: str | Path | ColumnarTrace,
    fleet_size: int | None = None,
    policy: str | None = None,
    seed: int = 0,
    measure: Measure | None = None,
) -> FleetCounts:
    """Pooled counts (``policy=None``), or pooled and per-host counts under a static ``policy``;
    with ``measure``, also the measured tally of its model (see the module docstring).

    ``source`` is a Parquet file (read by DuckDB itself, out of core) or an
    in-memory :class:`ColumnarTrace` (handed over as Arrow, without a copy).
    """
    if policy == "prefix-affinity":
        raise UserError(ONE_MACHINE)
    if policy is not None and policy not in STATIC_POLICIES:
        raise UserError(
            f"unknown routing policy {policy!r}; choose one of: {', '.join(STATIC_POLICIES)}"
        )
    connection, temp = connect()
    try:
        return _count(connection, source, fleet_size or 1, policy, seed, measure)
    finally:
        connection.close()
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


def _count(
    connection, source, fleet: int, policy: str | None, seed: int, measure: Measure | None
) -> FleetCounts:
    duckdb = require("duckdb")
    name = str(source) if not isinstance(source, ColumnarTrace) else source.name
    columns = _register(connection, source)
    n_requests = connection.execute("SELECT count(*) FROM source").fetchall()[0][0]
    host, join = _host_expression(connection, policy, fleet, seed, n_requests, columns, source)
    # Prompt lengths, already checked whole and non-negative by the reader's check of the file's other columns.
    total = (
        "CAST(source.input_length AS BIGINT)"
        if "input_length" in columns
        else "CAST(NULL AS BIGINT)"
    )
    connection.execute(
        f"CREATE TEMP VIEW requests AS SELECT source.row, source.hash_ids, {host} AS host, {total} AS total "
        f"FROM source {join}"
    )
    try:
        per_request = connection.execute(
            "SELECT host, count(*), sum(len(hash_ids)), count(*) FILTER (WHERE hash_ids IS NULL OR len(hash_ids) = 0) "
            "FROM requests GROUP BY host"
        ).fetchall()
        if any(bad for *_, bad in per_request):
            _name_the_error(source)
        connection.execute(
            "CREATE TEMP VIEW refs AS SELECT host, unnest(hash_ids) AS id, "
            "unnest(list_prepend(CAST(-1 AS BIGINT), list_slice(hash_ids, 1, len(hash_ids) - 1))) AS parent FROM requests"
        )
        # Pooled misses and the closure check in one aggregation: one row per id, its smallest and largest parent.
        distinct, violations, lowest, nulls = connection.execute(
            "SELECT count(*) FILTER (WHERE id IS NOT NULL), count(*) FILTER (WHERE first <> last), min(id), "
            "       count(*) FILTER (WHERE id IS NULL) "
            "FROM (SELECT id, min(parent) AS first, max(parent) AS last FROM refs GROUP BY id)"
        ).fetchall()[0]
        if violations or nulls or (lowest is not None and lowest < 0):
            _name_the_error(source)
        per_host = []
        if policy is not None:  # per-host misses: distinct (host, id) pairs, counted per host
            per_host = connection.execute(
                "SELECT host, count(*) FROM (SELECT DISTINCT host, id FROM refs) GROUP BY host"
            ).fetchall()
        tally = words = None
        if measure is not None:
            tally, words = _measure(
                connection,
                source,
                n_requests,
                measure,
                per_host=measure.per_host and policy is not None,
            )
    except duckdb.ConversionException:
        _name_the_error(source)  # e.g. an unsigned id above 2**63-1
        raise
    except duckdb.Error as error:
        raise located(
            name, None, f"DuckDB could not count this trace: {str(error).splitlines()[0]}"
        ) from None
    references = int(sum(refs for _, _, refs, _ in per_request))
    if policy is None:
        return FleetCounts(references, int(distinct), measured=tally, weights_source=words)
    requests = np.zeros(fleet, dtype=np.int64)
    refs = np.zeros(fleet, dtype=np.int64)
    host_distinct = np.zeros(fleet, dtype=np.int64)
    for h, n, r, _ in per_request:
        requests[h], refs[h] = n, r
    for h, d in per_host:
        host_distinct[h] = d
    return FleetCounts(
        references,
        int(distinct),
        requests,
        refs,
        host_distinct,
        measured=tally,
        weights_source=words,
    )


def _measure(connection, source, n_requests: int, measure: Measure, per_host: bool):
    """The measured requests' tally (:class:`pyverify.sim.accounting.Tally`) and what the token weights came from."""
    from pyverify.sim.accounting import Tally
    from pyverify.sim.tokens import describe_weights, short_prompt_error

    first = measure.window.first_measured(n_requests)
    b = measure.block_size
    cache = "host" if per_host else "0"
    connection.execute(
        f"CREATE TEMP VIEW positioned AS SELECT row, {cache} AS cache, total, len(hash_ids) AS k, "
        "unnest(hash_ids) AS id, unnest(range(1, len(hash_ids) + 1)) AS position FROM requests"
    )
    # Hits: references of the measured requests whose block their cache saw in an earlier request.
    hit = "p.row > seen.first_row"
    weight = (
        "1"
        if b is None
        else f"CASE WHEN p.total IS NULL OR p.position < p.k THEN {b} ELSE least({b}, p.total - {b} * (p.k - 1)) END"
    )
    refs, hits, tokens, token_hits = connection.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {hit}), sum({weight}), sum({weight}) FILTER (WHERE {hit}) "
        f"FROM positioned p JOIN (SELECT cache, id, min(row) AS first_row FROM positioned GROUP BY cache, id) seen "
        f"  ON p.cache = seen.cache AND p.id = seen.id WHERE p.row >= {first}"
    ).fetchall()[0]
    if b is None:
        return Tally(first, n_requests - first, int(refs), int(hits or 0), None, None), None
    short = connection.execute(
        f"SELECT row, len(hash_ids), total FROM requests WHERE total IS NOT NULL "
        f"AND total <= {b} * (len(hash_ids) - 1) ORDER BY row LIMIT 1"
    ).fetchall()
    if short:
        raise short_prompt_error(getattr(source, "name", str(source)), *short[0], b)
    # What the weights came from, over the whole trace, as pyverify.sim.tokens.weights_of_lengths says it.
    lengths, unsized, partial, uncached, tails = connection.execute(
        f"SELECT count(*) FILTER (WHERE total IS NOT NULL), count(*) FILTER (WHERE total IS NULL), "
        f"       count(*) FILTER (WHERE total - {b} * (len(hash_ids) - 1) < {b}), "
        f"       count(*) FILTER (WHERE total > {b} * len(hash_ids)), "
        f"       sum(greatest(0, total - {b} * len(hash_ids))) FILTER (WHERE row >= {first}) FROM requests"
    ).fetchall()[0]
    sources = ({"input_tokens"} if lengths else set()) | ({"block size"} if unsized else set())
    everything = int(tokens or 0) + int(tails or 0)
    source_words = describe_weights(sources, b, partial=bool(partial), uncached=bool(uncached))
    return Tally(
        first, n_requests - first, int(refs), int(hits or 0), everything, int(token_hits or 0)
    ), source_words


def _register(connection, source) -> set[str]:
    """Make a view ``source(row, hash_ids[, host][, route_key])``; return the columns the trace has."""
    if isinstance(source, ColumnarTrace):
        pa = require("pyarrow")
        arrays = {
            "row": pa.array(np.arange(source.n_requests, dtype=np.int64)),
            "hash_ids": pa.ListArray.from_arrays(pa.array(source.offsets), pa.array(source.ids)),
        }
        if source.routing is not None:
            arrays["host"] = pa.array(source.routing)
        if source.route_keys is not None:
            arrays["route_key"] = pa.array(source.route_keys, type=pa.string())
        if (
            source.input_tokens is not None
        ):  # float64 with NaN where a request gives no prompt length
            given = ~np.isnan(source.input_tokens)
            arrays["input_length"] = pa.array(
                np.where(given, source.input_tokens, 0).astype(np.int64), mask=~given
            )
        connection.register("trace_arrow", pa.table(arrays))
        connection.execute("CREATE TEMP VIEW source AS SELECT * FROM trace_arrow")
        return set(arrays)
    pq = require("pyarrow.parquet")
    pa = require("pyarrow")
    try:
        schema = pq.read_schema(str(source))
    except (OSError, pa.ArrowException) as error:
        raise located(source, None, f"cannot read as Parquet: {error}") from None
    kind = schema.field("hash_ids").type if "hash_ids" in schema.names else None
    if (
        kind is None
        or not (pa.types.is_list(kind) or pa.types.is_large_list(kind))
        or not pa.types.is_integer(kind.value_type)
    ):
        _name_the_error(source)
    extra = [name for name in ("host", "route_key", "input_length") if name in schema.names]
    path = str(source).replace("'", "''")
    # Unsigned or narrower ids become BIGINT; an id above 2**63-1 fails the cast and is then located.
    ids = "hash_ids" if kind.value_type == pa.int64() else "CAST(hash_ids AS BIGINT[]) AS hash_ids"
    connection.execute(
        f"CREATE TEMP VIEW source AS SELECT file_row_number AS row, {ids}"
        f"{''.join(', ' + name for name in extra)} FROM read_parquet('{path}', file_row_number = true)"
    )
    return {"row", "hash_ids", *extra}


def _host_expression(
    connection, policy, fleet, seed, n_requests, columns, source
) -> tuple[str, str]:
    """``(expression, join)``: a request's host under ``policy`` in SQL (see :mod:`pyverify.engines.routing`)."""
    if policy is None:
        return "0", ""
    if policy == "round-robin":
        return f"source.row % {fleet}", ""
    if policy == "prefix-hash":
        return f"{STABLE_HASH.format(key='CAST(source.hash_ids[1] AS VARCHAR)')} % {fleet}", ""
    if policy == "route-key":
        missing = None
        if "route_key" in columns:
            missing = connection.execute(
                "SELECT min(row) FROM source WHERE route_key IS NULL"
            ).fetchall()[0][0]
        else:
            missing = 0
        if missing is not None:
            raise UserError(
                f"routing policy 'route-key' needs a route_key on every request; requests[{missing}] has none"
                " (traces carry none: try prefix-hash)"
            )
        return f"{STABLE_HASH.format(key='source.route_key')} % {fleet}", ""
    if policy == "random":
        pa = require("pyarrow")
        table = pa.table(
            {
                "row": pa.array(np.arange(n_requests, dtype=np.int64)),
                "host": pa.array(random_hosts(n_requests, fleet, seed)),
            }
        )
        connection.register("random_hosts", table)
        return "random_hosts.host", "JOIN random_hosts ON random_hosts.row = source.row"
    if policy in ("given", "fold"):
        if "host" not in columns:
            raise UserError(
                f"routing policy {policy!r} needs an instance that gives a host for every request; this one gives none"
            )
        own = connection.execute(
            "SELECT max(host) + 1, count(*) FILTER (WHERE host IS NULL OR host < 0) FROM source"
        ).fetchall()[0]
        if own[1]:
            _name_the_error(source)
        if policy == "given":
            if fleet != own[0]:
                raise UserError(
                    f"routing policy 'given' works only at the instance's own fleet size {own[0]}, not {fleet}"
                )
            return "source.host", ""
        if not 1 <= fleet <= own[0]:
            raise UserError(
                f"routing policy 'fold' shrinks the instance's fleet: fleet size {fleet} must be between 1 and {own[0]}"
            )
        return f"source.host % {fleet}", ""
    raise UserError(f"unknown routing policy {policy!r}")


def _name_the_error(source) -> None:
    """Read the trace with the in-memory reader, which raises the located error the numpy path gives."""
    if not isinstance(source, ColumnarTrace):
        read_parquet(source)
    raise located(
        getattr(source, "name", source),
        None,
        "the trace failed a check that the in-memory reader did not reproduce",
    )


__all__ = ["count", "connect"]
