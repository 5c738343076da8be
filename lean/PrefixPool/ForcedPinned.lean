prelude
import PrefixPool.BeladyForced
import PrefixPool.BeladyPrefix
/-!
# PrefixPool.ForcedPinned: forced admission on prefix chains, the running request pinned

Serving engines (vLLM, SGLang) cannot bypass: every block a request hits or
fetches is in the cache while the request runs (pinned), and stays there when
it ends (`pyverify/optimal/forced.py`, rule 5; the trusted checker's rule 5).
Here such a cache is a prefix run (`prefix_valid`, `Flat.lean`: longest-prefix
hits, a block enters only with the miss that fetches it, at most `cap` blocks)
whose steps also hold the running request's blocks (`pinned_valid`): each
step of a request holds every block the request has served before it, and the
first step of the next request holds the whole chain of the one before.

The theorem (`pinned_misses_ge_forced_min`): on chains of one to `cap` blocks
each (`chains_fit`), no such run misses fewer blocks than forced MIN with
`cap` blocks (`forced_min_misses`, `BeladyForced.lean`) on the chains read
twice each, in request order (`twice`: `[x, a, b]` then `[x, a, b, x, a, b]`).
The proof reduces to the flat theorem, as `prefix_misses_ge_min` does for the
bypass form: the run gives a flat run on that sequence (`doubled_run`: each
request's steps, then its chain again in the state the next request starts
from, which holds the chain) in which every step holds the block served at
the step before (within a request the block is pinned; the second reading
and the next request hold the whole chain): a forced-admission run
(`forced_valid`), so `forced_min_misses_le` bounds its misses; the second
reading hits throughout, and a prefix run misses at least its flat misses.

Why the second reading: it asks for the running request's blocks again right
after it, so forced MIN on that sequence never drops a pinned block while an
unpinned one is held (a chain fits the cache). On `[[3], [1, 2], [3]]` with
two blocks forced MIN on the flat blocks `[3, 1, 2, 3]` drops 1 inside the
running request and misses 3 times, which no pinned cache can; on the chains
read twice it misses 4, what the pinned rule misses (`Examples.lean`).

What it does not say: that the count `pyverify/optimal/forced.py` computes
(`forced_run_flat`, Belady's rule with the running request pinned, one
eviction per request) equals this one. Tests compare them
(`tests/test_bridge_forced.py`), and the bridge compares the bound with each
certificate's objective, which the checker replayed: where they are equal the
bound is the forced optimum on that instance.
-/

/-- `pinned_steps required served steps`: the steps of one request each hold
what is pinned then: the first step holds `required`, each later step every
block the request served before it (`served` grows by each step's block).
Python: the trusted checker's rule 5 (`pyverify/trusted/check.py`), read per
block. -/
def pinned_steps (required served : List Natural) (steps : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => List Natural → List Natural → Prop) (fun _ _ => True)
    (fun step _ pinned_rest required served =>
      And (subset required (Prod.snd step))
        (pinned_rest (List.cons (Prod.fst step) served) (List.cons (Prod.fst step) served)))
    steps required served

/-- `pinned_after carry run`: every request's steps hold its pinned blocks,
the first step of the first request holding `carry`, the first step of each
later request the chain of the request before (its blocks stay cached when it
ends). -/
def pinned_after (carry : List Natural) (run : List (List (Prod Natural (List Natural)))) : Prop :=
  List.rec (motive := fun _ => List Natural → Prop) (fun _ => True)
    (fun steps _ pinned_rest carry =>
      And (pinned_steps carry List.nil steps) (pinned_rest (List.map Prod.fst steps)))
    run carry

/-- A run of a capacitated prefix cache of `cap` blocks that starts empty and
admits every block a request hits or fetches, the running request's blocks
pinned: forced admission as engines do it (`pyverify/optimal/forced.py`,
rule 5, for chains of at most `cap` blocks, which are pinned whole). -/
def pinned_valid (cap : Natural) (run : List (List (Prod Natural (List Natural)))) : Prop :=
  And (prefix_valid cap run) (pinned_after List.nil run)

/-- Every chain has at least one block and at most `cap`: each request can
be pinned whole. -/
def chains_fit (cap : Natural) (chains : List (List Natural)) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun chain _ fit_rest =>
      And (And (Natural.le (Natural.succ Natural.zero) (List.length chain)) (Natural.le (List.length chain) cap))
        fit_rest)
    chains

/-! ## Lemmas: a pinned run, flattened, admits every block -/

/-- `[y]` is within any list that starts with `y`. -/
theorem single_subset_cons (y : Natural) (xs : List Natural) :
    subset (List.cons y List.nil) (List.cons y xs) :=
  fun x hx => Bool.or_mono_right (Natural.eqb x y) (fun h => False.elim (Bool.false_ne_true h)) hx

/-- After the first step of a request: every later step holds the block of
the step before (it is pinned), and so does the first step after the request,
which holds any part of the request's chain (`htail`). -/
theorem pinned_steps_admit (tail : List (Prod Natural (List Natural))) (chain : List Natural)
    (htail : ∀ p : List Natural, subset p chain → admits_after p tail)
    (steps : List (Prod Natural (List Natural))) :
    ∀ prev required served : List Natural, subset prev required → subset prev chain →
      pinned_steps required served steps → subset (List.map Prod.fst steps) chain →
      admits_after prev (List.append steps tail) :=
  List.rec
    (motive := fun steps => ∀ prev required served : List Natural, subset prev required → subset prev chain →
      pinned_steps required served steps → subset (List.map Prod.fst steps) chain →
      admits_after prev (List.append steps tail))
    (fun prev _ _ _ hchain _ _ => htail prev hchain)
    (fun step rest ih _ _ served hreq _ hpin hmap =>
      And.intro (subset_trans hreq hpin.left)
        (ih (List.cons (Prod.fst step) List.nil) (List.cons (Prod.fst step) served)
          (List.cons (Prod.fst step) served) (single_subset_cons (Prod.fst step) served)
          (subset_trans (single_subset_cons (Prod.fst step) (List.map Prod.fst rest)) hmap)
          hpin.right
          (fun x hx => hmap x (Bool.or_true_right (Natural.eqb x (Prod.fst step)) hx))))
    steps

/-- A request of at least one block, pinned from `carry`, admits every block
from any `prev` within `carry`, given that what follows admits every block
from any part of the request's chain. -/
theorem pinned_request_admits (tail : List (Prod Natural (List Natural)))
    (steps : List (Prod Natural (List Natural))) :
    (∀ p : List Natural, subset p (List.map Prod.fst steps) → admits_after p tail) →
    ∀ prev carry : List Natural, subset prev carry → pinned_steps carry List.nil steps →
      Natural.le (Natural.succ Natural.zero) (List.length (List.map Prod.fst steps)) →
      admits_after prev (List.append steps tail) :=
  List.rec
    (motive := fun steps => (∀ p : List Natural, subset p (List.map Prod.fst steps) → admits_after p tail) →
      ∀ prev carry : List Natural, subset prev carry → pinned_steps carry List.nil steps →
        Natural.le (Natural.succ Natural.zero) (List.length (List.map Prod.fst steps)) →
        admits_after prev (List.append steps tail))
    -- an empty request: excluded by its length
    (fun _ _ _ _ _ hlen => False.elim (Natural.not_succ_le_zero hlen))
    (fun step rest _ htail _ _ hcarry hpin _ =>
      And.intro (subset_trans hcarry hpin.left)
        (pinned_steps_admit tail (List.map Prod.fst (List.cons step rest)) htail rest
          (List.cons (Prod.fst step) List.nil) (List.cons (Prod.fst step) List.nil)
          (List.cons (Prod.fst step) List.nil) (subset_refl _)
          (single_subset_cons (Prod.fst step) (List.map Prod.fst rest)) hpin.right
          (fun x hx => Bool.or_true_right (Natural.eqb x (Prod.fst step)) hx)))
    steps

/-! ## Lemmas: the run with every request read twice

The flat sequence the theorem's count is taken on reads each chain twice
(`twice`): the second reading asks again for the request's blocks right after
it, so forced MIN on it never drops a pinned block while one it may drop is
held. The pinned run gives a flat run on that sequence (`doubled_run`): each
request's steps, then its chain again, every block held (the state the next
request starts from, which holds the chain; after the last request, the chain
itself). It is a forced-admission flat run and misses what the requests' steps
miss flatly. -/

