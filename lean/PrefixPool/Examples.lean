prelude
import PrefixPool.PerHost
import PrefixPool.Blocks
import PrefixPool.PerHostBlocks
import PrefixPool.PerHostBlocksEq
import PrefixPool.Flat
import PrefixPool.BeladyOptimal
import PrefixPool.BeladyPrefix
import PrefixPool.PerHostMin
import PrefixPool.RoutedByRoot
import PrefixPool.MinMonotone
import PrefixPool.LruPrefix
import PrefixPool.LruPerHost
import PrefixPool.PooledMemory
import PrefixPool.BeladyForced
import PrefixPool.DemandBlocks
import PrefixPool.LruCurve
import PrefixPool.ForcedPinned
/-!
# PrefixPool.Examples: the definitions compute what they should

Small instances, evaluated by the kernel (`rfl`), so a reviewer can see that
the definitions count what their names say, not something vacuous; and one
run that `demand_valid` rejects; and block chains, prefix-closed or not. The Python side (`pyverify/sim/simulate.py`)
gives the same numbers on the same lists.
-/

noncomputable def one : Natural := Natural.succ Natural.zero
noncomputable def two : Natural := Natural.succ one
noncomputable def three : Natural := Natural.succ two
noncomputable def four : Natural := Natural.succ three

/-- Openings `[1, 2, 1, 3, 2]`. -/
noncomputable def openings : List Natural :=
  List.cons one (List.cons two (List.cons one (List.cons three (List.cons two List.nil))))

example : Eq (distinct_count openings) three := rfl
example : Eq (pooled_misses openings) three := rfl

/-- `(host, opening)` requests `[(0, 1), (1, 1), (0, 1), (1, 2)]` on a fleet of two hosts. -/
noncomputable def routed : List (Prod Natural Natural) :=
  List.cons (Prod.mk Natural.zero one) (List.cons (Prod.mk one one)
    (List.cons (Prod.mk Natural.zero one) (List.cons (Prod.mk one two) List.nil)))

example : Eq (per_host_misses routed) three := rfl
example : Eq (distinct_pairs routed) three := rfl
example : Eq (sum_below two (fun host => distinct_count (openings_of host routed))) three := rfl
example : Eq (pooled_misses (List.map Prod.snd routed)) two := rfl
/-- A positive example of the hypothesis of `per_host_misses_eq_sum`. -/
theorem routed_hosts_below : hosts_below two routed :=
  And.intro rfl (And.intro rfl (And.intro rfl (And.intro rfl True.intro)))

/-- If `a || false` then `a || c`. -/
theorem Bool.or_of_or_false (a c : Bool) (h : Eq (Bool.or a Bool.false) Bool.true) : Eq (Bool.or a c) Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.or a Bool.false) Bool.true → Eq (Bool.or a c) Bool.true)
    (fun h => False.elim (Bool.false_ne_true h)) (fun _ => rfl) a h

/-- A capacity-one LRU cache on openings `[1, 2, 1]`: it holds nothing, then
`[1]`, then `[2]`, and misses all three times (two distinct openings). -/
noncomputable def lru_run : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk one List.nil)
    (List.cons (Prod.mk two (List.cons one List.nil))
      (List.cons (Prod.mk one (List.cons two List.nil)) List.nil))

/-- A positive example of the hypothesis of `demand_misses_ge_distinct`: the
LRU run is a demand-cache run (it holds 1 only after 1 was requested, 2 only
after 2 was). -/
theorem lru_run_valid : demand_valid lru_run :=
  And.intro (fun _ h => h)
    (And.intro (fun _ h => h)
      (And.intro (fun a h => Bool.or_of_or_false (Natural.eqb a two) (Bool.or (Natural.eqb a one) Bool.false) h)
        True.intro))

example : Eq (demand_misses lru_run) three := rfl
example : Eq (distinct_count (List.map Prod.fst lru_run)) two := rfl

/-- A run that claims a hit on its very first request is not a demand-cache run. -/
example : demand_valid (List.cons (Prod.mk one (List.cons one List.nil)) List.nil) → False :=
  fun h => Bool.false_ne_true (h.left one rfl)

/-! ## Block chains -/

/-- Chains `[[1, 2], [1, 3], [1, 2, 4]]`: prefix-closed. The requests miss
2, 1 (block 3) and 1 (block 4) blocks: 4 misses, 4 distinct ids. -/
noncomputable def tree_chains : List (List Natural) :=
  List.cons (List.cons one (List.cons two List.nil))
    (List.cons (List.cons one (List.cons three List.nil))
      (List.cons (List.cons one (List.cons two (List.cons four List.nil))) List.nil))

example : Eq (pooled_block_misses tree_chains) four := rfl
example : Eq (distinct_blocks tree_chains) four := rfl
example : Eq (prefix_hits (List.cons two (List.cons one List.nil)) (List.cons one (List.cons two (List.cons four List.nil)))) two := rfl

