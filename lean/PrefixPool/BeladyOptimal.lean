prelude
import PrefixPool.BeladyLemmas
/-!
# PrefixPool.BeladyOptimal: no flat demand cache misses fewer times than MIN

The exchange argument (Belady 1966; Mattson et al. 1970), by induction on the
requests. At a miss with a full cache, MIN drops `v`, the candidate used
furthest in the future. Take any valid run that keeps `v` at the next step:
it lacks some block `u` that MIN keeps (counting: both hold at most `cap`).
Change the run to hold `u` in place of `v` (`swap_run`): until `u` is
requested, it hits exactly when the run does (`v` is not requested before
`u`, since `v` is used furthest); at `u`'s request it hits where the run
misses, and from then on it drops `v` (`debt_run`) and misses at most once
more, at `v`'s request. So the changed run misses no more, and it starts from
what MIN holds; the induction applies to it.
-/

/-- The run with `v` dropped from every state until `v` is requested (that
step included); the run itself after it. -/
noncomputable def debt_run (v : Natural) (run : List (Prod Natural (List Natural))) :
    List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List (Prod Natural (List Natural))) List.nil
    (fun p rest debt_rest =>
      List.cons (Prod.mk (Prod.fst p) (List.remove v (Prod.snd p)))
        (cond (Natural.eqb (Prod.fst p) v) rest debt_rest))
    run

/-- `held` with `u` in place of `v`, if it holds `v`. -/
noncomputable def swap_state (u v : Natural) (held : List Natural) : List Natural :=
  cond (List.elem Natural.eqb v held) (List.cons u (List.remove v held)) held

/-- The run holding `u` in place of `v` until `u` is requested; then, if it
held `u` there, `debt_run v`, else the run itself. -/
noncomputable def swap_run (u v : Natural) (run : List (Prod Natural (List Natural))) :
    List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List (Prod Natural (List Natural))) List.nil
    (fun p rest swap_rest =>
      List.cons (Prod.mk (Prod.fst p) (swap_state u v (Prod.snd p)))
        (cond (Natural.eqb (Prod.fst p) u)
          (cond (List.elem Natural.eqb v (Prod.snd p)) (debt_run v rest) rest) swap_rest))
    run

/-! ## Lemmas -/

theorem valid_mono (cap : Natural) (run : List (Prod Natural (List Natural))) : ∀ a a' : List Natural,
    flat_valid_after cap a run → subset a a' → flat_valid_after cap a' run :=
  List.rec
    (motive := fun run => ∀ a a' : List Natural, flat_valid_after cap a run → subset a a' → flat_valid_after cap a' run)
    (fun _ _ _ _ => True.intro)
    (fun _ _ _ _ _ h hs => And.intro (subset_trans h.left hs) h.right)
    run

/-- A block in `remove v xs` is not `v`. -/
theorem ne_of_elem_remove (v a : Natural) (xs : List Natural)
    (h : Eq (List.elem Natural.eqb a (List.remove v xs)) Bool.true) : Eq (Natural.eqb a v) Bool.false :=
  Bool.by_cases (motive := fun c => Eq (Natural.eqb a v) c → Eq (Natural.eqb a v) Bool.false) (Natural.eqb a v)
    (fun _ e => e)
    (fun _ e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm (elem_remove_self v xs))
      (Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z (List.remove v xs)) Bool.true)
        (Natural.eq_of_eqb a v e) h))))
    rfl

/-- A block of `xs` that `v` is not in is not `v`. -/
theorem ne_of_elem_absent (v a : Natural) (xs : List Natural) (hv : Eq (List.elem Natural.eqb v xs) Bool.false)
    (h : Eq (List.elem Natural.eqb a xs) Bool.true) : Eq (Natural.eqb a v) Bool.false :=
  Bool.by_cases (motive := fun c => Eq (Natural.eqb a v) c → Eq (Natural.eqb a v) Bool.false) (Natural.eqb a v)
    (fun _ e => e)
    (fun _ e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm hv)
      (Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z xs) Bool.true) (Natural.eq_of_eqb a v e) h))))
    rfl

