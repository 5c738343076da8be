prelude
import PrefixPool.PerHost
import PrefixPool.PerHostBlocks
/-!
# PrefixPool.PerHostBlocksEq: per-host caches on prefix-closed chains

A request is `Prod.mk host chain`, as in `PerHostBlocks.lean`. On block chains
the per-host caches of `per_host_block_misses` miss, in general, more than
one block per distinct `(host, block)` pair: on `[[1, 2], [3, 2]]` routed to
one host the second request misses block 2 again (`PrefixPool/Examples.lean`).

The theorem (`per_host_block_misses_eq_distinct_pairs`): when the chains of
all requests, taken together, are prefix-closed (the hypothesis of
`pooled_block_misses_eq_distinct`), they miss exactly once per distinct
`(host, block)` pair. The proof is `pooled_block_walk_eq` with one held list
per host: every host's cache stays parent-closed, so each request's
longest-prefix misses are the misses of the keep-everything cache fed its
`(host, block)` pairs one by one (`chain_misses_eq`), and one keep-everything
cache of pairs holds exactly what the per-host caches hold (as in
`per_host_walk_eq`).
-/

/-- The `(host, block)` pairs of the requests, request by request, each chain
in order: request `(h, [b₁, ..., bₖ])` gives `(h, b₁), ..., (h, bₖ)`.
Python: `[(h, b) for chain, h in zip(chains, routing) for b in chain]`. -/
noncomputable def host_blocks (requests : List (Prod Natural (List Natural))) : List (Prod Natural Natural) :=
  List.flatten (List.map (fun req => List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) requests)

/-- The number of distinct `(host, block)` pairs over all requests.
Python: `pyverify/sim/simulate.py`, `distinct_host_blocks(chains, routing)`. -/
noncomputable def distinct_host_blocks (requests : List (Prod Natural (List Natural))) : Natural :=
  distinct_pairs (host_blocks requests)

/-! ## Lemmas -/

theorem Bool.and_false_right (t : Bool) : Eq (Bool.and t Bool.false) Bool.false :=
  Bool.rec (motive := fun t => Eq (Bool.and t Bool.false) Bool.false) rfl rfl t

theorem Bool.and_or_distrib (t a b : Bool) :
    Eq (Bool.or (Bool.and t a) (Bool.and t b)) (Bool.and t (Bool.or a b)) :=
  Bool.rec (motive := fun t => Eq (Bool.or (Bool.and t a) (Bool.and t b)) (Bool.and t (Bool.or a b)))
    rfl rfl t