/-- A chain followed by itself: the blocks a request asks for, then the same
blocks again. -/
noncomputable def twice (chain : List Natural) : List Natural := List.append chain chain

/-- The state the next request starts from, or `chain` if there is none. -/
noncomputable def first_held (rest : List (List (Prod Natural (List Natural)))) (chain : List Natural) : List Natural :=
  List.rec (motive := fun _ => List Natural) chain
    (fun steps _ _ => List.rec (motive := fun _ => List Natural) chain (fun s _ _ => Prod.snd s) steps) rest

/-- The blocks of `chain` read again, each step holding `state`. -/
noncomputable def reread (state chain : List Natural) : List (Prod Natural (List Natural)) :=
  List.map (fun x => Prod.mk x state) chain

/-- A prefix run flattened, each request followed by its chain read again. -/
noncomputable def doubled_run (run : List (List (Prod Natural (List Natural)))) : List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => List (Prod Natural (List Natural))) List.nil
    (fun steps rest doubled_rest =>
      List.append steps
        (List.append (reread (first_held rest (List.map Prod.fst steps)) (List.map Prod.fst steps)) doubled_rest))
    run

theorem reread_blocks (state chain : List Natural) : Eq (List.map Prod.fst (reread state chain)) chain :=
  List.rec (motive := fun chain => Eq (List.map Prod.fst (reread state chain)) chain) rfl
    (fun x _ ih => congrArg (List.cons x) ih) chain

