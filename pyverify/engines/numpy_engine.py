"""The in-memory engine: the counts by numpy on a :class:`~pyverify.inputs.columnar.ColumnarTrace`.

Pooled misses come from :func:`pyverify.sim.counting.pooled_misses` (marking
ids in a table). Per host, the same table is widened to one column per host
(key ``id * F + host``, as :func:`pyverify.sim.counting.per_host_misses`
does) and counted column by column, which gives each host's distinct blocks
for the reuse report as well as their sum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pyverify.engines.compiled_misses import compiled_first_references
from pyverify.inputs.columnar.compiled import numba_loaded
from pyverify.threads import on_cores
from pyverify.inputs.columnar import ColumnarTrace
from pyverify.cache.arrays import dense_ids
from pyverify.sim.counting import CHUNK, pooled_misses, reference_hosts, sums_per_request

if TYPE_CHECKING:
    from pyverify.engines.counts import FleetCounts

#: Largest (ids x hosts) table marked directly (bytes); past it, keys are sorted instead.
TABLE_LIMIT = 1 << 32


def host_distinct(ids: np.ndarray, ref_hosts: np.ndarray, fleet_size: int) -> np.ndarray:
    """Distinct blocks per host: ``result[h] = #{b : (h, b) is referenced}``."""
    ids, universe = dense_ids(ids)
    if universe * fleet_size <= TABLE_LIMIT:
        seen = np.zeros(universe * fleet_size, dtype=bool)
        for start in range(0, ids.size, CHUNK):
            key = ids[start : start + CHUNK].astype(np.int64) * fleet_size
            key += ref_hosts[start : start + CHUNK]
            seen[key] = True
        return seen.reshape(universe, fleet_size).sum(axis=0, dtype=np.int64)
    keys = np.unique(ids.astype(np.int64) * fleet_size + ref_hosts)
    return np.bincount(keys % fleet_size, minlength=fleet_size).astype(np.int64)


#: :func:`first_references` finds first references in a table of positions indexed by (id, cache) while the
#: table has at most this many entries per reference (or KEY_TABLE_MIN in all), else by sorting the keys.
KEY_TABLE_FACTOR = 8
KEY_TABLE_MIN = 1 << 22


def first_references(
    ids: np.ndarray, cache_of_reference: np.ndarray | None = None, fleet_size: int = 1
) -> np.ndarray:
    """Whether each reference is the first of its (cache, block) pair in trace order (bool, one per reference).

    Uncapacitated, exactly those references miss: a cache that never evicts
    holds every block it has fetched, and on a prefix-closed trace a held
    block's parents are held too, so the hit prefix is every held block.
    ``cache_of_reference``: each reference's cache (``None``: one pooled cache).
    """
    n = ids.size
    dense, universe = dense_ids(ids)
    if n == 0:
        return np.zeros(0, dtype=bool)
    if universe > max(KEY_TABLE_FACTOR * n, KEY_TABLE_MIN):  # too sparse for a table: sort the keys
        keys = (
            dense.astype(np.int64)
            if cache_of_reference is None
            else dense.astype(np.int64) * fleet_size + cache_of_reference
        )
        first = np.zeros(n, dtype=bool)
        _, where = np.unique(keys, return_index=True)  # the index of each key's first occurrence
        first[where] = True
        return first
    compiled = compiled_first_references(dense, universe, cache_of_reference, fleet_size)
    if compiled is not None:
        return compiled
    kind = np.int32 if n < np.iinfo(np.int32).max else np.int64
    earliest = np.empty(
        universe, dtype=kind
    )  # a table of positions indexed by block id, no sort (int32: 4 bytes per id)
    if cache_of_reference is None or fleet_size == 1:
        return _first_in_table(earliest, dense)
    # One cache at a time, through the same table of one entry per block: a table of (block, cache) keys
    # (16 hosts x 2M blocks = 128 MiB) is touched on nearly every page, and faulting them in took most of a
    # per-host count; a table of blocks stays small enough to be reused warm.
    order = np.argsort(
        cache_of_reference.astype(np.int16)
        if fleet_size <= np.iinfo(np.int16).max
        else cache_of_reference,
        kind="stable",
    )  # references grouped by cache, each group in trace order (a radix sort for int16)
    bounds = np.searchsorted(cache_of_reference[order], np.arange(fleet_size + 1))
    first = np.empty(n, dtype=bool)
    for begin, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        positions = order[begin:end].astype(kind)
        first[positions] = _first_in_table(earliest, dense[positions], positions)
    return first