/-- A positive example of the hypothesis of `pooled_block_misses_eq_distinct`.
The parent function that makes `tree_chains` prefix-closed: 1 follows the
root, 4 follows 2, and every other id follows 1. -/
theorem tree_chains_prefix_closed : prefix_closed tree_chains :=
  Exists.intro
    (fun b => cond (Natural.eqb b one) Parent.root (cond (Natural.eqb b four) (Parent.block two) (Parent.block one)))
    (And.intro (And.intro rfl (And.intro rfl True.intro))
      (And.intro (And.intro rfl (And.intro rfl True.intro))
        (And.intro (And.intro rfl (And.intro rfl (And.intro rfl True.intro))) True.intro)))

/-- Chains `[[1, 2], [3, 2]]` are not prefix-closed (block 2 follows 1, then 3),
and the equation fails: the second request starts with 3, which is not held,
so it misses block 2 again: 4 misses, but only 3 distinct ids. -/
noncomputable def crossed_chains : List (List Natural) :=
  List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons three (List.cons two List.nil)) List.nil)

example : Eq (pooled_block_misses crossed_chains) four := rfl
example : Eq (distinct_blocks crossed_chains) three := rfl
example : prefix_closed crossed_chains → False :=
  fun h => Exists.rec (motive := fun _ => False)
    (fun (parent : Natural → Parent) hfit =>
      let first : Eq (parent two) (Parent.block one) := And.left (And.right (And.left hfit))
      let second : Eq (parent two) (Parent.block three) := And.left (And.right (And.left (And.right hfit)))
      Bool.false_ne_true (congrArg (Natural.eqb one) (Parent.block_inj (Eq.trans (Eq.symm second) first))))
    h

/-- A chain `[1, 1]` repeating an id is not prefix-closed (1 follows the root,
then itself): 2 misses, 1 distinct id. -/
noncomputable def repeat_chains : List (List Natural) :=
  List.cons (List.cons one (List.cons one List.nil)) List.nil

example : Eq (pooled_block_misses repeat_chains) two := rfl
example : Eq (distinct_blocks repeat_chains) one := rfl
example : prefix_closed repeat_chains → False :=
  fun h => Exists.rec (motive := fun _ => False)
    (fun (parent : Natural → Parent) hfit =>
      let first : Eq (parent one) Parent.root := And.left (And.left hfit)
      let second : Eq (parent one) (Parent.block one) := And.left (And.right (And.left hfit))
      Parent.root_ne_block (Eq.trans (Eq.symm first) second))
    h

/-- Openings are chains of length one: on `[1, 2, 1, 3, 2]` as chains, the
block cache misses as `pooled_misses` does. -/
example : Eq (pooled_block_misses (List.map (fun r => List.cons r List.nil) openings)) three := rfl
example : Eq (distinct_blocks (List.map (fun r => List.cons r List.nil) openings)) three := rfl

/-! ## Per-host caches on block chains -/

/-- `crossed_chains` routed to hosts 0 and 1: each host misses both blocks of
its chain (4 misses); the pool misses 4 too (block 2 again, as above), so the
inequality of `per_host_blocks_ge_pooled` is tight here. Routed both to host 0,
the per-host caches are the pool. -/
noncomputable def routed_crossed : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk Natural.zero (List.cons one (List.cons two List.nil)))
    (List.cons (Prod.mk one (List.cons three (List.cons two List.nil))) List.nil)

example : Eq (per_host_block_misses routed_crossed) four := rfl
example : Eq (pooled_block_misses (List.map Prod.snd routed_crossed)) four := rfl

/-- `tree_chains` split over two hosts: host 1 sees `[1, 3]` alone and misses
block 1 again: 5 misses, against 4 for the pool. -/
noncomputable def routed_tree : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk Natural.zero (List.cons one (List.cons two List.nil)))
    (List.cons (Prod.mk one (List.cons one (List.cons three List.nil)))
      (List.cons (Prod.mk Natural.zero (List.cons one (List.cons two (List.cons four List.nil)))) List.nil))

example : Eq (per_host_block_misses routed_tree) (Natural.succ four) := rfl
example : Eq (pooled_block_misses (List.map Prod.snd routed_tree)) four := rfl

/-- A positive example of the hypothesis of
`per_host_block_misses_eq_distinct_pairs`: the chains of `routed_tree` are
`tree_chains`, prefix-closed. Its 5 per-host misses are its 5 distinct
`(host, block)` pairs: (0, 1), (0, 2), (0, 4) and (1, 1), (1, 3). -/
theorem routed_tree_prefix_closed : prefix_closed (List.map Prod.snd routed_tree) :=
  tree_chains_prefix_closed

example : Eq (host_blocks routed_tree)
    (List.cons (Prod.mk Natural.zero one) (List.cons (Prod.mk Natural.zero two)
      (List.cons (Prod.mk one one) (List.cons (Prod.mk one three)
        (List.cons (Prod.mk Natural.zero one) (List.cons (Prod.mk Natural.zero two)
          (List.cons (Prod.mk Natural.zero four) List.nil))))))) := rfl
