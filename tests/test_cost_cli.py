"""``pyverify cost`` as a user meets it: real numbers checked by hand, one-line errors."""

from __future__ import annotations

import json

import pytest

from pyverify.cost.reuse import reuse_report

from .conftest import LAB_INSTANCE, MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .helpers import run_cli

# host 0 sees [1,2] twice; host 1 sees [1,3].
SMALL = {
    "format": "pyverify.instance/1",
    "name": "small",
    "hosts": 2,
    "requests": [
        {"blocks": [1, 2], "host": 0},
        {"blocks": [1, 3], "host": 1},
        {"blocks": [1, 2], "host": 0},
    ],
}

# The cited defaults, written out so the tests redo the arithmetic by hand.
K = 327680  # bytes/token
R = 5000 / 0.40677  # tokens/s per host (2 GPUs x 5000/0.40677/2)
LATENCY = 0.001  # s


def cost_json(capsys, *argv):
    status, out, err = run_cli(capsys, "cost", *argv, "--json")
    assert status == 0, err
    return json.loads(out)


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    return str(path)


def test_small_instance_by_hand(capsys, small):
    # per-host hits (0, 0, 2); pooled hits (0, 1, 2): request 1 fetches block 1 (512 tokens).
    result = cost_json(capsys, small)
    assert result["tokens"] == {
        "prompt_tokens": 3072,
        "local_hit_tokens": 1024,
        "fetched_tokens": 512,
        "recomputed_tokens_per_host": 2048,
        "recomputed_tokens_pooled": 1536,
        "requests_that_fetch": 1,
    }
    saved = 512 / R
    transfer = 512 * K / 87e9 + LATENCY
    assert result["net_total_s"] == pytest.approx(saved - transfer, rel=1e-12)
    assert result["distributions"]["prefill_time_saved"]["total_s"] == pytest.approx(
        saved, rel=1e-12
    )
    assert result["break_even"]["bandwidth_gb_s"] == pytest.approx(
        512 * K / ((saved - LATENCY) * 1e9), rel=1e-12
    )
    assert result["verdict"] == "pool pays"
    assert result["reuse"]["repeat_share"] == pytest.approx(1 - 3 / 6)
    assert result["reuse"]["per_host_repeat_share"] == pytest.approx(1 - 4 / 6)


def test_changing_one_param_changes_the_result_as_the_formulas_say(capsys, small):
    base = cost_json(capsys, small)
    slower = cost_json(capsys, small, "--param", "pool_bandwidth_gb_s=2.5")
    # only the transfer term changes: 512 tokens x K bytes at 2.5e9 B/s, plus one latency
    assert slower["net_total_s"] == pytest.approx(512 / R - (512 * K / 2.5e9 + LATENCY), rel=1e-12)
    assert slower["verdict"] == "pool loses"  # 2.5 GB/s is below k x R = 4.03 GB/s
    assert (
        slower["distributions"]["prefill_time_saved"] == base["distributions"]["prefill_time_saved"]
    )
    assert slower["break_even"]["bandwidth_gb_s"] == base["break_even"]["bandwidth_gb_s"]
    # more GPUs per host: R doubles, the saving halves, the break-even (k x R, plus latency) rises
    wider = cost_json(capsys, small, "--param", "gpus_per_host=4", "--param", "fetch_latency_ms=0")
    assert wider["net_total_s"] == pytest.approx(512 / (2 * R) - 512 * K / 87e9, rel=1e-12)
    assert wider["break_even"]["bandwidth_gb_s"] == pytest.approx(K * 2 * R / 1e9, rel=1e-12)
    # block size (this instance gives none): 100 tokens per block
    blocks = cost_json(capsys, small, "--param", "block_tokens=100")
    assert (
        blocks["tokens"]["fetched_tokens"] == 100
        and blocks["block_tokens_source"] == "--param block_tokens"
    )


