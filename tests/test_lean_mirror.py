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
        held = data.draw(
            st.lists(st.sampled_from(earlier), unique=True) if earlier else st.just([])
        )
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
    assert mirror.flat_valid([(1, []), (1, [1])], 1) and not mirror.flat_valid(
        [(1, []), (2, [2])], 1
    )


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
                held -= (
                    set(data.draw(st.lists(st.sampled_from(sorted(held)), unique=True)))
                    if held
                    else set()
                )
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
    assert set(mirror.lru_cache(requests, capacity)) <= set(
        mirror.lru_cache(requests, capacity + 1)
    )
    assert mirror.lru_hits(requests, capacity) <= mirror.lru_hits(requests, capacity + 1)
    if capacity >= 1:
        assert (
            mirror.lru_hits(requests, capacity)
            == simulate([[r] for r in requests], None, POOLED, capacity=capacity).hits
        )


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

from pyverify.optimal import belady  # noqa: E402
from pyverify.trusted import recount  # noqa: E402

from .strategies import routed_instances  # noqa: E402


def chains_of(host, chains, routing):
    """Lean's `chains_of`: the chains routed to ``host``, in request order."""
    return [list(chain) for chain, h in zip(chains, routing) if h == host]


def lean_per_host_min(chains, routing, capacity, fleet):
    """Lean's `per_host_min`: over hosts 0..fleet-1, Lean's MIN (the mirror's
    `min_run`) on the host's flattened chains, summed."""
    return sum(
        demand_misses(
            mirror.min_run([b for c in chains_of(h, chains, routing) for b in c], capacity)
        )
        for h in range(fleet)
    )


def min_prefix_run(chains, capacity):
    """Lean's `min_prefix_run`: MIN's flat run on the flattened chains, cut into the requests."""
    flat = mirror.min_run([b for chain in chains for b in chain], capacity)
    run, at = [], 0
    for chain in chains:
        run.append(flat[at : at + len(chain)])
        at += len(chain)
    return run


