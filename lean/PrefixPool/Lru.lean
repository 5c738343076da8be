prelude
import PrefixPool.PerHostBlocks
/-!
# PrefixPool.Lru: LRU's inclusion property

Requests are block ids (`Natural`), served one at a time (a flat sequence, as
`pyverify mrc` reads a trace). An LRU cache of `cap` blocks is a list, most
recently used first: a hit moves the block to the front; a miss puts it in
front and, if that makes more than `cap`, drops the last (least recently used).

The move-to-front stack is the same list without a capacity: every block ever
requested, most recent first (Mattson, Gecsei, Slutz and Traiger, "Evaluation
techniques for storage hierarchies", IBM Systems Journal 9(2), 1970).

The theorems: the LRU cache of `cap` blocks is exactly the first `cap`
entries of the stack (`lru_cache_eq_take`); so what LRU holds with `cap`
blocks it also holds with `cap + 1` (`lru_cache_subset_succ`), and its hits
never drop as the capacity grows (`lru_hits_mono`).
-/

/-! ## Definitions -/

/-- `xs` without any occurrence of `x`. -/
noncomputable def List.remove (x : Natural) (xs : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural) List.nil
    (fun y _ rest => cond (Natural.eqb x y) rest (List.cons y rest)) xs

/-- The first `n` elements of `xs` (all of them if there are fewer); Python's `xs[:n]`. -/
noncomputable def List.take (n : Natural) (xs : List Natural) : List Natural :=
  Natural.rec (motive := fun _ => List Natural → List Natural) (fun _ => List.nil)
    (fun _ take_n xs => List.rec (motive := fun _ => List Natural) List.nil (fun x rest _ => List.cons x (take_n rest)) xs)
    n xs

/-- Move-to-front: `r` on top of the stack, removed from below. -/
noncomputable def mtf (stack : List Natural) (r : Natural) : List Natural :=
  List.cons r (List.remove r stack)

/-- One request to an LRU cache of `cap` blocks that holds `cache`, most
recently used first. -/
noncomputable def lru_step (cap : Natural) (cache : List Natural) (r : Natural) : List Natural :=
  cond (List.elem Natural.eqb r cache) (List.cons r (List.remove r cache)) (List.take cap (List.cons r cache))

noncomputable def lru_walk (cap : Natural) (cache requests : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural → List Natural) (fun cache => cache)
    (fun r _ walk_rest cache => walk_rest (lru_step cap cache r)) requests cache

noncomputable def mtf_walk (stack requests : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural → List Natural) (fun stack => stack)
    (fun r _ walk_rest stack => walk_rest (mtf stack r)) requests stack

/-- What an LRU cache of `cap` blocks that starts empty holds after `requests`,
most recently used first.
Python: `pyverify/lean/mirror.py`, `lru_cache`. -/
noncomputable def lru_cache (cap : Natural) (requests : List Natural) : List Natural :=
  lru_walk cap List.nil requests

/-- The move-to-front stack after `requests`: every block requested, most
recent first.
Python: `pyverify/lean/mirror.py`, `mtf_stack`. -/
noncomputable def mtf_stack (requests : List Natural) : List Natural :=
  mtf_walk List.nil requests

noncomputable def lru_hits_walk (cap : Natural) (cache requests : List Natural) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun r _ hits_rest cache =>
      Natural.plus (cond (List.elem Natural.eqb r cache) (Natural.succ Natural.zero) Natural.zero)
        (hits_rest (lru_step cap cache r)))
    requests cache

/-- Hits of an LRU cache of `cap` blocks that starts empty: a request hits when
its block is held.
Python: `pyverify/sim/simulate.py`, `simulate([[r] for r in requests], None,
"pooled", capacity=cap).hits` (for `cap ≥ 1`). -/
noncomputable def lru_hits (cap : Natural) (requests : List Natural) : Natural :=
  lru_hits_walk cap List.nil requests

/-- No block occurs twice. -/
def nodup (xs : List Natural) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun x rest nodup_rest => And (Eq (List.elem Natural.eqb x rest) Bool.false) nodup_rest) xs

/-! ## Lemmas -/

theorem Bool.or_eq_false_left {a b : Bool} (h : Eq (Bool.or a b) Bool.false) : Eq a Bool.false :=
  Bool.rec (motive := fun a => Eq (Bool.or a b) Bool.false → Eq a Bool.false) (fun _ => rfl) (fun h => h) a h

