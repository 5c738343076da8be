r"""The forced-admission optimum: the fewest misses of a cache that admits every block it fetches and keeps the running request's.

:mod:`pyverify.optimal.belady` certifies the *bypass* optimum (a fetched block
may be discarded at once). Serving engines (vLLM, SGLang) cannot bypass: every
block a request computes is written into the cache, and the running request's
blocks are in use (pinned) until it finishes. Their optimum is higher on some
inputs; the smallest: three one-block requests ``[3], [2], [3]`` with one slot
miss 2 times with bypass and 3 times with forced admission.

The model ("forced admission", one cache of ``C`` blocks, or one per host)
-------------------------------------------------------------------------
Rules 1-4 of :mod:`pyverify.certify.placement`, plus

5. *Forced admission, running request pinned:* right after request ``t`` its
   cache holds the first ``min(k_t, C)`` blocks of its chain (every block the
   request hit stays, every block it fetched is admitted). A chain longer than
   the cache cannot be admitted whole: its first ``C`` blocks fill the cache
   and the blocks beyond are computed but not cached (vLLM keeps a prompt's
   first blocks when the pool is full of the running request's blocks;
   pyverify's ``tail-first`` eviction does exactly this, ``leaf-lru`` keeps ``C - 1``).

Other blocks may be evicted at any of the cache's steps (an engine evicts
only to make room; evicting earlier never helps, and a run that does is still
accepted by the checker).

The rule (Belady 1966, the demand form, with pins)
--------------------------------------------------
After request ``t`` keep the request's first ``min(k_t, C)`` blocks, and of the
other blocks held, the ``C - min(k_t, C)`` whose next use (in this cache's flat
block sequence) comes soonest; blocks never used again go first, deeper
blocks first among them. Evicting one block at a time, farthest next use
first, while admitting the chain block by block, gives the same set.

Why it is the optimum (argued here and in docs/min-flat-relaxation.md,
"Forced admission"; tested by exhaustive search in tests/test_forced_min.py).
In Lean (``pinned_misses_ge_forced_min``, lean/PrefixPool/ForcedPinned.lean)
the lower bound is proved for one cache whose chains have 1 to ``C`` blocks:
no pinned run misses fewer than forced MIN on the chains read twice each; that
this rule's count equals that bound is tested (tests/test_bridge_forced.py),
not proved, and longer chains and per-host caches are not covered:

* *Flat forced optimum.* Count a run's misses flatly: request ``t`` misses
  ``|X_t \ S_t|`` (its blocks not held). The runs allowed are
  ``first_t ⊆ S_{t+1} ⊆ S_t ∪ X_t``, ``|S_{t+1}| <= C`` (``first_t``: the
  chain's first ``min(k_t, C)`` blocks). Belady's exchange argument holds
  unchanged: if an optimal run keeps ``e`` where the rule keeps ``b`` (next
  use of ``b`` sooner), keep ``b`` instead; at ``b``'s next use that run hits
  where the other missed, and it pays at most one miss back at ``e``'s next
  use. So the rule's flat count is the fewest.
* *Flat <= prefix.* A prefix-cache run with forced admission is such a run,
  and its hits (a held prefix) are among its held blocks: its misses are at
  least its flat misses.
* *The rule is a prefix-cache run.* At every request boundary it holds the
  parent of every block it holds: the parent is in the pinned chain, or
  both are unpinned and the child goes first (its next use comes after the
  parent's, since every request reading the child reads the parent one
  position earlier; if the child is never used again it goes first by the
  deeper-first tie rule). So its flat hits are a held prefix of each request
  and its flat misses are its prefix misses: the optimum is attained.

Unpinned forced admission (classic demand paging on the flat sequence, where
a request may evict its own earlier blocks) is a different model: on
``[x], [a, b], [x]`` with two slots it keeps ``{x, b}`` (``b`` without its
parent) and misses 3 times, pinned forced admission 4 times. Engines pin.

Per host under a static routing each host's cache is independent, so the
fleet's forced optimum is the sum of the per-host ones; one pass runs them all.

Cost: O(n log n) for n block references (a max-heap of next uses with lazy
deletion, as in :mod:`pyverify.optimal.belady`), memory O(n) plus O(C) per cache.
"""

