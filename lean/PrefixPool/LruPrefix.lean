prelude
import PrefixPool.BeladyLemmas
/-!
# PrefixPool.LruPrefix: what `pyverify mrc` and the trusted `lru` recount rest on

Two facts, both argued on paper in the docstring of `pyverify/sim/mrc.py`
(after Mattson, Gecsei, Slutz and Traiger 1970):

* **Misses from stack distances** (`lru_misses_eq_far`). On a flat sequence of
  block requests, an LRU cache of `cap` blocks that starts empty misses once
  for every distinct block (its first request) plus once for every later
  request whose block saw at least `cap` distinct blocks requested since its
  previous request. This is `misses(C) = cold + #{d >= C}`, the formula
  `pyverify mrc` evaluates at every capacity from one histogram. The
  per-request fact is `lru_hit_iff_stack_distance` (`StackDistance.lean`);
  here it is summed over the requests.
-/

/-! ## Definitions -/

/-- Misses of an LRU cache of `cap` blocks that holds `cache` (most recent
first) and serves `requests` one block at a time: a request misses when its
block is not held; then `lru_step` (`Lru.lean`) updates the cache. -/
noncomputable def lru_misses_walk (cap : Natural) (cache requests : List Natural) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun r _ misses_rest cache =>
      Natural.plus (absent Natural.eqb r cache) (misses_rest (lru_step cap cache r)))
    requests cache

/-- Misses of an LRU cache of `cap` blocks that starts empty, on a flat
sequence of block requests.
Python: `pyverify/lean/mirror.py`, `lru_misses`; the trusted checker's
`pyverify/trusted/recount.py`, `lru_misses` (one cache per host). -/
noncomputable def lru_misses (cap : Natural) (requests : List Natural) : Natural :=
  lru_misses_walk cap List.nil requests

/-- One if a request for `r` after the requests `earlier` (oldest first) is a
*far* reference for `cap` blocks: `r` was requested before, and at least `cap`
distinct blocks were requested since its last request (its stack distance is
`cap` or more); zero otherwise. -/
noncomputable def far_reference (cap r : Natural) (earlier : List Natural) : Natural :=
  cond (List.elem Natural.eqb r earlier)
    (cond (Natural.ltb (distinct_count (since r earlier)) cap) Natural.zero (Natural.succ Natural.zero))
    Natural.zero

/-- The far references among `requests`, served after `earlier` (oldest first). -/
noncomputable def far_walk (cap : Natural) (earlier requests : List Natural) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun r _ far_rest earlier =>
      Natural.plus (far_reference cap r earlier) (far_rest (List.append earlier (List.cons r List.nil))))
    requests earlier

/-- The number of requests of `requests` that repeat a block requested
before, with at least `cap` distinct blocks requested since that block's
previous request.
Python: `pyverify/lean/mirror.py`, `far_references`; `pyverify mrc` counts
them as `#{d >= C}` (`pyverify/sim/mrc.py`, `MissRatioCurve.misses`). -/
noncomputable def far_references (cap : Natural) (requests : List Natural) : Natural :=
  far_walk cap List.nil requests

/-! ## Lemmas: misses from stack distances -/

theorem lru_walk_append (cap : Natural) (xs : List Natural) : ∀ cache ys : List Natural,
    Eq (lru_walk cap cache (List.append xs ys)) (lru_walk cap (lru_walk cap cache xs) ys) :=
  List.rec
    (motive := fun xs => ∀ cache ys : List Natural,
      Eq (lru_walk cap cache (List.append xs ys)) (lru_walk cap (lru_walk cap cache xs) ys))
    (fun _ _ => rfl)
    (fun x _ ih cache ys => ih (lru_step cap cache x) ys)
    xs

/-- A miss (`and e l` false) is a cold one (`e` false) or a far one (`e` true, `l` false). -/
theorem miss_split (e l : Bool) :
    Eq (cond (Bool.and e l) Natural.zero (Natural.succ Natural.zero))
      (Natural.plus (cond e Natural.zero (Natural.succ Natural.zero))
        (cond e (cond l Natural.zero (Natural.succ Natural.zero)) Natural.zero)) :=
  Bool.rec
    (motive := fun e =>
      Eq (cond (Bool.and e l) Natural.zero (Natural.succ Natural.zero))
        (Natural.plus (cond e Natural.zero (Natural.succ Natural.zero))
          (cond e (cond l Natural.zero (Natural.succ Natural.zero)) Natural.zero)))
    rfl
    (Bool.rec
      (motive := fun l =>
        Eq (cond l Natural.zero (Natural.succ Natural.zero))
          (Natural.plus Natural.zero (cond l Natural.zero (Natural.succ Natural.zero))))
      rfl rfl l)
    e

