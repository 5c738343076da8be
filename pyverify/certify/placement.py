r"""The offline placement model ("the lab's model"), as mathematics.

This docstring is the specification that the CP-SAT model (:mod:`.cpsat`),
the Z3 model (:mod:`.z3check`) and the trusted checker (:mod:`pyverify.trusted.check`)
each implement on their own. Nothing here builds a solver model; this module
only turns an instance into the plain data every searcher reads
(:class:`Problem`) and derives the canonical residency schedule of a run
(:func:`canonical_schedule`).

Data
----
Requests :math:`t = 0, \dots, n-1` in order. Request :math:`t` has the chain
:math:`c_t = (c_{t,1}, \dots, c_{t,k_t})` of distinct block ids (distinct
because the trace is prefix-closed: an id has one depth) and reads the cache
:math:`q(t)`: the pool :math:`0` (model ``pooled``) or its host, fixed by the
instance's own routing (model ``per-host``; routing is never a decision).
A capacity :math:`C \ge 1` bounds every cache, or there is none
(``capacity = null``, uncapacitated: :math:`C = \infty`).

A run
-----
A run chooses, for every cache :math:`q` and step :math:`t`, the set
:math:`R_q^t` of blocks resident in :math:`q` just before request :math:`t`,
and the hit count :math:`h_t \in \{0, \dots, k_t\}` of every request:

1. *Start empty:* :math:`R_q^0 = \emptyset`.
2. *Hits are resident, longest prefix:* :math:`c_{t,j} \in R_{q(t)}^t` for
   :math:`j \le h_t`, and :math:`c_{t,h_t+1} \notin R_{q(t)}^t` when
   :math:`h_t < k_t`. Blocks :math:`c_{t,h_t+1}, \dots, c_{t,k_t}` are misses
   and are fetched, even one that happens to be resident after the first miss.
3. *Demand fetching:* :math:`R_{q(t)}^{t+1} \subseteq R_{q(t)}^t \cup
   \{c_{t,1}, \dots, c_{t,k_t}\}` and :math:`R_{q'}^{t+1} = R_{q'}^t` for every
   other cache :math:`q'`. A block enters a cache only during a request that
   references it there and missed it (a hit block was already resident);
   any block may be dropped (evicted) at the cache's own steps.
4. *Capacity:* :math:`|R_q^{t}| \le C` for all :math:`q, t` (between
   requests; a request's own fetched blocks are in flight while it runs).

**Bypass is allowed:** a fetched block need not be kept (3 is an inclusion,
not an equality). Offline, with this rule, the optimum for unit blocks and
one cache is Belady's MIN in its bypass form (on a miss with a full cache,
discard whichever of the resident blocks *and the new block* is next used
farthest in the future); ``tests/test_belady_cross_check.py`` checks that.
Without a capacity, keeping everything is legal, so bypass changes nothing.

**Forced admission** (``admission = "forced"``, what serving engines do) adds

5. *Forced admission, running request pinned:* :math:`\{c_{t,1}, \dots,
   c_{t,m_t}\} \subseteq R_{q(t)}^{t+1}` with :math:`m_t = \min(k_t, C)`:
   every block the request hit or fetched is held when it ends; a chain longer
   than the cache keeps its first :math:`C` blocks and the rest are computed but
   not cached. Its optimum is Belady's demand rule with those blocks pinned
   (:mod:`pyverify.optimal.forced`, which gives the argument).

In the canonical form below, a forced run's residency after step :math:`t`
is its pinned blocks plus the blocks whose next use is a hit (the lemma holds
with that set, by the same proof: the pinned blocks are in :math:`R^{t+1}` by
rule 5). So the CP-SAT model counts the pinned blocks as held whatever their
next use, and a pinned block is resident at the cache's next step, so a
request hits it if it hits everything before it (longest prefix).

Objective: minimise :math:`\text{misses} = \sum_t (k_t - h_t)`.

Compulsory floor: every run misses at least once on each pair
:math:`(q, b)` with :math:`b` referenced through :math:`q` (the first such
reference finds :math:`b \notin R_q`, by 1 and 3; by 2 it and everything after
it in that chain is a miss). That is the number of distinct blocks (pooled) or
distinct (host, block) pairs (per-host). Uncapacitated, the run that keeps
everything attains it, so it is the optimum.

Canonical schedules (what the witness records, and how CP-SAT is encoded)
-------------------------------------------------------------------------
For a cache :math:`q`, a step :math:`t` and a block :math:`b`, let
:math:`\mathrm{next}_q(b, t)` be the first reference :math:`(s, j)` with
:math:`s \ge t`, :math:`q(s) = q`, :math:`c_{s,j} = b`. Given the hit counts
of any run, put

.. math:: \bar R_q^t = \{\, b : \mathrm{next}_q(b, t) = (s, j) \text{ exists and } j \le h_s \,\}

(keep a block exactly while its next use in that cache is a hit).

*Lemma.* If :math:`(R, h)` is a run then :math:`(\bar R, h)` is a run with
the same hits, and :math:`\bar R_q^t \subseteq R_q^t`.

*Proof.* If :math:`b \in \bar R_q^t` with next use :math:`(s, j)` a hit, then
:math:`b \in R_q^s`; no step in :math:`[t, s)` of cache :math:`q` references
:math:`b`, so by 3 :math:`b \in R_q^{t'}` for all :math:`t' \in [t, s]`, in
particular :math:`b \in R_q^t`. Hence the inclusion, so 1 (since
:math:`R^0 = \emptyset`) and 4 hold for :math:`\bar R`. For 3: if :math:`b
\in \bar R_q^{t+1}` and :math:`b` is not in :math:`c_t` read through
:math:`q`, its next use at or after :math:`t` is its next use at or after
:math:`t+1`, so :math:`b \in \bar R_q^t`; for other caches nothing changes.
For 2: hits :math:`c_{t,j}, j \le h_t` have next use :math:`(t, j)`, a hit;
:math:`c_{t,h_t+1}` has next use :math:`(t, h_t+1)`, not a hit. :math:`\square`

So a run is determined, up to useless residency, by its hit counts, and *hit
counts h are those of a run iff* (a) every hit :math:`c_{t,j}` (:math:`j \le
h_t`) was referenced through :math:`q(t)` at an earlier step, (b) hits are a
prefix (:math:`h_t` is a count), and (c) :math:`|\bar R_q^{t+1}| \le C` after
each step :math:`t` of each cache (it changes only at the cache's own steps).
That is the CP-SAT model (an interval formulation: one 0/1 variable per block
reference, linear size without a capacity). The Z3 model instead encodes 1-4
literally, with a residency variable per cache, step and block, so the two
solvers agree only if the lemma and both encodings are right.

The certificate's witness is the run :math:`(\bar R, h)`: per request, the cache
it read, :math:`h_t`, and ``dropped`` = :math:`(\bar R_{q(t)}^t \cup c_t)
\setminus \bar R_{q(t)}^{t+1}` sorted: what the cache lets go right after the
request (evicted, or fetched and not kept). The checker rebuilds
:math:`R^{t+1}` from it and replays 1-4 literally, with no lemma to trust.
(Uncapacitated optimal runs drop each block only after its last use, so the
witness stays small.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pyverify.errors import UserError
from pyverify.inputs.model import Instance

POOLED = "pooled"
PER_HOST = "per-host"
MODELS = (POOLED, PER_HOST)


@dataclass(frozen=True)
class Problem:
    """The input of every searcher: chains, the cache each request reads, a capacity."""

    model: str
    chains: tuple[tuple[int, ...], ...]
    cache_of: tuple[int, ...]
    capacity: int | None
    admission: str = (
        "bypass"  # or "forced": rule 5 (the request's first min(k, C) blocks are held after it)
    )

    def pinned(self, t: int) -> tuple[int, ...]:
        """The blocks request t's cache must hold right after it (forced admission; none with bypass)."""
        if self.admission != "forced":
            return ()
        chain = self.chains[t]
        return chain if self.capacity is None else chain[: self.capacity]

    @property
    def n(self) -> int:
        return len(self.chains)

    @property
    def references(self) -> int:
        return sum(len(chain) for chain in self.chains)

    def floor(self) -> int:
        """Compulsory misses: distinct (cache, block) pairs."""
        return len({(q, b) for q, chain in zip(self.cache_of, self.chains) for b in chain})