theorem Bool.or_eq_false_right {a b : Bool} (h : Eq (Bool.or a b) Bool.false) : Eq b Bool.false :=
  Bool.rec (motive := fun a => Eq (Bool.or a b) Bool.false → Eq b Bool.false)
    (fun h => h) (fun h => False.elim (Bool.false_ne_true (Eq.symm h))) a h

theorem List.take_nil (n : Natural) : Eq (List.take n List.nil) List.nil :=
  Natural.rec (motive := fun n => Eq (List.take n List.nil) List.nil) rfl (fun _ _ => rfl) n

theorem remove_absent (r : Natural) (xs : List Natural) :
    Eq (List.elem Natural.eqb r xs) Bool.false → Eq (List.remove r xs) xs :=
  List.rec (motive := fun xs => Eq (List.elem Natural.eqb r xs) Bool.false → Eq (List.remove r xs) xs)
    (fun _ => rfl)
    (fun y xs' ih h =>
      Eq.trans
        (congrArg (fun b => cond b (List.remove r xs') (List.cons y (List.remove r xs'))) (Bool.or_eq_false_left h))
        (congrArg (List.cons y) (ih (Bool.or_eq_false_right h))))
    xs

theorem elem_remove (r x : Natural) (xs : List Natural) :
    Eq (List.elem Natural.eqb x (List.remove r xs)) Bool.true → Eq (List.elem Natural.eqb x xs) Bool.true :=
  List.rec
    (motive := fun xs =>
      Eq (List.elem Natural.eqb x (List.remove r xs)) Bool.true → Eq (List.elem Natural.eqb x xs) Bool.true)
    (fun h => h)
    (fun y xs' ih h =>
      Bool.by_cases
        (motive := fun b =>
          Eq (List.elem Natural.eqb x (cond b (List.remove r xs') (List.cons y (List.remove r xs')))) Bool.true →
            Eq (List.elem Natural.eqb x (List.cons y xs')) Bool.true)
        (Natural.eqb r y)
        (fun _ h => Bool.or_mono_right (Natural.eqb x y) ih h)
        (fun _ h => Bool.or_true_right (Natural.eqb x y) (ih h))
        h)
    xs

theorem elem_remove_self (r : Natural) (xs : List Natural) :
    Eq (List.elem Natural.eqb r (List.remove r xs)) Bool.false :=
  List.rec (motive := fun xs => Eq (List.elem Natural.eqb r (List.remove r xs)) Bool.false)
    rfl
    (fun y xs' ih =>
      Bool.by_cases
        (motive := fun b =>
          Eq (List.elem Natural.eqb r (cond b (List.remove r xs') (List.cons y (List.remove r xs')))) Bool.false)
        (Natural.eqb r y)
        (fun hy => Bool.or_false hy ih)
        (fun _ => ih))
    xs

/-- If `x` is not in `xs`, it is not in `xs` with something removed. -/
theorem not_elem_remove (r x : Natural) (xs : List Natural) (h : Eq (List.elem Natural.eqb x xs) Bool.false) :
    Eq (List.elem Natural.eqb x (List.remove r xs)) Bool.false :=
  Bool.by_cases (motive := fun c => Eq c Bool.false) (List.elem Natural.eqb x (List.remove r xs))
    (fun _ => rfl)
    (fun e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm h) (elem_remove r x xs e))))