/-- One request: LRU misses it exactly when the keep-everything cache does
(a cold miss) or it is a far reference. -/
theorem lru_absent_split (cap r : Natural) (earlier held : List Natural)
    (hheld : Eq (List.elem Natural.eqb r held) (List.elem Natural.eqb r earlier)) :
    Eq (absent Natural.eqb r (lru_cache cap earlier))
      (Natural.plus (absent Natural.eqb r held) (far_reference cap r earlier)) :=
  Eq.trans (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
      (lru_hit_iff_stack_distance cap r earlier))
    (Eq.trans (miss_split (List.elem Natural.eqb r earlier) (Natural.ltb (distinct_count (since r earlier)) cap))
      (congrArg (fun b => Natural.plus (cond b Natural.zero (Natural.succ Natural.zero)) (far_reference cap r earlier))
        (Eq.symm hheld)))

theorem Bool.or_false_comm (a b : Bool) : Eq (Bool.or a (Bool.or b Bool.false)) (Bool.or b a) :=
  Bool.rec (motive := fun b => Eq (Bool.or a (Bool.or b Bool.false)) (Bool.or b a))
    (Bool.or_false_r a) (Bool.or_true a) b

/-- After `earlier`, LRU's misses on `rest` are the keep-everything cache's
misses (from a cache `held` with the blocks of `earlier`) plus the far
references. -/
theorem lru_misses_walk_split (cap : Natural) (rest : List Natural) : ∀ earlier held : List Natural,
    (∀ a : Natural, Eq (List.elem Natural.eqb a held) (List.elem Natural.eqb a earlier)) →
    Eq (lru_misses_walk cap (lru_cache cap earlier) rest)
      (Natural.plus (cache_misses Natural.eqb held rest) (far_walk cap earlier rest)) :=
  List.rec
    (motive := fun rest => ∀ earlier held : List Natural,
      (∀ a : Natural, Eq (List.elem Natural.eqb a held) (List.elem Natural.eqb a earlier)) →
      Eq (lru_misses_walk cap (lru_cache cap earlier) rest)
        (Natural.plus (cache_misses Natural.eqb held rest) (far_walk cap earlier rest)))
    (fun _ _ _ => rfl)
    (fun r rest' ih earlier held h =>
      let next : List Natural := List.append earlier (List.cons r List.nil)
      let hnext : Eq (lru_step cap (lru_cache cap earlier) r) (lru_cache cap next) :=
        Eq.symm (lru_walk_append cap earlier List.nil (List.cons r List.nil))
      let hheld : ∀ a : Natural, Eq (List.elem Natural.eqb a (List.cons r held)) (List.elem Natural.eqb a next) :=
        fun a => Eq.trans (congrArg (Bool.or (Natural.eqb a r)) (h a))
          (Eq.symm (Eq.trans (List.elem_append Natural.eqb a earlier (List.cons r List.nil))
            (Bool.or_false_comm (List.elem Natural.eqb a earlier) (Natural.eqb a r))))
      Eq.trans
        (congr2 Natural.plus (lru_absent_split cap r earlier held (h r))
          (Eq.trans (congrArg (fun c => lru_misses_walk cap c rest') hnext)
            (ih next (List.cons r held) hheld)))
        (Eq.symm (Natural.plus_four _ _ _ _)))
    rest

/-! ## Theorems -/

/-- On every sequence of block requests, an LRU cache of `cap` blocks that
starts empty misses exactly as many times as there are distinct blocks plus
the far references: the requests that repeat a block after at least `cap`
distinct blocks were requested since its previous request. -/
theorem lru_misses_eq_far (cap : Natural) (requests : List Natural) :
    Eq (lru_misses cap requests) (Natural.plus (distinct_count requests) (far_references cap requests)) :=
  Eq.trans (lru_misses_walk_split cap requests List.nil List.nil (fun _ => rfl))
    (congrArg (fun n => Natural.plus n (far_references cap requests))
      (cache_misses_nil_eq_count Natural.eqb_lawful requests))
