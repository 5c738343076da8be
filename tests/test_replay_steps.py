"""The step-based engine service model of ``pyverify replay`` (pyverify.fleet.service, pyverify.fleet.replay)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyverify.fleet
from tests.replay_oracle import replay_chains, replay_python_chains
from pyverify.fleet.routers import Router
from pyverify.fleet.service import (
    DYNAMO_TIMING,
    STEPS,
    STREAMS,
    ServiceModel,
    dynamo_decode_ms,
    dynamo_prefill_ms,
)
from tests.helpers import run_cli
from tests.test_replay import THREE, replay_json, timed_traces, write_trace
from tests.test_replay_engines import engine_traces


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }


def test_the_two_event_loops_do_not_import_each_other_for_their_records():
    """HostStats, LOAD_SAMPLES and ReplayRun live in pyverify.fleet.run: the compiled loop imports no Python loop."""
    folder = Path(pyverify.fleet.__file__).parent
    assert "pyverify.fleet.replay" not in imported_modules(folder / "compiled_replay.py")
    assert "pyverify.fleet.run" in imported_modules(folder / "replay.py")


# --- the step model ------------------------------------------------------------------------------


#: A tiny engine whose steps are worked out by hand below: 1000 prefill tokens/s, a decode alone 0.1 s,
#: each further decode in a step half as long again, 4 tokens a step, 2 running, blocks of 2 tokens.
TINY = ServiceModel(
    prefill_tokens_per_s=1000,
    decode_tokens_per_s=10,
    decode_growth=0.5,
    max_num_batched_tokens=4,
    max_running=2,
    block_tokens=2,
)


def one_host(chains, arrivals_ms, inputs, outputs, service=TINY, capacity=None, steps=None):
    return replay_python_chains(
        chains,
        Router("round-robin", 1),
        capacity,
        "lru",
        False,
        service,
        arrivals_ms,
        inputs,
        outputs,
        step_log=steps,
    )


def test_hand_computed_chunked_prefill_and_a_shared_decode_step():
    """Two 6-token prompts at t=0, 2 output tokens each, budget 4 tokens a step:
    step 1 [0, 0.004]: r0 4 tokens (budget spent: r1 waits);
    step 2 [0.004, 0.008]: r0 its last 2, r1 admitted, 2 -> r0's first token at 0.008;
    step 3 [0.008, 0.111]: r0 decodes (1 token), r1 3 tokens: 0.003 + 0.1 -> r0 ends;
    step 4 [0.111, 0.112]: r1 its last token -> first token; step 5 [0.112, 0.212]: r1 decodes, ends."""
    steps = []
    run = one_host([[1, 2, 3], [4, 5, 6]], [0, 0], [6, 6], [2, 2], steps=steps)
    assert run.start == pytest.approx([0.0, 0.004])
    assert run.first_token == pytest.approx([0.008, 0.112])
    assert run.finish == pytest.approx([0.111, 0.212])
    assert [(step.prefill_tokens, step.decodes) for step in steps] == [
        (4, 0),
        (4, 0),
        (3, 1),
        (1, 0),
        (0, 1),
    ]
    assert [step.end_s for step in steps] == pytest.approx([0.004, 0.008, 0.111, 0.112, 0.212])


def test_hand_computed_decodes_share_a_step_that_grows_with_them():
    """Two 2-token prompts at t=0, 3 output tokens: one step prefills both (0.004 s), then two steps
    of two decodes each, (1 + 0.5) x 0.1 = 0.15 s: both end at 0.304."""
    run = one_host([[1], [2]], [0, 0], [2, 2], [3, 3])
    assert run.first_token == pytest.approx([0.004, 0.004])
    assert run.finish == pytest.approx([0.304, 0.304])


def test_the_sequence_cap_holds_the_third_request_until_one_ends():
    """max_num_seqs 2: a third prompt waits in the queue until a step ends one of the first two."""
    run = one_host([[1], [2], [3]], [0, 0, 0], [2, 2, 2], [2, 2, 2])
    # step 1: r0, r1 prefill (0.004); step 2: both decode (0.15) -> both end at 0.154; then r2.
    assert run.start == pytest.approx([0.0, 0.0, 0.154])
    assert run.first_token[2] == pytest.approx(0.156)


def test_decode_kv_fills_blocks_that_take_room_in_the_cache():
    """A 4-token prompt [1, 2] (blocks of 2 tokens) with 4 output tokens decodes 3 steps: its KV grows to
    7 tokens, filling block 2 of its chain, which the GPU caches. With room for 3 blocks, a later
    request [7] then evicts block 1, and [1, 2] finds nothing; without decode KV it would hit both."""
    chains, arrivals, inputs, outputs = (
        [[1, 2], [7], [1, 2]],
        [0, 10_000, 20_000],
        [4, 2, 4],
        [4, 1, 1],
    )
    steps = one_host(chains, arrivals, inputs, outputs, capacity=3)
    streams = replay_python_chains(
        chains,
        Router("round-robin", 1),
        3,
        "lru",
        False,
        ServiceModel(block_tokens=2, service=STREAMS),
        arrivals,
        inputs,
        outputs,
    )
    assert steps.gpu_hits == [0, 0, 0]
    assert streams.gpu_hits == [0, 0, 2]


def test_a_generated_block_is_cached_with_its_own_id_in_an_unlimited_cache():
    """Without a capacity decode KV costs nothing: the prompt's blocks are still hit."""
    run = one_host([[1, 2], [1, 2]], [0, 10_000], [4, 4], [9, 1])
    assert run.gpu_hits == [0, 2]


