"""What each registered theorem is about, machine-readable: the cache model its statement speaks of.

A certificate may name a theorem (its optional ``theorem`` field). The bridge
(:mod:`pyverify.lean.bridge`) relates the two only when the theorem is about
the certificate's own model; otherwise it refuses the link in one line. This
module records, for every theorem of :mod:`pyverify.lean.catalog`, the model
its Lean statement is about, read off the statement and its hypotheses:

* ``caches``: one cache read by every request (``pooled``), one cache per host
  read only by its own host (``per-host``), one flat cache serving single block
  ids (``flat``), or a comparison of pooled with per-host caches (``compared``);
* ``capacity``: none (the cache keeps every block it fetches), ``cap`` blocks
  per cache, or any (either);
* ``policy``: which runs it speaks of: every run of a demand cache (a block
  enters only with the miss that fetches it; drops and bypass free), the cache
  that keeps every block, Belady's MIN in bypass form, or LRU (every miss is
  admitted; the least recently used block is dropped);
* ``requests``: openings (chains of one block), block chains (openings
  included, since an opening is a chain of one block), or flat block ids;
* ``conclusion``: the kind of fact it states (an exact count, a lower bound,
  an achievable count, a comparison, or how an LRU cache behaves).

A certificate (``pyverify.certificate/1``) is always about demand caches that
start empty and choose what to keep, the fewest misses of any such run
(``eviction: offline-optimal``, bypass allowed): pooled or per host, with or
without a capacity, on the chains of its instance. A theorem is about that
model when :func:`mismatch` finds nothing: same caches (a flat theorem is about
a pooled cache whose requests are all openings, one block id each), a capacity
that fits, requests of the kind the instance has, and a policy whose runs are
the certificate's: every demand run, or the run that attains the fewest misses
(keeping every block when there is no capacity; Belady's MIN when there is
one). LRU admits every miss and evicts by recency: not the certificate's runs.
A comparison of two models is about neither one alone. A certificate with
``admission: forced`` is about the runs that admit every block a request hits
or fetches, the running request pinned (a capacity is then required): the
theorems about such runs (``PINNED``, and the flat ``FORCED`` ones on
openings) and those about every demand run are about it; those about MIN in
bypass form or the cache that keeps every block are not.

``tests/test_scope.py`` requires an entry for every catalog theorem.
"""

from __future__ import annotations

from dataclasses import dataclass

POOLED = "pooled"
PER_HOST = "per-host"
FLAT = "flat"
COMPARED = "pooled against per-host"

NO_CAPACITY = "no capacity"
CAPACITY = "cap blocks per cache"
ANY_CAPACITY = "any capacity or none"

DEMAND = "every demand run (drops and bypass free)"
KEEPS_ALL = "keeps every block"
MIN = "Belady's MIN (bypass form)"
LRU = "LRU (every miss admitted, least recently used dropped)"
FIFO = "FIFO (every miss admitted, oldest inserted dropped)"
FORCED = "every demand run that admits every block it fetches"
FORCED_MIN = "forced MIN (Belady's rule, every fetched block admitted)"
PINNED = "every demand run that admits every block it hits or fetches, the running request pinned"

OPENINGS = "openings"
CHAINS = "chains"
FLAT_IDS = "flat block ids"

COUNT = "exact count"
LOWER_BOUND = "lower bound"
ACHIEVABLE = "achievable count"
COMPARISON = "comparison"
LRU_BEHAVIOUR = "LRU behaviour"
COUNTEREXAMPLE = "counterexample (one concrete input, evaluated by the kernel)"
MONOTONE = "how a count changes with one more block"

_CACHES = {
    POOLED: "one pooled cache",
    PER_HOST: "one cache per host",
    FLAT: "one flat cache of single block ids",
    COMPARED: "pooled against per-host caches, compared",
}


@dataclass(frozen=True)
class Scope:
    """The model a theorem's statement is about (see the module docstring for the values)."""

    caches: str
    capacity: str
    policy: str
    requests: str
    conclusion: str


