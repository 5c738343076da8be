r"""Belady's MIN on the flattened block sequence: the fewest misses with a memory limit.

The searcher behind capacitated certificates at trace scale and behind the
optimum in reports. Its optimality for pyverify's prefix caches rests on two
results, argued in full in ``docs/min-flat-relaxation.md``:

* **Belady's theorem** (Belady 1966; Mattson, Gecsei, Slutz, Traiger 1970): for
  a flat paging cache of ``C`` blocks that may bypass (need not keep what it
  fetches), keeping after each reference the ``C`` *live* blocks whose next
  use comes soonest -- and dropping blocks never used again -- misses the
  fewest times of any run.
* **The flat relaxation** (this project; argued in the doc, tested here
  against CP-SAT and exhaustive search, to be proved in Lean): on a
  prefix-closed trace whose requests hit on their longest resident prefix,
  the optimum of the prefix cache equals that flat optimum. Direction (>=):
  the canonical run of any prefix-cache run (keep a block only while its
  next use is a hit) is a flat run with the same hits, because within a
  request its hits come before its misses, so it never holds more than
  ``C`` blocks between two references either. Direction (<=): at every
  request boundary MIN holds the parent of every block it holds (a child's
  next use is always preceded, one position earlier, by its parent's), so
  its flat hits are a longest resident prefix and its run is a prefix-cache
  run.

Where it needs care (the doc gives each the detail):

* *Ties.* Every position of the sequence references one block, so live
  blocks never share a next use: MIN's choice among live blocks is unique.
  Blocks never used again are dropped at once; they cannot hit, so keeping
  them (with any tie rule, e.g. deeper first) would change no count. Here
  they are always dropped, which also keeps the witness small.
* *Mid-request.* A child can be held without its parent *between* the two
  positions of one request (parent just referenced and bypassed, child
  referenced next); never at a request boundary, which is all the prefix
  model sees.
* *C smaller than a chain*: nothing in the argument needs ``C >= k``; the
  block of the current reference always outlives the chain's later blocks,
  so MIN never evicts a block the same request is about to read.
* *Bypass* is essential: demand MIN (which must keep the block just fetched)
  would, at C = 1, keep a chain's last block without its parent.

Per host under a static routing, each host's requests are a prefix-closed
sub-trace read by that host alone, so the fleet's optimum is the sum of the
per-host MIN counts; :func:`min_run` runs one MIN per cache in one pass.

Cost: O(n log n) for n block references (a heap of next uses with lazy
deletion), memory O(n) (the next-use array) plus O(C) per cache.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pyverify.optimal.compiled import kernel
from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.counting import sums_per_request


class FlatRelaxationViolated(AssertionError):
    """MIN's flat hits were not a prefix of a request: the argument above would be wrong."""


@dataclass(frozen=True)
class MinRun:
    """MIN's run in certificate form, and its misses."""

    cache_of: tuple[int, ...]
    hit_blocks: tuple[int, ...]
    dropped: tuple[
        tuple[int, ...], ...
    ]  # per request, what its cache lets go right after it (sorted)
    misses: int
    references: int

    def as_witness(self) -> dict:
        return {
            "cache_of": list(self.cache_of),
            "hit_blocks": list(self.hit_blocks),
            "dropped": [list(d) for d in self.dropped],
        }


def next_uses(keys: np.ndarray) -> np.ndarray:
    """``next[i]``: the next position holding ``keys[i]``, or ``len(keys)`` if none."""
    n = keys.size
    following = np.full(n, n, dtype=np.int64)
    if n:
        order = np.argsort(keys, kind="stable")  # equal keys stay in trace order
        same = keys[order[1:]] == keys[order[:-1]]
        following[order[:-1][same]] = order[1:][same]
    return following


def min_run(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int] | None = None,
    capacity: int | None = None,
    deadline=None,
) -> MinRun:
    """MIN (bypass form) per cache, on the flat sequence; ``capacity=None`` keeps every live block.

    ``cache_of[t]`` is the cache request t reads (``None``: one pooled cache).
    ``deadline``: an optional callable, called every 1024 requests, that
    raises to stop the run (the certify command's ``--time-limit``).
    """
    ids, lengths = flatten(chains)
    if cache_of is None:
        cache_of = (0,) * len(chains)
    hit_blocks, dropped, misses = min_run_flat(
        ids, lengths, cache_of, capacity, deadline, witness=True
    )
    return MinRun(tuple(cache_of), tuple(hit_blocks), tuple(dropped), misses, int(ids.size))


