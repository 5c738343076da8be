prelude
import PrefixPool.BeladyOptimal
/-!
# PrefixPool.LruPrefix: what `pyverify mrc` and the trusted `lru` recount rest on

Two facts, both argued on paper in the docstring of `pyverify/sim/mrc.py`
(after Mattson, Gecsei, Slutz and Traiger 1970):

* **Misses from stack distances** (`lru_misses_eq_far`). On a flat sequence of
  block requests, an LRU cache of `cap` blocks that starts empty misses once
  for every distinct block (its first request) plus once for every later
  request whose block saw at least `cap` distinct blocks requested since its
  previous request. This is `misses(C) = cold + #{d >= C}`, the formula
  `pyverify mrc` evaluates at every capacity from one histogram. The
  per-request fact is `lru_hit_iff_stack_distance` (`StackDistance.lean`);
  here it is summed over the requests.
* **Longest-prefix LRU is flat LRU** (`prefix_lru_eq_flat`). On prefix-closed
  chains, pyverify's LRU prefix cache (`pyverify/sim/simulate.py`,
  `ChainOrderLRU`: a request hits the longest held prefix of its chain, then
  every block of the chain is served in chain order, held blocks refreshed,
  missing ones fetched) misses exactly as many blocks as a flat LRU cache on
  the flattened block sequence. So `pyverify mrc`'s curve of the flat
  sequence, and the trusted checker's flat `lru` recount, count the prefix
  cache's misses. (Without prefix closure it fails: on `[[1, 2], [3, 2]]`
  with 2 blocks the prefix cache misses 4 blocks, flat LRU 3.)
-/

/-! ## Definitions -/

/-- Misses of an LRU cache of `cap` blocks that holds `cache` (most recent
first) and serves `requests` one block at a time: a request misses when its
block is not held; then `lru_step` (`Lru.lean`) updates the cache. -/
noncomputable def lru_misses_walk (cap : Natural) (cache requests : List Natural) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun r _ misses_rest cache =>
      Natural.plus (absent Natural.eqb r cache) (misses_rest (lru_step cap cache r)))
    requests cache

/-- Misses of an LRU cache of `cap` blocks that starts empty, on a flat
sequence of block requests.
Python: `pyverify/lean/mirror.py`, `lru_misses`; the trusted checker's
`pyverify/trusted/recount.py`, `lru_misses` (one cache per host). -/
noncomputable def lru_misses (cap : Natural) (requests : List Natural) : Natural :=
  lru_misses_walk cap List.nil requests

/-- One if a request for `r` after the requests `earlier` (oldest first) is a
*far* reference for `cap` blocks: `r` was requested before, and at least `cap`
distinct blocks were requested since its last request (its stack distance is
`cap` or more); zero otherwise. -/
noncomputable def far_reference (cap r : Natural) (earlier : List Natural) : Natural :=
  cond (List.elem Natural.eqb r earlier)
    (cond (Natural.ltb (distinct_count (since r earlier)) cap) Natural.zero (Natural.succ Natural.zero))
    Natural.zero

/-- The far references among `requests`, served after `earlier` (oldest first). -/
noncomputable def far_walk (cap : Natural) (earlier requests : List Natural) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun r _ far_rest earlier =>
      Natural.plus (far_reference cap r earlier) (far_rest (List.append earlier (List.cons r List.nil))))
    requests earlier

/-- The number of requests of `requests` that repeat a block requested
before, with at least `cap` distinct blocks requested since that block's
previous request.
Python: `pyverify/lean/mirror.py`, `far_references`; `pyverify mrc` counts
them as `#{d >= C}` (`pyverify/sim/mrc.py`, `MissRatioCurve.misses`). -/
noncomputable def far_references (cap : Natural) (requests : List Natural) : Natural :=
  far_walk cap List.nil requests

/-! ## Definitions: pyverify's chain-order LRU with longest-prefix hits -/

/-- Block misses of pyverify's LRU prefix cache of `cap` blocks that holds
`cache` (most recent first), serving `chains` in order. A request hits the
longest prefix of its chain whose blocks are all held (`prefix_hits`,
`Blocks.lean`) and misses the rest of the chain; then the cache serves every
block of the chain in chain order, as a flat LRU does (`lru_walk`,
`Lru.lean`): a held block moves to the front (so does a block that is held
but comes after the chain's first miss: it counts as a miss, is fetched
again and refreshed), a missing one enters at the front and the least
recently used block beyond `cap` is dropped.
Python: `pyverify/sim/simulate.py`, `ChainOrderLRU` (`prefix_hits`, then
`serve`). -/
noncomputable def prefix_lru_walk (cap : Natural) (cache : List Natural) (chains : List (List Natural)) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun chain _ misses_rest cache =>
      Natural.plus (Natural.minus (List.length chain) (prefix_hits cache chain))
        (misses_rest (lru_walk cap cache chain)))
    chains cache