example : Eq (distinct_host_blocks routed_tree) (Natural.succ four) := rfl
example : Eq (per_host_block_misses routed_tree) (distinct_host_blocks routed_tree) :=
  per_host_block_misses_eq_distinct_pairs routed_tree routed_tree_prefix_closed

/-- Without prefix closure the equation fails: `crossed_chains` routed both to
host 0 misses 4 blocks (block 2 again, as in the pool), for 3 distinct pairs.
(Routed to hosts 0 and 1, as `routed_crossed`, it has 4 pairs and 4 misses.) -/
example : Eq (per_host_block_misses (List.map (Prod.mk Natural.zero) crossed_chains)) four := rfl
example : Eq (distinct_host_blocks (List.map (Prod.mk Natural.zero) crossed_chains)) three := rfl
example : Eq (distinct_host_blocks routed_crossed) four := rfl

/-! ## A capacitated prefix cache, and its flat relaxation -/

/-- An LRU cache of 2 blocks on chains `[[1, 2], [1, 3]]`, block by block
(what it holds before each block): `[1, 2]` misses twice; then `[1, 3]` hits
block 1 and misses block 3, evicting block 2. Python:
`pyverify/lean/mirror.py`, `lru_prefix_run([[1, 2], [1, 3]], 2)`. -/
noncomputable def lru_prefix_run : List (List (Prod Natural (List Natural))) :=
  List.cons
    (List.cons (Prod.mk one List.nil) (List.cons (Prod.mk two (List.cons one List.nil)) List.nil))
    (List.cons
      (List.cons (Prod.mk one (List.cons one (List.cons two List.nil)))
        (List.cons (Prod.mk three (List.cons one (List.cons two List.nil))) List.nil))
      List.nil)

/-- A positive example of the hypothesis of `prefix_run_is_flat_run`: the LRU
run is a valid run of a prefix cache of 2 blocks. -/
theorem lru_prefix_run_valid : prefix_valid two lru_prefix_run :=
  And.intro (fun _ h => h) (And.intro (Exists.intro two rfl)
    (And.intro (fun _ h => h) (And.intro (Exists.intro one rfl)
      (And.intro (fun a h => Eq.trans (Bool.or_left_comm (Natural.eqb a two) (Natural.eqb a one) Bool.false) h)
        (And.intro (Exists.intro Natural.zero rfl)
          (And.intro (fun _ h => h) (And.intro (Exists.intro Natural.zero rfl) True.intro)))))))

example : Eq (prefix_misses lru_prefix_run) three := rfl
example : Eq (demand_misses (List.flatten lru_prefix_run)) three := rfl

/-- Chains `[[1, 2], [3, 2]]` on a cache of 2 blocks that evicts block 1 for
block 3: the second request misses block 3, so it fetches block 2 again
although 2 is held (4 prefix misses), where flat paging hits block 2
(3 misses): the relaxation can be strict. -/
noncomputable def strict_run : List (List (Prod Natural (List Natural))) :=
  List.cons
    (List.cons (Prod.mk one List.nil) (List.cons (Prod.mk two (List.cons one List.nil)) List.nil))
    (List.cons
      (List.cons (Prod.mk three (List.cons one (List.cons two List.nil)))
        (List.cons (Prod.mk two (List.cons three (List.cons two List.nil))) List.nil))
      List.nil)

example : Eq (prefix_misses strict_run) four := rfl
example : Eq (demand_misses (List.flatten strict_run)) three := rfl

/-! ## Belady's MIN -/

/-- A positive example of the first hypothesis of `min_misses_le`: the LRU run
above, flattened, is a valid flat run of 2 blocks (by `prefix_run_is_flat_run`). -/
theorem lru_flat_run_valid : flat_valid two (List.flatten lru_prefix_run) :=
  (prefix_run_is_flat_run two lru_prefix_run lru_prefix_run_valid).left

/-- A positive example of the second hypothesis of `min_misses_le`: that run
serves blocks `[1, 2, 1, 3]`. -/
theorem lru_flat_run_blocks :
    Eq (List.map Prod.fst (List.flatten lru_prefix_run))
      (List.cons one (List.cons two (List.cons one (List.cons three List.nil)))) :=
  rfl

/-- MIN with 2 blocks on `[1, 2, 1, 3]` misses 3 times, as the LRU run does;
on `[1, 2, 3, 1]` MIN misses 3 times (it drops 2, or bypasses 3), where LRU
misses 4. -/
example : Eq (min_misses two (List.cons one (List.cons two (List.cons one (List.cons three List.nil))))) three := rfl
example : Eq (min_misses two (List.cons one (List.cons two (List.cons three (List.cons one List.nil))))) three := rfl
example : Eq (lru_hits two (List.cons one (List.cons two (List.cons three (List.cons one List.nil))))) Natural.zero := rfl

/-! ## MIN's run is a prefix-cache run -/

/-- A positive example of the second hypothesis of `prefix_misses_ge_min`: the
LRU run above reads chains `[[1, 2], [1, 3]]`. -/
theorem lru_prefix_run_chains :
    Eq (List.map (List.map Prod.fst) lru_prefix_run)
      (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil)) :=
  rfl

