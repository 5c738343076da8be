"""The distributed engine: the same counts, and per-host LRU curves, on a dask.distributed cluster.

Uses dask.distributed futures (https://distributed.dask.org/): plain numpy
functions submitted to workers, no dataframe layer.

Counts, in two rounds:

1. **map**, one task per piece of the trace (a Parquet row group, or a slice
   of an in-memory trace): compute each request's host (the rules of
   :mod:`pyverify.engines.routing`, from the piece's first global row), each
   reference's parent, the per-host request and reference counts, and split
   the references into ``B`` buckets by ``id % B``;
2. **reduce**, one task per bucket: all references to the ids of the bucket
   meet there, so the bucket checks prefix closure for them (one parent per
   id), counts its distinct ids and its distinct (host, id) pairs per host.

The client adds the buckets' counts. Nothing but counts travels back.

Per-host LRU curves under a static routing (:func:`lru_curves`): the map
round splits references by host instead, and one reduce task per host runs
:func:`pyverify.sim.mrc.stack_distances` over that host's sub-trace (in trace
order) and returns its histogram: hosts are independent under a static
routing, so they run in parallel on different workers; the fleet's curve is
the sum (:mod:`pyverify.sim.mrc` explains why this is exact).

A Parquet file is read by the workers themselves, so on a real cluster its
path must be visible to every worker (a shared file system); an in-memory
trace is scattered to the workers from the client. With no scheduler
address, a local cluster of two worker processes is started and stopped.
Prefix-affinity routing is sequential over the fleet and is refused
(:data:`pyverify.engines.routing.ONE_MACHINE`).
"""

from __future__ import annotations

import operator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from pyverify.engines.counts import FleetCounts
from pyverify.engines.routing import ONE_MACHINE, STATIC_POLICIES, hash_hosts, random_hosts
from pyverify.errors import UserError, located
from pyverify.inputs.columnar import (
    ColumnarTrace,
    open_parquet,
    parents_of,
    parquet_errors,
    read_parquet,
    require,
    row_group_ids,
)
from pyverify.sim.mrc import COLD, MissRatioCurve, stack_distances

#: Requests per piece when an in-memory trace is split for the workers.
PIECE_REQUESTS = 1 << 18
#: Reduce buckets per worker.
BUCKETS_PER_WORKER = 2


@contextmanager
def client_for(scheduler: str | None) -> Iterator[Any]:
    """A dask.distributed client: to ``scheduler`` if given, else to a new local cluster of two workers."""
    distributed = require("distributed")
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as error:
            raise UserError(
                f"--scheduler: cannot reach the dask scheduler at {scheduler}: {error}"
            ) from None
        try:
            yield client
        finally:
            client.close()
        return
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        with distributed.Client(cluster) as client:
            yield client


# --------------------------------------------------------------------------
# Pieces of a trace: what one map task reads
# --------------------------------------------------------------------------


def _pieces(client, source) -> list[tuple[Any, int, int]]:
    """``(piece, first_row, n_rows)`` per piece: a (path, row group) or a scattered dict of arrays."""
    if isinstance(source, ColumnarTrace):
        pieces = []
        for start in range(0, source.n_requests, PIECE_REQUESTS):
            end = min(start + PIECE_REQUESTS, source.n_requests)
            first, last = int(source.offsets[start]), int(source.offsets[end])
            data = {
                "ids": source.ids[first:last],
                "offsets": source.offsets[start : end + 1] - first,
                "hosts": None if source.routing is None else source.routing[start:end],
                "route_keys": None if source.route_keys is None else source.route_keys[start:end],
            }
            pieces.append(
                (client.scatter([data], hash=False)[0], start, end - start)
            )  # a list: a dict would name futures by its keys
        return pieces
    metadata = open_parquet(source).metadata
    pieces, row = [], 0
    for group in range(metadata.num_row_groups):
        rows = metadata.row_group(group).num_rows
        pieces.append(((str(source), group), row, rows))
        row += rows
    return pieces


def _load(piece) -> dict[str, Any]:
    """The arrays of one piece (on a worker)."""
    if isinstance(piece, dict):
        return piece
    import pyarrow.parquet as pq

    path, group = piece
    handle = pq.ParquetFile(path)
    try:
        # Decoded a few thousand requests at a time into one array, as the in-memory reader reads every group:
        # decoding the whole group at once held its pages, indices and output together (4x the ids).
        ids, offsets = row_group_ids(handle, group, path)
    except (
        UserError
    ) as error:  # a null, an empty chain, an id out of range: the client names it (_name_the_error)
        raise ValueError(str(error)) from None
    data = {"ids": ids, "offsets": offsets, "hosts": None, "route_keys": None}
    others = [name for name in ("host", "route_key") if name in handle.schema_arrow.names]
    if others:
        table = handle.read_row_group(group, columns=others)
        if "host" in others:
            data["hosts"] = table.column("host").to_numpy().astype(np.int64)
        if "route_key" in others:
            data["route_keys"] = table.column("route_key").to_pylist()
    return data


