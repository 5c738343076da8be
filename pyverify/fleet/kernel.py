"""The event loop of ``pyverify replay``, compiled (numba): timed or not, up to three tiers, every router
but dynamo and sglang (their books of active requests run in Python).

The same run as :func:`pyverify.fleet.replay.replay_python` (the oracle; tests/test_replay_timed_fast.py
holds every field equal), for GPU caches ``lru``, ``fifo`` or unlimited, optional host-DRAM tiers and an
optional pool. Everything lives in flat arrays over dense block ids (``ids[starts[r]:starts[r + 1]]`` is
request r's chain), so each step is O(1) per block and no Python runs per request:

* a cache (a host's GPU, a host's DRAM, the pool) is a doubly linked list, oldest first, in the
  ``before``/``after`` arrays of :mod:`pyverify.cache.array_queue`; the caches of one tier share the arrays,
  cache c owning the slots ``block * caches + c`` (``held`` marks membership; block-major, so the
  routers' look at one block on every host reads one cache line), with its head, tail and size in small
  per-cache arrays. An unlimited cache is ``held`` alone (a set: nothing is ever evicted).
* pins (the GPU blocks a running request holds) are counts per slot, with multiplicity as in
  :class:`pyverify.cache.pinning.Pinning`; ``pinned[h]`` counts host h's distinct pinned blocks (``len(pins)``).
  Eviction walks from the oldest block past the pinned ones, as ``pyverify.cache.pinning._PinAwareOrder.popitem(last=False)``
  does. What a request pinned is one flag per reference (``held_by_run``), read back when it ends.
* the hosts' FIFO queues are singly linked lists over request indices (``next_queued``);
* the finishes wait in a binary min-heap of ``(end time, request)`` in two arrays, ordered as Python's
  heap of ``(end, index, host, held)`` tuples (the request index breaks ties, and is unique).

The timed loop takes events in replay_python's order: before each arrival, the load samples due
(``sample_s[k] <= now``, each after finishing what ended by then), then the finishes due (each restarts
its host's queue at its end time), then the arrival itself (routed, queued, its host's queue started).
Floats are computed with the same operations in the same order as replay_python and
:class:`pyverify.fleet.service.ServiceModel`, so every time and busy_prefill_s is equal bit for bit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from pyverify.cache.array_queue import NONE, move_to_back, push_back, unlink
from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

#: A lower tier's capacity: none of that tier, or a tier without a limit (a set).
NO_TIER = -2
UNLIMITED = -1

#: Routers inside the loop: fixed picks (round-robin, random: given), or computed at each arrival.
FIXED, LEAST_LOADED, PREFIX_AFFINITY, KV_AWARE = 0, 1, 2, 3


# The loop's inputs, grouped by what they describe. Named tuples of arrays and scalars: numba takes
# them as they are, and a call reads as what it passes.


class Requests(NamedTuple):
    """The trace: request r's dense block ids are ``ids[starts[r]:starts[r + 1]]``, each id below
    ``universe``; its arrival in seconds (timed runs), its prompt length in tokens where
    ``input_given[r]``, and its output length (0 for none)."""

    ids: np.ndarray
    starts: np.ndarray
    universe: int
    arrival: np.ndarray
    input_tokens: np.ndarray
    input_given: np.ndarray
    output_tokens: np.ndarray


class Rules(NamedTuple):
    """The router: its code (:data:`FIXED`, ...), the fixed picks, and its weights (Router.pick)."""

    router: int
    picks: np.ndarray
    slack: float
    overlap_weight: float
    load_weight: float
    kv_load_in_blocks: bool


class Tiers(NamedTuple):
    """Every cache: :func:`tier_arrays` per tier, with its capacity in blocks, UNLIMITED, or NO_TIER
    (the lower tiers); ``gpu_lru``: the GPU caches refresh their hits (LRU) or not (FIFO)."""

    gpu: tuple
    gpu_capacity: int
    gpu_lru: bool
    dram: tuple
    host_capacity: int
    pool: tuple
    pool_capacity: int


class Timing(NamedTuple):
    """The service model's rates and limits (:class:`pyverify.fleet.service.ServiceModel`)."""

    max_running: int
    block_tokens: int
    prefill_tokens_per_s: float
    decode_tokens_per_s: float
    block_bytes: float
    host_fetch_latency_ms: float
    host_bandwidth_gb_s: float
    fetch_latency_ms: float
    pool_bandwidth_gb_s: float


