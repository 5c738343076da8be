prelude
import PrefixPool.Belady
/-!
# PrefixPool.BeladyLemmas: counting and ordering facts for MIN's optimality

Distinct counts under `remove` and `subset`, the order of `Natural` as `ltb`
decides it, and the choice of `furthest`.
-/

/-! ## Order -/

theorem Natural.succ_le_succ {a b : Natural} (h : Natural.le a b) : Natural.le (Natural.succ a) (Natural.succ b) :=
  Exists.rec (motive := fun _ => Natural.le (Natural.succ a) (Natural.succ b))
    (fun k e => Exists.intro k (Eq.trans (Natural.succ_plus a k) (congrArg Natural.succ e))) h

theorem Natural.le_of_succ_le_succ {a b : Natural} (h : Natural.le (Natural.succ a) (Natural.succ b)) : Natural.le a b :=
  Exists.rec (motive := fun _ => Natural.le a b)
    (fun k e => Exists.intro k (Natural.succ_inj (Eq.trans (Eq.symm (Natural.succ_plus a k)) e))) h

theorem Natural.succ_ne_zero {a : Natural} (h : Eq (Natural.succ a) Natural.zero) : False :=
  @Eq.rec Natural (Natural.succ a) (fun x _ => Natural.rec (motive := fun _ => Prop) False (fun _ _ => True) x)
    True.intro Natural.zero h

theorem Natural.not_succ_le_zero {a : Natural} (h : Natural.le (Natural.succ a) Natural.zero) : False :=
  Exists.rec (motive := fun _ => False)
    (fun k e => Natural.succ_ne_zero (Eq.trans (Eq.symm (Natural.succ_plus a k)) e)) h

theorem Natural.not_succ_le_self (n : Natural) : Natural.le (Natural.succ n) n → False :=
  Natural.rec (motive := fun n => Natural.le (Natural.succ n) n → False)
    (fun h => Natural.not_succ_le_zero h)
    (fun _ ih h => ih (Natural.le_of_succ_le_succ h))
    n

theorem Natural.le_succ (n : Natural) : Natural.le n (Natural.succ n) :=
  Exists.intro (Natural.succ Natural.zero) rfl

theorem Natural.le_plus_left (a b : Natural) : Natural.le b (Natural.plus a b) :=
  Exists.intro a (Natural.plus_comm b a)

