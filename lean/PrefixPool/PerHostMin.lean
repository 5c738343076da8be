prelude
import PrefixPool.PerHost
import PrefixPool.BeladyPrefix
/-!
# PrefixPool.PerHostMin: per-host capacitated prefix caches, each host MIN

A request is `Prod.mk host chain`, as in `PerHostBlocks.lean`: the host it is
routed to (a static routing, fixed in the request) and its chain of block ids.
Each host has its own capacitated prefix cache of `cap` blocks (a prefix run
of `Flat.lean`), and the caches do not interact: host `h`'s run reads exactly
the chains routed to `h`, in request order (`chains_of h requests`).

A fleet run gives every host (every `Natural`) its run (`fleet_valid`): valid
for a cache of `cap` blocks that starts empty, and reading exactly that
host's chains, so no request is skipped, and a host with no requests has the
empty run. On a fleet of hosts `0, ..., fleet - 1` (every request routed to
one of them, `routed_below`), the fleet's misses are the sum over those hosts
of their runs' misses (`fleet_misses`).

The theorems:
* `fleet_misses_ge_per_host_min`: every valid fleet run misses at least the
  sum over hosts of MIN with `cap` blocks on that host's flattened chains
  (`per_host_min`); no prefix closure needed (`prefix_misses_ge_min` per host).
* `per_host_min_is_fleet_run`: when the chains of all requests, taken
  together, are prefix-closed, some valid fleet run misses exactly that sum
  (MIN's run cut into requests, `min_prefix_run`, on every host: each host's
  chains are a sub-list of a prefix-closed list, so prefix-closed with the same
  parents, `all_fit_chains_of`).
So on prefix-closed routed chains the fewest misses of per-host capacitated
prefix caches are the sum of per-host MIN counts.
-/

/-- The chains routed to `host`, in request order.
Python: `[c for c, h in zip(chains, routing) if h == host]`. -/
noncomputable def chains_of (host : Natural) (requests : List (Prod Natural (List Natural))) : List (List Natural) :=
  List.rec (motive := fun _ => List (List Natural)) List.nil
    (fun req _ rest => cond (Natural.eqb host (Prod.fst req)) (List.cons (Prod.snd req) rest) rest)
    requests

/-- Every request is routed to a host below `fleet`: a fleet of `fleet` hosts
numbered `0, ..., fleet - 1`. -/
def routed_below (fleet : Natural) (requests : List (Prod Natural (List Natural))) : Prop :=
  List.rec (motive := fun _ => Prop) True
    (fun req _ rest => And (Eq (Natural.ltb (Prod.fst req) fleet) Bool.true) rest)
    requests

/-- A fleet run: `runs host` is `host`'s run, for every host. It is valid when
every host's run is a valid run of a capacitated prefix cache of `cap` blocks
that starts empty (`prefix_valid`) and reads exactly the chains routed to that
host, in order (so a host with no requests has the empty run). -/
def fleet_valid (cap : Natural) (requests : List (Prod Natural (List Natural)))
    (runs : Natural → List (List (Prod Natural (List Natural)))) : Prop :=
  ∀ host : Natural,
    And (prefix_valid cap (runs host)) (Eq (List.map (List.map Prod.fst) (runs host)) (chains_of host requests))

/-- Block misses of a fleet run on hosts `0, ..., fleet - 1`: the sum of each
host's prefix-run misses. -/
noncomputable def fleet_misses (fleet : Natural) (runs : Natural → List (List (Prod Natural (List Natural)))) :
    Natural :=
  sum_below fleet (fun host => prefix_misses (runs host))

/-- The sum over hosts `0, ..., fleet - 1` of Belady's MIN with `cap` blocks on
that host's flattened chains.
Python: `sum(flat_min_misses(flatten(chains of h), cap) for h in hosts)`. -/
noncomputable def per_host_min (cap fleet : Natural) (requests : List (Prod Natural (List Natural))) : Natural :=
  sum_below fleet (fun host => min_misses cap (List.flatten (chains_of host requests)))

/-! ## Lemmas -/

theorem sum_below_le (f g : Natural → Natural) (h : ∀ k : Natural, Natural.le (f k) (g k)) (n : Natural) :
    Natural.le (sum_below n f) (sum_below n g) :=
  Natural.rec (motive := fun n => Natural.le (sum_below n f) (sum_below n g))
    (Natural.le_refl Natural.zero) (fun k ih => Natural.plus_le_plus ih (h k)) n

/-- The chains routed to one host fit every `parent` that all the chains fit. -/
theorem all_fit_chains_of (parent : Natural → Parent) (host : Natural)
    (requests : List (Prod Natural (List Natural))) :
    all_fit parent (List.map Prod.snd requests) → all_fit parent (chains_of host requests) :=
  List.rec
    (motive := fun requests => all_fit parent (List.map Prod.snd requests) → all_fit parent (chains_of host requests))
    (fun _ => True.intro)
    (fun req rest ih h =>
      Bool.rec
        (motive := fun b => all_fit parent (cond b (List.cons (Prod.snd req) (chains_of host rest)) (chains_of host rest)))
        (ih h.right) (And.intro h.left (ih h.right))
        (Natural.eqb host (Prod.fst req)))
    requests

