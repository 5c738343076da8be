"""``pyverify replay``: the fleet in time against simulate, the tier identities, and hand-checked timings."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.replay_oracle import replay_chains
from pyverify.fleet.routers import Router, RouterOptions
from pyverify.fleet.service import ServiceModel
from pyverify.inputs.model import Instance
from pyverify.sim.routing import RoutingOptions, route
from pyverify.sim.simulate import PER_HOST, POOLED, distinct_count, simulate
from tests.conftest import REPO
from tests.helpers import run_cli
from tests.strategies import prefix_closed_chains

STATIC_AND_AFFINITY = ("round-robin", "random", "prefix-affinity")
EVICTIONS = ("lru", "fifo", "leaf-lru")
SERVICE = ServiceModel(prefill_tokens_per_s=1024, decode_tokens_per_s=10, max_running=2)


def simulate_routing(chains, fleet, router, capacity, eviction, seed=0):
    """The routing simulate derives for ``router`` (pyverify.sim.routing), for comparison."""
    instance = Instance(name="t", fleet_size=fleet, chains=tuple(map(tuple, chains)))
    return route(
        instance, fleet, router, RoutingOptions(seed=seed, capacity=capacity, eviction=eviction)
    )


@st.composite
def timed_traces(draw):
    """Small prefix-closed traces with non-decreasing arrival times (ms) and output lengths."""
    chains = draw(prefix_closed_chains(max_nodes=10, max_requests=15))
    gaps = draw(
        st.lists(st.sampled_from([0, 100, 500, 2000]), min_size=len(chains), max_size=len(chains))
    )
    arrivals, now = [], 0
    for gap in gaps:
        now += gap
        arrivals.append(now)
    outputs = draw(st.lists(st.integers(0, 20), min_size=len(chains), max_size=len(chains)))
    return chains, arrivals, outputs


# --- the one-at-a-time model is simulate's ------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    chains=prefix_closed_chains(),
    fleet=st.integers(1, 4),
    capacity=st.one_of(st.none(), st.integers(1, 6)),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(STATIC_AND_AFFINITY),
    seed=st.integers(0, 3),
)
def test_no_timing_is_simulate_per_host(chains, fleet, capacity, eviction, router, seed):
    run = replay_chains(
        chains, Router(router, fleet, RouterOptions(seed=seed)), capacity, eviction, timed=False
    )
    routing = simulate_routing(chains, fleet, router, capacity, eviction, seed)
    expected = simulate(chains, routing, PER_HOST, capacity=capacity, eviction=eviction)
    assert tuple(run.host_of) == routing
    assert tuple(run.gpu_hits) == expected.hit_blocks


@settings(max_examples=100, deadline=None)
@given(
    chains=prefix_closed_chains(),
    capacity=st.one_of(st.none(), st.integers(1, 6)),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(("round-robin", "least-loaded", "kv-aware", "prefix-affinity")),
)
def test_one_host_without_time_is_simulate_pooled(chains, capacity, eviction, router):
    run = replay_chains(chains, Router(router, 1), capacity, eviction, timed=False)
    assert (
        tuple(run.gpu_hits)
        == simulate(chains, None, POOLED, capacity=capacity, eviction=eviction).hit_blocks
    )


def test_no_timing_on_the_cli_prints_simulates_hits(tmp_path, capsys):
    trace = write_trace(
        tmp_path,
        [
            (0, [1, 2, 3], 1536, 4),
            (10, [1, 2, 4], 1536, 4),
            (20, [5], 512, 1),
            (30, [1, 2, 3], 1536, 2),
        ],
    )
    for router, routing in (("round-robin", "round-robin"), ("prefix-affinity", "prefix-affinity")):
        status, out, _ = run_cli(
            capsys,
            "replay",
            str(trace),
            "--no-timing",
            "--fleet",
            "2",
            "--capacity",
            "3",
            "--router",
            router,
            "--json",
        )
        assert status == 0
        replayed = json.loads(out)["runs"][0]
        status, out, _ = run_cli(
            capsys,
            "simulate",
            str(trace),
            "--model",
            "per-host",
            "--fleet",
            "2",
            "--capacity",
            "3",
            "--routing",
            routing,
            "--json",
        )
        assert status == 0
        assert replayed["hit_blocks_by_tier"] == {
            "gpu": json.loads(out)["hits"],
            "host": 0,
            "pool": 0,
        }


# --- the pool tier --------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(
        ("round-robin", "random", "least-loaded", "prefix-affinity", "kv-aware")
    ),
    timed=st.booleans(),
)
def test_unlimited_pool_reaches_references_minus_distinct(
    trace, fleet, capacity, eviction, router, timed
):
    chains, arrivals, outputs = trace
    run = replay_chains(
        chains,
        Router(router, fleet),
        capacity,
        eviction,
        None,
        SERVICE,
        arrivals,
        None,
        outputs,
        timed=timed,
    )
    references = sum(map(len, chains))
    assert run.gpu_hit_blocks + run.pool_hit_blocks == references - distinct_count(chains)
    assert run.recomputed_blocks == distinct_count(chains)


@settings(max_examples=150, deadline=None)
@given(
    chains=prefix_closed_chains(),
    fleet=st.integers(1, 4),
    capacity=st.integers(1, 6),
    pool=st.one_of(st.none(), st.integers(1, 8)),
    router=st.sampled_from(("round-robin", "random")),
)
def test_without_timing_the_pool_leaves_the_gpu_tier_alone_and_only_adds(
    chains, fleet, capacity, pool, router
):
    alone = replay_chains(chains, Router(router, fleet), capacity, "lru", timed=False)
    pooled = replay_chains(chains, Router(router, fleet), capacity, "lru", pool, timed=False)
    assert pooled.gpu_hits == alone.gpu_hits
    assert pooled.gpu_hit_blocks + pooled.pool_hit_blocks >= alone.gpu_hit_blocks


def test_a_pool_can_lower_total_hits_when_it_changes_where_a_load_aware_router_sends_requests():
    """Found by a random search: pool hits shorten prefills, so a kv-aware router sees other loads,
    routes differently, and the GPU caches lose more than the pool gives (README: 'replay')."""
    chains = [(0,), (0, 2), (3,), (0,), (0, 1, 4), (6,), (3,), (0, 1, 4), (0, 1, 5)]
    arrivals = [0, 0, 100, 2100, 2600, 3100, 3200, 5200, 7200]
    outputs = [16, 14, 10, 5, 19, 5, 5, 6, 14]
    service = ServiceModel(prefill_tokens_per_s=1024, decode_tokens_per_s=10, max_running=1)
    by_requests = RouterOptions(kv_aware_load="requests")  # the load the search ran with
    alone = replay_chains(
        chains,
        Router("kv-aware", 2, by_requests),
        4,
        "lru",
        False,
        service,
        arrivals,
        None,
        outputs,
    )
    pooled = replay_chains(
        chains, Router("kv-aware", 2, by_requests), 4, "lru", 1, service, arrivals, None, outputs
    )
    assert alone.gpu_hit_blocks == 7
    assert (pooled.gpu_hit_blocks, pooled.pool_hit_blocks) == (5, 1)
    assert alone.host_of != pooled.host_of


# --- time, hand-checked ---------------------------------------------------------


def write_trace(tmp_path, requests):
    """A Mooncake JSONL trace of ``(timestamp ms, hash_ids, input_length, output_length)``."""
    path = tmp_path / "trace.jsonl"
    path.write_text(
        "".join(
            json.dumps({"timestamp": t, "input_length": i, "output_length": o, "hash_ids": h})
            + "\n"
            for t, h, i, o in requests
        )
    )
    return path


THREE = [(0, [1, 2], 1024, 10), (500, [1, 2, 3], 1536, 5), (4000, [4], 512, 0)]


def replay_json(capsys, trace, *flags):
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "1",
        "--prefill-tokens-per-s",
        "1024",
        "--decode-tokens-per-s",
        "10",
        "--json",
        *flags,
    )
    assert status == 0, err
    return json.loads(out)["runs"][0]


def test_three_requests_one_at_a_time(tmp_path, capsys):
    # r0: starts 0, prefill 1024/1024 = 1 s (TTFT 1); prefill gives the first of its 10 tokens, so
    # decode is 9/10 = 0.9 s: ends at 1.9.
    # r1: arrives 0.5, waits for r0's slot until 1.9 (queue 1.4), hits [1, 2]: computes 512 tokens = 0.5 s;
    # TTFT 2.4 - 0.5 = 1.9.
    # r2: arrives 4, idle host, 512 tokens = 0.5 s: TTFT 0.5.
    # TTFT [1, 1.9, 0.5]: p50 1, p90 1 + 0.8 x 0.9 = 1.72, p99 1.882, mean 3.4 / 3; queueing [0, 1.4, 0].
    run = replay_json(capsys, write_trace(tmp_path, THREE), "--max-num-seqs", "1")
    assert run["ttft_s"] == pytest.approx({"p50": 1.0, "p90": 1.72, "p99": 1.882, "mean": 3.4 / 3})
    assert run["queueing_s"] == pytest.approx(
        {"p50": 0.0, "p90": 1.12, "p99": 1.372, "mean": 1.4 / 3}
    )
    assert run["hit_blocks_by_tier"] == {"gpu": 2, "host": 0, "pool": 0}
    assert run["recomputed_blocks"] == 4
    assert run["load"]["max_queue"] == 1  # r1 waited; nobody else did


def test_three_requests_two_at_a_time(tmp_path, capsys):
    # With two slots r1 starts on arrival (0.5) and already hits r0's blocks: TTFT 0.5 s; r0 and r2 as before.
    run = replay_json(
        capsys, write_trace(tmp_path, THREE), "--max-num-seqs", "2", "--service", "streams"
    )
    assert run["ttft_s"] == pytest.approx({"p50": 0.5, "p90": 0.9, "p99": 0.99, "mean": 2.0 / 3})
    assert run["queueing_s"]["mean"] == 0.0
    assert run["load"]["max_queue"] == 0


def test_arrival_scale_compresses_time(tmp_path, capsys):
    # x 0.25: r1 arrives at 0.125 s and waits until 1.9 (TTFT 2.4 - 0.125 = 2.275); r2 arrives at 1 s,
    # waits for r1's end (2.4 + 4/10 = 2.8), then 0.5 s of prefill: TTFT 3.3 - 1 = 2.3.
    run = replay_json(
        capsys, write_trace(tmp_path, THREE), "--max-num-seqs", "1", "--arrival-scale", "0.25"
    )
    assert run["ttft_s"]["mean"] == pytest.approx((1.0 + 2.275 + 2.3) / 3)


def test_a_pool_hit_pays_latency_and_transfer(tmp_path, capsys):
    # Round-robin on 2 hosts: r1 lands on host 1, misses its GPU, and loads [1, 2] from the pool:
    # 512 tokens to compute (0.5 s) + 1 ms latency + 2 x 512 x 1000 bytes / 1 GB/s (1.024 ms).
    trace = write_trace(tmp_path, [(0, [1, 2], 1024, 0), (5000, [1, 2, 3], 1536, 0)])
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "2",
        "--prefill-tokens-per-s",
        "1024",
        "--pool-capacity",
        "inf",
        "--kv-bytes-per-token",
        "1000",
        "--pool-bandwidth-gb-s",
        "1",
        "--json",
    )
    assert status == 0, err
    run = json.loads(out)["runs"][0]
    assert run["hit_blocks_by_tier"] == {"gpu": 0, "host": 0, "pool": 2}
    assert run["ttft_s"]["mean"] == pytest.approx(
        (1.0 + 0.502024) / 2
    )  # r0 computes 1024 tokens: TTFT 1 s
    moved = run["moved"]
    assert (
        moved["pool_to_gpu_blocks"],
        moved["pool_to_gpu_tokens"],
        moved["pool_to_gpu_bytes"],
    ) == (2, 2 * 512, 2 * 512 * 1000)
    assert (moved["gpu_to_pool_blocks"], moved["gpu_to_pool_bytes"]) == (3, 3 * 512 * 1000)
    assert moved["host_to_gpu_blocks"] == moved["gpu_to_host_blocks"] == 0


@pytest.mark.parametrize("eviction", EVICTIONS)
def test_pinned_blocks_are_not_evicted_and_admission_waits_for_room(eviction):
    service = ServiceModel(prefill_tokens_per_s=512, decode_tokens_per_s=1, max_running=2)
    # r0 [1] runs 1 + 99 s (prefill gives the first of its 100 tokens); r1 [2] runs 1 s (its one token comes
    # out of prefill); r2 [3] at 5 s: the cache {1, 2} is full, 1 is older but pinned,
    # so 2 is evicted; r3 [1] at 6 s hits. The same policy without pinning (simulate) evicts 1.
    chains = [(1,), (2,), (3,), (1,)]
    run = replay_chains(
        chains,
        Router("round-robin", 1),
        2,
        eviction,
        False,
        service,
        [0, 0, 5000, 6000],
        None,
        [100, 1, 1, 1],
    )
    assert run.gpu_hits == [0, 0, 0, 1]
    assert simulate(chains, None, POOLED, capacity=2, eviction=eviction).hit_blocks == (0, 0, 0, 0)
    # r1 [2, 3] cannot start beside r0's pinned [1] in 2 blocks: it waits until r0 ends (1 + 99 = 100 s).
    run = replay_chains(
        [(1,), (2, 3)],
        Router("round-robin", 1),
        2,
        eviction,
        False,
        service,
        [0, 0],
        None,
        [100, 1],
    )
    assert run.start == [0.0, 100.0]


# --- the command line -----------------------------------------------------------


def test_bounds_and_json_fields(tmp_path, capsys):
    trace = write_trace(tmp_path, THREE)
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "2",
        "--capacity",
        "1",
        "--router",
        "round-robin,kv-aware",
        "--pool-capacity",
        "2",
        "--json",
    )
    assert status == 0, err
    data = json.loads(out)
    assert data["bounds"]["floor_hits"] == 6 - 4
    assert data["bounds"]["min_pool_blocks"] == 2
    assert (data["pool"], data["pool_capacity"]) == (True, 2)
    assert [run["router"] for run in data["runs"]] == ["round-robin", "kv-aware"]
    for run in data["runs"]:
        assert sum(run["hit_blocks_by_tier"].values()) + run["recomputed_blocks"] == 6
        assert run["below_floor_blocks"] == 2 - run["hit_blocks"]


def test_chart_is_written(tmp_path, capsys):
    trace = write_trace(tmp_path, THREE)
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--router",
        "round-robin,least-loaded",
        "--chart",
        str(tmp_path / "c.png"),
    )
    assert status == 0, err
    assert (tmp_path / "c.png").stat().st_size > 0
    assert f"chart: {tmp_path / 'c.png'}" in out


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--router", "nearest"], "unknown router 'nearest'"),
        (["--pool-capacity", "0"], "expected a positive integer"),
        (["--eviction", "sglang"], "--eviction sglang: only with --no-timing"),
        (["--eviction", "sglang"], "--eviction sglang: only with --no-timing"),
        (["--eviction", "vllm", "--no-timing", "--pool-capacity", "inf"], "GPU tier only"),
        (["--eviction", "lru", "--page-size", "16"], "--page-size: only with --eviction sglang"),
        (["--eviction", "nope"], "invalid choice"),
        (["--load-weight", "-1"], "expected a finite number >= 0"),
        (["--arrival-scale", "0"], "expected a positive number"),
    ],
)
def test_bad_flags_are_one_line(tmp_path, capsys, flags, expected):
    status, out, err = run_cli(capsys, "replay", str(write_trace(tmp_path, THREE)), *flags)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and expected in err


def test_a_timed_replay_needs_timestamps(tmp_path, capsys):
    path = tmp_path / "untimed.jsonl"
    path.write_text(json.dumps({"hash_ids": [1, 2]}) + "\n")
    status, out, err = run_cli(capsys, "replay", str(path))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "needs a timestamp" in err
    status, out, err = run_cli(capsys, "replay", str(path), "--no-timing")
    assert status == 0, err


# --- timed runs: invariants ---------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(("round-robin", "least-loaded", "kv-aware")),
    pool=st.one_of(st.just(False), st.none(), st.integers(1, 6)),
    max_running=st.integers(1, 3),
)
def test_timed_runs_keep_fifo_order_and_the_concurrency_limit(
    trace, fleet, capacity, eviction, router, pool, max_running
):
    chains, arrivals, outputs = trace
    service = ServiceModel(
        prefill_tokens_per_s=1024, decode_tokens_per_s=10, max_running=max_running
    )
    run = replay_chains(
        chains, Router(router, fleet), capacity, eviction, pool, service, arrivals, None, outputs
    )
    end = run.finish  # the step model records each end
    assert run.gpu_hit_blocks + run.pool_hit_blocks + run.recomputed_blocks == sum(map(len, chains))
    for index in range(len(chains)):
        assert run.start[index] >= run.arrival[index]
        assert run.first_token[index] >= run.start[index]
    for host in range(fleet):
        mine = [index for index in range(len(chains)) if run.host_of[index] == host]
        assert [run.start[index] for index in mine] == sorted(
            run.start[index] for index in mine
        )  # FIFO
        for index in mine:
            overlapping = [
                other for other in mine if run.start[other] <= run.start[index] < end[other]
            ]
            assert len(overlapping) <= max_running


@settings(max_examples=100, deadline=None)
@given(
    chains=prefix_closed_chains(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 6)),
    eviction=st.sampled_from(EVICTIONS),
    router=st.sampled_from(STATIC_AND_AFFINITY),
    pool=st.one_of(st.just(False), st.integers(1, 6)),
)
def test_requests_that_never_overlap_in_time_give_the_untimed_hits(
    chains, fleet, capacity, eviction, router, pool
):
    # A request's prefill and decode take at most a few seconds here; arrivals 1000 s apart never overlap.
    arrivals = [index * 1_000_000 for index in range(len(chains))]
    timed = replay_chains(
        chains,
        Router(router, fleet),
        capacity,
        eviction,
        pool,
        SERVICE,
        arrivals,
        None,
        [5] * len(chains),
    )
    untimed = replay_chains(chains, Router(router, fleet), capacity, eviction, pool, timed=False)
    assert (timed.host_of, timed.gpu_hits, timed.pool_hits) == (
        untimed.host_of,
        untimed.gpu_hits,
        untimed.pool_hits,
    )
    assert timed.start == timed.arrival


def test_per_request_lines_hold_each_requests_host_hits_and_times(tmp_path, capsys):
    # As test_three_requests_one_at_a_time: r0 first token at 1, decode 9/10 = 0.9 s, ends at 1.9;
    # r1 waits for the slot, hits [1, 2], first token at 2.4, decode 4/10 = 0.4 s, ends at 2.8;
    # r2 arrives at 4, first token at 4.5, no output: ends at 4.5.
    out = tmp_path / "requests.jsonl"
    run = replay_json(
        capsys, write_trace(tmp_path, THREE), "--max-num-seqs", "1", "--per-request", str(out)
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["request"] for line in lines] == [0, 1, 2]
    assert {line["router"] for line in lines} == {run["router"]} and {
        line["host"] for line in lines
    } == {0}
    assert [line["hit_blocks"] for line in lines] == [
        {"gpu": 0, "host": 0, "pool": 0},
        {"gpu": 2, "host": 0, "pool": 0},
        {"gpu": 0, "host": 0, "pool": 0},
    ]
    assert [line["arrival_s"] for line in lines] == pytest.approx([0.0, 0.5, 4.0])
    assert [line["first_token_s"] for line in lines] == pytest.approx([1.0, 2.4, 4.5])
    assert [line["ttft_s"] for line in lines] == pytest.approx([1.0, 1.9, 0.5])
    assert [line["finish_s"] for line in lines] == pytest.approx([1.9, 2.8, 4.5])


def test_per_request_lines_add_up_to_each_runs_summary(tmp_path, capsys):
    out = tmp_path / "requests.jsonl"
    instance = REPO / "instances" / "mooncake-synthetic.json"
    requests = len(json.loads(instance.read_text())["requests"])
    status, text, err = run_cli(
        capsys,
        "replay",
        str(instance),
        "--compare",
        "--fleet",
        "4",
        "--router",
        "round-robin,kv-aware",
        "--capacity",
        "200",
        "--per-request",
        str(out),
        "--json",
    )
    assert status == 0, err
    runs = json.loads(text)["runs"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(runs) == 4 and len(lines) == requests * len(runs)
    for run in runs:
        mine = [
            line
            for line in lines
            if line["router"] == run["router"] and line["timed"] == run["timed"]
        ]
        assert [line["request"] for line in mine] == list(range(requests))
        for tier, blocks in run["hit_blocks_by_tier"].items():
            assert sum(line["hit_blocks"][tier] for line in mine) == blocks
        if not run["timed"]:
            assert all(line["ttft_s"] is None and line["finish_s"] is None for line in mine)
