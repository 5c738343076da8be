prelude
import PrefixPool.PerHostMin
import PrefixPool.PerHostBlocksEq
/-!
# PrefixPool.PooledMemory: one pooled cache of `fleet × cap` blocks against `fleet` caches of `cap`

The same memory, pooled or split. A fleet of hosts `0, ..., fleet - 1` each
with its own cache of `cap` blocks (requests routed as in `PerHostMin.lean`)
has `fleet × cap` blocks in all. The theorem (`pooled_min_le_per_host_min`):
Belady's MIN on one pooled cache of `fleet × cap` blocks, fed every request's
chain in request order, misses no more than the sum over hosts of MIN with
`cap` blocks on each host's own chains (`per_host_min`). Neither prefix
closure nor any property of the routing but "every request goes to a host
below `fleet`" is needed: the statement is about flat demand caches
(`Flat.lean`), where MIN is the optimum (Belady 1966; Mattson et al. 1970).

The proof merges the per-host MIN runs into one pooled run (`merged_min_run`).
Walk the requests in order, block by block, keeping every host's MIN state;
the pooled cache holds, before each block, everything the hosts hold
together (`union_below`). That is at most `fleet × cap` blocks, and what it
holds next is what it held plus the requested block (a host only adds the
block it is asked for), so it is a valid flat run of `fleet × cap` blocks
(`merged_valid`). A block its host holds is held by the pool, so the pool
misses a block only where that host's MIN misses it (`merged_misses`). MIN
with `fleet × cap` blocks misses no more than this run (`min_misses_le`,
Belady's theorem).
-/

/-- `n × m`: `m` added up `n` times (`times 0 m = 0`, `times (n + 1) m =
times n m + m`). Python: `n * m`. -/
noncomputable def Natural.times (n m : Natural) : Natural :=
  Natural.rec (motive := fun _ => Natural) Natural.zero (fun _ product => Natural.plus product m) n

/-- Everything hosts `0, ..., n - 1` hold, host `0`'s list first (repeats
kept: a block two hosts hold appears twice). -/
noncomputable def union_below (n : Natural) (held : Natural → List Natural) : List Natural :=
  Natural.rec (motive := fun _ => List Natural) List.nil (fun k union_k => List.append union_k (held k)) n

/-- What every host holds after the flat request `p = (host, block)`, with
`rest` the requests after it: `p`'s host takes one step of MIN with `cap`
blocks on its own future requests (`openings_of`); the other hosts keep what
they hold. -/
noncomputable def host_next (cap : Natural) (held : Natural → List Natural) (p : Prod Natural Natural)
    (rest : List (Prod Natural Natural)) : Natural → List Natural :=
  fun g => cond (Natural.eqb g (Prod.fst p)) (min_step cap (held g) (Prod.snd p) (openings_of g rest)) (held g)

/-- The pooled run that merges the per-host MIN runs: for each flat request
`(host, block)`, the step `Prod.mk block (union_below fleet held)`, where
`held g` is what host `g`'s MIN run holds at that point. -/
noncomputable def merged_min_run (cap fleet : Natural) (pairs : List (Prod Natural Natural))
    (held : Natural → List Natural) : List (Prod Natural (List Natural)) :=
  List.rec (motive := fun _ => (Natural → List Natural) → List (Prod Natural (List Natural))) (fun _ => List.nil)
    (fun p rest run_rest held =>
      List.cons (Prod.mk (Prod.snd p) (union_below fleet held)) (run_rest (host_next cap held p rest)))
    pairs held

/-! ## Lemmas: lists and membership -/

theorem length_append_eq {α : Type u} (xs ys : List α) :
    Eq (List.length (List.append xs ys)) (Natural.plus (List.length xs) (List.length ys)) :=
  List.rec
    (motive := fun xs => Eq (List.length (List.append xs ys)) (Natural.plus (List.length xs) (List.length ys)))
    (Eq.symm (Natural.zero_plus (List.length ys)))
    (fun _ xs' ih => Eq.trans (congrArg Natural.succ ih) (Eq.symm (Natural.succ_plus (List.length xs') (List.length ys))))
    xs

