"""Replaying a run on flat arrays: rules 1-5 of :mod:`pyverify.trusted.check`, whole arrays at a time.

A run is four arrays (the packed form, :mod:`pyverify.trusted.packed`; a list-form run is turned
into them by :func:`arrays_of`): the cache each request reads, its hit blocks, and the blocks it
drops, ``dropped_blocks[dropped_offsets[t]:dropped_offsets[t + 1]]``. Blocks are renamed to one
key per (cache, block) pair (:class:`PairKeys`), so "held by its cache" is a fact about a key.

No loop steps through the requests. Whether a key is held when request ``t`` starts follows from
the events before ``t`` on that key: it is held iff its last event was a fetch (a request's misses
fetch its blocks; a drop after the request lets one go, and wins over a fetch of the same request,
as rule 3 takes the union first). Each rule then finds every request it refuses, and the replay
reports the first: the earliest request, and within one the rules in the order of the docstring
of :mod:`pyverify.trusted.check`. Requests before the first refusal are legal steps, so the events
before it are those of a legal run, which is all the first refusal depends on.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from pyverify.errors import CheckFailed
from pyverify.trusted.recount import lent

# The rules a step can break, in the order a request is checked.
WRONG_CACHE, TOO_MANY_HITS, HIT_NOT_HELD, PREFIX_LONGER = 0, 1, 2, 3
REPEATED_DROP, DROP_NEITHER, FORCED_DROP, OVER_CAPACITY = 4, 5, 6, 7


def find(table: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(index, found)`` of ``values`` in the sorted ``table``."""
    if table.size == 0:
        return np.zeros(values.size, dtype=np.int64), np.zeros(values.size, dtype=bool)
    at = np.minimum(np.searchsorted(table, values), table.size - 1)
    return at, table[at] == values