def test_per_host_min_examples():
    """The numbers lean/PrefixPool/Examples.lean computes on `routed_tree`."""
    tree, routing = [[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]
    assert chains_of(0, tree, routing) == [[1, 2], [1, 2, 4]] and chains_of(2, tree, routing) == []
    assert lean_per_host_min(tree, routing, 2, 2) == lean_per_host_min(tree, routing, 2, 3) == 5
    assert lean_per_host_min(tree, routing, 1, 2) == 6
    assert (
        flat_min_misses([b for c in tree for b in c], 2) == 4
        and flat_min_misses([b for c in tree for b in c], 1) == 5
    )
    # what pyverify computes for per-host capacitated certificates: the same sum
    assert recount.min_misses(tree, routing, 2) == belady.min_misses(tree, routing, 2) == 5
    assert recount.min_misses(tree, routing, 1) == belady.min_misses(tree, routing, 1) == 6


@given(routed_instances(), st.integers(1, 4), st.integers(0, 2), st.data())
def test_per_host_min_is_the_sum_of_pooled_min(instance, capacity, extra, data):
    """Per-host MIN as pyverify computes it for per-host capacitated
    certificates (the trusted checker's `recount.min_misses`, the certifier's
    `belady.min_misses`, both with the routing as caches) is Lean's
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
    assert belady.min_misses(chains, routing, capacity) == expected
    pooled_sum = sum(
        recount.min_misses(chains_of(h, chains, routing), [0] * routing.count(h), capacity)
        for h in range(fleet)
    )
    assert pooled_sum == expected
    achieved = 0
    for h in range(fleet):
        own = chains_of(h, chains, routing)
        run = min_prefix_run(own, capacity)
        assert mirror.prefix_valid(run, capacity)
        assert [[b for b, _ in steps] for steps in run] == own
        achieved += mirror.prefix_misses(run)
    assert achieved == expected
    fleet_run = {
        h: random_prefix_run(data, chains_of(h, chains, routing), capacity) for h in range(fleet)
    }
    assert all(mirror.prefix_valid(run, capacity) for run in fleet_run.values())
    assert sum(mirror.prefix_misses(run) for run in fleet_run.values()) >= expected


# --- per_host_min_lt_pooled_min, per_host_lru_lt_pooled_lru, fifo_anomaly ---------------
# (lean/PrefixPool/Counterexamples.lean)

from pyverify.sim.simulate import FIFO, PER_HOST  # noqa: E402


def test_counterexamples_lean_evaluates():
    """The numbers lean/PrefixPool/Counterexamples.lean proves by evaluation, from
    the mirrors and from pyverify's own code (certifier, trusted recount, simulator)."""
    # (a) per-host MIN, one block per host, beats pooled MIN with one block
    chains = [chain for _, chain in mirror.MIN_SPLIT_REQUESTS]
    routing = [host for host, _ in mirror.MIN_SPLIT_REQUESTS]
    assert lean_per_host_min(chains, routing, 1, 2) == 2
    assert recount.min_misses(chains, routing, 1) == belady.min_misses(chains, routing, 1) == 2
    flat = [b for chain in chains for b in chain]
    assert flat == [4, 2, 2, 4]
    assert demand_misses(mirror.min_run(flat, 1)) == flat_min_misses(flat, 1) == 3
    assert recount.min_misses(chains, [0] * len(chains), 1) == 3
    # (b) per-host LRU, one block per host, beats one pooled LRU of two blocks
    requests = mirror.LRU_SPLIT_REQUESTS
    blocks, hosts = [[b] for _, b in requests], [h for h, _ in requests]
    assert mirror.per_host_lru_misses(requests, 1, 2) == 3
    assert simulate(blocks, hosts, PER_HOST, capacity=1).misses == 3
    assert mirror.lru_misses([b for _, b in requests], 2) == 4
    assert simulate(blocks, None, POOLED, capacity=2).misses == 4
    # (c) Belady's anomaly: FIFO misses 9 times with 3 blocks, 10 with 4; LRU 10 and 8
    anomaly = mirror.ANOMALY_REQUESTS
    assert [mirror.fifo_misses(anomaly, c) for c in (3, 4)] == [9, 10]
    assert [
        simulate([[r] for r in anomaly], None, POOLED, capacity=c, eviction=FIFO).misses
        for c in (3, 4)
    ] == [9, 10]
    assert [mirror.lru_misses(anomaly, c) for c in (3, 4)] == [10, 8]


def fifo_misses_here(requests, capacity):
    """Flat FIFO written independently of the mirror: a deque of entries, oldest first."""
    from collections import deque

    entries, misses = deque(), 0
    for r in requests:
        if r in entries:
            continue
        misses += 1
        if len(entries) == capacity:
            entries.popleft()
        entries.append(r)
    return misses


@given(flat_requests, st.integers(1, 6))
def test_fifo_mirror_is_the_simulators_fifo(requests, capacity):
    """Lean's `fifo_misses` (its mirror) is pyverify's `--eviction fifo` on single-block
    chains (the pooled simulator, and the compiled kernel it may use), and a plain deque FIFO."""
    misses = mirror.fifo_misses(requests, capacity)
    assert misses == fifo_misses_here(requests, capacity)
    assert (
        misses
        == simulate([[r] for r in requests], None, POOLED, capacity=capacity, eviction=FIFO).misses
    )


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6)), max_size=30),
    st.integers(1, 4),
    st.integers(0, 2),
)
def test_per_host_lru_mirror_is_the_simulators_per_host_lru(routed, capacity, extra):
    """Lean's `per_host_lru_misses` (its mirror) is pyverify's per-host LRU run with
    `capacity` blocks per host on single-block chains, on any fleet that covers
    every host (extra hosts without requests add nothing); and its `lru_misses`
    is the pooled LRU run."""
    blocks, hosts = [[b] for _, b in routed], [h for h, _ in routed]
    fleet = 4 + extra
    misses = mirror.per_host_lru_misses(routed, capacity, fleet)
    assert misses == simulate(blocks, hosts, PER_HOST, capacity=capacity).misses
    assert (
        mirror.lru_misses([b for _, b in routed], capacity)
        == simulate(blocks, None, POOLED, capacity=capacity).misses
    )


# --- per_host_blocks_eq_pooled (lean/PrefixPool/RoutedByRoot.lean) ----------------------

from pyverify.inputs.model import Instance  # noqa: E402
from pyverify.sim.routing import prefix_affinity_routing, prefix_hash, stable_hash  # noqa: E402