@settings(max_examples=150, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    eviction=st.sampled_from(("lru", "fifo", "leaf-lru")),
    router=st.sampled_from(("round-robin", "least-loaded", "kv-aware")),
    max_running=st.integers(1, 3),
    budget=st.integers(1, 2048),
    block_tokens=st.sampled_from([1, 16, 512]),
)
def test_a_step_never_exceeds_its_token_budget_or_its_sequence_cap(
    trace, fleet, capacity, eviction, router, max_running, budget, block_tokens
):
    chains, arrivals, outputs = trace
    service = ServiceModel(
        prefill_tokens_per_s=1024,
        decode_tokens_per_s=10,
        max_running=max_running,
        max_num_batched_tokens=budget,
        block_tokens=block_tokens,
    )
    steps = []
    run = replay_python_chains(
        chains,
        Router(router, fleet),
        capacity,
        eviction,
        False,
        service,
        arrivals,
        None,
        outputs,
        step_log=steps,
    )
    for step in steps:
        assert step.prefill_tokens + step.decodes <= budget
        assert 1 <= len(step.running) <= max_running
        assert step.end_s >= step.start_s
    for host in range(fleet):  # one step at a time per host
        mine = [step for step in steps if step.host == host]
        assert all(a.end_s <= b.start_s for a, b in zip(mine, mine[1:]))
    for index, chain in enumerate(chains):
        assert run.arrival[index] <= run.start[index] <= run.first_token[index]
        assert run.first_token[index] <= run.finish[index]
        computed = len(chain) * block_tokens - run.gpu_hits[index] * block_tokens
        assert sum(1 for step in steps if index in step.running) >= (
            (computed > 0) + max(outputs[index] - 1, 0)
        )