#: Theorem name -> the model its statement is about (read off pyverify/lean/catalog.py's hypotheses and the Lean statement).
SCOPES: dict[str, Scope] = {
    "pooled_misses_eq_distinct": Scope(POOLED, NO_CAPACITY, KEEPS_ALL, OPENINGS, COUNT),
    # "no demand cache, whatever its policy and capacity": one cache (the pool), openings.
    "demand_misses_ge_distinct": Scope(POOLED, ANY_CAPACITY, DEMAND, OPENINGS, LOWER_BOUND),
    "per_host_misses_eq_distinct_pairs": Scope(PER_HOST, NO_CAPACITY, KEEPS_ALL, OPENINGS, COUNT),
    "per_host_misses_eq_sum": Scope(PER_HOST, NO_CAPACITY, KEEPS_ALL, OPENINGS, COUNT),
    "per_host_ge_pooled": Scope(COMPARED, NO_CAPACITY, KEEPS_ALL, OPENINGS, COMPARISON),
    "pooled_block_misses_eq_distinct": Scope(POOLED, NO_CAPACITY, KEEPS_ALL, CHAINS, COUNT),
    "per_host_blocks_ge_pooled": Scope(COMPARED, NO_CAPACITY, KEEPS_ALL, CHAINS, COMPARISON),
    "per_host_block_misses_eq_distinct_pairs": Scope(
        PER_HOST, NO_CAPACITY, KEEPS_ALL, CHAINS, COUNT
    ),
    # One capacitated prefix cache's runs, flattened; applied to each host's cache by the bridge's per-host bound.
    "prefix_run_is_flat_run": Scope(POOLED, CAPACITY, DEMAND, CHAINS, LOWER_BOUND),
    "lru_cache_eq_take": Scope(FLAT, CAPACITY, LRU, FLAT_IDS, LRU_BEHAVIOUR),
    "lru_cache_subset_succ": Scope(FLAT, CAPACITY, LRU, FLAT_IDS, LRU_BEHAVIOUR),
    "lru_hits_mono": Scope(FLAT, CAPACITY, LRU, FLAT_IDS, LRU_BEHAVIOUR),
    "lru_hit_iff_stack_distance": Scope(FLAT, CAPACITY, LRU, FLAT_IDS, LRU_BEHAVIOUR),
    "min_run_valid": Scope(FLAT, CAPACITY, MIN, FLAT_IDS, ACHIEVABLE),
    "min_misses_le": Scope(FLAT, CAPACITY, DEMAND, FLAT_IDS, LOWER_BOUND),
    "min_run_is_prefix_run": Scope(POOLED, CAPACITY, MIN, CHAINS, ACHIEVABLE),
    "prefix_misses_ge_min": Scope(POOLED, CAPACITY, DEMAND, CHAINS, LOWER_BOUND),
    "fleet_misses_ge_per_host_min": Scope(PER_HOST, CAPACITY, DEMAND, CHAINS, LOWER_BOUND),
    "per_host_min_is_fleet_run": Scope(PER_HOST, CAPACITY, MIN, CHAINS, ACHIEVABLE),
    "min_misses_mono": Scope(FLAT, CAPACITY, MIN, FLAT_IDS, MONOTONE),
    # MIN against LRU at one capacity: about LRU's runs as much as MIN's.
    "min_misses_le_lru": Scope(FLAT, CAPACITY, LRU, FLAT_IDS, COMPARISON),
    "lru_misses_eq_far": Scope(FLAT, CAPACITY, LRU, FLAT_IDS, LRU_BEHAVIOUR),
    "prefix_lru_eq_flat": Scope(POOLED, CAPACITY, LRU, CHAINS, LRU_BEHAVIOUR),
    "per_host_prefix_lru_eq_flat": Scope(PER_HOST, CAPACITY, LRU, CHAINS, LRU_BEHAVIOUR),
    "per_host_lru_eq_far": Scope(PER_HOST, CAPACITY, LRU, CHAINS, LRU_BEHAVIOUR),
    "pooled_min_le_per_host_min": Scope(COMPARED, CAPACITY, MIN, CHAINS, COMPARISON),
    "forced_min_misses_le": Scope(FLAT, CAPACITY, FORCED, FLAT_IDS, LOWER_BOUND),
    "forced_min_run_valid": Scope(FLAT, CAPACITY, FORCED_MIN, FLAT_IDS, ACHIEVABLE),
    "pinned_misses_ge_forced_min": Scope(POOLED, CAPACITY, PINNED, CHAINS, LOWER_BOUND),
    # "whatever its capacity and policy": every demand run of a longest-prefix cache, any `cap`.
    "prefix_misses_ge_distinct_blocks": Scope(POOLED, ANY_CAPACITY, DEMAND, CHAINS, LOWER_BOUND),
    "fleet_misses_ge_distinct_host_blocks": Scope(
        PER_HOST, ANY_CAPACITY, DEMAND, CHAINS, LOWER_BOUND
    ),
    # Per-host equals pooled when routing is by first block: a comparison of the two models.
    "per_host_blocks_eq_pooled": Scope(COMPARED, NO_CAPACITY, KEEPS_ALL, CHAINS, COMPARISON),
    # Facts about one concrete input each (Counterexamples.lean): about no certificate's instance.
    "per_host_min_lt_pooled_min": Scope(COMPARED, CAPACITY, MIN, CHAINS, COUNTEREXAMPLE),
    "per_host_lru_lt_pooled_lru": Scope(COMPARED, CAPACITY, LRU, OPENINGS, COUNTEREXAMPLE),
    "fifo_anomaly": Scope(FLAT, CAPACITY, FIFO, FLAT_IDS, COUNTEREXAMPLE),
}