theorem elem_append_left (x : Natural) (xs ys : List Natural) (h : Eq (List.elem Natural.eqb x xs) Bool.true) :
    Eq (List.elem Natural.eqb x (List.append xs ys)) Bool.true :=
  Eq.trans (List.elem_append Natural.eqb x xs ys) (Bool.or_true_left (List.elem Natural.eqb x ys) h)

theorem elem_append_right (x : Natural) (xs ys : List Natural) (h : Eq (List.elem Natural.eqb x ys) Bool.true) :
    Eq (List.elem Natural.eqb x (List.append xs ys)) Bool.true :=
  Eq.trans (List.elem_append Natural.eqb x xs ys) (Bool.or_true_right (List.elem Natural.eqb x xs) h)

/-- A block of `xs ++ ys` is in `xs` or in `ys`. -/
theorem elem_append_cases {P : Prop} (x : Natural) (xs ys : List Natural)
    (in_xs : Eq (List.elem Natural.eqb x xs) Bool.true → P) (in_ys : Eq (List.elem Natural.eqb x ys) Bool.true → P)
    (h : Eq (List.elem Natural.eqb x (List.append xs ys)) Bool.true) : P :=
  Bool.by_cases (motive := fun _ => P) (List.elem Natural.eqb x xs)
    (fun e => in_ys (Bool.or_right_of e (Eq.trans (Eq.symm (List.elem_append Natural.eqb x xs ys)) h)))
    (fun e => in_xs e)

/-! ## Lemmas: what the hosts hold together -/

/-- The hosts together hold at most `n × cap` entries when each holds at most `cap`. -/
theorem union_length_le (cap : Natural) (held : Natural → List Natural)
    (h : ∀ g : Natural, Natural.le (List.length (held g)) cap) (n : Natural) :
    Natural.le (List.length (union_below n held)) (Natural.times n cap) :=
  Natural.rec (motive := fun n => Natural.le (List.length (union_below n held)) (Natural.times n cap))
    (Natural.le_refl Natural.zero)
    (fun k ih => Natural.le_of_eq_of_le (Eq.symm (length_append_eq (union_below k held) (held k))) rfl
      (Natural.plus_le_plus ih (h k)))
    n