def test_routed_by_root_examples():
    """The numbers lean/PrefixPool/Examples.lean computes: `routed_forest` is routed
    by its first block and misses 5 blocks per host and pooled; `routed_tree` is not."""
    forest = [(0, [1, 2]), (1, [3, 0]), (0, [1, 4]), (1, [3])]
    chains, routing = [c for _, c in forest], [h for h, _ in forest]
    route = lambda b: 0 if b == 1 else 1  # noqa: E731  (Lean: forest_route)
    assert first_prefix_violation(chains) is None
    assert mirror.routed_by_root(forest, route)
    assert per_host_misses(chains, routing) == pooled_misses(chains) == 5
    tree = [(0, [1, 2]), (1, [1, 3]), (0, [1, 2, 4])]
    assert not mirror.routed_by_root(tree, route)
    assert not any(mirror.routed_by_root(tree, lambda b, h=h: h) for h in range(2))
    assert (
        per_host_misses([c for _, c in tree], [h for h, _ in tree])
        == 5
        > pooled_misses([c for _, c in tree])
        == 4
    )
    assert mirror.routed_by_root([(7, [])], route)  # an empty chain may be anywhere
    # the default prefix-affinity load cap (slack 1.25) is not routing by root:
    # one tree, two hosts, and the third request finds host 0 full
    crowded = [[1], [1], [1], [1]]
    routing = prefix_affinity_routing(crowded, 2).routing
    assert routing[:3] == (0, 0, 1)
    assert not any(
        mirror.routed_by_root(list(zip(routing, crowded)), lambda b, h=h: h) for h in range(2)
    )
    assert per_host_misses(crowded, routing) == 2 > pooled_misses(crowded) == 1


@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.integers(1, 6))
def test_prefix_hash_is_routed_by_root(chains, fleet):
    """pyverify's `prefix-hash` routing satisfies Lean's `routed_by_root` (with
    `route = stable_hash(str(b)) % fleet`), and on these prefix-closed traces its
    per-host uncapacitated misses equal the pooled ones (`per_host_blocks_eq_pooled`)."""
    instance = Instance(name="t", fleet_size=fleet, chains=tuple(tuple(c) for c in chains))
    routing = prefix_hash(instance, fleet)
    assert mirror.routed_by_root(list(zip(routing, chains)), lambda b: stable_hash(str(b)) % fleet)
    assert first_prefix_violation(chains) is None
    assert per_host_misses(chains, routing) == pooled_misses(chains)


@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.integers(1, 6))
def test_unbounded_prefix_affinity_is_routed_by_root(chains, fleet):
    """pyverify's uncapacitated `prefix-affinity` router with no load cap (slack =
    fleet size) sends a tree's first request to the least-loaded host and every later
    one where its first block is held: routed by root (`route` = where each first
    block went first), so per-host misses equal the pooled ones."""
    routing = prefix_affinity_routing(chains, fleet, slack=fleet).routing
    first_host = {}
    for host, chain in zip(routing, chains):
        first_host.setdefault(chain[0], host)
    assert mirror.routed_by_root(list(zip(routing, chains)), first_host.__getitem__)
    assert per_host_misses(chains, routing) == pooled_misses(chains)


@given(prefix_closed_chains(max_nodes=14, max_requests=30), st.data())
def test_routing_by_root_on_random_routes(chains, data):
    """Any routing by root (a random host per first block) gives per-host misses
    equal to the pooled ones; a routing that is not by root may miss more
    (`per_host_blocks_ge_pooled`), never less."""
    roots = sorted({chain[0] for chain in chains})
    hosts = data.draw(st.lists(st.integers(0, 3), min_size=len(roots), max_size=len(roots)))
    route = dict(zip(roots, hosts))
    routing = [route[chain[0]] for chain in chains]
    assert mirror.routed_by_root(list(zip(routing, chains)), route.__getitem__)
    assert per_host_misses(chains, routing) == pooled_misses(chains)
    other = data.draw(st.lists(st.integers(0, 3), min_size=len(chains), max_size=len(chains)))
    if per_host_misses(chains, other) != pooled_misses(chains):
        assert per_host_misses(chains, other) > pooled_misses(chains)
        assert not mirror.routed_by_root(list(zip(other, chains)), route.__getitem__)


# --- min_misses_mono (lean/PrefixPool/MinMonotone.lean) -------------------------------------

import numpy as np  # noqa: E402

from pyverify.sim.mrc import curve_from_distances  # noqa: E402
from pyverify.optimal.curve import opt_distances, opt_distances_numpy, optimal_curve  # noqa: E402


def test_min_misses_mirror_examples():
    """Lean's `min_misses` (the mirror) on the inputs of lean/PrefixPool/Examples.lean."""
    tree = [b for c in [[1, 2], [1, 3], [1, 2, 4]] for b in c]
    assert [mirror.min_misses(tree, c) for c in range(5)] == [7, 5, 4, 4, 4]
    assert mirror.min_misses([], 0) == 0