def problem_from_instance(
    instance: Instance,
    model: str,
    capacity: int | None,
    path: str = "<instance>",
    admission: str = "bypass",
) -> Problem:
    """Fix the cache each request reads: 0 (pooled) or its given host (per-host)."""
    if model not in MODELS:
        raise UserError(f"unknown cache model {model!r}; choose one of: {', '.join(MODELS)}")
    if capacity is not None and capacity < 1:
        raise UserError(f"capacity must be a positive number of blocks, not {capacity}")
    if model == POOLED:
        cache_of = (0,) * instance.n_requests
    else:
        if instance.routing is None:
            raise UserError(
                f"{path}: requests[*].host: per-host certificates use the instance's given routing, and this instance gives none "
                "(for a trace, route it: --routing round-robin --fleet N)"
            )
        cache_of = tuple(instance.routing)
    return Problem(model, tuple(tuple(c) for c in instance.chains), cache_of, capacity, admission)


def canonical_schedule(
    chains: Sequence[Sequence[int]], cache_of: Sequence[int], hit_blocks: Sequence[int]
) -> list[list[int]]:
    r"""``dropped[t]``: what cache :math:`q(t)` lets go right after request t in the run :math:`(\bar R, h)`.

    :math:`\bar R_{q}^{t+1}` keeps exactly the blocks whose next use in that cache
    is a hit. A block not read by request t keeps its next use, so it stays
    if it was held; hence only request t's own blocks can go: those whose next
    use in that cache is a miss, or that are never used there again. One
    backward pass, linear in the number of block references.
    """
    next_is_hit: dict[
        tuple[int, int], bool
    ] = {}  # (cache, block) -> is its next use (after the step being visited) a hit?
    dropped: list[list[int]] = [[] for _ in chains]
    for t in range(len(chains) - 1, -1, -1):
        q, chain = cache_of[t], chains[t]
        dropped[t] = sorted(b for b in chain if not next_is_hit.get((q, b), False))
        for j, b in enumerate(chain):
            next_is_hit[(q, b)] = j < hit_blocks[t]
    return dropped


