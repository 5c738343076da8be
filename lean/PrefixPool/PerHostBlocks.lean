prelude
import PrefixPool.Blocks
/-!
# PrefixPool.PerHostBlocks: per-host caches never beat the pool, on block chains

A request is `Prod.mk host chain`: the host it is routed to and its chain of
block ids. Each host has its own uncapacitated cache with longest-prefix hits
(as `pooled_block_walk` in `Blocks.lean`, one per host); the pooled cache
serves the same chains alone.

The theorem (`per_host_blocks_ge_pooled`) needs no prefix-closure hypothesis:
the pooled cache always holds every block any host's cache holds (it has seen
every chain any host has seen), and a request's longest-prefix misses can only
drop when the cache holds more (`chain_misses_mono`).
-/

/-- Block misses of one uncapacitated cache per host, where `held host` lists
what `host`'s cache holds before the first request. A request misses its
chain's length minus its `prefix_hits` on its own host's cache; afterwards
that cache (only) holds every block of the chain.
Python: `pyverify/sim/simulate.py`, `per_host_misses(chains, routing)`, with
`chains`, `routing` the requests' chains and hosts. -/
noncomputable def per_host_block_walk (held : Natural → List Natural)
    (requests : List (Prod Natural (List Natural))) : Natural :=
  List.rec (motive := fun _ => (Natural → List Natural) → Natural) (fun _ => Natural.zero)
    (fun req _ misses_rest held =>
      Natural.plus (Natural.minus (List.length (Prod.snd req)) (prefix_hits (held (Prod.fst req)) (Prod.snd req)))
        (misses_rest (fun host =>
          cond (Natural.eqb host (Prod.fst req)) (List.append (Prod.snd req) (held host)) (held host))))
    requests held

/-- Block misses of separate uncapacitated per-host caches that start empty,
with longest-prefix hits.
Python: `pyverify/sim/simulate.py`, `per_host_misses(chains, routing)`. -/
noncomputable def per_host_block_misses (requests : List (Prod Natural (List Natural))) : Natural :=
  per_host_block_walk (fun _ => List.nil) requests

/-! ## Lemmas -/

theorem Natural.le_succ_of_le {a b : Natural} (h : Natural.le a b) : Natural.le a (Natural.succ b) :=
  Exists.rec (motive := fun _ => Natural.le a (Natural.succ b))
    (fun k e => Exists.intro (Natural.succ k) (congrArg Natural.succ e)) h

/-- `n - m ≤ n`. -/
theorem Natural.minus_le (n : Natural) : ∀ m : Natural, Natural.le (Natural.minus n m) n :=
  Natural.rec (motive := fun n => ∀ m : Natural, Natural.le (Natural.minus n m) n)
    (fun _ => Natural.le_refl Natural.zero)
    (fun n' ih m => Natural.rec (motive := fun m => Natural.le (Natural.minus (Natural.succ n') m) (Natural.succ n'))
      (Natural.le_refl (Natural.succ n'))
      (fun m' _ => Natural.le_succ_of_le (ih m'))
      m)
    n

/-- If `b` implies `d`, then `a || b` implies `a || d`. -/
theorem Bool.or_mono_right (a : Bool) {b d : Bool} (h : Eq b Bool.true → Eq d Bool.true)
    (hb : Eq (Bool.or a b) Bool.true) : Eq (Bool.or a d) Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.or a b) Bool.true → Eq (Bool.or a d) Bool.true)
    (fun hb => h hb) (fun _ => rfl) a hb