@given(st.lists(st.integers(0, 6), max_size=30), st.integers(0, 6))
def test_min_misses_mono(blocks, capacity):
    """The statement of min_misses_mono on Lean's MIN (the mirror), and pyverify's
    own optimal counts agreeing with it at both capacities: the bridge's and the
    trusted checker's flat MIN, and the one-pass optimal curve (both kernels;
    the curve starts at one block)."""
    lean = [mirror.min_misses(blocks, c) for c in (capacity, capacity + 1)]
    assert lean[1] <= lean[0]
    for c, expected in zip((capacity, capacity + 1), lean):
        assert flat_min_misses(blocks, c) == expected
        assert recount.flat_min_misses(blocks, c) == expected
    ids = np.asarray(blocks, dtype=np.int64)
    for distances in (opt_distances(ids), opt_distances_numpy(ids)):
        curve = curve_from_distances(distances)
        for c, expected in zip((capacity, capacity + 1), lean):
            if c >= 1:
                assert curve.misses(c) == expected


@given(prefix_closed_chains(max_nodes=10, max_requests=20))
def test_optimal_curve_never_rises(chains):
    """pyverify's optimal miss curve of a prefix-closed trace (`optimal_curve`, what
    `pyverify mrc` and the memory-limit report print for MIN) is Lean's
    `min_misses` on the flattened chains at every capacity from 1 to one past
    the number of distinct blocks, so it never rises (min_misses_mono)."""
    flat = [b for chain in chains for b in chain]
    top = len(set(flat)) + 1
    curve = optimal_curve(chains)
    lean = [mirror.min_misses(flat, c) for c in range(1, top + 1)]
    assert [int(curve.misses(c)) for c in range(1, top + 1)] == lean
    assert all(later <= earlier for earlier, later in zip(lean, lean[1:]))
    assert lean[-1] == len(set(flat))


# --- lru_misses_eq_far (lean/PrefixPool/LruPrefix.lean) -------------------------------------

from pyverify.sim import kernels  # noqa: E402
from pyverify.cache.arrays import dense_ids  # noqa: E402
from pyverify.sim.mrc import COLD, lru_curve_of_references, stack_distances, stack_distances_fenwick  # noqa: E402


def test_lru_misses_examples():
    """LRU of 2 blocks on 1, 2, 1, 3, 2: three cold misses, and the last 2 is far
    (1 and 3 were requested since its previous request)."""
    assert mirror.lru_misses([1, 2, 1, 3, 2], 2) == 4
    assert mirror.far_references([1, 2, 1, 3, 2], 2) == 1
    assert mirror.far_references([1, 2, 1, 3, 2], 3) == 0
    assert mirror.lru_misses([1, 1], 0) == 2 and mirror.far_references([1, 1], 0) == 1


@given(flat_requests, st.integers(0, 6))
def test_lru_misses_eq_far(requests, capacity):
    """The statement of lru_misses_eq_far on the mirrors, and pyverify's own LRU
    counts agreeing with them: the trusted checker's `lru` recount, and the
    `pyverify mrc` curve (cold references plus the distances >= C, from each
    way of computing the distances) at every capacity from one block."""
    misses = mirror.lru_misses(requests, capacity)
    far = mirror.far_references(requests, capacity)
    assert misses == len(set(requests)) + far
    assert misses == len(requests) - mirror.lru_hits(requests, capacity)
    assert recount.lru_misses([requests], [0], capacity) == misses
    if capacity < 1:
        return  # pyverify's caches have at least one block
    ids = np.asarray(requests, dtype=np.int64)
    curve = lru_curve_of_references(ids)
    assert curve.cold == len(set(requests)) and curve.misses(capacity) == misses
    for distances in (list(stack_distances(ids)), stack_distances_fenwick(requests)):
        assert sum(1 for d in distances if d != COLD and d >= capacity) == far
    if kernels.available() and requests:
        from pyverify.sim.kernels.stack_distance import lru_histogram

        dense, universe = dense_ids(ids)
        histogram, cold = lru_histogram(dense, universe)
        assert cold == len(set(requests)) and int(histogram[capacity:].sum()) == far


# --- prefix_lru_eq_flat (lean/PrefixPool/LruPrefix.lean) ------------------------------------

from pyverify.sim.mrc import lru_curve  # noqa: E402