theorem nodup_remove (r : Natural) (xs : List Natural) : nodup xs → nodup (List.remove r xs) :=
  List.rec (motive := fun xs => nodup xs → nodup (List.remove r xs))
    (fun _ => True.intro)
    (fun y xs' ih h =>
      Bool.by_cases
        (motive := fun b => nodup (cond b (List.remove r xs') (List.cons y (List.remove r xs'))))
        (Natural.eqb r y)
        (fun _ => And.intro (not_elem_remove r y xs' h.left) (ih h.right))
        (fun _ => ih h.right))
    xs

theorem nodup_mtf (r : Natural) (stack : List Natural) (h : nodup stack) : nodup (mtf stack r) :=
  And.intro (elem_remove_self r stack) (nodup_remove r stack h)

theorem elem_take (x : Natural) (xs : List Natural) : ∀ n : Natural,
    Eq (List.elem Natural.eqb x (List.take n xs)) Bool.true → Eq (List.elem Natural.eqb x xs) Bool.true :=
  List.rec
    (motive := fun xs => ∀ n : Natural,
      Eq (List.elem Natural.eqb x (List.take n xs)) Bool.true → Eq (List.elem Natural.eqb x xs) Bool.true)
    (fun n h => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm (congrArg (List.elem Natural.eqb x) (List.take_nil n))) h)))
    (fun y xs' ih n =>
      Natural.rec
        (motive := fun n =>
          Eq (List.elem Natural.eqb x (List.take n (List.cons y xs'))) Bool.true →
            Eq (List.elem Natural.eqb x (List.cons y xs')) Bool.true)
        (fun h => False.elim (Bool.false_ne_true h))
        (fun n' _ h => Bool.or_mono_right (Natural.eqb x y) (ih n') h)
        n)
    xs

theorem take_absent (x : Natural) (xs : List Natural) (n : Natural) (h : Eq (List.elem Natural.eqb x xs) Bool.false) :
    Eq (List.elem Natural.eqb x (List.take n xs)) Bool.false :=
  Bool.by_cases (motive := fun c => Eq c Bool.false) (List.elem Natural.eqb x (List.take n xs))
    (fun _ => rfl)
    (fun e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm h) (elem_take x xs n e))))

/-- Removing a block that is not among the first `n` leaves the first `n` as they are. -/
theorem take_remove_absent (r : Natural) (xs : List Natural) : ∀ n : Natural,
    Eq (List.elem Natural.eqb r (List.take n xs)) Bool.false →
      Eq (List.take n (List.remove r xs)) (List.take n xs) :=
  List.rec
    (motive := fun xs => ∀ n : Natural,
      Eq (List.elem Natural.eqb r (List.take n xs)) Bool.false →
        Eq (List.take n (List.remove r xs)) (List.take n xs))
    (fun _ _ => rfl)
    (fun y xs' ih n =>
      Natural.rec
        (motive := fun n =>
          Eq (List.elem Natural.eqb r (List.take n (List.cons y xs'))) Bool.false →
            Eq (List.take n (List.remove r (List.cons y xs'))) (List.take n (List.cons y xs')))
        (fun _ => rfl)
        (fun n' _ h =>
          Eq.trans
            (congrArg (fun b => List.take (Natural.succ n') (cond b (List.remove r xs') (List.cons y (List.remove r xs'))))
              (Bool.or_eq_false_left h))
            (congrArg (List.cons y) (ih n' (Bool.or_eq_false_right h))))
        n)
    xs

/-- Not among the first `n + 1`, so not among the first `n`. -/
theorem take_succ_false (r : Natural) (xs : List Natural) : ∀ n : Natural,
    Eq (List.elem Natural.eqb r (List.take (Natural.succ n) xs)) Bool.false →
      Eq (List.elem Natural.eqb r (List.take n xs)) Bool.false :=
  List.rec
    (motive := fun xs => ∀ n : Natural,
      Eq (List.elem Natural.eqb r (List.take (Natural.succ n) xs)) Bool.false →
        Eq (List.elem Natural.eqb r (List.take n xs)) Bool.false)
    (fun n _ => congrArg (List.elem Natural.eqb r) (List.take_nil n))
    (fun y xs' ih n =>
      Natural.rec
        (motive := fun n =>
          Eq (List.elem Natural.eqb r (List.take (Natural.succ n) (List.cons y xs'))) Bool.false →
            Eq (List.elem Natural.eqb r (List.take n (List.cons y xs'))) Bool.false)
        (fun _ => rfl)
        (fun n' _ h => Bool.or_false (Bool.or_eq_false_left h) (ih n' (Bool.or_eq_false_right h)))
        n)
    xs

/-- Among the first `n`, so among the first `n + 1`. -/
theorem take_succ_true (r : Natural) (xs : List Natural) (n : Natural)
    (h : Eq (List.elem Natural.eqb r (List.take n xs)) Bool.true) :
    Eq (List.elem Natural.eqb r (List.take (Natural.succ n) xs)) Bool.true :=
  Bool.by_cases (motive := fun c => Eq c Bool.true) (List.elem Natural.eqb r (List.take (Natural.succ n) xs))
    (fun e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm (take_succ_false r xs n e)) h)))
    (fun _ => rfl)

theorem take_take (n : Natural) : ∀ xs : List Natural,
    Eq (List.take n (List.take (Natural.succ n) xs)) (List.take n xs) :=
  Natural.rec
    (motive := fun n => ∀ xs : List Natural, Eq (List.take n (List.take (Natural.succ n) xs)) (List.take n xs))
    (fun _ => rfl)
    (fun n' ih xs =>
      List.rec
        (motive := fun xs =>
          Eq (List.take (Natural.succ n') (List.take (Natural.succ (Natural.succ n')) xs)) (List.take (Natural.succ n') xs))
        rfl
        (fun y xs' _ => congrArg (List.cons y) (ih xs'))
        xs)
    n

/-- On a stack without repeats, removing a block among the first `n + 1`
leaves the first `n` of the stack without it. -/
theorem remove_take (r : Natural) (xs : List Natural) : ∀ n : Natural, nodup xs →
    Eq (List.elem Natural.eqb r (List.take (Natural.succ n) xs)) Bool.true →
      Eq (List.remove r (List.take (Natural.succ n) xs)) (List.take n (List.remove r xs)) :=
  List.rec
    (motive := fun xs => ∀ n : Natural, nodup xs →
      Eq (List.elem Natural.eqb r (List.take (Natural.succ n) xs)) Bool.true →
        Eq (List.remove r (List.take (Natural.succ n) xs)) (List.take n (List.remove r xs)))
    (fun _ _ h => False.elim (Bool.false_ne_true h))
    (fun y xs' ih n hnd h =>
      Bool.by_cases
        (motive := fun b =>
          Eq (cond b (List.remove r (List.take n xs')) (List.cons y (List.remove r (List.take n xs'))))
            (List.take n (cond b (List.remove r xs') (List.cons y (List.remove r xs')))))
        (Natural.eqb r y)
        -- r is not the top: it is among the first n of the rest
        (fun hry =>
          Natural.rec
            (motive := fun n => Eq (List.elem Natural.eqb r (List.take n xs')) Bool.true →
              Eq (List.cons y (List.remove r (List.take n xs'))) (List.take n (List.cons y (List.remove r xs'))))
            (fun e => False.elim (Bool.false_ne_true e))
            (fun n' _ e => congrArg (List.cons y) (ih n' hnd.right e))
            n (Bool.or_right_of hry h))
        -- r is the top: it is nowhere below (no repeats), so removing it changes nothing below
        (fun hry =>
          let hr : Eq (List.elem Natural.eqb r xs') Bool.false :=
            Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z xs') Bool.false)
              (Eq.symm (Natural.eq_of_eqb r y hry)) hnd.left
          Eq.trans (remove_absent r (List.take n xs') (take_absent r xs' n hr))
            (Eq.symm (congrArg (List.take n) (remove_absent r xs' hr)))))
    xs

/-- One request: LRU of the first `cap` entries of a stack is the first `cap`
entries of the stack after move-to-front. -/
theorem lru_step_take (cap r : Natural) (stack : List Natural) (hnd : nodup stack) :
    Eq (lru_step cap (List.take cap stack) r) (List.take cap (mtf stack r)) :=
  Natural.rec
    (motive := fun cap => Eq (lru_step cap (List.take cap stack) r) (List.take cap (mtf stack r)))
    rfl
    (fun cap' _ =>
      Bool.by_cases
        (motive := fun b =>
          Eq (cond b (List.cons r (List.remove r (List.take (Natural.succ cap') stack)))
              (List.take (Natural.succ cap') (List.cons r (List.take (Natural.succ cap') stack))))
            (List.take (Natural.succ cap') (List.cons r (List.remove r stack))))
        (List.elem Natural.eqb r (List.take (Natural.succ cap') stack))
        -- a miss: r goes on top, the least recent of the first cap' + 1 falls off
        (fun hf => congrArg (List.cons r)
          (Eq.trans (take_take cap' stack)
            (Eq.symm (take_remove_absent r stack cap' (take_succ_false r stack cap' hf)))))
        -- a hit: r moves to the top
        (fun ht => congrArg (List.cons r) (remove_take r stack cap' hnd ht)))
    cap

theorem lru_walk_take (cap : Natural) (requests : List Natural) : ∀ stack : List Natural, nodup stack →
    Eq (lru_walk cap (List.take cap stack) requests) (List.take cap (mtf_walk stack requests)) :=
  List.rec
    (motive := fun requests => ∀ stack : List Natural, nodup stack →
      Eq (lru_walk cap (List.take cap stack) requests) (List.take cap (mtf_walk stack requests)))
    (fun _ _ => rfl)
    (fun r rest ih stack hnd =>
      Eq.trans (congrArg (fun c => lru_walk cap c rest) (lru_step_take cap r stack hnd))
        (ih (mtf stack r) (nodup_mtf r stack hnd)))
    requests

/-- Being held adds one hit: more held, at least as many hits. -/
theorem hit_le (b₁ b₂ : Bool) (h : Eq b₁ Bool.true → Eq b₂ Bool.true) :
    Natural.le (cond b₁ (Natural.succ Natural.zero) Natural.zero) (cond b₂ (Natural.succ Natural.zero) Natural.zero) :=
  Bool.rec
    (motive := fun b₁ => (Eq b₁ Bool.true → Eq b₂ Bool.true) →
      Natural.le (cond b₁ (Natural.succ Natural.zero) Natural.zero) (cond b₂ (Natural.succ Natural.zero) Natural.zero))
    (fun _ => Natural.zero_le _)
    (fun h => Eq.subst
      (motive := fun b => Natural.le (Natural.succ Natural.zero) (cond b (Natural.succ Natural.zero) Natural.zero))
      (Eq.symm (h rfl)) (Natural.le_refl (Natural.succ Natural.zero)))
    b₁ h

theorem lru_hits_walk_mono (cap : Natural) (requests : List Natural) : ∀ stack : List Natural, nodup stack →
    Natural.le (lru_hits_walk cap (List.take cap stack) requests)
      (lru_hits_walk (Natural.succ cap) (List.take (Natural.succ cap) stack) requests) :=
  List.rec
    (motive := fun requests => ∀ stack : List Natural, nodup stack →
      Natural.le (lru_hits_walk cap (List.take cap stack) requests)
        (lru_hits_walk (Natural.succ cap) (List.take (Natural.succ cap) stack) requests))
    (fun _ _ => Natural.le_refl Natural.zero)
    (fun r rest ih stack hnd =>
      Natural.le_of_eq_of_le
        (congrArg
          (fun c => Natural.plus (cond (List.elem Natural.eqb r (List.take cap stack)) (Natural.succ Natural.zero) Natural.zero)
            (lru_hits_walk cap c rest))
          (Eq.symm (lru_step_take cap r stack hnd)))
        (congrArg
          (fun c => Natural.plus
            (cond (List.elem Natural.eqb r (List.take (Natural.succ cap) stack)) (Natural.succ Natural.zero) Natural.zero)
            (lru_hits_walk (Natural.succ cap) c rest))
          (Eq.symm (lru_step_take (Natural.succ cap) r stack hnd)))
        (Natural.plus_le_plus
          (hit_le _ _ (take_succ_true r stack cap))
          (ih (mtf stack r) (nodup_mtf r stack hnd))))
    requests

/-! ## Theorems -/

/-- The LRU cache of `cap` blocks, after any requests, is the first `cap`
entries of the move-to-front stack. -/
theorem lru_cache_eq_take (cap : Natural) (requests : List Natural) :
    Eq (lru_cache cap requests) (List.take cap (mtf_stack requests)) :=
  Eq.trans (congrArg (fun c => lru_walk cap c requests) (Eq.symm (List.take_nil cap)))
    (lru_walk_take cap requests List.nil True.intro)

/-- LRU's inclusion property: what LRU holds with `cap` blocks it also holds
with `cap + 1`. -/
theorem lru_cache_subset_succ (cap : Natural) (requests : List Natural) :
    subset (lru_cache cap requests) (lru_cache (Natural.succ cap) requests) :=
  fun a h =>
    Eq.subst (motive := fun c => Eq (List.elem Natural.eqb a c) Bool.true)
      (Eq.symm (lru_cache_eq_take (Natural.succ cap) requests))
      (take_succ_true a (mtf_stack requests) cap
        (Eq.subst (motive := fun c => Eq (List.elem Natural.eqb a c) Bool.true) (lru_cache_eq_take cap requests) h))

/-- LRU's hits never drop when the capacity grows by one block (so never as
it grows). -/
theorem lru_hits_mono (cap : Natural) (requests : List Natural) :
    Natural.le (lru_hits cap requests) (lru_hits (Natural.succ cap) requests) :=
  Natural.le_of_eq_of_le
    (congrArg (fun c => lru_hits_walk cap c requests) (List.take_nil cap))
    (congrArg (fun c => lru_hits_walk (Natural.succ cap) c requests) (List.take_nil (Natural.succ cap)))
    (lru_hits_walk_mono cap requests List.nil True.intro)
