prelude
import PrefixPool.Core
/-!
# PrefixPool.Distinct: distinct elements, and a demand cache that keeps everything

Generic over the element type `α` and its boolean equality `eqb`
(`Lawful eqb` says `eqb` decides `Eq`). Openings are `Natural`; per-host requests
are `(host, opening)` pairs; block ids are `Natural`: all three use these.

The one fact proved here (`cache_misses_nil_eq_count`): a cache that starts
empty, keeps everything and misses whenever the requested element is not
held, misses exactly `count_distinct` times.
-/

/-- One if `a` is absent from `xs`, zero if `a` occurs in `xs`. -/
noncomputable def absent {α : Type u} (eqb : α → α → Bool) (a : α) (xs : List α) : Natural :=
  cond (List.elem eqb a xs) Natural.zero (Natural.succ Natural.zero)

/-- The number of distinct elements of `xs`. Each element is counted once, at
its last occurrence: `x :: rest` adds one for `x` exactly when `x` does not
occur in `rest`. -/
noncomputable def count_distinct {α : Type u} (eqb : α → α → Bool) (xs : List α) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero
    (fun x rest count_rest => Natural.plus (absent eqb x rest) count_rest) xs

/-- Misses of a cache that holds `held`, keeps everything, and serves
`requests` in order: a request misses when its element is not held, and after
the request the element is held. -/
noncomputable def cache_misses {α : Type u} (eqb : α → α → Bool) (held requests : List α) : Natural :=
  List.rec (motive := fun _ => List α → Natural) (fun _ => Natural.zero)
    (fun r _ misses_rest held =>
      Natural.plus (absent eqb r held) (misses_rest (List.cons r held)))
    requests held

/-! ## Lemmas -/

theorem absent_le_of_cond (b₁ b₂ : Bool) (h : Eq b₂ Bool.true → Eq b₁ Bool.true) :
    Natural.le (cond b₁ Natural.zero (Natural.succ Natural.zero)) (cond b₂ Natural.zero (Natural.succ Natural.zero)) :=
  Bool.rec
    (motive := fun b₁ => (Eq b₂ Bool.true → Eq b₁ Bool.true) →
      Natural.le (cond b₁ Natural.zero (Natural.succ Natural.zero)) (cond b₂ Natural.zero (Natural.succ Natural.zero)))
    (fun h => Bool.rec
      (motive := fun b₂ => (Eq b₂ Bool.true → Eq Bool.false Bool.true) →
        Natural.le (cond Bool.false Natural.zero (Natural.succ Natural.zero)) (cond b₂ Natural.zero (Natural.succ Natural.zero)))
      (fun _ => Natural.le_refl _)
      (fun h => False.elim (Bool.false_ne_true (h rfl)))
      b₂ h)
    (fun _ => Natural.zero_le _)
    b₁ h

/-- If `a ∈ ys` implies `a ∈ xs`, then `a` is absent from `xs` at most as often as from `ys`. -/
theorem absent_le {α : Type u} (eqb : α → α → Bool) (a : α) (xs ys : List α)
    (h : Eq (List.elem eqb a ys) Bool.true → Eq (List.elem eqb a xs) Bool.true) :
    Natural.le (absent eqb a xs) (absent eqb a ys) :=
  absent_le_of_cond (List.elem eqb a xs) (List.elem eqb a ys) h

theorem absent_of_elem_true {α : Type u} (eqb : α → α → Bool) (a : α) (xs : List α)
    (h : Eq (List.elem eqb a xs) Bool.true) : Eq (absent eqb a xs) Natural.zero :=
  congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero)) h

theorem elem_append_cons_self {α : Type u} {eqb : α → α → Bool} (hl : Lawful eqb) (r : α)
    (xs ys : List α) : Eq (List.elem eqb r (List.append xs (List.cons r ys))) Bool.true :=
  Eq.trans (List.elem_append eqb r xs (List.cons r ys))
    (Eq.trans
      (congrArg (Bool.or (List.elem eqb r xs))
        (congrArg (fun b => Bool.or b (List.elem eqb r ys)) (hl.left r)))
      (Bool.or_true (List.elem eqb r xs)))

