prelude
import PrefixPool.BeladyOptimal
/-!
# PrefixPool.BeladyForced: Belady's theorem with forced admission

Serving engines keep every block they fetch: after a request, its block is
in the cache (a full cache evicts to make room). Belady's MIN in that classic
form (`forced_min_run`): a hit changes nothing; a miss inserts the block,
and, if `cap` blocks are already held, first evicts the held block whose next
request is furthest in the future (a block never requested again is
furthest). Unlike the bypass form of `Belady.lean`, the requested block is
never the one dropped.

A forced-admission run (`forced_valid cap run`) is a valid flat run of a
demand cache of `cap` blocks (`flat_valid`, `Flat.lean`: it starts empty,
holds at most `cap` blocks, and a block enters only when requested) that
admits every block: what it holds at each step contains the block requested
at the step before (`admits`). It may drop any blocks at any time, so every
eviction policy with forced admission is one.

The theorem (`forced_min_misses_le`, Belady 1966; Mattson et al. 1970): no
forced-admission run of `cap` blocks misses fewer times than forced MIN with
`cap` blocks. The proof is the exchange argument of `BeladyOptimal.lean`,
reusing its runs: at a miss with a full cache, MIN drops `v`, the held block
used furthest in the future; a run that keeps `v` lacks some `u` that MIN
keeps, and `u` is not the requested block, since the run admits it. Holding
`u` in place of `v` (`swap_run`, then `debt_run`) misses no more and still
admits every block (`swap_run_admits`, `debt_run_admits`): `v` is not
requested before `u`, so the block that must be held is never the one swapped out.

Bypass can do strictly better: on `[3, 2, 3]` with one block, bypass MIN
keeps 3 and misses twice; forced MIN must take 2 in and misses three times
(`PrefixPool/Examples.lean`).
-/

/-- Of the held blocks, the first one whose next use in `rest` is furthest
(zero, unused, if nothing is held). -/
noncomputable def furthest_held (rest held : List Natural) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero (fun h t _ => furthest rest h t) held

/-- One request `r` to forced MIN holding `held`, with `rest` the requests
after it: a hit keeps `held`; a miss inserts `r`, first evicting the held
block used furthest in the future when `cap` blocks are held. -/
noncomputable def forced_min_step (cap : Natural) (held : List Natural) (r : Natural) (rest : List Natural) :
    List Natural :=
  cond (List.elem Natural.eqb r held) held
    (cond (Natural.ltb (List.length held) cap) (List.cons r held)
      (List.cons r (List.remove (furthest_held rest held) held)))

/-- Forced MIN's run from `held`: for each request, `Prod.mk block held_before`. -/
noncomputable def forced_min_run (cap : Natural) (held : List Natural) (blocks : List Natural) :
    List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List Natural → List (Prod Natural (List Natural))) (fun _ => List.nil)
    (fun r rest run_rest held => List.cons (Prod.mk r held) (run_rest (forced_min_step cap held r rest)))
    blocks held

/-- Misses of forced MIN with `cap` blocks, starting empty. Meant for `cap`
of at least one: with none, no cache can hold a fetched block (no forced-admission
run of a nonempty sequence exists, so `forced_min_misses_le` says nothing),
and this definition still admits each requested block, holding one.
Python: `pyverify/lean/mirror.py`, `forced_min_misses(blocks, cap)`. -/
noncomputable def forced_min_misses (cap : Natural) (blocks : List Natural) : Natural :=
  demand_misses (forced_min_run cap List.nil blocks)

/-- `admits_after prev run`: every step holds the blocks of `prev` at the
first step, and later the block requested at the step before. -/
def admits_after (prev : List Natural) (run : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => List Natural → Prop) (fun _ => True)
    (fun step _ admits_rest prev => And (subset prev (Prod.snd step)) (admits_rest (List.cons (Prod.fst step) List.nil)))
    run prev

/-- A run of a flat demand cache of `cap` blocks that starts empty and admits
every block it is asked for: after each request, its block is held.
Python: `pyverify/lean/mirror.py`, `forced_valid`. -/
def forced_valid (cap : Natural) (run : List (Prod Natural (List Natural))) : Prop :=
  And (flat_valid cap run) (admits_after List.nil run)