from __future__ import annotations

import heapq
from typing import Sequence

import numpy as np

from pyverify.optimal.belady import CHUNK, MinRun, next_uses
from pyverify.optimal.compiled import kernel
from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.kernels import CURVE_BREAK_EVEN, use_kernels

#: The admission rules pyverify certifies: ``bypass`` (a fetched block may be discarded) and ``forced``.
BYPASS = "bypass"
FORCED = "forced"
ADMISSIONS = (BYPASS, FORCED)


class PrefixClosureViolated(AssertionError):
    """The forced rule held a block without its parent, or hit after a miss: the argument above would be wrong."""


def forced_run(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int] | None = None,
    capacity: int = 1,
    deadline=None,
) -> MinRun:
    """The forced-admission optimum's run per cache (witness form) and its misses."""
    ids, lengths = flatten(chains)
    if cache_of is None:
        cache_of = (0,) * len(chains)
    hit_blocks, dropped, misses = forced_run_flat(
        ids, lengths, cache_of, capacity, deadline, witness=True
    )
    return MinRun(tuple(cache_of), tuple(hit_blocks), tuple(dropped), misses, int(ids.size))


def forced_misses(
    chains: Sequence[Sequence[int]], cache_of: Sequence[int] | None = None, capacity: int = 1
) -> int:
    """The fewest misses of caches of ``capacity`` blocks that admit every block (module docstring)."""
    ids, lengths = flatten(chains)
    return forced_run_flat(ids, lengths, cache_of, capacity)[2]


def forced_run_flat(
    ids: np.ndarray,
    lengths: np.ndarray,
    cache_of: Sequence[int] | np.ndarray | None = None,
    capacity: int = 1,
    deadline=None,
    witness: bool = False,
    closure: bool = False,
):
    """The forced rule on flat arrays: ``(hit_blocks, dropped, misses)``; ``dropped`` is None unless ``witness``.

    Every request checks that no block after its first miss is held (so its
    flat hits are its prefix hits; the third point of the module docstring),
    at the cost of one pass over its chain. ``closure`` (for tests; O(C) per
    request) also checks after every request that each held block's parent is held.
    """
    if capacity is None or capacity < 1:
        raise ValueError("forced admission needs a capacity of at least 1 block")
    ids = np.asarray(ids, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n_requests = lengths.size
    caches = (
        np.zeros(n_requests, dtype=np.int64)
        if cache_of is None
        else np.asarray(cache_of, dtype=np.int64)
    )
    if (
        not closure
        and use_kernels(int(ids.size), CURVE_BREAK_EVEN)
        and kernel(_forced_one_cache) is not None
    ):
        return _run_compiled(ids, lengths, caches, capacity, deadline, witness)
    fleet = int(caches.max()) + 1 if caches.size else 1
    if fleet == 1:
        following = next_uses(ids)
    else:
        dense, _ = dense_ids(ids)
        following = next_uses(dense.astype(np.int64) * fleet + np.repeat(caches, lengths))
    ends = np.cumsum(lengths)

    held: dict[int, dict[int, int]] = {}  # cache -> {block: its next use in that cache}
    heaps: dict[
        int, list[tuple[int, int, int]]
    ] = {}  # cache -> [(-next use, -depth, block)], stale entries skipped
    depth_of: dict[
        int, int
    ] = {}  # block -> its position in a chain (one depth per block on a prefix-closed trace)
    parent_of: dict[int, int] = {}  # block -> its parent, for the closure check
    hit_blocks: list[int] = []
    dropped: list[tuple[int, ...]] | None = [] if witness else None
    misses = 0
    first = 0
    while first < n_requests:
        base = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, base + CHUNK, side="right")))
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
            k = chunk_lengths[r]
            chain = chunk_ids[i : i + k]
            later = chunk_next[i : i + k]
            i += k
            hits = 0
            while hits < k and chain[hits] in resident:
                hits += 1
            if any(b in resident for b in chain[hits:]):
                raise PrefixClosureViolated(
                    f"request {t}: a block after the first miss is held (a block held without its parent)"
                )
            keep = min(k, capacity)
            gone: list[int] = []
            for j in range(keep):  # pinned: hit or admitted, held when the request ends
                block = chain[j]
                resident[block] = later[j]
                depth_of[block] = j
                heapq.heappush(heap, (-later[j], -j, block))
                if closure and j:
                    parent_of[block] = chain[j - 1]
            gone.extend(chain[keep:])  # computed but not cached: the chain is longer than the cache
            if len(resident) > capacity:
                pinned = set(chain[:keep])
                skipped = []
                while len(resident) > capacity:
                    entry = heapq.heappop(heap)
                    victim = entry[2]
                    if resident.get(victim) != -entry[0]:
                        continue  # stale
                    if victim in pinned:
                        skipped.append(entry)
                        continue
                    del resident[
                        victim
                    ]  # the held block used farthest in the future (never again: deeper first)
                    gone.append(victim)
                for entry in skipped:
                    heapq.heappush(heap, entry)
            if closure:
                for block in resident:
                    parent = parent_of.get(block)
                    if parent is not None and parent not in resident:
                        raise PrefixClosureViolated(
                            f"request {t}: block {block} is held without its parent {parent}"
                        )
            if len(heap) > 4 * capacity + 64:
                heap[:] = [(-w, -depth_of[b], b) for b, w in resident.items()]
                heapq.heapify(heap)
            hit_blocks.append(hits)
            misses += k - hits
            if dropped is not None:
                dropped.append(tuple(sorted(gone)))
        first = last
    return hit_blocks, dropped, misses


