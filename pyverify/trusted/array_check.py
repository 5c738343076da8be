"""The checker's replay and recounts on flat arrays: the same rules as :mod:`pyverify.trusted.check` and
:mod:`pyverify.trusted.recount`, for runs of millions of block references.

Same rules, same first failure, same words: ``tests/test_array_check.py`` holds
:func:`replay_arrays` to :func:`pyverify.trusted.check.replay` (misses, or the
exact refusal) and the recounts to :mod:`pyverify.trusted.recount` on
Hypothesis instances; the plain-Python code stays the reference. The loops are
plain Python over numpy arrays, compiled by numba when it is installed
(:mod:`pyverify.trusted.compiled`); nothing here comes from the searchers.

Blocks are renamed to keys, one per (cache, block) pair (:class:`PairKeys`),
so a cache's contents are one flag per key. A dropped block that no request
of its cache references gets a key of its own past those (it can be neither
held nor fetched, and the replay says so).
"""

from __future__ import annotations

import numpy as np

from pyverify.trusted.check import CheckFailed
from pyverify.trusted.compiled import kernel

# The replay's verdict codes (0: legal run), one per rule a step can break, in the order the plain replay checks them.
(
    LEGAL,
    TOO_MANY_HITS,
    HIT_NOT_HELD,
    PREFIX_LONGER,
    REPEATED_DROP,
    DROP_NEITHER,
    FORCED_DROP,
    OVER_CAPACITY,
) = range(8)


#: Ids below this many times the number of references are used as they are (no sort); larger ones are renumbered.
DENSE_FACTOR = 4


def _dense(values: np.ndarray) -> np.ndarray | None:
    """The sorted distinct ``values`` if they must be renumbered to stay small, else ``None`` (used as they are)."""
    if values.size == 0 or int(values.max()) < DENSE_FACTOR * values.size + 1024:
        return None
    return np.unique(values)


