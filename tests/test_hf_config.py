"""A Hugging Face config.json as the KV model (--kv-model-config), on configs shaped as the Hub publishes them."""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.hf_config import read_config
from pyverify.inputs.kv_models import CATALOG, kv_size

from .helpers import assert_one_line_error, run_cli

#: meta-llama/Llama-3.2-1B-Instruct's config.json (the fields that matter).
LLAMA_1B = {
    "architectures": ["LlamaForCausalLM"],
    "head_dim": 64,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "num_hidden_layers": 16,
    "num_key_value_heads": 8,
    "torch_dtype": "bfloat16",
    "model_type": "llama",
}
#: deepseek-ai/DeepSeek-V2-Lite's MLA fields.
DEEPSEEK_V2_LITE = {
    "model_type": "deepseek_v2",
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "hidden_size": 2048,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "torch_dtype": "bfloat16",
}


def config(tmp_path, data, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_a_dense_config_gives_the_catalogs_bytes(tmp_path):
    path = config(tmp_path, LLAMA_1B)
    assert (
        kv_size(None, None, None, path).bytes_per_token
        == CATALOG["llama-3.2-1b"].bytes_per_token()
        == 2 * 16 * 8 * 64 * 2
    )
    assert (
        kv_size(None, "fp8", None, path).bytes_per_token == 2 * 16 * 8 * 64
    )  # --kv-dtype wins over torch_dtype


def test_head_dim_from_hidden_size_and_kv_heads_from_attention_heads(tmp_path):
    data = {
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "hidden_size": 512,
        "torch_dtype": "float32",
    }
    shape = read_config(config(tmp_path, data))
    assert (shape.kv_heads, shape.head_dim) == (8, 64)
    assert kv_size(None, None, None, config(tmp_path, data)).bytes_per_token == 2 * 4 * 8 * 64 * 4


def test_mla(tmp_path):
    path = config(tmp_path, DEEPSEEK_V2_LITE)
    assert (
        kv_size(None, None, None, path).bytes_per_token
        == 27 * 576 * 2
        == CATALOG["deepseek-v2-lite"].bytes_per_token()
    )
    assert "MLA: 27 layers x 576 latent" in kv_size(None, None, None, path).source


def test_hybrid_layers_count_only_full_attention(tmp_path):
    types = (["sliding_attention"] * 5 + ["full_attention"]) * 10 + ["sliding_attention"] * 2
    data = {
        "text_config": {
            "num_hidden_layers": 62,
            "num_attention_heads": 32,
            "num_key_value_heads": 16,
            "head_dim": 128,
            "sliding_window": 1024,
            "layer_types": types,
        },
        "torch_dtype": "bfloat16",
    }
    size = kv_size(None, None, None, config(tmp_path, data))
    assert size.bytes_per_token == 2 * 10 * 16 * 128 * 2 == CATALOG["gemma-3-27b"].bytes_per_token()
    assert (
        "10 of 62 layers (only those keep a full KV cache; the other 52 are sliding_attention)"
        in size.source
    )


def test_sliding_window_pattern_and_qwen2_rules(tmp_path):
    gemma = {
        "num_hidden_layers": 12,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "sliding_window": 512,
        "sliding_window_pattern": 6,
    }
    assert read_config(config(tmp_path, gemma)).full_layers == 2
    qwen = {
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "hidden_size": 3584,
        "sliding_window": 131072,
        "use_sliding_window": False,
        "max_window_layers": 28,
    }
    assert read_config(config(tmp_path, qwen)).full_layers == 28


def test_the_shape_is_said_in_simulate_output(capsys, tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"block_size": 64, "hash_ids": [1, 2], "input_length": 128}\n')
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(trace),
        "--model",
        "pooled",
        "--capacity-gib",
        "1",
        "--kv-model-config",
        config(tmp_path, LLAMA_1B),
        "--json",
    )
    assert status == 0, err
    size = json.loads(out)["cache_size"]
    assert (
        size["kv_bytes_per_token"] == 32768
        and "2 x 16 layers x 8 KV heads x 64 head dim" in size["kv_bytes_source"]
    )
    assert size["capacity_blocks"] == 2**30 // (32768 * 64)


BAD = [
    (
        {**LLAMA_1B, "num_hidden_layers": None},
        "num_hidden_layers: missing: needed for the KV bytes per token",
    ),
    ({k: v for k, v in LLAMA_1B.items() if k != "num_hidden_layers"}, "num_hidden_layers: missing"),
    (
        {**LLAMA_1B, "num_key_value_heads": "8"},
        "num_key_value_heads: expected a whole number from 1 to",
    ),
    (
        {**LLAMA_1B, "num_key_value_heads": 2**40},
        "num_key_value_heads: expected a whole number from 1 to",
    ),
    (
        {**LLAMA_1B, "head_dim": None, "hidden_size": 2050},
        "hidden_size: 2050 is not a multiple of num_attention_heads 32",
    ),
    ({**LLAMA_1B, "torch_dtype": "int3"}, "torch_dtype: unknown dtype 'int3'"),
    ({**DEEPSEEK_V2_LITE, "qk_rope_head_dim": None}, "qk_rope_head_dim: missing"),
    (
        {**LLAMA_1B, "layer_types": ["full_attention"] * 3},
        "layer_types: expected a list of 16 layer types",
    ),
    (
        {**LLAMA_1B, "layer_types": ["full_attention"] * 15 + ["mamba"]},
        "layer_types[15]: unknown layer type 'mamba'",
    ),
    (
        {**LLAMA_1B, "layer_types": ["sliding_attention"] * 16},
        "layer_types: no layer keeps a full KV cache",
    ),
    (
        {**LLAMA_1B, "sliding_window": 4096},
        "sliding_window: every layer slides over 4096 tokens: no layer keeps a full KV cache",
    ),
    (
        {**LLAMA_1B, "sliding_window": "4k"},
        "sliding_window: expected a whole number of tokens or null",
    ),
    ([1, 2], "expected a Hugging Face config.json (a JSON object), got list"),
]


@pytest.mark.parametrize("data, expected", BAD)
def test_bad_configs_are_one_line(capsys, tmp_path, data, expected):
    path = config(tmp_path, data)
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hash_ids": [1]}\n')
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(trace),
        "--model",
        "pooled",
        "--capacity-gib",
        "1",
        "--kv-model-config",
        path,
    )
    assert_one_line_error(status, out, err, path, expected)


@pytest.mark.parametrize("text", ["{", "", "\xff", '{"a": NaN}'])
def test_unreadable_configs_are_one_line(capsys, tmp_path, text):
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape") if text != "\xff" else b"\xff")
    status, out, err = run_cli(
        capsys, "budgets", str(tmp_path / "t.jsonl"), "--kv-model-config", str(path)
    )
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_a_missing_config_is_one_line(capsys, tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hash_ids": [1]}\n')
    status, out, err = run_cli(
        capsys, "budgets", str(trace), "--kv-model-config", str(tmp_path / "nope.json")
    )
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1 and "nope.json" in err
