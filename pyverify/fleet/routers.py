"""Routers of ``pyverify replay``: each picks a host for a request when it arrives.

A router sees, at the arrival instant, every host's cache (its GPU; with a
host-DRAM tier, the prefix its GPU and DRAM serve together: a modelling
choice, a router told of both local tiers; the pool is shared, so it does not
tell hosts apart), its ``load`` (requests running plus queued there) and
``routed`` (requests sent there so far); ``dynamo``, ``sglang`` and ``kv-aware``
also keep their own books of what they sent where, which the event loop feeds
(:meth:`Router.prefill_done` at a request's first token, :meth:`Router.finished`
when it ends). Rules, ties included (every rule ends with the lowest host id):

``round-robin``
    Request ``i`` (file order) goes to host ``i mod F``: simulate's round-robin.
``random``
    ``random.Random(seed).randrange(F)`` per request in file order: simulate's random.
``least-loaded``
    Fewest requests running plus queued; ties: fewest routed so far.
    Without timing nothing is ever running at an arrival, so this is round-robin.
``prefix-affinity``
    simulate's prefix-affinity rule (:mod:`pyverify.sim.routing`), applied to the
    host caches at arrival: the longest cached prefix among hosts that have been
    routed fewer than ``ceil(slack * (i + 1) / F)`` requests; ties: fewest routed.
``kv-aware``
    The highest score ``overlap_weight * overlap_blocks - load_weight * load``,
    where ``overlap_blocks`` is the host's cached prefix (GPU, then DRAM) for this chain and
    ``load`` is, by default (``kv_aware_load="blocks"``), the blocks of the requests running
    plus queued there (each request's chain length), or with ``"requests"`` their number;
    ties: smaller load, then fewest routed. A generic weighted score in the shape of
    Dynamo's and llm-d's (https://llm-d.ai/docs/0.8/architecture/core/router/epp/scheduling);
    the weights are named in every output so a run says what it used. ``dynamo`` below
    is Dynamo's own cost.
``dynamo``
    NVIDIA Dynamo's KV router (ai-dynamo-runtime 1.6.1, ``lib/kv-router``: the default cost of
    ``scheduling/selector``, the active-sequence books of ``sequences/single.rs``), with its
    1.6.1 defaults (``KvRouterConfig``: overlap_score_credit 1.0, prefill_load_scale 1.0,
    decode_active_request_weight 0, router_temperature 0, router_track_active_blocks on,
    router_track_output_blocks off, router_assume_kv_reuse on, router_track_prefill_tokens on).
    Per host ``w``, with ``B`` tokens a block, ``isl`` the request's input tokens (its blocks
    x ``B`` when the trace gives none), its hashed blocks the chain's first ``isl // B`` (Dynamo
    hashes full blocks only) and ``overlap_w`` of them cached on ``w``::

        cost_w = prefill_load_scale * max(0, (P_w + max(isl, overlap_w * B)) / B
                                             - overlap_score_credit * overlap_w)
                 + |A_w  union  request blocks|

    ``P_w``: the prefill tokens still to compute on ``w`` (each request routed there adds
    ``isl - overlap * B`` of its own when positive, dropped at its first token); ``A_w``: the
    distinct blocks of requests routed to ``w`` and not yet finished (added at routing, removed
    at the end). Temperature 0 takes the lowest cost; equal costs are broken at random, as Dynamo
    breaks them, by this router's own stream (``--seed``: the same seed gives the same run), so
    runs compare by distribution (bench/vs_dynamo.py). Ties are common when hosts are idle: the
    lowest host id would send every request with no cached prefix to host 0. With a
    host-DRAM tier, ``overlap_w`` is the prefix GPU and DRAM hold together, at full credit
    (Dynamo credits host-pinned blocks at host_cache_hit_weight 0.75: not modelled).
    bench/vs_dynamo.py replays Dynamo's own runs into these books: the cost of each worker Dynamo
    chose equals the logit Dynamo logged, on all 3,993 requests of the Mooncake synthetic trace.
``sglang``
    The SGLang router's ``cache_aware`` policy as the ``sglang-router`` 0.3.2 package runs it (its
    binary is sgl-model-gateway 0.3.2, built 2026-01-15: ``CacheAwarePolicy::select_worker`` in
    ``sgl-model-gateway/src/policies/cache_aware.rs``), with the package's defaults
    (``router_args.py``, and its startup log: cache_threshold 0.3, balance_abs_threshold 64,
    balance_rel_threshold 1.5, eviction_interval_secs 60, max_tree_size 2**26). Loads are the
    requests running plus queued (the router's in-flight count). When
    ``max - min > balance_abs_threshold`` and ``max > min * balance_rel_threshold`` (float32, as
    Rust's ``f32``), the least loaded host, and the tree still records the request there.
    Otherwise the tree's longest prefix match: its host when ``matched / len(chain) >
    cache_threshold``, else the least loaded host (the gateway's fallback; the router before it,
    ``sgl-router``, took the host with the smallest tree); the request is inserted for the chosen
    host. The tree (:mod:`pyverify.fleet.sglang_tree`) is ``sgl-router/src/policies/tree.rs``
    ported over block ids for characters. Every ``eviction_interval_secs`` of trace time (from 0,
    as the router's thread from its start) each host's part of the tree is cut to
    ``max_tree_size`` (blocks here). Ties go to the lowest host id: the tenant of a matched node
    (Rust takes a hash map's first entry) and equal loads (the package takes the first in its own
    worker order). bench/vs_sglang_router.py drives the package decision by decision: on the
    Mooncake synthetic trace every one of its 3,993 decisions is one this rule allows, one request
    at a time and with every request held in flight.
"""

