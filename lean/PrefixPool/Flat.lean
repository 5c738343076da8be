prelude
import PrefixPool.Blocks
/-!
# PrefixPool.Flat: the flat relaxation of a capacitated prefix cache

Both models are written as runs: what the cache holds just before each block
is served, so every policy (LRU, FIFO, offline optimal, ...) and every
capacity is covered at once; a validity predicate says which runs a demand
cache of `cap` blocks can produce.

* A **flat run** (classic demand paging on a sequence of blocks) is a list of
  steps `Prod.mk block held`. A step hits when its block is held and misses
  otherwise (`demand_misses`, `Pooled.lean`). It is valid (`flat_valid cap`)
  when the cache starts empty, never holds more than `cap` distinct blocks,
  and a block enters only when it is requested: what is held at a step is
  contained in what was held at the step before, plus that step's block.
* A **prefix run** (a capacitated cache with longest-prefix hits) is a list
  of requests, each the list of steps of its chain. A request reads its chain
  in order and hits while each block is held; from the first block that is
  not held on, every block misses and is fetched (even one still held, as in
  `pyverify/sim/simulate.py`). It is valid (`prefix_valid cap`) when the cache
  starts empty, never holds more than `cap` distinct blocks, nothing enters
  on a hit, and on a miss only the fetched block enters.

