prelude
import PrefixPool.Pooled
/-!
# PrefixPool.Blocks: block chains with longest-prefix hits

Here a request is a whole chain of block ids (`List Natural`), as in
`pyverify/sim/simulate.py`: each id names the prefix up to and including its
block. The pooled uncapacitated cache that starts empty hits, on each request,
the longest prefix of its chain whose blocks it all holds, misses the rest of
the chain, and afterwards holds every block of the chain.

The theorem (`pooled_block_misses_eq_distinct`): on a prefix-closed list of
chains (every block id has one parent), that cache misses exactly once per
distinct block id. Without prefix closure this fails: on `[[1, 2], [3, 2]]`
the second request misses block 2 again, because its first block 3 is not
held (`PrefixPool/Examples.lean` computes 4 misses for 3 ids).

Each definition mirrors the Python function named in its doc comment. On
chains of length one (openings), `pooled_block_misses` is `pooled_misses` of
`PrefixPool/Pooled.lean` and `distinct_blocks` is `distinct_count`.
-/

/-! ## Definitions -/

/-- The number of elements of a list (Python's `len`). -/
noncomputable def List.length {α : Type u} (xs : List α) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero (fun _ _ n => Natural.succ n) xs

/-- All the lists of `xss`, one after the other (Python's
`[x for xs in xss for x in xs]`). -/
noncomputable def List.flatten {α : Type u} (xss : List (List α)) : List α :=
  List.rec (motive := fun _ => List α) List.nil (fun xs _ rest => List.append xs rest) xss

/-- Subtraction, cut off at zero: `n - m`, or zero when `m` exceeds `n`. It is
only used as `length − hits`, and the hits never exceed the length. -/
noncomputable def Natural.minus (n m : Natural) : Natural :=
  Natural.rec (motive := fun _ => Natural → Natural) (fun _ => Natural.zero)
    (fun n' minus_n' m => Natural.rec (motive := fun _ => Natural) (Natural.succ n') (fun m' _ => minus_n' m') m)
    n m

/-- The hits of one request on a cache holding `held`: the length of the
longest prefix of `chain` whose blocks are all held (walk the chain; stop at
the first block that is not held).
Python: `pyverify/sim/simulate.py`, the inner loop of `_uncapacitated_hits`. -/
noncomputable def prefix_hits (held chain : List Natural) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero
    (fun block _ hits_rest =>
      cond (List.elem Natural.eqb block held) (Natural.succ hits_rest) Natural.zero)
    chain

/-- Block misses of the pooled uncapacitated cache holding `held`, serving
`chains` in order: each request misses its chain's length minus its
`prefix_hits`, and afterwards the cache holds every block of the chain
(`List.append chain held`; Python adds `chain[hits:]`, the blocks not held
already, which gives the same set).
Python: `pyverify/sim/simulate.py`, `_uncapacitated_hits`, with misses = block
references − hits (`Run.misses`), summed request by request. -/
noncomputable def pooled_block_walk (held : List Natural) (chains : List (List Natural)) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun chain _ misses_rest held =>
      Natural.plus (Natural.minus (List.length chain) (prefix_hits held chain))
        (misses_rest (List.append chain held)))
    chains held

/-- Block misses of the pooled uncapacitated cache that starts empty, with
longest-prefix hits.
Python: `pyverify/sim/simulate.py`, `pooled_misses(chains)`. -/
noncomputable def pooled_block_misses (chains : List (List Natural)) : Natural :=
  pooled_block_walk List.nil chains

/-- The number of distinct block ids over all chains.
Python: `pyverify/sim/simulate.py`, `distinct_count(chains)`. -/
noncomputable def distinct_blocks (chains : List (List Natural)) : Natural :=
  distinct_count (List.flatten chains)

/-- What a block id follows: the root (for the first block of a chain) or
another block. Python: `pyverify/inputs/model.py`, `ROOT` (−1) or a block id. -/
inductive Parent : Type where
  | root : Parent
  | block (id : Natural) : Parent

/-- `chain_fits parent above chain`: walking `chain`, its first block follows
`above` and every later block follows the block before it, as `parent` says:
`parent b` is what block `b` follows here. -/
def chain_fits (parent : Natural → Parent) (above : Parent) (chain : List Natural) : Prop :=
  List.rec (motive := fun _ => Parent → Prop) (fun _ => True)
    (fun block _ fits_rest above => And (Eq (parent block) above) (fits_rest (Parent.block block)))
    chain above

