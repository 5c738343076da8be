prelude
import PrefixPool.LruPrefix
import PrefixPool.PerHostMin
/-!
# PrefixPool.LruPerHost: longest-prefix LRU is flat LRU, one cache per host

With one LRU prefix cache per host (a static routing), each host's cache
serves only the chains routed to it, in request order (`chains_of`,
`PerHostMin.lean`). Those chains are prefix-closed when all the chains are
(`prefix_closed_chains_of`), so `prefix_lru_eq_flat` (`LruPrefix.lean`)
applies host by host: the fleet's block misses are the sum over hosts of
flat LRU's misses on each host's flattened chains. That sum is what the
trusted checker's `lru` recount counts (`pyverify/trusted/recount.py`,
`lru_misses(chains, routing, cap)`) and what `pyverify mrc` prints for a
per-host fleet (`lru_curve(chains, routing, fleet)`); by `lru_misses_eq_far`
each host's term is its distinct blocks plus its far references.
-/

/-! ## Definitions -/

/-- Block misses of separate LRU prefix caches of `cap` blocks, one per host
`0, ..., fleet − 1`, each starting empty and serving the chains routed to it
in request order (longest-prefix hits, then chain-order LRU, as
`prefix_lru_misses`).
Python: `pyverify/sim/simulate.py`, `simulate(chains, routing, "per-host",
capacity=cap).misses` (every host below `fleet`, `cap ≥ 1`). -/
noncomputable def per_host_prefix_lru (cap fleet : Natural) (requests : List (Prod Natural (List Natural))) : Natural :=
  sum_below fleet (fun host => prefix_lru_misses cap (chains_of host requests))

/-- The sum over hosts `0, ..., fleet − 1` of the misses of a flat LRU cache
of `cap` blocks on the host's flattened chains.
Python: `pyverify/trusted/recount.py`, `lru_misses(chains, routing, cap)`;
`pyverify/sim/mrc.py`, `lru_curve(chains, routing, fleet).misses(cap)`. -/
noncomputable def per_host_lru (cap fleet : Natural) (requests : List (Prod Natural (List Natural))) : Natural :=
  sum_below fleet (fun host => lru_misses cap (List.flatten (chains_of host requests)))

/-! ## Theorem -/

/-- For every list of block chains routed to hosts whose chains, taken
together, are prefix-closed, separate LRU prefix caches of `cap` blocks, one
per host below `fleet`, miss in total exactly as many blocks as flat LRU
caches of `cap` blocks on each host's flattened chains. -/
theorem per_host_prefix_lru_eq_flat (cap fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (h : prefix_closed (List.map Prod.snd requests)) :
    Eq (per_host_prefix_lru cap fleet requests) (per_host_lru cap fleet requests) :=
  sum_below_congr _ _
    (fun host => prefix_lru_eq_flat cap (chains_of host requests) (prefix_closed_chains_of host requests h))
    fleet