from __future__ import annotations

import heapq
import math
import random as _random
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import struct

from pyverify.cost.params import DEFAULT_BLOCK_TOKENS
from pyverify.fleet.sglang_tree import ApproxTree

ROUTERS = (
    "round-robin",
    "random",
    "least-loaded",
    "prefix-affinity",
    "kv-aware",
    "dynamo",
    "sglang",
)

#: How kv-aware counts a host's load: blocks of the requests running plus queued there, or their number.
KV_AWARE_LOADS = ("blocks", "requests")

#: kv-aware defaults. ASSUMPTION: equal weights (one block of overlap is worth one block of load),
#: as Dynamo's default cost weighs an overlap block against a block of pending work.
DEFAULT_OVERLAP_WEIGHT = 1.0
DEFAULT_LOAD_WEIGHT = 1.0
DEFAULT_KV_AWARE_LOAD = "blocks"

#: Dynamo 1.6.1's KvRouterConfig defaults the dynamo router uses (lib/kv-router/src/scheduling/config.rs).
DYNAMO_DEFAULTS = {
    "overlap_score_credit": 1.0,
    "prefill_load_scale": 1.0,
    "router_temperature": 0.0,
    "ties": "lowest host id (Dynamo: uniformly at random)",
}

#: sglang-router 0.3.2's defaults for the cache_aware policy (py_src/sglang_router/router_args.py).
SGLANG_DEFAULTS = {
    "cache_threshold": 0.3,
    "balance_abs_threshold": 64,
    "balance_rel_threshold": 1.5,
    "eviction_interval_secs": 60,
    "max_tree_size": 2**26,
}


def f32(value: float) -> float:
    """``value`` rounded to the nearest 32-bit float, as the router's Rust code holds it (``f32``).
    One +, * or / of two such values computed in 64 bits and rounded again is the 32-bit result
    (a double carries more than twice a float's 24 bits), so no NumPy is needed for it."""
    return struct.unpack("f", struct.pack("f", value))[0]