def test_prefix_lru_examples():
    """The numbers lean/PrefixPool/Examples.lean computes, and the hypothesis at
    work: without prefix closure longest-prefix LRU and flat LRU differ."""
    tree = [[1, 2], [1, 3], [1, 2, 4]]
    assert mirror.prefix_lru_misses(tree, 2) == mirror.lru_misses([1, 2, 1, 3, 1, 2, 4], 2) == 5
    crossed = [[1, 2], [3, 2]]
    assert first_prefix_violation(crossed) is not None
    assert (
        mirror.prefix_lru_misses(crossed, 2)
        == simulate(crossed, None, POOLED, capacity=2).misses
        == 4
    )
    assert mirror.lru_misses([1, 2, 3, 2], 2) == recount.lru_misses(crossed, [0, 0], 2) == 3


@given(block_chains, st.integers(1, 5))
def test_prefix_lru_mirror_is_the_simulator(chains, capacity):
    """Lean's `prefix_lru_misses` (the mirror) counts what pyverify's simulator
    counts with chain-order LRU, on any chains (prefix-closed or not), in
    Python and in the compiled replay; it is never below flat LRU's misses."""
    misses = mirror.prefix_lru_misses(chains, capacity)
    assert misses == simulate(chains, None, POOLED, capacity=capacity).misses
    if kernels.available():
        from pyverify.cache.lru_kernel import capacitated_hits

        references = sum(len(chain) for chain in chains)
        assert (
            references - sum(capacitated_hits(chains, [0] * len(chains), capacity, lru=True))
            == misses
        )
    assert misses >= mirror.lru_misses([b for chain in chains for b in chain], capacity)


@given(
    prefix_closed_chains(max_nodes=12, max_requests=25),
    st.integers(0, 6),
    st.integers(1, 4),
    st.data(),
)
def test_prefix_lru_eq_flat(chains, capacity, fleet, data):
    """The statement of prefix_lru_eq_flat on the mirrors, and what it licenses:
    on prefix-closed chains the simulator's LRU misses are the trusted
    checker's flat `lru` recount and `pyverify mrc`'s curve, pooled and, host
    by host, per host under a static routing."""
    assert first_prefix_violation(chains) is None
    flat = [b for chain in chains for b in chain]
    misses = mirror.prefix_lru_misses(chains, capacity)
    assert misses == mirror.lru_misses(flat, capacity)
    assert recount.lru_misses(chains, [0] * len(chains), capacity) == misses
    if capacity < 1:
        return  # pyverify's caches have at least one block
    assert simulate(chains, None, POOLED, capacity=capacity).misses == misses
    assert lru_curve(chains).misses(capacity) == misses
    routing = data.draw(
        st.lists(st.integers(0, fleet - 1), min_size=len(chains), max_size=len(chains))
    )
    # per_host_prefix_lru_eq_flat (lean/PrefixPool/LruPerHost.lean)
    per_host = mirror.per_host_prefix_lru(chains, routing, capacity, fleet)
    assert per_host == sum(
        mirror.prefix_lru_misses(chains_of(h, chains, routing), capacity) for h in range(fleet)
    )
    assert per_host == mirror.per_host_lru(chains, routing, capacity, fleet)
    assert simulate(chains, routing, PER_HOST, capacity=capacity).misses == per_host
    assert recount.lru_misses(chains, routing, capacity) == per_host
    assert lru_curve(chains, routing, fleet).misses(capacity) == per_host


@given(block_chains, st.integers(1, 4), st.integers(1, 3), st.data())
def test_per_host_lru_mirrors(chains, capacity, fleet, data):
    """On any chains (prefix-closed or not), routed to hosts below the fleet:
    Lean's `per_host_prefix_lru` (the mirror) is the simulator's per-host
    chain-order LRU, and Lean's `per_host_lru` is the trusted `lru` recount."""
    routing = data.draw(
        st.lists(st.integers(0, fleet - 1), min_size=len(chains), max_size=len(chains))
    )
    assert (
        mirror.per_host_prefix_lru(chains, routing, capacity, fleet)
        == simulate(chains, routing, PER_HOST, capacity=capacity).misses
    )
    assert mirror.per_host_lru(chains, routing, capacity, fleet) == recount.lru_misses(
        chains, routing, capacity
    )
    assert mirror.per_host_prefix_lru(
        chains, routing, capacity, fleet + 1
    ) == mirror.per_host_prefix_lru(
        chains, routing, capacity, fleet
    )  # a host with no requests adds nothing