class PairKeys:
    """A key from 0 to ``universe - 1`` per (cache, block) pair of the trace's references."""

    def __init__(self, ids: np.ndarray, cache_of_reference: np.ndarray, fleet: int):
        self.fleet, unique = fleet, lent.get("unique", lambda v: np.unique(v, return_inverse=True))
        self.blocks, index = unique(ids)
        codes = index.ravel() * fleet + cache_of_reference  # below references * 65536: no overflow
        if fleet == 1:  # the codes are the block indices already: no second sort
            self.pairs, keys = np.arange(self.blocks.size), codes
        else:
            self.pairs, keys = unique(codes)
        self.of_references, self.universe = keys.ravel(), int(self.pairs.size)

    def look_up(self, blocks: np.ndarray, caches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(key, found)`` of each (cache, block) pair; a pair no reference has is not found."""
        index, known = find(self.blocks, blocks)
        key, paired = find(self.pairs, index * self.fleet + caches)
        return key, known & paired


def arrays_of(run: dict[str, Any]) -> dict[str, np.ndarray]:
    """A list-form run (its integers checked by the schema and :mod:`pyverify.trusted.check`) as
    the four arrays of the packed form."""
    dropped = run["dropped"]
    offsets = np.zeros(len(dropped) + 1, dtype=np.int64)
    np.cumsum([len(blocks) for blocks in dropped], out=offsets[1:])
    flat = itertools.chain.from_iterable(dropped)
    return {
        "cache_of": np.array(run["cache_of"], dtype=np.int64),
        "hit_blocks": np.array(run["hit_blocks"], dtype=np.int64),
        "dropped_offsets": offsets,
        "dropped_blocks": np.fromiter(flat, dtype=np.int64, count=int(offsets[-1])),
    }


def replay(trace, caches, keyed, capacity, run, what, forced=False) -> int:
    """Replay ``run`` by rules 1-4 (and 5 if ``forced``) on the trace's ``ids`` and ``offsets``;
    its misses, or :class:`CheckFailed` naming the first illegal step. ``caches``: the cache each
    request reads; ``keyed``: the :class:`PairKeys` of the references."""
    ids, offsets = trace.ids, trace.offsets
    n = offsets.size - 1
    sizes = (run["cache_of"].size, run["hit_blocks"].size, run["dropped_offsets"].size - 1)
    for key, size in zip(("cache_of", "hit_blocks", "dropped"), sizes):
        if size != n:
            raise CheckFailed(f"{what}.{key} has {size} entries, the instance has {n} requests")
    lengths, hits, requests = np.diff(offsets), run["hit_blocks"], np.arange(n)
    keys, span = keyed.of_references, n + 1
    drop_request = np.repeat(requests, np.diff(run["dropped_offsets"]))
    drop_keys, known = keyed.look_up(run["dropped_blocks"], caches[drop_request])
    # A block no reference of its cache has is neither held nor fetched there: a key past the others.
    strangers, renamed = np.unique(run["dropped_blocks"][~known], return_inverse=True)
    drop_keys[~known] = keyed.universe + renamed.ravel()
    if "replay" in lent:  # certify's own check, compiled (pyverify.certify.accelerate)
        refusals = lent["replay"](keyed, trace, run, caches, drop_keys, capacity, forced)
        return outcome(refusals, trace, caches, run, what, capacity)
    request_of = np.repeat(requests, lengths)  # the request of each reference
    hit = np.arange(ids.size) - offsets[request_of] < hits[request_of]
    fetches = np.sort(keys[~hit] * span + request_of[~hit])  # (key, request) codes
    drops = drop_keys * span + drop_request
    repeats = np.sort(drops)
    # Both sorted: a stable sort merges them in one pass. A fetch sorts before a drop; -1 first
    # stands for "no earlier event" (it names no key).
    events = np.sort(np.concatenate(([-1], fetches * 2, repeats * 2 + 1)), kind="stable")

    def held(key: np.ndarray, request: np.ndarray) -> np.ndarray:
        """Whether ``key`` is held when ``request`` starts: its last earlier event is a fetch."""
        last = events[np.searchsorted(events, (key * span + request) * 2) - 1]
        return (last // 2 // span == key) & (last % 2 == 0)

    refusals = []  # (request, rule, index, count): the first step each rule refuses

    def refuse(rule: int, bad: np.ndarray, request: np.ndarray, count=None) -> None:
        where = np.flatnonzero(bad)
        if where.size:
            i = int(where[0])
            refusals.append((int(request[i]), rule, i, 0 if count is None else int(count[i])))

    refuse(WRONG_CACHE, run["cache_of"] != caches, requests)
    refuse(TOO_MANY_HITS, hits > lengths, requests)
    not_held = hit.copy()  # rule 2: the hits are held ...
    not_held[hit] = ~held(keys[hit], request_of[hit])
    refuse(HIT_NOT_HELD, not_held, request_of)
    short = np.flatnonzero(hits < lengths)  # ... and the next block is not
    next_block = offsets[short] + hits[short]
    refuse(PREFIX_LONGER, held(keys[next_block], short), short, next_block)
    twice = repeats[1:][repeats[1:] == repeats[:-1]] % span
    refuse(REPEATED_DROP, twice == twice.min(initial=n), twice)
    neither = ~held(drop_keys, drop_request) & ~find(fetches, drops)[1]  # rule 3
    refuse(DROP_NEITHER, neither, drop_request)
    if forced:  # rule 5: the request's first min(k, C) blocks stay
        pinned = np.arange(ids.size) - offsets[request_of] < (
            ids.size if capacity is None else capacity
        )
        dropping = find(repeats, keys * span + request_of)[1]
        refuse(FORCED_DROP, pinned & dropping, request_of)
    if capacity is not None:  # rule 4, each cache counted on from its previous request
        new = ~hit
        new[new] = ~held(keys[new], request_of[new])
        change = np.bincount(request_of[new], minlength=n) - np.diff(run["dropped_offsets"])
        order = np.argsort(caches, kind="stable")
        total = np.cumsum(change[order])
        start = np.r_[True, caches[order][1:] != caches[order][:-1]]
        first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
        size = np.empty(n, dtype=np.int64)
        size[order] = total - total[first] + change[order][first]
        refuse(OVER_CAPACITY, size > capacity, requests, size)
    return outcome(refusals, trace, caches, run, what, capacity)


def outcome(refusals, trace, caches, run, what, capacity) -> int:  # misses, or the first refusal
    if refusals:  # (request, rule, index, count): the earliest request, then the rule's order
        raise CheckFailed(refusal(*min(refusals), trace, caches, run, what, capacity))
    return int(trace.ids.size - run["hit_blocks"].sum())


def refusal(t, rule, index, count, trace, caches, run, what, capacity) -> str:
    """The words for ``rule`` refused at request ``t`` (``index``: the reference or dropped entry)."""
    ids, offsets, q, h = trace.ids, trace.offsets, int(caches[t]), int(run["hit_blocks"][t])
    if rule == WRONG_CACHE:
        return f"{what}.cache_of[{t}] is {int(run['cache_of'][t])}, but request {t} reads cache {q}"
    if rule == TOO_MANY_HITS:
        k = int(offsets[t + 1] - offsets[t])
        return f"{what}.hit_blocks[{t}] is {h}, but request {t} has only {k} blocks"
    if rule == HIT_NOT_HELD:
        return (
            f"{what}.hit_blocks[{t}]: block {ids[index]} counted as a hit but not held by cache {q}"
        )
    if rule == PREFIX_LONGER:
        return f"{what}.hit_blocks[{t}]: block {ids[count]} is held by cache {q}, so the hit prefix is longer than {h}"
    if rule == REPEATED_DROP:
        return f"{what}.dropped[{t}] repeats a block"
    if rule == DROP_NEITHER:
        block = run["dropped_blocks"][index]
        return (
            f"{what}.dropped[{t}]: cache {q} drops block {block}, which it neither held nor fetched"
        )
    if rule == FORCED_DROP:
        how = "hit" if index - offsets[t] < h else "fetched"
        return (
            f"{what}.dropped[{t}]: cache {q} drops block {ids[index]}, which request {t} {how}: "
            "forced admission holds every block of the request (up to the capacity) when it ends"
        )
    return f"{what}.dropped[{t}]: cache {q} would hold {count} blocks, capacity is {capacity}"


__all__ = ["PairKeys", "arrays_of", "find", "replay"]