def _hosts(
    data, first_row: int, fleet: int, policy: str | None, given: np.ndarray | None
) -> np.ndarray:
    """Each request's host in this piece (rules: :mod:`pyverify.engines.routing`)."""
    n = data["offsets"].size - 1
    if policy is None:
        return np.zeros(n, dtype=np.int64)
    if policy == "round-robin":
        return (first_row + np.arange(n, dtype=np.int64)) % fleet
    if policy == "random":
        return given
    if policy == "prefix-hash":
        return hash_hosts([str(b) for b in data["ids"][data["offsets"][:-1]].tolist()], fleet)
    if policy == "route-key":
        keys = data["route_keys"]
        if keys is None or any(key is None for key in keys):
            missing = first_row + (
                0 if keys is None else next(i for i, key in enumerate(keys) if key is None)
            )
            raise LookupError(
                f"routing policy 'route-key' needs a route_key on every request; requests[{missing}] has none"
                " (traces carry none: try prefix-hash)"
            )
        return hash_hosts(keys, fleet)
    hosts = data["hosts"]
    if hosts is None:
        raise LookupError(
            f"routing policy {policy!r} needs an instance that gives a host for every request; this one gives none"
        )
    return hosts if policy == "given" else hosts % fleet


def _checked(data) -> None:
    lengths = np.diff(data["offsets"])
    if lengths.size and (lengths.min() < 1 or (data["ids"].size and data["ids"].min() < 0)):
        raise ValueError("bad piece")


def _map_counts(piece, first_row: int, fleet: int, policy: str | None, given, buckets: int):
    """One piece: per-host request/reference counts, and its references split into buckets by id."""
    data = _load(piece)
    _checked(data)
    hosts = _hosts(data, first_row, fleet, policy, given)
    lengths = np.diff(data["offsets"])
    requests = np.bincount(hosts, minlength=fleet)
    references = np.bincount(hosts, weights=lengths, minlength=fleet).astype(np.int64)
    ids = data["ids"]
    parents = parents_of(ids, data["offsets"])
    ref_hosts = np.repeat(hosts, lengths)
    bucket = ids % buckets
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(buckets + 1))
    parts = [
        (ids[order[a:b]], parents[order[a:b]], ref_hosts[order[a:b]])
        for a, b in zip(bounds[:-1], bounds[1:])
    ]
    return (requests, references, parts)


def _reduce_counts(fleet: int, *parts) -> tuple[bool, int, np.ndarray]:
    """One bucket: ``(closed, distinct ids, distinct ids per host)``."""
    ids = np.concatenate([p[0] for p in parts])
    if ids.size == 0:
        return True, 0, np.zeros(fleet, dtype=np.int64)
    parents = np.concatenate([p[1] for p in parts])
    hosts = np.concatenate([p[2] for p in parts])
    unique, dense = np.unique(ids, return_inverse=True)
    # One parent per id: the smallest and the largest parent seen for each id agree.
    low = np.full(unique.size, np.iinfo(np.int64).max)
    high = np.full(unique.size, np.iinfo(np.int64).min)
    np.minimum.at(low, dense, parents)
    np.maximum.at(high, dense, parents)
    pairs = np.unique(dense.astype(np.int64) * fleet + hosts)
    return (
        bool(np.array_equal(low, high)),
        int(unique.size),
        np.bincount(pairs % fleet, minlength=fleet).astype(np.int64),
    )


def count(
    source: str | Path | ColumnarTrace,
    fleet_size: int | None = None,
    policy: str | None = None,
    seed: int = 0,
    scheduler: str | None = None,
) -> FleetCounts:
    """Pooled counts (``policy=None``), or pooled and per-host counts, on a dask cluster."""
    if policy == "prefix-affinity":
        raise UserError(ONE_MACHINE)
    if policy is not None and policy not in STATIC_POLICIES:
        raise UserError(
            f"unknown routing policy {policy!r}; choose one of: {', '.join(STATIC_POLICIES)}"
        )
    fleet = fleet_size or 1
    _check_static(source, fleet, policy)
    with client_for(scheduler) as client:
        return _count_on(client, source, fleet, policy, seed)


def _count_on(client, source, fleet: int, policy: str | None, seed: int) -> FleetCounts:
    pieces = _pieces(client, source)
    total = sum(rows for *_, rows in pieces)
    chosen = random_hosts(total, fleet, seed) if policy == "random" else None
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    buckets = BUCKETS_PER_WORKER * workers
    mapped = [
        client.submit(
            _map_counts,
            piece,
            first,
            fleet,
            policy,
            None if chosen is None else chosen[first : first + rows],
            buckets,
            pure=False,
        )
        for piece, first, rows in pieces
    ]
    reduced = [
        client.submit(
            _reduce_counts,
            fleet,
            *[client.submit(_part, m, b, pure=False) for m in mapped],
            pure=False,
        )
        for b in range(buckets)
    ]
    try:
        heads = client.gather([client.submit(_head, m, pure=False) for m in mapped])
        results = client.gather(reduced)
    except LookupError as error:
        raise UserError(str(error)) from None
    except ValueError:
        _name_the_error(source)
        raise
    if not all(closed for closed, _, _ in results):
        _name_the_error(source)
    requests = sum(h[0] for h in heads)
    references = sum(h[1] for h in heads)
    distinct = sum(d for _, d, _ in results)
    if policy is None:
        return FleetCounts(int(references.sum()), distinct)
    per_host = sum(p for _, _, p in results)
    return FleetCounts(
        int(references.sum()), distinct, requests.astype(np.int64), references, per_host
    )