def _look_up(
    table: np.ndarray | None, bound: int, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(index, found)`` of ``values`` in ``table`` (``None``: the values themselves, found when below ``bound``)."""
    if table is None:
        found = values < bound
        return np.where(found, values, 0), found
    at = np.minimum(np.searchsorted(table, values), max(table.size - 1, 0))
    found = table[at] == values if table.size else np.zeros(values.size, dtype=bool)
    return np.where(found, at, 0), found


class PairKeys:
    """A small integer key per (cache, block) pair of the trace, so a cache's contents are one flag per key.

    Block ids (up to 2**63 - 1) are first renumbered if large, then paired with
    their cache (``block * fleet + cache``, which cannot overflow once blocks
    are below a few times the references), and the pairs renumbered if sparse.
    """

    def __init__(self, ids: np.ndarray, cache_of_reference: np.ndarray, fleet: int):
        self.fleet = fleet
        self.blocks = _dense(ids)
        self.block_bound = int(ids.max()) + 1 if ids.size else 0
        codes = self._codes(_look_up(self.blocks, self.block_bound, ids)[0], cache_of_reference)
        self.pairs = _dense(codes)
        self.universe = (
            (int(codes.max()) + 1 if codes.size else 0)
            if self.pairs is None
            else int(self.pairs.size)
        )
        self.of_references = _look_up(self.pairs, self.universe, codes)[0].astype(np.int64)

    def _codes(self, blocks: np.ndarray, caches: np.ndarray) -> np.ndarray:
        return blocks if self.fleet == 1 else blocks * self.fleet + caches

    def look_up(self, blocks: np.ndarray, caches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(key, found)`` of each (cache, block) pair; a pair no reference has is not found."""
        index, found = _look_up(self.blocks, self.block_bound, blocks)
        key, paired = _look_up(self.pairs, self.universe, self._codes(index, caches))
        return key.astype(np.int64), found & paired


def replay_arrays(
    ids: np.ndarray,
    offsets: np.ndarray,
    caches: np.ndarray,
    capacity: int | None,
    run: dict[str, np.ndarray],
    what: str,
    forced: bool = False,
    keyed=None,
) -> int:
    """Replay a packed run by rules 1-4 (and 5 if ``forced``); its misses, or :class:`CheckFailed` as the plain replay words it.

    ``keyed``: the :class:`PairKeys` of the references, if made already."""
    n = offsets.size - 1
    for key in ("cache_of", "hit_blocks"):
        if run[key].size != n:
            raise CheckFailed(
                f"{what}.{key} has {run[key].size} entries, the instance has {n} requests"
            )
    if run["dropped_offsets"].size - 1 != n:
        raise CheckFailed(
            f"{what}.dropped has {run['dropped_offsets'].size - 1} entries, the instance has {n} requests"
        )
    fleet = int(caches.max()) + 1 if caches.size else 1
    keyed = keyed or PairKeys(ids, np.repeat(caches, np.diff(offsets)), fleet)
    keys, universe = keyed.of_references, keyed.universe
    drop_cache = np.repeat(
        caches, np.diff(run["dropped_offsets"])
    )  # = run["cache_of"] up to the first step refused
    drop_keys, known = keyed.look_up(run["dropped_blocks"], drop_cache)
    # A block no reference of its cache has is neither held nor fetched there: a key of its own past the others (by its
    # id alone: repeats are looked for within one request, which reads one cache).
    strangers, renamed = np.unique(run["dropped_blocks"][~known], return_inverse=True)
    drop_keys[~known] = universe + renamed.ravel()
    wrong_cache = np.flatnonzero(run["cache_of"] != caches)
    stop = (
        int(wrong_cache[0]) if wrong_cache.size else n
    )  # the plain replay refuses there, before replaying that step
    verdict = kernel(_replay)(
        keys,
        offsets,
        caches,
        run["hit_blocks"],
        drop_keys,
        run["dropped_offsets"],
        stop,
        -1 if capacity is None else capacity,
        forced,
        universe + strangers.size,
        fleet,
    )
    misses, code, t, index, count = (int(v) for v in verdict)
    if code == LEGAL and stop < n:
        raise CheckFailed(
            f"{what}.cache_of[{stop}] is {int(run['cache_of'][stop])}, but request {stop} reads cache {int(caches[stop])}"
        )
    if code != LEGAL:
        raise CheckFailed(_refusal(code, t, index, count, ids, offsets, caches, run, what))
    return misses


def _refusal(code, t, index, count, ids, offsets, caches, run, what) -> str:
    """The plain replay's words for verdict ``code`` at request ``t`` (``index``: the reference or dropped entry)."""
    q, h, k = int(caches[t]), int(run["hit_blocks"][t]), int(offsets[t + 1] - offsets[t])
    if code == TOO_MANY_HITS:
        return f"{what}.hit_blocks[{t}] is {h}, but request {t} has only {k} blocks"
    if code == HIT_NOT_HELD:
        return f"{what}.hit_blocks[{t}]: block {int(ids[index])} counted as a hit but not held by cache {q}"
    if code == PREFIX_LONGER:
        return f"{what}.hit_blocks[{t}]: block {int(ids[index])} is held by cache {q}, so the hit prefix is longer than {h}"
    if code == REPEATED_DROP:
        return f"{what}.dropped[{t}] repeats a block"
    if code == DROP_NEITHER:
        return f"{what}.dropped[{t}]: cache {q} drops block {int(run['dropped_blocks'][index])}, which it neither held nor fetched"
    if code == FORCED_DROP:
        how = "hit" if index - int(offsets[t]) < h else "fetched"
        return (
            f"{what}.dropped[{t}]: cache {q} drops block {int(ids[index])}, which request {t} {how}: "
            "forced admission holds every block of the request (up to the capacity) when it ends"
        )
    return f"{what}.dropped[{t}]: cache {q} would hold {count} blocks, capacity is {index}"  # OVER_CAPACITY: index is C


def _replay(
    keys, offsets, caches, hits, drop_keys, drop_offsets, stop, capacity, forced, universe, fleet
):
    """Rules 1-5 step by step, as :func:`pyverify.trusted.check.replay`: ``[misses, code, request, index, count]``."""
    held = np.zeros(universe, dtype=np.uint8)  # rule 1: every cache starts empty
    dropped_at = np.zeros(
        universe, dtype=np.int32
    )  # request t + 1 marks the keys it drops (repeats, rule 5)
    fetched_at = np.zeros(universe, dtype=np.int32)  # request t + 1 marks the keys it fetches
    size = np.zeros(fleet, dtype=np.int64)
    misses = 0
    for t in range(stop):
        q, h, start, end = caches[t], hits[t], offsets[t], offsets[t + 1]
        k = end - start
        if h > k:
            return np.array([misses, TOO_MANY_HITS, t, 0, 0])
        for p in range(start, start + h):  # rule 2: the hits are held ...
            if held[keys[p]] == 0:
                return np.array([misses, HIT_NOT_HELD, t, p, 0])
        if h < k and held[keys[start + h]] == 1:  # ... and the next block is not
            return np.array([misses, PREFIX_LONGER, t, start + h, 0])
        for d in range(drop_offsets[t], drop_offsets[t + 1]):
            if dropped_at[drop_keys[d]] == t + 1:
                return np.array([misses, REPEATED_DROP, t, d, 0])
            dropped_at[drop_keys[d]] = t + 1
        for p in range(start + h, end):
            fetched_at[keys[p]] = t + 1
        for d in range(
            drop_offsets[t], drop_offsets[t + 1]
        ):  # rule 3: only what it held or fetched
            if held[drop_keys[d]] == 0 and fetched_at[drop_keys[d]] != t + 1:
                return np.array([misses, DROP_NEITHER, t, d, 0])
        if forced:  # rule 5: the request's first min(k, C) blocks stay
            kept = k if capacity < 0 or k < capacity else capacity
            for p in range(start, start + kept):
                if dropped_at[keys[p]] == t + 1:
                    return np.array([misses, FORCED_DROP, t, p, 0])
        for p in range(start + h, end):
            if held[keys[p]] == 0:
                held[keys[p]] = 1
                size[q] += 1
        for d in range(drop_offsets[t], drop_offsets[t + 1]):
            if held[drop_keys[d]] == 1:
                held[drop_keys[d]] = 0
                size[q] -= 1
        if capacity >= 0 and size[q] > capacity:  # rule 4
            return np.array([misses, OVER_CAPACITY, t, capacity, size[q]])
        misses += k - h
    return np.array([misses, LEGAL, stop, 0, 0])


def distinct_keys(keys: np.ndarray, universe: int) -> int:
    """How many distinct keys ``keys`` holds (with pair keys: the compulsory floor, distinct (cache, block) pairs)."""
    seen = np.zeros(universe, dtype=bool)
    seen[keys] = True
    return int(np.count_nonzero(seen))


class ArrayCounts:
    """:class:`pyverify.trusted.check.PlainCounts` on a trace's arrays (a packed witness; no greedy runs)."""

    def __init__(self, trace, caches: list[int]):
        self.ids, self.offsets = trace.ids, trace.offsets
        self.caches = np.asarray(caches, dtype=np.int64)
        self.n_requests, self.references = int(self.offsets.size - 1), int(self.ids.size)
        fleet = int(self.caches.max()) + 1 if self.caches.size else 1
        self.keyed = PairKeys(
            self.ids, np.repeat(self.caches, np.diff(self.offsets)), fleet
        )  # once, for every count

    def replay(
        self, capacity: int | None, run: dict[str, np.ndarray], what: str, forced: bool
    ) -> int:
        return replay_arrays(
            self.ids, self.offsets, self.caches, capacity, run, what, forced, self.keyed
        )

    def floor(self) -> int:
        return distinct_keys(self.keyed.of_references, self.keyed.universe)

    def min_misses(self, capacity: int) -> int:
        from pyverify.trusted.array_recount import min_misses_arrays

        return min_misses_arrays(
            self.keyed.of_references, self.offsets, self.caches, capacity, self.keyed.universe
        )

    def forced_misses(self, capacity: int) -> int:
        from pyverify.trusted.array_recount import forced_misses_arrays

        return forced_misses_arrays(
            self.keyed.of_references, self.offsets, self.caches, capacity, self.keyed.universe
        )


def counts_on_chains(chains, caches: list[int]) -> ArrayCounts:
    """:class:`ArrayCounts` on chains held as tuples (as :mod:`pyverify.trusted.reader` reads)."""
    from types import SimpleNamespace

    offsets = np.zeros(len(chains) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, chains), np.int64, len(chains)), out=offsets[1:])
    ids = np.fromiter((block for chain in chains for block in chain), np.int64, int(offsets[-1]))
    return ArrayCounts(SimpleNamespace(ids=ids, offsets=offsets), caches)


__all__ = ["ArrayCounts", "counts_on_chains", "PairKeys", "distinct_keys", "replay_arrays"]
