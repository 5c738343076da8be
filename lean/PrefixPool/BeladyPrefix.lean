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