@dataclass(frozen=True)
class CertificateModel:
    """The model a certificate is about: always demand caches that start empty and choose what
    to keep (the fewest misses of any run, bypass allowed), on its instance's requests."""

    caches: str  # POOLED or PER_HOST
    capacity: int | None
    openings: bool  # every request is a chain of one block
    #: ``bypass`` (a fetched block may be dropped at once) or ``forced`` (every block a request hits
    #: or fetches is held while it runs and when it ends: the running request pinned)
    admission: str = "bypass"

    def describe(self) -> str:
        size = (
            "no capacity" if self.capacity is None else f"capacity {self.capacity} blocks per cache"
        )
        requests = "openings (chains of one block)" if self.openings else "block chains"
        runs = (
            "the fewest misses of any demand run admitting every block, the running request pinned"
            if self.admission == "forced"
            else "the fewest misses of any demand run (bypass allowed)"
        )
        return f"{_CACHES[self.caches]}, {size}, {runs}, {requests}"


def certificate_model(cert: dict, chains) -> CertificateModel:
    """The model of a certificate (already verified) on its instance's ``chains``."""
    model = cert["cache_model"]
    return CertificateModel(
        model["model"],
        model["capacity"],
        all(len(chain) == 1 for chain in chains),
        model.get("admission", "bypass"),
    )


def about(name: str) -> dict[str, str] | None:
    """The model theorem ``name`` is about, as plain data (for reports), or None if not recorded."""
    return None if name not in SCOPES else dict(vars(SCOPES[name]))


def mismatch(scope: Scope, model: CertificateModel) -> str | None:
    """Why a theorem with this scope is not about this certificate's model, or None if it is."""
    if scope.conclusion == COUNTEREXAMPLE:
        return "it is a fact about one concrete input written out in the Lean development, not about any certificate's instance"
    if scope.conclusion == MONOTONE:
        return "it compares the counts at `cap` and `cap + 1` blocks; a certificate is about one capacity"
    if scope.policy in (FORCED, FORCED_MIN, PINNED) and model.admission != "forced":
        return (
            "it is about caches that admit every block they fetch; the certificate's runs may drop a block "
            "at once (bypass)"
        )
    if model.admission == "forced" and scope.policy in (MIN, KEEPS_ALL):
        return (
            f"it is about {scope.policy}, which may drop a fetched block at once; the certificate's runs "
            "admit every block (forced admission)"
        )
    if scope.policy == FIFO:
        return "it is about FIFO, which admits every miss and evicts by age; the certificate's runs choose what to keep"
    if scope.caches == COMPARED:
        return "it compares pooled with per-host caches, two models; a certificate is about one"
    if scope.policy == LRU:
        return "it is about LRU, which admits every miss and evicts by recency; the certificate's runs choose what to keep"
    if scope.caches == FLAT:
        if model.caches != POOLED:
            return "it is about one flat cache of single block ids; the certificate about one cache per host"
        if not model.openings:
            return "it is about one flat cache of single block ids; the certificate's instance has longer chains"
    elif scope.caches != model.caches:
        return f"it is about {_CACHES[scope.caches]}; the certificate about {_CACHES[model.caches]}"
    if scope.capacity == NO_CAPACITY and model.capacity is not None:
        return f"it is about caches with no capacity; the certificate's hold {model.capacity} blocks each"
    if scope.capacity == CAPACITY and model.capacity is None:
        return "it is about caches of `cap` blocks; the certificate's have no capacity"
    if scope.requests == OPENINGS and not model.openings:
        return "it is about openings (chains of one block); the certificate's instance has longer chains"
    if scope.policy == KEEPS_ALL and model.capacity is not None:
        return (
            "it is about the cache that keeps every block; the certificate's caches are capacitated"
        )
    if scope.policy == MIN and model.capacity is None:
        return (
            "it is about Belady's MIN with `cap` blocks; the certificate's caches have no capacity"
        )
    return None


__all__ = ["SCOPES", "CertificateModel", "Scope", "about", "certificate_model", "mismatch"]
