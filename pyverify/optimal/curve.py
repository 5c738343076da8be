r"""The optimal miss-ratio curve: the fewest misses at every capacity, in one pass.

Belady's MIN in its bypass form (:mod:`pyverify.optimal.belady`) is a *stack
algorithm* (Mattson, Gecsei, Slutz, Traiger, "Evaluation techniques for
storage hierarchies", IBM Systems Journal 9(2), 1970): after every reference
the blocks held by a cache of ``C`` blocks are also held by one of ``C + 1``.
So there is one ordered *priority stack* whose top ``C`` entries are MIN's
cache of size ``C``, for every ``C`` at once, and a reference hits with ``C``
blocks exactly when its block sits among the top ``C`` entries. Recording that
position (the *OPT stack distance*) for every reference gives the whole curve:
``misses(C) = cold + #{distance >= C}``, as for LRU (:mod:`pyverify.sim.mrc`).
By the flat relaxation (docs/min-flat-relaxation.md) these are the optimal
misses of the prefix cache, pooled or per host under a static routing.

The stack update (Mattson et al. 1970, for priority policies; here the
priority is "sooner next use", and bypass is allowed)
---------------------------------------------------------------------------
Let ``x`` be referenced at stack position ``d`` (0-based; ``d = ∞`` when cold)
and let ``w`` be its next use. For a cache of size ``C <= d`` (a miss) MIN's
new contents are the ``C`` soonest-used of its old top ``C`` and ``x``; for
``C > d`` (a hit) the set is unchanged. Both are produced by one carry pass:
take ``x`` out (its slot becomes a *hole*), carry ``x`` down from the top, and
at each position keep whichever of (carry, entry) is used sooner, carrying
the other on. The carry is always the latest-used block seen so far, so the
pass only moves the *records* -- entries used later than everything above
them and than ``x`` -- each one record-slot down, ``x`` into the first
record's slot, and the last record into the first hole.

Two implementations of this update are kept and tested against each other:
numpy steps over the positions above the first hole (:func:`opt_distances_numpy`),
and a plain carry loop (:func:`_carry_pass`) compiled with numba where numba
is installed (a dependency on the platforms it has wheels for; see
:mod:`pyverify.sim.kernels`).

Holes are empty slots (a cache of size ``C`` with a hole above ``C`` holds
fewer than ``C`` blocks). A block never used again leaves a hole and is not
re-inserted (bypass MIN drops it at every size). The pass stops at the first
hole: below it nothing changes. Each step is a few numpy operations over the
positions above the first hole; the cost per reference is O(first hole),
O(n * V) in the worst case (V distinct blocks), far less on traces where
blocks die and leave holes near the top. Tests compare the curve with
per-capacity MIN runs at many capacities.

(Faster exact methods exist -- Sugumar and Abraham, "Efficient simulation of
caches under optimal replacement with applications to miss
characterization", SIGMETRICS 1993; Bilardi, Ekanadham, Pattnaik, "Optimal
on-line computation of stack distances for MIN and OPT", CF 2017, O(log V)
per reference -- and are the next step if this one is too slow.)
"""

from __future__ import annotations

import heapq
from typing import Sequence

import numpy as np

from pyverify.optimal.belady import next_uses
from pyverify.optimal.compiled import kernel
from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.counting import reference_hosts
from pyverify.sim.mrc import COLD, MissRatioCurve, curve_from_distances

HOLE = -1


def opt_distances(ids: np.ndarray) -> np.ndarray:
    """OPT stack distance of every reference of one cache's flat sequence (``COLD`` for first references).

    A reference hits in MIN's cache of ``C`` blocks iff its distance is ``< C``.
    Uses the compiled kernel when numba is installed (a dependency wherever it has wheels),
    else the numpy one; tests check they agree.
    """
    ids = np.asarray(ids, dtype=np.int64)
    compiled = kernel(_carry_pass) if ids.size else None  # ~100x faster than the numpy steps
    if compiled is not None:
        dense, universe = dense_ids(ids)
        return compiled(dense.astype(np.int64), next_uses(dense), universe)
    return opt_distances_numpy(ids)