theorem elem_union_plus (held : Natural → List Natural) (host x : Natural)
    (hx : Eq (List.elem Natural.eqb x (held host)) Bool.true) (k : Natural) :
    Eq (List.elem Natural.eqb x (union_below (Natural.plus (Natural.succ host) k) held)) Bool.true :=
  Natural.rec
    (motive := fun k => Eq (List.elem Natural.eqb x (union_below (Natural.plus (Natural.succ host) k) held)) Bool.true)
    (elem_append_right x (union_below host held) (held host) hx)
    (fun k' ih => elem_append_left x (union_below (Natural.plus (Natural.succ host) k') held)
      (held (Natural.plus (Natural.succ host) k')) ih)
    k

/-- A block held by a host below `n` is held by hosts `0, ..., n - 1` together. -/
theorem elem_union_of_lt (held : Natural → List Natural) (host x n : Natural)
    (hlt : Eq (Natural.ltb host n) Bool.true) (hx : Eq (List.elem Natural.eqb x (held host)) Bool.true) :
    Eq (List.elem Natural.eqb x (union_below n held)) Bool.true :=
  Exists.rec (motive := fun _ => Eq (List.elem Natural.eqb x (union_below n held)) Bool.true)
    (fun k e => Eq.subst (motive := fun m => Eq (List.elem Natural.eqb x (union_below m held)) Bool.true) e
      (elem_union_plus held host x hx k))
    (Natural.le_of_leb (Natural.succ host) n hlt)

/-- If every host's next state is within its state plus `b`, so is the union. -/
theorem union_below_sub (b : Natural) (held held' : Natural → List Natural)
    (h : ∀ g : Natural, subset (held' g) (List.cons b (held g))) (n : Natural) :
    subset (union_below n held') (List.cons b (union_below n held)) :=
  Natural.rec (motive := fun n => subset (union_below n held') (List.cons b (union_below n held)))
    (fun _ hx => False.elim (Bool.false_ne_true hx))
    (fun k ih x hx => elem_append_cases x (union_below k held') (held' k)
      (fun e => Bool.or_mono_right (Natural.eqb x b)
        (fun e' => elem_append_left x (union_below k held) (held k) e') (ih x e))
      (fun e => Bool.or_mono_right (Natural.eqb x b)
        (fun e' => elem_append_right x (union_below k held) (held k) e') (h k x e))
      hx)
    n

theorem union_below_empty (n : Natural) : subset (union_below n (fun _ => List.nil)) List.nil :=
  Natural.rec (motive := fun n => subset (union_below n (fun _ => List.nil)) List.nil)
    (fun _ hx => hx)
    (fun k ih x hx => elem_append_cases x (union_below k (fun _ => List.nil)) List.nil (ih x) (fun e => e) hx)
    n

/-! ## Lemmas: the merged run -/

/-- A host's MIN state: no repeats, at most `cap` blocks. -/
def hosts_ok (cap : Natural) (held : Natural → List Natural) : Prop :=
  ∀ g : Natural, And (nodup (held g)) (Natural.le (List.length (held g)) cap)

/-- After one flat request, every host holds at most what it held plus the
requested block, and its state is still a MIN state. -/
theorem host_next_ok (cap : Natural) (held : Natural → List Natural) (p : Prod Natural Natural)
    (rest : List (Prod Natural Natural)) (hok : hosts_ok cap held) (g : Natural) :
    And (subset (host_next cap held p rest g) (List.cons (Prod.snd p) (held g)))
      (And (nodup (host_next cap held p rest g)) (Natural.le (List.length (host_next cap held p rest g)) cap)) :=
  Bool.rec
    (motive := fun c =>
      And (subset (cond c (min_step cap (held g) (Prod.snd p) (openings_of g rest)) (held g)) (List.cons (Prod.snd p) (held g)))
        (And (nodup (cond c (min_step cap (held g) (Prod.snd p) (openings_of g rest)) (held g)))
          (Natural.le (List.length (cond c (min_step cap (held g) (Prod.snd p) (openings_of g rest)) (held g))) cap)))
    (And.intro (subset_cons (Prod.snd p) (held g)) (hok g))
    (min_step_ok cap (held g) (Prod.snd p) (openings_of g rest) (hok g).left (hok g).right)
    (Natural.eqb g (Prod.fst p))

/-- The merged run is a valid flat run of `fleet × cap` blocks. -/
theorem merged_valid (cap fleet : Natural) (pairs : List (Prod Natural Natural)) :
    ∀ (held : Natural → List Natural) (allowed : List Natural), hosts_ok cap held →
      subset (union_below fleet held) allowed →
      flat_valid_after (Natural.times fleet cap) allowed (merged_min_run cap fleet pairs held) :=
  List.rec
    (motive := fun pairs => ∀ (held : Natural → List Natural) (allowed : List Natural), hosts_ok cap held →
      subset (union_below fleet held) allowed →
      flat_valid_after (Natural.times fleet cap) allowed (merged_min_run cap fleet pairs held))
    (fun _ _ _ _ => True.intro)
    (fun p rest ih held _allowed hok hsub =>
      And.intro hsub
        (And.intro
          (Natural.le_trans (distinct_le_length (union_below fleet held))
            (union_length_le cap held (fun g => (hok g).right) fleet))
          (ih (host_next cap held p rest) (List.cons (Prod.snd p) (union_below fleet held))
            (fun g => (host_next_ok cap held p rest hok g).right)
            (union_below_sub (Prod.snd p) held (host_next cap held p rest)
              (fun g => (host_next_ok cap held p rest hok g).left) fleet))))
    pairs

/-- The merged run serves exactly the requested blocks. -/
theorem merged_blocks (cap fleet : Natural) (pairs : List (Prod Natural Natural)) :
    ∀ held : Natural → List Natural,
      Eq (List.map Prod.fst (merged_min_run cap fleet pairs held)) (List.map Prod.snd pairs) :=
  List.rec
    (motive := fun pairs => ∀ held : Natural → List Natural,
      Eq (List.map Prod.fst (merged_min_run cap fleet pairs held)) (List.map Prod.snd pairs))
    (fun _ => rfl)
    (fun p rest ih held => congrArg (List.cons (Prod.snd p)) (ih (host_next cap held p rest)))
    pairs

/-- One flat request `p` changes one host's remaining MIN misses: its own
host's, by whether that host's MIN misses `p`'s block. -/
theorem host_misses_step (cap : Natural) (held : Natural → List Natural) (p : Prod Natural Natural)
    (rest : List (Prod Natural Natural)) (g : Natural) :
    Eq (demand_misses (min_run cap (held g) (openings_of g (List.cons p rest))))
      (Natural.plus (demand_misses (min_run cap (host_next cap held p rest g) (openings_of g rest)))
        (cond (Natural.eqb g (Prod.fst p)) (absent Natural.eqb (Prod.snd p) (held (Prod.fst p))) Natural.zero)) :=
  Bool.by_cases
    (motive := fun c =>
      Eq (demand_misses (min_run cap (held g) (cond c (List.cons (Prod.snd p) (openings_of g rest)) (openings_of g rest))))
        (Natural.plus
          (demand_misses (min_run cap (cond c (min_step cap (held g) (Prod.snd p) (openings_of g rest)) (held g))
            (openings_of g rest)))
          (cond c (absent Natural.eqb (Prod.snd p) (held (Prod.fst p))) Natural.zero)))
    (Natural.eqb g (Prod.fst p))
    (fun _ => rfl)
    (fun e => Eq.trans
      (Natural.plus_comm (absent Natural.eqb (Prod.snd p) (held g))
        (demand_misses (min_run cap (min_step cap (held g) (Prod.snd p) (openings_of g rest)) (openings_of g rest))))
      (congrArg (Natural.plus (demand_misses (min_run cap (min_step cap (held g) (Prod.snd p) (openings_of g rest))
          (openings_of g rest))))
        (congrArg (fun z => absent Natural.eqb (Prod.snd p) (held z)) (Natural.eq_of_eqb g (Prod.fst p) e))))

/-- The merged run misses at most the sum over hosts of their MIN runs' misses. -/
theorem merged_misses (cap fleet : Natural) (pairs : List (Prod Natural Natural)) :
    ∀ held : Natural → List Natural, hosts_below fleet pairs →
      Natural.le (demand_misses (merged_min_run cap fleet pairs held))
        (sum_below fleet (fun g => demand_misses (min_run cap (held g) (openings_of g pairs)))) :=
  List.rec
    (motive := fun pairs => ∀ held : Natural → List Natural, hosts_below fleet pairs →
      Natural.le (demand_misses (merged_min_run cap fleet pairs held))
        (sum_below fleet (fun g => demand_misses (min_run cap (held g) (openings_of g pairs)))))
    (fun _ _ => Natural.zero_le _)
    (fun p rest ih held hb =>
      Natural.le_of_eq_of_le
        (Natural.plus_comm (demand_misses (merged_min_run cap fleet rest (host_next cap held p rest)))
          (absent Natural.eqb (Prod.snd p) (union_below fleet held)))
        (Eq.symm (Eq.trans (sum_below_congr _ _ (host_misses_step cap held p rest) fleet)
          (Eq.trans
            (sum_below_plus (fun g => demand_misses (min_run cap (host_next cap held p rest g) (openings_of g rest)))
              (fun g => cond (Natural.eqb g (Prod.fst p)) (absent Natural.eqb (Prod.snd p) (held (Prod.fst p))) Natural.zero)
              fleet)
            (congrArg
              (Natural.plus (sum_below fleet
                (fun g => demand_misses (min_run cap (host_next cap held p rest g) (openings_of g rest)))))
              (Eq.trans (sum_below_indicator (Prod.fst p) (absent Natural.eqb (Prod.snd p) (held (Prod.fst p))) fleet)
                (congrArg (fun c => cond c (absent Natural.eqb (Prod.snd p) (held (Prod.fst p))) Natural.zero)
                  hb.left))))))
        (Natural.plus_le_plus (ih (host_next cap held p rest) hb.right)
          (absent_le Natural.eqb (Prod.snd p) (union_below fleet held) (held (Prod.fst p))
            (fun e => elem_union_of_lt held (Prod.fst p) (Prod.snd p) fleet hb.left e))))
    pairs

/-- Flat form: on `(host, block)` requests to hosts below `fleet`, MIN with
`fleet × cap` blocks misses at most the sum over hosts of MIN with `cap`
blocks on each host's blocks. -/
theorem pooled_min_le_sum (cap fleet : Natural) (pairs : List (Prod Natural Natural))
    (h : hosts_below fleet pairs) :
    Natural.le (min_misses (Natural.times fleet cap) (List.map Prod.snd pairs))
      (sum_below fleet (fun g => min_misses cap (openings_of g pairs))) :=
  Natural.le_trans
    (min_misses_le (Natural.times fleet cap) (List.map Prod.snd pairs) (merged_min_run cap fleet pairs (fun _ => List.nil))
      (merged_valid cap fleet pairs (fun _ => List.nil) List.nil
        (fun _ => And.intro True.intro (Natural.zero_le cap)) (union_below_empty fleet))
      (merged_blocks cap fleet pairs (fun _ => List.nil)))
    (merged_misses cap fleet pairs (fun _ => List.nil) h)

/-! ## Lemmas: from routed chains to `(host, block)` pairs -/

theorem map_snd_mk (host : Natural) (c : List Natural) : Eq (List.map Prod.snd (List.map (Prod.mk host) c)) c :=
  List.rec (motive := fun c => Eq (List.map Prod.snd (List.map (Prod.mk host) c)) c)
    rfl (fun x _ ih => congrArg (List.cons x) ih) c

/-- The blocks of the `(host, block)` pairs are the chains, flattened. -/
theorem map_snd_host_blocks (requests : List (Prod Natural (List Natural))) :
    Eq (List.map Prod.snd (host_blocks requests)) (List.flatten (List.map Prod.snd requests)) :=
  List.rec
    (motive := fun requests => Eq (List.map Prod.snd (host_blocks requests)) (List.flatten (List.map Prod.snd requests)))
    rfl
    (fun req rest ih =>
      Eq.trans (List.map_append Prod.snd (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) (host_blocks rest))
        (congr2 List.append (map_snd_mk (Prod.fst req) (Prod.snd req)) ih))
    requests

theorem openings_of_append (g : Natural) (xs ys : List (Prod Natural Natural)) :
    Eq (openings_of g (List.append xs ys)) (List.append (openings_of g xs) (openings_of g ys)) :=
  List.rec
    (motive := fun xs => Eq (openings_of g (List.append xs ys)) (List.append (openings_of g xs) (openings_of g ys)))
    rfl
    (fun q qs ih =>
      Eq.trans (congrArg (fun o => cond (Natural.eqb g (Prod.fst q)) (List.cons (Prod.snd q) o) o) ih)
        (Bool.rec
          (motive := fun t =>
            Eq (cond t (List.cons (Prod.snd q) (List.append (openings_of g qs) (openings_of g ys)))
                (List.append (openings_of g qs) (openings_of g ys)))
              (List.append (cond t (List.cons (Prod.snd q) (openings_of g qs)) (openings_of g qs)) (openings_of g ys)))
          rfl rfl (Natural.eqb g (Prod.fst q))))
    xs

theorem openings_of_map_mk (g host : Natural) (c : List Natural) :
    Eq (openings_of g (List.map (Prod.mk host) c)) (cond (Natural.eqb g host) c List.nil) :=
  List.rec
    (motive := fun c => Eq (openings_of g (List.map (Prod.mk host) c)) (cond (Natural.eqb g host) c List.nil))
    (Bool.rec (motive := fun t => Eq (List.nil : List Natural) (cond t List.nil List.nil)) rfl rfl (Natural.eqb g host))
    (fun x c' ih =>
      Eq.trans (congrArg (fun o => cond (Natural.eqb g host) (List.cons x o) o) ih)
        (Bool.rec
          (motive := fun t => Eq (cond t (List.cons x (cond t c' List.nil)) (cond t c' List.nil)) (cond t (List.cons x c') List.nil))
          rfl rfl (Natural.eqb g host)))
    c

/-- A host's blocks among the `(host, block)` pairs are its chains, flattened. -/
theorem openings_of_host_blocks (g : Natural) (requests : List (Prod Natural (List Natural))) :
    Eq (openings_of g (host_blocks requests)) (List.flatten (chains_of g requests)) :=
  List.rec
    (motive := fun requests => Eq (openings_of g (host_blocks requests)) (List.flatten (chains_of g requests)))
    rfl
    (fun req rest ih =>
      Eq.trans (openings_of_append g (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) (host_blocks rest))
        (Eq.trans (congr2 List.append (openings_of_map_mk g (Prod.fst req) (Prod.snd req)) ih)
          (Bool.rec
            (motive := fun t =>
              Eq (List.append (cond t (Prod.snd req) List.nil) (List.flatten (chains_of g rest)))
                (List.flatten (cond t (List.cons (Prod.snd req) (chains_of g rest)) (chains_of g rest))))
            rfl rfl (Natural.eqb g (Prod.fst req)))))
    requests

theorem hosts_below_append (fleet : Natural) (xs ys : List (Prod Natural Natural)) :
    hosts_below fleet xs → hosts_below fleet ys → hosts_below fleet (List.append xs ys) :=
  List.rec
    (motive := fun xs => hosts_below fleet xs → hosts_below fleet ys → hosts_below fleet (List.append xs ys))
    (fun _ hy => hy) (fun _ _ ih hx hy => And.intro hx.left (ih hx.right hy)) xs

theorem hosts_below_map_mk (fleet host : Natural) (hh : Eq (Natural.ltb host fleet) Bool.true) (c : List Natural) :
    hosts_below fleet (List.map (Prod.mk host) c) :=
  List.rec (motive := fun c => hosts_below fleet (List.map (Prod.mk host) c))
    True.intro (fun _ _ ih => And.intro hh ih) c

theorem hosts_below_host_blocks (fleet : Natural) (requests : List (Prod Natural (List Natural))) :
    routed_below fleet requests → hosts_below fleet (host_blocks requests) :=
  List.rec (motive := fun requests => routed_below fleet requests → hosts_below fleet (host_blocks requests))
    (fun _ => True.intro)
    (fun req rest ih h =>
      hosts_below_append fleet (List.map (Prod.mk (Prod.fst req)) (Prod.snd req)) (host_blocks rest)
        (hosts_below_map_mk fleet (Prod.fst req) h.left (Prod.snd req)) (ih h.right))
    requests

/-! ## Theorem -/

/-- Pooling the memory never costs misses under MIN: on a fleet of hosts
`0, ..., fleet - 1`, every request routed to one of them, Belady's MIN on one
pooled cache of `fleet × cap` blocks, fed every request's chain in request
order, misses no more blocks than the sum over hosts of MIN with `cap` blocks
on each host's own chains. No prefix closure needed. -/
theorem pooled_min_le_per_host_min (cap fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (h : routed_below fleet requests) :
    Natural.le (min_misses (Natural.times fleet cap) (List.flatten (List.map Prod.snd requests)))
      (per_host_min cap fleet requests) :=
  Natural.le_of_eq_of_le
    (congrArg (min_misses (Natural.times fleet cap)) (map_snd_host_blocks requests))
    (sum_below_congr (fun g => min_misses cap (openings_of g (host_blocks requests)))
      (fun g => min_misses cap (List.flatten (chains_of g requests)))
      (fun g => congrArg (min_misses cap) (openings_of_host_blocks g requests)) fleet)
    (pooled_min_le_sum cap fleet (host_blocks requests) (hosts_below_host_blocks fleet requests h))