#: References converted to Python ints at a time: bounds the memory of the loop's lists.
CHUNK = 1 << 20


def min_run_flat(
    ids: np.ndarray,
    lengths: np.ndarray,
    cache_of: Sequence[int] | np.ndarray | None = None,
    capacity: int | None = None,
    deadline=None,
    witness: bool = False,
):
    """MIN on flat arrays (``ids`` of every reference, ``lengths`` of every request): ``(hit_blocks, dropped, misses)``.

    ``dropped`` is None unless ``witness``. Memory: a few int64 arrays of the
    trace's length plus Python lists for :data:`CHUNK` references at a time.
    """
    if capacity is not None and capacity < 1:
        raise ValueError("capacity must be at least 1 block")
    ids = np.asarray(ids, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if not witness and capacity is not None and ids.size and kernel(_hits_one_cache) is not None:
        return _count_compiled(ids, lengths, cache_of, capacity)
    n_requests = lengths.size
    if cache_of is None:
        caches = np.zeros(n_requests, dtype=np.int64)
    else:
        caches = np.asarray(cache_of, dtype=np.int64)
    # A key per (cache, block): next uses are counted within each cache's own sub-sequence.
    fleet = int(caches.max()) + 1 if caches.size else 1
    if fleet == 1:
        following = next_uses(ids)
    else:
        dense, _ = dense_ids(ids)
        following = next_uses(dense.astype(np.int64) * fleet + np.repeat(caches, lengths))
    never = int(ids.size)
    ends = np.cumsum(lengths)

    held: dict[int, dict[int, int]] = {}  # cache -> {block: its next use}
    heaps: dict[
        int, list[tuple[int, int]]
    ] = {}  # cache -> [(-next use, block)], stale entries skipped
    hit_blocks: list[int] = []
    dropped: list[tuple[int, ...]] | None = [] if witness else None
    misses = 0
    first = 0  # first request of the current chunk
    while first < n_requests:
        base = int(ends[first - 1]) if first else 0
        last = max(
            first + 1, int(np.searchsorted(ends, base + CHUNK, side="right"))
        )  # requests [first, last)
        top = int(ends[last - 1])
        chunk_ids = ids[base:top].tolist()
        chunk_next = following[base:top].tolist()
        chunk_lengths = lengths[first:last].tolist()
        chunk_caches = caches[first:last].tolist()
        i = 0
        for r in range(last - first):
            t = first + r
            if deadline is not None and t % 1024 == 0:
                deadline()
            q = chunk_caches[r]
            resident = held.get(q)
            if resident is None:
                resident = held[q] = {}
                heaps[q] = []
            heap = heaps[q]
            hits, missed, gone = 0, False, []
            start = i
            for i in range(start, start + chunk_lengths[r]):
                block = chunk_ids[i]
                if block in resident:
                    if missed:
                        raise FlatRelaxationViolated(
                            f"request {t}: block {block} hits after an earlier block of its chain missed"
                        )
                    hits += 1
                else:
                    missed = True
                when = chunk_next[i]
                if when == never:  # never used again in this cache: drop (or bypass) it now
                    resident.pop(block, None)
                    gone.append(block)
                    continue
                resident[block] = when
                if capacity is None:
                    continue
                heapq.heappush(heap, (-when, block))
                if len(resident) > capacity:
                    # Evict the live block used farthest in the future (possibly the one just fetched).
                    while True:
                        negative_when, victim = heapq.heappop(heap)
                        if resident.get(victim) == -negative_when:
                            break
                    del resident[victim]
                    gone.append(victim)
            i = start + chunk_lengths[r]
            if capacity is not None and len(heap) > 4 * capacity + 64:
                heap[:] = [
                    (-w, b) for b, w in resident.items()
                ]  # drop stale entries: memory stays O(C)
                heapq.heapify(heap)
            hit_blocks.append(hits)
            misses += chunk_lengths[r] - hits
            if dropped is not None:
                dropped.append(tuple(sorted(gone)))
        first = last
    return hit_blocks, dropped, misses


def _hits_one_cache(
    keys: np.ndarray, following: np.ndarray, capacity: int, universe: int
) -> np.ndarray:
    """MIN's hit flag for every reference of one cache's flat sequence (the count-only loop; compiled by numba).

    Same rule as :func:`min_run_flat`, with arrays instead of dicts: a max-heap
    of next-use positions (the block whose next use is position w is keys[w],
    so the heap needs no block field), stale entries skipped.
    """
    n = keys.size
    hit = np.zeros(n, dtype=np.uint8)
    held_next = np.full(universe, -1, dtype=np.int64)  # next use of each held block, -1 if not held
    heap = np.empty(n + 1, dtype=np.int64)
    size = 0
    count = 0
    for p in range(n):
        x = keys[p]
        w = following[p]
        if held_next[x] >= 0:
            hit[p] = 1
        if w == n:  # never used again: drop it (or bypass it) now
            if held_next[x] >= 0:
                held_next[x] = -1
                count -= 1
            continue
        if held_next[x] < 0:
            count += 1
        held_next[x] = w
        # push w (max-heap)
        i = size
        heap[i] = w
        size += 1
        while i > 0:
            parent = (i - 1) // 2
            if heap[parent] >= heap[i]:
                break
            heap[parent], heap[i] = heap[i], heap[parent]
            i = parent
        while count > capacity:
            top = heap[0]
            size -= 1
            heap[0] = heap[size]
            i = 0
            while True:
                left = 2 * i + 1
                if left >= size:
                    break
                child = left
                if left + 1 < size and heap[left + 1] > heap[left]:
                    child = left + 1
                if heap[i] >= heap[child]:
                    break
                heap[i], heap[child] = heap[child], heap[i]
                i = child
            victim = keys[top]
            if (
                held_next[victim] == top
            ):  # a live entry: evict the block used farthest in the future
                held_next[victim] = -1
                count -= 1
    return hit


def _count_compiled(ids: np.ndarray, lengths: np.ndarray, cache_of, capacity: int):
    """``(hit_blocks, None, misses)`` with the compiled loop, one cache at a time."""
    caches = (
        np.zeros(lengths.size, dtype=np.int64)
        if cache_of is None
        else np.asarray(cache_of, dtype=np.int64)
    )
    per_reference = np.repeat(caches, lengths)
    hit = np.zeros(ids.size, dtype=np.uint8)
    for q in np.unique(caches):
        mask = per_reference == q
        keys, universe = dense_ids(ids[mask])
        keys = keys.astype(np.int64)
        hit[mask] = kernel(_hits_one_cache)(keys, next_uses(keys), capacity, max(universe, 1))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    # The flat relaxation says hits are a prefix of every request: no hit right after a miss inside a chain.
    inside = np.ones(ids.size, dtype=bool)
    inside[starts] = False
    if np.any(inside[1:] & (hit[1:] > hit[:-1])):
        raise FlatRelaxationViolated("a block hits after an earlier block of its chain missed")
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    hit_blocks = sums_per_request(hit, offsets)  # summed in steps: no int64 copy of the marks
    return hit_blocks.tolist(), None, int(ids.size - hit.sum())


def _witness_one_cache(
    keys: np.ndarray, following: np.ndarray, lengths: np.ndarray, capacity: int, universe: int
):
    """MIN's run on one cache's flat sequence as arrays (compiled by numba): ``(hit flags, gone keys, gone requests)``.

    The rule of :func:`min_run_flat` and :func:`_hits_one_cache`; a block "goes" (the witness's ``dropped``) when it is
    never used again in this cache (dropped or bypassed at once) or when it is evicted, at the request it happens in.
    Each request's gone keys are sorted (dense keys keep the order of the ids they number).
    """
    n = keys.size
    hit = np.zeros(n, dtype=np.uint8)
    gone_key = np.empty(
        n, dtype=np.int64
    )  # each reference makes at most one block go: itself or one victim
    gone_request = np.empty(n, dtype=np.int64)
    n_gone = 0
    held_next = np.full(universe, -1, dtype=np.int64)
    heap = np.empty(n + 1, dtype=np.int64)
    size = 0
    count = 0
    p = 0
    for r in range(lengths.size):
        first_gone = n_gone
        for _ in range(lengths[r]):
            x = keys[p]
            w = following[p]
            if held_next[x] >= 0:
                hit[p] = 1
            if w == n:
                if held_next[x] >= 0:
                    held_next[x] = -1
                    count -= 1
                gone_key[n_gone] = x
                gone_request[n_gone] = r
                n_gone += 1
                p += 1
                continue
            if held_next[x] < 0:
                count += 1
            held_next[x] = w
            i = size
            heap[i] = w
            size += 1
            while i > 0:
                parent = (i - 1) // 2
                if heap[parent] >= heap[i]:
                    break
                heap[parent], heap[i] = heap[i], heap[parent]
                i = parent
            while count > capacity:
                top = heap[0]
                size -= 1
                heap[0] = heap[size]
                i = 0
                while True:
                    left = 2 * i + 1
                    if left >= size:
                        break
                    child = left
                    if left + 1 < size and heap[left + 1] > heap[left]:
                        child = left + 1
                    if heap[i] >= heap[child]:
                        break
                    heap[i], heap[child] = heap[child], heap[i]
                    i = child
                victim = keys[top]
                if held_next[victim] == top:
                    held_next[victim] = -1
                    count -= 1
                    gone_key[n_gone] = victim
                    gone_request[n_gone] = r
                    n_gone += 1
            p += 1
        gone_key[first_gone:n_gone] = np.sort(gone_key[first_gone:n_gone])
    return hit, gone_key[:n_gone], gone_request[:n_gone]


def packed_dropped(
    n_requests: int, requests: np.ndarray, blocks: np.ndarray, grouped: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(dropped_offsets, dropped_blocks)``: the blocks each request drops, sorted, from (request, block) pairs.

    ``grouped``: the pairs come request by request, each request's blocks sorted already (one cache): no sort here."""
    offsets = np.zeros(n_requests + 1, dtype=np.int64)
    np.cumsum(np.bincount(requests, minlength=n_requests), out=offsets[1:])
    if grouped:
        return offsets, blocks
    return offsets, blocks[np.lexsort((blocks, requests))]


def min_witness_arrays(
    ids: np.ndarray, lengths: np.ndarray, cache_of: np.ndarray | None, capacity: int, deadline=None
):
    """MIN's witness (bypass form) as flat arrays: ``(hit_blocks, dropped_offsets, dropped_blocks, misses)``.

    The same run as :func:`min_run` (tests compare them), without a Python object per reference: compiled per cache
    (``deadline`` is called between caches), or :func:`min_run_flat` converted when numba is missing.
    """
    ids = np.asarray(ids, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    caches = (
        np.zeros(lengths.size, dtype=np.int64)
        if cache_of is None
        else np.asarray(cache_of, dtype=np.int64)
    )
    run = kernel(_witness_one_cache)
    if run is None:  # pragma: no cover - numba is optional
        hit_blocks, dropped, misses = min_run_flat(
            ids, lengths, caches, capacity, deadline, witness=True
        )
        counts = np.fromiter((len(d) for d in dropped), dtype=np.int64, count=len(dropped))
        blocks = np.fromiter(
            (b for d in dropped for b in d), dtype=np.int64, count=int(counts.sum())
        )
        return (
            np.asarray(hit_blocks, dtype=np.int64),
            np.concatenate(([0], np.cumsum(counts))),
            blocks,
            misses,
        )
    single = caches.size == 0 or bool((caches == caches[0]).all())
    per_reference = None if single else np.repeat(caches, lengths)
    hit = np.zeros(ids.size, dtype=np.uint8)
    gone_requests, gone_blocks = [], []
    for q in np.unique(caches):
        if deadline is not None:
            deadline()
        requests = np.arange(lengths.size) if single else np.flatnonzero(caches == q)
        mask = slice(None) if single else per_reference == q
        references = ids[mask]
        keys, universe = dense_ids(references)
        renumbered = keys is not references
        keys = keys.astype(np.int64)
        hits, gone, at = run(keys, next_uses(keys), lengths[requests], capacity, max(universe, 1))
        hit[mask] = hits
        gone_blocks.append(np.unique(references)[gone] if renumbered else gone)
        gone_requests.append(requests[at])
        del keys, hits, gone, at
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    inside = np.ones(ids.size, dtype=bool)
    inside[bounds[:-1][lengths > 0]] = False
    if np.any(
        inside[1:] & (hit[1:] > hit[:-1])
    ):  # the flat relaxation: hits are a prefix of every request
        raise FlatRelaxationViolated("a block hits after an earlier block of its chain missed")
    running = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
    hit_blocks = running[bounds[1:]] - running[bounds[:-1]]
    offsets, blocks = packed_dropped(
        lengths.size, np.concatenate(gone_requests), np.concatenate(gone_blocks), grouped=single
    )
    return hit_blocks, offsets, blocks, int(ids.size - hit_blocks.sum())


def min_misses(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int] | None = None,
    capacity: int | None = None,
) -> int:
    """The fewest misses (see the module docstring for why MIN's count is the optimum)."""
    return min_run(chains, cache_of, capacity).misses


__all__ = [
    "FlatRelaxationViolated",
    "MinRun",
    "min_misses",
    "min_run",
    "min_run_flat",
    "min_witness_arrays",
    "next_uses",
    "packed_dropped",
]