def opt_distances_numpy(ids: np.ndarray) -> np.ndarray:
    """:func:`opt_distances` with numpy vector steps (no compiler needed)."""
    ids = np.asarray(ids, dtype=np.int64)
    n = ids.size
    dense, universe = dense_ids(ids)
    following = next_uses(dense)
    distances = np.full(n, COLD, dtype=np.int64)
    stack = np.full(16, HOLE, dtype=np.int64)  # block at each position
    soon = np.zeros(16, dtype=np.int64)  # its next use
    where = np.full(
        max(universe, 1), -1, dtype=np.int64
    )  # position of each block, -1 if not on the stack
    holes: list[int] = []  # positions of holes above the stack's used length
    length = 0
    dense_list = dense.tolist()
    following_list = following.tolist()
    for p in range(n):
        x, w = dense_list[p], following_list[p]
        d = int(where[x])
        if d >= 0:
            distances[p] = d
            stack[d] = HOLE
            where[x] = -1
            heapq.heappush(holes, d)
        if w == n:
            continue  # never used again: bypass MIN keeps it nowhere
        if holes:
            j = heapq.heappop(holes)
        else:
            j = length
            length += 1
            if length > stack.size:
                stack = np.concatenate((stack, np.full(stack.size, HOLE, dtype=np.int64)))
                soon = np.concatenate((soon, np.zeros(soon.size, dtype=np.int64)))
        if j == 0:
            stack[0], soon[0], where[x] = x, w, 0
            continue
        above = soon[:j]
        # Records: entries used later than x and than every entry above them.
        running = np.maximum.accumulate(above)
        before = np.empty(j, dtype=np.int64)
        before[0] = w
        np.maximum(running[:-1], w, out=before[1:])
        records = np.flatnonzero(above > before)
        if records.size == 0:
            stack[j], soon[j], where[x] = x, w, j
            continue
        targets = np.append(records, j)
        movers = np.concatenate(([x], stack[records]))
        mover_soon = np.concatenate(([w], soon[records]))
        stack[targets] = movers
        soon[targets] = mover_soon
        where[movers] = targets
    return distances


def _carry_pass(dense: np.ndarray, following: np.ndarray, universe: int) -> np.ndarray:
    """The same stack update, one position at a time (compiled by numba when available).

    Carry x down from the top; wherever the entry is used later than the
    carry, swap them; drop the carry into the first hole. No heap is needed:
    the scan stops at the first hole anyway.
    """
    n = dense.size
    distances = np.full(n, -1, dtype=np.int64)
    stack = np.full(universe + 1, -1, dtype=np.int64)  # never more slots than distinct blocks
    soon = np.zeros(universe + 1, dtype=np.int64)
    where = np.full(universe + 1, -1, dtype=np.int64)
    for p in range(n):
        x = dense[p]
        w = following[p]
        d = where[x]
        if d >= 0:
            distances[p] = d
            stack[d] = -1
            where[x] = -1
        if w == n:
            continue
        carry = x
        carry_soon = w
        i = 0
        while True:
            y = stack[i]
            if y == -1:
                stack[i] = carry
                soon[i] = carry_soon
                where[carry] = i
                break
            if soon[i] > carry_soon:
                later = soon[i]
                stack[i] = carry
                soon[i] = carry_soon
                where[carry] = i
                carry = y
                carry_soon = later
            i += 1
    return distances


def optimal_curve(
    chains: Sequence[Sequence[int]], routing: Sequence[int] | None = None, fleet_size: int = 1
) -> MissRatioCurve:
    """The exact optimal (MIN) miss-ratio curve of a prefix-closed trace.

    ``routing=None``: one pooled cache. Otherwise one cache per host, every host
    with the same capacity, under the given static routing. The result has the
    same interface as :func:`pyverify.sim.mrc.lru_curve` (misses, hit_rate, points).
    """
    return optimal_curve_flat(*flatten(chains), routing, fleet_size)


def optimal_curve_flat(
    ids: np.ndarray, lengths: np.ndarray, routing=None, fleet_size: int = 1
) -> MissRatioCurve:
    """:func:`optimal_curve` of a trace given as flat ids and chain lengths."""
    if routing is None:
        return curve_from_distances(opt_distances(ids), caches=1)
    hosts = reference_hosts(routing, lengths)
    parts = [opt_distances(ids[hosts == host]) for host in np.unique(hosts)]
    distances = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return curve_from_distances(distances, caches=fleet_size)


