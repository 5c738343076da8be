"""replay's --host-capacity and --pool-capacity take blocks, tokens or GiB, as the GPU tier does (one parser)."""

from __future__ import annotations

import json

import pytest

from .helpers import run_cli


@pytest.fixture
def trace(tmp_path):
    """Blocks of 512 tokens (Mooncake's), 20 requests."""
    path = tmp_path / "timed.jsonl"
    records = [
        {
            "timestamp": 100 * i,
            "input_length": 2000,
            "output_length": 8,
            "hash_ids": [1, 2 + i % 7, 100 + 10 * (i % 7) + i % 5],
        }
        for i in range(20)
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)


def runs(capsys, trace, *flags):
    status, out, err = run_cli(capsys, "replay", trace, "--capacity", "1", "--json", *flags)
    assert status == 0, err
    result = json.loads(out)
    return (
        result["host_capacity"],
        result["pool_capacity"],
        [run["hit_rate_by_tier"] for run in result["runs"]],
    )


@pytest.mark.parametrize("flag", ["--host-capacity", "--pool-capacity"])
@pytest.mark.parametrize(
    "sized, blocks",
    [
        (["1024tokens"], "2"),
        (["1500 tokens"], "2"),  # rounded down to whole blocks, as --capacity-tokens is
        (["1GiB", "--kv-bytes-per-token", "1048576"], "2"),  # 2**30 / (2**20 x 512) = 2 blocks
        (["3blocks"], "3"),
    ],
)
def test_a_tier_in_tokens_or_gib_is_the_same_tier_in_blocks(capsys, trace, flag, sized, blocks):
    kv = sized[1:]
    assert runs(capsys, trace, flag, sized[0], *kv) == runs(capsys, trace, flag, blocks, *kv)
    host, pool, _ = runs(capsys, trace, flag, sized[0], *kv)
    assert (host if flag == "--host-capacity" else pool) == int(blocks)


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--host-capacity", "64GiB"],
            "pyverify replay: error: --host-capacity 64 GiB: needs --kv-model NAME, --kv-model-config",
        ),
        (
            ["--pool-capacity", "64GB"],
            "unknown unit 'GB'; choose from: blocks, tokens, GiB (did you mean 'GiB'?)",
        ),
        (
            ["--pool-capacity", "1e300GiB", "--kv-model", "llama-3.1-8b"],
            "--pool-capacity: expected a number of GiB",
        ),
        (
            ["--host-capacity", "100tokens"],
            "--host-capacity: 100 tokens is less than one block of 512 tokens",
        ),
    ],
)
def test_a_tier_size_that_cannot_be_blocks_is_one_line(capsys, trace, argv, words):
    status, out, err = run_cli(capsys, "replay", trace, "--capacity", "1", *argv)
    assert (status, out) == (2, "") and len(err.strip().splitlines()) == 1 and words in err, err
