prelude
import PrefixPool.Lru
/-!
# PrefixPool.StackDistance: when LRU hits

Mattson, Gecsei, Slutz and Traiger (1970): a request hits in an LRU cache of
`cap` blocks exactly when fewer than `cap` distinct blocks were requested
since its block's previous request (its *stack distance*). `pyverify mrc`
computes every capacity's misses from one histogram of stack distances
because of this fact.

The proof goes through the move-to-front stack (`Lru.lean`): LRU holds its
first `cap` entries (`lru_cache_eq_take`), and a block's position in the stack
(the number of blocks above it, `blocks_above`) is the number of distinct blocks
requested since its last request (`above_mtf_walk`).
-/

/-- The blocks above `r` in `stack` (all of it if `r` is absent).
Python: `stack[:stack.index(r)]`. -/
noncomputable def blocks_above (r : Natural) (stack : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural) List.nil
    (fun y _ rest => cond (Natural.eqb r y) List.nil (List.cons y rest)) stack

/-- The requests after the last request of `r` (all of them if `r` is never
requested).
Python: `pyverify/lean/mirror.py`, `since`. -/
noncomputable def since (r : Natural) (requests : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural) List.nil
    (fun x rest since_rest =>
      cond (List.elem Natural.eqb r rest) since_rest (cond (Natural.eqb r x) rest (List.cons x rest)))
    requests

/-! ## Lemmas -/

theorem Bool.or_left_of {a b : Bool} (hb : Eq b Bool.false) (h : Eq (Bool.or a b) Bool.true) : Eq a Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.or a b) Bool.true → Eq a Bool.true)
    (fun h => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm hb) h))) (fun _ => rfl) a h

theorem Bool.or_false_r (b : Bool) : Eq (Bool.or b Bool.false) b :=
  Bool.rec (motive := fun b => Eq (Bool.or b Bool.false) b) rfl rfl b

theorem Bool.and_false (b : Bool) : Eq (Bool.and b Bool.false) Bool.false :=
  Bool.rec (motive := fun b => Eq (Bool.and b Bool.false) Bool.false) rfl rfl b