def _forced_one_cache(keys, following, lengths, capacity, universe):
    """The forced rule on one cache's flat sequence, with arrays (compiled by numba; same choices as the loop above).

    ``keys``: dense block ids of the cache's references; ``following[p]``: the
    position of the next use of ``keys[p]`` in this sequence (``keys.size``:
    never); ``lengths``: the cache's requests in order. The heap orders held
    blocks by (next use, depth), largest first, so a block never used again
    goes first and the deeper among those; entries are (priority, block) in
    two arrays, stale ones skipped. Returns ``(hits per request, gone,
    gone_counts, violation)``: the blocks each request evicted or could not
    cache, in request order, and the first request whose hits were not a
    prefix (-1 if none).
    """
    n = keys.size
    span = 1
    for r in range(lengths.size):
        if lengths[r] + 1 > span:
            span = lengths[r] + 1
    held_next = np.full(universe, -1, dtype=np.int64)  # next use of each held block, -1 if not held
    pinned_by = np.full(universe, -1, dtype=np.int64)  # the request that pins each block
    heap_priority = np.empty(n + 1, dtype=np.int64)
    heap_block = np.empty(n + 1, dtype=np.int64)
    skipped_priority = np.empty(max(capacity, 1) + 1, dtype=np.int64)
    skipped_block = np.empty(max(capacity, 1) + 1, dtype=np.int64)
    hits_of = np.zeros(lengths.size, dtype=np.int64)
    gone = np.empty(n, dtype=np.int64)
    gone_counts = np.zeros(lengths.size, dtype=np.int64)
    n_gone = 0
    size = 0
    count = 0
    violation = -1
    start = 0
    for r in range(lengths.size):
        k = lengths[r]
        hits = 0
        while hits < k and held_next[keys[start + hits]] >= 0:
            hits += 1
        for j in range(hits, k):
            if held_next[keys[start + j]] >= 0 and violation < 0:
                violation = r
        hits_of[r] = hits
        keep = k if k < capacity else capacity
        before = n_gone
        for j in range(keep):  # pinned: hit or admitted, held when the request ends
            block = keys[start + j]
            w = following[start + j]
            if held_next[block] < 0:
                count += 1
            held_next[block] = w
            pinned_by[block] = r
            priority = w * span + j
            i = size  # push (max-heap on priority)
            heap_priority[i] = priority
            heap_block[i] = block
            size += 1
            while i > 0:
                parent = (i - 1) // 2
                if heap_priority[parent] > heap_priority[i] or (
                    heap_priority[parent] == heap_priority[i]
                    and heap_block[parent] <= heap_block[i]
                ):
                    break  # ties: the smaller block first, as the loop above
                heap_priority[parent], heap_priority[i] = heap_priority[i], heap_priority[parent]
                heap_block[parent], heap_block[i] = heap_block[i], heap_block[parent]
                i = parent
        for j in range(keep, k):  # computed but not cached: the chain is longer than the cache
            gone[n_gone] = keys[start + j]
            n_gone += 1
        n_skipped = 0
        while count > capacity:
            priority = heap_priority[0]
            victim = heap_block[0]
            size -= 1
            heap_priority[0] = heap_priority[size]
            heap_block[0] = heap_block[size]
            i = 0
            while True:
                left = 2 * i + 1
                if left >= size:
                    break
                child = left
                right = left + 1
                if right < size and (
                    heap_priority[right] > heap_priority[left]
                    or (
                        heap_priority[right] == heap_priority[left]
                        and heap_block[right] < heap_block[left]
                    )
                ):
                    child = right
                if heap_priority[i] > heap_priority[child] or (
                    heap_priority[i] == heap_priority[child] and heap_block[i] <= heap_block[child]
                ):
                    break
                heap_priority[i], heap_priority[child] = heap_priority[child], heap_priority[i]
                heap_block[i], heap_block[child] = heap_block[child], heap_block[i]
                i = child
            if held_next[victim] != priority // span:
                continue  # stale
            if pinned_by[victim] == r:
                skipped_priority[n_skipped] = priority
                skipped_block[n_skipped] = victim
                n_skipped += 1
                continue
            held_next[
                victim
            ] = -1  # the held block used farthest in the future (never again: deeper first)
            count -= 1
            gone[n_gone] = victim
            n_gone += 1
        for e in range(n_skipped):  # the running request's entries go back
            i = size
            heap_priority[i] = skipped_priority[e]
            heap_block[i] = skipped_block[e]
            size += 1
            while i > 0:
                parent = (i - 1) // 2
                if heap_priority[parent] > heap_priority[i] or (
                    heap_priority[parent] == heap_priority[i]
                    and heap_block[parent] <= heap_block[i]
                ):
                    break  # ties: the smaller block first, as the loop above
                heap_priority[parent], heap_priority[i] = heap_priority[i], heap_priority[parent]
                heap_block[parent], heap_block[i] = heap_block[i], heap_block[parent]
                i = parent
        gone_counts[r] = n_gone - before
        start += k
    return hits_of, gone[:n_gone], gone_counts, violation