@settings(max_examples=150, deadline=None)
@given(
    trace=timed_traces(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    eviction=st.sampled_from(("lru", "fifo", "leaf-lru")),
    pool=st.one_of(st.just(False), st.none(), st.integers(1, 6)),
    host_tier=st.one_of(st.just(False), st.integers(1, 6)),
    budget=st.integers(1, 4096),
)
def test_one_request_at_a_time_its_ttft_is_its_prefill_time_plus_queueing(
    trace, fleet, capacity, eviction, pool, host_tier, budget
):
    """max_num_seqs 1: a request runs alone, so however its prefill is chunked its first token comes
    prefill_seconds after it starts, and it starts on arrival or when the one before it on its host ends."""
    chains, arrivals, outputs = trace
    service = ServiceModel(
        prefill_tokens_per_s=1024,
        decode_tokens_per_s=10,
        max_running=1,
        max_num_batched_tokens=budget,
    )
    run = replay_chains(
        chains,
        Router("round-robin", fleet),
        capacity,
        eviction,
        pool,
        service,
        arrivals,
        None,
        outputs,
        host_capacity=host_tier,
    )
    previous_end = [0.0] * fleet
    for index, chain in enumerate(chains):
        host = run.host_of[index]
        hits = run.gpu_hits[index] + run.host_hits[index] + run.pool_hits[index]
        prefill = service.prefill_seconds(
            len(chain) * service.block_tokens, hits, run.pool_hits[index], run.host_hits[index]
        )
        queueing = run.start[index] - run.arrival[index]
        assert queueing >= 0
        assert run.start[index] == max(run.arrival[index], previous_end[host])
        assert run.first_token[index] - run.arrival[index] == pytest.approx(
            prefill + queueing, rel=1e-12, abs=1e-12
        )
        previous_end[host] = run.finish[index]


def test_steps_is_the_default_and_the_compiled_engine_refuses_it():
    assert ServiceModel().service == STEPS
    with pytest.raises(ValueError, match="step service model"):
        replay_chains(
            [[1]], Router("round-robin", 1), None, "lru", arrival_ms=[0], backend="compiled"
        )
    assert (
        replay_chains([[1]], Router("round-robin", 1), None, "lru", arrival_ms=[0]).finish
        is not None
    )


# --- Dynamo 1.6.1's step timing -------------------------------------------------------------------
#
# Each number below is what ai-dynamo-runtime 1.6.1's offline replay printed for the same requests
# (blocks of 512 tokens, max_num_seqs 8, max_num_batched_tokens 8192), and each is also worked out by
# hand from its polynomials: prefill 4.209989e-07 T^2 + 1.518344e-02 T + 16.50142 ms of T tokens,
# decode max(1, -25.74 f^2 + 54.01 f + 5.74) ms at a fraction f of the host's KV.

DYNAMO = ServiceModel(
    max_running=8, max_num_batched_tokens=8192, block_tokens=512, step_timing=DYNAMO_TIMING
)


def dynamo_prefill_by_hand(tokens):
    return 4.209989e-07 * tokens**2 + 1.518344e-02 * tokens + 16.50142


def dynamo_decode_by_hand(full):
    return -25.74 * full**2 + 54.01 * full + 5.74


def test_dynamo_prefill_times_the_batch_by_its_means_rounded_down():
    # 1000 tokens alone: 0.421 + 15.183 + 16.501 = 32.105859 ms (Dynamo: ttft 32.105859 ms).
    assert dynamo_prefill_ms([(0, 1000)]) == pytest.approx(32.105859, abs=1e-6)
    # 1001 and 2000 tokens in one step: 2 x floor(3001 / 2) = 3000 tokens, not 3001 (Dynamo 65.84073).
    assert dynamo_prefill_ms([(0, 1001), (0, 2000)]) == pytest.approx(65.84073, abs=1e-6)
    assert dynamo_prefill_ms([(0, 1001), (0, 2000)]) == pytest.approx(dynamo_prefill_by_hand(3000))
    # A 10000-token prompt's second chunk (8192 before, 1808 now), 1001 and 3 fresh tokens:
    # 3 x (floor(11004 / 3) - floor(8192 / 3)) = 3 x (3668 - 2730) = 2814 tokens (Dynamo: first tokens
    # at 231.698258 ms, after a first step of 8192 tokens).
    second = dynamo_prefill_ms([(8192, 1808), (0, 1001), (0, 3)])
    assert second == pytest.approx(dynamo_prefill_by_hand(2814))
    assert dynamo_prefill_ms([(0, 8192)]) + second == pytest.approx(231.698258, abs=1e-6)
    # Cached tokens count in the prefix: 2048 with 1024 cached beside 1001 fresh: 2 x (1524 - 512).
    assert dynamo_prefill_ms([(1024, 1024), (0, 1001)]) == pytest.approx(48.957357, abs=1e-6)
    assert dynamo_prefill_ms([]) == 0.0 and dynamo_prefill_ms([(512, 0)]) == 0.0


def test_dynamo_decode_follows_the_kv_its_decodes_hold():
    # 1001 tokens of context on a 10-block host (5120 tokens): f = 0.19551 -> 15.3155 ms.
    assert dynamo_decode_ms(1001, 5120) == pytest.approx(dynamo_decode_by_hand(1001 / 5120))
    assert dynamo_decode_ms(1001, 5120) == pytest.approx(15.315509, abs=1e-6)
    assert dynamo_decode_ms(10**9, 5120) == pytest.approx(
        dynamo_decode_by_hand(1.0)
    )  # at most full
    assert dynamo_decode_ms(10**9, None) == pytest.approx(5.74)  # unlimited: never fuller


def test_dynamo_timing_hand_computed_decode_steps_on_a_small_host():
    """One 1000-token request, 4 output tokens, on a vLLM pool of 10 blocks: its first token at the
    prefill time; its 3 decodes hold 1001, 1002 and 1003 tokens (Dynamo: itl 15.324090333 ms on average,
    ends at 32.105859 + 3 x 15.324090333 ms)."""
    steps = []
    run = replay_python_chains(
        [[0, 1]],
        Router("round-robin", 1),
        10,
        "vllm",
        False,
        DYNAMO,
        [0],
        [1000],
        [4],
        prompt_tokens=[1000],
        block_size=512,
        step_log=steps,
    )
    decodes = [dynamo_decode_by_hand(tokens / 5120) for tokens in (1001, 1002, 1003)]
    assert run.first_token == pytest.approx([dynamo_prefill_by_hand(1000) / 1000])
    assert run.finish == pytest.approx([(dynamo_prefill_by_hand(1000) + sum(decodes)) / 1000])
    assert run.finish[0] == pytest.approx((32.105859 + 3 * 15.324090333) / 1000, abs=1e-9)
    assert [(step.prefill_tokens, step.decodes) for step in steps] == [(1000, 0)] + [(0, 1)] * 3


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.integers(1, 30_000),
    outputs=st.integers(1, 6),
    spare_blocks=st.sampled_from([6, 20, 40, 10**6]),
)
def test_dynamo_timing_one_request_alone_is_its_chunks_then_its_decodes(
    tokens, outputs, spare_blocks
):
    """Alone on a host, a request's chunks are min(8192, what is left) each timed alone, and its
    decode k (1..outputs - 1) holds tokens + k tokens of the host's KV."""
    blocks = -(-tokens // 512)
    capacity = blocks + spare_blocks
    run = replay_python_chains(
        [list(range(blocks))],
        Router("round-robin", 1),
        capacity,
        "vllm",
        False,
        DYNAMO,
        [0],
        [tokens],
        [outputs],
        prompt_tokens=[tokens],
        block_size=512,
    )
    chunks = [min(8192, tokens - done) for done in range(0, tokens, 8192)]
    first = sum(dynamo_prefill_by_hand(chunk) for chunk in chunks)
    decodes = sum(
        max(1.0, dynamo_decode_by_hand((tokens + k) / (capacity * 512))) for k in range(1, outputs)
    )
    assert run.first_token[0] * 1000 == pytest.approx(first)
    assert run.finish[0] * 1000 == pytest.approx(first + decodes)


@pytest.mark.parametrize("eviction", ["vllm", "lru"])
def test_dynamo_timing_hand_computed_mixed_step(eviction):
    """r0 (1000 tokens, 50 output) at 0 and r1 (3000 tokens, 2 output) at 100 ms on a 20-block host
    (10240 tokens). r0's first token at 32.106 ms, then decode steps; r1 joins the step that starts
    after 100 ms, r0's 8th decode of it holding 1008 tokens: that step lasts prefill(3000) + decode at
    1008 / 10240; r1's one decode shares a step with r0's, 1009 + 3001 tokens between them.
    Dynamo: r1 admitted at 107.622329 ms, first token at 184.270249, ends at 207.213374."""
    prompt_blocks = [[0, 1], [2, 3, 4, 5, 6, 7]]
    kwargs = {"prompt_tokens": [1000, 3000], "block_size": 512} if eviction == "vllm" else {}
    run = replay_python_chains(
        prompt_blocks,
        Router("round-robin", 1),
        20,
        eviction,
        False,
        DYNAMO,
        [0, 100],
        [1000, 3000],
        [50, 2],
        **kwargs,
    )
    decode = [dynamo_decode_by_hand((1000 + k) / 10240) for k in range(1, 50)]
    admitted = dynamo_prefill_by_hand(1000) + sum(decode[:7])
    first = admitted + dynamo_prefill_by_hand(3000) + decode[7]
    shared = dynamo_decode_by_hand((1009 + 3001) / 10240)
    assert run.start[1] * 1000 == pytest.approx(admitted) == pytest.approx(107.622329, abs=1e-5)
    assert run.first_token[1] * 1000 == pytest.approx(first) == pytest.approx(184.270249, abs=1e-5)
    assert run.finish[1] * 1000 == pytest.approx(first + shared)
    assert run.finish[1] * 1000 == pytest.approx(207.213374, abs=1e-5)


# --- the command line ---------------------------------------------------------------------------


def test_a_step_table_times_the_steps(tmp_path, capsys):
    """A table whose prefill row is (2048 tokens, 4 s) and decode rows (1, 0.5 s), (3, 0.9 s): THREE's r0
    (1024 tokens, 10 output) alone takes 2 s to its first token (interpolated from 0 tokens, 0 s)."""
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"prefill": [[2048, 4.0]], "decode": [[1, 0.5], [3, 0.9]]}))
    run = replay_json(capsys, write_trace(tmp_path, THREE[:1]), "--step-table", str(table))
    assert run["ttft_s"]["p50"] == pytest.approx(2.0)
    per_request = tmp_path / "r.jsonl"
    replay_json(
        capsys,
        write_trace(tmp_path, THREE[:1]),
        "--step-table",
        str(table),
        "--per-request",
        str(per_request),
    )
    record = json.loads(per_request.read_text())
    assert record["finish_s"] == pytest.approx(2.0 + 9 * 0.5)  # 9 decode steps of one decode


