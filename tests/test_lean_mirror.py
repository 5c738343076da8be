"""The Python mirrors of the Lean definitions give the numbers the kernel
computes in lean/PrefixPool/Examples.lean, and obey the theorems' statements
on random inputs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pyverify.sim.simulate import (
    demand_misses,
    demand_valid,
    distinct_count,
    distinct_pairs,
    openings_of,
    per_host_misses,
    pooled_misses,
)


def chains(openings):
    return [[opening] for opening in openings]


def test_examples_lean_evaluates():
    openings = [1, 2, 1, 3, 2]
    assert distinct_count(chains(openings)) == 3
    assert pooled_misses(chains(openings)) == 3
    routed = [(0, 1), (1, 1), (0, 1), (1, 2)]
    assert per_host_misses(chains(o for _, o in routed), [h for h, _ in routed]) == 3
    assert distinct_pairs(routed) == 3
    assert sum(distinct_count(chains(openings_of(host, routed))) for host in range(2)) == 3
    assert pooled_misses(chains(o for _, o in routed)) == 2
    lru_run = [(1, []), (2, [1]), (1, [2])]
    assert demand_valid(lru_run) and demand_misses(lru_run) == 3
    assert distinct_count(chains(o for o, _ in lru_run)) == 2
    assert not demand_valid([(1, [1])])


requests = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=30)


@given(requests)
def test_per_host_statements(routed):
    openings = [o for _, o in routed]
    hosts = [h for h, _ in routed]
    misses = per_host_misses(chains(openings), hosts)
    assert misses == distinct_pairs(routed)
    assert misses == sum(distinct_count(chains(openings_of(host, routed))) for host in range(5))
    assert misses >= pooled_misses(chains(openings))


@given(st.lists(st.integers(0, 6), max_size=30), st.data())
def test_demand_runs(openings, data):
    """Build a random valid run (held sets drawn from earlier openings) and
    check demand_misses_ge_distinct on it."""
    run, earlier = [], []
    for opening in openings:
        held = data.draw(st.lists(st.sampled_from(earlier), unique=True) if earlier else st.just([]))
        run.append((opening, held))
        earlier.append(opening)
    assert demand_valid(run)
    assert demand_misses(run) >= distinct_count(chains(openings))


# --- per_host_blocks_ge_pooled (lean/PrefixPool/PerHostBlocks.lean) -----------------

block_chains = st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=5), max_size=12)


def test_per_host_blocks_examples():
    """The numbers lean/PrefixPool/Examples.lean computes for routed chains."""
    assert per_host_misses([[1, 2], [3, 2]], [0, 1]) == 4
    assert pooled_misses([[1, 2], [3, 2]]) == 4
    assert per_host_misses([[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]) == 5
    assert pooled_misses([[1, 2], [1, 3], [1, 2, 4]]) == 4


@given(block_chains, st.data())
def test_per_host_blocks_ge_pooled(chains, data):
    """The statement of per_host_blocks_ge_pooled, on any chains (prefix-closed
    or not) and any routing: per-host longest-prefix misses >= pooled misses."""
    routing = data.draw(st.lists(st.integers(0, 3), min_size=len(chains), max_size=len(chains)))
    assert per_host_misses(chains, routing) >= pooled_misses(chains)


# --- per_host_block_misses_eq_distinct_pairs (lean/PrefixPool/PerHostBlocksEq.lean) ---

from pyverify.inputs.model import first_prefix_violation  # noqa: E402
from pyverify.sim.simulate import distinct_host_blocks  # noqa: E402

from .strategies import prefix_closed_chains  # noqa: E402


def pairs_counted_here(chains, routing):
    """The distinct (host, block) pairs, counted independently of the mirror."""
    seen = []
    for chain, host in zip(chains, routing):
        for block in chain:
            if (host, block) not in seen:
                seen.append((host, block))
    return len(seen)


def test_per_host_block_pairs_examples():
    """The numbers lean/PrefixPool/Examples.lean computes, and the hypothesis at work:
    without prefix closure the equation fails."""
    tree, routing = [[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]
    assert first_prefix_violation(tree) is None
    assert per_host_misses(tree, routing) == distinct_host_blocks(tree, routing) == 5
    crossed = [[1, 2], [3, 2]]
    assert first_prefix_violation(crossed) is not None
    assert per_host_misses(crossed, [0, 0]) == 4 and distinct_host_blocks(crossed, [0, 0]) == 3
    assert per_host_misses(crossed, [0, 1]) == distinct_host_blocks(crossed, [0, 1]) == 4
    assert per_host_misses([[1, 1]], [0]) == 2 and distinct_host_blocks([[1, 1]], [0]) == 1


@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.data())
def test_per_host_block_misses_eq_distinct_pairs(chains, data):
    """The statement of per_host_block_misses_eq_distinct_pairs: on prefix-closed
    chains with any routing, per-host longest-prefix misses are the distinct
    (host, block) pairs."""
    routing = data.draw(st.lists(st.integers(0, 4), min_size=len(chains), max_size=len(chains)))
    assert first_prefix_violation(chains) is None
    misses = per_host_misses(chains, routing)
    assert misses == distinct_host_blocks(chains, routing) == pairs_counted_here(chains, routing)


@given(block_chains, st.data())
def test_per_host_block_pairs_without_prefix_closure(chains, data):
    """On any chains, each distinct pair is missed at least once; the equation
    holds on every prefix-closed input (above) and is only a lower bound otherwise."""
    routing = data.draw(st.lists(st.integers(0, 3), min_size=len(chains), max_size=len(chains)))
    misses, pairs = per_host_misses(chains, routing), pairs_counted_here(chains, routing)
    assert misses >= pairs == distinct_host_blocks(chains, routing)
    if misses != pairs:
        assert first_prefix_violation(chains) is not None


# --- prefix_run_is_flat_run (lean/PrefixPool/Flat.lean) ------------------------------

from pyverify.lean import mirror  # noqa: E402
from pyverify.sim.simulate import POOLED, simulate  # noqa: E402


def test_flat_examples():
    """The numbers lean/PrefixPool/Examples.lean computes."""
    run = mirror.lru_prefix_run([[1, 2], [1, 3]], 2)
    assert run == [[(1, []), (2, [1])], [(1, [1, 2]), (3, [1, 2])]]
    assert mirror.prefix_valid(run, 2) and mirror.prefix_misses(run) == 3
    assert demand_misses(mirror.flatten(run)) == 3
    strict = [[(1, []), (2, [1])], [(3, [1, 2]), (2, [2, 3])]]
    assert mirror.prefix_valid(strict, 2)
    assert mirror.prefix_misses(strict) == 4 and demand_misses(mirror.flatten(strict)) == 3


def test_validity_rejects_what_it_should():
    assert not mirror.prefix_valid([[(1, [1])]], 2)  # holds a block never fetched
    assert not mirror.prefix_valid([[(1, []), (2, [1])], [(3, [1, 2])]], 1)  # over capacity
    # a hit fetches nothing: block 3 cannot appear after a hit on 1
    assert not mirror.prefix_valid([[(1, [])], [(1, [1]), (2, [1, 3])]], 3)
    assert mirror.flat_valid([(1, []), (1, [1])], 1) and not mirror.flat_valid([(1, []), (2, [2])], 1)


@given(block_chains, st.integers(1, 5))
def test_lru_prefix_run_is_the_simulators_run(chains, capacity):
    """The block-level run of the Lean model is the simulator's LRU: same misses, valid."""
    run = mirror.lru_prefix_run(chains, capacity)
    assert mirror.prefix_valid(run, capacity)
    assert mirror.prefix_misses(run) == simulate(chains, None, POOLED, capacity=capacity).misses