/-- A request misses no more blocks on a cache that holds more: if every block
of `small` is in `big`, its longest-prefix misses on `big` are at most those
on `small`. -/
theorem chain_misses_mono (small big : List Natural)
    (hsub : ∀ b : Natural, Eq (List.elem Natural.eqb b small) Bool.true → Eq (List.elem Natural.eqb b big) Bool.true)
    (c : List Natural) :
    Natural.le (Natural.minus (List.length c) (prefix_hits big c)) (Natural.minus (List.length c) (prefix_hits small c)) :=
  List.rec
    (motive := fun c =>
      Natural.le (Natural.minus (List.length c) (prefix_hits big c)) (Natural.minus (List.length c) (prefix_hits small c)))
    (Natural.le_refl Natural.zero)
    (fun x c' ih =>
      Natural.le_of_eq_of_le (Eq.symm (chain_misses_cons big x c')) (Eq.symm (chain_misses_cons small x c'))
        (Bool.by_cases
          (motive := fun e =>
            Natural.le
              (cond (List.elem Natural.eqb x big) (Natural.minus (List.length c') (prefix_hits big c')) (Natural.succ (List.length c')))
              (cond e (Natural.minus (List.length c') (prefix_hits small c')) (Natural.succ (List.length c'))))
          (List.elem Natural.eqb x small)
          -- x is not held by the small cache: that request misses from x on, the most it can.
          (fun _ => Bool.rec
            (motive := fun e =>
              Natural.le (cond e (Natural.minus (List.length c') (prefix_hits big c')) (Natural.succ (List.length c')))
                (Natural.succ (List.length c')))
            (Natural.le_refl (Natural.succ (List.length c')))
            (Natural.le_succ_of_le (Natural.minus_le (List.length c') (prefix_hits big c')))
            (List.elem Natural.eqb x big))
          -- x is held by both: both go on to the rest of the chain.
          (fun hx => Eq.subst
            (motive := fun e =>
              Natural.le (cond e (Natural.minus (List.length c') (prefix_hits big c')) (Natural.succ (List.length c')))
                (Natural.minus (List.length c') (prefix_hits small c')))
            (Eq.symm (hsub x hx)) ih)))
    c

/-- While the pooled cache holds every block any host's cache holds, the pooled
cache misses at most as many blocks as the per-host caches. -/
theorem per_host_block_walk_ge (requests : List (Prod Natural (List Natural))) :
    ∀ (pooled : List Natural) (held : Natural → List Natural),
      (∀ (host b : Natural), Eq (List.elem Natural.eqb b (held host)) Bool.true →
        Eq (List.elem Natural.eqb b pooled) Bool.true) →
      Natural.le (pooled_block_walk pooled (List.map Prod.snd requests)) (per_host_block_walk held requests) :=
  List.rec
    (motive := fun requests => ∀ (pooled : List Natural) (held : Natural → List Natural),
      (∀ (host b : Natural), Eq (List.elem Natural.eqb b (held host)) Bool.true →
        Eq (List.elem Natural.eqb b pooled) Bool.true) →
      Natural.le (pooled_block_walk pooled (List.map Prod.snd requests)) (per_host_block_walk held requests))
    (fun _ _ _ => Natural.le_refl Natural.zero)
    (fun req _ ih pooled held inv =>
      Natural.plus_le_plus
        (chain_misses_mono (held (Prod.fst req)) pooled (inv (Prod.fst req)) (Prod.snd req))
        (ih (List.append (Prod.snd req) pooled) _ (fun host b =>
          Bool.by_cases
            (motive := fun e =>
              Eq (List.elem Natural.eqb b (cond e (List.append (Prod.snd req) (held host)) (held host))) Bool.true →
                Eq (List.elem Natural.eqb b (List.append (Prod.snd req) pooled)) Bool.true)
            (Natural.eqb host (Prod.fst req))
            -- another host's cache is unchanged, and the pool only grew
            (fun _ h => Eq.trans (List.elem_append Natural.eqb b (Prod.snd req) pooled)
              (Bool.or_true_right (List.elem Natural.eqb b (Prod.snd req)) (inv host b h)))
            -- this host's cache and the pool both gained the chain
            (fun _ h => Eq.trans (List.elem_append Natural.eqb b (Prod.snd req) pooled)
              (Bool.or_mono_right (List.elem Natural.eqb b (Prod.snd req)) (inv host b)
                (Eq.trans (Eq.symm (List.elem_append Natural.eqb b (Prod.snd req) (held host))) h))))))
    requests

/-! ## Theorem -/

/-- Separate uncapacitated per-host caches with longest-prefix hits never miss
fewer blocks than one pooled uncapacitated cache serving the same chains, on
every list of routed block chains (prefix-closed or not). -/
theorem per_host_blocks_ge_pooled (requests : List (Prod Natural (List Natural))) :
    Natural.le (pooled_block_misses (List.map Prod.snd requests)) (per_host_block_misses requests) :=
  per_host_block_walk_ge requests List.nil (fun _ => List.nil) (fun _ _ h => h)
