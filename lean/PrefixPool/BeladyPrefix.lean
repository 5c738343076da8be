prelude
import PrefixPool.BeladyOptimal
/-!
# PrefixPool.BeladyPrefix: on prefix-closed chains, MIN's run is a prefix-cache run

The other half of "the fewest misses of a capacitated longest-prefix cache
equals Belady's MIN on the flattened block sequence". `prefix_run_is_flat_run`
(`Flat.lean`) and `min_misses_le` (`BeladyOptimal.lean`) give the lower bound;
here MIN's own run, cut into the requests' chains, is a valid prefix run with
exactly MIN's misses (`min_run_is_prefix_run`).

The invariant (`min_inv`), before each position of the flattened sequence:
a held block whose parent is not held is never requested again (MIN in
`Belady.lean` keeps dead blocks while there is room, so they need not be
parent-closed); and the block just requested is held, or the cache is full
and every held block is used no later than it. A child's every request
follows its parent's (`flat_fits`), so a live child is used strictly later
than its parent (`fits_dead`), and MIN, which drops the candidate used
furthest, never keeps a live child without its parent. Hence a block a
request misses is not held at the next step, and the request's next block
(its child) is not held either: MIN's flat hits of a request are a prefix of
its chain, as the prefix cache counts them.
-/

/-- `flat_fits parent prev s`: every block of `s` follows its parent, as
`parent` says: if its parent is a block, that block is the one just before
it (`prev` before the first). -/
def flat_fits (parent : Natural → Parent) (prev : Parent) (s : List Natural) : Prop :=
  List.rec (motive := fun _ => Parent → Prop) (fun _ => True)
    (fun y _ fits_rest prev =>
      And (∀ a : Natural, Eq (parent y) (Parent.block a) → Eq prev (Parent.block a))
        (fits_rest (Parent.block y)))
    s prev