/-- On `tree_chains` with 1 block, MIN (flat: `[1, 2, 1, 3, 1, 2, 4]`) keeps
block 1 and bypasses the rest: 5 misses; cut into the requests, its run
misses 5 blocks as a prefix cache too (`min_run_is_prefix_run`). -/
example : Eq (min_misses one (List.flatten tree_chains)) (Natural.succ four) := rfl
example : Eq (prefix_misses (min_prefix_run one List.nil tree_chains)) (Natural.succ four) := rfl

/-- Without prefix closure it fails: on `crossed_chains` with 2 blocks MIN
misses 3 times (it hits block 2 after missing block 3), but the same run as a
prefix cache misses 4 blocks; so does every prefix run (block 3 is new, so
the second request misses both its blocks), and MIN's 3 is only a lower bound
there (`prefix_misses_ge_min`). -/
example : Eq (min_misses two (List.flatten crossed_chains)) three := rfl
example : Eq (prefix_misses (min_prefix_run two List.nil crossed_chains)) four := rfl

/-! ## Per-host capacitated caches: the sum of per-host MIN counts -/

/-- `routed_tree` on hosts 0 and 1: host 0 reads `[[1, 2], [1, 2, 4]]`, host 1
reads `[[1, 3]]`, and host 2 reads nothing. -/
example : Eq (chains_of Natural.zero routed_tree)
    (List.cons (List.cons one (List.cons two List.nil))
      (List.cons (List.cons one (List.cons two (List.cons four List.nil))) List.nil)) := rfl
example : Eq (chains_of one routed_tree) (List.cons (List.cons one (List.cons three List.nil)) List.nil) := rfl
example : Eq (chains_of two routed_tree) List.nil := rfl

/-- A positive example of the first hypothesis of `fleet_misses_ge_per_host_min`
and `per_host_min_is_fleet_run`: `routed_tree` is routed to hosts below 2. -/
theorem routed_tree_routed_below : routed_below two routed_tree :=
  And.intro rfl (And.intro rfl (And.intro rfl True.intro))

/-- A positive example of the second hypothesis of
`fleet_misses_ge_per_host_min`: every host running MIN with 2 blocks, cut into
its requests, is a valid fleet run on `routed_tree` (`min_fleet_valid`). -/
theorem routed_tree_fleet_valid :
    fleet_valid two routed_tree (fun host => min_prefix_run two List.nil (chains_of host routed_tree)) :=
  min_fleet_valid two routed_tree

/-- With 2 blocks per host: host 0 (flat `[1, 2, 1, 2, 4]`) misses 3 with MIN
(1, 2 and 4), host 1 (`[1, 3]`) misses 2: the per-host optimum is 5. One
pooled cache of 2 blocks (flat `[1, 2, 1, 3, 1, 2, 4]`) misses 4 with MIN (it
bypasses 3). Host 2, with no requests, adds nothing (fleet of 3: still 5). -/
example : Eq (min_misses two (List.flatten (chains_of Natural.zero routed_tree))) three := rfl
example : Eq (min_misses two (List.flatten (chains_of one routed_tree))) two := rfl
example : Eq (per_host_min two two routed_tree) (Natural.succ four) := rfl
example : Eq (per_host_min two three routed_tree) (Natural.succ four) := rfl
example : Eq (fleet_misses two (fun host => min_prefix_run two List.nil (chains_of host routed_tree)))
    (Natural.succ four) := rfl
example : Eq (min_misses two (List.flatten (List.map Prod.snd routed_tree))) four := rfl

/-- With 1 block per host: host 0 misses 4 (MIN keeps 1, bypasses the first 2,
then 2 and 4), host 1 misses 2: 6, against 5 for one pooled block. -/
example : Eq (per_host_min one two routed_tree) (Natural.succ (Natural.succ four)) := rfl
example : Eq (min_misses one (List.flatten (List.map Prod.snd routed_tree))) (Natural.succ four) := rfl

/-- The two theorems on this instance: no valid fleet run with 2 blocks per host
misses fewer than 5, and one misses exactly 5. -/
example (runs : Natural → List (List (Prod Natural (List Natural)))) (hv : fleet_valid two routed_tree runs) :
    Natural.le (Natural.succ four) (fleet_misses two runs) :=
  fleet_misses_ge_per_host_min two two routed_tree runs routed_tree_routed_below hv
example : Exists (fun runs : Natural → List (List (Prod Natural (List Natural))) =>
    And (fleet_valid two routed_tree runs) (Eq (fleet_misses two runs) (Natural.succ four))) :=
  per_host_min_is_fleet_run two two routed_tree routed_tree_routed_below tree_chains_prefix_closed

/-! ## Every registered theorem with hypotheses, applied to a concrete input

One example per theorem, proved by the theorem itself with every hypothesis
discharged at once on a concrete input: so the hypotheses hold together of
something and no statement is vacuous (`pyverify lean check` requires one for
each registered theorem with hypotheses, as its `applies` example). One
example per kind of hypothesis would not do: an extra, unsatisfiable
`Eq zero (succ zero)` would be "covered" by any other equation's example. -/