@dataclass(frozen=True)
class RouterOptions:
    seed: int = 0
    slack: float = 1.25
    overlap_weight: float = DEFAULT_OVERLAP_WEIGHT
    load_weight: float = DEFAULT_LOAD_WEIGHT
    kv_aware_load: str = DEFAULT_KV_AWARE_LOAD
    #: Tokens per block: how the dynamo router turns input tokens into blocks.
    block_tokens: int = DEFAULT_BLOCK_TOKENS
    dynamo_overlap_score_credit: float = DYNAMO_DEFAULTS["overlap_score_credit"]
    dynamo_prefill_load_scale: float = DYNAMO_DEFAULTS["prefill_load_scale"]
    sglang_cache_threshold: float = SGLANG_DEFAULTS["cache_threshold"]
    sglang_balance_abs_threshold: int = SGLANG_DEFAULTS["balance_abs_threshold"]
    sglang_balance_rel_threshold: float = SGLANG_DEFAULTS["balance_rel_threshold"]
    sglang_eviction_interval_s: float = SGLANG_DEFAULTS["eviction_interval_secs"]
    sglang_max_tree_size: int = SGLANG_DEFAULTS["max_tree_size"]

    def to_json(self, name: str) -> dict:
        """The settings router ``name`` ran with, for the JSON and text outputs."""
        if name == "kv-aware":
            return {
                "overlap_weight": self.overlap_weight,
                "load_weight": self.load_weight,
                "load": self.kv_aware_load,
            }
        if name == "dynamo":
            return {
                "overlap_score_credit": self.dynamo_overlap_score_credit,
                "prefill_load_scale": self.dynamo_prefill_load_scale,
                "router_temperature": 0.0,
                "block_tokens": self.block_tokens,
                "ties": DYNAMO_DEFAULTS["ties"],
            }
        if name == "sglang":
            return {
                "cache_threshold": self.sglang_cache_threshold,
                "balance_abs_threshold": self.sglang_balance_abs_threshold,
                "balance_rel_threshold": self.sglang_balance_rel_threshold,
                "eviction_interval_secs": self.sglang_eviction_interval_s,
                "max_tree_size_blocks": self.sglang_max_tree_size,
            }
        if name == "prefix-affinity":
            return {"affinity_slack": self.slack}
        if name == "random":
            return {"seed": self.seed}
        return {}


@dataclass
class _DynamoBooks:
    """Dynamo's ActiveSequences for one host: distinct active blocks and pending prefill tokens."""

    active: Counter = field(default_factory=Counter)  # block -> active requests holding it
    prefill_tokens: dict[int, int] = field(default_factory=dict)  # request -> its prefill tokens
    prefill_ends: dict[int, float] = field(default_factory=dict)  # request -> first token time