def _run_compiled(
    ids: np.ndarray, lengths: np.ndarray, caches: np.ndarray, capacity: int, deadline, witness: bool
):
    """:func:`forced_run_flat` by :func:`_forced_one_cache`, one cache at a time (``deadline`` checked between caches)."""
    run = kernel(_forced_one_cache)
    per_reference = np.repeat(caches, lengths)
    hit_blocks = np.zeros(lengths.size, dtype=np.int64)
    gone_of: dict[int, np.ndarray] = {}
    for q in np.unique(caches):
        if deadline is not None:
            deadline()
        requests = np.flatnonzero(caches == q)
        references = ids[per_reference == q]
        keys, universe = dense_ids(references)
        renumbered = keys is not references  # dense_ids returns ids already dense as they are
        keys = keys.astype(np.int64)
        hits, gone, gone_counts, violation = run(
            keys, next_uses(keys), lengths[requests], capacity, max(universe, 1)
        )
        if violation >= 0:
            raise PrefixClosureViolated(
                f"request {int(requests[violation])}: a block after the first miss is held "
                "(a block held without its parent)"
            )
        hit_blocks[requests] = hits
        if witness:
            names = (np.unique(references)[gone] if renumbered else gone).tolist()
            bounds = np.concatenate(([0], np.cumsum(gone_counts))).tolist()
            for index, request in enumerate(requests.tolist()):
                gone_of[request] = tuple(sorted(names[bounds[index] : bounds[index + 1]]))
    misses = int(lengths.sum() - hit_blocks.sum())
    dropped = [gone_of[t] for t in range(lengths.size)] if witness else None
    return hit_blocks.tolist(), dropped, misses