@given(block_chains, st.integers(1, 4), st.integers(1, 3), st.data())
def test_per_host_lru_eq_far(chains, capacity, fleet, data):
    """The statement of per_host_lru_eq_far (lean/PrefixPool/LruCurve.lean) on the mirrors, on any
    chains routed to hosts below the fleet, and the per-host `pyverify mrc` curve computing its two
    terms: the cold references are the distinct (host, block) pairs, the rest the references at
    distance >= C within each host's own sequence."""
    routing = data.draw(
        st.lists(st.integers(0, fleet - 1), min_size=len(chains), max_size=len(chains))
    )
    host_blocks = [[b for c in chains_of(h, chains, routing) for b in c] for h in range(fleet)]
    far = sum(mirror.far_references(blocks, capacity) for blocks in host_blocks)
    cold = distinct_host_blocks(chains, routing)
    assert mirror.per_host_lru(chains, routing, capacity, fleet) == cold + far
    curve = lru_curve(chains, routing, fleet)
    assert curve.cold == cold and curve.misses(capacity) == cold + far


def test_per_host_lru_examples():
    """The numbers lean/PrefixPool/Examples.lean computes on `routed_tree`."""
    tree, routing = [[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]
    assert (
        mirror.per_host_prefix_lru(tree, routing, 2, 2)
        == mirror.per_host_lru(tree, routing, 2, 2)
        == 5
    )
    assert mirror.per_host_prefix_lru(tree, routing, 2, 3) == 5
    crossed = [[1, 2], [3, 2]]
    assert (
        mirror.per_host_prefix_lru(crossed, [0, 0], 2, 1) == 4
        and mirror.per_host_lru(crossed, [0, 0], 2, 1) == 3
    )


# --- pooled_min_le_per_host_min (lean/PrefixPool/PooledMemory.lean) ---------------------

from pyverify.lean.bridge import flat_min_misses as bridge_flat_min_misses  # noqa: E402
from pyverify.optimal.curve import memory_limit_summary  # noqa: E402


def host_blocks(chains, routing):
    """Lean's `host_blocks`: the (host, block) pairs, request by request, each chain in order."""
    return [(h, b) for chain, h in zip(chains, routing) for b in chain]


def test_pooled_memory_examples():
    """The numbers lean/PrefixPool/Examples.lean computes for pooled_min_le_per_host_min."""
    assert [mirror.times(n, m) for n, m in [(2, 2), (2, 1), (0, 3), (3, 0)]] == [4, 2, 0, 0]
    tree, routing = [[1, 2], [1, 3], [1, 2, 4]], [0, 1, 0]
    flat = [b for c in tree for b in c]
    assert (
        recount.flat_min_misses(flat, mirror.times(2, 2))
        == recount.flat_min_misses(flat, mirror.times(2, 1))
        == 4
    )
    assert recount.min_misses(tree, routing, 2) == 5 and recount.min_misses(tree, routing, 1) == 6
    own, own_routing = [[1], [2], [1], [2]], [0, 1, 0, 1]
    assert (
        lean_per_host_min(own, own_routing, 1, 2)
        == 2
        == bridge_flat_min_misses([1, 2, 1, 2], mirror.times(2, 1))
    )
    # the hypothesis at work: a request routed to host 1 on a fleet of one host
    assert (
        lean_per_host_min([[1]], [1], 1, 1) == 0
        and bridge_flat_min_misses([1], mirror.times(1, 1)) == 1
    )


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
    as pyverify's trusted recount, the bridge, the certifier's belady and the
    optimal miss-ratio curve count it, misses no more than the sum of per-host MIN
    with capacity blocks each; the audit's memory-limit summary, which compares
    exactly these (its total_blocks is Lean's `Natural.times`), never shows the
    pool behind."""
    chains, hosts, routing = instance
    fleet = hosts + extra
    pooled, per_host = check_pooled_memory(chains, routing, capacity, fleet)
    assert belady.min_misses(chains, None, fleet * capacity) == pooled
    assert belady.min_misses(chains, routing, capacity) == per_host
    assert optimal_curve(chains).misses(fleet * capacity) == pooled
    assert optimal_curve(chains, routing, fleet).misses(capacity) == per_host
    summary = memory_limit_summary(
        chains,
        routing,
        fleet,
        node_capacity_blocks=capacity,
        capacities=[fleet * c for c in range(1, 4)],
    )
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
        keep = (
            data.draw(st.lists(st.sampled_from(others), unique=True, max_size=capacity - 1))
            if others
            else []
        )
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
        assert (
            misses
            <= simulate(
                [[b] for b in blocks], None, POOLED, capacity=capacity, eviction=eviction
            ).misses
        )
