prelude
import PrefixPool.PooledMemory
/-!
# PrefixPool.DemandBlocks: no demand cache beats keeping every block, on block chains

`pooled_block_misses_eq_distinct` and `per_host_block_misses_eq_distinct_pairs`
count the misses of one cache: the one that keeps every block. A certificate
for an uncapacitated cache claims more: that no demand cache misses fewer. On
openings (chains of one block) that half is `demand_misses_ge_distinct`. This
module proves it for block chains with longest-prefix hits, pooled and per
host, for every run of such a cache, whatever its capacity and policy (a
finite run always fits some `cap`, so "every `cap`" is "any capacity or
none"), and with no prefix closure:

* `prefix_misses_ge_distinct_blocks`: every valid prefix run (`Flat.lean`)
  whose requests read `chains` misses at least `distinct_blocks chains`. A
  prefix run, flattened, is a flat run missing no more (`prefix_run_is_flat_run`);
  and a flat run holds only blocks requested before, so it misses at least
  what the keep-everything cache misses, once per distinct block
  (`flat_misses_ge_cache_misses`; the argument of `demand_misses_ge_distinct`).
* `fleet_misses_ge_distinct_host_blocks`: on hosts `0, ..., fleet - 1`, every
  valid fleet run (`PerHostMin.lean`: each host's run reads exactly its own
  chains) misses at least `distinct_host_blocks requests`: the first theorem
  on each host, summed; the sum over hosts of each host's distinct blocks is
  the number of distinct `(host, block)` pairs (`distinct_host_blocks_eq_sum`).

With the keep-everything counts (equal to these bounds on prefix-closed
chains) they make the uncapacitated optimum exactly the distinct blocks
(pooled) and the distinct `(host, block)` pairs (per host).
-/

/-! ## Lemmas -/

theorem subset_cons_cons (x : Natural) {a b : List Natural} (h : subset a b) :
    subset (List.cons x a) (List.cons x b) :=
  fun y hy => Bool.or_mono_right (Natural.eqb y x) (h y) hy

/-- A flat run holds only blocks requested earlier (or allowed at the start),
so it misses at least as often as the keep-everything cache that starts from
what was allowed. (Stated for flat runs directly, so the theorems below rest on
`flat_valid` alone, the definition their statements use.) -/
theorem flat_misses_ge_cache_misses (cap : Natural) (run : List (Prod Natural (List Natural))) :
    ∀ allowed earlier : List Natural, subset allowed earlier → flat_valid_after cap allowed run →
      Natural.le (cache_misses Natural.eqb earlier (List.map Prod.fst run)) (demand_misses run) :=
  List.rec
    (motive := fun run => ∀ allowed earlier : List Natural, subset allowed earlier →
      flat_valid_after cap allowed run →
        Natural.le (cache_misses Natural.eqb earlier (List.map Prod.fst run)) (demand_misses run))
    (fun _ _ _ _ => Natural.le_refl Natural.zero)
    (fun step _ ih _allowed earlier hsub h =>
      Natural.plus_le_plus
        (absent_le Natural.eqb (Prod.fst step) earlier (Prod.snd step)
          (subset_trans h.left hsub (Prod.fst step)))
        (ih (List.cons (Prod.fst step) (Prod.snd step)) (List.cons (Prod.fst step) earlier)
          (subset_cons_cons (Prod.fst step) (subset_trans h.left hsub)) h.right.right))
    run

/-- The blocks a prefix run reads, flattened, are its chains flattened. -/
theorem blocks_of_flatten (run : List (List (Prod Natural (List Natural)))) (chains : List (List Natural))
    (hr : Eq (List.map (List.map Prod.fst) run) chains) :
    Eq (List.map Prod.fst (List.flatten run)) (List.flatten chains) :=
  Eq.trans (List.map_flatten Prod.fst run) (congrArg List.flatten hr)

/-- On hosts `0, ..., fleet - 1`, the distinct `(host, block)` pairs are the
sum over hosts of each host's distinct blocks. -/
theorem distinct_host_blocks_eq_sum (fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (h : routed_below fleet requests) :
    Eq (distinct_host_blocks requests) (sum_below fleet (fun host => distinct_blocks (chains_of host requests))) :=
  Eq.trans (distinct_pairs_eq_sum fleet (host_blocks requests) (hosts_below_host_blocks fleet requests h))
    (sum_below_congr (fun host => distinct_count (openings_of host (host_blocks requests)))
      (fun host => distinct_blocks (chains_of host requests))
      (fun host => congrArg distinct_count (openings_of_host_blocks host requests)) fleet)

/-! ## Theorems -/

/-- No valid run of a capacitated demand cache with longest-prefix hits that
starts empty, of any capacity `cap`, whose requests read `chains`
(prefix-closed or not), misses fewer blocks than there are distinct block ids
in the chains. -/
theorem prefix_misses_ge_distinct_blocks (cap : Natural) (chains : List (List Natural))
    (run : List (List (Prod Natural (List Natural))))
    (hv : prefix_valid cap run) (hr : Eq (List.map (List.map Prod.fst) run) chains) :
    Natural.le (distinct_blocks chains) (prefix_misses run) :=
  Natural.le_trans
    (Natural.le_of_eq_of_le
      (Eq.trans (cache_misses_nil_eq_count Natural.eqb_lawful (List.map Prod.fst (List.flatten run)))
        (congrArg distinct_count (blocks_of_flatten run chains hr)))
      rfl
      (flat_misses_ge_cache_misses cap (List.flatten run) List.nil List.nil (subset_refl List.nil)
        (prefix_run_is_flat_run cap run hv).left))
    (prefix_run_is_flat_run cap run hv).right

/-- On hosts `0, ..., fleet - 1`, every request routed to one of them, no
valid run of separate demand caches with longest-prefix hits, one per host, of
any capacity `cap`, each starting empty and reading exactly the chains routed
to it (prefix-closed or not), misses fewer blocks in total than there are
distinct `(host, block)` pairs. -/
theorem fleet_misses_ge_distinct_host_blocks (cap fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (runs : Natural → List (List (Prod Natural (List Natural))))
    (hosts : routed_below fleet requests) (hv : fleet_valid cap requests runs) :
    Natural.le (distinct_host_blocks requests) (fleet_misses fleet runs) :=
  Natural.le_of_eq_of_le (Eq.symm (distinct_host_blocks_eq_sum fleet requests hosts)) rfl
    (sum_below_le (fun host => distinct_blocks (chains_of host requests)) (fun host => prefix_misses (runs host))
      (fun host => prefix_misses_ge_distinct_blocks cap (chains_of host requests) (runs host)
        (hv host).left (hv host).right)
      fleet)
