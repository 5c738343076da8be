"""Flags past what a run can hold: one line and exit 2, never a traceback or a NaN.

Each case reproduces a tester's report: a capacity past 64 bits reached the
compiled kernels ("Int value is too large") or ``math.floor`` of an infinity
(``OverflowError``); a huge prefix-affinity slack made the router find no host
(``ValueError``); a ``config.json`` whose ``torch_dtype`` is an object or a
list was looked up in a dict (``TypeError: unhashable type``); a huge arrival
scale gave NaN latencies; a sample rate that samples nothing estimated a hit
rate of 1.
"""

from __future__ import annotations

import json

import pytest

from ..conftest import REPO
from ..helpers import run_cli
from .conftest import record

INSTANCE = str(REPO / "instances" / "lab-512x32x16.json")
PAST_INT64 = "99999999999999999999999"
KV = ("--kv-model", "llama-3.1-8b")


@pytest.fixture
def trace(tmp_path):
    """A small timed Mooncake trace (replay needs timestamps)."""
    path = tmp_path / "timed.jsonl"
    records = [
        {
            "timestamp": 100 * i,
            "input_length": 2000,
            "output_length": 8,
            "hash_ids": [1, 2, 3 + i % 5],
        }
        for i in range(40)
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)


#: (argv with TRACE for the timed trace, a word the one line must hold).
CASES = [
    (["simulate", INSTANCE, "--capacity", PAST_INT64], "--capacity"),
    (["simulate", "TRACE", "--capacity-tokens", PAST_INT64], "--capacity-tokens"),
    (["simulate", "TRACE", "--capacity-gib", "1e20", *KV], "--capacity-gib"),
    (["simulate", "TRACE", "--capacity-gib", "1e300", *KV], "--capacity-gib"),
    (
        ["simulate", INSTANCE, "--capacity-gib", "1", "--kv-bytes-per-token", "1e-300"],
        "--kv-bytes-per-token",
    ),
    # Bounded flags whose quotient is still too many blocks: refused once the input's block size is known.
    (
        ["simulate", "TRACE", "--capacity-gib", "1000000", "--kv-bytes-per-token", "1"],
        "GiB holds more than",
    ),
    (["sweep", INSTANCE, "--capacity", PAST_INT64], "--capacity"),
    (["sweep", "TRACE", "--capacity-tokens", PAST_INT64], "--capacity-tokens"),
    (["cost", INSTANCE, "--capacity", PAST_INT64], "--capacity"),
    (["cost", "TRACE", "--capacity-gib", "1e300", *KV], "--capacity-gib"),
    (["cost", INSTANCE, "--pool-capacity", PAST_INT64], "--pool-capacity"),
    (["budgets", INSTANCE, "--budgets-gib", "1e300", *KV], "--budgets-gib"),
    (["mrc", INSTANCE, "--capacities", f"1,{PAST_INT64}"], "--capacities"),
    (["certify", INSTANCE, "--capacity", PAST_INT64], "--capacity"),
    (["replay", "TRACE", "--capacity", "18446744073709551616"], "--capacity"),
    (["replay", "TRACE", "--capacity-tokens", "18446744073709551616"], "--capacity-tokens"),
    (["replay", "TRACE", "--capacity-gib", "1e300", *KV], "--capacity-gib"),
    (["replay", "TRACE", "--host-capacity", "18446744073709551616"], "--host-capacity"),
    (["replay", "TRACE", "--pool-capacity", "18446744073709551616"], "--pool-capacity"),
    (
        ["replay", "TRACE", "--router", "prefix-affinity", "--affinity-slack", "1e308"],
        "--affinity-slack",
    ),
    (
        ["simulate", INSTANCE, "--routing", "prefix-affinity", "--affinity-slack", "1e308"],
        "--affinity-slack",
    ),
    (["replay", "TRACE", "--arrival-scale", "1e300"], "--arrival-scale"),
    (["replay", "TRACE", "--prefill-tokens-per-s", "1e-300"], "--prefill-tokens-per-s"),
    (["replay", "TRACE", "--decode-tokens-per-s", "1e300"], "--decode-tokens-per-s"),
    # cost's model parameters: a block of 1e20 tokens passed C's long, a prefill rate of 1e-300 divided by zero.
    (["cost", INSTANCE, "--param", "block_tokens=1e20"], "block_tokens: must be from 1 to"),
    (
        ["cost", INSTANCE, "--param", "prefill_tokens_per_s_per_gpu=1e-300"],
        "prefill_tokens_per_s_per_gpu: must be from",
    ),
    (["cost", INSTANCE, "--param", "gpus_per_host=1e30"], "gpus_per_host: must be from 1 to"),
    (
        ["cost", INSTANCE, "--sweep", "pool_bandwidth_gb_s=1e-300:1:3"],
        "pool_bandwidth_gb_s: must be from",
    ),
]


@pytest.mark.parametrize(
    "argv, word", CASES, ids=[" ".join(argv[:1] + argv[2:])[:60] for argv, _ in CASES]
)
def test_a_flag_past_its_bound_is_one_line(capsys, trace, argv, word):
    status, out, err = run_cli(capsys, *[trace if arg == "TRACE" else arg for arg in argv])
    lines = err.strip().splitlines()
    ok = (
        status == 2
        and out == ""
        and len(lines) == 1
        and word in lines[0]
        and "Traceback" not in err
    )
    record("flag bound", ok)
    assert ok, (status, out[-300:], err[-800:])


#: A config.json's dtype that is not a name: every place it may sit, and every shape that is not a string.
DTYPE_CASES = [
    (key, nested, value)
    for key in ("torch_dtype", "dtype")
    for nested in (False, True)
    for value in ({}, {"a": 1}, [], ["bfloat16"])
]


@pytest.mark.parametrize("key, nested, value", DTYPE_CASES)
def test_a_config_dtype_that_is_not_a_name_is_one_line(capsys, tmp_path, key, nested, value):
    shape = {
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 2048,
        key: value,
    }
    data = {"text_config": shape} if nested else shape
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data))
    status, out, err = run_cli(
        capsys, "simulate", INSTANCE, "--capacity-gib", "1", "--kv-model-config", str(config)
    )
    lines = err.strip().splitlines()
    field = f"{'text_config.' if nested else ''}{key}"
    ok = (
        status == 2
        and out == ""
        and len(lines) == 1
        and f"{config}: {field}: expected a dtype name" in lines[0]
    )
    record("flag bound", ok)
    assert ok, err[-800:]


def test_print_json_refuses_a_number_that_is_not_finite(capsys):
    from pyverify.commands.output import print_json
    from pyverify.errors import UserError

    with pytest.raises(UserError, match="not finite"):
        print_json({"ttft_p50_s": float("nan")})
    assert capsys.readouterr().out == ""


def test_a_sample_that_takes_no_block_is_refused(capsys):
    """mrc --sample-rate 1e-6 sampled no block and printed an estimated hit rate of 1.0 (the ceiling is far lower)."""
    status, out, err = run_cli(capsys, "mrc", INSTANCE, "--sample-rate", "1e-9")
    lines = err.strip().splitlines()
    ok = status == 2 and out == "" and len(lines) == 1 and "the sample took none of the" in lines[0]
    record("flag bound", ok)
    assert ok, (out[-300:], err[-300:])
