prelude
import PrefixPool.BeladyForced
import PrefixPool.BeladyPrefix
/-!
# PrefixPool.ForcedPinned: forced admission on prefix chains, the running request pinned

Serving engines (vLLM, SGLang) cannot bypass: every block a request hits or
fetches is in the cache while the request runs (pinned), and stays there when
it ends (`pyverify/sim/forced_min.py`, rule 5; the trusted checker's rule 5).
Here such a cache is a prefix run (`prefix_valid`, `Flat.lean`: longest-prefix
hits, a block enters only with the miss that fetches it, at most `cap` blocks)
whose steps also hold the running request's blocks (`pinned_valid`): each
step of a request holds every block the request has served before it, and the
first step of the next request holds the whole chain of the one before.

The theorem (`pinned_misses_ge_forced_min`): on chains of one to `cap` blocks
each (`chains_fit`), no such run misses fewer blocks than forced MIN with
`cap` blocks on the flattened chains (`forced_min_misses`, `BeladyForced.lean`).
The proof reduces to the flat theorem, as `prefix_misses_ge_min` does for the
bypass form: the run, flattened, is a flat run (`prefix_run_is_flat_run`) in
which every step holds the block served at the step before (within a request
the block is pinned; at a request's end its whole chain is held): a
forced-admission run (`forced_valid`), so `forced_min_misses_le` bounds its
misses, and a prefix run misses at least its flat misses.

What it does not say: the count pyverify's engines' optimum computes
(`forced_run_flat`, Belady's rule with the running request pinned) can exceed
forced MIN's flat count once a chain has two blocks or more (on `[x], [a, b],
[x]` with two blocks: 4 misses pinned, 3 flat); that the pinned rule attains
the fewest misses is not proved here. On chains of one block each the pinned
model is the flat one: there the bound is the forced optimum's count.
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
pinned: forced admission as engines do it (`pyverify/sim/forced_min.py`,
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

/-- A pinned run whose requests each read one to `cap` blocks, flattened,
admits every block it is asked for. -/
theorem pinned_run_admits (cap : Natural) (run : List (List (Prod Natural (List Natural)))) :
    ∀ carry prev : List Natural, subset prev carry → pinned_after carry run →
      chains_fit cap (List.map (List.map Prod.fst) run) → admits_after prev (List.flatten run) :=
  List.rec
    (motive := fun run => ∀ carry prev : List Natural, subset prev carry → pinned_after carry run →
      chains_fit cap (List.map (List.map Prod.fst) run) → admits_after prev (List.flatten run))
    (fun _ _ _ _ _ => True.intro)
    (fun steps rest ih carry prev hcarry hpin hfit =>
      pinned_request_admits (List.flatten rest) steps
        (fun p hp => ih (List.map Prod.fst steps) p hp hpin.right hfit.right)
        prev carry hcarry hpin.left hfit.left.left)
    run

/-! ## Theorem -/

/-- Forced admission on prefix chains, the running request pinned: on chains
of one to `cap` blocks each, no valid run of a capacitated prefix cache of
`cap` blocks that starts empty and keeps every block a request hits or
fetches (pinned while the request runs and cached when it ends), whose
requests read exactly the chains, misses fewer blocks than forced MIN with
`cap` blocks on the flattened chains. -/
theorem pinned_misses_ge_forced_min (cap : Natural) (chains : List (List Natural))
    (run : List (List (Prod Natural (List Natural)))) (h : pinned_valid cap run)
    (hc : Eq (List.map (List.map Prod.fst) run) chains) (hfit : chains_fit cap chains) :
    Natural.le (forced_min_misses cap (List.flatten chains)) (prefix_misses run) :=
  Natural.le_trans
    (forced_min_misses_le cap (List.flatten chains) (List.flatten run)
      (And.intro (prefix_run_is_flat_run cap run h.left).left
        (pinned_run_admits cap run List.nil List.nil (subset_refl List.nil) h.right
          (Eq.subst (motive := fun c => chains_fit cap c) (Eq.symm hc) hfit)))
      (Eq.trans (List.map_flatten Prod.fst run) (congrArg List.flatten hc)))
    (prefix_run_is_flat_run cap run h.left).right
