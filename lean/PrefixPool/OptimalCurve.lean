prelude
import PrefixPool.LruPrefix
import PrefixPool.MinMonotone
/-!
# PrefixPool.OptimalCurve: the optimal miss curve lies on or below LRU's

`pyverify mrc` reports two curves of misses against capacity: LRU's, exact at
every capacity from stack distances (`lru_misses_eq_far`), and the optimal one,
computed in one pass by the OPT stack update of Mattson et al. 1970
(`pyverify/optimal/curve.py`). What is proved here about the optimal curve,
with its direction, for every request sequence and every capacity `cap`:

* `min_misses_le_lru`: Belady's MIN with `cap` blocks misses at most as many
  times as LRU with `cap` blocks (the optimal curve never lies above LRU's);
* with `min_misses_mono` (`MinMonotone.lean`): MIN's misses never rise with
  one more block.

That the one-pass curve *equals* `min_misses` at every capacity is not proved:
`Generated.lean` checks it on every input up to a stated size (the optimal
curve of every list of at most 3 chains of 1 or 2 distinct blocks over
blocks 0 and 1, pooled, and of at most 2 such chains routed to 2 hosts, per
host, at capacities 1 and 2, against `min_misses` and `per_host_min`).

The proof: LRU's own run (`lru_steps`, each request with what LRU holds just
before it) is a valid flat demand run of `cap` blocks with LRU's misses, and
no valid flat run misses fewer times than MIN (`min_misses_le`).
-/

/-! ## LRU's run -/

/-- The run of an LRU cache of `cap` blocks that holds `cache` (most recently
used first): for each request, `Prod.mk block held_before` (a device of the
proof, not part of the statement). -/
noncomputable def lru_steps (cap : Natural) (cache : List Natural) (requests : List Natural) :
    List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List Natural → List (Prod Natural (List Natural))) (fun _ => List.nil)
    (fun r _ run_rest cache => List.cons (Prod.mk r cache) (run_rest (lru_step cap cache r)))
    requests cache

/-! ## Lemmas -/

theorem lru_steps_blocks (cap : Natural) (requests : List Natural) : ∀ cache : List Natural,
    Eq (List.map Prod.fst (lru_steps cap cache requests)) requests :=
  List.rec
    (motive := fun requests => ∀ cache : List Natural,
      Eq (List.map Prod.fst (lru_steps cap cache requests)) requests)
    (fun _ => rfl)
    (fun r _ ih cache => congrArg (List.cons r) (ih (lru_step cap cache r)))
    requests

theorem lru_steps_misses (cap : Natural) (requests : List Natural) : ∀ cache : List Natural,
    Eq (demand_misses (lru_steps cap cache requests)) (lru_misses_walk cap cache requests) :=
  List.rec
    (motive := fun requests => ∀ cache : List Natural,
      Eq (demand_misses (lru_steps cap cache requests)) (lru_misses_walk cap cache requests))
    (fun _ => rfl)
    (fun r _ ih cache =>
      congrArg (Natural.plus (absent Natural.eqb r cache)) (ih (lru_step cap cache r)))
    requests

/-- The first `n` entries of a list are at most `n`. -/
theorem length_take_le (n : Natural) : ∀ xs : List Natural,
    Natural.le (List.length (List.take n xs)) n :=
  Natural.rec
    (motive := fun n => ∀ xs : List Natural, Natural.le (List.length (List.take n xs)) n)
    (fun _ => Natural.le_refl Natural.zero)
    (fun n' ih xs =>
      List.rec
        (motive := fun xs => Natural.le (List.length (List.take (Natural.succ n') xs)) (Natural.succ n'))
        (Natural.zero_le (Natural.succ n'))
        (fun _ rest _ => Natural.succ_le_succ (ih rest))
        xs)
    n

theorem cond_subset (b : Bool) {x y z : List Natural} (hx : subset x z) (hy : subset y z) :
    subset (cond b x y) z :=
  Bool.rec (motive := fun b => subset (cond b x y) z) hy hx b

/-- After one request LRU holds only what it held and the block requested. -/
theorem lru_step_subset (cap r : Natural) (cache : List Natural) :
    subset (lru_step cap cache r) (List.cons r cache) :=
  cond_subset (List.elem Natural.eqb r cache)
    (fun a h => Bool.or_mono_right (Natural.eqb a r) (elem_remove r a cache) h)
    (fun a h => elem_take a (List.cons r cache) cap h)

/-- On a hit LRU reorders what it holds. -/
theorem hit_subset (r : Natural) (cache : List Natural)
    (hr : Eq (List.elem Natural.eqb r cache) Bool.true) :
    subset (List.cons r (List.remove r cache)) cache :=
  fun a h =>
    Bool.by_cases (motive := fun b => Eq (Natural.eqb a r) b → Eq (List.elem Natural.eqb a cache) Bool.true)
      (Natural.eqb a r)
      (fun _ hf => elem_remove r a cache (Bool.or_right_of hf h))
      (fun _ ht =>
        Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z cache) Bool.true)
          (Eq.symm (Natural.eq_of_eqb a r ht)) hr)
      rfl

/-- LRU never holds more than `cap` distinct blocks. -/
theorem lru_step_fits (cap r : Natural) (cache : List Natural) (h : fits cap cache) :
    fits cap (lru_step cap cache r) :=
  Bool.by_cases
    (motive := fun b =>
      fits cap (cond b (List.cons r (List.remove r cache)) (List.take cap (List.cons r cache))))
    (List.elem Natural.eqb r cache)
    (fun _ =>
      Natural.le_trans (distinct_le_length (List.take cap (List.cons r cache)))
        (length_take_le cap (List.cons r cache)))
    (fun hr => Natural.le_trans (count_mono _ cache (hit_subset r cache hr)) h)

theorem lru_steps_valid_after (cap : Natural) (requests : List Natural) :
    ∀ cache allowed : List Natural, subset cache allowed → fits cap cache →
      flat_valid_after cap allowed (lru_steps cap cache requests) :=
  List.rec
    (motive := fun requests => ∀ cache allowed : List Natural, subset cache allowed → fits cap cache →
      flat_valid_after cap allowed (lru_steps cap cache requests))
    (fun _ _ _ _ => True.intro)
    (fun r _ ih cache _ hsub hfits =>
      And.intro hsub
        (And.intro hfits
          (ih (lru_step cap cache r) (List.cons r cache) (lru_step_subset cap r cache)
            (lru_step_fits cap r cache hfits))))
    requests

/-! ## Theorem -/

/-- The optimal curve never lies above LRU's: on every sequence of block
requests, Belady's MIN with `cap` blocks misses at most as many times as an
LRU cache of `cap` blocks, both starting empty. -/
theorem min_misses_le_lru (cap : Natural) (requests : List Natural) :
    Natural.le (min_misses cap requests) (lru_misses cap requests) :=
  Natural.le_of_eq_of_le rfl (lru_steps_misses cap requests List.nil)
    (min_misses_le cap requests (lru_steps cap List.nil requests)
      (lru_steps_valid_after cap requests List.nil List.nil (subset_refl List.nil) (Natural.zero_le cap))
      (lru_steps_blocks cap requests List.nil))
