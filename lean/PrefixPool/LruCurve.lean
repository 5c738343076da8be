prelude
import PrefixPool.LruPerHost
import PrefixPool.DemandBlocks
/-!
# PrefixPool.LruCurve: the per-host LRU curve from stack distances

`pyverify mrc` draws a per-host LRU curve (`pyverify/sim/mrc.py`,
`lru_curve(chains, routing, fleet).misses(cap)`) as `cold + #{d >= cap}`:
`cold` the first references of each `(host, block)` pair, and `d` the stack
distance of every other reference, measured within its own host's sequence.
`lru_misses_eq_far` states this for one cache; summed over the hosts it is
`per_host_lru_eq_far`: flat LRU caches of `cap` blocks, one per host
`0, ..., fleet - 1`, miss the distinct `(host, block)` pairs plus, on every
host, the references whose stack distance in that host's sequence is `cap`
or more (`far_references`). With `per_host_prefix_lru_eq_flat` it is the
count of pyverify's per-host longest-prefix LRU on prefix-closed chains.
-/

/-- On hosts `0, ..., fleet - 1`, every request routed to one of them, flat
LRU caches of `cap` blocks, one per host, each starting empty and fed its
host's flattened chains, miss in total the distinct `(host, block)` pairs
plus the sum over hosts of the requests that repeat a block after at least
`cap` distinct blocks were requested on that host since its previous request. -/
theorem per_host_lru_eq_far (cap fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (hosts : routed_below fleet requests) :
    Eq (per_host_lru cap fleet requests)
      (Natural.plus (distinct_host_blocks requests)
        (sum_below fleet (fun host => far_references cap (List.flatten (chains_of host requests))))) :=
  Eq.trans
    (sum_below_congr (fun host => lru_misses cap (List.flatten (chains_of host requests)))
      (fun host => Natural.plus (distinct_blocks (chains_of host requests))
        (far_references cap (List.flatten (chains_of host requests))))
      (fun host => lru_misses_eq_far cap (List.flatten (chains_of host requests))) fleet)
    (Eq.trans
      (sum_below_plus (fun host => distinct_blocks (chains_of host requests))
        (fun host => far_references cap (List.flatten (chains_of host requests))) fleet)
      (congrArg (fun cold => Natural.plus cold
          (sum_below fleet (fun host => far_references cap (List.flatten (chains_of host requests)))))
        (Eq.symm (distinct_host_blocks_eq_sum fleet requests hosts))))
