prelude
import PrefixPool.Examples
/-!
# PrefixPool.Counterexamples: three things users expect, and small lists where they fail

Each theorem here is about one concrete request list, proved by evaluation
(the kernel computes both sides, `Exists.intro Natural.zero rfl`); none has a
hypothesis. They are the reason the general theorems elsewhere are stated as
they are: with a memory limit, neither "the pool always wins" nor "more
memory never hurts" holds in general.

* `per_host_min_lt_pooled_min`: at equal capacity per cache, per-host caches
  can miss fewer blocks than one pooled cache, even when both run the
  offline optimum (Belady's MIN). Requests `(host, chain)`
  `[(0, [4]), (1, [2]), (1, [2]), (0, [4])]`, one block per cache: each host
  sees one block twice and misses once (2 in all); the pool sees `4, 2, 2, 4`
  with one block and misses 3. (The per-host fleet has two blocks in all:
  this compares equal capacity per cache, not equal total memory.)
* `per_host_lru_lt_pooled_lru`: with LRU, per-host caches can miss fewer
  blocks than one pooled cache of the same total memory. Requests
  `(host, block)` `[(0, 3), (1, 4), (1, 1), (0, 3)]`: one block per host
  misses 3 (host 0: `3, 3`, one miss; host 1: `4, 1`, two), one pooled LRU of
  two blocks misses 4 (`3, 4, 1, 3`: block 1 evicts 3, which is requested
  next). Not a contradiction of `per_host_ge_pooled`, which is about
  uncapacitated caches.
* `fifo_anomaly`: flat FIFO is not a stack algorithm (Mattson, Gecsei, Slutz
  and Traiger, IBM Systems Journal 9(2), 1970): on `1, 2, 3, 4, 1, 2, 5, 1,
  2, 3, 4, 5` it misses 9 times with 3 blocks and 10 times with 4 (Belady,
  Nelson and Shedler, "An anomaly in space-time characteristics of certain
  programs running in a paging machine", CACM 12(6), 1969). LRU is a stack
  algorithm: its hits never drop as the capacity grows (`lru_hits_mono`).

New definitions (each has a Python twin in `pyverify/lean/mirror.py`):
`lru_misses` (flat LRU misses, `LruPrefix.lean`), `per_host_lru_misses` (one flat LRU cache
per host), `fifo_step`, `fifo_walk`, `fifo_misses` (flat FIFO).
-/

/-! ## Numbers beyond `four` (`Examples.lean` defines `one` to `four`) -/

noncomputable def five : Natural := Natural.succ four
noncomputable def nine : Natural := Natural.succ (Natural.succ (Natural.succ (Natural.succ five)))
noncomputable def ten : Natural := Natural.succ nine

/-! ## Definitions -/

/-- Misses of separate flat LRU caches of `cap` blocks each, one per host
`0, ..., fleet - 1`, all starting empty: requests are `(host, block)` pairs,
and each host's cache serves that host's blocks in request order
(`openings_of host requests`, `PerHost.lean`). The sum over the hosts of
each host's LRU misses.
Python: `pyverify/lean/mirror.py`, `per_host_lru_misses`; pyverify's
simulator: `simulate([[b] for h, b in requests], [h for h, b in requests],
"per-host", capacity=cap).misses`. -/
noncomputable def per_host_lru_misses (cap fleet : Natural) (requests : List (Prod Natural Natural)) : Natural :=
  sum_below fleet (fun host => lru_misses cap (openings_of host requests))

/-- One request `r` to a FIFO cache of `cap` blocks holding `queue`, newest
entry first: a hit changes nothing (a held block keeps its entry time); a
miss puts `r` in front and keeps the first `cap` entries, so the oldest
entry leaves when the cache was full. -/
noncomputable def fifo_step (cap : Natural) (queue : List Natural) (r : Natural) : List Natural :=
  cond (List.elem Natural.eqb r queue) queue (List.take cap (List.cons r queue))

/-- Misses of a FIFO cache of `cap` blocks holding `queue`, serving `requests`
in order: a request misses when its block is not held. -/
noncomputable def fifo_walk (cap : Natural) (queue requests : List Natural) : Natural :=
  List.rec (motive := fun _ => List Natural → Natural) (fun _ => Natural.zero)
    (fun r _ misses_rest queue =>
      Natural.plus (absent Natural.eqb r queue) (misses_rest (fifo_step cap queue r)))
    requests queue

/-- Misses of a flat FIFO cache of `cap` blocks that starts empty.
Python: `pyverify/lean/mirror.py`, `fifo_misses`; pyverify's simulator:
`simulate([[r] for r in requests], None, "pooled", capacity=cap,
eviction="fifo").misses` (for `cap ≥ 1`). -/
noncomputable def fifo_misses (cap : Natural) (requests : List Natural) : Natural :=
  fifo_walk cap List.nil requests

/-! ## (a) Per-host MIN can beat pooled MIN at equal capacity per cache -/

/-- Requests `[(0, [4]), (1, [2]), (1, [2]), (0, [4])]`: host, chain. -/
noncomputable def min_split_requests : List (Prod Natural (List Natural)) :=
  List.cons (Prod.mk Natural.zero (List.cons four List.nil))
    (List.cons (Prod.mk one (List.cons two List.nil))
      (List.cons (Prod.mk one (List.cons two List.nil))
        (List.cons (Prod.mk Natural.zero (List.cons four List.nil)) List.nil)))

/-- Per-host MIN, one block per host, on hosts 0 and 1: 2 misses. -/
theorem min_split_per_host : Eq (per_host_min one two min_split_requests) two := rfl

/-- Pooled MIN, one block, on the same chains flattened (`4, 2, 2, 4`): 3 misses. -/
theorem min_split_pooled :
    Eq (min_misses one (List.flatten (List.map Prod.snd min_split_requests))) three := rfl

/-- At one block per cache, per-host MIN misses strictly fewer blocks than
pooled MIN on `min_split_requests` (`a + 1 ≤ b` is `a < b`). -/
theorem per_host_min_lt_pooled_min :
    Natural.le (Natural.succ (per_host_min one two min_split_requests))
      (min_misses one (List.flatten (List.map Prod.snd min_split_requests))) :=
  Exists.intro Natural.zero rfl

/-! ## (b) Per-host LRU can beat pooled LRU of the same total memory -/

/-- Requests `[(0, 3), (1, 4), (1, 1), (0, 3)]`: host, block. -/
noncomputable def lru_split_requests : List (Prod Natural Natural) :=
  List.cons (Prod.mk Natural.zero three)
    (List.cons (Prod.mk one four)
      (List.cons (Prod.mk one one)
        (List.cons (Prod.mk Natural.zero three) List.nil)))

/-- One LRU block per host, hosts 0 and 1: 3 misses. -/
theorem lru_split_per_host : Eq (per_host_lru_misses one two lru_split_requests) three := rfl

/-- One pooled LRU cache of two blocks on `3, 4, 1, 3`: 4 misses. -/
theorem lru_split_pooled : Eq (lru_misses two (List.map Prod.snd lru_split_requests)) four := rfl

/-- Two hosts with one LRU block each miss strictly fewer blocks than one
pooled LRU cache of two blocks on `lru_split_requests`. -/
theorem per_host_lru_lt_pooled_lru :
    Natural.le (Natural.succ (per_host_lru_misses one two lru_split_requests))
      (lru_misses two (List.map Prod.snd lru_split_requests)) :=
  Exists.intro Natural.zero rfl

/-! ## (c) Belady's anomaly: FIFO misses more with more memory -/

/-- Blocks `1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5` (Belady, Nelson and Shedler 1969). -/
noncomputable def anomaly_requests : List Natural :=
  List.cons one (List.cons two (List.cons three (List.cons four
    (List.cons one (List.cons two (List.cons five
      (List.cons one (List.cons two (List.cons three (List.cons four (List.cons five List.nil)))))))))))

/-- FIFO with 3 blocks: 9 misses. -/
theorem anomaly_fifo_three : Eq (fifo_misses three anomaly_requests) nine := rfl

/-- FIFO with 4 blocks: 10 misses. -/
theorem anomaly_fifo_four : Eq (fifo_misses four anomaly_requests) ten := rfl

/-- Flat FIFO with 4 blocks misses strictly more than with 3 on
`anomaly_requests`: FIFO is not a stack algorithm. -/
theorem fifo_anomaly :
    Natural.le (Natural.succ (fifo_misses three anomaly_requests)) (fifo_misses four anomaly_requests) :=
  Exists.intro Natural.zero rfl

/-- LRU on the same blocks: 10 misses with 3 blocks, 8 with 4 (more memory,
fewer misses, as `lru_hits_mono` says). -/
example : Eq (lru_misses three anomaly_requests) ten := rfl
example : Eq (lru_misses four anomaly_requests) (Natural.succ (Natural.succ (Natural.succ five))) := rfl