def test_lab_instance(capsys):
    result = cost_json(capsys, str(LAB_INSTANCE))
    # The seed's figures at 16 hosts: pooled 0.9375 (480 hits), per-host 0.3398 (174 hits) of 512.
    assert (
        result["hit_rate"]["pooled"] == 0.9375
        and round(result["hit_rate"]["per_host"], 4) == 0.3398
    )
    fetched_blocks = 480 - 174
    assert result["tokens"]["fetched_tokens"] == fetched_blocks * 512  # the default block_tokens
    assert result["tokens"]["requests_that_fetch"] == fetched_blocks  # every request is one block
    saved = fetched_blocks * 512 / R
    assert result["net_total_s"] == pytest.approx(
        saved - fetched_blocks * (512 * K / 87e9 + LATENCY), rel=1e-12
    )
    assert result["break_even"]["bandwidth_gb_s"] == pytest.approx(
        fetched_blocks * 512 * K / ((saved - fetched_blocks * LATENCY) * 1e9), rel=1e-12
    )
    assert (
        result["reuse"]["repeat_share"] == 0.9375
        and result["reuse"]["rule_of_thumb"]["at_or_above"]
    )
    assert result["block_tokens_source"].startswith("an assumption")
    # folded onto 2 hosts the per-host caches get closer to the pool: less to fetch
    folded = cost_json(capsys, str(LAB_INSTANCE), "--fleet", "2")
    assert folded["routing"] == "fold" and folded["hit_rate"]["per_host"] == 0.875
    assert folded["tokens"]["fetched_tokens"] == (480 - 448) * 512


def test_text_report_says_what_it_leaves_out(capsys, small, tmp_path):
    chart = tmp_path / "cost.png"
    status, out, err = run_cli(
        capsys, "cost", small, "--sweep", "pool_bandwidth_gb_s=1:9:3", "--chart", str(chart)
    )
    assert status == 0, err
    for phrase in (
        "repeat share",
        "30% rule of thumb",
        "assumption",
        "break-even",
        "queueing",
        "contention",
        "eviction, unless a capacity is given",
        "overlap of compute and transfer",
        "the conclusion changes as pool_bandwidth_gb_s varies: between 1 (pool loses) and 5 (pool pays)",
    ):
        assert phrase in out
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"chart: {chart}" in out


def test_models(capsys, small):
    per_host = cost_json(capsys, small, "--model", "per-host")
    assert set(per_host["distributions"]) == {"ttft_per_host"}
    assert "break_even" not in per_host and "fetched_tokens" not in per_host["tokens"]
    pooled = cost_json(capsys, small, "--model", "pooled")
    assert "ttft_per_host" not in pooled["distributions"] and "break_even" in pooled


def test_capacity(capsys, tmp_path):
    # per-host capacity 1: host 0 keeps block 1; the pool (capacity 1) loses it to block 2.
    data = {
        "format": "pyverify.instance/1",
        "name": "cap",
        "hosts": 2,
        "requests": [
            {"blocks": [1], "host": 0},
            {"blocks": [2], "host": 1},
            {"blocks": [1], "host": 0},
        ],
    }
    path = tmp_path / "cap.json"
    path.write_text(json.dumps(data))
    result = cost_json(capsys, str(path), "--capacity", "1", "--pool-capacity", "1")
    assert result["tokens"]["local_hit_tokens"] == 512 and result["tokens"]["fetched_tokens"] == 0
    assert result["break_even"]["status"] == "no fetches"
    default_pool = cost_json(capsys, str(path), "--capacity", "1")
    assert default_pool["pool_capacity"] == 2  # capacity x fleet


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--param", "speed=3"], "unknown parameter 'speed'; known parameters: kv_bytes_per_token"),
        (["--param", "pool_bandwidth_gb_s=fast"], "expected a number, got 'fast'"),
        (["--param", "pool_bandwidth_gb_s=-1"], "must be greater than 0"),
        (["--param", "prefill_tokens_per_s_per_gpu=0"], "must be greater than 0"),
        (["--sweep", "pool_bandwidth_gb_s=1:10"], "malformed range"),
        (["--sweep", "pool_bandwidth_gb_s=10:1:3"], "LO must be less than HI"),
        (
            ["--sweep", "pool_bandwidth_gb_s=1:2:3", "--param", "pool_bandwidth_gb_s=3"],
            "also set by --param",
        ),
        (["--routing", "given", "--fleet", "3"], "routing policy 'given' works only"),
        (["--chart", "x.gif"], "unsupported file type '.gif'"),
        (["--model", "per-host", "--pool-capacity", "3"], "the per-host model has no pool"),
    ],
)
def test_bad_input_is_one_line_exit_2_no_output(capsys, small, tmp_path, argv, message):
    chart = tmp_path / "never.png"
    status, out, err = run_cli(
        capsys, "cost", small, *argv, *([] if "--chart" in argv else ["--chart", str(chart)])
    )
    assert status == 2
    assert out == ""
    assert message in err and err.count("\n") == 1
    assert not chart.exists() and list(tmp_path.iterdir()) == [tmp_path / "small.json"]