class Router:
    """Picks a host per arrival; ``name`` is one of :data:`ROUTERS`.

    A router is used for one run: ``dynamo``, ``sglang`` and ``kv-aware`` keep books of the requests
    they routed, which the event loop updates through :meth:`prefill_done` and :meth:`finished`."""

    def __init__(self, name: str, fleet: int, options: RouterOptions = RouterOptions()) -> None:
        if name not in ROUTERS:
            raise ValueError(f"unknown router {name!r}; expected one of {ROUTERS}")
        if options.kv_aware_load not in KV_AWARE_LOADS:
            raise ValueError(
                f"unknown kv-aware load {options.kv_aware_load!r}; expected one of {KV_AWARE_LOADS}"
            )
        self.name, self.fleet, self.options = name, fleet, options
        self._rng = _random.Random(options.seed)
        self._host_of: dict[int, int] = {}  # requests routed and not finished -> host
        self._blocks_of: dict[int, Sequence[int]] = {}  # their blocks as the router counts them
        self._load_blocks = [0] * fleet  # kv-aware: blocks of the requests routed and not finished
        self._dynamo = [_DynamoBooks() for _ in range(fleet)] if name == "dynamo" else []
        self._tree = ApproxTree() if name == "sglang" else None
        if self._tree is not None:  # cache_aware.rs init_workers: every worker is a tenant of ""
            for host in range(fleet):
                self._tree.insert((), host, 0)
        self._evictions_done = 0

    def fixed_picks(self, n: int) -> list[int] | None:
        """The hosts of requests 0..n-1 when they depend on neither cache state nor load, else ``None``.

        ``random`` draws them from this router's own stream, as ``n`` calls of :meth:`pick` would."""
        if self.name == "round-robin":
            return [index % self.fleet for index in range(n)]
        if self.name == "random":
            return [self._rng.randrange(self.fleet) for _ in range(n)]
        return None

    def pick(
        self,
        index: int,
        chain: Sequence[int],
        caches: Sequence,
        load: Sequence[int],
        routed: Sequence[int],
        now: float = 0.0,
        input_tokens: int | None = None,
    ) -> int:
        """The host of request ``index`` arriving at ``now`` seconds (``input_tokens``: its prompt
        length, ``None`` for a full block per chain entry)."""
        fleet = self.fleet
        if self.name == "round-robin":
            return index % fleet
        if self.name == "random":
            return self._rng.randrange(fleet)
        if self.name == "least-loaded":
            return min(range(fleet), key=lambda host: (load[host], routed[host], host))
        if self.name == "dynamo":
            return self._pick_dynamo(index, chain, caches, now, input_tokens)
        if self.name == "sglang":
            return self._pick_sglang(index, chain, load, now)
        overlaps = [cache.prefix_hits(chain) for cache in caches]
        if self.name == "prefix-affinity":
            cap = math.ceil(self.options.slack * (index + 1) / fleet)
            eligible = [host for host in range(fleet) if routed[host] < cap]
            return min(eligible, key=lambda host: (-overlaps[host], routed[host], host))
        overlap_weight, load_weight = self.options.overlap_weight, self.options.load_weight
        counted = self._load_blocks if self.options.kv_aware_load == "blocks" else load
        host = min(
            range(fleet),
            key=lambda host: (
                -(overlap_weight * overlaps[host] - load_weight * counted[host]),
                counted[host],
                routed[host],
                host,
            ),
        )
        self._load_blocks[host] += len(chain)
        self._host_of[index] = host
        self._blocks_of[index] = chain
        return host

    def dynamo_costs(
        self,
        chain: Sequence[int],
        caches: Sequence,
        now: float = 0.0,
        input_tokens: int | None = None,
    ) -> tuple[list[float], list[int], int, list[int]]:
        """Dynamo's cost of each host for this request, and what routing it records:
        (costs, overlap blocks per host, input tokens, the hashed blocks)."""
        block = self.options.block_tokens
        isl = len(chain) * block if input_tokens is None else input_tokens
        hashed = list(chain if input_tokens is None else chain[: min(len(chain), isl // block)])
        distinct = set(hashed)
        credit = self.options.dynamo_overlap_score_credit
        scale = self.options.dynamo_prefill_load_scale
        costs, overlaps = [], []
        for host, books in enumerate(self._dynamo):
            for request, end in list(books.prefill_ends.items()):  # first token by now: done
                if end <= now:
                    del books.prefill_ends[request]
                    books.prefill_tokens.pop(request, None)
            overlap = caches[host].prefix_hits(hashed)
            pending = sum(books.prefill_tokens.values())
            raw_prefill_blocks = (pending + max(isl, overlap * block)) / block
            prefill = scale * max(0.0, raw_prefill_blocks - credit * overlap)
            decode = len(books.active) + sum(1 for b in distinct if b not in books.active)
            costs.append(prefill + decode)
            overlaps.append(overlap)
        return costs, overlaps, isl, hashed

    def _pick_dynamo(self, index, chain, caches, now, input_tokens) -> int:
        costs, overlaps, isl, hashed = self.dynamo_costs(chain, caches, now, input_tokens)
        lowest = min(costs)
        ties = [host for host in range(self.fleet) if costs[host] == lowest]
        host = ties[0] if len(ties) == 1 else self._rng.choice(ties)
        self.record_dynamo_pick(index, host, hashed, overlaps[host], isl)
        return host

    def record_dynamo_pick(
        self, index: int, host: int, hashed: Sequence[int], overlap: int, isl: int
    ) -> None:
        """Dynamo's books after request ``index`` (its hashed blocks, ``isl`` input tokens) goes to
        ``host`` where ``overlap`` of its blocks are cached. Public so a peer's own decisions can be
        replayed into the books (bench/vs_dynamo.py)."""
        books = self._dynamo[host]
        books.active.update(set(hashed))
        new_tokens = isl - overlap * self.options.block_tokens
        if new_tokens > 0:
            books.prefill_tokens[index] = new_tokens
        self._host_of[index] = host
        self._blocks_of[index] = hashed

    def _pick_sglang(self, index, chain, load, now) -> int:
        _, candidates = self.sglang_candidates(chain, load, now)
        host = candidates[0]
        self.record_sglang_pick(chain, host, now)
        return host

    def sglang_candidates(
        self, chain: Sequence[int], load: Sequence[int], now: float = 0.0
    ) -> tuple[str, list[int]]:
        """The branch of the cache_aware policy this request takes (``imbalanced``, ``match`` or
        ``fallback``) and the hosts it may pick there, lowest id first: the matched node's tenants
        (the Rust code takes a hash map's first one) or the least loaded hosts. Runs the evictions
        due by ``now`` and touches the matched node for its lowest tenant, as ``prefix_match`` does
        for the tenant it returns."""
        options, tree = self.options, self._tree
        interval = options.sglang_eviction_interval_s
        if interval > 0:  # the eviction thread's wake-ups due by now
            due = int(now // interval)
            while self._evictions_done < due:
                tree.evict_tenant_by_size(options.sglang_max_tree_size)
                self._evictions_done += 1
        least = [host for host in range(self.fleet) if load[host] == min(load)]
        max_load, min_load = max(load), min(load)
        imbalanced = max_load - min_load > options.sglang_balance_abs_threshold and f32(
            max_load
        ) > f32(f32(min_load) * f32(options.sglang_balance_rel_threshold))
        if imbalanced:
            return "imbalanced", least
        matched, node = tree.match_node(chain)
        tree.prefix_match(chain, int(now * 1000))  # the timestamps it touches
        rate = f32(f32(matched) / f32(len(chain))) if chain else 0.0
        if rate > f32(options.sglang_cache_threshold) and node.tenants:
            return "match", sorted(node.tenants)
        return "fallback", least

    def record_sglang_pick(self, chain: Sequence[int], host: int, now: float = 0.0) -> None:
        """The tree records that ``chain`` went to ``host`` (public so a peer's own decisions can be
        replayed into it, bench/vs_sglang_router.py)."""
        self._tree.insert(chain, host, int(now * 1000))

    def prefill_done(self, index: int, at: float) -> None:
        """Request ``index`` gives its first token at ``at`` seconds: from then Dynamo's books drop its
        prefill tokens (``mark_prefill_completed``)."""
        host = self._host_of.get(index)
        if host is not None and self._dynamo and index in self._dynamo[host].prefill_tokens:
            self._dynamo[host].prefill_ends[index] = at

    def finished(self, index: int) -> None:
        """Request ``index`` ended (or will never run): its blocks leave the router's books."""
        host = self._host_of.pop(index, None)
        if host is None:
            return
        blocks = self._blocks_of.pop(index)
        if self._dynamo:
            books = self._dynamo[host]
            books.prefill_tokens.pop(index, None)
            books.prefill_ends.pop(index, None)
            books.active.subtract(set(blocks))
            for block in set(blocks):
                if books.active[block] <= 0:
                    del books.active[block]
        else:
            self._load_blocks[host] -= len(blocks)


@dataclass(frozen=True)
class PeerDecision:
    """A routing decision another router made, and what followed it (times in one unit, any)."""

    host: int
    overlap: int  # blocks of the request cached on ``host``, as the peer saw them
    input_tokens: int
    arrival: float
    first_token: float
    end: float


def dynamo_costs_of_decisions(
    fleet: int, chains: Sequence[Sequence[int]], decisions: Sequence[PeerDecision], options=None
) -> list[float]:
    """The dynamo cost of each host a peer chose, its decisions (in arrival order, one per chain)
    fed into the dynamo router's books: each request recorded on the peer's host with the peer's
    overlap, its prefill ending at the peer's first token, its blocks leaving at the peer's end.
    Equal to the costs the peer computed when the cost function and the books are the same."""
    router = Router("dynamo", fleet, options or RouterOptions())
    ends: list[tuple[float, int]] = []
    costs_chosen = []
    for index, (chain, decision) in enumerate(zip(chains, decisions)):
        while ends and ends[0][0] <= decision.arrival:
            router.finished(heapq.heappop(ends)[1])
        caches = [
            _Overlap(decision.overlap if host == decision.host else 0) for host in range(fleet)
        ]
        costs, _, isl, hashed = router.dynamo_costs(
            chain, caches, decision.arrival, decision.input_tokens
        )
        costs_chosen.append(costs[decision.host])
        router.record_dynamo_pick(index, decision.host, hashed, decision.overlap, isl)
        router.prefill_done(index, decision.first_token)
        heapq.heappush(ends, (decision.end, index))
    return costs_chosen


class _Overlap:
    """A host cache known only by how many of a request's blocks it holds."""

    def __init__(self, hits: int) -> None:
        self.hits = hits

    def prefix_hits(self, chain: Sequence[int]) -> int:
        return min(self.hits, len(chain))