/-- `p` is among `host`'s pairs of `chain` exactly when `p`'s host is `host`
and its block is in `chain`. -/
theorem elem_map_pair (host : Natural) (p : Prod Natural Natural) (c : List Natural) :
    Eq (List.elem pair_eqb p (List.map (Prod.mk host) c))
      (Bool.and (Natural.eqb (Prod.fst p) host) (List.elem Natural.eqb (Prod.snd p) c)) :=
  List.rec
    (motive := fun c => Eq (List.elem pair_eqb p (List.map (Prod.mk host) c))
      (Bool.and (Natural.eqb (Prod.fst p) host) (List.elem Natural.eqb (Prod.snd p) c)))
    (Eq.symm (Bool.and_false_right (Natural.eqb (Prod.fst p) host)))
    (fun x c' ih =>
      Eq.trans (congrArg (Bool.or (pair_eqb p (Prod.mk host x))) ih)
        (Bool.and_or_distrib (Natural.eqb (Prod.fst p) host) (Natural.eqb (Prod.snd p) x)
          (List.elem Natural.eqb (Prod.snd p) c')))
    c

/-- `elem` after conditionally putting `c` in front of a list. -/
theorem elem_cond_append (t : Bool) (a : Natural) (c xs : List Natural) (e : Bool)
    (h : Eq (List.elem Natural.eqb a xs) e) :
    Eq (List.elem Natural.eqb a (cond t (List.append c xs) xs)) (Bool.or (Bool.and t (List.elem Natural.eqb a c)) e) :=
  Bool.rec
    (motive := fun t =>
      Eq (List.elem Natural.eqb a (cond t (List.append c xs) xs)) (Bool.or (Bool.and t (List.elem Natural.eqb a c)) e))
    h
    (Eq.trans (List.elem_append Natural.eqb a c xs) (congrArg (Bool.or (List.elem Natural.eqb a c)) h))
    t

/-- `cache_misses_append` of `Blocks.lean`, for any element type. -/
theorem cache_misses_append_any {α : Type u} (eqb : α → α → Bool) (c : List α) : ∀ held rs : List α,
    Eq (cache_misses eqb held (List.append c rs))
      (Natural.plus (cache_misses eqb held c) (cache_misses eqb (List.rev_onto c held) rs)) :=
  List.rec
    (motive := fun c => ∀ held rs : List α,
      Eq (cache_misses eqb held (List.append c rs))
        (Natural.plus (cache_misses eqb held c) (cache_misses eqb (List.rev_onto c held) rs)))
    (fun held rs => Eq.symm (Natural.zero_plus (cache_misses eqb held rs)))
    (fun x _ ih held rs =>
      Eq.trans (congrArg (Natural.plus (absent eqb x held)) (ih (List.cons x held) rs))
        (Eq.symm (Natural.plus_assoc _ _ _)))
    c

/-- `elem_rev_onto` of `Blocks.lean`, for any element type. -/
theorem elem_rev_onto_any {α : Type u} (eqb : α → α → Bool) (c : List α) : ∀ held : List α, ∀ a : α,
    Eq (List.elem eqb a (List.rev_onto c held)) (List.elem eqb a (List.append c held)) :=
  List.rec
    (motive := fun c => ∀ held : List α, ∀ a : α,
      Eq (List.elem eqb a (List.rev_onto c held)) (List.elem eqb a (List.append c held)))
    (fun _ _ => rfl)
    (fun x c' ih held a =>
      Eq.trans (ih (List.cons x held) a)
        (Eq.trans (List.elem_append eqb a c' (List.cons x held))
          (Eq.trans (Bool.or_left_comm (List.elem eqb a c') (eqb a x) (List.elem eqb a held))
            (congrArg (Bool.or (eqb a x)) (Eq.symm (List.elem_append eqb a c' held))))))
    c

/-- One host's keep-everything cache, fed a chain's blocks, misses as one
keep-everything cache of pairs fed that host's pairs of the chain, while the
pair cache holds `(host, b)` exactly when the host's cache holds `b`. -/
theorem chain_pair_misses (host : Natural) (c : List Natural) :
    ∀ (held : List Natural) (pairs : List (Prod Natural Natural)),
      (∀ b : Natural, Eq (List.elem Natural.eqb b held) (List.elem pair_eqb (Prod.mk host b) pairs)) →
      Eq (cache_misses Natural.eqb held c) (cache_misses pair_eqb pairs (List.map (Prod.mk host) c)) :=
  List.rec
    (motive := fun c => ∀ (held : List Natural) (pairs : List (Prod Natural Natural)),
      (∀ b : Natural, Eq (List.elem Natural.eqb b held) (List.elem pair_eqb (Prod.mk host b) pairs)) →
      Eq (cache_misses Natural.eqb held c) (cache_misses pair_eqb pairs (List.map (Prod.mk host) c)))
    (fun _ _ _ => rfl)
    (fun x _ ih held pairs inv =>
      congr2 Natural.plus
        (congrArg (fun e => cond e Natural.zero (Natural.succ Natural.zero)) (inv x))
        (ih (List.cons x held) (List.cons (Prod.mk host x) pairs) (fun b =>
          congr2 Bool.or
            (Eq.symm (congrArg (fun t => Bool.and t (Natural.eqb b x)) (Natural.eqb_self host)))
            (inv b))))
    c

/-- On requests whose chains fit `parent`, from per-host caches that are each
parent-closed and hold exactly what a keep-everything cache of pairs holds,
the per-host longest-prefix caches miss as often as that pair cache fed all
`(host, block)` pairs in order. -/
theorem per_host_block_walk_eq (parent : Natural → Parent) (requests : List (Prod Natural (List Natural))) :
    ∀ (held : Natural → List Natural) (pairs : List (Prod Natural Natural)),
      (∀ host : Natural, parent_closed parent (held host)) →
      (∀ p : Prod Natural Natural,
        Eq (List.elem Natural.eqb (Prod.snd p) (held (Prod.fst p))) (List.elem pair_eqb p pairs)) →
      all_fit parent (List.map Prod.snd requests) →
      Eq (per_host_block_walk held requests) (cache_misses pair_eqb pairs (host_blocks requests)) :=
  List.rec
    (motive := fun requests => ∀ (held : Natural → List Natural) (pairs : List (Prod Natural Natural)),
      (∀ host : Natural, parent_closed parent (held host)) →
      (∀ p : Prod Natural Natural,
        Eq (List.elem Natural.eqb (Prod.snd p) (held (Prod.fst p))) (List.elem pair_eqb p pairs)) →
      all_fit parent (List.map Prod.snd requests) →
      Eq (per_host_block_walk held requests) (cache_misses pair_eqb pairs (host_blocks requests)))
    (fun _ _ _ _ _ => rfl)
    (fun req rest ih held pairs hheld inv hfit =>
      let fit : chain_fits parent Parent.root (Prod.snd req) := And.left hfit
      let fit_rest : all_fit parent (List.map Prod.snd rest) := And.right hfit
      Eq.trans
        (congr2 Natural.plus
          (Eq.trans
            (chain_misses_eq parent (held (Prod.fst req)) (hheld (Prod.fst req)) (Prod.snd req) List.nil True.intro fit)
            (chain_pair_misses (Prod.fst req) (Prod.snd req) (held (Prod.fst req)) pairs
              (fun b => inv (Prod.mk (Prod.fst req) b))))
          (ih
            (fun host => cond (Natural.eqb host (Prod.fst req)) (List.append (Prod.snd req) (held host)) (held host))
            (List.rev_onto (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) pairs)
            (fun host => Bool.rec
              (motive := fun t => parent_closed parent (cond t (List.append (Prod.snd req) (held host)) (held host)))
              (hheld host)
              (parent_closed_append parent (Prod.snd req) (held host) fit (hheld host))
              (Natural.eqb host (Prod.fst req)))
            (fun p =>
              Eq.trans
                (elem_cond_append (Natural.eqb (Prod.fst p) (Prod.fst req)) (Prod.snd p) (Prod.snd req)
                  (held (Prod.fst p)) (List.elem pair_eqb p pairs) (inv p))
                (Eq.trans
                  (congrArg (fun e => Bool.or e (List.elem pair_eqb p pairs))
                    (Eq.symm (elem_map_pair (Prod.fst req) p (Prod.snd req))))
                  (Eq.trans
                    (Eq.symm (List.elem_append pair_eqb p (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) pairs))
                    (Eq.symm (elem_rev_onto_any pair_eqb (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) pairs p)))))
            fit_rest))
        (Eq.symm (cache_misses_append_any pair_eqb (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) pairs
          (host_blocks rest))))
    requests

/-! ## Theorem -/

/-- When the chains of all requests are prefix-closed, separate uncapacitated
per-host caches that start empty, with longest-prefix hits, miss exactly once
per distinct `(host, block)` pair. -/
theorem per_host_block_misses_eq_distinct_pairs (requests : List (Prod Natural (List Natural)))
    (h : prefix_closed (List.map Prod.snd requests)) :
    Eq (per_host_block_misses requests) (distinct_host_blocks requests) :=
  Exists.rec (motive := fun _ => Eq (per_host_block_misses requests) (distinct_host_blocks requests))
    (fun parent hfit =>
      Eq.trans
        (per_host_block_walk_eq parent requests (fun _ => List.nil) List.nil
          (fun _ _ _ _ hb => False.elim (Bool.false_ne_true hb)) (fun _ => rfl) hfit)
        (cache_misses_nil_eq_count pair_eqb_lawful (host_blocks requests)))
    h