@njit(cache=CACHE, nogil=True, inline="always")
def run_end(held, c, stride, ids, t, stop):
    """The end of the run of ``ids[t:stop]`` held in cache c (pyverify.cache.protocol.run_in)."""
    while t < stop and held[ids[t] * stride + c]:
        t += 1
    return t


@njit(cache=CACHE, nogil=True)
def serve_cache(tier, c, stride, ids, first, hit_end, stop, capacity, lru, pins, pinned):
    """Cache c takes ``ids[first:stop]`` of which ``ids[first:hit_end]`` hit: ChainOrderLRU.serve (``lru``),
    FifoCache.serve, or a set's update when ``capacity`` is UNLIMITED. Eviction skips slots with ``pins``
    when ``pinned`` (the cache's count of pinned blocks) is nonzero, as _PinAwareOrder.popitem does."""
    before, after, held, heads, tails, sizes = tier
    if capacity == UNLIMITED:
        for t in range(hit_end, stop):
            held[ids[t] * stride + c] = True
        return
    head, tail, size = heads[c], tails[c], sizes[c]
    if lru:  # the hit prefix becomes the newest, root first
        for t in range(first, hit_end):
            head, tail = move_to_back(before, after, head, tail, ids[t] * stride + c)
    for t in range(hit_end, stop):
        slot = ids[t] * stride + c
        if held[slot]:  # held after the first miss: LRU refreshes it, FIFO keeps its entry time
            if lru:
                head, tail = move_to_back(before, after, head, tail, slot)
            continue
        if size >= capacity:
            victim = head
            if pinned:  # the oldest unpinned block
                while victim != NONE and pins[victim] > 0:
                    victim = after[victim]
                if victim == NONE:
                    raise RuntimeError("every cached block is pinned by a running request")
            head, tail = unlink(before, after, head, tail, victim)
            held[victim] = False
            size -= 1
        head, tail = push_back(before, after, head, tail, slot)
        held[slot] = True
        size += 1
    heads[c], tails[c], sizes[c] = head, tail, size


@njit(cache=CACHE, nogil=True)
def serve_request(r, host, requests, fleet, tiers, pins, pinned, hits, counts):
    """Request r through host's tiers in replay_python's order (GPU prefix, DRAM run, pool run, GPU serve);
    its hits ``(g, h, p)`` go to ``hits[:, r]`` and the host's ``counts``."""
    ids = requests.ids
    first, stop = requests.starts[r], requests.starts[r + 1]
    gpu_end = run_end(tiers.gpu[2], host, fleet, ids, first, stop)
    host_end = gpu_end
    if tiers.host_capacity != NO_TIER:
        host_end = run_end(tiers.dram[2], host, fleet, ids, gpu_end, stop)
        serve_cache(
            tiers.dram,
            host,
            fleet,
            ids,
            gpu_end,
            host_end,
            stop,
            tiers.host_capacity,
            True,
            pins,
            0,
        )
    pool_end = host_end
    if tiers.pool_capacity != NO_TIER:
        pool_end = run_end(tiers.pool[2], 0, 1, ids, host_end, stop)
        serve_cache(
            tiers.pool, 0, 1, ids, host_end, pool_end, stop, tiers.pool_capacity, True, pins, 0
        )
    serve_cache(
        tiers.gpu,
        host,
        fleet,
        ids,
        first,
        gpu_end,
        stop,
        tiers.gpu_capacity,
        tiers.gpu_lru,
        pins,
        pinned[host],
    )
    g, h, p = gpu_end - first, host_end - gpu_end, pool_end - host_end
    hits[0, r], hits[1, r], hits[2, r] = g, h, p
    counts[1, host] += g
    counts[2, host] += h
    counts[3, host] += p
    counts[4, host] += stop - first - g - h - p
    return g, h, p