/-! ## Lemmas: the exchanged runs still hold every fetched block -/

/-- The only block of `[y]` is `y`. -/
theorem eq_of_elem_single (x y : Natural) (h : Eq (List.elem Natural.eqb x (List.cons y List.nil)) Bool.true) :
    Eq x y :=
  Natural.eq_of_eqb x y (Bool.or_left_of rfl h)

/-- No block of `[y]` is `v`, when `y` is not. -/
theorem single_ne (y v : Natural) (h : Eq (Natural.eqb y v) Bool.false) :
    ∀ x : Natural, Eq (List.elem Natural.eqb x (List.cons y List.nil)) Bool.true → Eq (Natural.eqb x v) Bool.false :=
  fun x hx => Eq.subst (motive := fun z => Eq (Natural.eqb z v) Bool.false) (Eq.symm (eq_of_elem_single x y hx)) h

/-- Blocks other than `v` that must be held are still held with `v` removed. -/
theorem subset_remove_of_ne (v : Natural) (prev held : List Natural) (h : subset prev held)
    (hne : ∀ x : Natural, Eq (List.elem Natural.eqb x prev) Bool.true → Eq (Natural.eqb x v) Bool.false) :
    subset prev (List.remove v held) :=
  fun x hx => Eq.trans (elem_remove_ne x v held (hne x hx)) (h x hx)

/-- Dropping `v` until its request still admits every block. -/
theorem debt_run_admits (v : Natural) (run : List (Prod Natural (List Natural))) : ∀ prev : List Natural,
    admits_after prev run →
    (∀ x : Natural, Eq (List.elem Natural.eqb x prev) Bool.true → Eq (Natural.eqb x v) Bool.false) →
    admits_after prev (debt_run v run) :=
  List.rec
    (motive := fun run => ∀ prev : List Natural, admits_after prev run →
      (∀ x : Natural, Eq (List.elem Natural.eqb x prev) Bool.true → Eq (Natural.eqb x v) Bool.false) →
      admits_after prev (debt_run v run))
    (fun _ _ _ => True.intro)
    (fun p rest ih prev h hne =>
      And.intro (subset_remove_of_ne v prev (Prod.snd p) h.left hne)
        (Bool.by_cases
          (motive := fun b => Eq (Natural.eqb (Prod.fst p) v) b →
            admits_after (List.cons (Prod.fst p) List.nil) (cond b rest (debt_run v rest)))
          (Natural.eqb (Prod.fst p) v)
          (fun _ e => ih (List.cons (Prod.fst p) List.nil) h.right (single_ne (Prod.fst p) v e))
          (fun _ _ => h.right)
          rfl))
    run