def random_prefix_run(data, chains, capacity):
    """A valid prefix run with random evictions (any policy): before each fetch,
    drop a random subset, then drop more while over capacity."""
    held: set[int] = set()
    run = []
    for chain in chains:
        steps, reading = [], True
        for block in chain:
            if data.draw(st.booleans()):
                held -= set(data.draw(st.lists(st.sampled_from(sorted(held)), unique=True))) if held else set()
            steps.append((block, sorted(held)))
            reading = reading and block in held
            if not reading:
                keep = data.draw(st.booleans())
                if keep:
                    while len(held) >= capacity:
                        held.discard(data.draw(st.sampled_from(sorted(held))))
                    held.add(block)
        run.append(steps)
    return run


@given(block_chains, st.integers(1, 4), st.data())
def test_prefix_run_is_flat_run(chains, capacity, data):
    """The statement of prefix_run_is_flat_run on random valid prefix runs."""
    run = random_prefix_run(data, chains, capacity)
    assert mirror.prefix_valid(run, capacity)
    flat = mirror.flatten(run)
    assert [block for block, _ in flat] == [block for chain in chains for block in chain]
    assert mirror.flat_valid(flat, capacity)
    assert demand_misses(flat) <= mirror.prefix_misses(run)


# --- lru_cache_eq_take, lru_cache_subset_succ, lru_hits_mono (lean/PrefixPool/Lru.lean) ---