@njit(cache=CACHE, nogil=True)
def pick_host(r, rules, fleet, requests, tiers, load, routed, overlaps, router_load):
    """Router.pick, ties included: the minimum of the same key tuples, hosts in increasing id.

    ``overlaps``: scratch, a slot per host; ``router_load``: what kv-aware counts per host (blocks or
    requests running plus queued)."""
    router, ids, has_dram = rules.router, requests.ids, tiers.host_capacity != NO_TIER
    if router == FIXED:
        return rules.picks[r]
    best = 0
    if router == LEAST_LOADED:  # key (load, routed, host)
        for h in range(1, fleet):
            if load[h] < load[best] or (load[h] == load[best] and routed[h] < routed[best]):
                best = h
        return best
    first, stop = requests.starts[r], requests.starts[r + 1]
    for h in range(fleet):  # each host's prefix: its GPU, then its DRAM (LocalTiers.prefix_hits)
        end = run_end(tiers.gpu[2], h, fleet, ids, first, stop)
        if has_dram:
            end = run_end(tiers.dram[2], h, fleet, ids, end, stop)
        overlaps[h] = end - first
    if (
        router == PREFIX_AFFINITY
    ):  # among hosts routed fewer than the cap: key (-overlap, routed, host)
        cap = math.ceil(rules.slack * (r + 1) / fleet)
        best = -1
        for h in range(fleet):
            if routed[h] >= cap:
                continue
            if (
                best < 0
                or overlaps[h] > overlaps[best]
                or (overlaps[h] == overlaps[best] and routed[h] < routed[best])
            ):
                best = h
        if best < 0:
            raise ValueError("no host is below the prefix-affinity cap")
        return best
    # kv-aware: key (-(overlap_weight * overlap - load_weight * load), load, routed, host), floats as Python's
    load = router_load
    overlap_weight, load_weight = rules.overlap_weight, rules.load_weight
    best_score = -(overlap_weight * overlaps[0] - load_weight * load[0])
    for h in range(1, fleet):
        score = -(overlap_weight * overlaps[h] - load_weight * load[h])
        if score < best_score or (
            score == best_score
            and (load[h] < load[best] or (load[h] == load[best] and routed[h] < routed[best]))
        ):
            best, best_score = h, score
    return best


@njit(cache=CACHE, nogil=True, inline="always")
def heap_less(ends, requests, a, b):
    """Whether heap entry a comes before entry b: ``(end, request)`` compared as tuples."""
    return ends[a] < ends[b] or (ends[a] == ends[b] and requests[a] < requests[b])


@njit(cache=CACHE, nogil=True)
def heap_push(ends, requests, size, end, request):
    at = size
    ends[at], requests[at] = end, request
    while at > 0:
        up = (at - 1) >> 1
        if not heap_less(ends, requests, at, up):
            break
        ends[at], ends[up] = ends[up], ends[at]
        requests[at], requests[up] = requests[up], requests[at]
        at = up
    return size + 1


@njit(cache=CACHE, nogil=True)
def heap_pop(ends, requests, size):
    """Remove the first entry; returns ``(end, request, new size)``."""
    end, request = ends[0], requests[0]
    size -= 1
    ends[0], requests[0] = ends[size], requests[size]
    at = 0
    while True:
        down = 2 * at + 1
        if down >= size:
            break
        if down + 1 < size and heap_less(ends, requests, down + 1, down):
            down += 1
        if not heap_less(ends, requests, down, at):
            break
        ends[at], ends[down] = ends[down], ends[at]
        requests[at], requests[down] = requests[down], requests[at]
        at = down
    return end, request, size


