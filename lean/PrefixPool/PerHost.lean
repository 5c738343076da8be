prelude
import PrefixPool.Pooled
/-!
# PrefixPool.PerHost: a separate cache on every host

A request is a pair `Prod.mk host opening` (both `Natural`). Each definition below
mirrors the Python function of the same name in `pyverify/sim/simulate.py`, where
requests are chains with a separate routing: Lean's `per_host_misses rs` is
Python's `per_host_misses([[o] for h, o in rs], [h for h, o in rs])`.
-/

/-- Misses of one uncapacitated demand cache per host, where `held host`
lists what `host`'s cache holds before the first request. A request misses
when its opening is not in its own host's cache; afterwards that cache holds
it. No other host's cache changes. -/
noncomputable def per_host_walk (held : Natural → List Natural) (requests : List (Prod Natural Natural)) : Natural :=
  List.rec (motive := fun _ => (Natural → List Natural) → Natural) (fun _ => Natural.zero)
    (fun req _ misses_rest held =>
      Natural.plus (absent Natural.eqb (Prod.snd req) (held (Prod.fst req)))
        (misses_rest (fun host =>
          cond (Natural.eqb host (Prod.fst req)) (List.cons (Prod.snd req) (held host)) (held host))))
    requests held

/-- Misses of separate uncapacitated caches, one per host, all starting empty.
Python: `pyverify/sim/simulate.py`, `per_host_misses`. -/
noncomputable def per_host_misses (requests : List (Prod Natural Natural)) : Natural :=
  per_host_walk (fun _ => List.nil) requests

/-- Boolean equality of `(host, opening)` pairs. -/
noncomputable def pair_eqb (p q : Prod Natural Natural) : Bool :=
  Bool.and (Natural.eqb (Prod.fst p) (Prod.fst q)) (Natural.eqb (Prod.snd p) (Prod.snd q))

/-- The number of distinct `(host, opening)` pairs.
Python: `pyverify/sim/simulate.py`, `distinct_pairs`. -/
noncomputable def distinct_pairs (requests : List (Prod Natural Natural)) : Natural :=
  count_distinct pair_eqb requests

/-- The openings `host` is asked for, in request order.
Python: `pyverify/sim/simulate.py`, `openings_of`. -/
noncomputable def openings_of (host : Natural) (requests : List (Prod Natural Natural)) : List Natural :=
  List.rec (motive := fun _ => List Natural) List.nil
    (fun req _ rest => cond (Natural.eqb host (Prod.fst req)) (List.cons (Prod.snd req) rest) rest)
    requests

/-- `sum_below n f = f 0 + f 1 + ... + f (n - 1)`. -/
noncomputable def sum_below (n : Natural) (f : Natural → Natural) : Natural :=
  Natural.rec (motive := fun _ => Natural) Natural.zero (fun k sum_k => Natural.plus sum_k (f k)) n

/-- Every request's host is below `fleet`: a fleet of `fleet` hosts numbered
`0, ..., fleet - 1`. -/
def hosts_below (fleet : Natural) (requests : List (Prod Natural Natural)) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun req _ rest => And (Eq (Natural.ltb (Prod.fst req) fleet) Bool.true) rest)
    requests

/-! ## Lemmas -/

theorem pair_eqb_lawful : Lawful pair_eqb :=
  And.intro
    (fun p => congr2 Bool.and (Natural.eqb_self (Prod.fst p)) (Natural.eqb_self (Prod.snd p)))
    (fun p q h => Prod.ext p q
      (Natural.eq_of_eqb _ _ (Bool.and_left _ _ h))
      (Natural.eq_of_eqb _ _ (Bool.and_right _ _ h)))

/-- The per-host caches hold exactly the pairs of a single cache of `(host, opening)` pairs. -/
theorem per_host_walk_eq (requests : List (Prod Natural Natural)) :
    ∀ (held : Natural → List Natural) (pairs : List (Prod Natural Natural)),
      (∀ p, Eq (List.elem Natural.eqb (Prod.snd p) (held (Prod.fst p))) (List.elem pair_eqb p pairs)) →
      Eq (per_host_walk held requests) (cache_misses pair_eqb pairs requests) :=
  List.rec
    (motive := fun requests => ∀ (held : Natural → List Natural) (pairs : List (Prod Natural Natural)),
      (∀ p, Eq (List.elem Natural.eqb (Prod.snd p) (held (Prod.fst p))) (List.elem pair_eqb p pairs)) →
      Eq (per_host_walk held requests) (cache_misses pair_eqb pairs requests))
    (fun _ _ _ => rfl)
    (fun req _ ih held pairs inv =>
      congr2 Natural.plus
        (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero)) (inv req))
        (ih _ (List.cons req pairs) (fun p =>
          List.elem_cond_cons Natural.eqb (Natural.eqb (Prod.fst p) (Prod.fst req)) (Prod.snd p)
            (Prod.snd req) (held (Prod.fst p)) (List.elem pair_eqb p pairs) (inv p))))
    requests