def canonical_forced_schedule(
    chains: Sequence[Sequence[int]],
    cache_of: Sequence[int],
    hit_blocks: Sequence[int],
    capacity: int,
) -> list[list[int]]:
    r"""``dropped[t]`` of the canonical *forced* run: after step t its cache holds the request's first
    ``min(k_t, C)`` blocks and every other block whose next use in that cache is a hit.

    What leaves right after request t: blocks of its chain beyond the first C
    whose next use is not a hit, and blocks pinned by the cache's previous step
    whose next use is not a hit and that request t does not read (every other
    held block's next use is a hit, so it stays). One backward pass finds each
    block's next use, one forward pass the drops.
    """
    next_is_hit: dict[tuple[int, int], bool] = {}
    nexts: list[list[bool]] = [
        [] for _ in chains
    ]  # per request, per block: is its next use in this cache a hit?
    for t in range(len(chains) - 1, -1, -1):
        q, chain = cache_of[t], chains[t]
        nexts[t] = [next_is_hit.get((q, b), False) for b in chain]
        for j, b in enumerate(chain):
            next_is_hit[(q, b)] = j < hit_blocks[t]
    waiting: dict[
        int, set[int]
    ] = {}  # cache -> pinned blocks whose next use there is a miss: they go at its next step
    dropped: list[list[int]] = []
    for t, (chain, q) in enumerate(zip(chains, cache_of)):
        gone = waiting.pop(q, set()) - set(chain)
        gone |= {b for j, b in enumerate(chain) if j >= capacity and not nexts[t][j]}
        waiting[q] = {b for j, b in enumerate(chain) if j < capacity and not nexts[t][j]}
        dropped.append(sorted(gone))
    return dropped
