prelude
import PrefixPool.Core
import PrefixPool.Distinct
import PrefixPool.Pooled
import PrefixPool.PerHost
import PrefixPool.Blocks
import PrefixPool.PerHostBlocks
import PrefixPool.Flat
import PrefixPool.Lru
import PrefixPool.StackDistance
import PrefixPool.Belady
import PrefixPool.Examples
import PrefixPool.Generated
/-!
# PrefixPool

The general, uncapacitated half of pyverify, proved for every request list
(for block chains: every prefix-closed one):

* `pooled_misses_eq_distinct` (PrefixPool/Pooled.lean)
* `demand_misses_ge_distinct` (PrefixPool/Pooled.lean)
* `per_host_misses_eq_distinct_pairs` (PrefixPool/PerHost.lean)
* `per_host_misses_eq_sum` (PrefixPool/PerHost.lean)
* `per_host_ge_pooled` (PrefixPool/PerHost.lean)
* `pooled_block_misses_eq_distinct` (PrefixPool/Blocks.lean)
* `per_host_blocks_ge_pooled` (PrefixPool/PerHostBlocks.lean)
* `prefix_run_is_flat_run` (PrefixPool/Flat.lean)

`lean/theorems.json` records each statement as Lean prints it; `pyverify lean
check` regenerates it and compares.
-/