#: References per step of :func:`_first_in_table`: its temporaries (positions, the read-back) stay a few MB.
TABLE_STEP = 1 << 16


def _first_in_table(
    earliest: np.ndarray, keys: np.ndarray, positions: np.ndarray | None = None, clear: bool = True
) -> np.ndarray:
    """Whether each ``positions[i]`` (increasing; ``None``: ``0, 1, 2, ...``) is the earliest of its key;
    ``earliest``: scratch indexed by key. ``clear=False``: the caller vouches that the table holds, at these
    keys, only positions earlier in the same sequence or entries past every one of ``positions``, and it is
    not cleared (a minimum replaces such an entry as it would an empty one).

    The keys are taken :data:`TABLE_STEP` at a time, in order: a step's positions are all later than the
    steps before, so once a step has written its minima, a key's entry holds its earliest position if that
    position is in this step or before. Then the step's temporaries are small and the trace is read
    once, not once per pass: at 20M references three whole-trace passes with a position array took 0.34 s
    in a fresh process (0.19 s once their pages were warm), these steps 0.09 s. The table is cleared by one
    sequential fill when it is no bigger than the keys, else at the keys that occur (only they are read).
    """
    if clear and earliest.size <= keys.size:
        earliest.fill(np.iinfo(earliest.dtype).max)
    elif clear:
        earliest[keys] = np.iinfo(earliest.dtype).max
    first = np.empty(keys.size, dtype=bool)
    for start in range(0, keys.size, TABLE_STEP):
        end = min(start + TABLE_STEP, keys.size)
        step = keys[start:end]
        at = (
            np.arange(start, end, dtype=earliest.dtype)
            if positions is None
            else positions[start:end]
        )
        np.minimum.at(earliest, step, at)
        np.equal(earliest[step], at, out=first[start:end])
    return first


def uncapacitated_hits(
    ids: np.ndarray, offsets: np.ndarray, cache_of: np.ndarray | None = None, fleet_size: int = 1
) -> np.ndarray:
    """Hits per request (int64) of uncapacitated demand caches, ``cache_of[i]`` request i's (``None``: pooled):
    ``simulate(...).hit_blocks`` without a capacity, computed without a replay."""
    lengths = np.diff(offsets)
    if lengths.size == 0:
        return np.zeros(0, dtype=np.int64)
    if cache_of is not None and fleet_size > 1:
        misses = _per_host_misses(ids, offsets, lengths, cache_of, fleet_size)
        if misses is not None:
            return lengths - misses
    per_reference = None if cache_of is None else reference_hosts(cache_of, lengths)
    first = first_references(ids, per_reference, fleet_size)
    return lengths - sums_per_request(first, offsets)


#: From this many references :func:`_per_host_misses` marks the hosts on two threads (at 5M references over
#: 16 hosts, 0.052-0.056 s against 0.062-0.064 s on one); below, starting them costs more than they save.
THREADED_MIN = 2_000_000


#: Requests per step of :func:`_per_host_misses` (about 120k references of a Mooncake trace: a few MB of
#: temporaries). At 20M references (first calls in fresh processes) steps of 1Ki, 4Ki, 16Ki and 64Ki
#: requests took 0.21-0.25, 0.20-0.22, 0.21-0.25 and 0.25-0.36 s.
HOST_STEP = 1 << 12