theorem elem_openings_of (requests : List (Prod Natural Natural)) :
    ∀ p, Eq (List.elem Natural.eqb (Prod.snd p) (openings_of (Prod.fst p) requests))
      (List.elem pair_eqb p requests) :=
  List.rec
    (motive := fun requests => ∀ p, Eq (List.elem Natural.eqb (Prod.snd p) (openings_of (Prod.fst p) requests))
      (List.elem pair_eqb p requests))
    (fun _ => rfl)
    (fun q rest ih p =>
      List.elem_cond_cons Natural.eqb (Natural.eqb (Prod.fst p) (Prod.fst q)) (Prod.snd p) (Prod.snd q)
        (openings_of (Prod.fst p) rest) (List.elem pair_eqb p rest) (ih p))
    requests

/-- One more request changes only its own host's distinct count, by one exactly when its pair is new. -/
theorem count_openings_cons (host : Natural) (req : Prod Natural Natural) (rest : List (Prod Natural Natural)) :
    Eq (distinct_count (openings_of host (List.cons req rest)))
      (Natural.plus (distinct_count (openings_of host rest))
        (cond (Natural.eqb host (Prod.fst req)) (absent pair_eqb req rest) Natural.zero)) :=
  Bool.by_cases
    (motive := fun b =>
      Eq (distinct_count (cond b (List.cons (Prod.snd req) (openings_of host rest)) (openings_of host rest)))
        (Natural.plus (distinct_count (openings_of host rest)) (cond b (absent pair_eqb req rest) Natural.zero)))
    (Natural.eqb host (Prod.fst req))
    (fun _ => rfl)
    (fun h => Eq.trans
      (Natural.plus_comm (absent Natural.eqb (Prod.snd req) (openings_of host rest))
        (distinct_count (openings_of host rest)))
      (congrArg (Natural.plus (distinct_count (openings_of host rest)))
        (Eq.subst
          (motive := fun z => Eq (absent Natural.eqb (Prod.snd req) (openings_of z rest)) (absent pair_eqb req rest))
          (Eq.symm (Natural.eq_of_eqb host (Prod.fst req) h))
          (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero)) (elem_openings_of rest req)))))

theorem sum_below_congr (f g : Natural → Natural) (h : ∀ k, Eq (f k) (g k)) (n : Natural) :
    Eq (sum_below n f) (sum_below n g) :=
  Natural.rec (motive := fun n => Eq (sum_below n f) (sum_below n g))
    rfl (fun k ih => congr2 Natural.plus ih (h k)) n

theorem sum_below_plus (f g : Natural → Natural) (n : Natural) :
    Eq (sum_below n (fun k => Natural.plus (f k) (g k))) (Natural.plus (sum_below n f) (sum_below n g)) :=
  Natural.rec
    (motive := fun n =>
      Eq (sum_below n (fun k => Natural.plus (f k) (g k))) (Natural.plus (sum_below n f) (sum_below n g)))
    rfl
    (fun k ih => Eq.trans (congrArg (fun s => Natural.plus s (Natural.plus (f k) (g k))) ih)
      (Natural.plus_four (sum_below k f) (sum_below k g) (f k) (g k)))
    n

theorem sum_below_zero (n : Natural) : Eq (sum_below n (fun _ => Natural.zero)) Natural.zero :=
  Natural.rec (motive := fun n => Eq (sum_below n (fun _ => Natural.zero)) Natural.zero) rfl (fun _ ih => ih) n

