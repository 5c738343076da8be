"""KV-cache bytes per token from a model's shape, and a small catalog of open models.

Engines size prefix caches in GiB of KV memory; pyverify's caches count
blocks. One token's KV cache occupies, over all layers:

* standard (grouped-query) attention: ``2 (K and V) x layers x KV heads x head dim x bytes per element``;
* multi-head latent attention (MLA, DeepSeek-V3/R1): one compressed latent
  per layer, ``layers x (kv_lora_rank + qk_rope_head_dim) x bytes per element``
  (the latent replaces K and V; the decoupled RoPE key is stored beside it).

A cache of G GiB then holds ``floor(G x 2**30 / (bytes per token x block
tokens))`` blocks, the same arithmetic kvcache-simulator uses
(``cache_blocks_for_gib``). Every catalog entry cites the model's published
``config.json`` on Hugging Face, whose fields ``num_hidden_layers``,
``num_key_value_heads``, ``head_dim`` (or ``hidden_size /
num_attention_heads``), ``kv_lora_rank`` and ``qk_rope_head_dim`` are the
numbers below. The KV dtype is the serving choice, not the model's: 16-bit
(bf16/fp16, 2 bytes) by default, fp8 (1 byte) on request. Draft/MTP layers
(DeepSeek's ``num_nextn_predict_layers``) are not counted, as in
kvcache-simulator's default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyverify.errors import UserError
from pyverify.suggestions import did_you_mean

#: Bytes in one GiB.
GIB = 2**30

#: The largest cache any capacity may name, in blocks (and in tokens): far past any fleet
#: (2**40 blocks of 16 tokens at 100 KiB a token is over a zettabyte), and small enough that
#: blocks times a block size (at most 2**20 tokens) stays inside the kernels' 64-bit integers.
MAX_CACHE_BLOCKS = 2**40

#: The largest KV memory a GiB flag may name (1 EiB per cache), and the range of KV bytes per
#: token (one layer of one fp8 head of dimension 1 has 2; the catalog's largest is under 2**20).
MAX_CACHE_GIB = 2**30
KV_BYTES_PER_TOKEN_RANGE = (1, 2**30)

#: Bytes per KV element by dtype name.
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}


@dataclass(frozen=True)
class KVModel:
    """The shape that fixes a model's KV bytes per token (module docstring)."""

    name: str
    layers: int
    source: str
    kv_heads: int | None = None
    head_dim: int | None = None
    mla_latent: int | None = None  # kv_lora_rank + qk_rope_head_dim, for MLA models
    full_layers: int | None = (
        None  # hybrid models: the layers that keep a full KV cache (None: all)
    )
    partial: str = ""  # what the other layers do, for the shape

    def counted_layers(self) -> int:
        return self.layers if self.full_layers is None else self.full_layers

    def elements_per_token(self) -> int:
        if self.mla_latent is not None:
            return self.counted_layers() * self.mla_latent
        return 2 * self.counted_layers() * self.kv_heads * self.head_dim

    def bytes_per_token(self, dtype: str = "bf16") -> int:
        return self.elements_per_token() * DTYPE_BYTES[dtype]

    def shape(self) -> str:
        layers = (
            f"{self.layers} layers"
            if self.full_layers is None
            else f"{self.full_layers} of {self.layers} layers (only those keep a full KV cache; {self.partial})"
        )
        if self.mla_latent is not None:
            return f"MLA: {layers} x {self.mla_latent} latent (kv_lora_rank + qk_rope_head_dim)"
        return f"2 x {layers} x {self.kv_heads} KV heads x {self.head_dim} head dim"


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