/-- Every chain fits `parent`, starting from the root. -/
def all_fit (parent : Natural → Parent) (chains : List (List Natural)) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun chain _ fit_rest => And (chain_fits parent Parent.root chain) fit_rest)
    chains

/-- The chains are prefix-closed: every block id has one parent. There is one
function `parent` such that, at every occurrence of every id `b` in every
chain, `b` follows `parent b`: the root if `b` is the chain's first block,
the block before it otherwise.
Python: `pyverify/inputs/model.py`, `first_prefix_violation(chains) is None`. Python
records each id's parent at its first occurrence (`parent_of`) and reports the
first later occurrence that follows anything else; so it finds nothing exactly
when such a function exists (its `parent_of`, extended arbitrarily to ids that
do not occur). As in Python, an id cannot repeat within a chain: the root is
only ever followed at depth 0 (the module proves this, `path_fresh`). -/
def prefix_closed (chains : List (List Natural)) : Prop :=
  Exists (fun parent : Natural → Parent => all_fit parent chains)

/-! ## Lemmas -/

theorem Parent.root_ne_block {a : Natural} (h : Eq Parent.root (Parent.block a)) : False :=
  @Eq.rec Parent Parent.root (fun x _ => Parent.rec (motive := fun _ => Prop) True (fun _ => False) x)
    True.intro (Parent.block a) h

theorem Parent.block_inj {a b : Natural} (h : Eq (Parent.block a) (Parent.block b)) : Eq a b :=
  congrArg (fun p => Parent.rec (motive := fun _ => Natural) a (fun n => n) p) h

theorem Bool.or_true_left {a : Bool} (b : Bool) (h : Eq a Bool.true) : Eq (Bool.or a b) Bool.true :=
  congrArg (fun x => Bool.or x b) h

theorem Bool.or_true_right (a : Bool) {b : Bool} (h : Eq b Bool.true) : Eq (Bool.or a b) Bool.true :=
  Eq.trans (congrArg (Bool.or a) h) (Bool.or_true a)

theorem Bool.or_false {a b : Bool} (ha : Eq a Bool.false) (hb : Eq b Bool.false) :
    Eq (Bool.or a b) Bool.false :=
  Eq.trans (congrArg (fun x => Bool.or x b) ha) hb

/-- If `a || b` and `a` is false, then `b`. -/
theorem Bool.or_right_of {a b : Bool} (ha : Eq a Bool.false) (h : Eq (Bool.or a b) Bool.true) :
    Eq b Bool.true :=
  Eq.trans (Eq.symm (congrArg (fun x => Bool.or x b) ha)) h

theorem Bool.or_left_comm (p q r : Bool) :
    Eq (Bool.or p (Bool.or q r)) (Bool.or q (Bool.or p r)) :=
  Bool.rec (motive := fun p => Eq (Bool.or p (Bool.or q r)) (Bool.or q (Bool.or p r)))
    rfl (Eq.symm (Bool.or_true q)) p

theorem Natural.one_plus (n : Natural) :
    Eq (Natural.plus (Natural.succ Natural.zero) n) (Natural.succ n) :=
  Eq.trans (Natural.succ_plus Natural.zero n) (congrArg Natural.succ (Natural.zero_plus n))

/-- `xs` reversed onto `acc`: the order in which `cache_misses` stacks what it fetches. -/
noncomputable def List.rev_onto {α : Type u} (xs acc : List α) : List α :=
  List.rec (motive := fun _ => List α → List α) (fun acc => acc)
    (fun x _ rev_rest acc => rev_rest (List.cons x acc)) xs acc

/-- The parent of the next block after a reversed prefix `pre` (nearest block
first): the root after nothing, else the last block walked. -/
noncomputable def path_parent (pre : List Natural) : Parent :=
  List.rec (motive := fun _ => Parent) Parent.root (fun a _ _ => Parent.block a) pre

/-- `pre` (nearest block first) is a path to the root: each block's parent is
the next one, the last block's parent is the root. -/
def is_path (parent : Natural → Parent) (pre : List Natural) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun a rest path_rest => And (Eq (parent a) (path_parent rest)) path_rest) pre