def test_reuse_report_by_hand():
    chains = [(1, 2), (1, 3), (1, 2), (4,)]
    report = reuse_report(chains, [0, 1, 0, 2], hosts=4)
    assert (report.references, report.distinct) == (7, 4)
    assert report.repeat_share == pytest.approx(3 / 7)
    # host 0: 4 refs, 2 distinct; host 1: 2 refs, 2 distinct; host 2: 1 ref, 1 distinct; host 3 idle
    assert [h.repeat_share for h in report.hosts] == [0.5, 0.0, 0.0, None]
    assert report.per_host_repeat_share == pytest.approx(1 - 5 / 7)
    assert report.pooling_can_add == pytest.approx(3 / 7 - 2 / 7)
    assert report.above_rule_of_thumb  # 42.9% >= 30%
    low = reuse_report([(1,), (2,), (3,), (1,)], [0, 0, 0, 0], hosts=1)
    assert low.repeat_share == 0.25 and not low.above_rule_of_thumb
    assert "below the 30% rule of thumb" in low.rule_sentence()
    assert (
        "assumption" in low.rule_sentence() and "can add no hits" in low.rule_sentence()
    )  # one host: nothing to pool
    spread = reuse_report([(1,), (2,), (3,), (4,), (1,)], [0, 1, 0, 1, 1], hosts=2)
    assert (
        spread.pooling_can_add == pytest.approx(0.2)
        and "pooling benefits are limited" in spread.rule_sentence()
    )


# --- the Mooncake synthetic trace (skipped when ../shared is absent) -------------

MOONCAKE = MOONCAKE_SYNTHETIC
needs_mooncake = pytest.mark.skipif(not MOONCAKE.exists(), reason=NO_MOONCAKE)


@needs_mooncake
def test_mooncake_trace(capsys, tmp_path):
    records = [json.loads(line) for line in MOONCAKE.read_text().splitlines() if line.strip()]
    chart = tmp_path / "mooncake-cost.png"
    result = cost_json(capsys, str(MOONCAKE), "--chart", str(chart))
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The README's facts: 3,993 requests, 121,877 block references, 43,924 distinct ids.
    assert (
        result["requests"],
        result["reuse"]["block_references"],
        result["reuse"]["distinct_blocks"],
    ) == (3993, 121877, 43924)
    assert result["reuse"]["repeat_share"] == pytest.approx(1 - 43924 / 121877, rel=1e-12)
    assert result["hit_rate"]["pooled"] == pytest.approx(
        1 - 43924 / 121877, rel=1e-12
    )  # the uncapacitated pool reaches the ceiling
    assert (result["fleet_size"], result["routing"], result["block_tokens"]) == (
        16,
        "round-robin",
        512,
    )
    assert result["tokens"]["prompt_tokens"] == sum(r["input_length"] for r in records)
    tokens = result["tokens"]
    fetched, fetching = tokens["fetched_tokens"], tokens["requests_that_fetch"]
    assert (
        tokens["local_hit_tokens"] + fetched + tokens["recomputed_tokens_pooled"]
        == tokens["prompt_tokens"]
    )
    assert result["net_total_s"] == pytest.approx(
        fetched / R - fetching * LATENCY - fetched * K / 87e9, rel=1e-9
    )
    # the break-even sits just above k x R: the fixed latency is small against 512-token fetches
    assert K * R / 1e9 < result["break_even"]["bandwidth_gb_s"] < 1.01 * K * R / 1e9
    assert result["verdict"] == "pool pays"