theorem demand_misses_ge_distinct_applies :
    Natural.le (distinct_count (List.map Prod.fst lru_run)) (demand_misses lru_run) :=
  demand_misses_ge_distinct lru_run lru_run_valid

theorem per_host_misses_eq_sum_applies :
    Eq (per_host_misses routed) (sum_below two (fun host => distinct_count (openings_of host routed))) :=
  per_host_misses_eq_sum two routed routed_hosts_below

theorem pooled_block_misses_eq_distinct_applies :
    Eq (pooled_block_misses tree_chains) (distinct_blocks tree_chains) :=
  pooled_block_misses_eq_distinct tree_chains tree_chains_prefix_closed

theorem per_host_block_misses_eq_distinct_pairs_applies :
    Eq (per_host_block_misses routed_tree) (distinct_host_blocks routed_tree) :=
  per_host_block_misses_eq_distinct_pairs routed_tree routed_tree_prefix_closed

theorem prefix_run_is_flat_run_applies :
    And (flat_valid two (List.flatten lru_prefix_run))
      (Natural.le (demand_misses (List.flatten lru_prefix_run)) (prefix_misses lru_prefix_run)) :=
  prefix_run_is_flat_run two lru_prefix_run lru_prefix_run_valid

theorem min_misses_le_applies :
    Natural.le (min_misses two (List.cons one (List.cons two (List.cons one (List.cons three List.nil)))))
      (demand_misses (List.flatten lru_prefix_run)) :=
  min_misses_le two (List.cons one (List.cons two (List.cons one (List.cons three List.nil))))
    (List.flatten lru_prefix_run) lru_flat_run_valid lru_flat_run_blocks

theorem min_run_is_prefix_run_applies :
    Exists (fun run : List (List (Prod Natural (List Natural))) =>
      And (prefix_valid one run)
        (And (Eq (List.map (List.map Prod.fst) run) tree_chains)
          (Eq (prefix_misses run) (min_misses one (List.flatten tree_chains))))) :=
  min_run_is_prefix_run one tree_chains tree_chains_prefix_closed

theorem prefix_misses_ge_min_applies :
    Natural.le
      (min_misses two (List.flatten
        (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil))))
      (prefix_misses lru_prefix_run) :=
  prefix_misses_ge_min two
    (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil))
    lru_prefix_run lru_prefix_run_valid lru_prefix_run_chains

theorem fleet_misses_ge_per_host_min_applies :
    Natural.le (per_host_min two two routed_tree)
      (fleet_misses two (fun host => min_prefix_run two List.nil (chains_of host routed_tree))) :=
  fleet_misses_ge_per_host_min two two routed_tree
    (fun host => min_prefix_run two List.nil (chains_of host routed_tree))
    routed_tree_routed_below routed_tree_fleet_valid

theorem per_host_min_is_fleet_run_applies :
    Exists (fun runs : Natural → List (List (Prod Natural (List Natural))) =>
      And (fleet_valid two routed_tree runs) (Eq (fleet_misses two runs) (per_host_min two two routed_tree))) :=
  per_host_min_is_fleet_run two two routed_tree routed_tree_routed_below routed_tree_prefix_closed

/-! ## per_host_blocks_eq_pooled (RoutedByRoot.lean) -/

/-- Two prefix trees, each on its own host: requests `(0, [1, 2])`,
`(1, [3, 0])`, `(0, [1, 4])`, `(1, [3])`. Tree 1 (blocks 1, 2, 4) is on
host 0, tree 3 (blocks 3, 0) on host 1. -/
noncomputable def routed_forest : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk Natural.zero (List.cons one (List.cons two List.nil)))
    (List.cons (Prod.mk one (List.cons three (List.cons Natural.zero List.nil)))
      (List.cons (Prod.mk Natural.zero (List.cons one (List.cons four List.nil)))
        (List.cons (Prod.mk one (List.cons three List.nil)) List.nil)))

/-- The routing by first block: block 1 to host 0, every other block to host 1. -/
noncomputable def forest_route (b : Natural) : Natural :=
  cond (Natural.eqb b one) Natural.zero one

/-- A positive example of the first hypothesis of `per_host_blocks_eq_pooled`:
the chains of `routed_forest` are prefix-closed (1 and 3 follow the root,
0 follows 3, and 2 and 4 follow 1). -/
theorem routed_forest_prefix_closed : prefix_closed (List.map Prod.snd routed_forest) :=
  Exists.intro
    (fun b => cond (Natural.eqb b one) Parent.root
      (cond (Natural.eqb b three) Parent.root
        (cond (Natural.eqb b Natural.zero) (Parent.block three) (Parent.block one))))
    (And.intro (And.intro rfl (And.intro rfl True.intro))
      (And.intro (And.intro rfl (And.intro rfl True.intro))
        (And.intro (And.intro rfl (And.intro rfl True.intro))
          (And.intro (And.intro rfl True.intro) True.intro))))