/-- `leb n m` false means `m < n`. -/
theorem Natural.lt_of_leb_false (n : Natural) : ∀ m : Natural,
    Eq (Natural.leb n m) Bool.false → Natural.le (Natural.succ m) n :=
  Natural.rec (motive := fun n => ∀ m : Natural, Eq (Natural.leb n m) Bool.false → Natural.le (Natural.succ m) n)
    (fun _ h => False.elim (Bool.false_ne_true (Eq.symm h)))
    (fun n' ih m => Natural.rec
      (motive := fun m => Eq (Natural.leb (Natural.succ n') m) Bool.false → Natural.le (Natural.succ m) (Natural.succ n'))
      (fun _ => Natural.succ_le_succ (Natural.zero_le n'))
      (fun m' _ h => Natural.succ_le_succ (ih m' h))
      m)
    n

theorem Natural.le_of_ltb_true {a b : Natural} (h : Eq (Natural.ltb a b) Bool.true) : Natural.le a b :=
  Natural.le_trans (Natural.le_succ a) (Natural.le_of_leb (Natural.succ a) b h)

theorem Natural.le_of_ltb_false {a b : Natural} (h : Eq (Natural.ltb a b) Bool.false) : Natural.le b a :=
  Natural.le_of_succ_le_succ (Natural.lt_of_leb_false (Natural.succ a) b h)

/-! ## Distinct counts -/

theorem eqb_of_eq {a b : Natural} (h : Eq a b) : Eq (Natural.eqb a b) Bool.true :=
  Eq.subst (motive := fun z => Eq (Natural.eqb a z) Bool.true) h (Natural.eqb_self a)

/-- `remove` lowers the distinct count by one exactly when the block was there. -/
theorem count_remove (v : Natural) (xs : List Natural) :
    Eq (Natural.plus (distinct_count (List.remove v xs))
        (cond (List.elem Natural.eqb v xs) (Natural.succ Natural.zero) Natural.zero))
      (distinct_count xs) :=
  List.rec
    (motive := fun xs =>
      Eq (Natural.plus (count_distinct Natural.eqb (List.remove v xs))
          (cond (List.elem Natural.eqb v xs) (Natural.succ Natural.zero) Natural.zero))
        (count_distinct Natural.eqb xs))
    rfl
    (fun x xs' ih =>
      Bool.by_cases
        (motive := fun b => Eq (Natural.eqb v x) b →
          Eq (Natural.plus (count_distinct Natural.eqb (cond b (List.remove v xs') (List.cons x (List.remove v xs'))))
              (cond (Bool.or b (List.elem Natural.eqb v xs')) (Natural.succ Natural.zero) Natural.zero))
            (Natural.plus (absent Natural.eqb x xs') (count_distinct Natural.eqb xs')))
        (Natural.eqb v x)
        -- x is not v: x counts alike on both sides
        (fun _ hvx =>
          Eq.trans (Natural.plus_assoc _ _ _)
            (congr2 Natural.plus
              (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
                (elem_remove_ne x v xs' (Lawful.eqb_false_symm Natural.eqb_lawful v x hvx)))
              ih))
        -- x is v: removed, and it counted once
        (fun _ hvx =>
          Eq.subst
            (motive := fun z =>
              Eq (Natural.succ (count_distinct Natural.eqb (List.remove v xs')))
                (Natural.plus (absent Natural.eqb z xs') (count_distinct Natural.eqb xs')))
            (Natural.eq_of_eqb v x hvx)
            (Bool.by_cases
              (motive := fun c => Eq (List.elem Natural.eqb v xs') c →
                Eq (Natural.succ (count_distinct Natural.eqb (List.remove v xs')))
                  (Natural.plus (cond c Natural.zero (Natural.succ Natural.zero)) (count_distinct Natural.eqb xs')))
              (List.elem Natural.eqb v xs')
              (fun _ e => Eq.trans
                (congrArg Natural.succ
                  (Eq.subst
                    (motive := fun c => Eq (Natural.plus (count_distinct Natural.eqb (List.remove v xs'))
                      (cond c (Natural.succ Natural.zero) Natural.zero)) (count_distinct Natural.eqb xs'))
                    e ih))
                (Eq.symm (Natural.one_plus _)))
              (fun _ e => Eq.trans
                (Eq.subst
                  (motive := fun c => Eq (Natural.plus (count_distinct Natural.eqb (List.remove v xs'))
                    (cond c (Natural.succ Natural.zero) Natural.zero)) (count_distinct Natural.eqb xs'))
                  e ih)
                (Eq.symm (Natural.zero_plus _)))
              rfl))
        rfl)
    xs

theorem count_remove_le (v : Natural) (xs : List Natural) :
    Natural.le (distinct_count (List.remove v xs)) (distinct_count xs) :=
  Exists.intro _ (count_remove v xs)

/-- A list without repeats has as many distinct blocks as entries. -/
theorem count_nodup (xs : List Natural) : nodup xs → Eq (distinct_count xs) (List.length xs) :=
  List.rec (motive := fun xs => nodup xs → Eq (count_distinct Natural.eqb xs) (List.length xs))
    (fun _ => rfl)
    (fun _x xs' ih h =>
      Eq.trans (congrArg (fun b => Natural.plus (cond b Natural.zero (Natural.succ Natural.zero))
          (count_distinct Natural.eqb xs')) h.left)
        (Eq.trans (Natural.one_plus _) (congrArg Natural.succ (ih h.right))))
    xs

/-- Fewer blocks held, fewer distinct blocks. -/
theorem count_mono (xs : List Natural) : ∀ ys : List Natural, subset xs ys →
    Natural.le (distinct_count xs) (distinct_count ys) :=
  List.rec
    (motive := fun xs => ∀ ys : List Natural, subset xs ys →
      Natural.le (count_distinct Natural.eqb xs) (count_distinct Natural.eqb ys))
    (fun _ys _ => Natural.zero_le _)
    (fun x xs' ih ys hsub =>
      Bool.by_cases
        (motive := fun c => Eq (List.elem Natural.eqb x xs') c →
          Natural.le (Natural.plus (cond c Natural.zero (Natural.succ Natural.zero)) (count_distinct Natural.eqb xs'))
            (count_distinct Natural.eqb ys))
        (List.elem Natural.eqb x xs')
        -- x is new in x :: xs': ys has it too, and xs' fits in ys without it
        (fun _ hx =>
          let hxy : Eq (List.elem Natural.eqb x ys) Bool.true :=
            hsub x (Bool.or_true_left (List.elem Natural.eqb x xs') (Natural.eqb_self x))
          let sub' : subset xs' (List.remove x ys) := fun a ha =>
            Bool.by_cases (motive := fun c => Eq (Natural.eqb a x) c → Eq (List.elem Natural.eqb a (List.remove x ys)) Bool.true)
              (Natural.eqb a x)
              (fun _ hax => Eq.trans (elem_remove_ne a x ys hax)
                (hsub a (Bool.or_true_right (Natural.eqb a x) ha)))
              (fun _ hax => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm hx)
                (Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z xs') Bool.true)
                  (Natural.eq_of_eqb a x hax) ha))))
              rfl
          Natural.le_of_eq_of_le (Eq.symm (Natural.one_plus _))
            (Eq.subst
              (motive := fun c => Eq (Natural.plus (count_distinct Natural.eqb (List.remove x ys))
                (cond c (Natural.succ Natural.zero) Natural.zero)) (count_distinct Natural.eqb ys))
              hxy (count_remove x ys))
            (Natural.succ_le_succ (ih (List.remove x ys) sub')))
        -- x occurs again in xs'
        (fun _ _ => Natural.le_of_eq_of_le (Eq.symm (Natural.zero_plus _)) rfl
          (ih ys (fun a h => hsub a (Bool.or_true_right (Natural.eqb a x) h))))
        rfl)
    xs

/-! ## Is every block of a list in another? -/

noncomputable def all_in (xs held : List Natural) : Bool :=
  List.rec (motive := fun _ => Bool) Bool.true (fun x _ rest => Bool.and (List.elem Natural.eqb x held) rest) xs

theorem subset_of_all_in (held : List Natural) (xs : List Natural) :
    Eq (all_in xs held) Bool.true → subset xs held :=
  List.rec (motive := fun xs => Eq (all_in xs held) Bool.true → subset xs held)
    (fun _ _ h => False.elim (Bool.false_ne_true h))
    (fun x _xs' ih h a ha =>
      Bool.by_cases (motive := fun c => Eq (Natural.eqb a x) c → Eq (List.elem Natural.eqb a held) Bool.true)
        (Natural.eqb a x)
        (fun _ hax => ih (Bool.and_right _ _ h) a (Bool.or_right_of hax ha))
        (fun _ hax => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z held) Bool.true)
          (Eq.symm (Natural.eq_of_eqb a x hax)) (Bool.and_left _ _ h))
        rfl)
    xs

theorem missing_of_all_in (held : List Natural) (xs : List Natural) :
    Eq (all_in xs held) Bool.false →
      Exists (fun u => And (Eq (List.elem Natural.eqb u xs) Bool.true) (Eq (List.elem Natural.eqb u held) Bool.false)) :=
  List.rec
    (motive := fun xs => Eq (all_in xs held) Bool.false →
      Exists (fun u => And (Eq (List.elem Natural.eqb u xs) Bool.true) (Eq (List.elem Natural.eqb u held) Bool.false)))
    (fun h => False.elim (Bool.false_ne_true (Eq.symm h)))
    (fun x xs' ih h =>
      Bool.by_cases
        (motive := fun c => Eq (List.elem Natural.eqb x held) c →
          Exists (fun u => And (Eq (List.elem Natural.eqb u (List.cons x xs')) Bool.true)
            (Eq (List.elem Natural.eqb u held) Bool.false)))
        (List.elem Natural.eqb x held)
        (fun _ hx => Exists.intro x (And.intro (Bool.or_true_left _ (Natural.eqb_self x)) hx))
        (fun _ hx => Exists.rec
          (motive := fun _ => Exists (fun u => And (Eq (List.elem Natural.eqb u (List.cons x xs')) Bool.true)
            (Eq (List.elem Natural.eqb u held) Bool.false)))
          (fun u hu => Exists.intro u (And.intro (Bool.or_true_right (Natural.eqb u x) hu.left) hu.right))
          (ih (Eq.trans (Eq.symm (congrArg (fun c => Bool.and c (all_in xs' held)) hx)) h)))
        rfl)
    xs

/-! ## The furthest candidate -/

/-- No candidate is used later than the one `furthest` picks. -/
theorem furthest_max (rest : List Natural) (cands : List Natural) : ∀ best c : Natural,
    Eq (List.elem Natural.eqb c (List.cons best cands)) Bool.true →
    Natural.le (next_use c rest) (next_use (furthest rest best cands) rest) :=
  List.rec
    (motive := fun cands => ∀ best c : Natural,
      Eq (List.elem Natural.eqb c (List.cons best cands)) Bool.true →
      Natural.le (next_use c rest) (next_use (furthest rest best cands) rest))
    (fun best c h => Eq.subst (motive := fun z => Natural.le (next_use c rest) (next_use z rest))
      (Natural.eq_of_eqb c best (Bool.or_left_of rfl h)) (Natural.le_refl _))
    (fun c' cs ih best c h =>
      let next := cond (Natural.ltb (next_use best rest) (next_use c' rest)) c' best
      -- best and c' are both used no later than the new best
      let both : And (Natural.le (next_use best rest) (next_use next rest)) (Natural.le (next_use c' rest) (next_use next rest)) :=
        Bool.by_cases
          (motive := fun b => Eq (Natural.ltb (next_use best rest) (next_use c' rest)) b →
            And (Natural.le (next_use best rest) (next_use (cond b c' best) rest))
              (Natural.le (next_use c' rest) (next_use (cond b c' best) rest)))
          (Natural.ltb (next_use best rest) (next_use c' rest))
          (fun _ e => And.intro (Natural.le_refl _) (Natural.le_of_ltb_false e))
          (fun _ e => And.intro (Natural.le_of_ltb_true e) (Natural.le_refl _))
          rfl
      let to_top : Natural.le (next_use next rest) (next_use (furthest rest next cs) rest) :=
        ih next next (Bool.or_true_left _ (Natural.eqb_self next))
      Bool.by_cases (motive := fun b => Eq (Natural.eqb c best) b →
          Natural.le (next_use c rest) (next_use (furthest rest next cs) rest))
        (Natural.eqb c best)
        (fun _ hcb =>
          let h' := Bool.or_right_of hcb h
          Bool.by_cases (motive := fun b => Eq (Natural.eqb c c') b →
              Natural.le (next_use c rest) (next_use (furthest rest next cs) rest))
            (Natural.eqb c c')
            (fun _ hcc => ih next c (Bool.or_true_right (Natural.eqb c next) (Bool.or_right_of hcc h')))
            (fun _ hcc => Eq.subst (motive := fun z => Natural.le (next_use z rest) (next_use (furthest rest next cs) rest))
              (Eq.symm (Natural.eq_of_eqb c c' hcc)) (Natural.le_trans both.right to_top))
            rfl)
        (fun _ hcb => Eq.subst (motive := fun z => Natural.le (next_use z rest) (next_use (furthest rest next cs) rest))
          (Eq.symm (Natural.eq_of_eqb c best hcb)) (Natural.le_trans both.left to_top))
        rfl)
    cands
