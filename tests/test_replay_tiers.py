"""``pyverify replay``: the host-DRAM tier, tier monotonicity, and the bounds against independent searches."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.replay_oracle import replay_chains, trace_of
from pyverify.fleet.report import bounds, forced_routed_hits
from pyverify.fleet.routers import Router
from pyverify.fleet.service import STREAMS, ServiceModel
from tests.helpers import run_cli
from tests.strategies import prefix_closed_chains
from tests.test_forced_min import exhaustive_forced, exhaustive_forced_fleet
from tests.test_min import exhaustive_prefix_misses
from tests.test_replay import timed_traces, write_trace

ROUTERS = ("round-robin", "random", "least-loaded", "prefix-affinity", "kv-aware")
BLIND = ("round-robin", "random")  # routers that never look at a cache
EVICTIONS = ("lru", "fifo", "leaf-lru")
SERVICE = ServiceModel(prefill_tokens_per_s=1024, decode_tokens_per_s=10, max_running=2)
tier = st.one_of(st.none(), st.integers(1, 6))  # unlimited, or blocks


def distinct(chains) -> int:
    return len({block for chain in chains for block in chain})


# --- bounds, each against a search that shares no code with it ------------------------------


@settings(max_examples=60, deadline=None)
@given(
    chains=prefix_closed_chains(max_nodes=6, max_requests=6),
    fleet=st.integers(1, 3),
    capacity=st.integers(1, 2),
)
def test_bounds_are_the_exhaustive_optima_of_one_pool(chains, fleet, capacity):
    bound = bounds(trace_of(chains), fleet, capacity)
    references = sum(map(len, chains))
    assert bound.floor_hits == references - distinct(chains)
    assert bound.min_pooled_hits == references - exhaustive_prefix_misses(
        chains, [0] * len(chains), fleet * capacity
    )
    assert bound.forced_hits == references - exhaustive_forced(chains, fleet * capacity)
    assert bound.floor_hits >= bound.min_pooled_hits >= bound.forced_hits


@settings(max_examples=60, deadline=None)
@given(
    chains=prefix_closed_chains(max_nodes=6, max_requests=6),
    fleet=st.integers(1, 3),
    capacity=st.integers(1, 3),
    router=st.sampled_from(ROUTERS),
)
def test_forced_on_the_runs_routing_is_the_exhaustive_optimum(chains, fleet, capacity, router):
    run = replay_chains(chains, Router(router, fleet), capacity, "lru", timed=False)
    expected = sum(map(len, chains)) - exhaustive_forced_fleet(chains, run.host_of, capacity)
    assert forced_routed_hits(trace_of(chains), run.host_of, capacity) == expected


def test_one_forced_pool_does_not_bound_separate_caches():
    # Host 0 keeps [0] while host 1 serves [1, 6]; one forced cache of 2 blocks must hold [1, 6] and drop [0].
    chains = [(0,), (1, 6), (0,)]
    run = replay_chains(chains, Router("round-robin", 2), 1, "lru", timed=False)
    assert run.gpu_hit_blocks == 1
    assert bounds(trace_of(chains), 2, 1).forced_hits == 0
    assert forced_routed_hits(trace_of(chains), run.host_of, 1) == 1


@settings(max_examples=150, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.integers(1, 5),
    eviction=st.sampled_from(("lru", "leaf-lru")),
    router=st.sampled_from(ROUTERS),
    host=st.one_of(st.just(False), tier),
    pool=st.one_of(st.just(False), tier),
    timed=st.booleans(),
)
def test_lru_and_leaf_lru_gpu_hits_never_pass_the_forced_optimum_of_their_routing(
    trace, fleet, capacity, eviction, router, host, pool, timed
):
    chains, arrivals, outputs = trace
    run = replay_chains(
        chains,
        Router(router, fleet),
        capacity,
        eviction,
        pool,
        SERVICE,
        arrivals,
        None,
        outputs,
        timed=timed,
        host_capacity=host,
    )
    assert run.gpu_hit_blocks <= forced_routed_hits(trace_of(chains), run.host_of, capacity)
    assert run.hit_blocks <= sum(map(len, chains)) - distinct(chains)


def test_the_cli_prints_the_bounds_and_the_distances(tmp_path, capsys):
    trace = write_trace(tmp_path, [(0, [1], 512, 0), (10, [2, 3], 1024, 0), (20, [1], 512, 0)])
    status, out, err = run_cli(
        capsys, "replay", str(trace), "--fleet", "2", "--capacity", "1", "--json"
    )
    assert status == 0, err
    data = json.loads(out)
    assert (
        data["bounds"]["floor_hits"],
        data["bounds"]["min_pooled_hits"],
        data["bounds"]["forced_hits"],
    ) == (1, 1, 0)
    run = data["runs"][0]  # round-robin: hosts 0, 1, 0; host 0 keeps [1]
    assert (
        run["hit_blocks"],
        run["below_floor_blocks"],
        run["below_min_pooled_blocks"],
        run["below_forced_blocks"],
    ) == (1, 0, 0, -1)
    assert (run["forced_routed_hits"], run["gpu_below_forced_routed_blocks"]) == (1, 0)
    status, out, err = run_cli(capsys, "replay", str(trace), "--fleet", "2", "--capacity", "1")
    assert "MIN 1 hits = 0.2500; forced-admission optimum 0 hits = 0.0000" in out


# --- the host-DRAM tier ----------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(BLIND),
    timed=st.booleans(),
)
def test_unlimited_host_dram_reaches_each_hosts_own_floor(
    trace, fleet, capacity, eviction, router, timed
):
    chains, arrivals, outputs = trace
    run = replay_chains(
        chains,
        Router(router, fleet),
        capacity,
        eviction,
        False,
        SERVICE,
        arrivals,
        None,
        outputs,
        timed=timed,
        host_capacity=None,
    )
    per_host = sum(
        distinct([chain for chain, host in zip(chains, run.host_of) if host == h])
        for h in range(fleet)
    )
    assert run.gpu_hit_blocks + run.host_hit_blocks == sum(map(len, chains)) - per_host
    assert run.pool_hit_blocks == 0


@settings(max_examples=100, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    router=st.sampled_from(ROUTERS),
    host=tier,
    timed=st.booleans(),
)
def test_an_unlimited_pool_below_host_dram_still_reaches_the_floor(
    trace, fleet, capacity, router, host, timed
):
    chains, arrivals, outputs = trace
    run = replay_chains(
        chains,
        Router(router, fleet),
        capacity,
        "lru",
        None,
        SERVICE,
        arrivals,
        None,
        outputs,
        timed=timed,
        host_capacity=host,
    )
    assert run.hit_blocks == sum(map(len, chains)) - distinct(chains)


def test_a_host_hit_pays_its_pcie_transfer(tmp_path, capsys):
    # One host, a GPU of 1 block: r0 [1, 2] leaves only 2 in the GPU; r1 [1, 2, 3] at 5 s misses the GPU and reads
    # [1, 2] from DRAM: 512 tokens to compute (0.5 s) + 2 x 512 x 1000 bytes / 2 GB/s (0.512 ms), no fixed latency.
    trace = write_trace(tmp_path, [(0, [1, 2], 1024, 0), (5000, [1, 2, 3], 1536, 0)])
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "1",
        "--capacity",
        "1",
        "--host-capacity",
        "8",
        "--prefill-tokens-per-s",
        "1024",
        "--kv-bytes-per-token",
        "1000",
        "--host-bandwidth-gb-s",
        "2",
        "--json",
    )
    assert status == 0, err
    run = json.loads(out)["runs"][0]
    assert run["hit_blocks_by_tier"] == {"gpu": 0, "host": 2, "pool": 0}
    assert run["ttft_s"]["mean"] == pytest.approx((1.0 + 0.500512) / 2)
    moved = run["moved"]
    assert (
        moved["host_to_gpu_blocks"],
        moved["host_to_gpu_tokens"],
        moved["gpu_to_host_blocks"],
    ) == (2, 1024, 3)
    assert moved["gpu_to_pool_blocks"] == 0


# --- adding a tier and the hits of the tiers above it ---------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    chains=prefix_closed_chains(),
    fleet=st.integers(1, 4),
    capacity=st.integers(1, 6),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(BLIND),
    host=tier,
    pool=tier,
)
def test_without_timing_a_lower_tier_never_changes_the_tiers_above(
    chains, fleet, capacity, eviction, router, host, pool
):
    gpu = replay_chains(chains, Router(router, fleet), capacity, eviction, timed=False)
    with_host = replay_chains(
        chains, Router(router, fleet), capacity, eviction, timed=False, host_capacity=host
    )
    with_pool = replay_chains(chains, Router(router, fleet), capacity, eviction, pool, timed=False)
    all_three = replay_chains(
        chains, Router(router, fleet), capacity, eviction, pool, timed=False, host_capacity=host
    )
    assert with_host.gpu_hits == with_pool.gpu_hits == all_three.gpu_hits == gpu.gpu_hits
    assert all_three.host_hits == with_host.host_hits
    assert gpu.hit_blocks <= with_host.hit_blocks <= all_three.hit_blocks
    assert (
        gpu.hit_blocks <= with_pool.hit_blocks
    )  # (with_pool against all_three: no order, see the next test)


def test_host_dram_above_a_pool_can_lower_the_total_without_timing():
    """Host DRAM serves reads the pool used to see, so the pool's LRU order differs and it can hit less:
    adding DRAM to GPU + pool lowered total hits 12 to 11 here (found by the property above)."""
    chains = [(0,), (0,), (0,), (0, 1), (0,), (0,), (0,), (0,), (0,), (0, 1, 2, 9), (0, 1)]
    with_pool = replay_chains(chains, Router("random", 3), 1, "lru", 3, timed=False)
    all_three = replay_chains(
        chains, Router("random", 3), 1, "lru", 3, timed=False, host_capacity=None
    )
    assert with_pool.gpu_hits == all_three.gpu_hits  # the GPUs are untouched ...
    assert (with_pool.hit_blocks, all_three.hit_blocks) == (
        12,
        11,
    )  # ... DRAM gains 2 hits, the pool below it loses 3
    assert (sum(with_pool.pool_hits), sum(all_three.host_hits), sum(all_three.pool_hits)) == (
        5,
        2,
        2,
    )


@settings(max_examples=150, deadline=None)
@given(
    chains=prefix_closed_chains(),
    fleet=st.integers(1, 4),
    capacity=st.integers(1, 6),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(ROUTERS),
    host=st.one_of(st.just(False), tier),
    pool=tier,
)
def test_without_timing_a_pool_never_changes_the_local_tiers_whatever_the_router(
    chains, fleet, capacity, eviction, router, host, pool
):
    # A router sees a host's own tiers, never the shared pool, so without a clock the pool cannot change routing.
    local = replay_chains(
        chains, Router(router, fleet), capacity, eviction, timed=False, host_capacity=host
    )
    pooled = replay_chains(
        chains, Router(router, fleet), capacity, eviction, pool, timed=False, host_capacity=host
    )
    assert (pooled.host_of, pooled.gpu_hits, pooled.host_hits) == (
        local.host_of,
        local.gpu_hits,
        local.host_hits,
    )


def test_host_dram_can_lower_gpu_hits_by_moving_a_cache_aware_router():
    """Found by a random search. The router sees GPU + DRAM: r1 [0] now goes to host 0 (DRAM holds 0),
    which fills host 0's share under the affinity cap, so r2 [0] must go to host 1 and misses; without DRAM,
    r1 went to host 1 and r2 hit it there (README: 'replay', tier monotonicity)."""
    chains = [(0, 1), (0,), (0,)]
    gpu = replay_chains(chains, Router("prefix-affinity", 2), 1, "lru", timed=False)
    with_host = replay_chains(
        chains, Router("prefix-affinity", 2), 1, "lru", timed=False, host_capacity=2
    )
    assert (gpu.host_of, gpu.gpu_hits) == ([0, 1, 1], [0, 0, 1])
    assert (with_host.host_of, with_host.gpu_hits, with_host.host_hits) == (
        [0, 0, 1],
        [0, 0, 0],
        [0, 1, 0],
    )
    assert (
        with_host.hit_blocks == gpu.hit_blocks
    )  # the tier below gave back what the GPU lost, here


# --- --compare --------------------------------------------------------------------------------


def test_compare_runs_every_tier_configuration_timed_and_not(tmp_path, capsys):
    trace = write_trace(
        tmp_path, [(0, [1, 2], 1024, 3), (100, [1, 2, 3], 1536, 3), (200, [4], 512, 1)]
    )
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "2",
        "--capacity",
        "2",
        "--host-capacity",
        "4",
        "--pool-capacity",
        "inf",
        "--router",
        "round-robin,kv-aware",
        "--compare",
        "--json",
    )
    assert status == 0, err
    runs = json.loads(out)["runs"]
    assert [(r["timed"], r["tiers"], r["router"]) for r in runs] == [
        (timed, tiers, router)
        for timed in (True, False)
        for tiers in ("gpu", "gpu+host", "gpu+pool", "gpu+host+pool")
        for router in ("round-robin", "kv-aware")
    ]
    for r in runs:
        assert ("ttft_s" in r) == r["timed"]
        assert (r["host_capacity"] is not None) == ("host" in r["tiers"]) and (
            r["pool_capacity"] is not None
        ) == ("pool" in r["tiers"])
    status, out, err = run_cli(capsys, "replay", str(trace), "--compare", "--no-timing")
    assert (
        status == 2
        and out == ""
        and len(err.strip().splitlines()) == 1
        and "drop --no-timing" in err
    )


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--host-capacity", "0"], "expected a positive integer"),
        (["--host-bandwidth-gb-s", "0"], "expected a positive number"),
    ],
)
def test_bad_tier_flags_are_one_line(tmp_path, capsys, flags, expected):
    status, out, err = run_cli(
        capsys, "replay", str(write_trace(tmp_path, [(0, [1], 512, 1)])), *flags
    )
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and expected in err


def test_with_timing_host_dram_can_lower_gpu_hits_even_under_round_robin():
    """Found by a random search (one host, FIFO, all arriving at 0). r2 [1] hits DRAM, so its prefill takes
    2.6 ms instead of 1 s; r3 [0, 2] then starts at 1.0026 s beside r1, not at 1.5 s after it, the FIFO GPU
    cache evicts differently, and r4 [1] misses the GPU. Total hits still rise (2 -> 3) here; with a
    load-aware router they can fall (tests/test_replay.py). README: 'replay', tier monotonicity."""
    service = ServiceModel(
        prefill_tokens_per_s=1024, decode_tokens_per_s=10, max_running=2, service=STREAMS
    )
    chains = [(1, 3), (0,), (1,), (0, 2), (1,)]
    args = (chains, Router("round-robin", 1), 2, "fifo", False, service, [0] * 5, None, [0] * 5)
    gpu, with_host = replay_chains(*args), replay_chains(*args, host_capacity=None)
    assert (gpu.gpu_hits, gpu.start[3]) == ([0, 0, 0, 1, 1], 1.5)
    assert (with_host.gpu_hits, with_host.host_hits) == ([0, 0, 0, 1, 0], [0, 0, 1, 0, 1])
    assert with_host.start[3] == pytest.approx(1.0 + 512 * 320 * 1024 / 64e9)  # one block over PCIe
    assert (gpu.hit_blocks, with_host.hit_blocks) == (2, 3)


# --- the README's Mooncake figure, recomputed in plain Python ---------------------------------------


def test_the_readme_local_against_global_figures_from_the_raw_trace():
    from tests.conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE

    if not MOONCAKE_SYNTHETIC.exists():
        pytest.skip(NO_MOONCAKE)
    rows = [
        json.loads(line) for line in MOONCAKE_SYNTHETIC.read_text().splitlines() if line.strip()
    ]
    chains = [row["hash_ids"] for row in rows]
    from pyverify.sim.simulate import PER_HOST, simulate

    references = sum(map(len, chains))
    global_pool = (references - distinct(chains)) / references
    routing = tuple(index % 10 for index in range(len(chains)))
    alone = simulate(
        chains, routing, PER_HOST, capacity=5859, eviction="lru"
    )  # one LRU of 3M tokens per host
    # On this trace GPU (500) + write-through DRAM (5859) hits what one LRU of 5859 blocks per host hits
    # (an observation on this trace, not a theorem), which gives the README's local figure by another path.
    assert (round(sum(alone.hit_blocks) / references, 4), round(global_pool, 4)) == (0.1676, 0.6396)
    for timed in (True, False):
        args = (
            chains,
            Router("round-robin", 10),
            500,
            "lru",
            False,
            ServiceModel(),
            [row["timestamp"] for row in rows],
        )
        run = replay_chains(*args, timed=timed, host_capacity=5859)
        assert run.gpu_hit_blocks + run.host_hit_blocks == sum(alone.hit_blocks)
        pooled = replay_chains(*args[:4], None, *args[5:], timed=timed)
        assert pooled.hit_blocks == references - distinct(chains)


@settings(max_examples=100, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    router=st.sampled_from(ROUTERS),
    host=st.one_of(st.just(False), tier),
    max_running=st.integers(1, 3),
)
# Requests queued behind the first all hit and end in zero-length steps at the instant of a sample.
@example(
    trace=([(0,)] * 6, [100, 200, 300, 400, 500, 1000], [0] * 6),
    fleet=1,
    capacity=None,
    router="round-robin",
    host=False,
    max_running=1,
)
def test_load_over_time_counts_requests_arrived_and_not_ended(
    trace, fleet, capacity, router, host, max_running
):
    import pyverify.fleet.run as event_loop

    chains, arrivals, outputs = trace
    service = ServiceModel(
        prefill_tokens_per_s=1024, decode_tokens_per_s=10, max_running=max_running
    )
    args = (chains, Router(router, fleet), capacity, "lru", False, service, arrivals, None, outputs)
    run = replay_chains(*args, host_capacity=host)
    saved, event_loop.LOAD_SAMPLES = event_loop.LOAD_SAMPLES, 0
    try:
        unsampled = replay_chains(chains, Router(router, fleet), *args[2:], host_capacity=host)
    finally:
        event_loop.LOAD_SAMPLES = saved
    assert unsampled.load_samples == []
    assert (run.start, run.host_of, run.gpu_hits, run.host_hits) == (
        unsampled.start,
        unsampled.host_of,
        unsampled.gpu_hits,
        unsampled.host_hits,
    )
    end = run.finish  # the step model records each end
    for at, row in zip(run.sample_s, run.load_samples):
        assert row == [
            sum(
                1
                for i in range(len(chains))
                if run.host_of[i] == h and run.arrival[i] < at < end[i]
            )
            for h in range(fleet)
        ]