def _per_host_misses(
    ids: np.ndarray, offsets: np.ndarray, lengths: np.ndarray, cache_of: np.ndarray, fleet_size: int
) -> np.ndarray | None:
    """Misses per request of uncapacitated per-host caches, counted with the trace laid out host by host;
    ``None`` where :func:`first_references` counts better (numba loaded, or ids too sparse for a table).

    A request's references all go to its host, so grouping the *requests* by host (a sort of one key per
    request) lays the references out host by host with each request still contiguous: at 20M references
    over 16 hosts this took half the time of sorting the references by host. The layout is never built
    whole: :data:`HOST_STEP` requests at a time, their block ids are gathered, their first references
    found in a table of layout positions, and their misses summed, every temporary small enough to stay in
    cache. Within a host the steps go in layout order, as :func:`_first_in_table`'s own steps do. One table
    serves every host with no clearing between them: the hosts are taken from the last (in the layout) to
    the first, so an entry a later host left holds a position past every one of this host's, and a step's
    minimum replaces it as it would an empty entry.
    At 20M references (first call in a fresh process) this took 0.18-0.22 s against 0.20-0.34 s for a
    gather of each host's ids whole and a clearing of the table per host.
    """
    n = ids.size
    dense, universe = dense_ids(ids)
    if n == 0 or universe > max(KEY_TABLE_FACTOR * n, KEY_TABLE_MIN) or numba_loaded():
        return None
    kind = np.int32 if n < np.iinfo(np.int32).max else np.int64
    order = np.argsort(
        cache_of, kind="stable"
    )  # requests grouped by host, each group in trace order
    grouped_lengths = lengths[order]
    grouped_offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(grouped_lengths, out=grouped_offsets[1:])
    shift = (
        offsets[:-1][order] - grouped_offsets[:-1]
    )  # reference k of the layout is trace reference k + shift
    host_requests = np.searchsorted(cache_of[order], np.arange(fleet_size + 1)).tolist()
    misses = np.empty(lengths.size, dtype=np.int64)

    def mark(hosts: range) -> None:
        earliest = np.full(universe, np.iinfo(kind).max, dtype=kind)  # one table per thread
        for host in reversed(hosts):
            for low in range(host_requests[host], host_requests[host + 1], HOST_STEP):
                high = min(low + HOST_STEP, host_requests[host + 1])  # requests order[low:high]
                begin, end = int(grouped_offsets[low]), int(grouped_offsets[high])
                if end == begin:
                    continue
                at = np.arange(
                    begin, end, dtype=kind
                )  # layout positions, increasing step after step
                where_from = np.repeat(shift[low:high], grouped_lengths[low:high])
                where_from += at
                first = _first_in_table(earliest, dense.take(where_from), at, clear=False)
                misses[order[low:high]] = sums_per_request(
                    first, grouped_offsets[low : high + 1] - begin
                )

    if n < THREADED_MIN:
        mark(range(fleet_size))
    else:  # numpy lets go of the GIL in the gathers and scatters: half the hosts (fleet_size >= 2) on each of two threads
        half = int(
            np.searchsorted(grouped_offsets[host_requests], n // 2)
        )  # hosts split at half the references
        half = min(max(half, 1), fleet_size - 1)
        on_cores(mark, (range(half), range(half, fleet_size)))
    return misses


def count(
    trace: ColumnarTrace, hosts: np.ndarray | None = None, fleet_size: int = 1
) -> "FleetCounts":
    """Pooled counts, and per-host counts when ``hosts`` (one per request) is given."""
    from pyverify.engines.counts import (
        FleetCounts,
        fleet_counts,
    )  # the count engines' results: not simulate's

    distinct = pooled_misses(trace.ids)
    if hosts is None:
        return FleetCounts(trace.n_references, distinct)
    lengths = trace.lengths
    per_host = host_distinct(trace.ids, reference_hosts(hosts, lengths), fleet_size)
    return fleet_counts(hosts, lengths, fleet_size, trace.n_references, distinct, per_host)


__all__ = ["count", "first_references", "host_distinct", "uncapacitated_hits"]
