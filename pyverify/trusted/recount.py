"""The checker's own recounts: flat MIN (the optimum), the forced-admission optimum and flat LRU, in plain Python.

Written apart from the searchers (:mod:`pyverify.sim.belady_min`,
:mod:`pyverify.sim.simulate`) and short enough to read in a minute. Both work
on the *flat* block sequence of each cache (its requests' chains, concatenated
in trace order), and each rests on a stated argument, not on code:

* :func:`min_misses`: Belady's MIN in its bypass form -- after each reference
  keep the ``C`` live blocks whose next use comes soonest, drop blocks never
  used again. Optimal for flat caches (Belady 1966; Mattson, Gecsei, Slutz,
  Traiger 1970; Lean theorem ``min_misses_le``), and a lower bound for the
  prefix cache by the flat relaxation (Lean theorem ``prefix_run_is_flat_run``;
  docs/min-flat-relaxation.md). Its equality with Lean's MIN is tested.
  With one cache per host it is the sum over hosts of MIN on each host's
  sequence: a lower bound for per-host prefix caches (Lean theorem
  ``fleet_misses_ge_per_host_min``), achieved on prefix-closed chains
  (``per_host_min_is_fleet_run``).
* :func:`forced_misses`: the optimum with *forced admission* (every block a
  request hits or fetches is held when it ends, the first ``C`` of a longer
  chain): per cache, after each request keep its first ``min(k, C)`` blocks
  and, of the other blocks held, the soonest used again. Counted flatly (a
  block of the request not held is a miss), which is what the argument needs:
  Belady's exchange argument with those blocks pinned makes this flat count
  the fewest of any forced run, and a prefix run's misses are at least its
  flat misses (pyverify/sim/forced_min.py; docs/min-flat-relaxation.md,
  "Forced admission"). Not proved in Lean; tested against exhaustive search.
* :func:`lru_misses`: a flat LRU cache; equal to pyverify's longest-prefix LRU
  on prefix-closed traces (argued in pyverify/sim/mrc.py's docstring; Lean
  theorem ``prefix_lru_eq_flat``, for one cache, applied host by host; tested
  against the simulator and against the Lean mirror's ``lru_misses``).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import Sequence


def per_cache_sequences(
    chains: Sequence[Sequence[int]], caches: Sequence[int]
) -> dict[int, list[int]]:
    sequences: dict[int, list[int]] = {}
    for chain, q in zip(chains, caches):
        sequences.setdefault(q, []).extend(chain)
    return sequences


def flat_min_misses(sequence: list[int], capacity: int) -> int:
    """Misses of bypass MIN with ``capacity`` blocks on one flat sequence."""
    # Walk backwards once to learn, for every position, when its block comes next.
    upcoming: list[int] = [0] * len(sequence)
    seen: dict[int, int] = {}
    infinity = len(sequence)
    for i in range(len(sequence) - 1, -1, -1):
        upcoming[i] = seen.get(sequence[i], infinity)
        seen[sequence[i]] = i
    kept: dict[int, int] = {}  # block -> next use
    farthest_first: list[
        tuple[int, int]
    ] = []  # max-heap as (-next use, block); stale entries skipped
    misses = 0
    for i, block in enumerate(sequence):
        if block not in kept:
            misses += 1
        if upcoming[i] == infinity:
            kept.pop(block, None)
            continue
        kept[block] = upcoming[i]
        heapq.heappush(farthest_first, (-upcoming[i], block))
        while len(kept) > capacity:
            negative, victim = heapq.heappop(farthest_first)
            if kept.get(victim) == -negative:
                del kept[victim]
    return misses


def min_misses(chains: Sequence[Sequence[int]], caches: Sequence[int], capacity: int) -> int:
    """The fewest misses of the prefix caches (sum over caches of flat MIN)."""
    return sum(
        flat_min_misses(seq, capacity) for seq in per_cache_sequences(chains, caches).values()
    )


def per_cache_requests(
    chains: Sequence[Sequence[int]], caches: Sequence[int]
) -> dict[int, list[Sequence[int]]]:
    requests: dict[int, list[Sequence[int]]] = {}
    for chain, q in zip(chains, caches):
        requests.setdefault(q, []).append(chain)
    return requests


def forced_requests_misses(requests: list[Sequence[int]], capacity: int) -> int:
    """Flat misses of one forced-admission cache of ``capacity`` blocks kept by Belady's rule, request pinned."""
    flat = [b for chain in requests for b in chain]
    infinity = len(flat)
    upcoming: list[int] = [infinity] * len(flat)
    seen: dict[int, int] = {}
    for i in range(len(flat) - 1, -1, -1):
        upcoming[i] = seen.get(flat[i], infinity)
        seen[flat[i]] = i
    kept: dict[int, int] = {}  # block -> next use
    farthest_first: list[tuple[int, int]] = []  # (-next use, block); stale entries skipped
    misses = 0
    i = 0
    for chain in requests:
        misses += sum(1 for b in chain if b not in kept)
        must_keep = set(chain[:capacity])
        for b in chain:
            if b in must_keep:
                kept[b] = upcoming[i]
                heapq.heappush(farthest_first, (-upcoming[i], b))
            else:
                kept.pop(b, None)  # beyond the first C of its chain: computed, not cached
            i += 1
        set_aside = []
        while len(kept) > capacity:
            negative, victim = heapq.heappop(farthest_first)
            if kept.get(victim) != -negative:
                continue
            if victim in must_keep:
                set_aside.append((negative, victim))
                continue
            del kept[victim]
        for entry in set_aside:
            heapq.heappush(farthest_first, entry)
    return misses


def forced_misses(chains: Sequence[Sequence[int]], caches: Sequence[int], capacity: int) -> int:
    """The fewest misses of forced-admission caches (sum over caches)."""
    return sum(
        forced_requests_misses(requests, capacity)
        for requests in per_cache_requests(chains, caches).values()
    )


def lru_misses(chains: Sequence[Sequence[int]], caches: Sequence[int], capacity: int) -> int:
    """Misses of LRU caches of ``capacity`` blocks (flat replay per cache)."""
    misses = 0
    for sequence in per_cache_sequences(chains, caches).values():
        recent: OrderedDict[int, None] = OrderedDict()
        for block in sequence:
            if block in recent:
                recent.move_to_end(block)
                continue
            misses += 1
            recent[block] = None
            if len(recent) > capacity:
                recent.popitem(last=False)
    return misses