@needs_mooncake
def test_mooncake_trace_with_prefix_affinity_routing_leaves_the_pool_nothing(capsys):
    # A cache-aware router on 16 uncapacitated hosts already reaches the ceiling:
    # routing and pooling answer the same waste from two sides (the first seed).
    result = cost_json(capsys, str(MOONCAKE), "--routing", "prefix-affinity")
    assert result["hit_rate"]["per_host"] == result["hit_rate"]["pooled"]
    assert result["break_even"]["status"] == "no fetches" and result["net_total_s"] == 0


@pytest.fixture
def conversation(tmp_path):
    """Growing conversations over one shared first block, 512-token blocks (a Mooncake trace)."""
    from .test_mrc_cli import conversations

    path = tmp_path / "conv.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": i,
                    "input_length": 512 * len(c),
                    "output_length": 1,
                    "hash_ids": list(c),
                }
            )
            + "\n"
            for i, c in enumerate(conversations(seed=5, requests=200))
        )
    )
    return str(path)


def test_pooling_bound_uses_the_capacity_and_every_hit_rate_says_what_it_assumes(
    capsys, conversation
):
    result = cost_json(capsys, conversation, "--capacity", "2")
    reuse, bound = result["reuse"], result["pooling_can_add_at_most"]
    # a pool cannot pass the ceiling; per-host caches of 2 blocks hit less than uncapacitated ones
    assert bound["value"] == pytest.approx(reuse["repeat_share"] - result["hit_rate"]["per_host"])
    assert (
        bound["value"] > reuse["pooling_can_add"]
    )  # the uncapacitated difference understates it here
    assert "capacity 2 blocks per host" in bound["assumes"] and "uncapacitated" in reuse["assumes"]
    assert result["hit_rate"]["pooled"] - result["hit_rate"]["per_host"] <= bound["value"] + 1e-12
    status, out, err = run_cli(capsys, "cost", conversation, "--capacity", "2")
    assert "per-host caches on this routing, uncapacitated" in out
    assert (
        "per-host caches, 2 blocks per host (lru)" in out
        and f"{result['hit_rate']['per_host']:.4f}" in out
    )
    assert (
        "pooling can add at most" in out
        and f"{bound['value']:.4f}  (capacity 2 blocks per host" in out
    )
    assert "block hit rate (2 blocks per host, pool 32 blocks, lru): per-host" in out

    uncapacitated = cost_json(capsys, conversation)
    assert (
        uncapacitated["pooling_can_add_at_most"]["value"]
        == uncapacitated["reuse"]["pooling_can_add"]
    )
    assert uncapacitated["pooling_can_add_at_most"]["assumes"].startswith("uncapacitated")


def test_prefill_rate_says_when_it_is_not_the_kv_model(capsys, conversation):
    status, out, err = run_cli(
        capsys, "cost", conversation, "--capacity-gib", "1", "--kv-model", "llama-3.1-8b"
    )
    assert status == 0, err
    assert (
        "NOTE: the prefill rate is not tied to --kv-model llama-3.1-8b: it was measured on llama-3.3-70b"
        in out
    )
    assert (
        "not tied"
        in cost_json(capsys, conversation, "--kv-bytes-per-token", "1000")["prefill_rate_model"][
            "note"
        ]
    )
    for same_or_set in (
        ["--kv-model", "llama-3.3-70b"],
        ["--kv-model", "llama-3.1-8b", "--param", "prefill_tokens_per_s_per_gpu=20000"],
        [],
    ):
        result = cost_json(capsys, conversation, *same_or_set)
        assert result["prefill_rate_model"]["note"] is None, same_or_set


def test_block_tokens_given_by_the_input_is_not_called_an_assumption(capsys, conversation, small):
    source = cost_json(capsys, conversation)["params"]["block_tokens"]["source"]
    assert "given by the input" in source and "assumption" not in source
    assert (
        "assumption" in cost_json(capsys, small)["params"]["block_tokens"]["source"]
    )  # the lab-style instance gives none


def test_token_id_input_is_not_said_to_have_a_partial_last_block(capsys, tmp_path):
    path = tmp_path / "tokens.jsonl"
    path.write_text(
        "".join(json.dumps({"prompt_token_ids": list(range(40))}) + "\n" for _ in range(3))
    )
    result = cost_json(capsys, str(path), "--block-size", "16")
    assert "last block partial" not in result["prompt_tokens_from"]
    assert "tokens past the last block are always recomputed" in result["prompt_tokens_from"]