theorem next_use_contra (u v s : Natural) (xs : List Natural)
    (h1 : Eq (Natural.eqb u s) Bool.false) (h2 : Eq (Natural.eqb v s) Bool.true)
    (h : Natural.le (next_use u (List.cons s xs)) (next_use v (List.cons s xs))) : False :=
  Natural.not_succ_le_zero
    (Eq.subst (motive := fun b => Natural.le (cond Bool.false Natural.zero (Natural.succ (next_use u xs)))
        (cond b Natural.zero (Natural.succ (next_use v xs)))) h2
      (Eq.subst (motive := fun b => Natural.le (cond b Natural.zero (Natural.succ (next_use u xs)))
          (cond (Natural.eqb v s) Natural.zero (Natural.succ (next_use v xs)))) h1 h))

theorem next_use_shift (u v s : Natural) (xs : List Natural)
    (h1 : Eq (Natural.eqb u s) Bool.false) (h2 : Eq (Natural.eqb v s) Bool.false)
    (h : Natural.le (next_use u (List.cons s xs)) (next_use v (List.cons s xs))) :
    Natural.le (next_use u xs) (next_use v xs) :=
  Natural.le_of_succ_le_succ
    (Eq.subst (motive := fun b => Natural.le (cond Bool.false Natural.zero (Natural.succ (next_use u xs)))
        (cond b Natural.zero (Natural.succ (next_use v xs)))) h2
      (Eq.subst (motive := fun b => Natural.le (cond b Natural.zero (Natural.succ (next_use u xs)))
          (cond (Natural.eqb v s) Natural.zero (Natural.succ (next_use v xs)))) h1 h))

/-- What may follow `s :: held` may follow `s :: u :: remove v held`, except `v`. -/
theorem swap_allowed (s u v : Natural) (held : List Natural) (x : Natural)
    (hx : Eq (List.elem Natural.eqb x (List.cons s held)) Bool.true) (hxv : Eq (Natural.eqb x v) Bool.false) :
    Eq (List.elem Natural.eqb x (List.cons s (List.cons u (List.remove v held)))) Bool.true :=
  Bool.by_cases (motive := fun c => Eq (Natural.eqb x s) c →
      Eq (List.elem Natural.eqb x (List.cons s (List.cons u (List.remove v held)))) Bool.true)
    (Natural.eqb x s)
    (fun _ e => Bool.or_true_right (Natural.eqb x s) (Bool.or_true_right (Natural.eqb x u)
      (Eq.trans (elem_remove_ne x v held hxv) (Bool.or_right_of e hx))))
    (fun _ e => Bool.or_true_left _ e)
    rfl

