"""``pyverify replay --eviction vllm|sglang|sglang-fifo``: the engines' own caches.

A replay without timing and with GPU caches only must be ``simulate --model
per-host`` with the same engine, routing and capacity, request by request,
hits in tokens included. ``vllm`` also runs timed, requests overlapping.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.cache.sglang import SglangGpu
from pyverify.cache.vllm import VllmGpu
from pyverify.cache.protocol import serve_alone
from tests.replay_oracle import replay_chains, trace_of
from pyverify.fleet.routers import Router, RouterOptions
from pyverify.inputs.model import Instance
from pyverify.sim.routing import RoutingOptions, route
from pyverify.sim.simulate import PER_HOST, POOLED, simulate
from tests.helpers import run_cli
from tests.strategies import prefix_closed_chains

ENGINES = ("vllm", "sglang", "sglang-fifo")
STATIC = ("round-robin", "random")


@st.composite
def engine_traces(draw):
    """Prefix-closed chains of blocks of 4 tokens, each prompt ending anywhere in its last block (or on its edge)."""
    chains = draw(prefix_closed_chains())
    cuts = draw(st.lists(st.integers(0, 3), min_size=len(chains), max_size=len(chains)))
    return chains, [len(chain) * 4 - cut for chain, cut in zip(chains, cuts)]


def static_routing(chains, fleet, router, seed):
    instance = Instance(name="t", fleet_size=fleet, chains=tuple(map(tuple, chains)))
    return route(instance, fleet, router, RoutingOptions(seed=seed))


@settings(max_examples=150, deadline=None)
@given(
    trace=engine_traces(),
    fleet=st.integers(1, 4),
    capacity=st.integers(1, 8),
    eviction=st.sampled_from(ENGINES),
    router=st.sampled_from(STATIC),
    seed=st.integers(0, 3),
    page_blocks=st.sampled_from([1, 2]),
)
def test_no_timing_is_simulate_per_host_request_by_request(
    trace, fleet, capacity, eviction, router, seed, page_blocks
):
    chains, tokens = trace
    page = 4 * page_blocks if eviction != "vllm" else None
    if page is not None and capacity * 4 < page:
        return  # a pool that holds no page: refused on the command line (tested below)
    run = replay_chains(
        chains,
        Router(router, fleet, RouterOptions(seed=seed)),
        capacity,
        eviction,
        timed=False,
        prompt_tokens=tokens,
        block_size=4,
        page_size=page,
    )
    routing = static_routing(chains, fleet, router, seed)
    expected = simulate(
        chains,
        routing,
        PER_HOST,
        capacity=capacity,
        eviction=eviction,
        prompt_tokens=tokens,
        block_size=4,
        page_size=page,
    )
    assert tuple(run.host_of) == routing
    assert tuple(run.gpu_hits) == expected.hit_blocks
    assert run.host_hits == run.pool_hits == [0] * len(chains)


@settings(max_examples=100, deadline=None)
@given(
    chains=prefix_closed_chains(),
    capacity=st.integers(1, 8),
    eviction=st.sampled_from(ENGINES),
    router=st.sampled_from(("round-robin", "least-loaded", "kv-aware", "prefix-affinity")),
)
def test_one_host_is_simulate_pooled_whatever_the_router(chains, capacity, eviction, router):
    """Without a block size every block is full and one unit long, as simulate takes it."""
    run = replay_chains(chains, Router(router, 1), capacity, eviction, timed=False)
    assert (
        tuple(run.gpu_hits)
        == simulate(chains, None, POOLED, capacity=capacity, eviction=eviction).hit_blocks
    )


def test_the_engines_differ_from_the_block_level_policies_where_their_rules_say():
    # A block-aligned repeat: vLLM recomputes the last token, hence the whole last block; lru hits both blocks.
    chains, tokens = [[1, 2], [1, 2]], [8, 8]
    for eviction in ENGINES:
        run = replay_chains(
            chains,
            Router("round-robin", 1),
            4,
            eviction,
            timed=False,
            prompt_tokens=tokens,
            block_size=4,
        )
        assert run.gpu_hits == [0, 1], eviction
    assert replay_chains(chains, Router("round-robin", 1), 4, "lru", timed=False).gpu_hits == [0, 2]
    # SGLang pages of 2 blocks: a 16-token repeat hits one page (input_len - 1 cap, whole pages), i.e. 2 blocks.
    run = replay_chains(
        [[1, 2, 3, 4]] * 2,
        Router("round-robin", 1),
        8,
        "sglang",
        timed=False,
        prompt_tokens=[16, 16],
        block_size=4,
        page_size=8,
    )
    assert run.gpu_hits == [0, 2]
    # A prompt longer than the pool is never scheduled, and changes nothing.
    run = replay_chains(
        [[1, 2, 3], [1]],
        Router("round-robin", 1),
        2,
        "vllm",
        timed=False,
        prompt_tokens=[12, 5],
        block_size=4,
    )
    assert (run.gpu_hits, run.unscheduled) == ([0, 0], [0])


def test_what_a_router_sees_is_read_without_touching_the_engine():
    vllm = VllmGpu(8, 4)
    serve_alone(vllm, 0, [1, 2, 3], 12)
    assert (
        vllm.prefix_hits([1, 2, 3, 9]) == 3 and vllm.prefix_hits([9, 1]) == 0
    )  # uncapped: what the pool holds
    sglang = SglangGpu(64, 4, 8, fifo=False)
    serve_alone(sglang, 0, [1, 2, 3, 4, 5], 20)  # pages named 2 and 4
    clock, shape = sglang.cache.clock, sglang.cache.tree_pages()
    assert (
        sglang.prefix_hits([1, 2, 3, 4]) == 4
        and sglang.prefix_hits([1, 2, 3, 7]) == 2
        and sglang.prefix_hits([1]) == 0
    )
    assert (sglang.cache.clock, sglang.cache.tree_pages()) == (clock, shape)  # no stamp, no split


def write_trace(tmp_path, requests):
    path = tmp_path / "trace.jsonl"
    path.write_text(
        "".join(
            json.dumps({"timestamp": t, "input_length": i, "output_length": 1, "hash_ids": h})
            + "\n"
            for t, (h, i) in enumerate(requests)
        )
    )
    return path


def cli_pair(capsys, trace, fleet, capacity, eviction, router, *extra):
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--no-timing",
        "--fleet",
        str(fleet),
        "--capacity",
        str(capacity),
        "--eviction",
        eviction,
        "--router",
        router,
        "--json",
        *extra,
    )
    assert status == 0, err
    replayed = json.loads(out)["runs"][0]
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(trace),
        "--model",
        "per-host",
        "--fleet",
        str(fleet),
        "--capacity",
        str(capacity),
        "--eviction",
        eviction,
        "--routing",
        router,
        "--json",
        "--witness",
        *extra,
    )
    assert status == 0, err
    return replayed, json.loads(out)


def assert_same(replayed, simulated):
    assert replayed["hit_blocks_by_tier"] == {"gpu": simulated["hits"], "host": 0, "pool": 0}
    assert replayed["token_hits"] == simulated["measured"]["token_hits"] is not None
    assert replayed["unscheduled_requests"] == simulated["unscheduled_requests"]
    assert replayed["recomputed_blocks"] == simulated["references"] - simulated["hits"]


def test_the_cli_matches_simulate_with_partial_blocks_and_refusals(tmp_path, capsys):
    trace = write_trace(
        tmp_path,
        [
            ([1, 2, 3], 1100),
            ([1, 2, 4], 1536),
            ([5], 300),
            ([1, 2, 3], 1536),
            ([1, 2], 1024),
            ([6, 7, 8, 9, 10], 2560),
            ([1, 2, 4], 1400),
        ],
    )
    for eviction in ENGINES:
        for router in STATIC:
            replayed, simulated = cli_pair(capsys, trace, 2, 4, eviction, router)
            assert_same(replayed, simulated)
            assert sum(simulated["witness"]["hit_blocks"]) == replayed["hit_blocks"]
    assert simulated["unscheduled_requests"]  # the 5-block prompt: more than a 4-block pool holds


@pytest.mark.parametrize(
    "eviction,extra",
    [("vllm", ()), ("sglang", ()), ("sglang-fifo", ()), ("sglang", ("--page-size", "1024"))],
)
def test_the_cli_matches_simulate_on_the_mooncake_synthetic_trace(capsys, eviction, extra):
    from tests.conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE

    if not MOONCAKE_SYNTHETIC.exists():
        pytest.skip(NO_MOONCAKE)
    replayed, simulated = cli_pair(
        capsys, MOONCAKE_SYNTHETIC, 4, 2000, eviction, "round-robin", *extra
    )
    assert_same(replayed, simulated)
    assert 0 < replayed["hit_blocks"] < replayed["references"]


def test_request_by_request_on_the_mooncake_synthetic_trace():
    from tests.conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE

    if not MOONCAKE_SYNTHETIC.exists():
        pytest.skip(NO_MOONCAKE)
    rows = [
        json.loads(line) for line in MOONCAKE_SYNTHETIC.read_text().splitlines() if line.strip()
    ]
    chains, tokens = [row["hash_ids"] for row in rows], [row["input_length"] for row in rows]
    routing = tuple(index % 4 for index in range(len(chains)))
    for eviction, page in (("vllm", None), ("sglang", None), ("sglang-fifo", 1024)):
        run = replay_chains(
            chains,
            Router("round-robin", 4),
            1000,
            eviction,
            timed=False,
            prompt_tokens=tokens,
            block_size=512,
            page_size=page,
        )
        expected = simulate(
            chains,
            routing,
            PER_HOST,
            capacity=1000,
            eviction=eviction,
            prompt_tokens=tokens,
            block_size=512,
            page_size=page,
        )
        assert tuple(run.gpu_hits) == expected.hit_blocks, eviction


@pytest.mark.parametrize(
    "flags,expected",
    [
        (["--eviction", "sglang"], "only with --no-timing"),
        (["--eviction", "sglang-fifo"], "only with --no-timing"),
        (["--eviction", "sglang", "--compare"], "only with --no-timing"),
        (["--eviction", "vllm", "--no-timing", "--host-capacity", "4"], "GPU tier only"),
        (["--eviction", "sglang-fifo", "--no-timing", "--pool-capacity", "inf"], "GPU tier only"),
        (
            ["--eviction", "vllm", "--no-timing", "--page-size", "1024"],
            "--page-size: only with --eviction sglang",
        ),
        (
            ["--eviction", "sglang", "--no-timing", "--page-size", "768"],
            "not a multiple of the input's block size 512",
        ),
        (
            ["--eviction", "sglang", "--no-timing", "--page-size", "4096"],
            "holds no page of 4096 tokens",
        ),
    ],
)
def test_what_the_engine_evictions_are_not_offered_with_is_one_line(
    tmp_path, capsys, flags, expected
):
    trace = write_trace(tmp_path, [([1, 2], 1024), ([1, 2, 3], 1536)])
    status, out, err = run_cli(capsys, "replay", str(trace), "--capacity", "4", *flags)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and expected in err


def test_an_engine_eviction_needs_a_capacity(tmp_path, capsys):
    status, out, err = run_cli(
        capsys,
        "replay",
        str(write_trace(tmp_path, [([1], 512)])),
        "--no-timing",
        "--eviction",
        "vllm",
    )
    assert (
        status == 2
        and out == ""
        and "needs a capacity" in err
        and len(err.strip().splitlines()) == 1
    )


def test_vllm_can_pass_the_block_level_routed_forced_optimum_by_not_caching_partial_blocks():
    """The bounds are block-level: the forced optimum must admit every block the trace names, partial last blocks
    included, which vLLM never caches (found by a random search; the README says so)."""
    from pyverify.fleet.report import forced_routed_hits

    chains = [[0, 1], [0, 1, 2], [20, 21], [20, 21, 22, 23], [0, 1, 2], [0, 1]]
    tokens = [7, 12, 6, 13, 11, 5]
    run = replay_chains(
        chains, Router("round-robin", 2), 3, "vllm", timed=False, prompt_tokens=tokens, block_size=4
    )
    assert run.gpu_hits == [0, 0, 0, 0, 1, 1]
    assert forced_routed_hits(trace_of(chains), run.host_of, 3) == 1 < run.gpu_hit_blocks


def test_token_hits_are_simulates_for_the_block_level_evictions_too(tmp_path, capsys):
    trace = write_trace(
        tmp_path,
        [([1, 2, 3], 1100), ([1, 2, 4], 1536), ([5], 300), ([1, 2, 3], 1536), ([1, 2], 1024)],
    )
    for eviction in ("lru", "fifo", "leaf-lru"):
        replayed, simulated = cli_pair(capsys, trace, 2, 3, eviction, "round-robin")
        assert (replayed["hit_blocks"], replayed["token_hits"], replayed["tokens"]) == (
            simulated["hits"],
            simulated["measured"]["token_hits"],
            simulated["measured"]["tokens"],
        )
        assert "unscheduled_requests" not in replayed


# --- vllm with timing: overlapping requests (VllmBlockPool.start / finish) ---


def seconds_service(max_running: int):
    """Prefill 1,000 tokens/s and decode 1 token/s on blocks of 4 tokens, requests as independent streams
    (the engine's block pool is what these tests follow): times easy to follow by hand."""
    from pyverify.fleet.service import STREAMS, ServiceModel

    return ServiceModel(
        service=STREAMS,
        prefill_tokens_per_s=1000.0,
        decode_tokens_per_s=1.0,
        max_running=max_running,
        block_tokens=4,
    )


@settings(max_examples=100, deadline=None)
@given(
    trace=engine_traces(),
    fleet=st.integers(1, 3),
    capacity=st.integers(1, 8),
    router=st.sampled_from(STATIC),
    seed=st.integers(0, 3),
)
def test_timed_vllm_with_requests_that_never_overlap_is_the_untimed_run(
    trace, fleet, capacity, router, seed
):
    """One request at a time (max_running 1; each ends long before the next arrives): the pool sees the same sequence."""
    chains, tokens = trace
    arrivals = [
        index * 100_000.0 for index in range(len(chains))
    ]  # 100 s apart; a request lasts at most ~1 s
    outputs = [1] * len(chains)
    timed = replay_chains(
        chains,
        Router(router, fleet, RouterOptions(seed=seed)),
        capacity,
        "vllm",
        service=seconds_service(1),
        arrival_ms=arrivals,
        output_tokens=outputs,
        prompt_tokens=tokens,
        block_size=4,
    )
    untimed = replay_chains(
        chains,
        Router(router, fleet, RouterOptions(seed=seed)),
        capacity,
        "vllm",
        timed=False,
        prompt_tokens=tokens,
        block_size=4,
    )
    expected = simulate(
        chains,
        static_routing(chains, fleet, router, seed),
        PER_HOST,
        capacity=capacity,
        eviction="vllm",
        prompt_tokens=tokens,
        block_size=4,
    )
    assert timed.gpu_hits == untimed.gpu_hits == list(expected.hit_blocks)
    assert timed.unscheduled == untimed.unscheduled
    assert timed.start == timed.arrival  # nobody ever waited


def test_overlap_pins_blocks_so_a_later_request_evicts_another_and_the_next_waits():
    """Pool of 3 blocks of 4 tokens (physical b1, b2, b3; free queue front first), one host, max_running 2.

    Timed (prefill 1,000 tokens/s, decode 1 token/s):
    * t=1 R0 [10, 11] (8 tokens, 10 output: the first from prefill, 9 decode steps): b1=10, b2=11; runs
      until 10.008. Free: [b3].
    * t=3 R1 [20] (4 tokens, 0 output): b3=20; ends 3.004, b3 back (hashed) at the back. Free: [b3].
    * t=4 R2 [10] (4 tokens: cap (4-1)//4 = 0 hit blocks): pops b3, evicting 20 (R0 holds b1, b2). Ends 4.004.
    * t=4 R3 [20, 21] (8 tokens) waits behind R2 (2 running); at 4.004 it needs 2 blocks, 1 is free: allocate_slots
      refuses it while R0 runs, so it waits at the head until R0 ends at 10.008; 20 is gone: 0 hits.
    Untimed, R0 ends first and frees b2, b1 to the back (free [b3, b2, b1]); R1 takes b3 (free [b2, b1, b3]);
    R2 pops b2, evicting 11, not 20; R3 hits 20: 1 hit.
    """
    chains, tokens = [[10, 11], [20], [10], [20, 21]], [8, 4, 4, 8]
    timed = replay_chains(
        chains,
        Router("round-robin", 1),
        3,
        "vllm",
        service=seconds_service(2),
        arrival_ms=[1000, 3000, 4000, 4000],
        output_tokens=[10, 0, 0, 10],
        prompt_tokens=tokens,
        block_size=4,
    )
    assert timed.gpu_hits == [0, 0, 0, 0]
    assert timed.start == [1.0, 3.0, 4.0, 1.0 + 0.008 + 9.0]
    untimed = replay_chains(
        chains, Router("round-robin", 1), 3, "vllm", timed=False, prompt_tokens=tokens, block_size=4
    )
    assert untimed.gpu_hits == [0, 0, 0, 1]


def test_a_prompt_longer_than_the_pool_waits_for_the_host_to_empty_then_is_never_scheduled():
    """Pool of 2 blocks: R1's 3 blocks are refused while R0 runs (it waits), then refused on an empty host: never
    scheduled, it ends on the spot with no hits, and R2 behind it starts at once."""
    chains, tokens = [[1], [1, 2, 3], [1]], [4, 12, 5]
    run = replay_chains(
        chains,
        Router("round-robin", 1),
        2,
        "vllm",
        service=seconds_service(4),
        arrival_ms=[0, 1000, 2000],
        output_tokens=[5, 0, 0],
        prompt_tokens=tokens,
        block_size=4,
    )
    assert run.unscheduled == [1]
    assert run.gpu_hits == [0, 0, 1]  # R2: 5 tokens, (5-1)//4 = 1 block of R0 cached
    assert (
        run.start[1] == run.first_token[1] == 4.004
    )  # R0: prefill 4 tokens (0.004 s) + 4 s decode
    assert run.start[2] == 4.004 and run.hosts[0].recomputed_blocks == 1 + 3 + 0


def test_the_cli_runs_timed_vllm_and_reports_its_fields(tmp_path, capsys):
    trace = write_trace(
        tmp_path,
        [
            ([1, 2, 3], 1100),
            ([1, 2, 4], 1536),
            ([5], 300),
            ([1, 2, 3], 1536),
            ([1, 2], 1024),
            ([6, 7, 8, 9, 10], 2560),
            ([1, 2, 4], 1400),
        ],
    )
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "2",
        "--capacity",
        "4",
        "--eviction",
        "vllm",
        "--json",
    )
    assert status == 0, err
    data = json.loads(out)
    run = data["runs"][0]
    assert data["timed"] is True and data["eviction"] == "vllm" and run["timed"] is True
    assert run["unscheduled_requests"] == [5]  # 5 blocks: more than a 4-block pool holds
    assert run["hit_blocks_by_tier"]["host"] == run["hit_blocks_by_tier"]["pool"] == 0
    assert run["hit_blocks_by_tier"]["gpu"] == run["hit_blocks"] > 0 and run["token_hits"] > 0
    assert set(run["ttft_s"]) == {"p50", "p90", "p99", "mean"} and "load_over_time" in run
    status, out, err = run_cli(
        capsys, "replay", str(trace), "--fleet", "2", "--capacity", "4", "--eviction", "vllm"
    )
    assert status == 0, err
    assert "1 request(s) the engine never schedules" in out and "max 8 running/host" in out