/-- A positive example of the second hypothesis of `per_host_blocks_eq_pooled`:
every request of `routed_forest` is on `forest_route` of its first block. -/
theorem routed_forest_routed_by_root : routed_by_root forest_route routed_forest :=
  And.intro rfl (And.intro rfl (And.intro rfl (And.intro rfl True.intro)))

/-- `per_host_blocks_eq_pooled` at `routed_forest`: both miss 5 blocks. -/
theorem per_host_blocks_eq_pooled_applies :
    Eq (per_host_block_misses routed_forest) (pooled_block_misses (List.map Prod.snd routed_forest)) :=
  per_host_blocks_eq_pooled forest_route routed_forest routed_forest_prefix_closed routed_forest_routed_by_root

example : Eq (per_host_block_misses routed_forest) (Natural.succ four) := rfl
example : Eq (pooled_block_misses (List.map Prod.snd routed_forest)) (Natural.succ four) := rfl

/-- Where the hypothesis matters: `routed_tree` (one tree, `[1, 3]` on host 1,
the rest on host 0) is not routed by its first block, and its per-host
caches miss 5 blocks against 4 for the pool. -/
example : routed_by_root forest_route routed_tree → False :=
  fun h => Bool.false_ne_true (Eq.symm (congrArg (Natural.eqb one) (And.left (And.right h))))

/-! ## min_misses_mono, lru_misses_eq_far, prefix_lru_eq_flat

The optimal curve never rises, LRU's misses from stack distances, and
longest-prefix LRU as flat LRU (`MinMonotone.lean`, `LruPrefix.lean`). -/

/-- MIN on `tree_chains` flattened (`[1, 2, 1, 3, 1, 2, 4]`): 7 misses with no
block, 5 with 1, 4 with 2 (then every later capacity: the 4 distinct blocks). -/
example : Eq (min_misses Natural.zero (List.flatten tree_chains)) (Natural.succ (Natural.succ (Natural.succ four))) := rfl
example : Eq (min_misses one (List.flatten tree_chains)) (Natural.succ four) := rfl
example : Eq (min_misses two (List.flatten tree_chains)) four := rfl
example : Eq (min_misses three (List.flatten tree_chains)) four := rfl

/-- LRU of 2 blocks on openings `[1, 2, 1, 3, 2]` misses 4 times: 3 distinct
blocks, and the last request of 2 is far (1 and 3 came since its previous
request). With 3 blocks nothing is far. -/
example : Eq (lru_misses two openings) four := rfl
example : Eq (far_references two openings) one := rfl
example : Eq (far_references three openings) Natural.zero := rfl
example : Eq (lru_misses three openings) three := rfl

/-- pyverify's LRU prefix cache of 2 blocks on `tree_chains` misses 5 blocks
(2, then block 3, then blocks 2 and 4), as flat LRU of 2 blocks does on
`[1, 2, 1, 3, 1, 2, 4]`. -/
example : Eq (prefix_lru_misses two tree_chains) (Natural.succ four) := rfl
example : Eq (lru_misses two (List.flatten tree_chains)) (Natural.succ four) := rfl

/-- `prefix_lru_eq_flat` at `tree_chains` (prefix-closed) with 2 blocks. -/
theorem prefix_lru_eq_flat_applies :
    Eq (prefix_lru_misses two tree_chains) (lru_misses two (List.flatten tree_chains)) :=
  prefix_lru_eq_flat two tree_chains tree_chains_prefix_closed

/-- Without prefix closure the two differ: on `crossed_chains` (`[[1, 2], [3,
2]]`) with 2 blocks the prefix cache misses 4 blocks (block 2 after the miss
of 3 is fetched again), flat LRU on `[1, 2, 3, 2]` only 3. -/
example : Eq (prefix_lru_misses two crossed_chains) four := rfl
example : Eq (lru_misses two (List.flatten crossed_chains)) three := rfl

/-! ## per_host_prefix_lru_eq_flat -/

/-- `routed_tree` with 2 blocks per host: host 0 (`[[1, 2], [1, 2, 4]]`, flat
`[1, 2, 1, 2, 4]`) misses 3 blocks, host 1 (`[[1, 3]]`) 2: 5 in all, with
longest-prefix LRU and with flat LRU alike; host 2, with no requests, adds
nothing. -/
example : Eq (per_host_prefix_lru two two routed_tree) (Natural.succ four) := rfl
example : Eq (per_host_lru two two routed_tree) (Natural.succ four) := rfl
example : Eq (per_host_prefix_lru two three routed_tree) (Natural.succ four) := rfl

/-- `per_host_prefix_lru_eq_flat` at `routed_tree` with 2 blocks and 2 hosts:
its chains are `tree_chains`, prefix-closed (`tree_chains_prefix_closed`). -/
theorem per_host_prefix_lru_eq_flat_applies :
    Eq (per_host_prefix_lru two two routed_tree) (per_host_lru two two routed_tree) :=
  per_host_prefix_lru_eq_flat two two routed_tree tree_chains_prefix_closed