The theorem (`prefix_run_is_flat_run`): every valid prefix run, flattened, is a
valid flat run on the flattened block sequence, and it misses at least as
many blocks as that flat run. So the fewest misses of any flat demand cache of
`cap` blocks on the flattened sequence (Belady's MIN computes it) is a lower
bound on the misses of every capacitated prefix cache on the chains.
-/

/-- At most `cap` distinct blocks are held. -/
def fits (cap : Natural) (held : List Natural) : Prop :=
  Natural.le (distinct_count held) cap

/-- `flat_valid_after cap allowed run`: at every step the cache holds at most
`cap` distinct blocks, and only blocks allowed there: at the first step those
in `allowed`, later those held at the step before plus that step's block. -/
def flat_valid_after (cap : Natural) (allowed : List Natural) (run : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => List Natural → Prop) (fun _ => True)
    (fun step _ valid_rest allowed =>
      And (subset (Prod.snd step) allowed)
        (And (fits cap (Prod.snd step)) (valid_rest (List.cons (Prod.fst step) (Prod.snd step)))))
    run allowed

/-- A run of a flat demand cache of `cap` blocks that starts empty.
Python: `pyverify/lean/mirror.py`, `flat_valid`. -/
def flat_valid (cap : Natural) (run : List (Prod Natural (List Natural))) : Prop :=
  flat_valid_after cap List.nil run

/-- Whether a step of a request hits: the request is still reading its
prefix (`reading`) and the step's block is held. -/
noncomputable def step_hits (reading : Bool) (step : Prod Natural (List Natural)) : Bool :=
  Bool.and reading (List.elem Natural.eqb (Prod.fst step) (Prod.snd step))

/-- Misses of one request's steps, `reading` while no block has missed yet. -/
noncomputable def request_misses (steps : List (Prod Natural (List Natural))) (reading : Bool) : Natural :=
  List.rec (motive := fun _ => Bool → Natural) (fun _ => Natural.zero)
    (fun step _ misses_rest reading =>
      Natural.plus (cond (step_hits reading step) Natural.zero (Natural.succ Natural.zero))
        (misses_rest (step_hits reading step)))
    steps reading

/-- Block misses of a prefix run: each request hits the longest prefix of its
chain that it finds held, block by block, and misses the rest.
Python: `pyverify/lean/mirror.py`, `prefix_misses`. -/
noncomputable def prefix_misses (run : List (List (Prod Natural (List Natural)))) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero
    (fun steps _ misses_rest => Natural.plus (request_misses steps Bool.true) misses_rest)
    run

/-- One request's steps are valid, then `valid_next` holds of what may be
held at the next request's first step. A hit adds nothing; a miss may add
its block. -/
def request_valid (cap : Natural) (valid_next : List Natural → Prop)
    (steps : List (Prod Natural (List Natural))) (reading : Bool) (allowed : List Natural) : Prop :=
  List.rec (motive := fun _ => Bool → List Natural → Prop) (fun _ allowed => valid_next allowed)
    (fun step _ valid_rest reading allowed =>
      And (subset (Prod.snd step) allowed)
        (And (fits cap (Prod.snd step))
          (valid_rest (step_hits reading step)
            (cond (step_hits reading step) (Prod.snd step) (List.cons (Prod.fst step) (Prod.snd step))))))
    steps reading allowed

/-- Every request of `run` is valid, the first one from `allowed`. -/
def prefix_valid_after (cap : Natural) (allowed : List Natural) (run : List (List (Prod Natural (List Natural)))) : Prop :=
  List.rec (motive := fun _ => List Natural → Prop) (fun _ => True)
    (fun steps _ valid_rest allowed => request_valid cap valid_rest steps Bool.true allowed)
    run allowed

/-- A run of a capacitated demand cache of `cap` blocks with longest-prefix
hits that starts empty.
Python: `pyverify/lean/mirror.py`, `prefix_valid`. -/
def prefix_valid (cap : Natural) (run : List (List (Prod Natural (List Natural)))) : Prop :=
  prefix_valid_after cap List.nil run

/-! ## Lemmas -/

theorem subset_trans {a b c : List Natural} (h₁ : subset a b) (h₂ : subset b c) : subset a c :=
  fun x h => h₂ x (h₁ x h)

theorem subset_refl (a : List Natural) : subset a a := fun _ h => h

theorem subset_cons (x : Natural) (a : List Natural) : subset a (List.cons x a) :=
  fun y h => Bool.or_true_right (Natural.eqb y x) h

/-- What a prefix run may hold next is within what a flat run may hold next. -/
theorem next_allowed_subset (hit : Bool) (step : Prod Natural (List Natural)) :
    subset (cond hit (Prod.snd step) (List.cons (Prod.fst step) (Prod.snd step)))
      (List.cons (Prod.fst step) (Prod.snd step)) :=
  Bool.rec
    (motive := fun hit =>
      subset (cond hit (Prod.snd step) (List.cons (Prod.fst step) (Prod.snd step)))
        (List.cons (Prod.fst step) (Prod.snd step)))
    (subset_refl _) (subset_cons (Prod.fst step) (Prod.snd step)) hit

/-- A valid request, followed by a tail that is flat-valid whenever the
request's successor condition holds, is flat-valid, from any larger allowed set. -/
theorem request_flat_valid (cap : Natural) (valid_next : List Natural → Prop)
    (tail : List (Prod Natural (List Natural)))
    (htail : ∀ b b' : List Natural, subset b b' → valid_next b → flat_valid_after cap b' tail)
    (steps : List (Prod Natural (List Natural))) :
    ∀ (reading : Bool) (a a' : List Natural), subset a a' → request_valid cap valid_next steps reading a →
      flat_valid_after cap a' (List.append steps tail) :=
  List.rec
    (motive := fun steps => ∀ (reading : Bool) (a a' : List Natural), subset a a' →
      request_valid cap valid_next steps reading a → flat_valid_after cap a' (List.append steps tail))
    (fun _ a a' hsub h => htail a a' hsub h)
    (fun step _ ih reading _a _a' hsub h =>
      And.intro (subset_trans h.left hsub)
        (And.intro h.right.left
          (ih (step_hits reading step) _ _ (next_allowed_subset (step_hits reading step) step) h.right.right)))
    steps

theorem prefix_flat_valid (cap : Natural) (run : List (List (Prod Natural (List Natural)))) :
    ∀ a a' : List Natural, subset a a' → prefix_valid_after cap a run → flat_valid_after cap a' (List.flatten run) :=
  List.rec
    (motive := fun run => ∀ a a' : List Natural, subset a a' →
      prefix_valid_after cap a run → flat_valid_after cap a' (List.flatten run))
    (fun _ _ _ _ => True.intro)
    (fun steps rest ih a a' hsub h =>
      request_flat_valid cap (fun b => prefix_valid_after cap b rest) (List.flatten rest) ih steps Bool.true a a' hsub h)
    run

/-- A step a prefix run hits, the flat run hits too: per request, the flat run
misses at most as often. -/
theorem demand_le_request (steps : List (Prod Natural (List Natural))) :
    ∀ reading : Bool, Natural.le (demand_misses steps) (request_misses steps reading) :=
  List.rec
    (motive := fun steps => ∀ reading : Bool, Natural.le (demand_misses steps) (request_misses steps reading))
    (fun _ => Natural.le_refl Natural.zero)
    (fun step _ ih reading =>
      Natural.plus_le_plus
        (absent_le_of_cond (List.elem Natural.eqb (Prod.fst step) (Prod.snd step)) (step_hits reading step)
          (Bool.and_right reading (List.elem Natural.eqb (Prod.fst step) (Prod.snd step))))
        (ih (step_hits reading step)))
    steps

theorem demand_misses_append (xs ys : List (Prod Natural (List Natural))) :
    Eq (demand_misses (List.append xs ys)) (Natural.plus (demand_misses xs) (demand_misses ys)) :=
  List.rec
    (motive := fun xs => Eq (demand_misses (List.append xs ys)) (Natural.plus (demand_misses xs) (demand_misses ys)))
    (Eq.symm (Natural.zero_plus (demand_misses ys)))
    (fun step _ ih =>
      Eq.trans (congrArg (Natural.plus (absent Natural.eqb (Prod.fst step) (Prod.snd step))) ih)
        (Eq.symm (Natural.plus_assoc _ _ _)))
    xs

theorem demand_le_prefix (run : List (List (Prod Natural (List Natural)))) :
    Natural.le (demand_misses (List.flatten run)) (prefix_misses run) :=
  List.rec
    (motive := fun run => Natural.le (demand_misses (List.flatten run)) (prefix_misses run))
    (Natural.le_refl Natural.zero)
    (fun steps rest ih =>
      Natural.le_of_eq_of_le (Eq.symm (demand_misses_append steps (List.flatten rest))) rfl
        (Natural.plus_le_plus (demand_le_request steps Bool.true) ih))
    run

theorem Natural.le_trans {a b c : Natural} (h₁ : Natural.le a b) (h₂ : Natural.le b c) : Natural.le a c :=
  Exists.rec (motive := fun _ => Natural.le a c)
    (fun k₁ e₁ => Exists.rec (motive := fun _ => Natural.le a c)
      (fun k₂ e₂ => Exists.intro (Natural.plus k₁ k₂)
        (Eq.trans (Eq.symm (Natural.plus_assoc a k₁ k₂)) (Eq.trans (congrArg (fun x => Natural.plus x k₂) e₁) e₂)))
      h₂)
    h₁

/-! ## Theorem -/

/-- Every valid run of a capacitated demand cache of `cap` blocks with
longest-prefix hits, flattened, is a valid run of a flat demand cache of `cap`
blocks on the flattened block sequence, and misses at least as many blocks. -/
theorem prefix_run_is_flat_run (cap : Natural) (run : List (List (Prod Natural (List Natural))))
    (h : prefix_valid cap run) :
    And (flat_valid cap (List.flatten run)) (Natural.le (demand_misses (List.flatten run)) (prefix_misses run)) :=
  And.intro (prefix_flat_valid cap run List.nil List.nil (subset_refl List.nil) h) (demand_le_prefix run)

/-- Hence any lower bound on the misses of every valid flat run on the
flattened block sequence (the flat optimum, for instance) bounds the prefix
run's misses from below. -/
theorem flat_bound_le_prefix (cap bound : Natural) (run : List (List (Prod Natural (List Natural))))
    (hbound : ∀ flat : List (Prod Natural (List Natural)), flat_valid cap flat →
      Eq (List.map Prod.fst flat) (List.map Prod.fst (List.flatten run)) → Natural.le bound (demand_misses flat))
    (h : prefix_valid cap run) : Natural.le bound (prefix_misses run) :=
  Natural.le_trans (hbound (List.flatten run) (prefix_run_is_flat_run cap run h).left rfl)
    (prefix_run_is_flat_run cap run h).right
