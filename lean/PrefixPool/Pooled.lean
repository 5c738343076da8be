prelude
import PrefixPool.Distinct
/-!
# PrefixPool.Pooled: one pooled cache, and every demand cache

A request is the id of its prompt opening (a `Natural`). Each definition below
mirrors the Python function of the same name in `pyverify/sim/simulate.py`, where
a request is a chain of block ids: an opening is a chain of length one, so
Lean's `pooled_misses rs` is Python's `pooled_misses([[r] for r in rs])`.
-/

/-- The number of distinct openings in `requests`.
Python: `pyverify/sim/simulate.py`, `distinct_count`. -/
noncomputable def distinct_count (requests : List Natural) : Natural :=
  count_distinct Natural.eqb requests

/-- Misses of the pooled, uncapacitated demand cache that starts empty: walk
the requests in order; a request misses when its opening is not held, and
afterwards the opening is held.
Python: `pyverify/sim/simulate.py`, `pooled_misses`. -/
noncomputable def pooled_misses (requests : List Natural) : Natural :=
  cache_misses Natural.eqb List.nil requests

/-- Every element of `xs` occurs in `ys`. -/
def subset (xs ys : List Natural) : Prop :=
  ∀ a, Eq (List.elem Natural.eqb a xs) Bool.true → Eq (List.elem Natural.eqb a ys) Bool.true

/-- Misses of a run of a demand cache. A run has one step per request,
`Prod.mk opening held`, where `held` lists what the cache holds just before
that request (whatever the policy and capacity that produced it). The request
hits only if its opening is held; otherwise it misses.
Python: `pyverify/sim/simulate.py`, `demand_misses`. -/
noncomputable def demand_misses (run : List (Prod Natural (List Natural))) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero
    (fun step _ misses_rest => Natural.plus (absent Natural.eqb (Prod.fst step) (Prod.snd step)) misses_rest)
    run

/-- `demand_valid_after earlier run`: at every step, the cache holds only
openings in `earlier` or requested at an earlier step of `run`. -/
def demand_valid_after (earlier : List Natural) (run : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => List Natural → Prop) (fun _ => True)
    (fun step _ valid_rest earlier =>
      And (subset (Prod.snd step) earlier) (valid_rest (List.cons (Prod.fst step) earlier)))
    run earlier

/-- A run of a demand cache that starts empty: before each request the cache
holds only openings requested earlier in the run.
Python: `pyverify/sim/simulate.py`, `demand_valid`. -/
def demand_valid (run : List (Prod Natural (List Natural))) : Prop :=
  demand_valid_after List.nil run

/-! ## Theorems -/

/-- The pooled uncapacitated cache that starts empty misses exactly once per
distinct opening. -/
theorem pooled_misses_eq_distinct (requests : List Natural) :
    Eq (pooled_misses requests) (distinct_count requests) :=
  cache_misses_nil_eq_count Natural.eqb_lawful requests

/-- A valid run misses at least as often as the keep-everything cache that
starts from the same `earlier` openings. -/
theorem demand_misses_ge_cache_misses (run : List (Prod Natural (List Natural))) :
    ∀ earlier : List Natural, demand_valid_after earlier run →
      Natural.le (cache_misses Natural.eqb earlier (List.map Prod.fst run)) (demand_misses run) :=
  List.rec
    (motive := fun run => ∀ earlier : List Natural, demand_valid_after earlier run →
      Natural.le (cache_misses Natural.eqb earlier (List.map Prod.fst run)) (demand_misses run))
    (fun _ _ => Natural.le_refl Natural.zero)
    (fun step _ ih earlier h =>
      Natural.plus_le_plus
        (absent_le Natural.eqb (Prod.fst step) earlier (Prod.snd step) (h.left (Prod.fst step)))
        (ih (List.cons (Prod.fst step) earlier) h.right))
    run

/-- No demand cache that starts empty, of any policy and any capacity, misses
fewer times than there are distinct openings. -/
theorem demand_misses_ge_distinct (run : List (Prod Natural (List Natural))) (h : demand_valid run) :
    Natural.le (distinct_count (List.map Prod.fst run)) (demand_misses run) :=
  Natural.le_of_eq_of_le (cache_misses_nil_eq_count Natural.eqb_lawful (List.map Prod.fst run)) rfl
    (demand_misses_ge_cache_misses run List.nil h)