flat_requests = st.lists(st.integers(0, 7), max_size=40)


@given(flat_requests, st.integers(0, 6))
def test_lru_is_the_top_of_the_move_to_front_stack(requests, capacity):
    """The statements of the three LRU theorems, and the Lean model against the simulator."""
    stack = mirror.mtf_stack(requests)
    assert mirror.lru_cache(requests, capacity) == stack[:capacity]
    assert set(mirror.lru_cache(requests, capacity)) <= set(mirror.lru_cache(requests, capacity + 1))
    assert mirror.lru_hits(requests, capacity) <= mirror.lru_hits(requests, capacity + 1)
    if capacity >= 1:
        assert mirror.lru_hits(requests, capacity) == simulate([[r] for r in requests], None, POOLED, capacity=capacity).hits


def test_lru_examples():
    assert mirror.mtf_stack([1, 2, 1, 3]) == [3, 1, 2]
    assert mirror.lru_cache([1, 2, 1, 3], 2) == [3, 1]
    assert mirror.lru_hits([1, 2, 1, 3, 2], 2) == 1 and mirror.lru_hits([1, 2, 1, 3, 2], 3) == 2


@given(flat_requests, st.integers(0, 6), st.integers(0, 7))
def test_stack_distance_characterisation(requests, capacity, r):
    """The statement of lru_hit_iff_stack_distance: r is held by LRU of `capacity`
    blocks after `requests` exactly when it was requested and fewer than
    `capacity` distinct blocks were requested since; its position in the
    move-to-front stack is that number."""
    held = r in mirror.lru_cache(requests, capacity)
    assert held == (r in requests and len(set(mirror.since(r, requests))) < capacity)
    if r in requests:
        assert mirror.mtf_stack(requests).index(r) == len(set(mirror.since(r, requests)))


def test_since_examples():
    assert mirror.since(1, [1, 2, 1, 3, 2]) == [3, 2]
    assert mirror.since(2, [1, 2, 1, 3, 2]) == []
    assert mirror.since(4, [1, 2]) == [1, 2]


# --- min_run_valid (lean/PrefixPool/Belady.lean) -------------------------------------------

from pyverify.lean.bridge import flat_min_misses  # noqa: E402


@given(st.lists(st.integers(0, 6), max_size=30), st.integers(0, 4))
def test_min_run_valid(blocks, capacity):
    """The statement of min_run_valid, and Lean's MIN counting what the bridge's MIN counts."""
    run = mirror.min_run(blocks, capacity)
    assert mirror.flat_valid(run, capacity)
    assert [b for b, _ in run] == blocks
    assert demand_misses(run) == flat_min_misses(blocks, capacity)


def random_flat_run(data, blocks, capacity):
    """A valid flat demand-cache run with random keeps and evictions (any policy, bypass allowed)."""
    held: set[int] = set()
    run = []
    for block in blocks:
        run.append((block, sorted(held)))
        pool = sorted(held | {block})
        keep = data.draw(st.lists(st.sampled_from(pool), unique=True, max_size=capacity))
        held = set(keep)
    return run


@given(st.lists(st.integers(0, 6), max_size=25), st.integers(0, 4), st.data())
def test_min_misses_le(blocks, capacity, data):
    """The statement of min_misses_le (Belady's theorem) on random valid flat runs."""
    run = random_flat_run(data, blocks, capacity)
    assert mirror.flat_valid(run, capacity)
    assert flat_min_misses(blocks, capacity) <= demand_misses(run)


