prelude
import PrefixPool.Core
import PrefixPool.Distinct
import PrefixPool.Pooled
import PrefixPool.PerHost
import PrefixPool.Blocks
import PrefixPool.PerHostBlocks
import PrefixPool.PerHostBlocksEq
import PrefixPool.Flat
import PrefixPool.Lru
import PrefixPool.StackDistance
import PrefixPool.Belady
import PrefixPool.BeladyLemmas
import PrefixPool.BeladyOptimal
import PrefixPool.BeladyPrefix
import PrefixPool.PerHostMin
import PrefixPool.RoutedByRoot
import PrefixPool.MinMonotone
import PrefixPool.OptimalCurve
import PrefixPool.LruPrefix
import PrefixPool.LruPerHost
import PrefixPool.PooledMemory
import PrefixPool.BeladyForced
import PrefixPool.DemandBlocks
import PrefixPool.LruCurve
import PrefixPool.ForcedPinned
import PrefixPool.Examples
import PrefixPool.Counterexamples
import PrefixPool.Generated
/-!
# PrefixPool

The general half of pyverify, proved for every request list: uncapacitated
caches (for block chains: every prefix-closed one where it matters), and the
first results with a memory limit.

* `pooled_misses_eq_distinct` (PrefixPool/Pooled.lean)
* `demand_misses_ge_distinct` (PrefixPool/Pooled.lean)
* `per_host_misses_eq_distinct_pairs` (PrefixPool/PerHost.lean)
* `per_host_misses_eq_sum` (PrefixPool/PerHost.lean)
* `per_host_ge_pooled` (PrefixPool/PerHost.lean)
* `pooled_block_misses_eq_distinct` (PrefixPool/Blocks.lean)
* `per_host_blocks_ge_pooled` (PrefixPool/PerHostBlocks.lean)
* `per_host_block_misses_eq_distinct_pairs` (PrefixPool/PerHostBlocksEq.lean)
* `prefix_run_is_flat_run` (PrefixPool/Flat.lean): the flat relaxation
* `lru_cache_eq_take`, `lru_cache_subset_succ`, `lru_hits_mono` (PrefixPool/Lru.lean)
* `lru_hit_iff_stack_distance` (PrefixPool/StackDistance.lean)
* `min_run_valid` (PrefixPool/Belady.lean): MIN is a flat demand cache
* `min_misses_le` (PrefixPool/BeladyOptimal.lean): Belady's theorem
* `min_run_is_prefix_run`, `prefix_misses_ge_min` (PrefixPool/BeladyPrefix.lean): on
  prefix-closed chains the fewest misses of a capacitated prefix cache are MIN's
* `fleet_misses_ge_per_host_min`, `per_host_min_is_fleet_run` (PrefixPool/PerHostMin.lean):
  per-host capacitated prefix caches; their fewest misses are the sum over hosts of MIN
* `per_host_blocks_eq_pooled` (PrefixPool/RoutedByRoot.lean): on prefix-closed chains routed by
  their first block, per-host uncapacitated caches miss exactly what the pool misses
* `per_host_min_lt_pooled_min`, `per_host_lru_lt_pooled_lru`, `fifo_anomaly`
  (PrefixPool/Counterexamples.lean): on small concrete lists, per-host caches
  beat the pool (MIN at equal capacity per cache; LRU at equal total memory),
  and FIFO misses more with more memory (Belady's anomaly)
* `min_misses_mono` (PrefixPool/MinMonotone.lean): MIN with one more block misses no more
* `min_misses_le_lru` (PrefixPool/OptimalCurve.lean): MIN misses no more than LRU with the
  same number of blocks (the optimal curve never lies above LRU's)
* `lru_misses_eq_far` (PrefixPool/LruPrefix.lean): LRU's misses are the distinct blocks
  plus the references at stack distance `cap` or more; `prefix_lru_eq_flat` (same module):
  on prefix-closed chains pyverify's longest-prefix LRU misses what flat LRU misses
* `per_host_prefix_lru_eq_flat` (PrefixPool/LruPerHost.lean): the same, one LRU cache per host

* `pooled_min_le_per_host_min` (PrefixPool/PooledMemory.lean): one pooled cache of
  `fleet × cap` blocks misses, under MIN, no more than `fleet` per-host caches of `cap`
* `forced_min_misses_le`, `forced_min_run_valid` (PrefixPool/BeladyForced.lean): Belady's
  theorem with forced admission (every fetched block is admitted)
* `prefix_misses_ge_distinct_blocks`, `fleet_misses_ge_distinct_host_blocks`
  (PrefixPool/DemandBlocks.lean): on block chains no demand cache, pooled or
  one per host, of any capacity, misses fewer blocks than the keep-everything
  counts (distinct blocks; distinct (host, block) pairs)
* `per_host_lru_eq_far` (PrefixPool/LruCurve.lean): per-host flat LRU misses are the distinct
  (host, block) pairs plus each host's references at stack distance `cap` or more

`PrefixPool/Examples.lean` gives every hypothesis a positive example;
`PrefixPool/Generated.lean` pins the definitions to their Python mirrors.
`lean/theorems.json` records each statement as Lean prints it and every
definition it depends on; `pyverify lean check` regenerates it and compares.
-/