@pytest.mark.parametrize(
    "content, expected",
    [
        ("[]", 'expected an object {"prefill"'),
        ('{"prefill": [[1, 1]]}', "decode: expected a non-empty list"),
        ('{"prefill": [[1, 1]], "decode": [[0, 1]]}', "decode[0]: x must be a whole number >= 1"),
        ('{"prefill": [[1.5, 1]], "decode": [[1, 1]]}', "prefill[0]: x must be a whole number"),
        ('{"prefill": [[1, 2], [2, 1]], "decode": [[1, 1]]}', "prefill[1]: seconds must not fall"),
        ('{"prefill": [[2, 1], [1, 2]], "decode": [[1, 1]]}', "prefill[1]: x must increase"),
        ('{"prefill": [[1, -1]], "decode": [[1, 1]]}', "prefill[0]: seconds must be"),
        ('{"prefill": [[1, 1]], "decode": [[1, 1]], "dec": 1}', "dec: unknown field"),
        ("{", "not JSON"),
    ],
)
def test_a_bad_step_table_is_one_line_naming_the_file_and_field(
    tmp_path, capsys, content, expected
):
    table = tmp_path / "table.json"
    table.write_text(content)
    status, out, err = run_cli(
        capsys, "replay", str(write_trace(tmp_path, THREE)), "--step-table", str(table)
    )
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and expected in err and "table.json" in err