def tier_arrays(caches: int, universe: int, capacity: int):
    """``(before, after, held, heads, tails, sizes)`` for ``caches`` caches (one dummy slot when there is no tier)."""
    slots = caches * universe if capacity != NO_TIER else 1
    links = np.int32 if slots < 2**31 - 1 else np.int64
    before = np.empty(
        slots if capacity >= 0 else 1, dtype=links
    )  # an unlimited cache needs no list
    after = np.empty_like(before)
    return (
        before,
        after,
        np.zeros(slots, dtype=np.bool_),
        np.full(caches, NONE, dtype=np.int64),
        np.full(caches, NONE, dtype=np.int64),
        np.zeros(caches, dtype=np.int64),
    )


@njit(cache=CACHE, nogil=True)
def fleet_replay(requests, fleet, timed, sample_s, rules, tiers, timing):
    """The run: per request host, hits per tier, start and first token; per host its counts; the load samples.

    ``requests``: :class:`Requests`; ``rules``: :class:`Rules`; ``tiers``: :class:`Tiers`; ``timing``:
    :class:`Timing`; ``sample_s``: the instants of the load samples (timed runs)."""
    ids, starts = requests.ids, requests.starts
    n = starts.size - 1
    gpu_capacity = tiers.gpu_capacity
    host_of = np.zeros(n, dtype=np.int64)
    hits = np.zeros((3, n), dtype=np.int64)  # GPU, host DRAM, pool
    start = np.zeros(n, dtype=np.float64)
    first_token = np.zeros(n, dtype=np.float64)
    # Per host: requests, GPU / DRAM / pool hit blocks, recomputed blocks, max queue; and busy prefill seconds.
    counts = np.zeros((6, fleet), dtype=np.int64)
    busy = np.zeros(fleet, dtype=np.float64)
    load = np.zeros(fleet, dtype=np.int64)
    routed = np.zeros(fleet, dtype=np.int64)
    overlaps = np.zeros(fleet, dtype=np.int64)
    router_load = np.zeros(
        fleet, dtype=np.int64
    )  # kv-aware's load: blocks or requests (Router.pick)
    pins = np.zeros(tiers.gpu[2].size if timed and gpu_capacity != UNLIMITED else 1, dtype=np.int32)
    pinned = np.zeros(fleet, dtype=np.int64)
    samples = np.zeros((sample_s.size, fleet), dtype=np.int64)
    taken = 0  # load samples recorded

    if not timed:  # every request starts on arrival and ends at once, in file order
        for r in range(n):
            host = pick_host(r, rules, fleet, requests, tiers, load, routed, overlaps, router_load)
            routed[host] += 1
            host_of[r] = host
            counts[0, host] += 1
            serve_request(r, host, requests, fleet, tiers, pins, pinned, hits, counts)
        return host_of, hits, start, first_token, counts, busy, samples, taken

    held_by_run = np.zeros(ids.size, dtype=np.bool_)  # the references a running request pinned
    seen = np.zeros(max(requests.universe, 1), dtype=np.int64)  # fits: distinct blocks, by stamp
    stamp = 0
    next_queued = np.full(n, NONE, dtype=np.int64)
    queue_head = np.full(fleet, NONE, dtype=np.int64)
    queue_tail = np.full(fleet, NONE, dtype=np.int64)
    queued = np.zeros(fleet, dtype=np.int64)
    running = np.zeros(fleet, dtype=np.int64)
    heap_ends = np.zeros(n, dtype=np.float64)
    heap_requests = np.zeros(n, dtype=np.int64)
    heap_size = 0
    ARRIVAL, SAMPLE, END = 0, 1, 2
    r = 0
    while True:
        # The next instant to reach: a load sample due before the next arrival, that arrival, or the end.
        if r < n:
            now = requests.arrival[r]
            if taken < sample_s.size and sample_s[taken] <= now:
                kind, until = SAMPLE, sample_s[taken]
            else:
                kind, until = ARRIVAL, now
        else:
            kind, until = END, np.inf
        while True:
            arrived = False
            if (
                heap_size > 0 and heap_ends[0] <= until
            ):  # a finish due: at equal times, before the arrival
                when, done, heap_size = heap_pop(heap_ends, heap_requests, heap_size)
                host = host_of[done]
                for t in range(starts[done], starts[done + 1]):
                    if held_by_run[t]:
                        held_by_run[t] = False
                        slot = ids[t] * fleet + host
                        pins[slot] -= 1
                        if pins[slot] == 0:
                            pinned[host] -= 1
                running[host] -= 1
                load[host] -= 1
                router_load[host] -= (
                    starts[done + 1] - starts[done] if rules.kv_load_in_blocks else 1
                )
            elif kind == ARRIVAL:
                when = now
                host = pick_host(
                    r, rules, fleet, requests, tiers, load, routed, overlaps, router_load
                )
                routed[host] += 1
                load[host] += 1
                router_load[host] += starts[r + 1] - starts[r] if rules.kv_load_in_blocks else 1
                host_of[r] = host
                counts[0, host] += 1
                if queue_tail[host] == NONE:
                    queue_head[host] = r
                else:
                    next_queued[queue_tail[host]] = r
                queue_tail[host] = r
                queued[host] += 1
                arrived = True
            else:
                break
            # start_what_fits(host, when)
            while queued[host] > 0 and running[host] < timing.max_running:
                q = queue_head[host]
                first, stop = starts[q], starts[q + 1]
                if (
                    running[host] and gpu_capacity != UNLIMITED
                ):  # fits: pinned + distinct unpinned blocks <= capacity
                    stamp += 1
                    extra = 0
                    for t in range(first, stop):
                        block = ids[t]
                        if seen[block] != stamp and pins[block * fleet + host] == 0:
                            seen[block] = stamp
                            extra += 1
                    if pinned[host] + extra > gpu_capacity:
                        break
                queue_head[host] = next_queued[q]
                if queue_head[host] == NONE:
                    queue_tail[host] = NONE
                queued[host] -= 1
                g, h, p = serve_request(q, host, requests, fleet, tiers, pins, pinned, hits, counts)
                if (
                    gpu_capacity != UNLIMITED
                ):  # pin the chain's blocks cached now (an unlimited cache pins nothing)
                    held = tiers.gpu[2]
                    for t in range(first, stop):
                        slot = ids[t] * fleet + host
                        if held[slot]:
                            held_by_run[t] = True
                            if pins[slot] == 0:
                                pinned[host] += 1
                            pins[slot] += 1
                prefill = prefill_seconds(q, g, h, p, stop - first, requests, timing)
                decode = max(requests.output_tokens[q] - 1, 0) / timing.decode_tokens_per_s
                start[q] = when
                first_token[q] = when + prefill
                busy[host] += prefill
                running[host] += 1
                heap_size = heap_push(
                    heap_ends, heap_requests, heap_size, when + prefill + decode, q
                )
            if arrived:
                counts[5, host] = max(counts[5, host], queued[host])  # requests left waiting
                break
        if kind == SAMPLE:
            samples[taken, :] = load
            taken += 1
        elif kind == END:
            break
        else:
            r += 1
    return host_of, hits, start, first_token, counts, busy, samples, taken


@njit(cache=CACHE, nogil=True, inline="always")
def prefill_seconds(q, g, h, p, blocks, requests, timing):
    """ServiceModel.prefill_seconds of request q (``blocks`` long, hits ``g, h, p``), operation for operation."""
    block_tokens = timing.block_tokens
    tokens = requests.input_tokens[q] if requests.input_given[q] else blocks * block_tokens
    compute = max(0, tokens - (g + h + p) * block_tokens)
    prefill = compute / timing.prefill_tokens_per_s
    if h:
        prefill += timing.host_fetch_latency_ms / 1000.0 + h * timing.block_bytes / (
            timing.host_bandwidth_gb_s * 1e9
        )
    if p:
        prefill += timing.fetch_latency_ms / 1000.0 + p * timing.block_bytes / (
            timing.pool_bandwidth_gb_s * 1e9
        )
    return prefill


__all__ = [
    "FIXED",
    "Requests",
    "Rules",
    "Tiers",
    "Timing",
    "KV_AWARE",
    "LEAST_LOADED",
    "NO_TIER",
    "PREFIX_AFFINITY",
    "UNLIMITED",
    "fleet_replay",
    "tier_arrays",
]
