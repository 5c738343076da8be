prelude
import PrefixPool.PerHost
/-!
# PrefixPool.Examples: the definitions compute what they should

Small instances, evaluated by the kernel (`rfl`), so a reviewer can see that
the definitions count what their names say, not something vacuous; and one
run that `demand_valid` rejects. The Python side (`pyverify/simulate.py`)
gives the same numbers on the same lists.
-/

noncomputable def one : Natural := Natural.succ Natural.zero
noncomputable def two : Natural := Natural.succ one
noncomputable def three : Natural := Natural.succ two

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
example : hosts_below two routed :=
  And.intro rfl (And.intro rfl (And.intro rfl (And.intro rfl True.intro)))

/-- A capacity-one LRU cache on openings `[1, 2, 1]`: it holds nothing, then
`[1]`, then `[2]`, and misses all three times (two distinct openings). -/
noncomputable def lru_run : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk one List.nil)
    (List.cons (Prod.mk two (List.cons one List.nil))
      (List.cons (Prod.mk one (List.cons two List.nil)) List.nil))

example : Eq (demand_misses lru_run) three := rfl
example : Eq (distinct_count (List.map Prod.fst lru_run)) two := rfl

/-- A run that claims a hit on its very first request is not a demand-cache run. -/
example : demand_valid (List.cons (Prod.mk one (List.cons one List.nil)) List.nil) → False :=
  fun h => Bool.false_ne_true (h.left one rfl)