/-- Holding `u` in place of `v`, while `v` is not requested before `u`, still
admits every block. -/
theorem swap_run_admits (u v : Natural) (huv : Eq (Natural.eqb u v) Bool.false)
    (run : List (Prod Natural (List Natural))) : ∀ prev : List Natural,
    admits_after prev run →
    (∀ x : Natural, Eq (List.elem Natural.eqb x prev) Bool.true → Eq (Natural.eqb x v) Bool.false) →
    Natural.le (next_use u (List.map Prod.fst run)) (next_use v (List.map Prod.fst run)) →
    admits_after prev (swap_run u v run) :=
  List.rec
    (motive := fun run => ∀ prev : List Natural, admits_after prev run →
      (∀ x : Natural, Eq (List.elem Natural.eqb x prev) Bool.true → Eq (Natural.eqb x v) Bool.false) →
      Natural.le (next_use u (List.map Prod.fst run)) (next_use v (List.map Prod.fst run)) →
      admits_after prev (swap_run u v run))
    (fun _ _ _ _ => True.intro)
    (fun p rest ih prev h hne hnu =>
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
      let first : subset prev (swap_state u v (Prod.snd p)) :=
        Bool.rec
          (motive := fun c => subset prev (cond c (List.cons u (List.remove v (Prod.snd p))) (Prod.snd p)))
          h.left
          (fun x hx => Bool.or_true_right (Natural.eqb x u)
            (subset_remove_of_ne v prev (Prod.snd p) h.left hne x hx))
          (List.elem Natural.eqb v (Prod.snd p))
      And.intro first
        (Bool.by_cases
          (motive := fun d => Eq (Natural.eqb (Prod.fst p) u) d →
            admits_after (List.cons (Prod.fst p) List.nil)
              (cond d (cond (List.elem Natural.eqb v (Prod.snd p)) (debt_run v rest) rest) (swap_run u v rest)))
          (Natural.eqb (Prod.fst p) u)
          -- not u's request: keep swapping
          (fun _ hsu =>
            ih (List.cons (Prod.fst p) List.nil) h.right (single_ne (Prod.fst p) v (not_v hsu))
              (next_use_shift u v (Prod.fst p) (List.map Prod.fst rest)
                (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) u hsu)
                (Lawful.eqb_false_symm Natural.eqb_lawful (Prod.fst p) v (not_v hsu)) hnu))
          -- u's request: then drop v (or nothing was swapped)
          (fun _ hsu =>
            Bool.rec
              (motive := fun c => admits_after (List.cons (Prod.fst p) List.nil) (cond c (debt_run v rest) rest))
              h.right
              (debt_run_admits v rest (List.cons (Prod.fst p) List.nil) h.right
                (single_ne (Prod.fst p) v
                  (Eq.subst (motive := fun z => Eq (Natural.eqb z v) Bool.false)
                    (Eq.symm (Natural.eq_of_eqb (Prod.fst p) u hsu)) huv)))
              (List.elem Natural.eqb v (Prod.snd p)))
          rfl))
    run

/-! ## Lemmas: the exchange at a miss with a full cache -/