def test_the_dynamo_step_timing_is_named_and_excludes_a_step_table(tmp_path, capsys):
    """THREE's r0 (1024 tokens) alone: 1024 tokens by Dynamo's polynomial."""
    trace = write_trace(tmp_path, THREE[:1])
    run = replay_json(capsys, trace, "--step-timing", "dynamo")
    assert run["ttft_s"]["p50"] == pytest.approx(dynamo_prefill_by_hand(1024) / 1000)
    status, out, _ = run_cli(capsys, "replay", str(trace), "--step-timing", "dynamo")
    assert status == 0 and "dynamo step time" in out.splitlines()[0]
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"prefill": [[1, 1.0]], "decode": [[1, 1.0]]}))
    status, out, err = run_cli(
        capsys, "replay", str(trace), "--step-timing", "dynamo", "--step-table", str(table)
    )
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--step-table" in err and "--step-timing dynamo" in err


def test_the_flags_are_named_after_vllms_and_streams_stays_by_name(tmp_path, capsys):
    trace = write_trace(tmp_path, THREE)
    # THREE under streams, one at a time: test_replay.test_three_requests_one_at_a_time's TTFTs.
    streams = replay_json(capsys, trace, "--service", "streams", "--max-num-seqs", "1")
    assert streams["ttft_s"]["p50"] == pytest.approx(1.0)
    # Steps with a budget of 512 tokens: r0's 1024 tokens take two chunks, still 1 s alone.
    steps = replay_json(capsys, trace, "--max-num-batched-tokens", "512", "--max-num-seqs", "1")
    assert steps["ttft_s"]["p50"] == pytest.approx(1.0)
    status, out, err = run_cli(capsys, "replay", str(trace), "--fleet", "1")
    assert "service steps (8192 tokens/step" in out.splitlines()[0] and "Python event loop" in out