theorem append_assoc_blocks (xs ys zs : List Natural) :
    Eq (List.append (List.append xs ys) zs) (List.append xs (List.append ys zs)) :=
  List.rec (motive := fun xs => Eq (List.append (List.append xs ys) zs) (List.append xs (List.append ys zs))) rfl
    (fun x _ ih => congrArg (List.cons x) ih) xs

/-- The doubled run serves every chain twice, in request order. -/
theorem doubled_blocks (run : List (List (Prod Natural (List Natural)))) :
    Eq (List.map Prod.fst (doubled_run run)) (List.flatten (List.map twice (List.map (List.map Prod.fst) run))) :=
  List.rec
    (motive := fun run =>
      Eq (List.map Prod.fst (doubled_run run)) (List.flatten (List.map twice (List.map (List.map Prod.fst) run))))
    rfl
    (fun steps rest ih =>
      let chain := List.map Prod.fst steps
      let again := reread (first_held rest chain) chain
      let inner : Eq (List.map Prod.fst (List.append again (doubled_run rest)))
          (List.append chain (List.flatten (List.map twice (List.map (List.map Prod.fst) rest)))) :=
        Eq.trans (List.map_append Prod.fst again (doubled_run rest))
          (Eq.trans
            (congrArg (fun l => List.append l (List.map Prod.fst (doubled_run rest))) (reread_blocks (first_held rest chain) chain))
            (congrArg (List.append chain) ih))
      Eq.trans (List.map_append Prod.fst steps (List.append again (doubled_run rest)))
        (Eq.trans (congrArg (List.append chain) inner)
          (Eq.symm (append_assoc_blocks chain chain (List.flatten (List.map twice (List.map (List.map Prod.fst) rest)))))))
    run