/-- Removing `x` does not change whether another block `a` is there. -/
theorem elem_remove_ne (a x : Natural) (xs : List Natural) (h : Eq (Natural.eqb a x) Bool.false) :
    Eq (List.elem Natural.eqb a (List.remove x xs)) (List.elem Natural.eqb a xs) :=
  List.rec
    (motive := fun xs => Eq (List.elem Natural.eqb a (List.remove x xs)) (List.elem Natural.eqb a xs))
    rfl
    (fun y xs' ih =>
      Bool.by_cases
        (motive := fun b =>
          Eq (List.elem Natural.eqb a (cond b (List.remove x xs') (List.cons y (List.remove x xs'))))
            (Bool.or (Natural.eqb a y) (List.elem Natural.eqb a xs')))
        (Natural.eqb x y)
        (fun _ => congrArg (Bool.or (Natural.eqb a y)) ih)
        (fun hxy => Eq.trans ih
          (Eq.symm (congrArg (fun b => Bool.or b (List.elem Natural.eqb a xs'))
            (Eq.subst (motive := fun z => Eq (Natural.eqb a z) Bool.false) (Natural.eq_of_eqb x y hxy) h)))))
    xs

/-- Removing a block other than `r` commutes with taking what is above `r`. -/
theorem above_remove (r x : Natural) (stack : List Natural) (h : Eq (Natural.eqb r x) Bool.false) :
    Eq (blocks_above r (List.remove x stack)) (List.remove x (blocks_above r stack)) :=
  List.rec
    (motive := fun stack => Eq (blocks_above r (List.remove x stack)) (List.remove x (blocks_above r stack)))
    rfl
    (fun y s' ih =>
      Bool.by_cases
        (motive := fun b =>
          Eq (blocks_above r (cond b (List.remove x s') (List.cons y (List.remove x s'))))
            (List.remove x (cond (Natural.eqb r y) List.nil (List.cons y (blocks_above r s')))))
        (Natural.eqb x y)
        -- y is kept: both sides decide on y alike
        (fun hxy =>
          Bool.by_cases
            (motive := fun c =>
              Eq (cond c List.nil (List.cons y (blocks_above r (List.remove x s'))))
                (List.remove x (cond c List.nil (List.cons y (blocks_above r s')))))
            (Natural.eqb r y)
            (fun _ => Eq.trans (congrArg (List.cons y) ih)
              (Eq.symm (congrArg (fun b => cond b (List.remove x (blocks_above r s')) (List.cons y (List.remove x (blocks_above r s')))) hxy)))
            (fun _ => rfl))
        -- y is x, which is not r: removed on both sides
        (fun hxy =>
          Eq.trans ih
            (Eq.symm
              (Eq.trans
                (congrArg (fun c => List.remove x (cond c List.nil (List.cons y (blocks_above r s'))))
                  (Eq.subst (motive := fun z => Eq (Natural.eqb r z) Bool.false) (Natural.eq_of_eqb x y hxy) h))
                (congrArg (fun b => cond b (List.remove x (blocks_above r s')) (List.cons y (List.remove x (blocks_above r s')))) hxy)))))
    stack

theorem elem_above (a r : Natural) (stack : List Natural) :
    Eq (List.elem Natural.eqb a (blocks_above r stack)) Bool.true → Eq (List.elem Natural.eqb a stack) Bool.true :=
  List.rec
    (motive := fun stack =>
      Eq (List.elem Natural.eqb a (blocks_above r stack)) Bool.true → Eq (List.elem Natural.eqb a stack) Bool.true)
    (fun h => h)
    (fun y s' ih =>
      Bool.by_cases
        (motive := fun b =>
          Eq (List.elem Natural.eqb a (cond b List.nil (List.cons y (blocks_above r s')))) Bool.true →
            Eq (List.elem Natural.eqb a (List.cons y s')) Bool.true)
        (Natural.eqb r y)
        (fun _ h => Bool.or_mono_right (Natural.eqb a y) ih h)
        (fun _ h => False.elim (Bool.false_ne_true h)))
    stack

theorem nodup_above (r : Natural) (stack : List Natural) : nodup stack → nodup (blocks_above r stack) :=
  List.rec (motive := fun stack => nodup stack → nodup (blocks_above r stack))
    (fun _ => True.intro)
    (fun y s' ih h =>
      Bool.by_cases
        (motive := fun b => nodup (cond b List.nil (List.cons y (blocks_above r s'))))
        (Natural.eqb r y)
        (fun _ => And.intro
          (Bool.by_cases (motive := fun c => Eq c Bool.false) (List.elem Natural.eqb y (blocks_above r s'))
            (fun _ => rfl)
            (fun e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm h.left) (elem_above y r s' e)))))
          (ih h.right))
        (fun _ => True.intro))
    stack

/-- In a list without repeats, a block that is there occurs once. -/
theorem length_remove_mem (x : Natural) (xs : List Natural) : nodup xs →
    Eq (List.elem Natural.eqb x xs) Bool.true → Eq (List.length xs) (Natural.succ (List.length (List.remove x xs))) :=
  List.rec
    (motive := fun xs => nodup xs →
      Eq (List.elem Natural.eqb x xs) Bool.true → Eq (List.length xs) (Natural.succ (List.length (List.remove x xs))))
    (fun _ h => False.elim (Bool.false_ne_true h))
    (fun y xs' ih hnd h =>
      Bool.by_cases
        (motive := fun b => Eq (Bool.or b (List.elem Natural.eqb x xs')) Bool.true →
          Eq (Natural.succ (List.length xs'))
            (Natural.succ (List.length (cond b (List.remove x xs') (List.cons y (List.remove x xs'))))))
        (Natural.eqb x y)
        (fun _ h' => congrArg Natural.succ (ih hnd.right h'))
        (fun hxy _ => congrArg Natural.succ (Eq.symm (congrArg List.length (remove_absent x xs'
          (Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z xs') Bool.false)
            (Eq.symm (Natural.eq_of_eqb x y hxy)) hnd.left)))))
        h)
    xs

/-- Moving `x` on top adds one block above `r` exactly when `x` was not above it already. -/
theorem succ_length_remove (x : Natural) (xs : List Natural) (hnd : nodup xs) :
    Eq (Natural.succ (List.length (List.remove x xs))) (Natural.plus (List.length xs) (absent Natural.eqb x xs)) :=
  Bool.by_cases
    (motive := fun b => Eq (List.elem Natural.eqb x xs) b →
      Eq (Natural.succ (List.length (List.remove x xs)))
        (Natural.plus (List.length xs) (cond b Natural.zero (Natural.succ Natural.zero))))
    (List.elem Natural.eqb x xs)
    (fun _ hf => congrArg (fun l => Natural.succ (List.length l)) (remove_absent x xs hf))
    (fun _ ht => Eq.symm (length_remove_mem x xs hnd ht))
    rfl

/-- Whether `r` is among the first `cap` entries: it is there, and fewer than
`cap` blocks are above it. -/
theorem take_elem_above (r : Natural) (stack : List Natural) : ∀ cap : Natural,
    Eq (List.elem Natural.eqb r (List.take cap stack))
      (Bool.and (List.elem Natural.eqb r stack) (Natural.ltb (List.length (blocks_above r stack)) cap)) :=
  List.rec
    (motive := fun stack => ∀ cap : Natural,
      Eq (List.elem Natural.eqb r (List.take cap stack))
        (Bool.and (List.elem Natural.eqb r stack) (Natural.ltb (List.length (blocks_above r stack)) cap)))
    (fun cap => congrArg (List.elem Natural.eqb r) (List.take_nil cap))
    (fun y s' ih cap =>
      Natural.rec
        (motive := fun cap =>
          Eq (List.elem Natural.eqb r (List.take cap (List.cons y s')))
            (Bool.and (List.elem Natural.eqb r (List.cons y s')) (Natural.ltb (List.length (blocks_above r (List.cons y s'))) cap)))
        (Eq.symm (Bool.and_false _))
        (fun cap' _ =>
          Bool.by_cases
            (motive := fun b =>
              Eq (Bool.or b (List.elem Natural.eqb r (List.take cap' s')))
                (Bool.and (Bool.or b (List.elem Natural.eqb r s'))
                  (Natural.ltb (List.length (cond b List.nil (List.cons y (blocks_above r s')))) (Natural.succ cap'))))
            (Natural.eqb r y)
            (fun _ => ih cap')
            (fun _ => rfl))
        cap)
    stack

/-- A block is in the stack after `requests` exactly when it was requested or
was in the stack before. -/
theorem elem_mtf_walk (r : Natural) (requests : List Natural) : ∀ stack : List Natural,
    Eq (List.elem Natural.eqb r (mtf_walk stack requests))
      (Bool.or (List.elem Natural.eqb r requests) (List.elem Natural.eqb r stack)) :=
  List.rec
    (motive := fun requests => ∀ stack : List Natural,
      Eq (List.elem Natural.eqb r (mtf_walk stack requests))
        (Bool.or (List.elem Natural.eqb r requests) (List.elem Natural.eqb r stack)))
    (fun _ => rfl)
    (fun x rest ih stack =>
      Eq.trans (ih (mtf stack x))
        (Bool.by_cases
          (motive := fun b =>
            Eq (Bool.or (List.elem Natural.eqb r rest) (Bool.or b (List.elem Natural.eqb r (List.remove x stack))))
              (Bool.or (Bool.or b (List.elem Natural.eqb r rest)) (List.elem Natural.eqb r stack)))
          (Natural.eqb r x)
          (fun h => congrArg (Bool.or (List.elem Natural.eqb r rest)) (elem_remove_ne r x stack h))
          (fun _ => Bool.or_true (List.elem Natural.eqb r rest))))
    requests

/-- While `r` is not requested, each request moves one more block above `r`
exactly when it is not above `r` already: the blocks above `r` grow like the
keep-everything cache of `Distinct.lean`, which starts from them. -/
theorem above_walk_count (r : Natural) (rest : List Natural) : ∀ (stack held : List Natural),
    nodup stack → Eq (List.elem Natural.eqb r rest) Bool.false →
    (∀ a : Natural, Eq (List.elem Natural.eqb a held) (List.elem Natural.eqb a (blocks_above r stack))) →
    Eq (List.length (blocks_above r (mtf_walk stack rest)))
      (Natural.plus (List.length (blocks_above r stack)) (cache_misses Natural.eqb held rest)) :=
  List.rec
    (motive := fun rest => ∀ (stack held : List Natural),
      nodup stack → Eq (List.elem Natural.eqb r rest) Bool.false →
      (∀ a : Natural, Eq (List.elem Natural.eqb a held) (List.elem Natural.eqb a (blocks_above r stack))) →
      Eq (List.length (blocks_above r (mtf_walk stack rest)))
        (Natural.plus (List.length (blocks_above r stack)) (cache_misses Natural.eqb held rest)))
    (fun _ _ _ _ _ => rfl)
    (fun x rest' ih stack held hnd hr inv =>
      let hxr : Eq (Natural.eqb r x) Bool.false := Bool.or_eq_false_left hr
      let habove : Eq (blocks_above r (mtf stack x)) (List.cons x (List.remove x (blocks_above r stack))) :=
        Eq.trans (congrArg (fun b => cond b List.nil (List.cons x (blocks_above r (List.remove x stack)))) hxr)
          (congrArg (List.cons x) (above_remove r x stack hxr))
      let hlen : Eq (List.length (blocks_above r (mtf stack x)))
          (Natural.plus (List.length (blocks_above r stack)) (absent Natural.eqb x held)) :=
        Eq.trans (congrArg List.length habove)
          (Eq.trans (succ_length_remove x (blocks_above r stack) (nodup_above r stack hnd))
            (congrArg (fun b => Natural.plus (List.length (blocks_above r stack)) (cond b Natural.zero (Natural.succ Natural.zero)))
              (Eq.symm (inv x))))
      let inv' : ∀ a : Natural,
          Eq (List.elem Natural.eqb a (List.cons x held)) (List.elem Natural.eqb a (blocks_above r (mtf stack x))) :=
        fun a => Eq.trans
          (Eq.trans (congrArg (Bool.or (Natural.eqb a x)) (inv a))
            (Bool.by_cases
              (motive := fun b => Eq (Bool.or b (List.elem Natural.eqb a (blocks_above r stack)))
                (Bool.or b (List.elem Natural.eqb a (List.remove x (blocks_above r stack)))))
              (Natural.eqb a x)
              (fun h => Eq.symm (elem_remove_ne a x (blocks_above r stack) h))
              (fun _ => rfl)))
          (Eq.symm (congrArg (List.elem Natural.eqb a) habove))
      Eq.trans (ih (mtf stack x) (List.cons x held) (nodup_mtf x stack hnd) (Bool.or_eq_false_right hr) inv')
        (Eq.trans (congrArg (fun n => Natural.plus n (cache_misses Natural.eqb (List.cons x held) rest')) hlen)
          (Natural.plus_assoc _ _ _)))
    rest

/-- If `r` was requested, the number of blocks above it in the stack is the
number of distinct blocks requested since its last request. -/
theorem above_mtf_walk (r : Natural) (requests : List Natural) : ∀ stack : List Natural, nodup stack →
    Eq (List.elem Natural.eqb r requests) Bool.true →
    Eq (List.length (blocks_above r (mtf_walk stack requests))) (distinct_count (since r requests)) :=
  List.rec
    (motive := fun requests => ∀ stack : List Natural, nodup stack →
      Eq (List.elem Natural.eqb r requests) Bool.true →
      Eq (List.length (blocks_above r (mtf_walk stack requests))) (distinct_count (since r requests)))
    (fun _ _ h => False.elim (Bool.false_ne_true h))
    (fun x rest ih stack hnd h =>
      Bool.by_cases
        (motive := fun b => Eq (List.elem Natural.eqb r rest) b →
          Eq (List.length (blocks_above r (mtf_walk (mtf stack x) rest)))
            (distinct_count (cond b (since r rest) (cond (Natural.eqb r x) rest (List.cons x rest)))))
        (List.elem Natural.eqb r rest)
        -- the last request of r is this one (x is r): every later distinct block lands above it
        (fun hf _ =>
          let hx : Eq (Natural.eqb r x) Bool.true := Bool.or_left_of hf h
          let hnil : Eq (blocks_above r (mtf stack x)) List.nil :=
            congrArg (fun b => cond b List.nil (List.cons x (blocks_above r (List.remove x stack)))) hx
          Eq.subst
            (motive := fun b => Eq (List.length (blocks_above r (mtf_walk (mtf stack x) rest)))
              (distinct_count (cond b rest (List.cons x rest))))
            (Eq.symm hx)
            (Eq.trans
              (above_walk_count r rest (mtf stack x) List.nil (nodup_mtf x stack hnd) hf
                (fun a => Eq.symm (congrArg (List.elem Natural.eqb a) hnil)))
              (Eq.trans
                (congrArg (fun n => Natural.plus n (cache_misses Natural.eqb List.nil rest)) (congrArg List.length hnil))
                (Eq.trans (Natural.zero_plus _) (cache_misses_nil_eq_count Natural.eqb_lawful rest)))))
        -- r is requested again later: the later requests decide
        (fun ht _ => ih (mtf stack x) (nodup_mtf x stack hnd) ht)
        rfl)
    requests

/-! ## Theorem -/

/-- A request for block `r` after `requests` hits in the LRU cache of `cap`
blocks exactly when `r` was requested before and fewer than `cap` distinct
blocks were requested since its last request. -/
theorem lru_hit_iff_stack_distance (cap r : Natural) (requests : List Natural) :
    Eq (List.elem Natural.eqb r (lru_cache cap requests))
      (Bool.and (List.elem Natural.eqb r requests) (Natural.ltb (distinct_count (since r requests)) cap)) :=
  Eq.trans (congrArg (List.elem Natural.eqb r) (lru_cache_eq_take cap requests))
    (Eq.trans (take_elem_above r (mtf_stack requests) cap)
      (Bool.by_cases
        (motive := fun b => Eq (List.elem Natural.eqb r (mtf_stack requests)) b →
          Eq (Bool.and (List.elem Natural.eqb r (mtf_stack requests))
                (Natural.ltb (List.length (blocks_above r (mtf_stack requests))) cap))
            (Bool.and b (Natural.ltb (distinct_count (since r requests)) cap)))
        (List.elem Natural.eqb r requests)
        (fun _ e => congrArg (fun c => Bool.and c (Natural.ltb (List.length (blocks_above r (mtf_stack requests))) cap)) e)
        (fun ht e => congr2 Bool.and e
          (congrArg (fun n => Natural.ltb n cap) (above_mtf_walk r requests List.nil True.intro ht)))
        (Eq.trans (elem_mtf_walk r requests List.nil) (Bool.or_false_r (List.elem Natural.eqb r requests)))))