# --- fleet_misses_ge_per_host_min, per_host_min_is_fleet_run (lean/PrefixPool/PerHostMin.lean) ---

from pyverify.sim import belady_min  # noqa: E402
from pyverify.trusted import recount  # noqa: E402

from .strategies import routed_instances  # noqa: E402


def chains_of(host, chains, routing):
    """Lean's `chains_of`: the chains routed to ``host``, in request order."""
    return [list(chain) for chain, h in zip(chains, routing) if h == host]


def lean_per_host_min(chains, routing, capacity, fleet):
    """Lean's `per_host_min`: over hosts 0..fleet-1, Lean's MIN (the mirror's
    `min_run`) on the host's flattened chains, summed."""
    return sum(demand_misses(mirror.min_run([b for c in chains_of(h, chains, routing) for b in c], capacity))
               for h in range(fleet))


def min_prefix_run(chains, capacity):
    """Lean's `min_prefix_run`: MIN's flat run on the flattened chains, cut into the requests."""
    flat = mirror.min_run([b for chain in chains for b in chain], capacity)
    run, at = [], 0
    for chain in chains:
        run.append(flat[at:at + len(chain)])
        at += len(chain)
    return run


def test_per_host_min_examples():
    """The numbers lean/PrefixPool/Examples.lean computes on `routed_tree`."""
    tree, routing = [[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]
    assert chains_of(0, tree, routing) == [[1, 2], [1, 2, 4]] and chains_of(2, tree, routing) == []
    assert lean_per_host_min(tree, routing, 2, 2) == lean_per_host_min(tree, routing, 2, 3) == 5
    assert lean_per_host_min(tree, routing, 1, 2) == 6
    assert flat_min_misses([b for c in tree for b in c], 2) == 4 and flat_min_misses([b for c in tree for b in c], 1) == 5
    # what pyverify computes for per-host capacitated certificates: the same sum
    assert recount.min_misses(tree, routing, 2) == belady_min.min_misses(tree, routing, 2) == 5
    assert recount.min_misses(tree, routing, 1) == belady_min.min_misses(tree, routing, 1) == 6


@given(routed_instances(), st.integers(1, 4), st.integers(0, 2), st.data())
def test_per_host_min_is_the_sum_of_pooled_min(instance, capacity, extra, data):
    """Per-host MIN as pyverify computes it for per-host capacitated
    certificates (the trusted checker's `recount.min_misses`, the certifier's
    `belady_min.min_misses`, both with the routing as caches) is Lean's
    `per_host_min`: the sum over hosts of pooled MIN on each host's chains
    (hosts with no requests add 0). On these prefix-closed instances each
    host's MIN run, cut into its requests, is a valid prefix run reading
    exactly its chains with MIN's misses (`per_host_min_is_fleet_run`), and a
    random valid fleet run misses no fewer (`fleet_misses_ge_per_host_min`)."""
    chains, hosts, routing = instance
    assert first_prefix_violation(chains) is None
    fleet = hosts + extra
    expected = lean_per_host_min(chains, routing, capacity, fleet)
    assert recount.min_misses(chains, routing, capacity) == expected
    assert belady_min.min_misses(chains, routing, capacity) == expected
    pooled_sum = sum(recount.min_misses(chains_of(h, chains, routing), [0] * routing.count(h), capacity)
                     for h in range(fleet))
    assert pooled_sum == expected
    achieved = 0
    for h in range(fleet):
        own = chains_of(h, chains, routing)
        run = min_prefix_run(own, capacity)
        assert mirror.prefix_valid(run, capacity)
        assert [[b for b, _ in steps] for steps in run] == own
        achieved += mirror.prefix_misses(run)
    assert achieved == expected
    fleet_run = {h: random_prefix_run(data, chains_of(h, chains, routing), capacity) for h in range(fleet)}
    assert all(mirror.prefix_valid(run, capacity) for run in fleet_run.values())
    assert sum(mirror.prefix_misses(run) for run in fleet_run.values()) >= expected


# --- pooled_min_le_per_host_min (lean/PrefixPool/PooledMemory.lean) ---------------------

from pyverify.lean.bridge import flat_min_misses as bridge_flat_min_misses  # noqa: E402
from pyverify.sim.opt_curve import memory_limit_summary, optimal_curve  # noqa: E402


def host_blocks(chains, routing):
    """Lean's `host_blocks`: the (host, block) pairs, request by request, each chain in order."""
    return [(h, b) for chain, h in zip(chains, routing) for b in chain]


def test_pooled_memory_examples():
    """The numbers lean/PrefixPool/Examples.lean computes for pooled_min_le_per_host_min."""
    assert [mirror.times(n, m) for n, m in [(2, 2), (2, 1), (0, 3), (3, 0)]] == [4, 2, 0, 0]
    tree, routing = [[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]
    flat = [b for c in tree for b in c]
    assert recount.flat_min_misses(flat, mirror.times(2, 2)) == recount.flat_min_misses(flat, mirror.times(2, 1)) == 4
    assert recount.min_misses(tree, routing, 2) == 5 and recount.min_misses(tree, routing, 1) == 6
    own, own_routing = [[1], [2], [1], [2]], [0, 1, 0, 1]
    assert lean_per_host_min(own, own_routing, 1, 2) == 2 == bridge_flat_min_misses([1, 2, 1, 2], mirror.times(2, 1))
    # the hypothesis at work: a request routed to host 1 on a fleet of one host
    assert lean_per_host_min([[1]], [1], 1, 1) == 0 and bridge_flat_min_misses([1], mirror.times(1, 1)) == 1


def check_pooled_memory(chains, routing, capacity, fleet):
    """The statement of pooled_min_le_per_host_min on one input, with pyverify's own
    MIN counts, and the merged run of its proof: a valid flat run of fleet x capacity
    blocks on the flattened chains, missing no more than the per-host sum."""
    flat = [b for c in chains for b in c]
    pooled = recount.flat_min_misses(flat, mirror.times(fleet, capacity))
    per_host = recount.min_misses(chains, routing, capacity)
    assert per_host == lean_per_host_min(chains, routing, capacity, fleet)
    assert pooled == bridge_flat_min_misses(flat, fleet * capacity)
    assert pooled == demand_misses(mirror.min_run(flat, mirror.times(fleet, capacity)))
    assert pooled <= per_host
    merged = mirror.merged_min_run(host_blocks(chains, routing), capacity, fleet)
    assert [b for b, _ in merged] == flat
    assert mirror.flat_valid(merged, mirror.times(fleet, capacity))
    assert pooled <= demand_misses(merged) <= per_host
    return pooled, per_host


@given(routed_instances(), st.integers(1, 4), st.integers(0, 2))
def test_pooled_min_le_per_host_min(instance, capacity, extra):
    """On prefix-closed routed traces: MIN on one pool of fleet x capacity blocks,
    as pyverify's trusted recount, the bridge, the certifier's belady_min and the
    optimal miss-ratio curve count it, misses no more than the sum of per-host MIN
    with capacity blocks each; the audit's memory-limit summary, which compares
    exactly these (its total_blocks is Lean's `Natural.times`), never shows the
    pool behind."""
    chains, hosts, routing = instance
    fleet = hosts + extra
    pooled, per_host = check_pooled_memory(chains, routing, capacity, fleet)
    assert belady_min.min_misses(chains, None, fleet * capacity) == pooled
    assert belady_min.min_misses(chains, routing, capacity) == per_host
    assert optimal_curve(chains).misses(fleet * capacity) == pooled
    assert optimal_curve(chains, routing, fleet).misses(capacity) == per_host
    summary = memory_limit_summary(chains, routing, fleet, node_capacity_blocks=capacity,
                                   capacities=[fleet * c for c in range(1, 4)])
    for row in summary["pooled_vs_per_host"]:
        assert row["total_blocks"] == mirror.times(fleet, row["per_host_blocks"])
        assert row["pooled_opt"] >= row["per_host_opt"]
    assert summary["local_vs_global"]["global_opt"] >= summary["local_vs_global"]["local_opt"]


@given(block_chains, st.integers(0, 4), st.integers(0, 2), st.data())
def test_pooled_min_le_per_host_min_without_prefix_closure(chains, capacity, extra, data):
    """The theorem needs no prefix closure (only every request routed below the
    fleet): on any chains, repeats within a chain included, and capacity 0."""
    routing = data.draw(st.lists(st.integers(0, 3), min_size=len(chains), max_size=len(chains)))
    fleet = max(routing, default=-1) + 1 + extra
    check_pooled_memory(chains, routing, capacity, fleet)


@given(st.integers(0, 12), st.integers(0, 12))
def test_times_is_multiplication(n, m):
    """Lean's `Natural.times` mirror is Python's product (both orders)."""
    assert mirror.times(n, m) == n * m == mirror.times(m, n)


# --- forced_min_misses_le, forced_min_run_valid (lean/PrefixPool/BeladyForced.lean) ---------

from pyverify.sim.simulate import EVICTIONS  # noqa: E402


def forced_optimum(blocks, capacity):
    """The fewest misses of a cache of ``capacity`` blocks that must admit every
    block it fetches (on a miss: insert, evicting one block when full), by
    exhaustive search over every eviction choice; independent of the mirror."""
    states = {frozenset(): 0}
    for block in blocks:
        after: dict[frozenset, int] = {}
        for held, misses in states.items():
            if block in held:
                choices, cost = [held], 0
            elif len(held) < capacity:
                choices, cost = [held | {block}], 1
            else:
                choices, cost = [(held - {victim}) | {block} for victim in held], 1
            for choice in choices:
                if after.get(choice, misses + cost + 1) > misses + cost:
                    after[choice] = misses + cost
        states = after
    return min(states.values())


def random_forced_run(data, blocks, capacity):
    """A forced-admission run with random evictions: after each request its
    block is held; any other blocks may be dropped at any time."""
    held: set[int] = set()
    run = []
    for block in blocks:
        run.append((block, sorted(held)))
        others = sorted(held - {block})
        keep = data.draw(st.lists(st.sampled_from(others), unique=True, max_size=capacity - 1)) if others else []
        held = set(keep) | {block}
    return run


def test_forced_examples():
    """The numbers lean/PrefixPool/Examples.lean computes on [3, 2, 3] with one block."""
    assert flat_min_misses([3, 2, 3], 1) == recount.flat_min_misses([3, 2, 3], 1) == 2
    assert mirror.forced_min_misses([3, 2, 3], 1) == 3 == forced_optimum([3, 2, 3], 1)
    lru = [(3, []), (2, [3]), (3, [2])]
    assert mirror.forced_min_run([3, 2, 3], 1) == lru and mirror.forced_valid(lru, 1)
    assert not mirror.forced_valid(mirror.min_run([3, 2, 3], 1), 1)  # bypass MIN does not admit 2


@given(st.lists(st.integers(0, 5), max_size=9), st.integers(1, 3))
def test_forced_min_is_the_forced_optimum(blocks, capacity):
    """forced_min_run_valid and forced_min_misses_le together: forced MIN's run is
    a forced-admission run on the blocks, and its misses are the fewest of every
    forced-admission cache (exhaustive search); bypass MIN (pyverify's recount)
    never misses more."""
    run = mirror.forced_min_run(blocks, capacity)
    assert mirror.forced_valid(run, capacity) and [b for b, _ in run] == blocks
    misses = mirror.forced_min_misses(blocks, capacity)
    assert misses == demand_misses(run) == forced_optimum(blocks, capacity)
    assert recount.flat_min_misses(blocks, capacity) <= misses


@given(st.lists(st.integers(0, 7), max_size=30), st.integers(1, 4), st.data())
def test_forced_min_misses_le(blocks, capacity, data):
    """The statement of forced_min_misses_le on random forced-admission runs, and
    on the simulator's own caches (every eviction policy it has admits every
    block it fetches: its run on one-block chains is forced-valid)."""
    run = random_forced_run(data, blocks, capacity)
    assert mirror.forced_valid(run, capacity)
    misses = mirror.forced_min_misses(blocks, capacity)
    assert misses <= demand_misses(run)
    lru = mirror.flatten(mirror.lru_prefix_run([[b] for b in blocks], capacity))
    assert mirror.forced_valid(lru, capacity) and misses <= demand_misses(lru)
    for eviction in EVICTIONS:
        assert misses <= simulate([[b] for b in blocks], None, POOLED, capacity=capacity, eviction=eviction).misses