/-- The swap at the heart of `count_distinct_move`. -/
theorem absent_swap {α : Type u} {eqb : α → α → Bool} (hl : Lawful eqb) (x r : α)
    (xs ys : List α) :
    Eq (Natural.plus (absent eqb x (List.append xs (List.cons r ys))) (absent eqb r (List.append xs ys)))
      (Natural.plus (absent eqb r (List.cons x (List.append xs ys))) (absent eqb x (List.append xs ys))) :=
  Bool.by_cases
    (motive := fun _ =>
      Eq (Natural.plus (absent eqb x (List.append xs (List.cons r ys))) (absent eqb r (List.append xs ys)))
        (Natural.plus (absent eqb r (List.cons x (List.append xs ys))) (absent eqb x (List.append xs ys))))
    (eqb x r)
    -- x ≠ r: adding r does not change whether x is absent, and x does not change whether r is.
    (fun h =>
      Eq.trans
        (congrArg (fun n => Natural.plus n (absent eqb r (List.append xs ys)))
          (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
            (Eq.trans (List.elem_append eqb x xs (List.cons r ys))
              (Eq.trans
                (congrArg (fun b => Bool.or (List.elem eqb x xs) (Bool.or b (List.elem eqb x ys))) h)
                (Eq.symm (List.elem_append eqb x xs ys))))))
        (Eq.trans (Natural.plus_comm (absent eqb x (List.append xs ys)) (absent eqb r (List.append xs ys)))
          (congrArg (fun n => Natural.plus n (absent eqb x (List.append xs ys)))
            (Eq.symm (congrArg (fun b => cond (Bool.or b (List.elem eqb r (List.append xs ys)))
              Natural.zero (Natural.succ Natural.zero)) (hl.eqb_false_symm x r h))))))
    -- x = r: both sides are `0 + absent r (xs ++ ys)`.
    (fun h =>
      Eq.subst
        (motive := fun z =>
          Eq (Natural.plus (absent eqb z (List.append xs (List.cons r ys))) (absent eqb r (List.append xs ys)))
            (Natural.plus (absent eqb r (List.cons z (List.append xs ys))) (absent eqb z (List.append xs ys))))
        (Eq.symm (hl.right x r h))
        (congrArg (fun n => Natural.plus n (absent eqb r (List.append xs ys)))
          (Eq.trans (absent_of_elem_true eqb r _ (elem_append_cons_self hl r xs ys))
            (Eq.symm (congrArg (fun b => cond (Bool.or b (List.elem eqb r (List.append xs ys)))
              Natural.zero (Natural.succ Natural.zero)) (hl.left r))))))

/-- Moving an element to the front does not change the distinct count. -/
theorem count_distinct_move {α : Type u} {eqb : α → α → Bool} (hl : Lawful eqb) (r : α)
    (xs ys : List α) :
    Eq (count_distinct eqb (List.append xs (List.cons r ys)))
      (count_distinct eqb (List.cons r (List.append xs ys))) :=
  List.rec
    (motive := fun xs => Eq (count_distinct eqb (List.append xs (List.cons r ys)))
      (count_distinct eqb (List.cons r (List.append xs ys))))
    rfl
    (fun x xs ih =>
      Eq.trans (congrArg (Natural.plus (absent eqb x (List.append xs (List.cons r ys)))) ih)
        (Eq.trans (Eq.symm (Natural.plus_assoc _ _ _))
          (Eq.trans (congrArg (fun n => Natural.plus n (count_distinct eqb (List.append xs ys)))
              (absent_swap hl x r xs ys))
            (Natural.plus_assoc _ _ _))))
    xs

/-- `cache_misses held requests + count_distinct held = count_distinct (requests ++ held)`. -/
theorem cache_misses_plus_count {α : Type u} {eqb : α → α → Bool} (hl : Lawful eqb)
    (requests : List α) : ∀ held : List α,
    Eq (Natural.plus (cache_misses eqb held requests) (count_distinct eqb held))
      (count_distinct eqb (List.append requests held)) :=
  List.rec
    (motive := fun requests => ∀ held : List α,
      Eq (Natural.plus (cache_misses eqb held requests) (count_distinct eqb held))
        (count_distinct eqb (List.append requests held)))
    (fun held => Natural.zero_plus (count_distinct eqb held))
    (fun r rs ih held =>
      Eq.trans (Natural.plus_assoc _ _ _)
        (Eq.trans (Natural.plus_left_comm _ _ _)
          (Eq.trans (ih (List.cons r held)) (count_distinct_move hl r rs held))))
    requests

/-- A cache that starts empty and keeps everything misses once per distinct element. -/
theorem cache_misses_nil_eq_count {α : Type u} {eqb : α → α → Bool} (hl : Lawful eqb)
    (requests : List α) :
    Eq (cache_misses eqb List.nil requests) (count_distinct eqb requests) :=
  Eq.trans (cache_misses_plus_count hl requests List.nil)
    (congrArg (count_distinct eqb) (List.append_nil requests))
