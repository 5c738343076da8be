prelude
import PrefixPool.Flat
import PrefixPool.StackDistance
/-!
# PrefixPool.Belady: Belady's MIN is a demand cache (the first step of the moonshot)

Belady's MIN in bypass form, on a flat sequence of blocks: a hit changes
nothing; a miss keeps the block if fewer than `cap` are held; otherwise, of
the held blocks and the requested one, it drops the one whose next request is
furthest in the future (a block never requested again is furthest), which may
be the requested block itself (bypass).

Proved here (`min_run_valid`): MIN's run is a valid run of a flat demand cache
of `cap` blocks (`flat_valid`, `Flat.lean`) on exactly the requested blocks.
So MIN's misses are achievable by a demand cache of `cap` blocks.

Proved elsewhere: that no valid flat run misses fewer times than MIN (Belady
1966; Mattson et al. 1970), `min_misses_le` in `BeladyOptimal.lean`; and, on
prefix-closed chains, that MIN's run cut into requests is a valid prefix run
with the same misses, `min_run_is_prefix_run` in `BeladyPrefix.lean`.
-/

/-- How many requests of `rest` come before the next request of `b`; the
length of `rest` if `b` is not requested again (later than any request). -/
noncomputable def next_use (b : Natural) (rest : List Natural) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero
    (fun x _ n => cond (Natural.eqb b x) Natural.zero (Natural.succ n)) rest

/-- Of `best` and the blocks of `cands`, the first one whose next use in
`rest` is furthest. -/
noncomputable def furthest (rest : List Natural) (best : Natural) (cands : List Natural) : Natural :=
  List.rec (motive := fun _ => Natural → Natural) (fun best => best)
    (fun c _ go best => go (cond (Natural.ltb (next_use best rest) (next_use c rest)) c best))
    cands best

/-- One request `r` to MIN holding `held`, with `rest` the requests after it. -/
noncomputable def min_step (cap : Natural) (held : List Natural) (r : Natural) (rest : List Natural) : List Natural :=
  cond (List.elem Natural.eqb r held) held
    (cond (Natural.ltb (List.length held) cap) (List.cons r held)
      (List.remove (furthest rest r held) (List.cons r held)))

/-- MIN's run from `held`: for each request, `Prod.mk block held_before`. -/
noncomputable def min_run (cap : Natural) (held : List Natural) (blocks : List Natural) :
    List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List Natural → List (Prod Natural (List Natural))) (fun _ => List.nil)
    (fun r rest run_rest held => List.cons (Prod.mk r held) (run_rest (min_step cap held r rest)))
    blocks held

/-- Misses of MIN with `cap` blocks, starting empty.
Python: `pyverify/lean/bridge.py`, `flat_min_misses(blocks, cap)`. -/
noncomputable def min_misses (cap : Natural) (blocks : List Natural) : Natural :=
  demand_misses (min_run cap List.nil blocks)

/-! ## Lemmas -/

theorem Natural.succ_inj {a b : Natural} (h : Eq (Natural.succ a) (Natural.succ b)) : Eq a b :=
  congrArg (fun n => Natural.rec (motive := fun _ => Natural) Natural.zero (fun k _ => k) n) h

