prelude
import PrefixPool.PerHostBlocksEq
import PrefixPool.BeladyPrefix
/-!
# PrefixPool.RoutedByRoot: routing every prefix tree to one host costs nothing

A request is `Prod.mk host chain`, as in `PerHostBlocks.lean`. Per-host
uncapacitated caches never miss fewer blocks than one pooled cache
(`per_host_blocks_ge_pooled`), and in general they miss more: a block shared
by requests on two hosts is fetched by both.

The theorem (`per_host_blocks_eq_pooled`): when the chains, taken together,
are prefix-closed and every request is routed by its chain's first block
(`routed_by_root route`: the request's host is `route` of that block, for one
function `route`, as pyverify's `prefix-hash` routing does), separate
uncapacitated per-host caches that start empty miss exactly as many blocks as
one pooled uncapacitated cache. Each prefix tree lives on one host, so no
block is fetched twice.

The proof: with prefix closure, every block has one path to the root
(`path_unique`), so every chain holding a block starts with the same block
(`same_first_block`); so the host of every `(host, block)` pair is a function
of the block (`route` of the first block of the first chain holding it,
`root_of`). Then the distinct `(host, block)` pairs (the per-host misses, by
`per_host_block_walk_eq`, the proof of `per_host_block_misses_eq_distinct_pairs`)
are as many as the distinct blocks (the pooled misses,
`pooled_block_misses_eq_distinct`): `count_pairing`.
-/

/-! ## Definitions -/

/-- A request `(host, chain)` is routed by its chain's first block: `host`
is `route` of that block. An empty chain has no first block and satisfies
this on any host (it has no blocks, so it misses nothing and changes no
cache wherever it goes; pyverify's inputs have no empty chains). -/
def root_routed (route : Natural → Natural) (host : Natural) (chain : List Natural) : Prop :=
  List.rec (motive := fun _ => Prop) True (fun first _ _ => Eq host (route first)) chain

/-- Every request is routed by its chain's first block, by the one function
`route` (so requests whose chains start with the same block meet on one host).
Python: `pyverify/lean/mirror.py`, `routed_by_root(requests, route)`;
pyverify's `prefix-hash` routing is `route = lambda b: stable_hash(str(b)) %
fleet`. -/
def routed_by_root (route : Natural → Natural) (requests : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun req _ rest => And (root_routed route (Prod.fst req) (Prod.snd req)) rest)
    requests

/-! ## Lemmas -/

/-- The first block of a chain (zero for the empty chain, where it is never used). -/
noncomputable def first_block (chain : List Natural) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero (fun x _ _ => x) chain

/-- The last element of `d :: p`: for a path to the root (nearest block
first) the block that follows the root. -/
noncomputable def path_last (p : List Natural) (d : Natural) : Natural :=
  List.rec (motive := fun _ => Natural → Natural) (fun d => d) (fun x _ last_rest _ => last_rest x) p d

/-- The first block of the first chain holding `b` (zero if none does): the
root of `b`'s tree when the chains are prefix-closed. -/
noncomputable def root_of (b : Natural) (chains : List (List Natural)) : Natural :=
  List.rec (motive := fun _ => Natural) Natural.zero
    (fun c _ rest => cond (List.elem Natural.eqb b c) (first_block c) rest) chains

/-- Two paths to the root that end at the same place are the same path: a
block's parent is determined, so is its parent's, and so on. -/
theorem path_unique (parent : Natural → Parent) (p : List Natural) : ∀ q : List Natural,
    is_path parent p → is_path parent q → Eq (path_parent p) (path_parent q) → Eq p q :=
  List.rec
    (motive := fun p => ∀ q : List Natural,
      is_path parent p → is_path parent q → Eq (path_parent p) (path_parent q) → Eq p q)
    (fun q _ _ h =>
      List.rec (motive := fun q => Eq (path_parent List.nil) (path_parent q) → Eq List.nil q)
        (fun _ => rfl)
        (fun _ _ _ h => False.elim (Parent.root_ne_block h))
        q h)
    (fun x p' ih q hp hq h =>
      List.rec
        (motive := fun q => is_path parent q → Eq (path_parent (List.cons x p')) (path_parent q) →
          Eq (List.cons x p') q)
        (fun _ h => False.elim (Parent.root_ne_block (Eq.symm h)))
        (fun y q' _ hq h =>
          let hxy : Eq x y := Parent.block_inj h
          let same_above : Eq (path_parent p') (path_parent q') :=
            Eq.trans (Eq.symm (And.left hp)) (Eq.trans (congrArg parent hxy) (And.left hq))
          congr2 List.cons hxy (ih q' (And.right hp) (And.right hq) same_above))
        q hq h)
    p

/-- Walking a chain that fits `parent` below the path `pre`, every block `b`
of the chain has a path to the root (ending at `b`), whose last block is
where `pre` ends (or, if `pre` is empty, the chain's first block). -/
theorem chain_path (parent : Natural → Parent) (b : Natural) (c : List Natural) : ∀ pre : List Natural,
    is_path parent pre → chain_fits parent (path_parent pre) c → Eq (List.elem Natural.eqb b c) Bool.true →
    Exists (fun q : List Natural => And (is_path parent q)
      (And (Eq (path_parent q) (Parent.block b)) (Eq (path_last q Natural.zero) (path_last pre (first_block c))))) :=
  List.rec
    (motive := fun c => ∀ pre : List Natural,
      is_path parent pre → chain_fits parent (path_parent pre) c → Eq (List.elem Natural.eqb b c) Bool.true →
      Exists (fun q : List Natural => And (is_path parent q)
        (And (Eq (path_parent q) (Parent.block b)) (Eq (path_last q Natural.zero) (path_last pre (first_block c))))))
    (fun _ _ _ hb => False.elim (Bool.false_ne_true hb))
    (fun x _ ih pre hpre hfit hb =>
      Bool.by_cases
        (motive := fun _ => Exists (fun q : List Natural => And (is_path parent q)
          (And (Eq (path_parent q) (Parent.block b)) (Eq (path_last q Natural.zero) (path_last pre x)))))
        (Natural.eqb b x)
        -- `b` is further down the chain: extend the path by `x`
        (fun hbx => ih (List.cons x pre) (And.intro (And.left hfit) hpre) (And.right hfit) (Bool.or_right_of hbx hb))
        -- `b` is `x`: the path so far, extended by `x`
        (fun hbx => Exists.intro (List.cons x pre)
          (And.intro (And.intro (And.left hfit) hpre)
            (And.intro (congrArg Parent.block (Eq.symm (Natural.eq_of_eqb b x hbx))) rfl))))
    c

/-- Two chains that fit `parent` from the root and both hold `b` start with
the same block. -/
theorem same_first_block (parent : Natural → Parent) (b : Natural) (c d : List Natural)
    (hc : chain_fits parent Parent.root c) (hd : chain_fits parent Parent.root d)
    (hbc : Eq (List.elem Natural.eqb b c) Bool.true) (hbd : Eq (List.elem Natural.eqb b d) Bool.true) :
    Eq (first_block c) (first_block d) :=
  Exists.rec (motive := fun _ => Eq (first_block c) (first_block d))
    (fun q hq => Exists.rec (motive := fun _ => Eq (first_block c) (first_block d))
      (fun q' hq' =>
        Eq.trans (Eq.symm (And.right (And.right hq)))
          (Eq.trans
            (congrArg (fun p => path_last p Natural.zero)
              (path_unique parent q q' (And.left hq) (And.left hq')
                (Eq.trans (And.left (And.right hq)) (Eq.symm (And.left (And.right hq'))))))
            (And.right (And.right hq'))))
      (chain_path parent b d List.nil True.intro hd hbd))
    (chain_path parent b c List.nil True.intro hc hbc)

/-- If `chain` fits from the root and holds `b`, and `b` occurs in `chains`
(all fitting `parent`), then `root_of b chains` is `chain`'s first block. -/
theorem root_of_eq (parent : Natural → Parent) (b : Natural) (chain : List Natural)
    (hc : chain_fits parent Parent.root chain) (hb : Eq (List.elem Natural.eqb b chain) Bool.true)
    (chains : List (List Natural)) :
    all_fit parent chains → Eq (List.elem Natural.eqb b (List.flatten chains)) Bool.true →
      Eq (root_of b chains) (first_block chain) :=
  List.rec
    (motive := fun chains => all_fit parent chains → Eq (List.elem Natural.eqb b (List.flatten chains)) Bool.true →
      Eq (root_of b chains) (first_block chain))
    (fun _ h => False.elim (Bool.false_ne_true h))
    (fun d rest ih hfit hin =>
      Bool.by_cases
        (motive := fun e => Eq (cond e (first_block d) (root_of b rest)) (first_block chain))
        (List.elem Natural.eqb b d)
        (fun hbd => ih (And.right hfit)
          (Bool.or_right_of hbd (Eq.trans (Eq.symm (List.elem_append Natural.eqb b d (List.flatten rest))) hin)))
        (fun hbd => same_first_block parent b d chain (And.left hfit) hc hbd hb))
    chains

/-- A request routed by its first block, holding `b`, is on `route` of its first block. -/
theorem root_routed_first (route : Natural → Natural) (host b : Natural) (chain : List Natural) :
    root_routed route host chain → Eq (List.elem Natural.eqb b chain) Bool.true →
      Eq host (route (first_block chain)) :=
  List.rec
    (motive := fun chain => root_routed route host chain → Eq (List.elem Natural.eqb b chain) Bool.true →
      Eq host (route (first_block chain)))
    (fun _ h => False.elim (Bool.false_ne_true h))
    (fun _ _ _ h _ => h)
    chain

/-- Every block of every request's chain has host `g block`: the request's host. -/
def hosts_fit (g : Natural → Natural) (requests : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun req _ rest =>
      And (∀ b : Natural, Eq (List.elem Natural.eqb b (Prod.snd req)) Bool.true → Eq (Prod.fst req) (g b)) rest)
    requests

/-- On prefix-closed chains (a sub-list of `all`) routed by root, every
block's host is `route` of its root in `all`. -/
theorem hosts_fit_root (parent : Natural → Parent) (route : Natural → Natural) (all : List (List Natural))
    (hall : all_fit parent all) (requests : List (Prod Natural (List Natural))) :
    all_fit parent (List.map Prod.snd requests) → routed_by_root route requests →
      (∀ b : Natural, Eq (List.elem Natural.eqb b (List.flatten (List.map Prod.snd requests))) Bool.true →
        Eq (List.elem Natural.eqb b (List.flatten all)) Bool.true) →
      hosts_fit (fun b => route (root_of b all)) requests :=
  List.rec
    (motive := fun requests => all_fit parent (List.map Prod.snd requests) → routed_by_root route requests →
      (∀ b : Natural, Eq (List.elem Natural.eqb b (List.flatten (List.map Prod.snd requests))) Bool.true →
        Eq (List.elem Natural.eqb b (List.flatten all)) Bool.true) →
      hosts_fit (fun b => route (root_of b all)) requests)
    (fun _ _ _ => True.intro)
    (fun req rest ih hfit hr hsub =>
      And.intro
        (fun b hb =>
          Eq.trans (root_routed_first route (Prod.fst req) b (Prod.snd req) (And.left hr) hb)
            (congrArg route (Eq.symm (root_of_eq parent b (Prod.snd req) (And.left hfit) hb all hall
              (hsub b (Eq.trans (List.elem_append Natural.eqb b (Prod.snd req) (List.flatten (List.map Prod.snd rest)))
                (Bool.or_true_left (List.elem Natural.eqb b (List.flatten (List.map Prod.snd rest))) hb)))))))
        (ih (And.right hfit) (And.right hr)
          (fun b h => hsub b (Eq.trans (List.elem_append Natural.eqb b (Prod.snd req) (List.flatten (List.map Prod.snd rest)))
            (Bool.or_true_right (List.elem Natural.eqb b (Prod.snd req)) h)))))
    requests

/-- A chain's pairs on `host`, when every block's host is `host`, are its blocks paired with `g`. -/
theorem map_pairing (g : Natural → Natural) (host : Natural) (c : List Natural) :
    (∀ b : Natural, Eq (List.elem Natural.eqb b c) Bool.true → Eq host (g b)) →
      Eq (List.map (Prod.mk host) c) (List.map (fun b => Prod.mk (g b) b) c) :=
  List.rec
    (motive := fun c => (∀ b : Natural, Eq (List.elem Natural.eqb b c) Bool.true → Eq host (g b)) →
      Eq (List.map (Prod.mk host) c) (List.map (fun b => Prod.mk (g b) b) c))
    (fun _ => rfl)
    (fun x c' ih h =>
      congr2 List.cons
        (congrArg (fun k => Prod.mk k x) (h x (Bool.or_true_left (List.elem Natural.eqb x c') (Natural.eqb_self x))))
        (ih (fun b hb => h b (Bool.or_true_right (Natural.eqb b x) hb))))
    c

/-- When every block's host is `g` of it, the `(host, block)` pairs are the
blocks, in order, each paired with `g`. -/
theorem host_blocks_pairing (g : Natural → Natural) (requests : List (Prod Natural (List Natural))) :
    hosts_fit g requests →
      Eq (host_blocks requests) (List.map (fun b => Prod.mk (g b) b) (List.flatten (List.map Prod.snd requests))) :=
  List.rec
    (motive := fun requests => hosts_fit g requests →
      Eq (host_blocks requests) (List.map (fun b => Prod.mk (g b) b) (List.flatten (List.map Prod.snd requests))))
    (fun _ => rfl)
    (fun req rest ih h =>
      Eq.trans
        (congr2 List.append (map_pairing g (Prod.fst req) (Prod.snd req) (And.left h)) (ih (And.right h)))
        (Eq.symm (List.map_append (fun b => Prod.mk (g b) b) (Prod.snd req) (List.flatten (List.map Prod.snd rest)))))
    requests

/-- Pairs `(g x, x)` and `(g y, y)` are equal exactly when `x` and `y` are. -/
theorem pair_eqb_pairing (g : Natural → Natural) (x y : Natural) :
    Eq (pair_eqb (Prod.mk (g x) x) (Prod.mk (g y) y)) (Natural.eqb x y) :=
  Bool.by_cases (motive := fun e => Eq (Bool.and (Natural.eqb (g x) (g y)) e) e) (Natural.eqb x y)
    (fun _ => Bool.and_false_right (Natural.eqb (g x) (g y)))
    (fun hxy =>
      Eq.subst (motive := fun z => Eq (Bool.and (Natural.eqb (g x) (g z)) Bool.true) Bool.true)
        (Natural.eq_of_eqb x y hxy)
        (congrArg (fun t => Bool.and t Bool.true) (Natural.eqb_self (g x))))

theorem elem_pairing (g : Natural → Natural) (x : Natural) (xs : List Natural) :
    Eq (List.elem pair_eqb (Prod.mk (g x) x) (List.map (fun b => Prod.mk (g b) b) xs)) (List.elem Natural.eqb x xs) :=
  List.rec
    (motive := fun xs =>
      Eq (List.elem pair_eqb (Prod.mk (g x) x) (List.map (fun b => Prod.mk (g b) b) xs)) (List.elem Natural.eqb x xs))
    rfl
    (fun y _ ih => congr2 Bool.or (pair_eqb_pairing g x y) ih)
    xs

/-- Pairing every block with a function of itself does not change the distinct count. -/
theorem count_pairing (g : Natural → Natural) (xs : List Natural) :
    Eq (count_distinct pair_eqb (List.map (fun b => Prod.mk (g b) b) xs)) (count_distinct Natural.eqb xs) :=
  List.rec
    (motive := fun xs =>
      Eq (count_distinct pair_eqb (List.map (fun b => Prod.mk (g b) b) xs)) (count_distinct Natural.eqb xs))
    rfl
    (fun x xs' ih =>
      congr2 Natural.plus
        (congrArg (fun e => cond e Natural.zero (Natural.succ Natural.zero)) (elem_pairing g x xs'))
        ih)
    xs

/-! ## Theorem -/

/-- When the chains of all requests are prefix-closed and every request is
routed by its chain's first block, separate uncapacitated per-host caches
that start empty, with longest-prefix hits, miss exactly as many blocks as
one pooled uncapacitated cache on the same chains. -/
theorem per_host_blocks_eq_pooled (route : Natural → Natural) (requests : List (Prod Natural (List Natural)))
    (h : prefix_closed (List.map Prod.snd requests)) (hr : routed_by_root route requests) :
    Eq (per_host_block_misses requests) (pooled_block_misses (List.map Prod.snd requests)) :=
  Exists.rec (motive := fun _ => Eq (per_host_block_misses requests) (pooled_block_misses (List.map Prod.snd requests)))
    (fun parent hfit =>
      -- per-host misses = distinct (host, block) pairs, as in the proof of
      -- `per_host_block_misses_eq_distinct_pairs` (not through its statement, so this
      -- proof does not rest on how `distinct_host_blocks` is written)
      Eq.trans
        (Eq.trans
          (per_host_block_walk_eq parent requests (fun _ => List.nil) List.nil
            (fun _ _ _ _ hb => False.elim (Bool.false_ne_true hb)) (fun _ => rfl) hfit)
          (cache_misses_nil_eq_count pair_eqb_lawful (host_blocks requests)))
        (Eq.trans
          (congrArg (count_distinct pair_eqb)
            (host_blocks_pairing (fun b => route (root_of b (List.map Prod.snd requests))) requests
              (hosts_fit_root parent route (List.map Prod.snd requests) hfit requests hfit hr (fun _ hb => hb))))
          (Eq.trans (count_pairing (fun b => route (root_of b (List.map Prod.snd requests)))
              (List.flatten (List.map Prod.snd requests)))
            (Eq.symm (pooled_block_misses_eq_distinct (List.map Prod.snd requests) h)))))
    h