# --- more memory, fewer hits ----------------------------------------------------------------------


def test_more_gpu_capacity_can_give_fewer_hits_under_timing():
    """The smallest case found (a search over traces of up to 5 requests, capacities 1..5): one host,
    blocks of 1 token, 2 running at most; r0 [1] (3 output tokens) and r1 [2] (1) at t=0, r2 [2] at 5 ms.
    With 1 block r1 cannot start beside r0 (their blocks do not fit together), so it starts when r0
    ends (0.201 s), after r2 arrived, and r2 is admitted in the same step and hits block 2. With 2 blocks
    r1 starts at once and ends at 1 ms; r0's decode KV (a full block per generated token) then evicts
    block 2, and r2 misses. Untimed, both capacities give r2 its hit: the difference is time."""
    service = ServiceModel(
        prefill_tokens_per_s=1000, decode_tokens_per_s=10, max_running=2, block_tokens=1
    )
    chains, arrivals, outputs = [[1], [2], [2]], [0, 0, 5], [3, 1, 1]

    def hits(capacity, timed=True):
        return replay_python_chains(
            chains,
            Router("round-robin", 1),
            capacity,
            "lru",
            False,
            service,
            arrivals,
            None,
            outputs,
            timed=timed,
        ).gpu_hits

    assert hits(1) == [0, 0, 1]
    assert hits(2) == [0, 0, 0]
    assert hits(1, timed=False) == hits(2, timed=False) == [0, 0, 1]


# --- --eviction vllm in steps: vLLM's scheduler on its block pool -----------------------------------