/-- Every block of `chain` is missing from `held`. -/
def all_absent (held chain : List Natural) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun b _ rest => And (Eq (List.elem Natural.eqb b held) Bool.false) rest) chain

/-- `held` is parent-closed: with a block, it holds the block's parent block. -/
def parent_closed (parent : Natural → Parent) (held : List Natural) : Prop :=
  ∀ b a : Natural, Eq (parent b) (Parent.block a) →
    Eq (List.elem Natural.eqb b held) Bool.true → Eq (List.elem Natural.eqb a held) Bool.true

theorem path_parent_mem (q : List Natural) : ∀ a : Natural,
    Eq (path_parent q) (Parent.block a) → Eq (List.elem Natural.eqb a q) Bool.true :=
  List.rec
    (motive := fun q => ∀ a : Natural,
      Eq (path_parent q) (Parent.block a) → Eq (List.elem Natural.eqb a q) Bool.true)
    (fun _ h => False.elim (Parent.root_ne_block h))
    (fun _x q' _ a h => Bool.or_true_left (List.elem Natural.eqb a q')
      (Eq.subst (motive := fun y => Eq (Natural.eqb a y) Bool.true)
        (Eq.symm (Parent.block_inj h)) (Natural.eqb_self a)))
    q

/-- On a path, a block's parent block is on the path too. -/
theorem path_closed (parent : Natural → Parent) (q : List Natural) :
    is_path parent q → ∀ y z : Natural, Eq (List.elem Natural.eqb y q) Bool.true →
      Eq (parent y) (Parent.block z) → Eq (List.elem Natural.eqb z q) Bool.true :=
  List.rec
    (motive := fun q => is_path parent q → ∀ y z : Natural, Eq (List.elem Natural.eqb y q) Bool.true →
      Eq (parent y) (Parent.block z) → Eq (List.elem Natural.eqb z q) Bool.true)
    (fun _ _ _ hy _ => False.elim (Bool.false_ne_true hy))
    (fun a q' ih hp y z hy hyz =>
      Bool.or_true_right (Natural.eqb z a)
        (Bool.by_cases (motive := fun _ => Eq (List.elem Natural.eqb z q') Bool.true) (Natural.eqb y a)
          (fun hya => ih (And.right hp) y z (Bool.or_right_of hya hy) hyz)
          (fun hya => path_parent_mem q' z
            (Eq.trans (Eq.symm (And.left hp))
              (Eq.subst (motive := fun w => Eq (parent w) (Parent.block z))
                (Natural.eq_of_eqb y a hya) hyz)))))
    q

/-- A block whose parent is the head of a path is not on the path: no id
repeats along a path to the root. -/
theorem path_fresh (parent : Natural → Parent) (q : List Natural) :
    is_path parent q → ∀ x : Natural, Eq (parent x) (path_parent q) →
      Eq (List.elem Natural.eqb x q) Bool.false :=
  List.rec
    (motive := fun q => is_path parent q → ∀ x : Natural, Eq (parent x) (path_parent q) →
      Eq (List.elem Natural.eqb x q) Bool.false)
    (fun _ _ _ => rfl)
    (fun a q' ih hp x hx =>
      -- `a` itself is not on the rest of the path.
      let fresh_a : Eq (List.elem Natural.eqb a q') Bool.false := ih (And.right hp) a (And.left hp)
      Bool.or_false
        (Bool.by_cases (motive := fun c => Eq c Bool.false) (Natural.eqb x a)
          (fun _ => rfl)
          (fun hxa => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm fresh_a)
            (path_parent_mem q' a (Eq.trans (Eq.symm (And.left hp))
              (Eq.subst (motive := fun w => Eq (parent w) (Parent.block a))
                (Natural.eq_of_eqb x a hxa) hx)))))))
        (Bool.by_cases (motive := fun c => Eq c Bool.false) (List.elem Natural.eqb x q')
          (fun _ => rfl)
          (fun hxq => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm fresh_a)
            (path_closed parent q' (And.right hp) x a hxq hx))))))
    q

/-- In a chain that fits `parent` from `above`, a block's parent block is in
the chain, unless the block is the first one and follows `above`. -/
theorem chain_parent_mem (parent : Natural → Parent) (d : List Natural) :
    ∀ above : Parent, chain_fits parent above d → ∀ b a : Natural,
      Eq (List.elem Natural.eqb b d) Bool.true → Eq (parent b) (Parent.block a) →
      (Eq above (Parent.block a) → False) → Eq (List.elem Natural.eqb a d) Bool.true :=
  List.rec
    (motive := fun d => ∀ above : Parent, chain_fits parent above d → ∀ b a : Natural,
      Eq (List.elem Natural.eqb b d) Bool.true → Eq (parent b) (Parent.block a) →
      (Eq above (Parent.block a) → False) → Eq (List.elem Natural.eqb a d) Bool.true)
    (fun _ _ _ _ hb _ _ => False.elim (Bool.false_ne_true hb))
    (fun x d' ih _above hfit b a hb hba hne =>
      Bool.by_cases (motive := fun _ => Eq (List.elem Natural.eqb a (List.cons x d')) Bool.true)
        (Natural.eqb b x)
        (fun hbx =>
          Bool.by_cases (motive := fun _ => Eq (List.elem Natural.eqb a (List.cons x d')) Bool.true)
            (Natural.eqb a x)
            (fun hax => Bool.or_true_right (Natural.eqb a x)
              (ih (Parent.block x) (And.right hfit) b a (Bool.or_right_of hbx hb) hba
                (fun h => Bool.false_ne_true (Eq.trans (Eq.symm hax)
                  (Eq.subst (motive := fun y => Eq (Natural.eqb a y) Bool.true)
                    (Eq.symm (Parent.block_inj h)) (Natural.eqb_self a))))))
            (fun hax => Bool.or_true_left (List.elem Natural.eqb a d') hax))
        (fun hbx => False.elim (hne (Eq.trans (Eq.symm (And.left hfit))
          (Eq.subst (motive := fun y => Eq (parent y) (Parent.block a))
            (Natural.eq_of_eqb b x hbx) hba)))))
    d

/-- Adding a chain that fits from the root keeps the held blocks parent-closed. -/
theorem parent_closed_append (parent : Natural → Parent) (c held : List Natural)
    (hc : chain_fits parent Parent.root c) (hheld : parent_closed parent held) :
    parent_closed parent (List.append c held) :=
  fun b a hba hb =>
    Eq.trans (List.elem_append Natural.eqb a c held)
      (Bool.by_cases
        (motive := fun _ => Eq (Bool.or (List.elem Natural.eqb a c) (List.elem Natural.eqb a held)) Bool.true)
        (List.elem Natural.eqb b c)
        (fun hbc => Bool.or_true_right (List.elem Natural.eqb a c)
          (hheld b a hba (Bool.or_right_of hbc (Eq.trans (Eq.symm (List.elem_append Natural.eqb b c held)) hb))))
        (fun hbc => Bool.or_true_left (List.elem Natural.eqb a held)
          (chain_parent_mem parent c Parent.root hc b a hbc hba Parent.root_ne_block)))

/-- After a block that is not held, no later block of a fitting chain is held. -/
theorem absent_tail (parent : Natural → Parent) (held : List Natural) (hheld : parent_closed parent held)
    (c : List Natural) : ∀ x : Natural, Eq (List.elem Natural.eqb x held) Bool.false →
      chain_fits parent (Parent.block x) c → all_absent held c :=
  List.rec
    (motive := fun c => ∀ x : Natural, Eq (List.elem Natural.eqb x held) Bool.false →
      chain_fits parent (Parent.block x) c → all_absent held c)
    (fun _ _ _ => True.intro)
    (fun y _ ih x hx hfit =>
      let hy : Eq (List.elem Natural.eqb y held) Bool.false :=
        Bool.by_cases (motive := fun c => Eq c Bool.false) (List.elem Natural.eqb y held)
          (fun _ => rfl)
          (fun h => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm hx) (hheld y x (And.left hfit) h))))
      And.intro hy (ih y hy (And.right hfit)))
    c

/-- The rest of a chain, from a block that is not held on, misses on every
block in the keep-everything cache (its blocks are new and pairwise distinct). -/
theorem miss_tail (parent : Natural → Parent) (held : List Natural) (c : List Natural) :
    ∀ pre : List Natural, is_path parent pre → chain_fits parent (path_parent pre) c →
      all_absent held c →
      Eq (cache_misses Natural.eqb (List.append pre held) c) (List.length c) :=
  List.rec
    (motive := fun c => ∀ pre : List Natural, is_path parent pre → chain_fits parent (path_parent pre) c →
      all_absent held c →
      Eq (cache_misses Natural.eqb (List.append pre held) c) (List.length c))
    (fun _ _ _ _ => rfl)
    (fun x c' ih pre hpath hfit habs =>
      Eq.trans
        (congr2 Natural.plus
          (congrArg (fun e => cond e Natural.zero (Natural.succ Natural.zero))
            (Eq.trans (List.elem_append Natural.eqb x pre held)
              (Bool.or_false (path_fresh parent pre hpath x (And.left hfit)) (And.left habs))))
          (ih (List.cons x pre) (And.intro (And.left hfit) hpath) (And.right hfit) (And.right habs)))
        (Natural.one_plus (List.length c')))
    c

/-- One step of a request's misses: the first block decides. -/
theorem chain_misses_cons (held : List Natural) (x : Natural) (c : List Natural) :
    Eq (Natural.minus (List.length (List.cons x c)) (prefix_hits held (List.cons x c)))
      (cond (List.elem Natural.eqb x held)
        (Natural.minus (List.length c) (prefix_hits held c)) (Natural.succ (List.length c))) :=
  Bool.rec
    (motive := fun e =>
      Eq (Natural.minus (Natural.succ (List.length c)) (cond e (Natural.succ (prefix_hits held c)) Natural.zero))
        (cond e (Natural.minus (List.length c) (prefix_hits held c)) (Natural.succ (List.length c))))
    rfl rfl (List.elem Natural.eqb x held)

/-- A request's longest-prefix misses equal the misses of the keep-everything
cache fed its blocks one by one. -/
theorem chain_misses_eq (parent : Natural → Parent) (held : List Natural) (hheld : parent_closed parent held)
    (c : List Natural) :
    ∀ pre : List Natural, is_path parent pre → chain_fits parent (path_parent pre) c →
      Eq (Natural.minus (List.length c) (prefix_hits held c))
        (cache_misses Natural.eqb (List.append pre held) c) :=
  List.rec
    (motive := fun c => ∀ pre : List Natural, is_path parent pre → chain_fits parent (path_parent pre) c →
      Eq (Natural.minus (List.length c) (prefix_hits held c))
        (cache_misses Natural.eqb (List.append pre held) c))
    (fun _ _ _ => rfl)
    (fun x c' ih pre hpath hfit =>
      Eq.trans (chain_misses_cons held x c')
        (Bool.by_cases
          (motive := fun e =>
            Eq (cond e (Natural.minus (List.length c') (prefix_hits held c')) (Natural.succ (List.length c')))
              (cache_misses Natural.eqb (List.append pre held) (List.cons x c')))
          (List.elem Natural.eqb x held)
          (fun hx => Eq.symm (miss_tail parent held (List.cons x c') pre hpath hfit
            (And.intro hx (absent_tail parent held hheld c' x hx (And.right hfit)))))
          (fun hx => Eq.trans
            (ih (List.cons x pre) (And.intro (And.left hfit) hpath) (And.right hfit))
            (Eq.symm (Eq.trans
              (congrArg (fun n => Natural.plus n (cache_misses Natural.eqb (List.cons x (List.append pre held)) c'))
                (absent_of_elem_true Natural.eqb x (List.append pre held)
                  (Eq.trans (List.elem_append Natural.eqb x pre held)
                    (Bool.or_true_right (List.elem Natural.eqb x pre) hx))))
              (Natural.zero_plus _))))))
    c

theorem cache_misses_append (c : List Natural) : ∀ held rs : List Natural,
    Eq (cache_misses Natural.eqb held (List.append c rs))
      (Natural.plus (cache_misses Natural.eqb held c) (cache_misses Natural.eqb (List.rev_onto c held) rs)) :=
  List.rec
    (motive := fun c => ∀ held rs : List Natural,
      Eq (cache_misses Natural.eqb held (List.append c rs))
        (Natural.plus (cache_misses Natural.eqb held c) (cache_misses Natural.eqb (List.rev_onto c held) rs)))
    (fun held rs => Eq.symm (Natural.zero_plus (cache_misses Natural.eqb held rs)))
    (fun x _ ih held rs =>
      Eq.trans (congrArg (Natural.plus (absent Natural.eqb x held)) (ih (List.cons x held) rs))
        (Eq.symm (Natural.plus_assoc _ _ _)))
    c

/-- The keep-everything cache's misses depend only on which elements it holds. -/
theorem cache_misses_congr (rs : List Natural) : ∀ h₁ h₂ : List Natural,
    (∀ a : Natural, Eq (List.elem Natural.eqb a h₁) (List.elem Natural.eqb a h₂)) →
    Eq (cache_misses Natural.eqb h₁ rs) (cache_misses Natural.eqb h₂ rs) :=
  List.rec
    (motive := fun rs => ∀ h₁ h₂ : List Natural,
      (∀ a : Natural, Eq (List.elem Natural.eqb a h₁) (List.elem Natural.eqb a h₂)) →
      Eq (cache_misses Natural.eqb h₁ rs) (cache_misses Natural.eqb h₂ rs))
    (fun _ _ _ => rfl)
    (fun r _ ih h₁ h₂ h =>
      congr2 Natural.plus
        (congrArg (fun e => cond e Natural.zero (Natural.succ Natural.zero)) (h r))
        (ih (List.cons r h₁) (List.cons r h₂) (fun a => congrArg (Bool.or (Natural.eqb a r)) (h a))))
    rs

theorem elem_rev_onto (c : List Natural) : ∀ held : List Natural, ∀ a : Natural,
    Eq (List.elem Natural.eqb a (List.rev_onto c held)) (List.elem Natural.eqb a (List.append c held)) :=
  List.rec
    (motive := fun c => ∀ held : List Natural, ∀ a : Natural,
      Eq (List.elem Natural.eqb a (List.rev_onto c held)) (List.elem Natural.eqb a (List.append c held)))
    (fun _ _ => rfl)
    (fun x c' ih held a =>
      Eq.trans (ih (List.cons x held) a)
        (Eq.trans (List.elem_append Natural.eqb a c' (List.cons x held))
          (Eq.trans (Bool.or_left_comm (List.elem Natural.eqb a c') (Natural.eqb a x) (List.elem Natural.eqb a held))
            (congrArg (Bool.or (Natural.eqb a x)) (Eq.symm (List.elem_append Natural.eqb a c' held))))))
    c

/-- On chains that fit `parent`, from a parent-closed `held`, the longest-prefix
cache misses as often as the keep-everything cache fed all blocks in order. -/
theorem pooled_block_walk_eq (parent : Natural → Parent) (chains : List (List Natural)) :
    ∀ held : List Natural, parent_closed parent held → all_fit parent chains →
      Eq (pooled_block_walk held chains) (cache_misses Natural.eqb held (List.flatten chains)) :=
  List.rec
    (motive := fun chains => ∀ held : List Natural, parent_closed parent held → all_fit parent chains →
      Eq (pooled_block_walk held chains) (cache_misses Natural.eqb held (List.flatten chains)))
    (fun _ _ _ => rfl)
    (fun c rest ih held hheld hfit =>
      Eq.trans
        (congr2 Natural.plus
          (chain_misses_eq parent held hheld c List.nil True.intro (And.left hfit))
          (Eq.trans
            (ih (List.append c held) (parent_closed_append parent c held (And.left hfit) hheld) (And.right hfit))
            (cache_misses_congr (List.flatten rest) (List.append c held) (List.rev_onto c held)
              (fun a => Eq.symm (elem_rev_onto c held a)))))
        (Eq.symm (cache_misses_append c held (List.flatten rest))))
    chains

/-! ## Theorem -/

/-- On every prefix-closed list of block chains, the pooled uncapacitated
cache that starts empty, with longest-prefix hits, misses exactly once per
distinct block id. -/
theorem pooled_block_misses_eq_distinct (chains : List (List Natural)) (h : prefix_closed chains) :
    Eq (pooled_block_misses chains) (distinct_blocks chains) :=
  Exists.rec (motive := fun _ => Eq (pooled_block_misses chains) (distinct_blocks chains))
    (fun parent hfit =>
      Eq.trans
        (pooled_block_walk_eq parent chains List.nil (fun _ _ _ hb => False.elim (Bool.false_ne_true hb)) hfit)
        (cache_misses_nil_eq_count Natural.eqb_lawful (List.flatten chains)))
    h