/-- The state the next request starts from holds the chain of the one before. -/
theorem first_held_covers (chain : List Natural) (rest : List (List (Prod Natural (List Natural)))) :
    pinned_after chain rest → subset chain (first_held rest chain) :=
  List.rec
    (motive := fun rest => pinned_after chain rest → subset chain (first_held rest chain))
    (fun _ => subset_refl chain)
    (fun steps rest' _ hpin =>
      List.rec
        (motive := fun steps => pinned_steps chain List.nil steps → subset chain (first_held (List.cons steps rest') chain))
        (fun _ => subset_refl chain)
        (fun _ _ _ hp => hp.left)
        steps hpin.left)
    rest

/-- Reading blocks that are all held misses nothing. -/
theorem reread_hits (state : List Natural) (chain : List Natural) :
    subset chain state → Eq (demand_misses (reread state chain)) Natural.zero :=
  List.rec
    (motive := fun chain => subset chain state → Eq (demand_misses (reread state chain)) Natural.zero)
    (fun _ => rfl)
    (fun x xs ih h =>
      Eq.trans
        (congrArg (fun n => Natural.plus n (demand_misses (reread state xs)))
          (absent_of_elem_true Natural.eqb x state (h x (Bool.or_true_left _ (Natural.eqb_self x)))))
        (Eq.trans (Natural.zero_plus _) (ih (fun y hy => h y (Bool.or_true_right _ hy)))))
    chain

/-- The doubled run misses flatly at most what the prefix run misses. -/
theorem doubled_misses (run : List (List (Prod Natural (List Natural)))) :
    ∀ carry : List Natural, pinned_after carry run →
      Natural.le (demand_misses (doubled_run run)) (prefix_misses run) :=
  List.rec
    (motive := fun run => ∀ carry : List Natural, pinned_after carry run →
      Natural.le (demand_misses (doubled_run run)) (prefix_misses run))
    (fun _ _ => Natural.le_refl Natural.zero)
    (fun steps rest ih _ hpin =>
      let chain := List.map Prod.fst steps
      let again := reread (first_held rest chain) chain
      let hits : Eq (Natural.plus (demand_misses again) (demand_misses (doubled_run rest))) (demand_misses (doubled_run rest)) :=
        Eq.trans
          (congrArg (fun n => Natural.plus n (demand_misses (doubled_run rest)))
            (reread_hits (first_held rest chain) chain (first_held_covers chain rest hpin.right)))
          (Natural.zero_plus _)
      let split : Eq (demand_misses (doubled_run (List.cons steps rest)))
          (Natural.plus (demand_misses steps) (demand_misses (doubled_run rest))) :=
        Eq.trans (demand_misses_append steps (List.append again (doubled_run rest)))
          (congrArg (Natural.plus (demand_misses steps))
            (Eq.trans (demand_misses_append again (doubled_run rest)) hits))
      Natural.le_of_eq_of_le (Eq.symm split) rfl
        (Natural.plus_le_plus (demand_le_request steps Bool.true) (ih chain hpin.right)))
    run

/-- Reading blocks of `chain` again, in a state that holds `chain`, admits
every block, given that what follows admits from any part of `chain`. -/
theorem reread_admits (state chain : List Natural) (tail : List (Prod Natural (List Natural)))
    (hstate : subset chain state) (htail : ∀ p : List Natural, subset p chain → admits_after p tail)
    (xs : List Natural) :
    ∀ p : List Natural, subset xs chain → subset p chain → admits_after p (List.append (reread state xs) tail) :=
  List.rec
    (motive := fun xs => ∀ p : List Natural, subset xs chain → subset p chain →
      admits_after p (List.append (reread state xs) tail))
    (fun p _ hp => htail p hp)
    (fun x _ ih _ hxs hp =>
      And.intro (subset_trans hp hstate)
        (ih (List.cons x List.nil) (fun y hy => hxs y (Bool.or_true_right _ hy))
          (subset_trans (single_subset_cons x _) hxs)))
    xs

/-- The doubled run of a pinned run of chains of one to `cap` blocks admits every block. -/
theorem doubled_admits (cap : Natural) (run : List (List (Prod Natural (List Natural)))) :
    ∀ carry prev : List Natural, subset prev carry → pinned_after carry run →
      chains_fit cap (List.map (List.map Prod.fst) run) → admits_after prev (doubled_run run) :=
  List.rec
    (motive := fun run => ∀ carry prev : List Natural, subset prev carry → pinned_after carry run →
      chains_fit cap (List.map (List.map Prod.fst) run) → admits_after prev (doubled_run run))
    (fun _ _ _ _ _ => True.intro)
    (fun steps rest ih carry prev hcarry hpin hfit =>
      let chain := List.map Prod.fst steps
      pinned_request_admits (List.append (reread (first_held rest chain) chain) (doubled_run rest)) steps
        (fun p hp =>
          reread_admits (first_held rest chain) chain (doubled_run rest)
            (first_held_covers chain rest hpin.right)
            (fun q hq => ih chain q hq hpin.right hfit.right)
            chain p (subset_refl chain) hp)
        prev carry hcarry hpin.left hfit.left.left)
    run

/-- `y` in `xs ++ x :: ys` is in `x :: (xs ++ ys)`. -/
theorem elem_append_cons (y x : Natural) (xs ys : List Natural)
    (h : Eq (List.elem Natural.eqb y (List.append xs (List.cons x ys))) Bool.true) :
    Eq (List.elem Natural.eqb y (List.cons x (List.append xs ys))) Bool.true :=
  Eq.trans
    (Eq.trans (congrArg (Bool.or (Natural.eqb y x)) (List.elem_append Natural.eqb y xs ys))
      (Eq.trans (Bool.or_left_comm (Natural.eqb y x) (List.elem Natural.eqb y xs) (List.elem Natural.eqb y ys))
        (Eq.symm (List.elem_append Natural.eqb y xs (List.cons x ys)))))
    h

/-- One pinned request's steps, flattened, are flat-valid, and what the flat
run may hold after them contains the whole chain (every block was served,
and pinned). -/
theorem pinned_request_flat (cap : Natural) (chain : List Natural) (valid_next : List Natural → Prop)
    (tail : List (Prod Natural (List Natural)))
    (htail : ∀ b b' : List Natural, subset b b' → subset chain b' → valid_next b → flat_valid_after cap b' tail)
    (steps : List (Prod Natural (List Natural))) :
    ∀ (reading : Bool) (a a' required served : List Natural), subset a a' → subset served required →
      subset served a' → subset chain (List.append served (List.map Prod.fst steps)) →
      request_valid cap valid_next steps reading a → pinned_steps required served steps →
      flat_valid_after cap a' (List.append steps tail) :=
  List.rec
    (motive := fun steps => ∀ (reading : Bool) (a a' required served : List Natural), subset a a' →
      subset served required → subset served a' → subset chain (List.append served (List.map Prod.fst steps)) →
      request_valid cap valid_next steps reading a → pinned_steps required served steps →
      flat_valid_after cap a' (List.append steps tail))
    (fun _ a a' _ served haa' _ hsa' hcov hv _ =>
      htail a a' haa'
        (subset_trans (Eq.subst (motive := fun l => subset chain l) (List.append_nil served) hcov) hsa') hv)
    (fun step rest ih reading _ _ _ served haa' hsr _ hcov hv hpin =>
      And.intro (subset_trans hv.left haa')
        (And.intro hv.right.left
          (ih (step_hits reading step) _ (List.cons (Prod.fst step) (Prod.snd step))
            (List.cons (Prod.fst step) served) (List.cons (Prod.fst step) served)
            (next_allowed_subset (step_hits reading step) step) (subset_refl _)
            (fun y hy => Bool.or_mono_right (Natural.eqb y (Prod.fst step)) (fun h => hpin.left y (hsr y h)) hy)
            (fun y hy => elem_append_cons y (Prod.fst step) served (List.map Prod.fst rest) (hcov y hy))
            hv.right.right hpin.right)))
    steps

/-- Reading blocks again in a state that fits is flat-valid from anything
containing that state. -/
theorem reread_flat (cap : Natural) (state : List Natural) (tail : List (Prod Natural (List Natural)))
    (hfits : fits cap state) (htail : ∀ a' : List Natural, subset state a' → flat_valid_after cap a' tail)
    (xs : List Natural) :
    ∀ a' : List Natural, subset state a' → flat_valid_after cap a' (List.append (reread state xs) tail) :=
  List.rec
    (motive := fun xs => ∀ a' : List Natural, subset state a' → flat_valid_after cap a' (List.append (reread state xs) tail))
    (fun a' h => htail a' h)
    (fun x _ ih _ h => And.intro h (And.intro hfits (ih (List.cons x state) (subset_cons x state))))
    xs

/-- The state the next request starts from lies within what the flat run may
hold after the request, fits, and the rest of the run is valid from it. -/
theorem first_held_facts (cap : Natural) (b b' chain : List Natural) (hbb' : subset b b') (hcb' : subset chain b')
    (hlen : Natural.le (List.length chain) cap) (rest : List (List (Prod Natural (List Natural)))) :
    prefix_valid_after cap b rest → chains_fit cap (List.map (List.map Prod.fst) rest) →
      And (subset (first_held rest chain) b')
        (And (fits cap (first_held rest chain)) (prefix_valid_after cap (first_held rest chain) rest)) :=
  List.rec
    (motive := fun rest => prefix_valid_after cap b rest → chains_fit cap (List.map (List.map Prod.fst) rest) →
      And (subset (first_held rest chain) b')
        (And (fits cap (first_held rest chain)) (prefix_valid_after cap (first_held rest chain) rest)))
    (fun _ _ => And.intro hcb' (And.intro (Natural.le_trans (distinct_le_length chain) hlen) True.intro))
    (fun steps rest' _ =>
      List.rec
        (motive := fun steps => prefix_valid_after cap b (List.cons steps rest') →
          chains_fit cap (List.map (List.map Prod.fst) (List.cons steps rest')) →
          And (subset (first_held (List.cons steps rest') chain) b')
            (And (fits cap (first_held (List.cons steps rest') chain))
              (prefix_valid_after cap (first_held (List.cons steps rest') chain) (List.cons steps rest'))))
        (fun _ hfit => False.elim (Natural.not_succ_le_zero hfit.left.left))
        (fun s _ _ hv _ =>
          And.intro (subset_trans hv.left hbb') (And.intro hv.right.left (And.intro (subset_refl (Prod.snd s)) hv.right)))
        steps)
    rest

/-- The doubled run of a valid pinned run of chains of one to `cap` blocks is
a valid flat run. -/
theorem doubled_flat (cap : Natural) (run : List (List (Prod Natural (List Natural)))) :
    ∀ a a' carry : List Natural, subset a a' → prefix_valid_after cap a run → pinned_after carry run →
      chains_fit cap (List.map (List.map Prod.fst) run) → flat_valid_after cap a' (doubled_run run) :=
  List.rec
    (motive := fun run => ∀ a a' carry : List Natural, subset a a' → prefix_valid_after cap a run →
      pinned_after carry run → chains_fit cap (List.map (List.map Prod.fst) run) →
      flat_valid_after cap a' (doubled_run run))
    (fun _ _ _ _ _ _ _ => True.intro)
    (fun steps rest ih a a' carry haa' hv hpin hfit =>
      let chain := List.map Prod.fst steps
      pinned_request_flat cap chain (fun b => prefix_valid_after cap b rest)
        (List.append (reread (first_held rest chain) chain) (doubled_run rest))
        (fun b b' hbb' hcb' hvb =>
          let facts := first_held_facts cap b b' chain hbb' hcb' hfit.left.right rest hvb hfit.right
          reread_flat cap (first_held rest chain) (doubled_run rest) facts.right.left
            (fun a'' h => ih (first_held rest chain) a'' chain h facts.right.right hpin.right hfit.right)
            chain b' facts.left)
        steps Bool.true a a' carry List.nil haa'
        (fun _ h => False.elim (Bool.false_ne_true h)) (fun _ h => False.elim (Bool.false_ne_true h))
        (subset_refl chain) hv hpin.left)
    run

/-! ## Theorem -/

/-- Forced admission on prefix chains, the running request pinned: on chains
of one to `cap` blocks each, no valid run of a capacitated prefix cache of
`cap` blocks that starts empty and keeps every block a request hits or
fetches (pinned while the request runs and cached when it ends), whose
requests read exactly the chains, misses fewer blocks than forced MIN with
`cap` blocks on the chains read twice each, in request order. -/
theorem pinned_misses_ge_forced_min (cap : Natural) (chains : List (List Natural))
    (run : List (List (Prod Natural (List Natural)))) (h : pinned_valid cap run)
    (hc : Eq (List.map (List.map Prod.fst) run) chains) (hfit : chains_fit cap chains) :
    Natural.le (forced_min_misses cap (List.flatten (List.map twice chains))) (prefix_misses run) :=
  let hfit' : chains_fit cap (List.map (List.map Prod.fst) run) :=
    Eq.subst (motive := fun c => chains_fit cap c) (Eq.symm hc) hfit
  Natural.le_trans
    (forced_min_misses_le cap (List.flatten (List.map twice chains)) (doubled_run run)
      (And.intro (doubled_flat cap run List.nil List.nil List.nil (subset_refl List.nil) h.left h.right hfit')
        (doubled_admits cap run List.nil List.nil (subset_refl List.nil) h.right hfit'))
      (Eq.trans (doubled_blocks run) (congrArg (fun c => List.flatten (List.map twice c)) hc)))
    (doubled_misses run List.nil h.right)