def test_hand_computed_vllm_steps_preempt_the_last_admitted_when_a_decode_needs_a_block():
    """A pool of 4 blocks of 2 tokens; r0 and r1, 4-token prompts [1, 2] and [3, 4], 4 output tokens, both
    at t=0, prefill 1000 tokens/s, a decode 0.1 s whatever the batch.
    step 1 (0.008 s): both prefill, 2 blocks each (pool full); both get their first token.
    step 2: r0's decode needs a 3rd block: r1, admitted last, is preempted (its blocks go back to the
    free queue, still hashed), r0 takes the front one (r1's block 4) and decodes; nobody is admitted.
    step 3: r0 decodes, its generated tokens fill block (0, 2), filed under that id; r1 would hit its
    block 3 but needs 2 more blocks and 1 is free: it waits.
    step 4: r0 decodes into a 4th block, evicting block 3, and ends (0.308 s).
    step 5: r1 comes back, hits nothing, recomputes its 5 tokens (prompt and first token; 0.005 s), and
    two decodes end it at 0.513 s."""
    service = ServiceModel(
        prefill_tokens_per_s=1000, decode_tokens_per_s=10, decode_growth=0.0, max_running=2
    )
    steps = []
    run = replay_python_chains(
        [[1, 2], [3, 4]],
        Router("round-robin", 1),
        4,
        "vllm",
        False,
        service,
        [0, 0],
        None,
        [4, 4],
        prompt_tokens=[4, 4],
        block_size=2,
        step_log=steps,
    )
    assert [(step.prefill_tokens, step.decodes) for step in steps] == [
        (8, 0),
        (0, 1),
        (0, 1),
        (0, 1),
        (5, 0),
        (0, 1),
        (0, 1),
    ]
    assert [step.running for step in steps][:3] == [(0, 1), (0,), (0,)]
    assert run.first_token == pytest.approx([0.008, 0.008])
    assert run.finish == pytest.approx([0.308, 0.513])
    assert run.gpu_hits == [0, 0] and run.unscheduled == []


@settings(max_examples=100, deadline=None)
@given(
    trace=engine_traces(),
    fleet=st.integers(1, 3),
    capacity=st.integers(1, 8),
    max_running=st.integers(1, 3),
    budget=st.integers(1, 40),
    data=st.data(),
)
def test_vllm_steps_keep_the_budget_and_one_at_a_time_give_the_untimed_hits(
    trace, fleet, capacity, max_running, budget, data
):
    """Every vllm step keeps its budget and sequence cap; requests 100 s apart with one output token
    (no decode KV) see the pool as the untimed run does, whatever the chunking."""
    chains, tokens = trace
    n = len(chains)
    service = ServiceModel(max_running=max_running, max_num_batched_tokens=budget)
    outputs = data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    arrivals = sorted(data.draw(st.lists(st.sampled_from((0, 50, 400)), min_size=n, max_size=n)))
    steps = []
    run = replay_python_chains(
        chains,
        Router("round-robin", fleet),
        capacity,
        "vllm",
        False,
        service,
        arrivals,
        None,
        outputs,
        prompt_tokens=tokens,
        block_size=4,
        step_log=steps,
    )
    for step in steps:
        assert step.prefill_tokens + step.decodes <= budget
        assert 1 <= len(step.running) <= max_running
    for index in range(n):
        assert run.arrival[index] <= run.start[index] <= run.first_token[index] <= run.finish[index]
    apart = replay_python_chains(
        chains,
        Router("round-robin", fleet),
        capacity,
        "vllm",
        False,
        service,
        [index * 100_000.0 for index in range(n)],
        None,
        [1] * n,
        prompt_tokens=tokens,
        block_size=4,
    )
    untimed = replay_python_chains(
        chains,
        Router("round-robin", fleet),
        capacity,
        "vllm",
        timed=False,
        prompt_tokens=tokens,
        block_size=4,
    )
    assert (apart.gpu_hits, apart.unscheduled) == (untimed.gpu_hits, untimed.unscheduled)