def forced_witness_arrays(
    ids: np.ndarray, lengths: np.ndarray, cache_of: np.ndarray | None, capacity: int, deadline=None
):
    """The forced rule's witness as flat arrays: ``(hit_blocks, dropped_offsets, dropped_blocks, misses)``.

    The run of :func:`forced_run` (tests compare them), compiled per cache by :func:`_forced_one_cache`
    (``deadline`` is called between caches), or :func:`forced_run_flat` converted when numba is missing.
    """
    from pyverify.optimal.belady import packed_dropped

    ids = np.asarray(ids, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    caches = (
        np.zeros(lengths.size, dtype=np.int64)
        if cache_of is None
        else np.asarray(cache_of, dtype=np.int64)
    )
    run = kernel(_forced_one_cache)
    if run is None:  # pragma: no cover - numba is optional
        hit_blocks, dropped, misses = forced_run_flat(
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
    hit_blocks = np.zeros(lengths.size, dtype=np.int64)
    gone_requests, gone_blocks = [], []
    for q in np.unique(caches):
        if deadline is not None:
            deadline()
        requests = np.arange(lengths.size) if single else np.flatnonzero(caches == q)
        references = ids if single else ids[per_reference == q]
        keys, universe = dense_ids(references)
        renumbered = keys is not references
        keys = keys.astype(np.int64)
        hits, gone, gone_counts, violation = run(
            keys, next_uses(keys), lengths[requests], capacity, max(universe, 1)
        )
        if violation >= 0:
            raise PrefixClosureViolated(
                f"request {int(requests[violation])}: a block after the first miss is held "
                "(a block held without its parent)"
            )
        hit_blocks[requests] = hits
        gone_blocks.append(np.unique(references)[gone] if renumbered else gone)
        gone_requests.append(np.repeat(requests, gone_counts))
        del keys, hits, gone
    offsets, blocks = packed_dropped(
        lengths.size, np.concatenate(gone_requests), np.concatenate(gone_blocks)
    )
    return hit_blocks, offsets, blocks, int(lengths.sum() - hit_blocks.sum())


def forced_curve_points(
    ids: np.ndarray, lengths: np.ndarray, capacities: Sequence[int], routing=None
) -> list[int]:
    """The forced optimum's misses at each capacity (one run per capacity; ``routing``: one cache per host)."""
    return [forced_run_flat(ids, lengths, routing, int(c))[2] for c in capacities]


def optimum_hits(
    ids: np.ndarray, lengths: np.ndarray, cache_of, capacity: int
) -> dict[str, list[int]]:
    """Hits per request of the two optima with ``capacity`` blocks per cache: ``{"forced": ..., "bypass": ...}``."""
    from pyverify.optimal.belady import min_run_flat

    caches = None if cache_of is None else np.asarray(cache_of, dtype=np.int64)
    return {
        FORCED: list(forced_run_flat(ids, lengths, caches, capacity)[0]),
        BYPASS: list(min_run_flat(ids, lengths, caches, capacity)[0]),
    }


__all__ = [
    "ADMISSIONS",
    "BYPASS",
    "FORCED",
    "PrefixClosureViolated",
    "forced_curve_points",
    "forced_misses",
    "forced_run",
    "forced_run_flat",
    "forced_witness_arrays",
    "optimum_hits",
]