/-- Without prefix closure: `crossed_chains` on one host, 2 blocks: 4 against 3. -/
example : Eq (per_host_prefix_lru two one (List.map (Prod.mk Natural.zero) crossed_chains)) four := rfl
example : Eq (per_host_lru two one (List.map (Prod.mk Natural.zero) crossed_chains)) three := rfl

/-! ## Pooled memory: `pooled_min_le_per_host_min` -/

/-- `Natural.times` multiplies: 2 × 2 = 4, 2 × 1 = 2, 0 × 3 = 0, 3 × 0 = 0. -/
example : Eq (Natural.times two two) four := rfl
example : Eq (Natural.times two one) two := rfl
example : Eq (Natural.times Natural.zero three) Natural.zero := rfl
example : Eq (Natural.times three Natural.zero) Natural.zero := rfl

/-- `routed_tree` on 2 hosts: one pooled cache of 2 × 2 = 4 blocks misses
each of the 4 distinct blocks once, against 5 for two caches of 2 blocks;
one pooled cache of 2 × 1 = 2 blocks misses 4, against 6 for two caches of 1. -/
example : Eq (min_misses (Natural.times two two) (List.flatten (List.map Prod.snd routed_tree))) four := rfl
example : Eq (min_misses (Natural.times two one) (List.flatten (List.map Prod.snd routed_tree))) four := rfl

/-- `pooled_min_le_per_host_min` applied to `routed_tree` on 2 hosts of 2
blocks: 4 misses pooled, at most the per-host 5. -/
theorem pooled_min_le_per_host_min_applies :
    Natural.le (min_misses (Natural.times two two) (List.flatten (List.map Prod.snd routed_tree)))
      (per_host_min two two routed_tree) :=
  pooled_min_le_per_host_min two two routed_tree routed_tree_routed_below

/-- Equality is possible: each of two hosts of 1 block asks for its own block
twice (`[(0, [1]), (1, [2]), (0, [1]), (1, [2])]`); per-host MIN misses 1 + 1,
and so does one pooled cache of 2 blocks. -/
noncomputable def own_blocks : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk Natural.zero (List.cons one List.nil))
    (List.cons (Prod.mk one (List.cons two List.nil))
      (List.cons (Prod.mk Natural.zero (List.cons one List.nil))
        (List.cons (Prod.mk one (List.cons two List.nil)) List.nil)))

example : Eq (per_host_min one two own_blocks) two := rfl
example : Eq (min_misses (Natural.times two one) (List.flatten (List.map Prod.snd own_blocks))) two := rfl

/-- Where the hypothesis matters: a request routed to host 1 on a "fleet" of
one host is not counted by `per_host_min` (0), but the pooled cache of
1 × 1 block still serves it (1 miss). -/
example : Eq (per_host_min one one (List.cons (Prod.mk one (List.cons one List.nil)) List.nil)) Natural.zero := rfl
example : Eq (min_misses (Natural.times one one) (List.flatten (List.map Prod.snd
    (List.cons (Prod.mk one (List.cons one List.nil)) List.nil)))) one := rfl

/-! ## Forced admission: `forced_min_misses_le` -/

/-- Blocks `[3, 2, 3]`. -/
noncomputable def three_two_three : List Natural := List.cons three (List.cons two (List.cons three List.nil))

/-- With one block, bypass MIN keeps 3 and bypasses 2: 2 misses. Forced MIN
must take 2 in (evicting 3): 3 misses. The bypass optimum is strictly lower. -/
example : Eq (min_misses one three_two_three) two := rfl
example : Eq (forced_min_misses one three_two_three) three := rfl

/-- The run of an LRU cache of one block on `[3, 2, 3]`: it holds nothing,
then 3, then 2 (forced MIN's run is the same, `forced_min_run`). -/
noncomputable def lru_three_two_three : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk three List.nil)
    (List.cons (Prod.mk two (List.cons three List.nil)) (List.cons (Prod.mk three (List.cons two List.nil)) List.nil))

example : Eq (forced_min_run one List.nil three_two_three) lru_three_two_three := rfl
example : Eq (demand_misses lru_three_two_three) three := rfl

/-- A positive example of the first hypothesis of `forced_min_misses_le`: the
LRU run above admits every block (obtained from `forced_min_run_valid`). -/
theorem lru_three_two_three_forced_valid : forced_valid one lru_three_two_three :=
  Eq.subst (motive := fun run => forced_valid one run)
    (rfl : Eq (forced_min_run one List.nil three_two_three) lru_three_two_three)
    (forced_min_run_valid Natural.zero three_two_three).left

/-- A positive example of the second hypothesis of `forced_min_misses_le`: that
run serves `[3, 2, 3]`. -/
theorem lru_three_two_three_blocks : Eq (List.map Prod.fst lru_three_two_three) three_two_three := rfl

/-- `forced_min_misses_le` applied to that run. -/
theorem forced_min_misses_le_applies :
    Natural.le (forced_min_misses one three_two_three) (demand_misses lru_three_two_three) :=
  forced_min_misses_le one three_two_three lru_three_two_three lru_three_two_three_forced_valid
    lru_three_two_three_blocks