def capacity_to_match(curve: MissRatioCurve, misses: int) -> int | None:
    """The smallest capacity per cache at which ``curve`` misses at most ``misses`` times (None if never)."""
    if misses < curve.cold:
        return None
    full = max(curve.max_useful_capacity, 1)
    grid = np.arange(1, full + 1)
    reached = np.flatnonzero(curve.misses(grid) <= misses)
    return int(grid[reached[0]]) if reached.size else None


__all__ = [
    "capacity_to_match",
    "memory_limit_markdown",
    "memory_limit_summary",
    "opt_distances",
    "opt_distances_numpy",
    "optimal_curve",
    "optimal_curve_flat",
]


def memory_limit_summary(
    chains: Sequence[Sequence[int]],
    routing: Sequence[int],
    fleet_size: int,
    node_capacity_blocks: int,
    capacities: Sequence[int] | None = None,
    block_size_tokens: int | None = None,
) -> dict:
    """The memory-limit answers for one trace (issue 11, item 4), as plain data for a report.

    * ``lru_vs_optimum``: at each pooled capacity, LRU's and the optimum's hit
      rates, the gap, and the capacity LRU needs to do as well as the optimum;
      also the forced-admission optimum's hit rate (``opt_forced_hit_rate``:
      the best of a cache that admits every block it fetches and keeps the
      running request's blocks, :mod:`pyverify.optimal.forced`; one run per capacity);
    * ``pooled_vs_per_host``: at equal *total* memory M, one pool of M blocks
      against ``fleet_size`` caches of M / fleet_size blocks (``routing``, a
      static routing), with both policies;
    * ``local_vs_global``: Mooncake's comparison -- ``fleet_size`` nodes of
      ``node_capacity_blocks`` each, as separate (local) caches or one global
      pool of their sum -- with the optimum as the reference line.

    Hit rates count block references (tokens per block: ``block_size_tokens``,
    recorded for the reader).
    """
    lru_pooled = _lru_curve(chains, None, 1)
    opt_pooled = optimal_curve(chains)
    lru_hosts = _lru_curve(chains, routing, fleet_size)
    opt_hosts = optimal_curve(chains, routing, fleet_size)
    from pyverify.sim.mrc import log_capacities

    if capacities is None:
        capacities = log_capacities(max(lru_pooled.max_useful_capacity, 1), per_decade=4)

    def rate(curve: MissRatioCurve, capacity: int) -> float:
        return float(curve.hit_rate(max(int(capacity), 1)))

    from pyverify.optimal.forced import forced_run_flat

    ids, lengths = flatten(chains)
    lru_vs_optimum = []
    for c in capacities:
        forced = forced_run_flat(ids, lengths, None, max(int(c), 1))[2]
        lru_vs_optimum.append(
            {
                "capacity_blocks": int(c),
                "lru_hit_rate": rate(lru_pooled, c),
                "opt_forced_hit_rate": float(1 - forced / ids.size) if ids.size else 0.0,
                "opt_hit_rate": rate(opt_pooled, c),
                "gap": rate(opt_pooled, c) - rate(lru_pooled, c),
                "lru_capacity_to_match_opt": capacity_to_match(
                    lru_pooled, int(opt_pooled.misses(c))
                ),
            }
        )
    pooled_vs_per_host = []
    shares = sorted(
        {int(total) // fleet_size for total in capacities if total >= fleet_size}
    )  # one row per share
    for each in shares:
        pooled_vs_per_host.append(
            {
                "total_blocks": each * fleet_size,
                "per_host_blocks": each,
                "pooled_lru": rate(lru_pooled, each * fleet_size),
                "pooled_opt": rate(opt_pooled, each * fleet_size),
                "per_host_lru": rate(lru_hosts, each),
                "per_host_opt": rate(opt_hosts, each),
            }
        )
    total = node_capacity_blocks * fleet_size
    local_vs_global = {
        "nodes": fleet_size,
        "node_capacity_blocks": node_capacity_blocks,
        "global_lru": rate(lru_pooled, total),
        "global_opt": rate(opt_pooled, total),
        "local_lru": rate(lru_hosts, node_capacity_blocks),
        "local_opt": rate(opt_hosts, node_capacity_blocks),
        "ceiling_global": lru_pooled.ceiling_hit_rate,
        "ceiling_local": lru_hosts.ceiling_hit_rate,
    }
    return {
        "references": lru_pooled.references,
        "block_size_tokens": block_size_tokens,
        "fleet_size": fleet_size,
        "ceiling_hit_rate": lru_pooled.ceiling_hit_rate,
        "opt_capacity_reaching_ceiling": max(opt_pooled.max_useful_capacity, 1),
        "lru_capacity_reaching_ceiling": max(lru_pooled.max_useful_capacity, 1),
        "lru_vs_optimum": lru_vs_optimum,
        "pooled_vs_per_host": pooled_vs_per_host,
        "local_vs_global": local_vs_global,
    }


def _lru_curve(chains, routing, fleet_size) -> MissRatioCurve:
    from pyverify.sim.mrc import (
        lru_curve,
    )  # the LRU curve's public function (its kernel is maintained apart)

    return lru_curve(chains) if routing is None else lru_curve(chains, routing, fleet_size)


def memory_limit_markdown(summary: dict) -> list[str]:
    """:func:`memory_limit_summary` as Markdown lines (tables) for a report.

    Worded for the report's wording guard: "MIN" names the fewest possible
    misses, and every sentence about them says it is about this instance.
    """
    block = summary.get("block_size_tokens")

    def size(blocks: int) -> str:
        if not block:
            return f"{blocks:,} block{'s' if blocks != 1 else ''}"
        tokens = blocks * block
        amount = (
            f"{tokens / 1e6:.2f}M"
            if tokens >= 1e6
            else f"{tokens / 1e3:.1f}k"
            if tokens >= 1e3
            else f"{tokens}"
        )
        return f"{blocks:,} block{'s' if blocks != 1 else ''} ({amount} tokens)"

    lines = [
        f"Hit rates on this instance, over {summary['references']:,} block references: LRU against MIN, Belady's offline "
        "policy on the flat block sequence, which no demand cache with the same memory beats (Belady's theorem and the "
        "flat relaxation, docs/min-flat-relaxation.md). "
        f"On this instance the ceiling {summary['ceiling_hit_rate']:.4f} is reached by MIN at "
        f"{size(summary['opt_capacity_reaching_ceiling'])} and by LRU at {size(summary['lru_capacity_reaching_ceiling'])}. "
        "Column 'admitting every block': the best hit rate on this instance of a cache that admits every block it fetches and "
        "keeps the running request's blocks, as vLLM and SGLang (forced admission; Belady's rule with those blocks pinned, "
        "docs/min-flat-relaxation.md); MIN may discard a block it fetched.",
        "",
        "| capacity | LRU | admitting every block | MIN | gap | LRU needs (blocks) to match MIN |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in summary["lru_vs_optimum"]:
        need = row["lru_capacity_to_match_opt"]
        forced = row.get("opt_forced_hit_rate")
        forced_text = "-" if forced is None else f"{forced:.4f}"
        lines.append(
            f"| {size(row['capacity_blocks'])} | {row['lru_hit_rate']:.4f} | {forced_text} | {row['opt_hit_rate']:.4f} | "
            f"{row['gap']:.4f} | {'-' if need is None else f'{need:,}'} |"
        )
    lines += [
        "",
        f"Pooled against {summary['fleet_size']} per-host caches at equal total memory, on this instance:",
        "",
        "| total blocks (per host) | pooled LRU | pooled MIN | per-host LRU | per-host MIN |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in summary["pooled_vs_per_host"]:
        lines.append(
            f"| {row['total_blocks']:,} ({row['per_host_blocks']:,}) | {row['pooled_lru']:.4f} | {row['pooled_opt']:.4f} | "
            f"{row['per_host_lru']:.4f} | {row['per_host_opt']:.4f} |"
        )
    local = summary["local_vs_global"]
    lines += [
        "",
        f"Local against global on this instance: {local['nodes']} nodes of {size(local['node_capacity_blocks'])}: "
        f"global pool LRU {local['global_lru']:.4f}, MIN {local['global_opt']:.4f} (ceiling {local['ceiling_global']:.4f}); "
        f"local caches LRU {local['local_lru']:.4f}, MIN {local['local_opt']:.4f} (ceiling {local['ceiling_local']:.4f}).",
    ]
    return lines
