"""The checker's own recounts: flat MIN (the optimum), the forced-admission optimum and flat LRU.

Written apart from the searchers (:mod:`pyverify.optimal.belady`, :mod:`pyverify.sim.simulate`)
and short enough to read in a minute. Each works on the *flat* sequence of each cache (its
requests' chains, concatenated in trace order) and rests on a stated argument, not on code:

* :func:`min_misses`: Belady's MIN in its bypass form -- after each reference keep the ``C`` live
  blocks whose next use comes soonest, drop blocks never used again. Optimal for flat caches
  (Belady 1966; Mattson, Gecsei, Slutz, Traiger 1970; Lean theorem ``min_misses_le``), and a lower
  bound for the prefix cache by the flat relaxation (Lean theorem ``prefix_run_is_flat_run``;
  docs/min-flat-relaxation.md). Its equality with Lean's MIN is tested. With one cache per host it
  is the sum over hosts of MIN on each host's sequence: a lower bound for per-host prefix caches
  (Lean theorem ``fleet_misses_ge_per_host_min``), achieved on prefix-closed chains.
* :func:`forced_misses`: the optimum with *forced admission* (every block a request hits or
  fetches is held when it ends, the first ``C`` of a longer chain): per cache, after each request
  keep its first ``min(k, C)`` blocks and, of the others held, the soonest used again. Counted
  flatly, which is what the argument needs: Belady's exchange argument with those blocks pinned
  makes this the fewest misses of any forced run, and a prefix run misses at least its flat misses
  (pyverify/optimal/forced.py; docs/min-flat-relaxation.md, "Forced admission"). Lean bounds one
  cache's chains of 1..C blocks (``pinned_misses_ge_forced_min``); equality with it is tested.
* :func:`lru_misses`: a flat LRU cache; equal to pyverify's longest-prefix LRU on prefix-closed
  traces (pyverify/sim/mrc.py's docstring; Lean theorem ``prefix_lru_eq_flat``, host by host).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import Callable, Iterator, Sequence

import numpy as np

from pyverify.trusted.reader import flat

#: The loops here run on Python lists. Faster code with the same answers (them, next uses, runs.py's
#: replay and renumbering) is lent only to certify's own check (:mod:`pyverify.certify.accelerate`,
#: numba); ``verify`` never sets it. ``tests/test_array_check.py`` holds it equal to the code here.
lent: dict[str, Callable] = {}


def next_uses(keys: np.ndarray) -> np.ndarray:
    """For each position, the next position holding the same key, or ``len(keys)`` if none."""
    order = np.argsort(keys, kind="stable")
    following = np.full(keys.size, keys.size, dtype=np.int64)
    same = keys[order[1:]] == keys[order[:-1]]
    following[order[:-1][same]] = order[1:][same]
    return following


def per_cache(keys, offsets, caches) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Each cache's flat sequence of keys, with its requests' lengths."""
    lengths = np.diff(offsets)
    if caches.size == 0 or bool((caches == caches[0]).all()):
        yield keys, lengths
        return
    of_reference = np.repeat(caches, lengths)
    for q in np.unique(caches):
        yield keys[of_reference == q], lengths[caches == q]


def min_loop(keys: np.ndarray, following: np.ndarray, capacity: int, universe: int) -> int:
    """Misses of bypass MIN with ``capacity`` blocks on one flat sequence of keys."""
    keys, following, n, misses = keys.tolist(), following.tolist(), keys.size, 0
    kept, farthest_first = {}, []  # key -> its next use; (-next use, key), stale ones skipped
    for p, key in enumerate(keys):
        if kept.pop(key, None) is None:
            misses += 1
        if following[p] == n:  # never used again
            continue
        kept[key] = following[p]
        heapq.heappush(farthest_first, (-following[p], key))
        while len(kept) > capacity:
            use, victim = heapq.heappop(farthest_first)
            if kept.get(victim) == -use:
                del kept[victim]
    return misses


def forced_loop(keys, following, lengths, capacity: int, universe: int) -> int:
    """Flat misses of one forced-admission cache kept by Belady's rule, the running request pinned."""
    keys, following = keys.tolist(), following.tolist()
    kept, farthest_first, misses, start = {}, [], 0, 0  # as in min_loop
    for length in lengths.tolist():
        end = start + length
        misses += sum(1 for key in keys[start:end] if key not in kept)
        pinned = set(keys[start : min(end, start + capacity)])
        for p in range(start, end):
            if keys[p] in pinned:
                kept[keys[p]] = following[p]
                heapq.heappush(farthest_first, (-following[p], keys[p]))
            else:
                kept.pop(keys[p], None)  # beyond the first C of its chain: computed, not cached
        set_aside = []
        while len(kept) > capacity:
            use, victim = heapq.heappop(farthest_first)
            if kept.get(victim) != -use:
                continue
            if victim in pinned:
                set_aside.append((use, victim))
            else:
                del kept[victim]
        for entry in set_aside:
            heapq.heappush(farthest_first, entry)
        start = end
    return misses


def lru_loop(keys: np.ndarray, capacity: int) -> int:
    recent, misses = OrderedDict(), 0  # keys, least recently used first
    for key in keys.tolist():
        if key in recent:
            recent.move_to_end(key)
            continue
        misses += 1
        recent[key] = None
        if len(recent) > capacity:
            recent.popitem(last=False)
    return misses


def count(rule: str, keys, offsets, caches, capacity: int, universe: int) -> int:
    """The sum over caches of ``rule`` ("min", "forced" or "lru") with ``capacity`` blocks each;
    ``keys``: one per (cache, block) pair, from 0 to ``universe - 1``."""
    total, following = 0, lent.get("next_uses", next_uses)
    for sequence, lengths in per_cache(keys, offsets, caches):
        if rule == "lru":
            total += lru_loop(sequence, capacity)
        elif rule == "min":
            loop = lent.get("min", min_loop)
            total += int(loop(sequence, following(sequence), capacity, universe))
        else:
            loop = lent.get("forced", forced_loop)
            total += int(loop(sequence, following(sequence), lengths, capacity, universe))
    return total


def on_chains(rule: str, chains: Sequence[Sequence[int]], caches, capacity: int) -> int:
    ids, offsets = flat([list(chain) for chain in chains])
    blocks, keys = np.unique(ids, return_inverse=True)
    return count(rule, keys.ravel(), offsets, np.asarray(caches), capacity, blocks.size)


def min_misses(chains: Sequence[Sequence[int]], caches: Sequence[int], capacity: int) -> int:
    """The fewest misses of the prefix caches (sum over caches of flat MIN)."""
    return on_chains("min", chains, caches, capacity)


def flat_min_misses(sequence: Sequence[int], capacity: int) -> int:
    """Misses of bypass MIN with ``capacity`` blocks on one flat sequence."""
    return on_chains("min", [sequence], [0], capacity)


def forced_misses(chains: Sequence[Sequence[int]], caches: Sequence[int], capacity: int) -> int:
    """The fewest misses of forced-admission caches (sum over caches)."""
    return on_chains("forced", chains, caches, capacity)


def lru_misses(chains: Sequence[Sequence[int]], caches: Sequence[int], capacity: int) -> int:
    """Misses of LRU caches of ``capacity`` blocks (flat replay per cache)."""
    return on_chains("lru", chains, caches, capacity)


__all__ = ["count", "flat_min_misses", "forced_misses", "lent", "lru_misses", "min_misses"]