/-- `leb` says `≤`. -/
theorem Natural.le_of_leb (a : Natural) : ∀ b : Natural, Eq (Natural.leb a b) Bool.true → Natural.le a b :=
  Natural.rec (motive := fun a => ∀ b : Natural, Eq (Natural.leb a b) Bool.true → Natural.le a b)
    (fun b _ => Natural.zero_le b)
    (fun a' ih b => Natural.rec
      (motive := fun b => Eq (Natural.leb (Natural.succ a') b) Bool.true → Natural.le (Natural.succ a') b)
      (fun h => False.elim (Bool.false_ne_true h))
      (fun b' _ h => Exists.rec (motive := fun _ => Natural.le (Natural.succ a') (Natural.succ b'))
        (fun k e => Exists.intro k (Eq.trans (Natural.succ_plus a' k) (congrArg Natural.succ e)))
        (ih b' h))
      b)
    a

theorem absent_le_one {α : Type u} (eqb : α → α → Bool) (a : α) (xs : List α) :
    Natural.le (absent eqb a xs) (Natural.succ Natural.zero) :=
  Bool.rec
    (motive := fun b => Natural.le (cond b Natural.zero (Natural.succ Natural.zero)) (Natural.succ Natural.zero))
    (Natural.le_refl _) (Natural.zero_le _) (List.elem eqb a xs)

/-- A list holds at most as many distinct blocks as it has entries. -/
theorem distinct_le_length (xs : List Natural) : Natural.le (distinct_count xs) (List.length xs) :=
  List.rec (motive := fun xs => Natural.le (count_distinct Natural.eqb xs) (List.length xs))
    (Natural.le_refl Natural.zero)
    (fun x rest ih =>
      Natural.le_of_eq_of_le rfl (Natural.one_plus (List.length rest))
        (Natural.plus_le_plus (absent_le_one Natural.eqb x rest) ih))
    xs

/-- The block `furthest` picks is one of the candidates. -/
theorem furthest_mem (rest : List Natural) (cands : List Natural) : ∀ best : Natural,
    Eq (List.elem Natural.eqb (furthest rest best cands) (List.cons best cands)) Bool.true :=
  List.rec
    (motive := fun cands => ∀ best : Natural,
      Eq (List.elem Natural.eqb (furthest rest best cands) (List.cons best cands)) Bool.true)
    (fun best => Bool.or_true_left Bool.false (Natural.eqb_self best))
    (fun c cs ih best =>
      Bool.by_cases
        (motive := fun b =>
          Eq (List.elem Natural.eqb (furthest rest (cond b c best) cs) (List.cons best (List.cons c cs))) Bool.true)
        (Natural.ltb (next_use best rest) (next_use c rest))
        (fun _ => Bool.or_mono_right (Natural.eqb (furthest rest best cs) best)
          (fun h => Bool.or_true_right (Natural.eqb (furthest rest best cs) c) h) (ih best))
        (fun _ => Bool.or_true_right (Natural.eqb (furthest rest c cs) best) (ih c)))
    cands

/-- What MIN holds next: at most what it held plus the requested block, without
repeats, and at most `cap` blocks. -/
theorem min_step_ok (cap : Natural) (held : List Natural) (r : Natural) (rest : List Natural)
    (hnd : nodup held) (hlen : Natural.le (List.length held) cap) :
    And (subset (min_step cap held r rest) (List.cons r held))
      (And (nodup (min_step cap held r rest)) (Natural.le (List.length (min_step cap held r rest)) cap)) :=
  Bool.by_cases
    (motive := fun b => Eq (List.elem Natural.eqb r held) b →
      And (subset (cond b held (cond (Natural.ltb (List.length held) cap) (List.cons r held)
            (List.remove (furthest rest r held) (List.cons r held)))) (List.cons r held))
        (And (nodup (cond b held (cond (Natural.ltb (List.length held) cap) (List.cons r held)
            (List.remove (furthest rest r held) (List.cons r held)))))
          (Natural.le (List.length (cond b held (cond (Natural.ltb (List.length held) cap) (List.cons r held)
            (List.remove (furthest rest r held) (List.cons r held))))) cap)))
    (List.elem Natural.eqb r held)
    -- a miss: r is new
    (fun _ hmiss =>
      let hnd' : nodup (List.cons r held) := And.intro hmiss hnd
      Bool.by_cases
        (motive := fun c => Eq (Natural.ltb (List.length held) cap) c →
          And (subset (cond c (List.cons r held) (List.remove (furthest rest r held) (List.cons r held))) (List.cons r held))
            (And (nodup (cond c (List.cons r held) (List.remove (furthest rest r held) (List.cons r held))))
              (Natural.le (List.length (cond c (List.cons r held) (List.remove (furthest rest r held) (List.cons r held)))) cap)))
        (Natural.ltb (List.length held) cap)
        -- full: drop the block used furthest in the future
        (fun _ _ =>
          And.intro (fun a h => elem_remove (furthest rest r held) a (List.cons r held) h)
            (And.intro (nodup_remove (furthest rest r held) (List.cons r held) hnd')
              (Natural.le_of_eq_of_le
                (Natural.succ_inj (length_remove_mem (furthest rest r held) (List.cons r held) hnd'
                  (furthest_mem rest held r)))
                rfl hlen)))
        -- room: keep it
        (fun _ hroom => And.intro (subset_refl _)
          (And.intro hnd' (Natural.le_of_leb (Natural.succ (List.length held)) cap hroom)))
        rfl)
    -- a hit: nothing changes
    (fun _ _ => And.intro (subset_cons r held) (And.intro hnd hlen))
    rfl

theorem min_run_valid_after (cap : Natural) (blocks : List Natural) : ∀ held allowed : List Natural,
    subset held allowed → nodup held → Natural.le (List.length held) cap →
    flat_valid_after cap allowed (min_run cap held blocks) :=
  List.rec
    (motive := fun blocks => ∀ held allowed : List Natural,
      subset held allowed → nodup held → Natural.le (List.length held) cap →
      flat_valid_after cap allowed (min_run cap held blocks))
    (fun _ _ _ _ _ => True.intro)
    (fun r rest ih held _allowed hsub hnd hlen =>
      And.intro hsub
        (And.intro (Natural.le_trans (distinct_le_length held) hlen)
          (ih (min_step cap held r rest) (List.cons r held)
            (min_step_ok cap held r rest hnd hlen).left
            (min_step_ok cap held r rest hnd hlen).right.left
            (min_step_ok cap held r rest hnd hlen).right.right)))
    blocks

theorem min_run_blocks (cap : Natural) (blocks : List Natural) : ∀ held : List Natural,
    Eq (List.map Prod.fst (min_run cap held blocks)) blocks :=
  List.rec
    (motive := fun blocks => ∀ held : List Natural, Eq (List.map Prod.fst (min_run cap held blocks)) blocks)
    (fun _ => rfl)
    (fun r rest ih held => congrArg (List.cons r) (ih (min_step cap held r rest)))
    blocks

/-! ## Theorem -/

/-- Belady's MIN (bypass form) with `cap` blocks is a flat demand cache of
`cap` blocks: its run is valid and serves exactly the requested blocks. -/
theorem min_run_valid (cap : Natural) (blocks : List Natural) :
    And (flat_valid cap (min_run cap List.nil blocks)) (Eq (List.map Prod.fst (min_run cap List.nil blocks)) blocks) :=
  And.intro
    (min_run_valid_after cap blocks List.nil List.nil (subset_refl List.nil) True.intro (Natural.zero_le cap))
    (min_run_blocks cap blocks List.nil)
