prelude
import PrefixPool.BeladyOptimal
/-!
# PrefixPool.MinMonotone: the optimal miss curve never rises

With one more block, Belady's MIN misses no more often (Belady 1966;
Mattson, Gecsei, Slutz and Traiger 1970, who note that the optimal policy,
like LRU, is a stack algorithm). The proof needs no property of MIN's
choices, only the two theorems already proved about it:

* MIN's run with `cap` blocks is a valid flat run of `cap` blocks on the
  requested blocks (`min_run_valid`, `Belady.lean`);
* a valid flat run of `cap` blocks is also one of `cap + 1` blocks
  (`flat_valid_succ`, below: holding at most `cap` blocks is holding at most
  `cap + 1`);
* no valid flat run of `cap + 1` blocks misses fewer times than MIN with
  `cap + 1` blocks (`min_misses_le`, `BeladyOptimal.lean`).

So MIN with `cap + 1` blocks misses at most as often as MIN's own run with
`cap` blocks, which is `min_misses cap blocks`.
-/

/-! ## Lemmas -/

/-- A run that holds at most `cap` blocks at every step, with only the blocks
it may hold, is such a run with `cap + 1` blocks too. -/
theorem flat_valid_after_succ (cap : Natural) (run : List (Prod Natural (List Natural))) :
    ∀ allowed : List Natural, flat_valid_after cap allowed run →
      flat_valid_after (Natural.succ cap) allowed run :=
  List.rec
    (motive := fun run => ∀ allowed : List Natural, flat_valid_after cap allowed run →
      flat_valid_after (Natural.succ cap) allowed run)
    (fun _ _ => True.intro)
    (fun step _ ih _ h =>
      And.intro h.left
        (And.intro (Natural.le_succ_of_le h.right.left)
          (ih (List.cons (Prod.fst step) (Prod.snd step)) h.right.right)))
    run

/-- A valid flat run of `cap` blocks is a valid flat run of `cap + 1` blocks. -/
theorem flat_valid_succ (cap : Natural) (run : List (Prod Natural (List Natural)))
    (h : flat_valid cap run) : flat_valid (Natural.succ cap) run :=
  flat_valid_after_succ cap run List.nil h

/-! ## Theorem -/

/-- The optimal miss curve never rises: on every sequence of block requests,
Belady's MIN with `cap + 1` blocks misses at most as many times as with `cap`. -/
theorem min_misses_mono (cap : Natural) (blocks : List Natural) :
    Natural.le (min_misses (Natural.succ cap) blocks) (min_misses cap blocks) :=
  min_misses_le (Natural.succ cap) blocks (min_run cap List.nil blocks)
    (flat_valid_succ cap (min_run cap List.nil blocks) (min_run_valid cap blocks).left)
    (min_run_valid cap blocks).right