/-- Block misses of pyverify's LRU prefix cache of `cap` blocks that starts
empty, on `chains`.
Python: `pyverify/sim/simulate.py`, `simulate(chains, None, "pooled",
capacity=cap, eviction="lru").misses` (for `cap ≥ 1`); `pyverify/lean/mirror.py`,
`prefix_lru_misses`. -/
noncomputable def prefix_lru_misses (cap : Natural) (chains : List (List Natural)) : Natural :=
  prefix_lru_walk cap List.nil chains

/-! ## Lemmas: misses from stack distances -/

theorem lru_walk_append (cap : Natural) (xs : List Natural) : ∀ cache ys : List Natural,
    Eq (lru_walk cap cache (List.append xs ys)) (lru_walk cap (lru_walk cap cache xs) ys) :=
  List.rec
    (motive := fun xs => ∀ cache ys : List Natural,
      Eq (lru_walk cap cache (List.append xs ys)) (lru_walk cap (lru_walk cap cache xs) ys))
    (fun _ _ => rfl)
    (fun x _ ih cache ys => ih (lru_step cap cache x) ys)
    xs

/-- A miss (`and e l` false) is a cold one (`e` false) or a far one (`e` true, `l` false). -/
theorem miss_split (e l : Bool) :
    Eq (cond (Bool.and e l) Natural.zero (Natural.succ Natural.zero))
      (Natural.plus (cond e Natural.zero (Natural.succ Natural.zero))
        (cond e (cond l Natural.zero (Natural.succ Natural.zero)) Natural.zero)) :=
  Bool.rec
    (motive := fun e =>
      Eq (cond (Bool.and e l) Natural.zero (Natural.succ Natural.zero))
        (Natural.plus (cond e Natural.zero (Natural.succ Natural.zero))
          (cond e (cond l Natural.zero (Natural.succ Natural.zero)) Natural.zero)))
    rfl
    (Bool.rec
      (motive := fun l =>
        Eq (cond l Natural.zero (Natural.succ Natural.zero))
          (Natural.plus Natural.zero (cond l Natural.zero (Natural.succ Natural.zero))))
      rfl rfl l)
    e

/-- One request: LRU misses it exactly when the keep-everything cache does
(a cold miss) or it is a far reference. -/
theorem lru_absent_split (cap r : Natural) (earlier held : List Natural)
    (hheld : Eq (List.elem Natural.eqb r held) (List.elem Natural.eqb r earlier)) :
    Eq (absent Natural.eqb r (lru_cache cap earlier))
      (Natural.plus (absent Natural.eqb r held) (far_reference cap r earlier)) :=
  Eq.trans (congrArg (fun b => cond b Natural.zero (Natural.succ Natural.zero))
      (lru_hit_iff_stack_distance cap r earlier))
    (Eq.trans (miss_split (List.elem Natural.eqb r earlier) (Natural.ltb (distinct_count (since r earlier)) cap))
      (congrArg (fun b => Natural.plus (cond b Natural.zero (Natural.succ Natural.zero)) (far_reference cap r earlier))
        (Eq.symm hheld)))

theorem Bool.or_false_comm (a b : Bool) : Eq (Bool.or a (Bool.or b Bool.false)) (Bool.or b a) :=
  Bool.rec (motive := fun b => Eq (Bool.or a (Bool.or b Bool.false)) (Bool.or b a))
    (Bool.or_false_r a) (Bool.or_true a) b