/-- A sub-list (the chains of one host) of prefix-closed chains is prefix-closed. -/
theorem prefix_closed_chains_of (host : Natural) (requests : List (Prod Natural (List Natural)))
    (h : prefix_closed (List.map Prod.snd requests)) : prefix_closed (chains_of host requests) :=
  Exists.rec (motive := fun _ => prefix_closed (chains_of host requests))
    (fun parent hfit => Exists.intro parent (all_fit_chains_of parent host requests hfit))
    h

/-- MIN's run cut into requests (`BeladyPrefix.lean`) on one list of chains
that fit `parent`: valid, reading the chains, with MIN's misses. -/
theorem min_prefix_run_spec (cap : Natural) (parent : Natural → Parent) (chains : List (List Natural))
    (hfit : all_fit parent chains) :
    And (prefix_valid cap (min_prefix_run cap List.nil chains))
      (And (Eq (List.map (List.map Prod.fst) (min_prefix_run cap List.nil chains)) chains)
        (Eq (prefix_misses (min_prefix_run cap List.nil chains)) (min_misses cap (List.flatten chains)))) :=
  And.intro (min_prefix_valid cap chains List.nil List.nil (subset_refl List.nil) True.intro (Natural.zero_le cap))
    (And.intro (min_prefix_blocks cap chains List.nil)
      (Eq.trans (prefix_misses_min cap parent chains List.nil Parent.root hfit (min_inv_start cap parent chains hfit))
        (congrArg demand_misses (min_prefix_flatten cap chains List.nil))))

/-- Every host running MIN with `cap` blocks, cut into its requests, is a
valid fleet run (on any chains: validity needs no prefix closure). -/
theorem min_fleet_valid (cap : Natural) (requests : List (Prod Natural (List Natural))) :
    fleet_valid cap requests (fun host => min_prefix_run cap List.nil (chains_of host requests)) :=
  fun host => And.intro
    (min_prefix_valid cap (chains_of host requests) List.nil List.nil (subset_refl List.nil) True.intro
      (Natural.zero_le cap))
    (min_prefix_blocks cap (chains_of host requests) List.nil)

/-! ## Theorems -/

/-- No valid fleet run of per-host capacitated prefix caches of `cap` blocks
(each host's run reads exactly its chains) misses fewer blocks, over hosts
`0, ..., fleet - 1`, than the sum over those hosts of MIN on each host's
flattened chains. No prefix closure needed. -/
theorem fleet_misses_ge_per_host_min (cap fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (runs : Natural → List (List (Prod Natural (List Natural))))
    (_hosts : routed_below fleet requests) (hv : fleet_valid cap requests runs) :
    Natural.le (per_host_min cap fleet requests) (fleet_misses fleet runs) :=
  sum_below_le (fun host => min_misses cap (List.flatten (chains_of host requests)))
    (fun host => prefix_misses (runs host))
    (fun host => prefix_misses_ge_min cap (chains_of host requests) (runs host) (hv host).left (hv host).right)
    fleet

/-- When the chains of all requests, taken together, are prefix-closed, some
valid fleet run of per-host capacitated prefix caches of `cap` blocks misses
exactly the sum over hosts `0, ..., fleet - 1` of MIN on each host's
flattened chains: every host runs MIN, cut into its requests. -/
theorem per_host_min_is_fleet_run (cap fleet : Natural) (requests : List (Prod Natural (List Natural)))
    (_hosts : routed_below fleet requests) (h : prefix_closed (List.map Prod.snd requests)) :
    Exists (fun runs : Natural → List (List (Prod Natural (List Natural))) =>
      And (fleet_valid cap requests runs) (Eq (fleet_misses fleet runs) (per_host_min cap fleet requests))) :=
  Exists.rec
    (motive := fun _ => Exists (fun runs : Natural → List (List (Prod Natural (List Natural))) =>
      And (fleet_valid cap requests runs) (Eq (fleet_misses fleet runs) (per_host_min cap fleet requests))))
    (fun parent hfit =>
      Exists.intro (fun host => min_prefix_run cap List.nil (chains_of host requests))
        (And.intro (min_fleet_valid cap requests)
          (sum_below_congr
            (fun host => prefix_misses (min_prefix_run cap List.nil (chains_of host requests)))
            (fun host => min_misses cap (List.flatten (chains_of host requests)))
            (fun host => (min_prefix_run_spec cap parent (chains_of host requests)
              (all_fit_chains_of parent host requests hfit)).right.right)
            fleet)))
    h