theorem leb_step (c : Natural) (h : Natural) : ∀ k : Natural,
    Eq (Natural.plus (cond (Natural.leb (Natural.succ h) k) c Natural.zero) (cond (Natural.eqb k h) c Natural.zero))
      (cond (Natural.leb h k) c Natural.zero) :=
  Natural.rec
    (motive := fun h => ∀ k : Natural,
      Eq (Natural.plus (cond (Natural.leb (Natural.succ h) k) c Natural.zero) (cond (Natural.eqb k h) c Natural.zero))
        (cond (Natural.leb h k) c Natural.zero))
    (fun k => Natural.rec
      (motive := fun k =>
        Eq (Natural.plus (cond (Natural.leb (Natural.succ Natural.zero) k) c Natural.zero) (cond (Natural.eqb k Natural.zero) c Natural.zero))
          (cond (Natural.leb Natural.zero k) c Natural.zero))
      (Natural.zero_plus c) (fun _ _ => rfl) k)
    (fun h' ih k => Natural.rec
      (motive := fun k =>
        Eq (Natural.plus (cond (Natural.leb (Natural.succ (Natural.succ h')) k) c Natural.zero)
            (cond (Natural.eqb k (Natural.succ h')) c Natural.zero))
          (cond (Natural.leb (Natural.succ h') k) c Natural.zero))
      rfl (fun k' _ => ih k') k)
    h

/-- Summing "`c` at host `h`, else zero" over hosts below `n` gives `c` when `h < n`. -/
theorem sum_below_indicator (h c n : Natural) :
    Eq (sum_below n (fun k => cond (Natural.eqb k h) c Natural.zero)) (cond (Natural.ltb h n) c Natural.zero) :=
  Natural.rec
    (motive := fun n =>
      Eq (sum_below n (fun k => cond (Natural.eqb k h) c Natural.zero)) (cond (Natural.ltb h n) c Natural.zero))
    rfl
    (fun k ih => Eq.trans (congrArg (fun s => Natural.plus s (cond (Natural.eqb k h) c Natural.zero)) ih)
      (leb_step c h k))
    n

theorem distinct_pairs_eq_sum (fleet : Natural) (requests : List (Prod Natural Natural)) :
    hosts_below fleet requests →
      Eq (distinct_pairs requests)
        (sum_below fleet (fun host => distinct_count (openings_of host requests))) :=
  List.rec
    (motive := fun requests => hosts_below fleet requests →
      Eq (distinct_pairs requests)
        (sum_below fleet (fun host => distinct_count (openings_of host requests))))
    (fun _ => Eq.symm (sum_below_zero fleet))
    (fun req rest ih h => Eq.symm
      (Eq.trans
        (sum_below_congr _ _ (fun host => count_openings_cons host req rest) fleet)
        (Eq.trans
          (sum_below_plus (fun host => distinct_count (openings_of host rest))
            (fun host => cond (Natural.eqb host (Prod.fst req)) (absent pair_eqb req rest) Natural.zero) fleet)
          (Eq.trans
            (congrArg (Natural.plus (sum_below fleet (fun host => distinct_count (openings_of host rest))))
              (Eq.trans (sum_below_indicator (Prod.fst req) (absent pair_eqb req rest) fleet)
                (congrArg (fun b => cond b (absent pair_eqb req rest) Natural.zero) h.left)))
            (Eq.trans (Natural.plus_comm _ _)
              (congrArg (Natural.plus (absent pair_eqb req rest)) (Eq.symm (ih h.right))))))))
    requests

/-- The pooled cache's held openings include every opening any host's cache holds. -/
theorem pair_cache_ge_cache (requests : List (Prod Natural Natural)) :
    ∀ (pairs : List (Prod Natural Natural)) (held : List Natural),
      (∀ p, Eq (List.elem pair_eqb p pairs) Bool.true → Eq (List.elem Natural.eqb (Prod.snd p) held) Bool.true) →
      Natural.le (cache_misses Natural.eqb held (List.map Prod.snd requests)) (cache_misses pair_eqb pairs requests) :=
  List.rec
    (motive := fun requests => ∀ (pairs : List (Prod Natural Natural)) (held : List Natural),
      (∀ p, Eq (List.elem pair_eqb p pairs) Bool.true → Eq (List.elem Natural.eqb (Prod.snd p) held) Bool.true) →
      Natural.le (cache_misses Natural.eqb held (List.map Prod.snd requests)) (cache_misses pair_eqb pairs requests))
    (fun _ _ _ => Natural.le_refl Natural.zero)
    (fun req _ ih pairs held inv =>
      Natural.plus_le_plus
        (absent_le_of_cond (List.elem Natural.eqb (Prod.snd req) held) (List.elem pair_eqb req pairs) (inv req))
        (ih (List.cons req pairs) (List.cons (Prod.snd req) held) (fun p =>
          Bool.or_and_imp (Natural.eqb (Prod.fst p) (Prod.fst req)) (Natural.eqb (Prod.snd p) (Prod.snd req))
            (List.elem pair_eqb p pairs) (List.elem Natural.eqb (Prod.snd p) held) (inv p))))
    requests

/-! ## Theorems -/

/-- Separate uncapacitated caches, one per host, miss once per distinct
`(host, opening)` pair. -/
theorem per_host_misses_eq_distinct_pairs (requests : List (Prod Natural Natural)) :
    Eq (per_host_misses requests) (distinct_pairs requests) :=
  Eq.trans (per_host_walk_eq requests (fun _ => List.nil) List.nil (fun _ => rfl))
    (cache_misses_nil_eq_count pair_eqb_lawful requests)

/-- On a fleet of `fleet` hosts, separate uncapacitated caches miss the sum,
over hosts, of the number of distinct openings each host sees. -/
theorem per_host_misses_eq_sum (fleet : Natural) (requests : List (Prod Natural Natural))
    (h : hosts_below fleet requests) :
    Eq (per_host_misses requests)
      (sum_below fleet (fun host => distinct_count (openings_of host requests))) :=
  Eq.trans (per_host_misses_eq_distinct_pairs requests) (distinct_pairs_eq_sum fleet requests h)

/-- Separate per-host caches never miss less than one pooled cache on the same
openings. -/
theorem per_host_ge_pooled (requests : List (Prod Natural Natural)) :
    Natural.le (pooled_misses (List.map Prod.snd requests)) (per_host_misses requests) :=
  Natural.le_of_eq_of_le rfl
    (Eq.symm (per_host_walk_eq requests (fun _ => List.nil) List.nil (fun _ => rfl)))
    (pair_cache_ge_cache requests List.nil List.nil (fun _ h => h))