/-- After `earlier`, LRU's misses on `rest` are the keep-everything cache's
misses (from a cache `held` with the blocks of `earlier`) plus the far
references. -/
theorem lru_misses_walk_split (cap : Natural) (rest : List Natural) : ∀ earlier held : List Natural,
    (∀ a : Natural, Eq (List.elem Natural.eqb a held) (List.elem Natural.eqb a earlier)) →
    Eq (lru_misses_walk cap (lru_cache cap earlier) rest)
      (Natural.plus (cache_misses Natural.eqb held rest) (far_walk cap earlier rest)) :=
  List.rec
    (motive := fun rest => ∀ earlier held : List Natural,
      (∀ a : Natural, Eq (List.elem Natural.eqb a held) (List.elem Natural.eqb a earlier)) →
      Eq (lru_misses_walk cap (lru_cache cap earlier) rest)
        (Natural.plus (cache_misses Natural.eqb held rest) (far_walk cap earlier rest)))
    (fun _ _ _ => rfl)
    (fun r rest' ih earlier held h =>
      let next : List Natural := List.append earlier (List.cons r List.nil)
      let hnext : Eq (lru_step cap (lru_cache cap earlier) r) (lru_cache cap next) :=
        Eq.symm (lru_walk_append cap earlier List.nil (List.cons r List.nil))
      let hheld : ∀ a : Natural, Eq (List.elem Natural.eqb a (List.cons r held)) (List.elem Natural.eqb a next) :=
        fun a => Eq.trans (congrArg (Bool.or (Natural.eqb a r)) (h a))
          (Eq.symm (Eq.trans (List.elem_append Natural.eqb a earlier (List.cons r List.nil))
            (Bool.or_false_comm (List.elem Natural.eqb a earlier) (Natural.eqb a r))))
      Eq.trans
        (congr2 Natural.plus (lru_absent_split cap r earlier held (h r))
          (Eq.trans (congrArg (fun c => lru_misses_walk cap c rest') hnext)
            (ih next (List.cons r held) hheld)))
        (Eq.symm (Natural.plus_four _ _ _ _)))
    rest

/-! ## Lemmas: longest-prefix LRU is flat LRU on prefix-closed chains

The flat LRU cache of `cap` blocks is the top `cap` entries of the
move-to-front stack (`lru_cache_eq_take`). On prefix-closed chains the stack
keeps an invariant (`above_inv`): with a block `b` whose parent is a block
`p`, it holds `p`, and every block above `p` is `b` or above `b`. (When `p`
was requested after `b`, `p` is above `b`; otherwise `p` was last requested
just before `b`, and only `b` came between.) So when a chain requests `p`
and then `b`, `b` is at least as deep in the stack as `p` was: if `p`
missed, `b` misses too (`hit_needs_parent`). Flat LRU's hits on a chain are
therefore a prefix of it, the longest held one, and it counts the same
misses as the prefix cache; both then update the cache the same way.
-/

theorem lru_misses_walk_append (cap : Natural) (xs : List Natural) : ∀ cache ys : List Natural,
    Eq (lru_misses_walk cap cache (List.append xs ys))
      (Natural.plus (lru_misses_walk cap cache xs) (lru_misses_walk cap (lru_walk cap cache xs) ys)) :=
  List.rec
    (motive := fun xs => ∀ cache ys : List Natural,
      Eq (lru_misses_walk cap cache (List.append xs ys))
        (Natural.plus (lru_misses_walk cap cache xs) (lru_misses_walk cap (lru_walk cap cache xs) ys)))
    (fun _ _ => Eq.symm (Natural.zero_plus _))
    (fun x _ ih cache ys =>
      Eq.trans (congrArg (Natural.plus (absent Natural.eqb x cache)) (ih (lru_step cap cache x) ys))
        (Eq.symm (Natural.plus_assoc _ _ _)))
    xs

/-- `r` is never above itself. -/
theorem above_self (r : Natural) (stack : List Natural) :
    Eq (List.elem Natural.eqb r (blocks_above r stack)) Bool.false :=
  List.rec (motive := fun stack => Eq (List.elem Natural.eqb r (blocks_above r stack)) Bool.false)
    rfl
    (fun y s' ih =>
      Bool.by_cases
        (motive := fun c => Eq (List.elem Natural.eqb r (cond c List.nil (List.cons y (blocks_above r s')))) Bool.false)
        (Natural.eqb r y)
        (fun hry => Bool.or_false hry ih)
        (fun _ => rfl))
    stack

/-- Moving `x` to the top puts it above every other block `r`. -/
theorem above_mtf_ne (r x : Natural) (stack : List Natural) (h : Eq (Natural.eqb r x) Bool.false) :
    Eq (blocks_above r (mtf stack x)) (List.cons x (List.remove x (blocks_above r stack))) :=
  Eq.trans (congrArg (fun b => cond b List.nil (List.cons x (blocks_above r (List.remove x stack)))) h)
    (congrArg (List.cons x) (above_remove r x stack h))

/-- A hit moves its block to the front: the same blocks are held. -/
theorem elem_move_front (a b : Natural) (xs : List Natural) (hb : Eq (List.elem Natural.eqb b xs) Bool.true) :
    Eq (List.elem Natural.eqb a (List.cons b (List.remove b xs))) (List.elem Natural.eqb a xs) :=
  Bool.by_cases
    (motive := fun c => Eq (Natural.eqb a b) c →
      Eq (Bool.or c (List.elem Natural.eqb a (List.remove b xs))) (List.elem Natural.eqb a xs))
    (Natural.eqb a b)
    (fun _ hab => elem_remove_ne a b xs hab)
    (fun _ hab => Eq.symm (Eq.subst (motive := fun z => Eq (List.elem Natural.eqb z xs) Bool.true)
      (Eq.symm (Natural.eq_of_eqb a b hab)) hb))
    rfl

/-- `a ≤ b` and `b < c` give `a < c`. -/
theorem Natural.ltb_of_le_ltb {a b c : Natural} (hab : Natural.le a b) (h : Eq (Natural.ltb b c) Bool.true) :
    Eq (Natural.ltb a c) Bool.true :=
  Bool.by_cases (motive := fun x => Eq (Natural.ltb a c) x → Eq x Bool.true) (Natural.ltb a c)
    (fun _ hf => False.elim (Natural.not_succ_le_self b
      (Natural.le_trans (Natural.le_of_leb (Natural.succ b) c h)
        (Natural.le_trans (Natural.le_of_ltb_false hf) hab))))
    (fun _ _ => rfl)
    rfl

/-- The stack invariant on prefix-closed chains: a block `b` in the stack
whose parent is a block `p` has `p` in the stack too, and every block above
`p` is `b` or above `b`. -/
def above_inv (parent : Natural → Parent) (stack : List Natural) : Prop :=
  ∀ b p : Natural, Eq (parent b) (Parent.block p) → Eq (List.elem Natural.eqb b stack) Bool.true →
    And (Eq (List.elem Natural.eqb p stack) Bool.true)
      (subset (blocks_above p stack) (List.cons b (blocks_above b stack)))

/-- If the next block follows a block `q`, `q` is the top of the stack (it
was the request just before). -/
def on_top (above : Parent) (stack : List Natural) : Prop :=
  ∀ q : Natural, Eq above (Parent.block q) → Exists (fun rest : List Natural => Eq stack (List.cons q rest))

/-- The block walked last (if any) is not its own parent. -/
def no_loop (parent : Natural → Parent) (above : Parent) : Prop :=
  ∀ q : Natural, Eq above (Parent.block q) → Eq (parent q) (Parent.block q) → False

theorem no_loop_next (parent : Natural → Parent) (above : Parent) (b : Natural)
    (hb : Eq (parent b) above) (h : no_loop parent above) : no_loop parent (Parent.block b) :=
  fun _q hq hloop =>
    let hself : Eq (parent b) (Parent.block b) :=
      Eq.subst (motive := fun z => Eq (parent z) (Parent.block z)) (Eq.symm (Parent.block_inj hq)) hloop
    h b (Eq.trans (Eq.symm hb) hself) hself

/-- A block that follows a block `q` is not `q`. -/
theorem ne_parent (parent : Natural → Parent) (above : Parent) (b q : Natural)
    (hb : Eq (parent b) above) (h : no_loop parent above) (hq : Eq above (Parent.block q)) :
    Eq (Natural.eqb b q) Bool.false :=
  Bool.by_cases (motive := fun c => Eq (Natural.eqb b q) c → Eq (Natural.eqb b q) Bool.false) (Natural.eqb b q)
    (fun _ e => e)
    (fun _ e => False.elim (h q hq
      (Eq.subst (motive := fun z => Eq (parent z) (Parent.block q)) (Natural.eq_of_eqb b q e) (Eq.trans hb hq))))
    rfl

/-- `above_inv` after the request of `x`, for `x` itself: its parent `p` was the top. -/
theorem inv_mtf_top (x p : Natural) (rest : List Natural) :
    And (Eq (List.elem Natural.eqb p (mtf (List.cons p rest) x)) Bool.true)
      (subset (blocks_above p (mtf (List.cons p rest) x)) (List.cons x (blocks_above x (mtf (List.cons p rest) x)))) :=
  Bool.by_cases
    (motive := fun c => Eq (Natural.eqb p x) c →
      And (Eq (List.elem Natural.eqb p (mtf (List.cons p rest) x)) Bool.true)
        (subset (blocks_above p (mtf (List.cons p rest) x)) (List.cons x (blocks_above x (mtf (List.cons p rest) x)))))
    (Natural.eqb p x)
    -- p is not x: p is just below x, and only x is above it
    (fun _ hpx =>
      And.intro
        (Bool.or_true_right (Natural.eqb p x)
          (Eq.trans (elem_remove_ne p x (List.cons p rest) hpx)
            (Bool.or_true_left (List.elem Natural.eqb p rest) (Natural.eqb_self p))))
        (fun a ha =>
          let ha' : Eq (List.elem Natural.eqb a (List.cons x (List.remove x (blocks_above p (List.cons p rest))))) Bool.true :=
            Eq.subst (motive := fun l => Eq (List.elem Natural.eqb a l) Bool.true) (above_mtf_ne p x (List.cons p rest) hpx) ha
          let hf : Eq (List.elem Natural.eqb a (List.remove x (blocks_above p (List.cons p rest)))) Bool.false :=
            congrArg (fun c => List.elem Natural.eqb a (List.remove x (cond c List.nil (List.cons p (blocks_above p rest)))))
              (Natural.eqb_self p)
          Bool.or_true_left _ (Bool.or_left_of hf ha')))
    -- p is x: it is the top, nothing is above it
    (fun _ hpx =>
      And.intro
        (Bool.or_true_left _ hpx)
        (fun a ha => False.elim (Bool.false_ne_true
          (Eq.trans (Eq.symm (congrArg (fun c => List.elem Natural.eqb a
              (cond c List.nil (List.cons x (blocks_above p (List.remove x (List.cons p rest)))))) hpx)) ha))))
    rfl

/-- The request of `x` keeps `above_inv`, if `x`'s parent block (if any) is the top. -/
theorem inv_mtf (parent : Natural → Parent) (stack : List Natural) (x : Natural)
    (hinv : above_inv parent stack) (htop : on_top (parent x) stack) : above_inv parent (mtf stack x) :=
  fun b p hbp hb =>
    Bool.by_cases
      (motive := fun c => Eq (Natural.eqb b x) c →
        And (Eq (List.elem Natural.eqb p (mtf stack x)) Bool.true)
          (subset (blocks_above p (mtf stack x)) (List.cons b (blocks_above b (mtf stack x)))))
      (Natural.eqb b x)
      -- b is not x: x lands on top of both b and p
      (fun _ hbx =>
        let hpair := hinv b p hbp (elem_remove x b stack (Bool.or_right_of hbx hb))
        And.intro
          (Bool.by_cases (motive := fun c => Eq (Natural.eqb p x) c → Eq (List.elem Natural.eqb p (mtf stack x)) Bool.true)
            (Natural.eqb p x)
            (fun _ hpx => Bool.or_true_right (Natural.eqb p x) (Eq.trans (elem_remove_ne p x stack hpx) hpair.left))
            (fun _ hpx => Bool.or_true_left _ hpx)
            rfl)
          (fun a ha =>
            Bool.by_cases
              (motive := fun c => Eq (Natural.eqb p x) c →
                Eq (List.elem Natural.eqb a (List.cons b (blocks_above b (mtf stack x)))) Bool.true)
              (Natural.eqb p x)
              (fun _ hpx =>
                let ha' : Eq (List.elem Natural.eqb a (List.cons x (List.remove x (blocks_above p stack)))) Bool.true :=
                  Eq.subst (motive := fun l => Eq (List.elem Natural.eqb a l) Bool.true) (above_mtf_ne p x stack hpx) ha
                Eq.subst (motive := fun l => Eq (List.elem Natural.eqb a (List.cons b l)) Bool.true)
                  (Eq.symm (above_mtf_ne b x stack hbx))
                  (Bool.by_cases
                    (motive := fun c => Eq (Natural.eqb a x) c →
                      Eq (List.elem Natural.eqb a (List.cons b (List.cons x (List.remove x (blocks_above b stack))))) Bool.true)
                    (Natural.eqb a x)
                    (fun _ hax => Bool.or_mono_right (Natural.eqb a b)
                      (fun h => Bool.or_true_right (Natural.eqb a x) (Eq.trans (elem_remove_ne a x (blocks_above b stack) hax) h))
                      (hpair.right a (elem_remove x a (blocks_above p stack) (Bool.or_right_of hax ha'))))
                    (fun _ hax => Bool.or_true_right (Natural.eqb a b) (Bool.or_true_left _ hax))
                    rfl))
              (fun _ hpx => False.elim (Bool.false_ne_true
                (Eq.trans (Eq.symm (congrArg (fun c => List.elem Natural.eqb a
                    (cond c List.nil (List.cons x (blocks_above p (List.remove x stack))))) hpx)) ha)))
              rfl))
      -- b is x: its parent p was the top
      (fun _ hbx =>
        let hxb : Eq x b := Eq.symm (Natural.eq_of_eqb b x hbx)
        Eq.subst
          (motive := fun z => And (Eq (List.elem Natural.eqb p (mtf stack x)) Bool.true)
            (subset (blocks_above p (mtf stack x)) (List.cons z (blocks_above z (mtf stack x)))))
          hxb
          (Exists.rec
            (motive := fun _ => And (Eq (List.elem Natural.eqb p (mtf stack x)) Bool.true)
              (subset (blocks_above p (mtf stack x)) (List.cons x (blocks_above x (mtf stack x)))))
            (fun rest e => Eq.subst
              (motive := fun s => And (Eq (List.elem Natural.eqb p (mtf s x)) Bool.true)
                (subset (blocks_above p (mtf s x)) (List.cons x (blocks_above x (mtf s x)))))
              (Eq.symm e) (inv_mtf_top x p rest))
            (htop p (Eq.subst (motive := fun z => Eq (parent z) (Parent.block p)) (Eq.symm hxb) hbp))))
      rfl

/-- When `p` and then its child `b` are requested, `b` is at least as deep
in the stack after `p`'s request as `p` was before it: if LRU holds `b` at
`b`'s request, it held `p` at `p`'s. -/
theorem hit_needs_parent (cap b p : Natural) (parent : Natural → Parent) (s0 : List Natural)
    (hnd : nodup s0) (hinv : above_inv parent s0) (hbp : Eq (parent b) (Parent.block p))
    (hne : Eq (Natural.eqb b p) Bool.false)
    (hhit : Eq (List.elem Natural.eqb b (List.take cap (mtf s0 p))) Bool.true) :
    Eq (List.elem Natural.eqb p (List.take cap s0)) Bool.true :=
  let hsplit := Eq.trans (Eq.symm (take_elem_above b (mtf s0 p) cap)) hhit
  let hb1 := Bool.and_left _ _ hsplit
  let hlt := Bool.and_right _ _ hsplit
  let hpair := hinv b p hbp (elem_remove p b s0 (Bool.or_right_of hne hb1))
  let hpb : Eq (Natural.eqb p b) Bool.false := Lawful.eqb_false_symm Natural.eqb_lawful b p hne
  let hsub : subset (blocks_above p s0) (List.remove p (List.cons b (blocks_above b s0))) := fun a ha =>
    Eq.trans (elem_remove_ne a p _ (ne_of_elem_absent p a (blocks_above p s0) (above_self p s0) ha))
      (hpair.right a ha)
  let hlen : Eq (List.length (List.remove p (List.cons b (blocks_above b s0))))
      (List.length (blocks_above b (mtf s0 p))) :=
    let h₁ : Eq (List.length (List.remove p (List.cons b (blocks_above b s0))))
        (Natural.succ (List.length (List.remove p (blocks_above b s0)))) :=
      congrArg (fun c => List.length (cond c (List.remove p (blocks_above b s0))
        (List.cons b (List.remove p (blocks_above b s0))))) hpb
    let h₂ : Eq (Natural.succ (List.length (List.remove p (blocks_above b s0))))
        (List.length (blocks_above b (mtf s0 p))) :=
      Eq.symm (congrArg List.length (above_mtf_ne b p s0 hne))
    Eq.trans h₁ h₂
  let hle : Natural.le (List.length (blocks_above p s0)) (List.length (blocks_above b (mtf s0 p))) :=
    Natural.le_of_eq_of_le (count_nodup _ (nodup_above p s0 hnd)) hlen
      (Natural.le_trans (count_mono _ _ hsub) (distinct_le_length _))
  Eq.trans (take_elem_above p s0 cap) (congr2 Bool.and hpair.left (Natural.ltb_of_le_ltb hle hlt))

/-- After a block `q` of a chain missed, flat LRU misses every later block of the chain. -/
theorem missing_tail (cap : Natural) (parent : Natural → Parent) (c : List Natural) :
    ∀ (q : Natural) (s0 : List Natural), chain_fits parent (Parent.block q) c → nodup s0 →
      above_inv parent s0 → on_top (parent q) s0 → no_loop parent (Parent.block q) →
      Eq (List.elem Natural.eqb q (List.take cap s0)) Bool.false →
      Eq (lru_misses_walk cap (List.take cap (mtf s0 q)) c) (List.length c) :=
  List.rec
    (motive := fun c => ∀ (q : Natural) (s0 : List Natural), chain_fits parent (Parent.block q) c → nodup s0 →
      above_inv parent s0 → on_top (parent q) s0 → no_loop parent (Parent.block q) →
      Eq (List.elem Natural.eqb q (List.take cap s0)) Bool.false →
      Eq (lru_misses_walk cap (List.take cap (mtf s0 q)) c) (List.length c))
    (fun _ _ _ _ _ _ _ _ => rfl)
    (fun b c' ih q s0 hfit hnd hinv htop hloop hmiss =>
      let hnd1 : nodup (mtf s0 q) := nodup_mtf q s0 hnd
      let hne : Eq (Natural.eqb b q) Bool.false := ne_parent parent (Parent.block q) b q hfit.left hloop rfl
      let hbmiss : Eq (List.elem Natural.eqb b (List.take cap (mtf s0 q))) Bool.false :=
        Bool.by_cases
          (motive := fun x => Eq (List.elem Natural.eqb b (List.take cap (mtf s0 q))) x → Eq x Bool.false)
          (List.elem Natural.eqb b (List.take cap (mtf s0 q)))
          (fun _ _ => rfl)
          (fun _ e => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm hmiss)
            (hit_needs_parent cap b q parent s0 hnd hinv hfit.left hne e))))
          rfl
      let htop1 : on_top (parent b) (mtf s0 q) := fun _r hr => Exists.intro (List.remove q s0)
        (congrArg (fun z => List.cons z (List.remove q s0)) (Parent.block_inj (Eq.trans (Eq.symm hfit.left) hr)))
      Eq.trans
        (congr2 Natural.plus
          (congrArg (fun x => cond x Natural.zero (Natural.succ Natural.zero)) hbmiss)
          (Eq.trans (congrArg (fun l => lru_misses_walk cap l c') (lru_step_take cap b (mtf s0 q) hnd1))
            (ih b (mtf s0 q) hfit.right hnd1 (inv_mtf parent s0 q hinv htop) htop1
              (no_loop_next parent (Parent.block q) b hfit.left hloop) hbmiss)))
        (Natural.one_plus (List.length c')))
    c

/-- On one chain, flat LRU misses what the prefix cache misses: the chain's
length minus its longest prefix held in `held` (what the cache holds when
the request arrives). -/
theorem reading_chain (cap : Natural) (parent : Natural → Parent) (held : List Natural) (c : List Natural) :
    ∀ (above : Parent) (s : List Natural), chain_fits parent above c → nodup s → above_inv parent s →
      on_top above s → no_loop parent above →
      (∀ a : Natural, Eq (List.elem Natural.eqb a (List.take cap s)) (List.elem Natural.eqb a held)) →
      Eq (lru_misses_walk cap (List.take cap s) c) (Natural.minus (List.length c) (prefix_hits held c)) :=
  List.rec
    (motive := fun c => ∀ (above : Parent) (s : List Natural), chain_fits parent above c → nodup s →
      above_inv parent s → on_top above s → no_loop parent above →
      (∀ a : Natural, Eq (List.elem Natural.eqb a (List.take cap s)) (List.elem Natural.eqb a held)) →
      Eq (lru_misses_walk cap (List.take cap s) c) (Natural.minus (List.length c) (prefix_hits held c)))
    (fun _ _ _ _ _ _ _ _ => rfl)
    (fun b c' ih above s hfit hnd hinv htop hloop hsame =>
      let htopb : on_top (parent b) s := fun r hr => htop r (Eq.trans (Eq.symm hfit.left) hr)
      Bool.by_cases
        (motive := fun x => Eq (List.elem Natural.eqb b held) x →
          Eq (lru_misses_walk cap (List.take cap s) (List.cons b c'))
            (Natural.minus (Natural.succ (List.length c')) (cond x (Natural.succ (prefix_hits held c')) Natural.zero)))
        (List.elem Natural.eqb b held)
        -- b is not held: the request misses from here on, and so does flat LRU
        (fun _ hf =>
          let hmiss : Eq (List.elem Natural.eqb b (List.take cap s)) Bool.false := Eq.trans (hsame b) hf
          Eq.trans
            (congr2 Natural.plus
              (congrArg (fun x => cond x Natural.zero (Natural.succ Natural.zero)) hmiss)
              (Eq.trans (congrArg (fun l => lru_misses_walk cap l c') (lru_step_take cap b s hnd))
                (missing_tail cap parent c' b s hfit.right hnd hinv htopb
                  (no_loop_next parent above b hfit.left hloop) hmiss)))
            (Natural.one_plus (List.length c')))
        -- b is held: a hit for both, and the cache still holds the same blocks
        (fun _ ht =>
          let hhit : Eq (List.elem Natural.eqb b (List.take cap s)) Bool.true := Eq.trans (hsame b) ht
          let hstep : Eq (List.take cap (mtf s b)) (List.cons b (List.remove b (List.take cap s))) :=
            Eq.trans (Eq.symm (lru_step_take cap b s hnd))
              (congrArg (fun x => cond x (List.cons b (List.remove b (List.take cap s)))
                (List.take cap (List.cons b (List.take cap s)))) hhit)
          let hsame1 : ∀ a : Natural,
              Eq (List.elem Natural.eqb a (List.take cap (mtf s b))) (List.elem Natural.eqb a held) := fun a =>
            Eq.trans (congrArg (List.elem Natural.eqb a) hstep)
              (Eq.trans (elem_move_front a b (List.take cap s) hhit) (hsame a))
          let htop1 : on_top (Parent.block b) (mtf s b) := fun _r hr => Exists.intro (List.remove b s)
            (congrArg (fun z => List.cons z (List.remove b s)) (Parent.block_inj hr))
          Eq.trans
            (congr2 Natural.plus
              (congrArg (fun x => cond x Natural.zero (Natural.succ Natural.zero)) hhit)
              (Eq.trans (congrArg (fun l => lru_misses_walk cap l c') (lru_step_take cap b s hnd))
                (ih (Parent.block b) (mtf s b) hfit.right (nodup_mtf b s hnd) (inv_mtf parent s b hinv htopb) htop1
                  (no_loop_next parent above b hfit.left hloop) hsame1)))
            (Natural.zero_plus _))
        rfl)
    c

/-- Walking a chain that fits keeps the stack without repeats and keeps `above_inv`. -/
theorem inv_walk (parent : Natural → Parent) (c : List Natural) :
    ∀ (above : Parent) (s : List Natural), chain_fits parent above c → nodup s → above_inv parent s →
      on_top above s → And (nodup (mtf_walk s c)) (above_inv parent (mtf_walk s c)) :=
  List.rec
    (motive := fun c => ∀ (above : Parent) (s : List Natural), chain_fits parent above c → nodup s →
      above_inv parent s → on_top above s → And (nodup (mtf_walk s c)) (above_inv parent (mtf_walk s c)))
    (fun _ _ _ hnd hinv _ => And.intro hnd hinv)
    (fun b _ ih _above s hfit hnd hinv htop =>
      ih (Parent.block b) (mtf s b) hfit.right (nodup_mtf b s hnd)
        (inv_mtf parent s b hinv (fun r hr => htop r (Eq.trans (Eq.symm hfit.left) hr)))
        (fun _r hr => Exists.intro (List.remove b s)
          (congrArg (fun z => List.cons z (List.remove b s)) (Parent.block_inj hr))))
    c

/-- Chain by chain, the prefix cache's misses are flat LRU's. -/
theorem prefix_lru_walk_flat (cap : Natural) (parent : Natural → Parent) (chains : List (List Natural)) :
    ∀ s : List Natural, all_fit parent chains → nodup s → above_inv parent s →
      Eq (prefix_lru_walk cap (List.take cap s) chains) (lru_misses_walk cap (List.take cap s) (List.flatten chains)) :=
  List.rec
    (motive := fun chains => ∀ s : List Natural, all_fit parent chains → nodup s → above_inv parent s →
      Eq (prefix_lru_walk cap (List.take cap s) chains) (lru_misses_walk cap (List.take cap s) (List.flatten chains)))
    (fun _ _ _ _ => rfl)
    (fun chain rest ih s hfit hnd hinv =>
      let hroot_top : on_top Parent.root s := fun _ hr => False.elim (Parent.root_ne_block hr)
      let hroot_loop : no_loop parent Parent.root := fun _ hr _ => Parent.root_ne_block hr
      let hwalk := inv_walk parent chain Parent.root s hfit.left hnd hinv hroot_top
      let hstate : Eq (lru_walk cap (List.take cap s) chain) (List.take cap (mtf_walk s chain)) :=
        lru_walk_take cap chain s hnd
      Eq.trans
        (congr2 Natural.plus
          (Eq.symm (reading_chain cap parent (List.take cap s) chain Parent.root s hfit.left hnd hinv
            hroot_top hroot_loop (fun _ => rfl)))
          (Eq.trans (congrArg (fun l => prefix_lru_walk cap l rest) hstate)
            (Eq.trans (ih (mtf_walk s chain) hfit.right hwalk.left hwalk.right)
              (Eq.symm (congrArg (fun l => lru_misses_walk cap l (List.flatten rest)) hstate)))))
        (Eq.symm (lru_misses_walk_append cap chain (List.take cap s) (List.flatten rest))))
    chains

/-! ## Theorems -/

/-- On every prefix-closed list of chains, pyverify's LRU prefix cache of
`cap` blocks that starts empty (longest-prefix hits, then every block of the
chain served in chain order by LRU) misses exactly as many blocks as a flat
LRU cache of `cap` blocks on the flattened block sequence. -/
theorem prefix_lru_eq_flat (cap : Natural) (chains : List (List Natural)) (h : prefix_closed chains) :
    Eq (prefix_lru_misses cap chains) (lru_misses cap (List.flatten chains)) :=
  Exists.rec (motive := fun _ => Eq (prefix_lru_misses cap chains) (lru_misses cap (List.flatten chains)))
    (fun parent hfit =>
      Eq.subst (motive := fun l => Eq (prefix_lru_walk cap l chains) (lru_misses_walk cap l (List.flatten chains)))
        (List.take_nil cap)
        (prefix_lru_walk_flat cap parent chains List.nil hfit True.intro
          (fun _ _ _ hb => False.elim (Bool.false_ne_true hb))))
    h


/-- On every sequence of block requests, an LRU cache of `cap` blocks that
starts empty misses exactly as many times as there are distinct blocks plus
the far references: the requests that repeat a block after at least `cap`
distinct blocks were requested since its previous request. -/
theorem lru_misses_eq_far (cap : Natural) (requests : List Natural) :
    Eq (lru_misses cap requests) (Natural.plus (distinct_count requests) (far_references cap requests)) :=
  Eq.trans (lru_misses_walk_split cap requests List.nil List.nil (fun _ => rfl))
    (congrArg (fun n => Natural.plus n (far_references cap requests))
      (cache_misses_nil_eq_count Natural.eqb_lawful requests))
