"""The registered Lean theorems, with their statements in plain words.

Each entry names a theorem of the Lean library ``PrefixPool`` (``lean/``). The
runner checks that the kernel accepted it and that it depends on no axioms,
and writes it, with the statement exactly as Lean prints it, into the registry
``lean/theorems.json``. The words here are for people (and the bridge): they
must say what the Lean statement says and no more. Changing them changes the
registry, so ``pyverify lean check`` fails until it is regenerated.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TheoremSpec:
    """``applies`` names a theorem of ``PrefixPool/Examples.lean`` that applies
    this theorem to a concrete input, discharging all its hypotheses at once,
    so they are known to hold together of something (the theorem is not
    vacuous). Required when the Lean statement has hypotheses."""

    name: str
    hypotheses: tuple[str, ...]
    plain: str
    applies: str | None = None


THEOREMS: tuple[TheoremSpec, ...] = (
    TheoremSpec(
        name="pooled_misses_eq_distinct",
        hypotheses=(
            "one cache shared by all hosts (pooled)",
            "uncapacitated: the cache keeps every opening it fetches",
            "the cache starts empty",
            "any list of requests, each the id of its prompt opening",
        ),
        plain=(
            "For every request list, the pooled uncapacitated cache that starts empty "
            "misses exactly as many times as there are distinct openings."
        ),
    ),
    TheoremSpec(
        name="demand_misses_ge_distinct",
        hypotheses=(
            "a demand cache: before each request it holds only openings requested earlier",
            "any eviction policy and any capacity (the run lists what the cache holds before each request)",
            "a request hits only if its opening is held",
            "the cache starts empty",
        ),
        plain=(
            "For every request list, no demand cache that starts empty, whatever its policy "
            "and capacity, misses fewer times than there are distinct openings; so no demand cache beats "
            "the pooled uncapacitated cache on any request list."
        ),
        applies="demand_misses_ge_distinct_applies",
    ),
    TheoremSpec(
        name="per_host_misses_eq_distinct_pairs",
        hypotheses=(
            "one separate cache per host, read and filled only by its own host",
            "uncapacitated: each cache keeps every opening it fetches",
            "all caches start empty",
            "requests are (host, opening) pairs",
        ),
        plain=(
            "For every request list, separate uncapacitated per-host caches that start empty "
            "miss exactly as many times as there are distinct (host, opening) pairs."
        ),
    ),
    TheoremSpec(
        name="per_host_misses_eq_sum",
        hypotheses=(
            "one separate cache per host, read and filled only by its own host",
            "uncapacitated: each cache keeps every opening it fetches",
            "all caches start empty",
            "a fleet of `fleet` hosts numbered 0 to fleet - 1, and every request's host is one of them",
        ),
        plain=(
            "For every request list on a fleet, separate uncapacitated per-host caches that "
            "start empty miss exactly the sum, over the hosts, of the number of distinct "
            "openings each host is asked for."
        ),
        applies="per_host_misses_eq_sum_applies",
    ),
    TheoremSpec(
        name="per_host_ge_pooled",
        hypotheses=(
            "uncapacitated caches that start empty",
            "the same requests served either by one pooled cache or by one separate cache per host",
        ),
        plain=(
            "For every request list, separate uncapacitated per-host caches never miss fewer "
            "times than one pooled uncapacitated cache serving the same openings."
        ),
    ),
    TheoremSpec(
        name="pooled_block_misses_eq_distinct",
        hypotheses=(
            "one cache shared by all hosts (pooled)",
            "uncapacitated: the cache keeps every block it fetches",
            "the cache starts empty",
            "requests are chains of block ids; a request hits the longest prefix of its chain "
            "whose blocks are all held and misses every later block",
            "the chains are prefix-closed: every block id has one parent (the block before it, "
            "or the root for first blocks) wherever it occurs",
        ),
        plain=(
            "For every prefix-closed list of block chains, the pooled uncapacitated cache that "
            "starts empty, with longest-prefix hits, misses exactly as many blocks as there are "
            "distinct block ids."
        ),
        applies="pooled_block_misses_eq_distinct_applies",
    ),
    TheoremSpec(
        name="per_host_blocks_ge_pooled",
        hypotheses=(
            "uncapacitated caches that start empty",
            "requests are chains of block ids, each routed to a host; a request hits the longest "
            "prefix of its chain whose blocks are all held by the cache it reads, and misses every later block",
            "the same chains served either by one pooled cache or by one separate cache per host",
            "any chains: prefix closure is not needed",
        ),
        plain=(
            "For every list of routed block chains, separate uncapacitated per-host caches with "
            "longest-prefix hits that start empty never miss fewer blocks than one pooled "
            "uncapacitated cache serving the same chains."
        ),
    ),
    TheoremSpec(
        name="per_host_block_misses_eq_distinct_pairs",
        hypotheses=(
            "one separate cache per host, read and filled only by its own host",
            "uncapacitated: each cache keeps every block it fetches",
            "all caches start empty",
            "requests are chains of block ids, each routed to a host; a request hits the longest "
            "prefix of its chain whose blocks are all held by its own host's cache, and misses every later block",
            "the chains of all requests, taken together, are prefix-closed: every block id has one parent "
            "(the block before it, or the root for first blocks) wherever it occurs",
        ),
        plain=(
            "For every list of routed block chains whose chains are prefix-closed, separate uncapacitated "
            "per-host caches with longest-prefix hits that start empty miss exactly as many blocks as there "
            "are distinct (host, block id) pairs."
        ),
        applies="per_host_block_misses_eq_distinct_pairs_applies",
    ),
    TheoremSpec(
        name="prefix_run_is_flat_run",
        hypotheses=(
            "a run of a capacitated demand cache with longest-prefix hits, given block by block as what "
            "the cache holds just before each block is served (any policy: LRU, FIFO, offline optimal, ...)",
            "the cache starts empty and holds at most `cap` distinct blocks at every step",
            "a request hits while it reads its chain and finds each block held; from its first miss on "
            "it misses (fetches) every later block of the chain",
            "nothing enters the cache on a hit; on a miss only the fetched block may enter",
        ),
        plain=(
            "Every valid run of a capacitated demand cache of `cap` blocks with longest-prefix hits, "
            "flattened, is a valid run of a flat demand-paging cache of `cap` blocks on the flattened "
            "block sequence, and it misses at least as many blocks as that flat run. So the fewest "
            "misses of any flat demand cache of `cap` blocks on the flattened sequence is a lower bound "
            "on the misses of every capacitated prefix cache on the chains."
        ),
        applies="prefix_run_is_flat_run_applies",
    ),
    TheoremSpec(
        name="lru_cache_eq_take",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "an LRU cache of `cap` blocks that starts empty: a hit moves the block to the front, a miss "
            "puts it in front and drops the least recently used block beyond `cap`",
            "the move-to-front stack: every block requested, most recent first",
        ),
        plain=(
            "After any sequence of requests, the LRU cache of `cap` blocks holds exactly the first `cap` "
            "entries of the move-to-front stack, in the same order."
        ),
    ),
    TheoremSpec(
        name="lru_cache_subset_succ",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "LRU caches of `cap` and `cap + 1` blocks that start empty",
        ),
        plain=(
            "LRU's inclusion property: after any sequence of requests, every block the LRU cache of `cap` "
            "blocks holds is also held by the LRU cache of `cap + 1` blocks."
        ),
    ),
    TheoremSpec(
        name="lru_hits_mono",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "LRU caches of `cap` and `cap + 1` blocks that start empty; a request hits when its block is held",
        ),
        plain=(
            "On every sequence of requests, an LRU cache of `cap + 1` blocks hits at least as often as "
            "one of `cap` blocks: LRU's hits never drop as its capacity grows."
        ),
    ),
    TheoremSpec(
        name="lru_hit_iff_stack_distance",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "an LRU cache of `cap` blocks that starts empty",
        ),
        plain=(
            "The stack-distance characterisation: after any sequence of requests, block `r` is held by "
            "the LRU cache of `cap` blocks (so a request for it hits) exactly when `r` was requested "
            "before and fewer than `cap` distinct blocks were requested since its last request."
        ),
    ),
    TheoremSpec(
        name="min_run_valid",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "Belady's MIN in bypass form with `cap` blocks, starting empty: a hit changes nothing; a miss "
            "keeps the block if fewer than `cap` are held, otherwise drops whichever of the held blocks and "
            "the requested one is requested again furthest in the future",
        ),
        plain=(
            "Belady's MIN in bypass form is a flat demand cache of `cap` blocks: on every sequence its run "
            "is a valid flat demand-paging run of `cap` blocks serving exactly the requested blocks, so its "
            "misses are achievable. (That no demand cache misses fewer times than MIN is not part of this "
            "statement.)"
        ),
    ),
    TheoremSpec(
        name="min_misses_le",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "any run of a flat demand cache of `cap` blocks that starts empty, given as what it holds "
            "just before each request (any policy, offline or not; a block enters only when requested; "
            "bypass allowed)",
            "Belady's MIN in bypass form with `cap` blocks on the same requests",
        ),
        plain=(
            "Belady's theorem: on every sequence of block requests, no flat demand cache of `cap` blocks "
            "that starts empty misses fewer times than Belady's MIN (bypass form) with `cap` blocks."
        ),
        applies="min_misses_le_applies",
    ),
    TheoremSpec(
        name="min_run_is_prefix_run",
        hypotheses=(
            "a list of requests, each a chain of block ids, that is prefix-closed (every block id has one "
            "parent)",
            "a capacitated demand cache of `cap` blocks with longest-prefix hits that starts empty, given "
            "block by block as what it holds just before each block is served (rules as in "
            "`prefix_run_is_flat_run`)",
            "Belady's MIN in bypass form with `cap` blocks on the flattened block sequence",
        ),
        plain=(
            "On every prefix-closed list of chains, some valid run of a capacitated demand cache of `cap` "
            "blocks with longest-prefix hits that starts empty, whose requests read exactly the given "
            "chains, misses exactly as many blocks as Belady's MIN (bypass form) with `cap` blocks on the "
            "flattened block sequence. So MIN's count is achieved by a capacitated prefix cache."
        ),
        applies="min_run_is_prefix_run_applies",
    ),
    TheoremSpec(
        name="prefix_misses_ge_min",
        hypotheses=(
            "a valid run of a capacitated demand cache of `cap` blocks with longest-prefix hits that "
            "starts empty (rules as in `prefix_run_is_flat_run`; any policy)",
            "its requests read exactly the given chains (prefix-closed or not)",
            "Belady's MIN in bypass form with `cap` blocks on the flattened block sequence",
        ),
        plain=(
            "No valid run of a capacitated demand cache of `cap` blocks with longest-prefix hits that "
            "starts empty, whose requests read the given chains, misses fewer blocks than Belady's MIN "
            "(bypass form) with `cap` blocks on the flattened chains. With `min_run_is_prefix_run`: on "
            "prefix-closed chains the fewest misses of such a cache are exactly MIN's."
        ),
        applies="prefix_misses_ge_min_applies",
    ),
    TheoremSpec(
        name="fleet_misses_ge_per_host_min",
        hypotheses=(
            "a fleet of `fleet` hosts numbered 0 to fleet - 1, and every request's host is one of them",
            "requests are (host, chain) pairs: a static routing; one separate capacitated demand cache of `cap` "
            "blocks per host with longest-prefix hits, starting empty (rules as in `prefix_run_is_flat_run`; "
            "any policy)",
            "a valid fleet run: every host's run is a valid run of its cache and reads exactly the chains routed "
            "to that host, in request order (so no request is skipped; a host with no requests has the empty run)",
            "Belady's MIN in bypass form with `cap` blocks on each host's flattened chains",
        ),
        plain=(
            "For every list of routed chains (prefix-closed or not) on a fleet of hosts 0 to fleet - 1, no valid "
            "run of separate capacitated prefix caches of `cap` blocks, one per host, misses fewer blocks in total "
            "(summed over the hosts) than the sum over the hosts of Belady's MIN with `cap` blocks on the "
            "flattened sequence of the chains routed to that host."
        ),
        applies="fleet_misses_ge_per_host_min_applies",
    ),
    TheoremSpec(
        name="per_host_min_is_fleet_run",
        hypotheses=(
            "a fleet of `fleet` hosts numbered 0 to fleet - 1, and every request's host is one of them",
            "requests are (host, chain) pairs whose chains, taken together, are prefix-closed (every block id "
            "has one parent)",
            "one separate capacitated demand cache of `cap` blocks per host with longest-prefix hits, starting "
            "empty (rules as in `prefix_run_is_flat_run`)",
            "Belady's MIN in bypass form with `cap` blocks on each host's flattened chains",
        ),
        plain=(
            "For every list of routed chains that, taken together, are prefix-closed, on a fleet of hosts 0 to "
            "fleet - 1, some valid run of separate capacitated prefix caches of `cap` blocks, one per host, each "
            "host's run reading exactly the chains routed to it, misses in total exactly the sum over the hosts "
            "of Belady's MIN with `cap` blocks on that host's flattened chains. With "
            "`fleet_misses_ge_per_host_min`: on such chains the fewest misses of per-host capacitated prefix "
            "caches are exactly that sum."
        ),
        applies="per_host_min_is_fleet_run_applies",
    ),
    TheoremSpec(
        name="min_misses_mono",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "Belady's MIN in bypass form with `cap` and with `cap + 1` blocks, starting empty",
        ),
        plain=(
            "On every sequence of block requests, Belady's MIN with `cap + 1` blocks misses at most as many times "
            "as with `cap` blocks: the curve of MIN's misses against capacity never rises."
        ),
    ),
    TheoremSpec(
        name="min_misses_le_lru",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "Belady's MIN in bypass form and an LRU cache, each of `cap` blocks, starting empty",
        ),
        plain=(
            "On every sequence of block requests and at every capacity `cap`, Belady's MIN with `cap` blocks "
            "misses at most as many times as LRU with `cap` blocks: MIN's curve never lies above LRU's. "
            "A bound with its direction, not an equation: that the one-pass MIN curve of `pyverify mrc` "
            "(`optimal_curve_flat`) equals MIN's misses at every capacity is checked only on every "
            "input up to the size `Generated.lean` states, not proved."
        ),
    ),
    TheoremSpec(
        name="lru_misses_eq_far",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "an LRU cache of `cap` blocks that starts empty; a request misses when its block is not held",
        ),
        plain=(
            "On every sequence of block requests, an LRU cache of `cap` blocks that starts empty misses exactly as "
            "many times as there are distinct blocks plus the requests that repeat a block after at least `cap` "
            "distinct blocks were requested since its previous request (stack distance `cap` or more): "
            "`misses(C) = cold + #{d >= C}` at every capacity, the count `pyverify/sim/mrc.py` "
            "(`MissRatioCurve.misses`, pooled) evaluates from one histogram of stack distances."
        ),
    ),
    TheoremSpec(
        name="per_host_lru_eq_far",
        hypotheses=(
            "a fleet of `fleet` hosts numbered 0 to fleet - 1, and every request's host is one of them",
            "requests are (host, chain) pairs; each host's blocks are its chains flattened, in request order",
            "one flat LRU cache of `cap` blocks per host, starting empty; a request misses when its block is not "
            "held by its own host's cache",
        ),
        plain=(
            "On a fleet of hosts 0 to fleet - 1, every request routed to one of them, flat LRU caches of `cap` "
            "blocks, one per host, each starting empty and fed its host's flattened chains, miss in total exactly "
            "as many times as there are distinct (host, block id) pairs plus, summed over the hosts, the requests "
            "that repeat a block after at least `cap` distinct blocks were requested on that host since its "
            "previous request: the per-host curve of `pyverify/sim/mrc.py` (`lru_curve(chains, routing, "
            "fleet).misses`, cold pairs plus distances measured within each host). With "
            "`per_host_prefix_lru_eq_flat` it is the count of per-host longest-prefix LRU on prefix-closed chains."
        ),
        applies="per_host_lru_eq_far_applies",
    ),
    TheoremSpec(
        name="prefix_lru_eq_flat",
        hypotheses=(
            "one cache, starting empty, of `cap` blocks",
            "requests are chains of block ids; a request hits the longest prefix of its chain whose blocks are all "
            "held and misses every later block; then each block of the chain is served in chain order by LRU (a "
            "held one moves to the front, a missing one enters at the front, the least recent beyond `cap` is "
            "dropped)",
            "the chains are prefix-closed: every block id has one parent wherever it occurs",
        ),
        plain=(
            "On every prefix-closed list of chains, pyverify's LRU prefix cache of `cap` blocks that starts empty "
            "(longest held prefix hits, then LRU in chain order) misses exactly as many blocks as a flat LRU cache "
            "of `cap` blocks on the flattened block sequence."
        ),
        applies="prefix_lru_eq_flat_applies",
    ),
    TheoremSpec(
        name="per_host_prefix_lru_eq_flat",
        hypotheses=(
            "requests are (host, chain) pairs whose chains, taken together, are prefix-closed",
            "one LRU prefix cache of `cap` blocks per host 0 to fleet - 1, starting empty, each serving the chains "
            "routed to it in request order (rules as in `prefix_lru_eq_flat`)",
        ),
        plain=(
            "For every list of block chains routed to hosts whose chains, taken together, are prefix-closed, "
            "separate LRU prefix caches of `cap` blocks, one per host 0 to fleet - 1, each starting empty, miss in "
            "total exactly as many blocks as flat LRU caches of `cap` blocks on each host's flattened chains."
        ),
        applies="per_host_prefix_lru_eq_flat_applies",
    ),
    TheoremSpec(
        name="pooled_min_le_per_host_min",
        hypotheses=(
            "a fleet of `fleet` hosts numbered 0 to fleet - 1, and every request's host is one of them",
            "requests are (host, chain) pairs: a static routing (prefix-closed or not)",
            "Belady's MIN in bypass form, with fleet x cap blocks on all chains flattened, and with `cap` blocks on "
            "each host's flattened chains",
        ),
        plain=(
            "On a fleet of hosts 0 to fleet - 1, every request routed to one of them (prefix-closed or not), "
            "Belady's MIN in bypass form on one pooled cache of fleet x cap blocks, fed every request's chain in "
            "request order, misses no more blocks than the sum over the hosts of MIN with `cap` blocks on each "
            "host's flattened chains: pooling the same total memory never costs misses under MIN."
        ),
        applies="pooled_min_le_per_host_min_applies",
    ),
    TheoremSpec(
        name="forced_min_misses_le",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "any run of a flat demand cache of `cap` blocks that starts empty and holds each requested block after "
            "its request (forced admission; a block enters only when requested; any eviction policy)",
            "forced MIN with `cap` blocks: a hit changes nothing; a miss inserts the block, first evicting, when "
            "`cap` are held, the held block requested again furthest in the future",
        ),
        plain=(
            "Belady's theorem with forced admission: on every sequence of block requests, no flat demand cache of "
            "`cap` blocks that starts empty and keeps every block it is asked for (after each request its block is "
            "held; any eviction policy) misses fewer times than forced MIN with `cap` blocks."
        ),
        applies="forced_min_misses_le_applies",
    ),
    TheoremSpec(
        name="forced_min_run_valid",
        hypotheses=(
            "requests are single block ids served one at a time (a flat sequence)",
            "forced MIN with cap + 1 blocks (at least one block: with none no cache admits anything)",
        ),
        plain=(
            "Forced MIN with cap + 1 blocks is itself a cache that keeps every block it is asked for: its run is "
            "forced-admission valid and serves exactly the requested blocks, so its misses are achieved."
        ),
    ),
    TheoremSpec(
        name="pinned_misses_ge_forced_min",
        hypotheses=(
            "one cache, starting empty, with longest-prefix hits and at most `cap` blocks (rules as in "
            "`prefix_run_is_flat_run`: a block enters only with the miss that fetches it)",
            "forced admission, the running request pinned: every step of a request holds every block the request "
            "served before it, and the next request starts holding the whole chain (rule 5 of "
            "pyverify/trusted/check.py; any eviction policy otherwise)",
            "the run's requests read exactly the given chains, prefix-closed or not",
            "every chain has at least one block and at most `cap` (so it is pinned whole)",
            "forced MIN with `cap` blocks (`forced_min_misses`) on the chains read twice each, in request order "
            "(`twice`: [x, a, b] becomes [x, a, b, x, a, b])",
        ),
        plain=(
            "Forced admission on prefix chains, the running request pinned: on chains of one to `cap` blocks each, "
            "no valid run of a capacitated prefix cache of `cap` blocks that starts empty and keeps every block a "
            "request hits or fetches (pinned while the request runs, cached when it ends) misses fewer blocks than "
            "forced MIN with `cap` blocks on the chains read twice each (the second reading keeps forced MIN from "
            "dropping a pinned block). A lower bound on the count of `forced_run_flat` "
            "(Belady's rule with the running request pinned, `simulate`/`certify` with forced admission); that the "
            "two counts are equal is tested, not part of the statement."
        ),
        applies="pinned_misses_ge_forced_min_applies",
    ),
    TheoremSpec(
        name="prefix_misses_ge_distinct_blocks",
        hypotheses=(
            "one cache, starting empty, with longest-prefix hits (rules as in `prefix_run_is_flat_run`): a demand "
            "cache, a block enters only with the miss that fetches it; any policy, drops and bypass free",
            "any capacity `cap` (every finite run fits some `cap`, so this covers the uncapacitated cache too)",
            "the run's requests read exactly the given chains, prefix-closed or not",
        ),
        plain=(
            "On every list of block chains (prefix-closed or not), no valid run of a demand cache with longest-prefix "
            "hits that starts empty, of any capacity and any policy, whose requests read exactly the chains, misses "
            "fewer blocks than there are distinct block ids. With `pooled_block_misses_eq_distinct`: on prefix-closed "
            "chains the fewest misses of an uncapacitated pooled cache are exactly the distinct block ids."
        ),
        applies="prefix_misses_ge_distinct_blocks_applies",
    ),
    TheoremSpec(
        name="fleet_misses_ge_distinct_host_blocks",
        hypotheses=(
            "a fleet of `fleet` hosts numbered 0 to fleet - 1, and every request's host is one of them",
            "one separate demand cache per host with longest-prefix hits, each starting empty and reading exactly "
            "the chains routed to it, in request order (rules as in `prefix_run_is_flat_run`; any policy)",
            "any capacity `cap` per cache (every finite run fits some `cap`, so this covers uncapacitated caches)",
            "any chains: prefix closure is not needed",
        ),
        plain=(
            "On a fleet of hosts 0 to fleet - 1, every request routed to one of them, no valid run of separate demand "
            "caches with longest-prefix hits, one per host, of any capacity and any policy, each starting empty and "
            "reading exactly the chains routed to it, misses fewer blocks in total than there are distinct (host, "
            "block id) pairs. With `per_host_block_misses_eq_distinct_pairs`: on prefix-closed chains the fewest "
            "misses of uncapacitated per-host caches are exactly the distinct (host, block id) pairs."
        ),
        applies="fleet_misses_ge_distinct_host_blocks_applies",
    ),
    TheoremSpec(
        name="per_host_blocks_eq_pooled",
        hypotheses=(
            "one separate cache per host, read and filled only by its own host, against one pooled cache",
            "uncapacitated: each cache keeps every block it fetches",
            "all caches start empty, with longest-prefix hits",
            "requests are (host, chain) pairs whose chains, taken together, are prefix-closed (every block id "
            "has one parent)",
            "routed by root: for one function `route`, every request's host is `route` of its chain's first block "
            "(a request with an empty chain may be on any host)",
        ),
        plain=(
            "For every list of routed block chains whose chains, taken together, are prefix-closed, and whose every "
            "request is routed by its chain's first block through one function, separate uncapacitated per-host "
            "caches with longest-prefix hits that start empty miss exactly as many blocks as one pooled uncapacitated "
            "cache that starts empty on the same chains."
        ),
        applies="per_host_blocks_eq_pooled_applies",
    ),
    TheoremSpec(
        name="per_host_min_lt_pooled_min",
        hypotheses=(
            "one concrete request list of (host, chain) pairs: (0, [4]), (1, [2]), (1, [2]), (0, [4])",
            "per host: Belady's MIN in bypass form with 1 block on each of hosts 0 and 1",
            "pooled: Belady's MIN in bypass form with 1 block on all the chains flattened (4, 2, 2, 4)",
        ),
        plain=(
            "On the requests (0, [4]), (1, [2]), (1, [2]), (0, [4]), the sum over hosts 0 and 1 of Belady's MIN with "
            "1 block on each host's flattened chains is smaller than Belady's MIN with 1 block on all the chains "
            "flattened (2 against 3): at equal capacity per cache, per-host caches can miss fewer blocks than one "
            "pooled cache."
        ),
    ),
    TheoremSpec(
        name="per_host_lru_lt_pooled_lru",
        hypotheses=(
            "one concrete request list of (host, block) pairs: (0, 3), (1, 4), (1, 1), (0, 3)",
            "per host: a flat LRU cache of 1 block on each of hosts 0 and 1, starting empty",
            "pooled: one flat LRU cache of 2 blocks, starting empty",
        ),
        plain=(
            "On the requests (0, 3), (1, 4), (1, 1), (0, 3), flat LRU caches of 1 block on hosts 0 and 1 miss fewer "
            "times in total than one flat LRU cache of 2 blocks on all the blocks (3 against 4): at equal total "
            "memory, per-host LRU caches can miss fewer times than one pooled LRU cache."
        ),
    ),
    TheoremSpec(
        name="fifo_anomaly",
        hypotheses=(
            "one concrete sequence of blocks: 1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5",
            "a flat FIFO cache starting empty: a hit changes nothing, a miss evicts the oldest entry when full",
        ),
        plain=(
            "On the blocks 1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5, a flat FIFO cache of 4 blocks misses more times than "
            "one of 3 blocks (10 against 9): Belady's anomaly, so FIFO is not a stack algorithm."
        ),
    ),
)


def by_name() -> dict[str, TheoremSpec]:
    return {spec.name: spec for spec in THEOREMS}