/-- Bypass MIN's run on `[3, 2, 3]` with one block is not a forced-admission
run: after the request for 2 it still holds 3 only. -/
theorem bypass_run_not_forced : forced_valid one (min_run one List.nil three_two_three) → False :=
  fun h => Bool.false_ne_true (h.right.right.right.left two rfl)

/-! ## No demand cache beats keeping every block: `DemandBlocks.lean` -/

/-- `prefix_misses_ge_distinct_blocks` applied to the LRU prefix run of 2
blocks on `[[1, 2], [1, 3]]`: 3 distinct blocks, 3 misses. -/
theorem prefix_misses_ge_distinct_blocks_applies :
    Natural.le
      (distinct_blocks
        (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil)))
      (prefix_misses lru_prefix_run) :=
  prefix_misses_ge_distinct_blocks two
    (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil))
    lru_prefix_run lru_prefix_run_valid lru_prefix_run_chains

/-- `fleet_misses_ge_distinct_host_blocks` applied to every host of
`routed_tree` running MIN with 2 blocks, cut into its requests. -/
theorem fleet_misses_ge_distinct_host_blocks_applies :
    Natural.le (distinct_host_blocks routed_tree)
      (fleet_misses two (fun host => min_prefix_run two List.nil (chains_of host routed_tree))) :=
  fleet_misses_ge_distinct_host_blocks two two routed_tree
    (fun host => min_prefix_run two List.nil (chains_of host routed_tree)) routed_tree_routed_below
    routed_tree_fleet_valid

/-! ## The per-host LRU curve: `LruCurve.lean` -/

/-- `per_host_lru_eq_far` applied to `routed_tree` on hosts 0 and 1, 1 block per host. -/
theorem per_host_lru_eq_far_applies :
    Eq (per_host_lru one two routed_tree)
      (Natural.plus (distinct_host_blocks routed_tree)
        (sum_below two (fun host => far_references one (List.flatten (chains_of host routed_tree))))) :=
  per_host_lru_eq_far one two routed_tree routed_tree_routed_below

/-! ## Forced admission on prefix chains, the running request pinned: `ForcedPinned.lean` -/

/-- The LRU prefix run of 2 blocks on `[[1, 2], [1, 3]]` pins its running
request: the second step of each request holds the block before it, and the
second request starts holding the first one's chain `[1, 2]`. A positive
example of the first hypothesis of `pinned_misses_ge_forced_min`. -/
theorem lru_prefix_run_pinned : pinned_valid two lru_prefix_run :=
  And.intro lru_prefix_run_valid
    (And.intro (And.intro (fun _ h => h) (And.intro (fun _ h => h) True.intro))
      (And.intro
        (And.intro (fun _ h => h) (And.intro (single_subset_cons one (List.cons two List.nil)) True.intro))
        True.intro))

/-- Both chains of `[[1, 2], [1, 3]]` have one to 2 blocks: a positive example
of the third hypothesis of `pinned_misses_ge_forced_min`. -/
theorem lru_prefix_chains_fit :
    chains_fit two
      (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil)) :=
  And.intro (And.intro (Exists.intro one rfl) (Natural.le_refl two))
    (And.intro (And.intro (Exists.intro one rfl) (Natural.le_refl two)) True.intro)

/-- `pinned_misses_ge_forced_min` applied to that run: forced MIN with 2
blocks misses 3 on the chains read twice, `[1, 2, 1, 2, 1, 3, 1, 3]`; the
pinned run misses 3. -/
theorem pinned_misses_ge_forced_min_applies :
    Natural.le
      (forced_min_misses two (List.flatten (List.map twice
        (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil)))))
      (prefix_misses lru_prefix_run) :=
  pinned_misses_ge_forced_min two
    (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil))
    lru_prefix_run lru_prefix_run_pinned lru_prefix_run_chains lru_prefix_chains_fit

example : Eq (forced_min_misses two (List.flatten (List.map twice
    (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons one (List.cons three List.nil)) List.nil)))))
    three := rfl

/-- Chains `[[3], [1, 2], [3]]`. -/
noncomputable def pinned_gap_chains : List (List Natural) :=
  List.cons (List.cons three List.nil)
    (List.cons (List.cons one (List.cons two List.nil)) (List.cons (List.cons three List.nil) List.nil))

/-- Why the theorem reads each chain twice: with 2 blocks, forced MIN on the
flat blocks `[3, 1, 2, 3]` keeps 3 and 2, dropping 1 inside the running
request, and misses 3 times; a pinned cache holds 1 and 2 after the second
request and misses 4 (`pyverify/optimal/forced.py`). On the chains read twice
forced MIN misses 4 too: the second reading keeps 1 from being dropped. -/
example : Eq (forced_min_misses two (List.flatten pinned_gap_chains)) three := rfl
example : Eq (forced_min_misses two (List.flatten (List.map twice pinned_gap_chains))) four := rfl