CATALOG: dict[str, KVModel] = {
    model.name: model
    for model in (
        KVModel(
            "llama-3.1-8b", 32, _hf("meta-llama/Llama-3.1-8B-Instruct"), kv_heads=8, head_dim=128
        ),
        KVModel(
            "llama-3.1-70b", 80, _hf("meta-llama/Llama-3.1-70B-Instruct"), kv_heads=8, head_dim=128
        ),
        KVModel(
            "llama-3.3-70b", 80, _hf("meta-llama/Llama-3.3-70B-Instruct"), kv_heads=8, head_dim=128
        ),
        KVModel(
            "llama-3.1-405b",
            126,
            _hf("meta-llama/Llama-3.1-405B-Instruct"),
            kv_heads=8,
            head_dim=128,
        ),
        KVModel("qwen2.5-7b", 28, _hf("Qwen/Qwen2.5-7B-Instruct"), kv_heads=4, head_dim=128),
        KVModel("qwen2.5-72b", 80, _hf("Qwen/Qwen2.5-72B-Instruct"), kv_heads=8, head_dim=128),
        KVModel("qwen3-8b", 36, _hf("Qwen/Qwen3-8B"), kv_heads=8, head_dim=128),
        KVModel("qwen3-32b", 64, _hf("Qwen/Qwen3-32B"), kv_heads=8, head_dim=128),
        KVModel("qwen3-235b-a22b", 94, _hf("Qwen/Qwen3-235B-A22B"), kv_heads=4, head_dim=128),
        KVModel(
            "mistral-7b-v0.3",
            32,
            _hf("mistralai/Mistral-7B-Instruct-v0.3"),
            kv_heads=8,
            head_dim=128,
        ),
        KVModel("deepseek-v3", 61, _hf("deepseek-ai/DeepSeek-V3"), mla_latent=512 + 64),
        KVModel("deepseek-r1", 61, _hf("deepseek-ai/DeepSeek-R1"), mla_latent=512 + 64),
        KVModel(
            "llama-3.2-1b", 16, _hf("meta-llama/Llama-3.2-1B-Instruct"), kv_heads=8, head_dim=64
        ),
        KVModel(
            "llama-3.2-3b", 28, _hf("meta-llama/Llama-3.2-3B-Instruct"), kv_heads=8, head_dim=128
        ),
        KVModel("qwen2.5-32b", 64, _hf("Qwen/Qwen2.5-32B-Instruct"), kv_heads=8, head_dim=128),
        KVModel("deepseek-v2-lite", 27, _hf("deepseek-ai/DeepSeek-V2-Lite"), mla_latent=512 + 64),
        # Gemma 3: 5 local (1024-token sliding window) layers to 1 global; layer_types in the config says which.
        KVModel(
            "gemma-3-27b",
            62,
            _hf("google/gemma-3-27b-it"),
            kv_heads=16,
            head_dim=128,
            full_layers=10,
            partial="the other 52 slide over 1024 tokens",
        ),
    )
}


def lookup(name: str) -> KVModel:
    try:
        return CATALOG[name]
    except KeyError:
        raise UserError(
            f"--kv-model: unknown model {name!r}; known models: {', '.join(CATALOG)} "
            "(or give --kv-model-config or --kv-bytes-per-token)" + did_you_mean(name, CATALOG)
        ) from None


def blocks_for_gib(gib: float, bytes_per_token: float, block_tokens: int) -> int:
    """Whole blocks of ``block_tokens`` tokens that fit in ``gib`` GiB (kvcache-simulator's rounding).

    More than :data:`MAX_CACHE_BLOCKS` is one line of error (the flags bound GiB and bytes per
    token, not their quotient, which depends on the input's block size).
    """
    blocks = gib * GIB / (bytes_per_token * block_tokens)
    if not blocks <= MAX_CACHE_BLOCKS:
        raise UserError(
            f"{gib:g} GiB holds more than {MAX_CACHE_BLOCKS} blocks of {block_tokens} "
            f"tokens at {bytes_per_token:g} bytes/token, the most a cache may hold"
        )
    return max(0, math.floor(blocks))


@dataclass(frozen=True)
class KVSize:
    """Bytes per token and where they come from."""

    bytes_per_token: float
    source: str


def kv_size(
    model_name: str | None,
    dtype: str | None,
    bytes_per_token: float | None,
    config: str | None = None,
) -> KVSize | None:
    """``--kv-bytes-per-token`` if given, else the catalog model's, else the ``config.json``'s (``--kv-model-config``), else ``None``.

    ``dtype`` None: bf16 for a catalog model, the config's ``torch_dtype`` for a config."""
    if sum(given is not None for given in (model_name, bytes_per_token, config)) > 1:
        raise UserError("--kv-model, --kv-model-config, --kv-bytes-per-token: give one of them")
    if bytes_per_token is not None:
        return KVSize(bytes_per_token, "--kv-bytes-per-token")
    if config is not None:
        from pyverify.inputs.hf_config import TORCH_DTYPE_BYTES, read_config

        shape = read_config(config)
        if dtype is not None:
            size, named = DTYPE_BYTES[dtype], f"{dtype} (--kv-dtype)"
        elif shape.dtype is not None:
            size, named = TORCH_DTYPE_BYTES[shape.dtype], f"torch_dtype {shape.dtype}"
        else:
            size, named = DTYPE_BYTES["bf16"], "bf16 (the config gives no torch_dtype)"
        return KVSize(
            shape.elements_per_token() * size, f"{config}, {named}: {shape.shape()} x {size} bytes"
        )
    if model_name is None:
        return None
    dtype = dtype or "bf16"
    model = lookup(model_name)
    return KVSize(
        model.bytes_per_token(dtype),
        f"{model.name}, {dtype}: {model.shape()} x {DTYPE_BYTES[dtype]} bytes ({model.source})",
    )


__all__ = [
    "CATALOG",
    "DTYPE_BYTES",
    "GIB",
    "KV_BYTES_PER_TOKEN_RANGE",
    "MAX_CACHE_BLOCKS",
    "MAX_CACHE_GIB",
    "KVModel",
    "KVSize",
    "blocks_for_gib",
    "kv_size",
    "lookup",
]


#: kvcache-simulator's default KV budgets in GiB (``pyverify budgets``), powers of two from 1 to 16,384.
DEFAULT_BUDGETS_GIB = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