def _part(mapped, bucket: int):
    return mapped[2][bucket]


def _head(mapped):
    return mapped[0], mapped[1]


def _check_static(source, fleet: int, policy: str | None) -> None:
    """The fleet-size rules of 'given' and 'fold', checked on the client before any work is sent."""
    if policy not in ("given", "fold"):
        return
    if isinstance(source, ColumnarTrace):
        hosts = source.routing
    else:
        pq = require("pyarrow.parquet")
        names = open_parquet(source).schema_arrow.names
        with parquet_errors(source):
            hosts = (
                pq.read_table(str(source), columns=["host"]).column("host").to_numpy()
                if "host" in names
                else None
            )
    if hosts is None:
        raise UserError(
            f"routing policy {policy!r} needs an instance that gives a host for every request; this one gives none"
        )
    own = int(np.max(hosts)) + 1
    if policy == "given" and fleet != own:
        raise UserError(
            f"routing policy 'given' works only at the instance's own fleet size {own}, not {fleet}"
        )
    if policy == "fold" and not 1 <= fleet <= own:
        raise UserError(
            f"routing policy 'fold' shrinks the instance's fleet: fleet size {fleet} must be between 1 and {own}"
        )


def _name_the_error(source) -> None:
    if not isinstance(source, ColumnarTrace):
        read_parquet(source)
    raise located(
        getattr(source, "name", source),
        None,
        "the trace failed a check that the in-memory reader did not reproduce",
    )


# --------------------------------------------------------------------------
# Per-host LRU curves, host by host
# --------------------------------------------------------------------------


def _map_by_host(piece, first_row: int, fleet: int, policy: str, given):
    data = _load(piece)
    _checked(data)
    hosts = _hosts(data, first_row, fleet, policy, given)
    ref_hosts = np.repeat(hosts, np.diff(data["offsets"]))
    order = np.argsort(ref_hosts, kind="stable")  # each host's references, in trace order
    bounds = np.searchsorted(ref_hosts[order], np.arange(fleet + 1))
    return [data["ids"][order[a:b]] for a, b in zip(bounds[:-1], bounds[1:])]


def _host_histogram(*parts) -> tuple[int, int, np.ndarray]:
    """One host's sub-trace: ``(references, cold misses, histogram of stack distances)``."""
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if ids.size == 0:
        return 0, 0, np.zeros(0, dtype=np.int64)
    distances = stack_distances(ids)
    cold = int(np.count_nonzero(distances == COLD))
    reused = distances[distances != COLD]
    return int(ids.size), cold, np.bincount(reused) if reused.size else np.zeros(0, dtype=np.int64)


def lru_curves(
    source: str | Path | ColumnarTrace,
    fleet_size: int,
    policy: str,
    seed: int = 0,
    scheduler: str | None = None,
) -> MissRatioCurve:
    """The exact per-host LRU curve (every host C blocks) under a static routing, host by host on the cluster.

    Equal to :func:`pyverify.sim.mrc.lru_curve` with the same routing. The
    trace is validated first by :func:`count` (same cluster).
    """
    if policy == "prefix-affinity" or policy not in STATIC_POLICIES:
        raise UserError(
            ONE_MACHINE if policy == "prefix-affinity" else f"unknown routing policy {policy!r}"
        )
    _check_static(source, fleet_size, policy)
    with client_for(scheduler) as client:
        _count_on(
            client, source, fleet_size, policy, seed
        )  # validation: closure, ids, routing rules
        pieces = _pieces(client, source)
        total = sum(rows for *_, rows in pieces)
        chosen = random_hosts(total, fleet_size, seed) if policy == "random" else None
        mapped = [
            client.submit(
                _map_by_host,
                piece,
                first,
                fleet_size,
                policy,
                None if chosen is None else chosen[first : first + rows],
                pure=False,
            )
            for piece, first, rows in pieces
        ]
        per_host = [
            client.submit(
                _host_histogram,
                *[client.submit(operator.getitem, m, h, pure=False) for m in mapped],
                pure=False,
            )
            for h in range(fleet_size)
        ]
        results = client.gather(per_host)
    size = max((hist.size for _, _, hist in results), default=0)
    histogram = np.zeros(size, dtype=np.int64)
    for _, _, hist in results:
        histogram[: hist.size] += hist
    return MissRatioCurve(
        references=sum(r for r, _, _ in results),
        cold=sum(c for _, c, _ in results),
        histogram=histogram,
        caches=fleet_size,
    )


__all__ = ["client_for", "count", "lru_curves"]
