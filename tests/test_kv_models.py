"""KV bytes per token from model shapes, GiB budgets in blocks, and the CLI flags that use them."""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.kv_models import CATALOG, blocks_for_gib

from .helpers import run_cli


def test_llama_70b_is_the_mooncake_papers_320_kib_per_token():
    # Mooncake (arXiv 2407.00079): 320 KB of KV per LLaMA3-70B token; 2 x 80 x 8 x 128 x 2 bytes
    assert CATALOG["llama-3.3-70b"].bytes_per_token() == 320 * 1024
    assert CATALOG["llama-3.3-70b"].bytes_per_token("fp8") == 160 * 1024


def test_mla_counts_the_latent_once_per_layer():
    # DeepSeek-V3: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes
    assert CATALOG["deepseek-v3"].bytes_per_token() == 61 * 576 * 2


def test_every_entry_cites_a_public_config():
    for model in CATALOG.values():
        assert model.source.startswith("https://huggingface.co/") and model.source.endswith(
            "config.json"
        )


def test_gib_to_blocks_rounds_down():
    # one 512-token block of Llama-3.3-70B is 160 MiB: 1 GiB holds 6.4 -> 6 blocks, 64 GiB 409.6 -> 409
    assert blocks_for_gib(1, 327680, 512) == 6
    assert blocks_for_gib(64, 327680, 512) == 409
    assert blocks_for_gib(0.1, 327680, 512) == 0


def write_instance(tmp_path, block_size=4):
    data = {
        "format": "pyverify.instance/1",
        "name": "tiny",
        "hosts": 2,
        "block_size_tokens": block_size,
        "requests": [
            {"blocks": [1, 2], "host": 0, "input_tokens": 6},
            {"blocks": [1, 2], "host": 1, "input_tokens": 7},
            {"blocks": [1, 3], "host": 0, "input_tokens": 8},
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return path


def test_capacity_gib_with_bytes_per_token(capsys, tmp_path):
    path = write_instance(tmp_path)
    # 2 blocks of 4 tokens x 2**27 bytes = 2**30 bytes: 1 GiB holds exactly 2 blocks
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(path),
        "--model",
        "pooled",
        "--capacity-gib",
        "1",
        "--kv-bytes-per-token",
        str(2**27),
        "--json",
    )
    assert status == 0, err
    result = json.loads(out)
    assert result["capacity"] == 2
    # pooled: (1,2) miss both; (1,2) hits 2 blocks = 4 + 3 tokens; (1,3) hits 1 block = 4 tokens
    assert result["measured"]["block_hits"] == 3
    assert result["measured"]["token_hits"] == 11
    assert result["measured"]["tokens"] == 21


def test_sweep_prints_block_and_token_hit_rates(capsys, tmp_path):
    path = write_instance(tmp_path)
    status, out, err = run_cli(
        capsys, "sweep", str(path), "--fleets", "2", "--warmup-fraction", "0.5"
    )
    assert status == 0, err
    assert "(blocks)" in out and "(tokens)" in out
    assert "requests 1..2" in out


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--capacity-gib", "1"], "--capacity-gib: needs --kv-model"),
        (["--capacity-gib", "1", "--kv-model", "gpt-17"], "unknown model 'gpt-17'"),
        (["--capacity-gib", "0.000001", "--kv-model", "llama-3.3-70b"], "less than one block"),
    ],
)
def test_bad_capacity_options_are_one_line(capsys, tmp_path, argv, expected):
    path = write_instance(tmp_path)
    status, out, err = run_cli(capsys, "sweep", str(path), *argv)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and expected in err


def test_inconsistent_prompt_length_names_file_and_field(capsys, tmp_path):
    path = write_instance(tmp_path)
    data = json.loads(path.read_text())
    data["requests"][1]["input_tokens"] = 3  # two blocks of 4 tokens need more than 4
    path.write_text(json.dumps(data))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert status == 2 and out == ""
    assert (
        err.strip()
        == f"pyverify simulate: error: {path}: requests[1].input_tokens: 3 tokens cannot fill 2 blocks of 4 tokens (needs more than 4)"
    )


def test_budgets_command_equals_per_capacity_simulate(capsys, tmp_path):
    path = write_instance(tmp_path)
    # 2**27 bytes/token x 4 tokens = 0.5 GiB per block: budgets 0.5, 1, 2 GiB are 1, 2, 4 blocks
    status, out, err = run_cli(
        capsys,
        "budgets",
        str(path),
        "--kv-bytes-per-token",
        str(2**27),
        "--budgets-gib",
        "0.5,1,2",
        "--eviction",
        "lru,tail-first,fifo,leaf-lru",
        "--json",
    )
    assert status == 0, err
    points = json.loads(out)["points"]
    for policy, rows in points.items():
        assert [row["capacity_blocks"] for row in rows] == [1, 2, 4]
        for row in rows:
            status, sim_out, err = run_cli(
                capsys,
                "simulate",
                str(path),
                "--model",
                "pooled",
                "--capacity",
                str(row["capacity_blocks"]),
                "--eviction",
                policy,
                "--json",
            )
            measured = json.loads(sim_out)["measured"]
            assert (row["block_hits"], row["token_hits"]) == (
                measured["block_hits"],
                measured["token_hits"],
            ), (policy, row)


def test_budgets_needs_a_kv_size(capsys, tmp_path):
    status, out, err = run_cli(capsys, "budgets", str(write_instance(tmp_path)))
    assert status == 2 and out == "" and "--kv-model" in err


def test_the_issues_command_prints_block_and_token_hit_rates(capsys):
    from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE

    trace = MOONCAKE_SYNTHETIC
    if not trace.exists():
        pytest.skip(NO_MOONCAKE)
    status, out, err = run_cli(
        capsys,
        "sweep",
        str(trace),
        "--capacity-gib",
        "64",
        "--model-kv",
        "llama-3.3-70b",
        "--fleets",
        "2",
    )
    assert status == 0, err
    assert "409 blocks" in out and "(blocks)" in out and "(tokens)" in out


def test_budgets_help_and_behaviour_agree_that_kv_size_is_required(capsys, tmp_path):
    path = write_instance(tmp_path)
    status, out, err = run_cli(capsys, "budgets", str(path))
    assert (status, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert (
        "one of the arguments --kv-model/--model-kv --kv-model-config --kv-bytes-per-token is required"
        in err
    )
    status, out, _ = run_cli(capsys, "budgets", "--help")
    assert (
        status == 0
        and "(--kv-model NAME | --kv-model-config PATH | --kv-bytes-per-token BYTES)"
        in " ".join(out.split())
    )
    status, out, _ = run_cli(capsys, "sweep", "--help")  # optional where a command runs without it
    assert "[--kv-model NAME | --kv-model-config PATH | --kv-bytes-per-token BYTES]" in " ".join(
        out.split()
    )