/-- Dropping `v` until its request costs at most one miss. -/
theorem debt_run_ok (cap v : Natural) (run : List (Prod Natural (List Natural))) : ∀ a a' : List Natural,
    flat_valid_after cap a run →
    (∀ x : Natural, Eq (List.elem Natural.eqb x a) Bool.true → Eq (Natural.eqb x v) Bool.false →
      Eq (List.elem Natural.eqb x a') Bool.true) →
    And (flat_valid_after cap a' (debt_run v run))
      (And (Natural.le (demand_misses (debt_run v run)) (Natural.succ (demand_misses run)))
        (Eq (List.map Prod.fst (debt_run v run)) (List.map Prod.fst run))) :=
  List.rec
    (motive := fun run => ∀ a a' : List Natural,
      flat_valid_after cap a run →
      (∀ x : Natural, Eq (List.elem Natural.eqb x a) Bool.true → Eq (Natural.eqb x v) Bool.false →
        Eq (List.elem Natural.eqb x a') Bool.true) →
      And (flat_valid_after cap a' (debt_run v run))
        (And (Natural.le (demand_misses (debt_run v run)) (Natural.succ (demand_misses run)))
          (Eq (List.map Prod.fst (debt_run v run)) (List.map Prod.fst run))))
    (fun _ _ _ _ => And.intro True.intro (And.intro (Natural.zero_le _) rfl))
    (fun p rest ih _a a' h hrel =>
      let first : subset (List.remove v (Prod.snd p)) a' := fun x hx =>
        hrel x (h.left x (elem_remove v x (Prod.snd p) hx)) (ne_of_elem_remove v x (Prod.snd p) hx)
      let fits' : fits cap (List.remove v (Prod.snd p)) :=
        Natural.le_trans (count_remove_le v (Prod.snd p)) h.right.left
      Bool.by_cases
        (motive := fun b => Eq (Natural.eqb (Prod.fst p) v) b →
          And (flat_valid_after cap a' (List.cons (Prod.mk (Prod.fst p) (List.remove v (Prod.snd p)))
                (cond b rest (debt_run v rest))))
            (And (Natural.le (Natural.plus (absent Natural.eqb (Prod.fst p) (List.remove v (Prod.snd p)))
                    (demand_misses (cond b rest (debt_run v rest))))
                  (Natural.succ (Natural.plus (absent Natural.eqb (Prod.fst p) (Prod.snd p)) (demand_misses rest))))
              (Eq (List.cons (Prod.fst p) (List.map Prod.fst (cond b rest (debt_run v rest))))
                (List.cons (Prod.fst p) (List.map Prod.fst rest)))))
        (Natural.eqb (Prod.fst p) v)
        -- not v's request: keep dropping v
        (fun _ e =>
          let hr := ih (List.cons (Prod.fst p) (Prod.snd p)) (List.cons (Prod.fst p) (List.remove v (Prod.snd p)))
            h.right.right
            (fun x hx hxv => Eq.trans (congrArg (Bool.or (Natural.eqb x (Prod.fst p))) (elem_remove_ne x v (Prod.snd p) hxv)) hx)
          And.intro (And.intro first (And.intro fits' hr.left))
            (And.intro
              (Natural.plus_le_plus
                (Natural.le_of_eq_of_le rfl
                  (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
                    (elem_remove_ne (Prod.fst p) v (Prod.snd p) e))
                  (Natural.le_refl _))
                hr.right.left)
              (congrArg (List.cons (Prod.fst p)) hr.right.right)))
        -- v's request: at most one miss more, then the run itself
        (fun _ e =>
          And.intro
            (And.intro first (And.intro fits'
              (valid_mono cap rest _ _ h.right.right (fun x hx =>
                Bool.by_cases (motive := fun c => Eq (Natural.eqb x (Prod.fst p)) c →
                    Eq (List.elem Natural.eqb x (List.cons (Prod.fst p) (List.remove v (Prod.snd p)))) Bool.true)
                  (Natural.eqb x (Prod.fst p))
                  (fun _ ex => Bool.or_true_right (Natural.eqb x (Prod.fst p))
                    (Eq.trans (elem_remove_ne x v (Prod.snd p)
                        (Eq.subst (motive := fun z => Eq (Natural.eqb x z) Bool.false) (Natural.eq_of_eqb (Prod.fst p) v e) ex))
                      (Bool.or_right_of ex hx)))
                  (fun _ ex => Bool.or_true_left _ ex)
                  rfl))))
            (And.intro
              (Natural.le_trans
                (Natural.plus_le_plus (absent_le_one Natural.eqb (Prod.fst p) (List.remove v (Prod.snd p)))
                  (Natural.le_refl (demand_misses rest)))
                (Natural.le_of_eq_of_le (Eq.symm (Natural.one_plus (demand_misses rest))) rfl
                  (Natural.succ_le_succ (Natural.le_plus_left _ _))))
              rfl))
        rfl)
    run

/-- Holding `u` in place of `v` misses no more, while `v` is not requested before `u`. -/
theorem swap_run_ok (cap u v : Natural)
    (run : List (Prod Natural (List Natural))) : ∀ a a' : List Natural,
    flat_valid_after cap a run →
    Eq (List.elem Natural.eqb u a) Bool.false →
    (∀ x : Natural, Eq (List.elem Natural.eqb x a) Bool.true → Eq (Natural.eqb x v) Bool.false →
      Eq (List.elem Natural.eqb x a') Bool.true) →
    (Eq (List.elem Natural.eqb v a) Bool.true → Eq (List.elem Natural.eqb u a') Bool.true) →
    Natural.le (next_use u (List.map Prod.fst run)) (next_use v (List.map Prod.fst run)) →
    And (flat_valid_after cap a' (swap_run u v run))
      (And (Natural.le (demand_misses (swap_run u v run)) (demand_misses run))
        (Eq (List.map Prod.fst (swap_run u v run)) (List.map Prod.fst run))) :=
  List.rec
    (motive := fun run => ∀ a a' : List Natural,
      flat_valid_after cap a run →
      Eq (List.elem Natural.eqb u a) Bool.false →
      (∀ x : Natural, Eq (List.elem Natural.eqb x a) Bool.true → Eq (Natural.eqb x v) Bool.false →
        Eq (List.elem Natural.eqb x a') Bool.true) →
      (Eq (List.elem Natural.eqb v a) Bool.true → Eq (List.elem Natural.eqb u a') Bool.true) →
      Natural.le (next_use u (List.map Prod.fst run)) (next_use v (List.map Prod.fst run)) →
      And (flat_valid_after cap a' (swap_run u v run))
        (And (Natural.le (demand_misses (swap_run u v run)) (demand_misses run))
          (Eq (List.map Prod.fst (swap_run u v run)) (List.map Prod.fst run))))
    (fun _ _ _ _ _ _ _ => And.intro True.intro (And.intro (Natural.zero_le _) rfl))
    (fun p rest ih _a a' h hua hrel hvu hnu =>
      let hus : Eq (List.elem Natural.eqb u (Prod.snd p)) Bool.false :=
        Bool.by_cases (motive := fun c => Eq (List.elem Natural.eqb u (Prod.snd p)) c →
            Eq (List.elem Natural.eqb u (Prod.snd p)) Bool.false)
          (List.elem Natural.eqb u (Prod.snd p))
          (fun _ e => e)
          (fun _ e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm hua) (h.left u e))))
          rfl
      -- the request is not v's, unless it is u's
      let not_v : Eq (Natural.eqb (Prod.fst p) u) Bool.false → Eq (Natural.eqb (Prod.fst p) v) Bool.false :=
        fun hsu => Bool.by_cases (motive := fun c => Eq (Natural.eqb (Prod.fst p) v) c →
            Eq (Natural.eqb (Prod.fst p) v) Bool.false)
          (Natural.eqb (Prod.fst p) v)
          (fun _ e => e)
          (fun _ e => False.elim (next_use_contra u v (Prod.fst p) (List.map Prod.fst rest)
            (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) u hsu)
            (eqb_of_eq (Eq.symm (Natural.eq_of_eqb (Prod.fst p) v e))) hnu))
          rfl
      Bool.by_cases
        (motive := fun c => Eq (List.elem Natural.eqb v (Prod.snd p)) c →
          And (flat_valid_after cap a' (List.cons (Prod.mk (Prod.fst p) (cond c (List.cons u (List.remove v (Prod.snd p))) (Prod.snd p)))
                (cond (Natural.eqb (Prod.fst p) u) (cond c (debt_run v rest) rest) (swap_run u v rest))))
            (And (Natural.le
                (Natural.plus (absent Natural.eqb (Prod.fst p) (cond c (List.cons u (List.remove v (Prod.snd p))) (Prod.snd p)))
                  (demand_misses (cond (Natural.eqb (Prod.fst p) u) (cond c (debt_run v rest) rest) (swap_run u v rest))))
                (Natural.plus (absent Natural.eqb (Prod.fst p) (Prod.snd p)) (demand_misses rest)))
              (Eq (List.cons (Prod.fst p)
                    (List.map Prod.fst (cond (Natural.eqb (Prod.fst p) u) (cond c (debt_run v rest) rest) (swap_run u v rest))))
                (List.cons (Prod.fst p) (List.map Prod.fst rest)))))
        (List.elem Natural.eqb v (Prod.snd p))
        -- the run does not hold v here: nothing to swap at this step
        (fun _ hv =>
          let first : subset (Prod.snd p) a' := fun x hx =>
            hrel x (h.left x hx) (ne_of_elem_absent v x (Prod.snd p) hv hx)
          Bool.by_cases
            (motive := fun d => Eq (Natural.eqb (Prod.fst p) u) d →
              And (flat_valid_after cap a' (List.cons (Prod.mk (Prod.fst p) (Prod.snd p))
                    (cond d rest (swap_run u v rest))))
                (And (Natural.le (Natural.plus (absent Natural.eqb (Prod.fst p) (Prod.snd p))
                      (demand_misses (cond d rest (swap_run u v rest))))
                    (Natural.plus (absent Natural.eqb (Prod.fst p) (Prod.snd p)) (demand_misses rest)))
                  (Eq (List.cons (Prod.fst p) (List.map Prod.fst (cond d rest (swap_run u v rest))))
                    (List.cons (Prod.fst p) (List.map Prod.fst rest)))))
            (Natural.eqb (Prod.fst p) u)
            (fun _ hsu =>
              let hsv := not_v hsu
              let hr := ih (List.cons (Prod.fst p) (Prod.snd p)) (List.cons (Prod.fst p) (Prod.snd p)) h.right.right
                (Bool.or_false (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) u hsu) hus)
                (fun _ hx _ => hx)
                (fun hva => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm
                  (Bool.or_false (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) v hsv) hv)) hva)))
                (next_use_shift u v (Prod.fst p) (List.map Prod.fst rest)
                  (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) u hsu)
                  (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) v hsv) hnu)
              And.intro (And.intro first (And.intro h.right.left hr.left))
                (And.intro (Natural.plus_le_plus (Natural.le_refl _) hr.right.left)
                  (congrArg (List.cons (Prod.fst p)) hr.right.right)))
            (fun _ _ =>
              And.intro (And.intro first (And.intro h.right.left h.right.right))
                (And.intro (Natural.le_refl _) rfl))
            rfl)
        -- the run holds v here: hold u instead
        (fun _ hv =>
          let w := List.cons u (List.remove v (Prod.snd p))
          let first : subset w a' := fun x hx =>
            Bool.by_cases (motive := fun c => Eq (Natural.eqb x u) c → Eq (List.elem Natural.eqb x a') Bool.true)
              (Natural.eqb x u)
              (fun _ e => hrel x (h.left x (elem_remove v x (Prod.snd p) (Bool.or_right_of e hx)))
                (ne_of_elem_remove v x (Prod.snd p) (Bool.or_right_of e hx)))
              (fun _ e => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z a') Bool.true)
                (Eq.symm (Natural.eq_of_eqb x u e)) (hvu (h.left v hv)))
              rfl
          let same_count : Eq (distinct_count w) (distinct_count (Prod.snd p)) :=
            Eq.trans
              (congrArg (fun b => Natural.plus (cond b Natural.zero (Natural.succ Natural.zero))
                (count_distinct Natural.eqb (List.remove v (Prod.snd p))))
                (not_elem_remove v u (Prod.snd p) hus))
              (Eq.trans (Natural.one_plus _)
                (Eq.subst
                  (motive := fun c => Eq (Natural.plus (distinct_count (List.remove v (Prod.snd p)))
                    (cond c (Natural.succ Natural.zero) Natural.zero)) (distinct_count (Prod.snd p)))
                  hv (count_remove v (Prod.snd p))))
          let fits' : fits cap w := Natural.le_of_eq_of_le (Eq.symm same_count) rfl h.right.left
          let next_ok : ∀ x : Natural, Eq (List.elem Natural.eqb x (List.cons (Prod.fst p) (Prod.snd p))) Bool.true →
              Eq (Natural.eqb x v) Bool.false → Eq (List.elem Natural.eqb x (List.cons (Prod.fst p) w)) Bool.true :=
            fun x hx hxv => swap_allowed (Prod.fst p) u v (Prod.snd p) x hx hxv
          Bool.by_cases
            (motive := fun d => Eq (Natural.eqb (Prod.fst p) u) d →
              And (flat_valid_after cap a' (List.cons (Prod.mk (Prod.fst p) w)
                    (cond d (debt_run v rest) (swap_run u v rest))))
                (And (Natural.le (Natural.plus (absent Natural.eqb (Prod.fst p) w)
                      (demand_misses (cond d (debt_run v rest) (swap_run u v rest))))
                    (Natural.plus (absent Natural.eqb (Prod.fst p) (Prod.snd p)) (demand_misses rest)))
                  (Eq (List.cons (Prod.fst p) (List.map Prod.fst (cond d (debt_run v rest) (swap_run u v rest))))
                    (List.cons (Prod.fst p) (List.map Prod.fst rest)))))
            (Natural.eqb (Prod.fst p) u)
            -- neither u's nor v's request: both hit or both miss
            (fun _ hsu =>
              let hsv := not_v hsu
              let hr := ih (List.cons (Prod.fst p) (Prod.snd p)) (List.cons (Prod.fst p) w) h.right.right
                (Bool.or_false (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) u hsu) hus)
                next_ok
                (fun _ => Bool.or_true_right (Natural.eqb u (Prod.fst p)) (Bool.or_true_left _ (Natural.eqb_self u)))
                (next_use_shift u v (Prod.fst p) (List.map Prod.fst rest)
                  (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) u hsu)
                  (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) v hsv) hnu)
              And.intro (And.intro first (And.intro fits' hr.left))
                (And.intro
                  (Natural.plus_le_plus
                    (Natural.le_of_eq_of_le rfl
                      (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
                        (Eq.trans (congrArg (fun b => Bool.or b (List.elem Natural.eqb (Prod.fst p) (List.remove v (Prod.snd p)))) hsu)
                          (elem_remove_ne (Prod.fst p) v (Prod.snd p) hsv)))
                      (Natural.le_refl _))
                    hr.right.left)
                  (congrArg (List.cons (Prod.fst p)) hr.right.right)))
            -- u's request: a hit here, a miss for the run; then drop v
            (fun _ hsu =>
              let hd := debt_run_ok cap v rest (List.cons (Prod.fst p) (Prod.snd p)) (List.cons (Prod.fst p) w)
                h.right.right next_ok
              let hit : Eq (absent Natural.eqb (Prod.fst p) w) Natural.zero :=
                congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero)) (Bool.or_true_left _ hsu)
              let miss : Eq (absent Natural.eqb (Prod.fst p) (Prod.snd p)) (Natural.succ Natural.zero) :=
                congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
                  (Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z (Prod.snd p)) Bool.false)
                    (Eq.symm (Natural.eq_of_eqb (Prod.fst p) u hsu)) hus)
              And.intro (And.intro first (And.intro fits' hd.left))
                (And.intro
                  (Natural.le_of_eq_of_le
                    (Eq.trans (Eq.symm (Natural.zero_plus _))
                      (congrArg (fun n => Natural.plus n (demand_misses (debt_run v rest))) (Eq.symm hit)))
                    (Eq.trans (Eq.symm (Natural.one_plus _))
                      (congrArg (fun n => Natural.plus n (demand_misses rest)) (Eq.symm miss)))
                    hd.right.left)
                  (congrArg (List.cons (Prod.fst p)) hd.right.right)))
            rfl)
        rfl)
    run

theorem List.nil_ne_cons {α : Type u} {a : α} {l : List α} (h : Eq List.nil (List.cons a l)) : False :=
  @Eq.rec (List α) List.nil (fun x _ => List.rec (motive := fun _ => Prop) True (fun _ _ _ => False) x)
    True.intro (List.cons a l) h

theorem List.head_eq {α : Type u} {a b : α} {l m : List α} (h : Eq (List.cons a l) (List.cons b m)) : Eq a b :=
  congrArg (fun xs => List.rec (motive := fun _ => α) a (fun x _ _ => x) xs) h

theorem List.tail_eq {α : Type u} {a b : α} {l m : List α} (h : Eq (List.cons a l) (List.cons b m)) : Eq l m :=
  congrArg (fun xs => List.rec (motive := fun _ => List α) List.nil (fun _ t _ => t) xs) h

/-- The step after a miss with a full cache: the run's next part can be
changed into one that starts from what MIN holds, with no more misses. -/
theorem full_step (cap r : Natural) (held rest : List Natural)
    (hr : Eq (List.elem Natural.eqb r held) Bool.false) (hnd : nodup held)
    (hfull : Eq (Natural.ltb (List.length held) cap) Bool.false)
    (ih : ∀ (a : List Natural) (run : List (Prod Natural (List Natural))),
      subset a (List.remove (furthest rest r held) (List.cons r held)) → flat_valid_after cap a run →
      Eq (List.map Prod.fst run) rest →
      Natural.le (demand_misses (min_run cap (List.remove (furthest rest r held) (List.cons r held)) rest)) (demand_misses run))
    (run' : List (Prod Natural (List Natural))) (a1 : List Natural) (ha1 : subset a1 (List.cons r held))
    (hv' : flat_valid_after cap a1 run') (hmap : Eq (List.map Prod.fst run') rest) :
    Natural.le (demand_misses (min_run cap (List.remove (furthest rest r held) (List.cons r held)) rest)) (demand_misses run') :=
  let v := furthest rest r held
  let x := List.cons r held
  let n := List.remove v x
  let hx : nodup x := And.intro hr hnd
  let hvx : Eq (List.elem Natural.eqb v x) Bool.true := furthest_mem rest held r
  List.rec
    (motive := fun run' => flat_valid_after cap a1 run' → Eq (List.map Prod.fst run') rest →
      Natural.le (demand_misses (min_run cap n rest)) (demand_misses run'))
    (fun _ hm => ih List.nil List.nil (fun _ h => False.elim (Bool.false_ne_true h)) True.intro hm)
    (fun q run2 _ hv hm =>
      let hvt : flat_valid_after cap (Prod.snd q) (List.cons q run2) := And.intro (subset_refl _) hv.right
      let tx : subset (Prod.snd q) x := subset_trans hv.left ha1
      Bool.by_cases
        (motive := fun c => Eq (List.elem Natural.eqb v (Prod.snd q)) c →
          Natural.le (demand_misses (min_run cap n rest)) (demand_misses (List.cons q run2)))
        (List.elem Natural.eqb v (Prod.snd q))
        -- the run drops v too: it starts within what MIN holds
        (fun _ hv0 => ih (Prod.snd q) (List.cons q run2)
          (fun y hy => Eq.trans (elem_remove_ne y v x (ne_of_elem_absent v y (Prod.snd q) hv0 hy)) (tx y hy))
          hvt hm)
        -- the run keeps v: it lacks some u that MIN keeps; swap them
        (fun _ hv1 =>
          Bool.by_cases
            (motive := fun c => Eq (all_in n (Prod.snd q)) c →
              Natural.le (demand_misses (min_run cap n rest)) (demand_misses (List.cons q run2)))
            (all_in n (Prod.snd q))
            (fun _ hall => Exists.rec
              (motive := fun _ => Natural.le (demand_misses (min_run cap n rest)) (demand_misses (List.cons q run2)))
              (fun u hu =>
                let hs := swap_run_ok cap u v (List.cons q run2) (Prod.snd q) n hvt hu.right
                  (fun y hy hyv => Eq.trans (elem_remove_ne y v x hyv) (tx y hy))
                  (fun _ => hu.left)
                  (Eq.subst (motive := fun l => Natural.le (next_use u l) (next_use v l)) (Eq.symm hm)
                    (furthest_max rest held r u (elem_remove v u x hu.left)))
                Natural.le_trans
                  (ih n (swap_run u v (List.cons q run2)) (subset_refl n) hs.left (Eq.trans hs.right.right hm))
                  hs.right.left)
              (missing_of_all_in (Prod.snd q) n hall))
            -- MIN's blocks all in the run's state, and v too: cap + 1 blocks, impossible
            (fun _ hall => False.elim (Natural.not_succ_le_self cap
              (Natural.le_trans
                (Natural.succ_le_succ (Natural.le_of_ltb_false hfull))
                (Natural.le_trans
                  (Natural.le_of_eq_of_le rfl
                    (Eq.trans (Eq.symm (count_nodup x hx))
                      (Eq.trans (Eq.symm (Eq.subst
                          (motive := fun c => Eq (Natural.plus (distinct_count n) (cond c (Natural.succ Natural.zero) Natural.zero))
                            (distinct_count x))
                          hvx (count_remove v x)))
                        (Eq.trans (Eq.symm (Natural.one_plus (distinct_count n)))
                          (congrArg (fun b => Natural.plus (cond b Natural.zero (Natural.succ Natural.zero)) (distinct_count n))
                            (Eq.symm (elem_remove_self v x))))))
                    (Natural.le_refl (List.length x)))
                  (Natural.le_trans
                    (count_mono (List.cons v n) (Prod.snd q) (fun y hy =>
                      Bool.by_cases (motive := fun c => Eq (Natural.eqb y v) c → Eq (List.elem Natural.eqb y (Prod.snd q)) Bool.true)
                        (Natural.eqb y v)
                        (fun _ e => subset_of_all_in (Prod.snd q) n hall y (Bool.or_right_of e hy))
                        (fun _ e => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z (Prod.snd q)) Bool.true)
                          (Eq.symm (Natural.eq_of_eqb y v e)) hv1)
                        rfl))
                    hv.right.left)))))
            rfl)
        rfl)
    run' hv' hmap

/-- MIN from `held` misses no more than any valid run from within `held` on the same requests. -/
theorem min_le_run (cap : Natural) (blocks : List Natural) : ∀ (held a : List Natural)
    (run : List (Prod Natural (List Natural))),
    nodup held → Natural.le (List.length held) cap → subset a held → flat_valid_after cap a run →
    Eq (List.map Prod.fst run) blocks →
    Natural.le (demand_misses (min_run cap held blocks)) (demand_misses run) :=
  List.rec
    (motive := fun blocks => ∀ (held a : List Natural) (run : List (Prod Natural (List Natural))),
      nodup held → Natural.le (List.length held) cap → subset a held → flat_valid_after cap a run →
      Eq (List.map Prod.fst run) blocks →
      Natural.le (demand_misses (min_run cap held blocks)) (demand_misses run))
    (fun _ _ _ _ _ _ _ _ => Natural.zero_le _)
    (fun r rest ih held a run hnd hlen hsub hvalid hmap =>
      List.rec
        (motive := fun run => flat_valid_after cap a run → Eq (List.map Prod.fst run) (List.cons r rest) →
          Natural.le (demand_misses (min_run cap held (List.cons r rest))) (demand_misses run))
        (fun _ h => False.elim (List.nil_ne_cons h))
        (fun p run' _ hv hm =>
          let hp : Eq (Prod.fst p) r := List.head_eq hm
          let hrest : Eq (List.map Prod.fst run') rest := List.tail_eq hm
          let a1_sub : subset (List.cons (Prod.fst p) (Prod.snd p)) (List.cons r held) := fun y hy =>
            Bool.by_cases (motive := fun c => Eq (Natural.eqb y (Prod.fst p)) c →
                Eq (List.elem Natural.eqb y (List.cons r held)) Bool.true)
              (Natural.eqb y (Prod.fst p))
              (fun _ e => Bool.or_true_right (Natural.eqb y r) (hsub y (hv.left y (Bool.or_right_of e hy))))
              (fun _ e => Bool.or_true_left _ (Eq.subst (motive := fun z => Eq (Natural.eqb y z) Bool.true) hp e))
              rfl
          Natural.plus_le_plus
            (Eq.subst (motive := fun z => Natural.le (absent Natural.eqb r held) (absent Natural.eqb z (Prod.snd p)))
              (Eq.symm hp)
              (absent_le Natural.eqb r held (Prod.snd p)
                (fun e => hsub r (hv.left r e))))
            (Bool.by_cases
              (motive := fun b => Eq (List.elem Natural.eqb r held) b →
                Natural.le (demand_misses (min_run cap (cond b held (cond (Natural.ltb (List.length held) cap)
                    (List.cons r held) (List.remove (furthest rest r held) (List.cons r held)))) rest))
                  (demand_misses run'))
              (List.elem Natural.eqb r held)
              (fun _ hr =>
                Bool.by_cases
                  (motive := fun c => Eq (Natural.ltb (List.length held) cap) c →
                    Natural.le (demand_misses (min_run cap (cond c (List.cons r held)
                        (List.remove (furthest rest r held) (List.cons r held))) rest))
                      (demand_misses run'))
                  (Natural.ltb (List.length held) cap)
                  -- a miss with a full cache
                  (fun _ hfull =>
                    let hx : nodup (List.cons r held) := And.intro hr hnd
                    let hn := nodup_remove (furthest rest r held) (List.cons r held) hx
                    let hl : Natural.le (List.length (List.remove (furthest rest r held) (List.cons r held))) cap :=
                      Natural.le_of_eq_of_le
                        (Natural.succ_inj (length_remove_mem (furthest rest r held) (List.cons r held) hx
                          (furthest_mem rest held r)))
                        rfl hlen
                    full_step cap r held rest hr hnd hfull
                      (fun a' run'' hs hv'' hm'' => ih _ a' run'' hn hl hs hv'' hm'')
                      run' _ a1_sub hv.right.right hrest)
                  -- a miss with room: MIN keeps everything it may
                  (fun _ hroom => ih (List.cons r held) _ run' (And.intro hr hnd)
                    (Natural.le_of_leb (Natural.succ (List.length held)) cap hroom) a1_sub hv.right.right hrest)
                  rfl)
              -- a hit: MIN holds what it held
              (fun _ hr => ih held _ run' hnd hlen
                (fun y hy => Bool.by_cases (motive := fun c => Eq (Natural.eqb y r) c →
                    Eq (List.elem Natural.eqb y held) Bool.true)
                  (Natural.eqb y r)
                  (fun _ e => Bool.or_right_of e (a1_sub y hy))
                  (fun _ e => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z held) Bool.true)
                    (Eq.symm (Natural.eq_of_eqb y r e)) hr)
                  rfl)
                hv.right.right hrest)
              rfl))
        run hvalid hmap)
    blocks

/-! ## Theorem -/

/-- Belady's MIN is optimal among flat demand caches: on every sequence of
blocks, no valid run of a flat demand cache of `cap` blocks that starts empty
misses fewer times than MIN. -/
theorem min_misses_le (cap : Natural) (blocks : List Natural) (run : List (Prod Natural (List Natural)))
    (h : flat_valid cap run) (hb : Eq (List.map Prod.fst run) blocks) :
    Natural.le (min_misses cap blocks) (demand_misses run) :=
  min_le_run cap blocks List.nil List.nil run True.intro (Natural.zero_le cap) (subset_refl List.nil) h hb