/-- At a miss with a full cache holding `h :: t`, forced MIN drops `v`, the
held block used furthest in the future. Every forced-admission run's next part
can be changed into one that starts from what MIN holds next, with no more
misses: if it keeps `v`, it lacks some `u` that MIN keeps (not the requested
block, which it admits), and `u` replaces `v`. -/
theorem forced_full_step (cap r h : Natural) (t rest : List Natural)
    (hr : Eq (List.elem Natural.eqb r (List.cons h t)) Bool.false) (hnd : nodup (List.cons h t))
    (hfull : Eq (Natural.ltb (List.length (List.cons h t)) cap) Bool.false)
    (ih : ∀ (a prev : List Natural) (run : List (Prod Natural (List Natural))),
      subset a (List.cons r (List.remove (furthest rest h t) (List.cons h t))) → flat_valid_after cap a run →
      admits_after prev run → Eq (List.map Prod.fst run) rest →
      Natural.le (demand_misses (forced_min_run cap (List.cons r (List.remove (furthest rest h t) (List.cons h t))) rest))
        (demand_misses run))
    (run' : List (Prod Natural (List Natural))) (a1 : List Natural) (ha1 : subset a1 (List.cons r (List.cons h t)))
    (hv' : flat_valid_after cap a1 run') (hadm : admits_after (List.cons r List.nil) run')
    (hmap : Eq (List.map Prod.fst run') rest) :
    Natural.le (demand_misses (forced_min_run cap (List.cons r (List.remove (furthest rest h t) (List.cons h t))) rest))
      (demand_misses run') :=
  let held := List.cons h t
  let v := furthest rest h t
  let n := List.cons r (List.remove v held)
  let hvh : Eq (List.elem Natural.eqb v held) Bool.true := furthest_mem rest t h
  let hvr : Eq (Natural.eqb v r) Bool.false := ne_of_elem_absent r v held hr hvh
  let hrv : Eq (Natural.eqb r v) Bool.false := Lawful.eqb_false_symm Natural.eqb_lawful v r hvr
  -- a block of `r :: held` other than `v` is one MIN keeps
  let kept : ∀ y : Natural, Eq (List.elem Natural.eqb y (List.cons r held)) Bool.true → Eq (Natural.eqb y v) Bool.false →
      Eq (List.elem Natural.eqb y n) Bool.true :=
    fun y hy hyv => Eq.trans (congrArg (Bool.or (Natural.eqb y r)) (elem_remove_ne y v held hyv)) hy
  List.rec
    (motive := fun run' => flat_valid_after cap a1 run' → admits_after (List.cons r List.nil) run' →
      Eq (List.map Prod.fst run') rest → Natural.le (demand_misses (forced_min_run cap n rest)) (demand_misses run'))
    (fun _ _ hm => ih List.nil List.nil List.nil (fun _ e => False.elim (Bool.false_ne_true e)) True.intro True.intro hm)
    (fun q run2 _ hv ha hm =>
      let hvt : flat_valid_after cap (Prod.snd q) (List.cons q run2) := And.intro (subset_refl _) hv.right
      let tx : subset (Prod.snd q) (List.cons r held) := subset_trans hv.left ha1
      let hrq : Eq (List.elem Natural.eqb r (Prod.snd q)) Bool.true :=
        ha.left r (Bool.or_true_left Bool.false (Natural.eqb_self r))
      Bool.by_cases
        (motive := fun c => Eq (List.elem Natural.eqb v (Prod.snd q)) c →
          Natural.le (demand_misses (forced_min_run cap n rest)) (demand_misses (List.cons q run2)))
        (List.elem Natural.eqb v (Prod.snd q))
        -- the run drops v too: it starts within what MIN holds
        (fun _ hv0 => ih (Prod.snd q) (List.cons r List.nil) (List.cons q run2)
          (fun y hy => kept y (tx y hy) (ne_of_elem_absent v y (Prod.snd q) hv0 hy))
          hvt ha hm)
        -- the run keeps v: it lacks some u that MIN keeps; swap them
        (fun _ hv1 =>
          Bool.by_cases
            (motive := fun c => Eq (all_in n (Prod.snd q)) c →
              Natural.le (demand_misses (forced_min_run cap n rest)) (demand_misses (List.cons q run2)))
            (all_in n (Prod.snd q))
            (fun _ hall => Exists.rec
              (motive := fun _ => Natural.le (demand_misses (forced_min_run cap n rest)) (demand_misses (List.cons q run2)))
              (fun u hu =>
                -- u is not r: the run holds r (it admits it) and lacks u
                let hur : Eq (Natural.eqb u r) Bool.false :=
                  Lawful.eqb_false_symm Natural.eqb_lawful r u (ne_of_elem_absent u r (Prod.snd q) hu.right hrq)
                let hu_rm : Eq (List.elem Natural.eqb u (List.remove v held)) Bool.true := Bool.or_right_of hur hu.left
                let huv : Eq (Natural.eqb u v) Bool.false := ne_of_elem_remove v u held hu_rm
                let hnu : Natural.le (next_use u (List.map Prod.fst (List.cons q run2)))
                    (next_use v (List.map Prod.fst (List.cons q run2))) :=
                  Eq.subst (motive := fun l => Natural.le (next_use u l) (next_use v l)) (Eq.symm hm)
                    (furthest_max rest t h u (elem_remove v u held hu_rm))
                let hs := swap_run_ok cap u v (List.cons q run2) (Prod.snd q) n hvt hu.right
                  (fun y hy hyv => kept y (tx y hy) hyv) (fun _ => hu.left) hnu
                Natural.le_trans
                  (ih n (List.cons r List.nil) (swap_run u v (List.cons q run2)) (subset_refl n) hs.left
                    (swap_run_admits u v huv (List.cons q run2) (List.cons r List.nil) ha (single_ne r v hrv) hnu)
                    (Eq.trans hs.right.right hm))
                  hs.right.left)
              (missing_of_all_in (Prod.snd q) n hall))
            -- MIN's blocks all in the run's state, and v too: cap + 1 blocks, impossible
            (fun _ hall =>
              let hvn : Eq (List.elem Natural.eqb v n) Bool.false := Bool.or_false hvr (elem_remove_self v held)
              let hnd_n : nodup (List.cons v n) :=
                And.intro hvn (And.intro (not_elem_remove v r held hr) (nodup_remove v held hnd))
              False.elim (Natural.not_succ_le_self cap
                (Natural.le_trans
                  (Natural.succ_le_succ (Natural.le_of_ltb_false hfull))
                  (Natural.le_trans
                    (Natural.le_of_eq_of_le rfl
                      (Eq.trans (congrArg Natural.succ (length_remove_mem v held hnd hvh))
                        (Eq.symm (count_nodup (List.cons v n) hnd_n)))
                      (Natural.le_refl (Natural.succ (List.length held))))
                    (Natural.le_trans
                      (count_mono (List.cons v n) (Prod.snd q) (fun y hy =>
                        Bool.by_cases (motive := fun c => Eq (Natural.eqb y v) c →
                            Eq (List.elem Natural.eqb y (Prod.snd q)) Bool.true)
                          (Natural.eqb y v)
                          (fun _ e => subset_of_all_in (Prod.snd q) n hall y (Bool.or_right_of e hy))
                          (fun _ e => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z (Prod.snd q)) Bool.true)
                            (Eq.symm (Natural.eq_of_eqb y v e)) hv1)
                          rfl))
                      hv.right.left)))))
            rfl)
        rfl)
    run' hv' hadm hmap

/-- The same step, for any held list: with nothing held the cache is full
only when `cap` is zero, and then no run admits the requested block. -/
theorem forced_full_case (cap r : Natural) (rest : List Natural)
    (ih : ∀ (held' a prev : List Natural) (run : List (Prod Natural (List Natural))),
      nodup held' → Natural.le (List.length held') cap → subset a held' → flat_valid_after cap a run →
      admits_after prev run → Eq (List.map Prod.fst run) rest →
      Natural.le (demand_misses (forced_min_run cap held' rest)) (demand_misses run))
    (run' : List (Prod Natural (List Natural))) (a1 : List Natural)
    (hv' : flat_valid_after cap a1 run') (hadm : admits_after (List.cons r List.nil) run')
    (hmap : Eq (List.map Prod.fst run') rest) (held : List Natural) :
    Eq (List.elem Natural.eqb r held) Bool.false → nodup held → Natural.le (List.length held) cap →
    Eq (Natural.ltb (List.length held) cap) Bool.false → subset a1 (List.cons r held) →
    Natural.le (demand_misses (forced_min_run cap (List.cons r (List.remove (furthest_held rest held) held)) rest))
      (demand_misses run') :=
  List.rec
    (motive := fun held => Eq (List.elem Natural.eqb r held) Bool.false → nodup held → Natural.le (List.length held) cap →
      Eq (Natural.ltb (List.length held) cap) Bool.false → subset a1 (List.cons r held) →
      Natural.le (demand_misses (forced_min_run cap (List.cons r (List.remove (furthest_held rest held) held)) rest))
        (demand_misses run'))
    -- nothing held and full: cap is zero
    (fun _ _ _ hfull _ =>
      List.rec
        (motive := fun run' => flat_valid_after cap a1 run' → admits_after (List.cons r List.nil) run' →
          Eq (List.map Prod.fst run') rest →
          Natural.le (demand_misses (forced_min_run cap (List.cons r (List.remove (furthest_held rest List.nil) List.nil)) rest))
            (demand_misses run'))
        (fun _ _ hm => Eq.subst
          (motive := fun l => Natural.le
            (demand_misses (forced_min_run cap (List.cons r (List.remove (furthest_held l List.nil) List.nil)) l))
            (demand_misses (List.nil : List (Prod Natural (List Natural)))))
          hm (Natural.le_refl Natural.zero))
        (fun q _ _ hv ha _ => False.elim (Natural.not_succ_le_zero
          (Natural.le_trans
            (Natural.le_trans (count_mono (List.cons r List.nil) (Prod.snd q) ha.left) hv.right.left)
            (Natural.le_of_ltb_false hfull) : Natural.le (Natural.succ Natural.zero) Natural.zero)))
        run' hv' hadm hmap)
    (fun h t _ hr hnd hlen hfull ha1 =>
      let v := furthest rest h t
      let hvh : Eq (List.elem Natural.eqb v (List.cons h t)) Bool.true := furthest_mem rest t h
      let hn : nodup (List.cons r (List.remove v (List.cons h t))) :=
        And.intro (not_elem_remove v r (List.cons h t) hr) (nodup_remove v (List.cons h t) hnd)
      let hl : Natural.le (List.length (List.cons r (List.remove v (List.cons h t)))) cap :=
        Natural.le_of_eq_of_le (length_remove_mem v (List.cons h t) hnd hvh) rfl hlen
      forced_full_step cap r h t rest hr hnd hfull
        (fun a prev run hs hv ha hm => ih _ a prev run hn hl hs hv ha hm)
        run' a1 ha1 hv' hadm hmap)
    held

/-- Forced MIN from `held` misses no more than any forced-admission run from
within `held` on the same requests. -/
theorem forced_min_le_run (cap : Natural) (blocks : List Natural) : ∀ (held a prev : List Natural)
    (run : List (Prod Natural (List Natural))),
    nodup held → Natural.le (List.length held) cap → subset a held → flat_valid_after cap a run →
    admits_after prev run → Eq (List.map Prod.fst run) blocks →
    Natural.le (demand_misses (forced_min_run cap held blocks)) (demand_misses run) :=
  List.rec
    (motive := fun blocks => ∀ (held a prev : List Natural) (run : List (Prod Natural (List Natural))),
      nodup held → Natural.le (List.length held) cap → subset a held → flat_valid_after cap a run →
      admits_after prev run → Eq (List.map Prod.fst run) blocks →
      Natural.le (demand_misses (forced_min_run cap held blocks)) (demand_misses run))
    (fun _ _ _ _ _ _ _ _ _ _ => Natural.zero_le _)
    (fun r rest ih held a prev run hnd hlen hsub hvalid hadm hmap =>
      List.rec
        (motive := fun run => flat_valid_after cap a run → admits_after prev run →
          Eq (List.map Prod.fst run) (List.cons r rest) →
          Natural.le (demand_misses (forced_min_run cap held (List.cons r rest))) (demand_misses run))
        (fun _ _ h => False.elim (List.nil_ne_cons h))
        (fun p run' _ hv ha hm =>
          let hp : Eq (Prod.fst p) r := List.head_eq hm
          let hrest : Eq (List.map Prod.fst run') rest := List.tail_eq hm
          let a1_sub : subset (List.cons (Prod.fst p) (Prod.snd p)) (List.cons r held) := fun y hy =>
            Bool.by_cases (motive := fun c => Eq (Natural.eqb y (Prod.fst p)) c →
                Eq (List.elem Natural.eqb y (List.cons r held)) Bool.true)
              (Natural.eqb y (Prod.fst p))
              (fun _ e => Bool.or_true_right (Natural.eqb y r) (hsub y (hv.left y (Bool.or_right_of e hy))))
              (fun _ e => Bool.or_true_left _ (Eq.subst (motive := fun z => Eq (Natural.eqb y z) Bool.true) hp e))
              rfl
          let ha' : admits_after (List.cons r List.nil) run' :=
            Eq.subst (motive := fun z => admits_after (List.cons z List.nil) run') hp ha.right
          Natural.plus_le_plus
            (Eq.subst (motive := fun z => Natural.le (absent Natural.eqb r held) (absent Natural.eqb z (Prod.snd p)))
              (Eq.symm hp)
              (absent_le Natural.eqb r held (Prod.snd p) (fun e => hsub r (hv.left r e))))
            (Bool.by_cases
              (motive := fun b => Eq (List.elem Natural.eqb r held) b →
                Natural.le (demand_misses (forced_min_run cap (cond b held (cond (Natural.ltb (List.length held) cap)
                    (List.cons r held) (List.cons r (List.remove (furthest_held rest held) held)))) rest))
                  (demand_misses run'))
              (List.elem Natural.eqb r held)
              (fun _ hr =>
                Bool.by_cases
                  (motive := fun c => Eq (Natural.ltb (List.length held) cap) c →
                    Natural.le (demand_misses (forced_min_run cap (cond c (List.cons r held)
                        (List.cons r (List.remove (furthest_held rest held) held))) rest))
                      (demand_misses run'))
                  (Natural.ltb (List.length held) cap)
                  -- a miss with a full cache: the exchange
                  (fun _ hfull =>
                    forced_full_case cap r rest ih run' _ hv.right.right ha' hrest held hr hnd hlen hfull a1_sub)
                  -- a miss with room: MIN inserts the block, as every run must
                  (fun _ hroom => ih (List.cons r held) _ (List.cons r List.nil) run' (And.intro hr hnd)
                    (Natural.le_of_leb (Natural.succ (List.length held)) cap hroom) a1_sub hv.right.right ha' hrest)
                  rfl)
              -- a hit: MIN holds what it held
              (fun _ hr => ih held _ (List.cons r List.nil) run' hnd hlen
                (fun y hy => Bool.by_cases (motive := fun c => Eq (Natural.eqb y r) c →
                    Eq (List.elem Natural.eqb y held) Bool.true)
                  (Natural.eqb y r)
                  (fun _ e => Bool.or_right_of e (a1_sub y hy))
                  (fun _ e => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z held) Bool.true)
                    (Eq.symm (Natural.eq_of_eqb y r e)) hr)
                  rfl)
                hv.right.right ha' hrest)
              rfl))
        run hvalid hadm hmap)
    blocks

/-! ## Lemmas: forced MIN is a forced-admission run (with at least one block) -/

/-- What forced MIN holds next: at most what it held plus the requested block,
which it holds; no repeats; at most `cap + 1` blocks. -/
theorem forced_min_step_ok (cap r : Natural) (rest : List Natural) (held : List Natural)
    (hnd : nodup held) (hlen : Natural.le (List.length held) (Natural.succ cap)) :
    And (subset (forced_min_step (Natural.succ cap) held r rest) (List.cons r held))
      (And (Eq (List.elem Natural.eqb r (forced_min_step (Natural.succ cap) held r rest)) Bool.true)
        (And (nodup (forced_min_step (Natural.succ cap) held r rest))
          (Natural.le (List.length (forced_min_step (Natural.succ cap) held r rest)) (Natural.succ cap)))) :=
  let ok := fun (next : List Natural) =>
    And (subset next (List.cons r held))
      (And (Eq (List.elem Natural.eqb r next) Bool.true)
        (And (nodup next) (Natural.le (List.length next) (Natural.succ cap))))
  let admitted : Eq (List.elem Natural.eqb r (List.cons r held)) Bool.true :=
    Bool.or_true_left (List.elem Natural.eqb r held) (Natural.eqb_self r)
  Bool.by_cases
    (motive := fun b => Eq (List.elem Natural.eqb r held) b →
      ok (cond b held (cond (Natural.ltb (List.length held) (Natural.succ cap)) (List.cons r held)
        (List.cons r (List.remove (furthest_held rest held) held)))))
    (List.elem Natural.eqb r held)
    -- a miss: r is new
    (fun _ hmiss =>
      Bool.by_cases
        (motive := fun c => Eq (Natural.ltb (List.length held) (Natural.succ cap)) c →
          ok (cond c (List.cons r held) (List.cons r (List.remove (furthest_held rest held) held))))
        (Natural.ltb (List.length held) (Natural.succ cap))
        -- full: evict the held block used furthest in the future (something is held)
        (fun _ hfull =>
          List.rec
            (motive := fun held => nodup held → Natural.le (List.length held) (Natural.succ cap) →
              Eq (List.elem Natural.eqb r held) Bool.false →
              Eq (Natural.ltb (List.length held) (Natural.succ cap)) Bool.false →
              And (subset (List.cons r (List.remove (furthest_held rest held) held)) (List.cons r held))
                (And (Eq (List.elem Natural.eqb r (List.cons r (List.remove (furthest_held rest held) held))) Bool.true)
                  (And (nodup (List.cons r (List.remove (furthest_held rest held) held)))
                    (Natural.le (List.length (List.cons r (List.remove (furthest_held rest held) held))) (Natural.succ cap)))))
            (fun _ _ _ hf => False.elim (Bool.false_ne_true (Eq.symm hf)))
            (fun h t _ hnd hlen hmiss _ =>
              let v := furthest rest h t
              And.intro
                (fun y hy => Bool.or_mono_right (Natural.eqb y r) (elem_remove v y (List.cons h t)) hy)
                (And.intro (Bool.or_true_left _ (Natural.eqb_self r))
                  (And.intro
                    (And.intro (not_elem_remove v r (List.cons h t) hmiss) (nodup_remove v (List.cons h t) hnd))
                    (Natural.le_of_eq_of_le (length_remove_mem v (List.cons h t) hnd (furthest_mem rest t h)) rfl hlen))))
            held hnd hlen hmiss hfull)
        -- room: insert r
        (fun _ hroom => And.intro (subset_refl _)
          (And.intro admitted
            (And.intro (And.intro hmiss hnd) (Natural.le_of_leb (Natural.succ (List.length held)) (Natural.succ cap) hroom))))
        rfl)
    -- a hit: nothing changes
    (fun _ hhit => And.intro (subset_cons r held) (And.intro hhit (And.intro hnd hlen)))
    rfl

theorem forced_min_valid_after (cap : Natural) (blocks : List Natural) : ∀ held allowed prev : List Natural,
    subset held allowed → subset prev held → nodup held → Natural.le (List.length held) (Natural.succ cap) →
    And (flat_valid_after (Natural.succ cap) allowed (forced_min_run (Natural.succ cap) held blocks))
      (admits_after prev (forced_min_run (Natural.succ cap) held blocks)) :=
  List.rec
    (motive := fun blocks => ∀ held allowed prev : List Natural,
      subset held allowed → subset prev held → nodup held → Natural.le (List.length held) (Natural.succ cap) →
      And (flat_valid_after (Natural.succ cap) allowed (forced_min_run (Natural.succ cap) held blocks))
        (admits_after prev (forced_min_run (Natural.succ cap) held blocks)))
    (fun _ _ _ _ _ _ _ => And.intro True.intro True.intro)
    (fun r rest ih held _allowed _prev hsub hprev hnd hlen =>
      let ok := forced_min_step_ok cap r rest held hnd hlen
      let next := ih (forced_min_step (Natural.succ cap) held r rest) (List.cons r held) (List.cons r List.nil)
        ok.left
        (fun x hx => Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z (forced_min_step (Natural.succ cap) held r rest)) Bool.true)
          (Eq.symm (eq_of_elem_single x r hx)) ok.right.left)
        ok.right.right.left ok.right.right.right
      And.intro
        (And.intro hsub (And.intro (Natural.le_trans (distinct_le_length held) hlen) next.left))
        (And.intro hprev next.right))
    blocks

theorem forced_min_run_blocks (cap : Natural) (blocks : List Natural) : ∀ held : List Natural,
    Eq (List.map Prod.fst (forced_min_run cap held blocks)) blocks :=
  List.rec
    (motive := fun blocks => ∀ held : List Natural, Eq (List.map Prod.fst (forced_min_run cap held blocks)) blocks)
    (fun _ => rfl)
    (fun r rest ih held => congrArg (List.cons r) (ih (forced_min_step cap held r rest)))
    blocks

/-! ## Theorem -/

/-- Belady's theorem with forced admission: on every sequence of block
requests, no flat demand cache of `cap` blocks that starts empty and admits
every block it is asked for misses fewer times than forced MIN with `cap`
blocks. -/
theorem forced_min_misses_le (cap : Natural) (blocks : List Natural) (run : List (Prod Natural (List Natural)))
    (h : forced_valid cap run) (hb : Eq (List.map Prod.fst run) blocks) :
    Natural.le (forced_min_misses cap blocks) (demand_misses run) :=
  forced_min_le_run cap blocks List.nil List.nil List.nil run True.intro (Natural.zero_le cap) (subset_refl List.nil)
    h.left h.right hb

/-- Forced MIN with at least one block is a forced-admission run of that many
blocks on exactly the requested blocks (so its misses are achieved). With no
block, no run of a nonempty sequence admits its blocks. -/
theorem forced_min_run_valid (cap : Natural) (blocks : List Natural) :
    And (forced_valid (Natural.succ cap) (forced_min_run (Natural.succ cap) List.nil blocks))
      (Eq (List.map Prod.fst (forced_min_run (Natural.succ cap) List.nil blocks)) blocks) :=
  And.intro
    (forced_min_valid_after cap blocks List.nil List.nil List.nil (subset_refl List.nil) (subset_refl List.nil)
      True.intro (Natural.zero_le _))
    (forced_min_run_blocks (Natural.succ cap) blocks List.nil)