/-- What MIN's state satisfies before the blocks `s`, `prev` the block just
requested (the root at the start). -/
def min_inv (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (s : List Natural) : Prop :=
  And (flat_fits parent prev s)
    (And (∀ x a : Natural, Eq (parent x) (Parent.block a) → Eq (List.elem Natural.eqb x held) Bool.true →
          Eq (List.elem Natural.eqb a held) Bool.false → Eq (List.elem Natural.eqb x s) Bool.false)
      (And (∀ z : Natural, Eq prev (Parent.block z) → Eq (List.elem Natural.eqb z held) Bool.false →
            And (Eq (Natural.ltb (List.length held) cap) Bool.false)
              (∀ c : Natural, Eq (List.elem Natural.eqb c held) Bool.true →
                Natural.le (next_use c s) (next_use z s)))
        (∀ x : Natural, Eq (parent x) (Parent.block x) → Eq (List.elem Natural.eqb x s) Bool.false)))

/-! ## Next uses along a sequence that fits -/

theorem next_use_ne (x r : Natural) (rest : List Natural) (h : Eq (Natural.eqb x r) Bool.false) :
    Eq (next_use x (List.cons r rest)) (Natural.succ (next_use x rest)) :=
  congrArg (fun b => cond b Natural.zero (Natural.succ (next_use x rest))) h

theorem next_use_eq (x r : Natural) (rest : List Natural) (h : Eq (Natural.eqb x r) Bool.true) :
    Eq (next_use x (List.cons r rest)) Natural.zero :=
  congrArg (fun b => cond b Natural.zero (Natural.succ (next_use x rest))) h

theorem eqb_false_of_ne {a b : Natural} (h : Eq a b → False) : Eq (Natural.eqb a b) Bool.false :=
  Bool.by_cases (motive := fun c => Eq c Bool.false) (Natural.eqb a b)
    (fun _ => rfl) (fun e => False.elim (h (Natural.eq_of_eqb a b e)))

/-- A child used no sooner than its parent is not used at all, unless its
parent is the block just before. -/
theorem fits_dead (parent : Natural → Parent) (x a : Natural) (hxa : Eq (parent x) (Parent.block a))
    (s : List Natural) : ∀ prev : Parent, flat_fits parent prev s → (Eq prev (Parent.block a) → False) →
      Natural.le (next_use x s) (next_use a s) → Eq (List.elem Natural.eqb x s) Bool.false :=
  List.rec
    (motive := fun s => ∀ prev : Parent, flat_fits parent prev s → (Eq prev (Parent.block a) → False) →
      Natural.le (next_use x s) (next_use a s) → Eq (List.elem Natural.eqb x s) Bool.false)
    (fun _ _ _ _ => rfl)
    (fun y s' ih _prev hf hne hle =>
      Bool.by_cases (motive := fun c => Eq (Natural.eqb x y) c → Eq (List.elem Natural.eqb x (List.cons y s')) Bool.false)
        (Natural.eqb x y)
        (fun _ hxy =>
          Bool.by_cases (motive := fun c => Eq (Natural.eqb a y) c → Eq (List.elem Natural.eqb x (List.cons y s')) Bool.false)
            (Natural.eqb a y)
            (fun _ hay =>
              Bool.or_false hxy
                (ih (Parent.block y) hf.right
                  (fun h => Bool.false_ne_true (Eq.trans (Eq.symm hay)
                    (eqb_of_eq (Eq.symm (Parent.block_inj h)))))
                  (Natural.le_of_succ_le_succ
                    (Natural.le_of_eq_of_le (next_use_ne x y s' hxy) (next_use_ne a y s' hay) hle))))
            (fun _ hay => False.elim (Natural.not_succ_le_zero
              (Natural.le_of_eq_of_le (next_use_ne x y s' hxy) (next_use_eq a y s' hay) hle)))
            rfl)
        (fun _ hxy => False.elim (hne (hf.left a
          (Eq.subst (motive := fun z => Eq (parent z) (Parent.block a)) (Natural.eq_of_eqb x y hxy) hxa))))
        rfl)
    s

/-! ## One step of MIN keeps the invariant -/

theorem elem_tail_false (x r : Natural) (rest : List Natural)
    (h : Eq (List.elem Natural.eqb x (List.cons r rest)) Bool.false) : Eq (List.elem Natural.eqb x rest) Bool.false :=
  @Bool.or_eq_false_right (Natural.eqb x r) (List.elem Natural.eqb x rest) h

theorem elem_head_false (x r : Natural) (rest : List Natural)
    (h : Eq (List.elem Natural.eqb x (List.cons r rest)) Bool.false) : Eq (Natural.eqb x r) Bool.false :=
  @Bool.or_eq_false_left (Natural.eqb x r) (List.elem Natural.eqb x rest) h

theorem elem_cons_self (r : Natural) (xs : List Natural) : Eq (List.elem Natural.eqb r (List.cons r xs)) Bool.true :=
  Bool.or_true_left (List.elem Natural.eqb r xs) (Natural.eqb_self r)

/-- The invariant after a step, from its two parts that depend on what is held. -/
theorem min_inv_next (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r rest))
    (held' : List Natural)
    (hA : ∀ x a : Natural, Eq (parent x) (Parent.block a) → Eq (List.elem Natural.eqb x held') Bool.true →
          Eq (List.elem Natural.eqb a held') Bool.false → Eq (List.elem Natural.eqb x rest) Bool.false)
    (hB : ∀ z : Natural, Eq (Parent.block r) (Parent.block z) → Eq (List.elem Natural.eqb z held') Bool.false →
            And (Eq (Natural.ltb (List.length held') cap) Bool.false)
              (∀ c : Natural, Eq (List.elem Natural.eqb c held') Bool.true →
                Natural.le (next_use c rest) (next_use z rest))) :
    min_inv cap parent held' (Parent.block r) rest :=
  And.intro hi.left.right
    (And.intro hA (And.intro hB (fun x hx => elem_tail_false x r rest (hi.right.right.right x hx))))

/-- Rewrite `elem z held` to `elem r held` when `block r = block z`. -/
theorem elem_of_block_eq (r z : Natural) (held : List Natural) (b : Bool) (hz : Eq (Parent.block r) (Parent.block z))
    (h : Eq (List.elem Natural.eqb z held) b) : Eq (List.elem Natural.eqb r held) b :=
  Eq.subst (motive := fun w => Eq (List.elem Natural.eqb w held) b) (Eq.symm (Parent.block_inj hz)) h

theorem min_inv_hit (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r rest))
    (hr : Eq (List.elem Natural.eqb r held) Bool.true) :
    min_inv cap parent held (Parent.block r) rest :=
  min_inv_next cap parent held prev r rest hi held
    (fun x a hxa hx ha => elem_tail_false x r rest (hi.right.left x a hxa hx ha))
    (fun z hz hzH => False.elim (Bool.false_ne_true
      (Eq.trans (Eq.symm (elem_of_block_eq r z held Bool.false hz hzH)) hr)))

theorem min_inv_room (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r rest))
    (hroom : Eq (Natural.ltb (List.length held) cap) Bool.true) :
    min_inv cap parent (List.cons r held) (Parent.block r) rest :=
  min_inv_next cap parent held prev r rest hi (List.cons r held)
    (fun x a hxa hx ha =>
      let haH : Eq (List.elem Natural.eqb a held) Bool.false := elem_tail_false a r held ha
      Bool.by_cases (motive := fun c => Eq (Natural.eqb x r) c → Eq (List.elem Natural.eqb x rest) Bool.false)
        (Natural.eqb x r)
        (fun _ hxr => elem_tail_false x r rest (hi.right.left x a hxa (Bool.or_right_of hxr hx) haH))
        (fun _ hxr => False.elim (Bool.false_ne_true (Eq.trans
          (Eq.symm (hi.right.right.left a
            (hi.left.left a (Eq.subst (motive := fun w => Eq (parent w) (Parent.block a))
              (Natural.eq_of_eqb x r hxr) hxa)) haH).left) hroom)))
        rfl)
    (fun z hz hzH => False.elim (Bool.false_ne_true
      (Eq.trans (Eq.symm (elem_of_block_eq r z (List.cons r held) Bool.false hz hzH)) (elem_cons_self r held))))

/-- A full miss that drops the requested block itself. -/
theorem min_inv_bypass (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r rest))
    (hr : Eq (List.elem Natural.eqb r held) Bool.false)
    (hfull : Eq (Natural.ltb (List.length held) cap) Bool.false)
    (he : Eq (Natural.eqb (furthest rest r held) r) Bool.true) :
    min_inv cap parent (List.remove (furthest rest r held) (List.cons r held)) (Parent.block r) rest :=
  let e := furthest rest r held
  let her : Eq e r := Natural.eq_of_eqb e r he
  let heq : Eq (List.remove e (List.cons r held)) held :=
    Eq.trans (congrArg (fun b => cond b (List.remove e held) (List.cons r (List.remove e held))) he)
      (remove_absent e held (Eq.subst (motive := fun w => Eq (List.elem Natural.eqb w held) Bool.false) (Eq.symm her) hr))
  Eq.subst (motive := fun K => min_inv cap parent K (Parent.block r) rest) (Eq.symm heq)
    (min_inv_next cap parent held prev r rest hi held
      (fun x a hxa hx ha => elem_tail_false x r rest (hi.right.left x a hxa hx ha))
      (fun _z hz _ => And.intro hfull
        (fun c hc => Eq.subst (motive := fun w => Natural.le (next_use c rest) (next_use w rest))
          (Eq.trans her (Parent.block_inj hz))
          (furthest_max rest held r c (Bool.or_true_right (Natural.eqb c r) hc)))))

/-- A full miss that drops a held block `e`, used furthest. -/
theorem min_inv_evict (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r rest))
    (he : Eq (Natural.eqb (furthest rest r held) r) Bool.false) :
    min_inv cap parent (List.remove (furthest rest r held) (List.cons r held)) (Parent.block r) rest :=
  let e := furthest rest r held
  let hre : Eq (Natural.eqb r e) Bool.false := Lawful.eqb_false_symm Natural.eqb_lawful e r he
  let hrH' : Eq (List.elem Natural.eqb r (List.remove e (List.cons r held))) Bool.true :=
    Eq.trans (elem_remove_ne r e (List.cons r held) hre) (elem_cons_self r held)
  min_inv_next cap parent held prev r rest hi (List.remove e (List.cons r held))
    (fun x a hxa hx ha =>
      let hx0 : Eq (List.elem Natural.eqb x (List.cons r held)) Bool.true := elem_remove e x (List.cons r held) hx
      Bool.by_cases (motive := fun c => Eq (Natural.eqb a e) c → Eq (List.elem Natural.eqb x rest) Bool.false)
        (Natural.eqb a e)
        (fun _ hae =>
          Bool.by_cases (motive := fun c => Eq (List.elem Natural.eqb a (List.cons r held)) c →
              Eq (List.elem Natural.eqb x rest) Bool.false)
            (List.elem Natural.eqb a (List.cons r held))
            (fun _ haC =>
              let har : Eq (Natural.eqb a r) Bool.false := elem_head_false a r held haC
              let haH : Eq (List.elem Natural.eqb a held) Bool.false := elem_tail_false a r held haC
              Bool.by_cases (motive := fun c => Eq (Natural.eqb x r) c → Eq (List.elem Natural.eqb x rest) Bool.false)
                (Natural.eqb x r)
                (fun _ hxr => elem_tail_false x r rest (hi.right.left x a hxa (Bool.or_right_of hxr hx0) haH))
                (fun _ hxr =>
                  let hxe : Eq x r := Natural.eq_of_eqb x r hxr
                  let hra : Eq (parent r) (Parent.block a) :=
                    Eq.subst (motive := fun w => Eq (parent w) (Parent.block a)) hxe hxa
                  let hB := hi.right.right.left a (hi.left.left a hra) haH
                  let heH : Eq (List.elem Natural.eqb e held) Bool.true :=
                    Bool.or_right_of he (furthest_mem rest held r)
                  let h1 : Natural.le (next_use e rest) (next_use a rest) :=
                    Natural.le_of_succ_le_succ (Natural.le_of_eq_of_le (next_use_ne e r rest he)
                      (next_use_ne a r rest har) (hB.right e heH))
                  let h2 : Natural.le (next_use r rest) (next_use e rest) :=
                    furthest_max rest held r r (elem_cons_self r held)
                  Eq.subst (motive := fun w => Eq (List.elem Natural.eqb w rest) Bool.false) (Eq.symm hxe)
                    (fits_dead parent r a hra rest (Parent.block r) hi.left.right
                      (fun h => Bool.false_ne_true (Eq.trans (Eq.symm har) (eqb_of_eq (Eq.symm (Parent.block_inj h)))))
                      (Natural.le_trans h2 h1)))
                rfl)
            (fun _ haC => False.elim (Bool.false_ne_true
              (Eq.trans (Eq.symm ha) (Eq.trans (elem_remove_ne a e (List.cons r held) hae) haC))))
            rfl)
        (fun _ hae =>
          fits_dead parent x e
            (Eq.subst (motive := fun w => Eq (parent x) (Parent.block w)) (Natural.eq_of_eqb a e hae) hxa)
            rest (Parent.block r) hi.left.right
            (fun h => Bool.false_ne_true (Eq.trans (Eq.symm he) (eqb_of_eq (Eq.symm (Parent.block_inj h)))))
            (furthest_max rest held r x hx0))
        rfl)
    (fun z hz hzH => False.elim (Bool.false_ne_true
      (Eq.trans (Eq.symm (elem_of_block_eq r z (List.remove e (List.cons r held)) Bool.false hz hzH)) hrH')))

/-- One step of MIN keeps the invariant. -/
theorem min_inv_step (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r rest)) :
    min_inv cap parent (min_step cap held r rest) (Parent.block r) rest :=
  Bool.by_cases
    (motive := fun b => Eq (List.elem Natural.eqb r held) b →
      min_inv cap parent (cond b held (cond (Natural.ltb (List.length held) cap) (List.cons r held)
        (List.remove (furthest rest r held) (List.cons r held)))) (Parent.block r) rest)
    (List.elem Natural.eqb r held)
    (fun _ hmiss =>
      Bool.by_cases
        (motive := fun c => Eq (Natural.ltb (List.length held) cap) c →
          min_inv cap parent (cond c (List.cons r held) (List.remove (furthest rest r held) (List.cons r held)))
            (Parent.block r) rest)
        (Natural.ltb (List.length held) cap)
        (fun _ hfull =>
          Bool.by_cases
            (motive := fun _ => min_inv cap parent (List.remove (furthest rest r held) (List.cons r held))
              (Parent.block r) rest)
            (Natural.eqb (furthest rest r held) r)
            (fun he => min_inv_evict cap parent held prev r rest hi he)
            (fun he => min_inv_bypass cap parent held prev r rest hi hmiss hfull he))
        (fun _ hroom => min_inv_room cap parent held prev r rest hi hroom)
        rfl)
    (fun _ hhit => min_inv_hit cap parent held prev r rest hi hhit)
    rfl

/-! ## Within a request: a miss leaves the next block of the chain absent -/

/-- What MIN holds next is within what it held plus the requested block. -/
theorem min_step_sub (cap : Natural) (held : List Natural) (r : Natural) (rest : List Natural) :
    subset (min_step cap held r rest) (List.cons r held) :=
  Bool.by_cases
    (motive := fun b => subset (cond b held (cond (Natural.ltb (List.length held) cap) (List.cons r held)
      (List.remove (furthest rest r held) (List.cons r held)))) (List.cons r held))
    (List.elem Natural.eqb r held)
    (fun _ => Bool.by_cases
      (motive := fun c => subset (cond c (List.cons r held) (List.remove (furthest rest r held) (List.cons r held)))
        (List.cons r held))
      (Natural.ltb (List.length held) cap)
      (fun _ a h => elem_remove (furthest rest r held) a (List.cons r held) h)
      (fun _ => subset_refl (List.cons r held)))
    (fun _ => subset_cons r held)

/-- If MIN misses `r` and the next block `y` is `r`'s child, `y` is not held next. -/
theorem next_absent (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r y : Natural) (rest : List Natural) (hi : min_inv cap parent held prev (List.cons r (List.cons y rest)))
    (hr : Eq (List.elem Natural.eqb r held) Bool.false) (hyr : Eq (parent y) (Parent.block r)) :
    Eq (List.elem Natural.eqb y (min_step cap held r (List.cons y rest))) Bool.false :=
  Bool.by_cases (motive := fun c => Eq c Bool.false)
    (List.elem Natural.eqb y (min_step cap held r (List.cons y rest)))
    (fun _ => rfl)
    (fun hy =>
      let hy0 : Eq (List.elem Natural.eqb y (List.cons r held)) Bool.true :=
        min_step_sub cap held r (List.cons y rest) y hy
      Bool.by_cases (motive := fun _ => Eq Bool.true Bool.false) (Natural.eqb y r)
        (fun hyr' => False.elim (Bool.false_ne_true (Eq.trans
          (Eq.symm (hi.right.left y r hyr (Bool.or_right_of hyr' hy0) hr))
          (Bool.or_true_right (Natural.eqb y r) (elem_cons_self y rest)))))
        (fun hyr' =>
          let hye : Eq y r := Natural.eq_of_eqb y r hyr'
          False.elim (Bool.false_ne_true (Eq.trans
            (Eq.symm (hi.right.right.right r
              (Eq.subst (motive := fun w => Eq (parent w) (Parent.block r)) hye hyr)))
            (elem_cons_self r (List.cons y rest))))))

/-! ## MIN's run, cut into requests -/

/-- MIN's steps on one request's chain `c`, from `held`, `t` the blocks after it. -/
noncomputable def min_chain_run (cap : Natural) (held c t : List Natural) : List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List Natural → List (Prod Natural (List Natural))) (fun _ => List.nil)
    (fun r c' run_rest held => List.cons (Prod.mk r held) (run_rest (min_step cap held r (List.append c' t))))
    c held

/-- What MIN holds after one request's chain `c`, from `held`. -/
noncomputable def min_chain_held (cap : Natural) (held c t : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural → List Natural) (fun held => held)
    (fun r c' held_rest held => held_rest (min_step cap held r (List.append c' t)))
    c held

/-- MIN's run on the flattened chains, one list of steps per request. -/
noncomputable def min_prefix_run (cap : Natural) (held : List Natural) (chains : List (List Natural)) :
    List (List (Prod Natural (List Natural))) :=
  List.rec (motive := fun _ => List Natural → List (List (Prod Natural (List Natural)))) (fun _ => List.nil)
    (fun c cs run_rest held =>
      List.cons (min_chain_run cap held c (List.flatten cs)) (run_rest (min_chain_held cap held c (List.flatten cs))))
    chains held

theorem min_run_append (cap : Natural) (t c : List Natural) : ∀ held : List Natural,
    Eq (min_run cap held (List.append c t))
      (List.append (min_chain_run cap held c t) (min_run cap (min_chain_held cap held c t) t)) :=
  List.rec
    (motive := fun c => ∀ held : List Natural, Eq (min_run cap held (List.append c t))
      (List.append (min_chain_run cap held c t) (min_run cap (min_chain_held cap held c t) t)))
    (fun _ => rfl)
    (fun r c' ih held => congrArg (List.cons (Prod.mk r held)) (ih (min_step cap held r (List.append c' t))))
    c

theorem min_prefix_flatten (cap : Natural) (chains : List (List Natural)) : ∀ held : List Natural,
    Eq (List.flatten (min_prefix_run cap held chains)) (min_run cap held (List.flatten chains)) :=
  List.rec
    (motive := fun chains => ∀ held : List Natural,
      Eq (List.flatten (min_prefix_run cap held chains)) (min_run cap held (List.flatten chains)))
    (fun _ => rfl)
    (fun c cs ih held =>
      Eq.trans (congrArg (List.append (min_chain_run cap held c (List.flatten cs)))
          (ih (min_chain_held cap held c (List.flatten cs))))
        (Eq.symm (min_run_append cap (List.flatten cs) c held)))
    chains

theorem min_chain_blocks (cap : Natural) (t c : List Natural) : ∀ held : List Natural,
    Eq (List.map Prod.fst (min_chain_run cap held c t)) c :=
  List.rec
    (motive := fun c => ∀ held : List Natural, Eq (List.map Prod.fst (min_chain_run cap held c t)) c)
    (fun _ => rfl)
    (fun r c' ih held => congrArg (List.cons r) (ih (min_step cap held r (List.append c' t))))
    c

theorem min_prefix_blocks (cap : Natural) (chains : List (List Natural)) : ∀ held : List Natural,
    Eq (List.map (List.map Prod.fst) (min_prefix_run cap held chains)) chains :=
  List.rec
    (motive := fun chains => ∀ held : List Natural,
      Eq (List.map (List.map Prod.fst) (min_prefix_run cap held chains)) chains)
    (fun _ => rfl)
    (fun c cs ih held => congr2 List.cons (min_chain_blocks cap (List.flatten cs) c held)
      (ih (min_chain_held cap held c (List.flatten cs))))
    chains

/-! ## MIN's requests are valid prefix-cache requests -/

/-- On a prefix hit MIN holds what it held; on a miss at most that plus the block. -/
theorem min_step_allowed (cap : Natural) (held : List Natural) (r : Natural) (rest : List Natural) (reading : Bool) :
    subset (min_step cap held r rest)
      (cond (Bool.and reading (List.elem Natural.eqb r held)) held (List.cons r held)) :=
  Bool.by_cases
    (motive := fun b => Eq (Bool.and reading (List.elem Natural.eqb r held)) b →
      subset (min_step cap held r rest) (cond b held (List.cons r held)))
    (Bool.and reading (List.elem Natural.eqb r held))
    (fun _ _ => min_step_sub cap held r rest)
    (fun _ h => Eq.subst (motive := fun K => subset K held)
      (Eq.symm (congrArg (fun b => cond b held (cond (Natural.ltb (List.length held) cap) (List.cons r held)
          (List.remove (furthest rest r held) (List.cons r held))))
        (Bool.and_right reading (List.elem Natural.eqb r held) h)))
      (subset_refl held))
    rfl

theorem min_chain_held_ok (cap : Natural) (t c : List Natural) : ∀ held : List Natural,
    nodup held → Natural.le (List.length held) cap →
    And (nodup (min_chain_held cap held c t)) (Natural.le (List.length (min_chain_held cap held c t)) cap) :=
  List.rec
    (motive := fun c => ∀ held : List Natural, nodup held → Natural.le (List.length held) cap →
      And (nodup (min_chain_held cap held c t)) (Natural.le (List.length (min_chain_held cap held c t)) cap))
    (fun _ hnd hlen => And.intro hnd hlen)
    (fun r c' ih held hnd hlen =>
      ih (min_step cap held r (List.append c' t))
        (min_step_ok cap held r (List.append c' t) hnd hlen).right.left
        (min_step_ok cap held r (List.append c' t) hnd hlen).right.right)
    c

theorem min_chain_valid (cap : Natural) (t : List Natural) (P : List Natural → Prop) (c : List Natural) :
    ∀ (held : List Natural) (reading : Bool) (allowed : List Natural),
    subset held allowed → nodup held → Natural.le (List.length held) cap →
    (∀ a : List Natural, subset (min_chain_held cap held c t) a → P a) →
    request_valid cap P (min_chain_run cap held c t) reading allowed :=
  List.rec
    (motive := fun c => ∀ (held : List Natural) (reading : Bool) (allowed : List Natural),
      subset held allowed → nodup held → Natural.le (List.length held) cap →
      (∀ a : List Natural, subset (min_chain_held cap held c t) a → P a) →
      request_valid cap P (min_chain_run cap held c t) reading allowed)
    (fun _ _ allowed hsub _ _ hP => hP allowed hsub)
    (fun r c' ih held reading _allowed hsub hnd hlen hP =>
      And.intro hsub
        (And.intro (Natural.le_trans (distinct_le_length held) hlen)
          (ih (min_step cap held r (List.append c' t)) (Bool.and reading (List.elem Natural.eqb r held))
            (cond (Bool.and reading (List.elem Natural.eqb r held)) held (List.cons r held))
            (min_step_allowed cap held r (List.append c' t) reading)
            (min_step_ok cap held r (List.append c' t) hnd hlen).right.left
            (min_step_ok cap held r (List.append c' t) hnd hlen).right.right
            hP)))
    c

theorem min_prefix_valid (cap : Natural) (chains : List (List Natural)) : ∀ held allowed : List Natural,
    subset held allowed → nodup held → Natural.le (List.length held) cap →
    prefix_valid_after cap allowed (min_prefix_run cap held chains) :=
  List.rec
    (motive := fun chains => ∀ held allowed : List Natural,
      subset held allowed → nodup held → Natural.le (List.length held) cap →
      prefix_valid_after cap allowed (min_prefix_run cap held chains))
    (fun _ _ _ _ _ => True.intro)
    (fun c cs ih held allowed hsub hnd hlen =>
      min_chain_valid cap (List.flatten cs)
        (fun b => prefix_valid_after cap b (min_prefix_run cap (min_chain_held cap held c (List.flatten cs)) cs))
        c held Bool.true allowed hsub hnd hlen
        (fun a hs => ih (min_chain_held cap held c (List.flatten cs)) a hs
          (min_chain_held_ok cap (List.flatten cs) c held hnd hlen).left
          (min_chain_held_ok cap (List.flatten cs) c held hnd hlen).right))
    chains

/-! ## MIN's misses are the prefix cache's misses -/

/-- The first block of `c`, if any, is not held. -/
def head_absent (held c : List Natural) : Prop :=
  List.rec (motive := fun _ => Prop) True (fun y _ _ => Eq (List.elem Natural.eqb y held) Bool.false) c

/-- After MIN misses `r`, the next block of `r`'s chain is not held. -/
theorem head_next (cap : Natural) (parent : Natural → Parent) (held : List Natural) (prev : Parent)
    (r : Natural) (t c' : List Natural) :
    chain_fits parent (Parent.block r) c' → min_inv cap parent held prev (List.cons r (List.append c' t)) →
    Eq (List.elem Natural.eqb r held) Bool.false →
    head_absent (min_step cap held r (List.append c' t)) c' :=
  List.rec
    (motive := fun c' => chain_fits parent (Parent.block r) c' →
      min_inv cap parent held prev (List.cons r (List.append c' t)) →
      Eq (List.elem Natural.eqb r held) Bool.false →
      head_absent (min_step cap held r (List.append c' t)) c')
    (fun _ _ _ => True.intro)
    (fun y c'' _ hfit hi hr => next_absent cap parent held prev r y (List.append c'' t) hi hr hfit.left)
    c'

theorem miss_of_hits_false (r : Natural) (held : List Natural) (reading : Bool)
    (hhead : Eq reading Bool.false → Eq (List.elem Natural.eqb r held) Bool.false)
    (h : Eq (Bool.and reading (List.elem Natural.eqb r held)) Bool.false) :
    Eq (List.elem Natural.eqb r held) Bool.false :=
  Bool.rec
    (motive := fun rd => (Eq rd Bool.false → Eq (List.elem Natural.eqb r held) Bool.false) →
      Eq (Bool.and rd (List.elem Natural.eqb r held)) Bool.false → Eq (List.elem Natural.eqb r held) Bool.false)
    (fun hh _ => hh rfl) (fun _ h => h) reading hhead h

/-- A step counts the same for the prefix cache and for MIN when, if the
request has stopped reading, the block is not held. -/
theorem hit_cond (r : Natural) (held : List Natural) (reading : Bool)
    (hhead : Eq reading Bool.false → Eq (List.elem Natural.eqb r held) Bool.false) :
    Eq (cond (Bool.and reading (List.elem Natural.eqb r held)) Natural.zero (Natural.succ Natural.zero))
      (absent Natural.eqb r held) :=
  Bool.rec
    (motive := fun rd => (Eq rd Bool.false → Eq (List.elem Natural.eqb r held) Bool.false) →
      Eq (cond (Bool.and rd (List.elem Natural.eqb r held)) Natural.zero (Natural.succ Natural.zero))
        (absent Natural.eqb r held))
    (fun hh => congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero)) (Eq.symm (hh rfl)))
    (fun _ => rfl) reading hhead

theorem chain_misses_min (cap : Natural) (parent : Natural → Parent) (t c : List Natural) :
    ∀ (held : List Natural) (prev above : Parent) (reading : Bool),
    min_inv cap parent held prev (List.append c t) → chain_fits parent above c →
    (Eq reading Bool.false → head_absent held c) →
    And (Eq (request_misses (min_chain_run cap held c t) reading) (demand_misses (min_chain_run cap held c t)))
      (Exists (fun prev' : Parent => min_inv cap parent (min_chain_held cap held c t) prev' t)) :=
  List.rec
    (motive := fun c => ∀ (held : List Natural) (prev above : Parent) (reading : Bool),
      min_inv cap parent held prev (List.append c t) → chain_fits parent above c →
      (Eq reading Bool.false → head_absent held c) →
      And (Eq (request_misses (min_chain_run cap held c t) reading) (demand_misses (min_chain_run cap held c t)))
        (Exists (fun prev' : Parent => min_inv cap parent (min_chain_held cap held c t) prev' t)))
    (fun _ prev _ _ hi _ _ => And.intro rfl (Exists.intro prev hi))
    (fun r c' ih held prev _above reading hi hfit hhead =>
      let rest := ih (min_step cap held r (List.append c' t)) (Parent.block r) (Parent.block r)
        (Bool.and reading (List.elem Natural.eqb r held))
        (min_inv_step cap parent held prev r (List.append c' t) hi) hfit.right
        (fun h => head_next cap parent held prev r t c' hfit.right hi (miss_of_hits_false r held reading hhead h))
      And.intro (congr2 Natural.plus (hit_cond r held reading hhead) rest.left) rest.right)
    c

theorem prefix_misses_min (cap : Natural) (parent : Natural → Parent) (chains : List (List Natural)) :
    ∀ (held : List Natural) (prev : Parent), all_fit parent chains →
    min_inv cap parent held prev (List.flatten chains) →
    Eq (prefix_misses (min_prefix_run cap held chains)) (demand_misses (List.flatten (min_prefix_run cap held chains))) :=
  List.rec
    (motive := fun chains => ∀ (held : List Natural) (prev : Parent), all_fit parent chains →
      min_inv cap parent held prev (List.flatten chains) →
      Eq (prefix_misses (min_prefix_run cap held chains)) (demand_misses (List.flatten (min_prefix_run cap held chains))))
    (fun _ _ _ _ => rfl)
    (fun c cs ih held prev hfit hi =>
      let req := chain_misses_min cap parent (List.flatten cs) c held prev Parent.root Bool.true hi hfit.left
        (fun h => False.elim (Bool.false_ne_true (Eq.symm h)))
      Exists.rec
        (motive := fun _ => Eq (prefix_misses (min_prefix_run cap held (List.cons c cs)))
          (demand_misses (List.flatten (min_prefix_run cap held (List.cons c cs)))))
        (fun prev' hi' =>
          Eq.trans
            (congr2 Natural.plus req.left (ih (min_chain_held cap held c (List.flatten cs)) prev' hfit.right hi'))
            (Eq.symm (demand_misses_append (min_chain_run cap held c (List.flatten cs))
              (List.flatten (min_prefix_run cap (min_chain_held cap held c (List.flatten cs)) cs)))))
        req.right)
    chains

/-! ## The flattened chains fit their parents; the invariant at the start -/

theorem fits_append (parent : Natural → Parent) (t : List Natural) (ht : ∀ prev : Parent, flat_fits parent prev t)
    (c : List Natural) : ∀ (above prev : Parent), chain_fits parent above c →
      (∀ a : Natural, Eq above (Parent.block a) → Eq prev (Parent.block a)) →
      flat_fits parent prev (List.append c t) :=
  List.rec
    (motive := fun c => ∀ (above prev : Parent), chain_fits parent above c →
      (∀ a : Natural, Eq above (Parent.block a) → Eq prev (Parent.block a)) →
      flat_fits parent prev (List.append c t))
    (fun _ prev _ _ => ht prev)
    (fun y _ ih _above _prev hc hab =>
      And.intro (fun a hya => hab a (Eq.trans (Eq.symm hc.left) hya))
        (ih (Parent.block y) (Parent.block y) hc.right (fun _ h => h)))
    c

theorem fits_flatten (parent : Natural → Parent) (chains : List (List Natural)) :
    all_fit parent chains → ∀ prev : Parent, flat_fits parent prev (List.flatten chains) :=
  List.rec
    (motive := fun chains => all_fit parent chains → ∀ prev : Parent, flat_fits parent prev (List.flatten chains))
    (fun _ _ => True.intro)
    (fun c cs ih h prev =>
      fits_append parent (List.flatten cs) (ih h.right) c Parent.root prev h.left
        (fun _ e => False.elim (Parent.root_ne_block e)))
    chains

theorem min_inv_start (cap : Natural) (parent : Natural → Parent) (chains : List (List Natural))
    (h : all_fit parent chains) : min_inv cap parent List.nil Parent.root (List.flatten chains) :=
  And.intro (fits_flatten parent chains h Parent.root)
    (And.intro (fun _ _ _ hx _ => False.elim (Bool.false_ne_true hx))
      (And.intro (fun _ hz _ => False.elim (Parent.root_ne_block hz))
        (fun x hx => fits_dead parent x x hx (List.flatten chains) Parent.root
          (fits_flatten parent chains h Parent.root) Parent.root_ne_block (Natural.le_refl _))))

/-! ## Theorem -/

/-- On prefix-closed chains, Belady's MIN on the flattened blocks is achieved
by a capacitated prefix cache: some valid run of a demand cache of `cap`
blocks with longest-prefix hits, whose requests read exactly the chains,
misses exactly `min_misses cap (List.flatten chains)` blocks (MIN's own run,
cut into the requests). -/
theorem min_run_is_prefix_run (cap : Natural) (chains : List (List Natural)) (h : prefix_closed chains) :
    Exists (fun run : List (List (Prod Natural (List Natural))) =>
      And (prefix_valid cap run)
        (And (Eq (List.map (List.map Prod.fst) run) chains)
          (Eq (prefix_misses run) (min_misses cap (List.flatten chains))))) :=
  Exists.rec
    (motive := fun _ => Exists (fun run : List (List (Prod Natural (List Natural))) =>
      And (prefix_valid cap run)
        (And (Eq (List.map (List.map Prod.fst) run) chains)
          (Eq (prefix_misses run) (min_misses cap (List.flatten chains))))))
    (fun parent hfit =>
      Exists.intro (min_prefix_run cap List.nil chains)
        (And.intro (min_prefix_valid cap chains List.nil List.nil (subset_refl List.nil) True.intro (Natural.zero_le cap))
          (And.intro (min_prefix_blocks cap chains List.nil)
            (Eq.trans (prefix_misses_min cap parent chains List.nil Parent.root hfit (min_inv_start cap parent chains hfit))
              (congrArg demand_misses (min_prefix_flatten cap chains List.nil))))))
    h

/-! ## The other half, for runs on chains -/

theorem List.map_append {α : Type u} {β : Type v} (f : α → β) (xs ys : List α) :
    Eq (List.map f (List.append xs ys)) (List.append (List.map f xs) (List.map f ys)) :=
  List.rec
    (motive := fun xs => Eq (List.map f (List.append xs ys)) (List.append (List.map f xs) (List.map f ys)))
    rfl (fun x _ ih => congrArg (List.cons (f x)) ih) xs

theorem List.map_flatten {α : Type u} {β : Type v} (f : α → β) (xss : List (List α)) :
    Eq (List.map f (List.flatten xss)) (List.flatten (List.map (List.map f) xss)) :=
  List.rec
    (motive := fun xss => Eq (List.map f (List.flatten xss)) (List.flatten (List.map (List.map f) xss)))
    rfl
    (fun xs _ ih => Eq.trans (List.map_append f xs _) (congrArg (List.append (List.map f xs)) ih))
    xss

/-- No valid run of a capacitated prefix cache of `cap` blocks whose requests
read `chains` misses fewer blocks than MIN on the flattened chains (from
`prefix_run_is_flat_run` and `min_misses_le`; no prefix closure needed).
With `min_run_is_prefix_run`: on prefix-closed chains the fewest misses of a
capacitated prefix cache are exactly MIN's. -/
theorem prefix_misses_ge_min (cap : Natural) (chains : List (List Natural))
    (run : List (List (Prod Natural (List Natural)))) (hv : prefix_valid cap run)
    (hc : Eq (List.map (List.map Prod.fst) run) chains) :
    Natural.le (min_misses cap (List.flatten chains)) (prefix_misses run) :=
  Natural.le_trans
    (min_misses_le cap (List.flatten chains) (List.flatten run) (prefix_run_is_flat_run cap run hv).left
      (Eq.trans (List.map_flatten Prod.fst run) (congrArg List.flatten hc)))
    (prefix_run_is_flat_run cap run hv).right
