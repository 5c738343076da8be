"""A Hugging Face ``config.json`` as the KV model: bytes per token from the model's own shape.

``--kv-model-config PATH`` reads the file (bounded, strict JSON; one line of
error naming the file and the field otherwise) and takes, as
:mod:`pyverify.inputs.kv_models` explains for the catalog:

* ``num_hidden_layers``; ``num_key_value_heads`` (absent: ``num_attention_heads``,
  plain multi-head attention, as ``transformers`` reads it); ``head_dim``
  (absent or null: ``hidden_size / num_attention_heads``, which must divide);
* MLA (DeepSeek-V2/V3/R1): when ``kv_lora_rank`` and ``qk_rope_head_dim`` are
  given, one latent of ``kv_lora_rank + qk_rope_head_dim`` elements per layer
  instead of K and V;
* the element size: ``--kv-dtype`` when given, else the config's
  ``torch_dtype`` (or ``dtype``, its newer name): bfloat16/float16 2 bytes,
  float32 4, float8 1; absent: bf16;
* multimodal configs whose language model sits in ``text_config``: that part;
* sliding-window and hybrid models: **only layers that keep a full KV cache
  count** (a sliding-window layer holds at most its window, a linear-attention
  layer a fixed state, neither grows with the prefix that a prefix cache
  keeps), and the shape says how many of how many layers that is:

  - ``layer_types`` (a list, one per layer): the ``full_attention`` entries
    (the others must be ``sliding_attention``, ``chunked_attention`` or
    ``linear_attention``);
  - else ``sliding_window_pattern`` N with a ``sliding_window``: every Nth layer
    is global (Gemma 3: 1 in 6);
  - else a ``sliding_window`` that is used (``use_sliding_window`` not false):
    with ``max_window_layers`` (Qwen2's rule: the first ``max_window_layers``
    layers are full), those; without, every layer slides and no layer keeps a
    full KV cache, which is one line of error (give ``--kv-bytes-per-token``).

Draft/MTP layers (``num_nextn_predict_layers``) are not counted, as in the catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyverify.errors import located
from pyverify.inputs.jsonread import read_json

#: ``torch_dtype`` names and their bytes per element.
TORCH_DTYPE_BYTES = {
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "float32": 4,
    "float": 4,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
}

#: Layer types that keep no full KV cache.
PARTIAL_LAYER_TYPES = ("sliding_attention", "chunked_attention", "linear_attention")

#: Largest value accepted for any count in a config (layers, heads, dims).
MAX_DIM = 1 << 20


class ConfigShape:
    """What a config.json says about a model's KV cache per token."""

    def __init__(
        self,
        path: str,
        layers: int,
        full_layers: int,
        kv_heads: int | None,
        head_dim: int | None,
        latent: int | None,
        dtype: str | None,
        why_partial: str,
    ) -> None:
        self.path, self.layers, self.full_layers = path, layers, full_layers
        self.kv_heads, self.head_dim, self.latent = kv_heads, head_dim, latent
        self.dtype, self.why_partial = dtype, why_partial

    def elements_per_token(self) -> int:
        if self.latent is not None:
            return self.full_layers * self.latent
        return 2 * self.full_layers * self.kv_heads * self.head_dim

    def shape(self) -> str:
        layers = (
            f"{self.full_layers} layers"
            if self.full_layers == self.layers
            else f"{self.full_layers} of {self.layers} layers (only those keep a full KV cache; {self.why_partial})"
        )
        if self.latent is not None:
            return f"MLA: {layers} x {self.latent} latent (kv_lora_rank + qk_rope_head_dim)"
        return f"2 x {layers} x {self.kv_heads} KV heads x {self.head_dim} head dim"


def _count(
    data: dict[str, Any], key: str, path: str, prefix: str, required: bool = True, lowest: int = 1
) -> int | None:
    if key not in data or data[key] is None:
        if required:
            raise located(path, f"{prefix}{key}", "missing: needed for the KV bytes per token")
        return None
    value = data[key]
    if not (isinstance(value, int) and not isinstance(value, bool) and lowest <= value <= MAX_DIM):
        raise located(
            path,
            f"{prefix}{key}",
            f"expected a whole number from {lowest} to {MAX_DIM}, got {str(value)[:40]}",
        )
    return value


def read_config(path: str | Path) -> ConfigShape:
    """The KV shape of the ``config.json`` at ``path`` (module docstring); one line of error naming the field otherwise."""
    shown = str(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise located(
            shown,
            None,
            f"expected a Hugging Face config.json (a JSON object), got {type(data).__name__}",
        )
    prefix, top = "", data
    if "num_hidden_layers" not in data and isinstance(data.get("text_config"), dict):
        data, prefix = data["text_config"], "text_config."
    layers = _count(data, "num_hidden_layers", shown, prefix)
    holder, where = (
        (data, prefix) if data.get("torch_dtype", data.get("dtype")) is not None else (top, "")
    )
    dtype = holder.get("torch_dtype", holder.get("dtype"))
    if dtype is not None and not isinstance(
        dtype, str
    ):  # first: an object or a list is no dict key
        field = "torch_dtype" if "torch_dtype" in holder else "dtype"
        raise located(
            shown,
            f"{where}{field}",
            f"expected a dtype name such as bfloat16, got {type(dtype).__name__}",
        )
    if dtype is not None and dtype not in TORCH_DTYPE_BYTES:
        field = "torch_dtype" if "torch_dtype" in holder else "dtype"
        raise located(
            shown,
            f"{where}{field}",
            f"unknown dtype {str(dtype)[:40]!r}; known: {', '.join(TORCH_DTYPE_BYTES)} (or name the KV dtype of the serving engine)",
        )
    latent = None
    kv_heads = head_dim = None
    if data.get("kv_lora_rank") is not None or data.get("qk_rope_head_dim") is not None:
        latent = _count(data, "kv_lora_rank", shown, prefix) + _count(
            data, "qk_rope_head_dim", shown, prefix
        )
    else:
        heads = _count(data, "num_attention_heads", shown, prefix)
        kv_heads = _count(data, "num_key_value_heads", shown, prefix, required=False) or heads
        head_dim = _count(data, "head_dim", shown, prefix, required=False)
        if head_dim is None:
            hidden = _count(data, "hidden_size", shown, prefix)
            if hidden % heads:
                raise located(
                    shown,
                    f"{prefix}hidden_size",
                    f"{hidden} is not a multiple of num_attention_heads {heads}: give head_dim",
                )
            head_dim = hidden // heads
    full, why = _full_layers(data, layers, shown, prefix)
    return ConfigShape(shown, layers, full, kv_heads, head_dim, latent, dtype, why)


def _full_layers(data: dict[str, Any], layers: int, shown: str, prefix: str) -> tuple[int, str]:
    types = data.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers:
            raise located(
                shown,
                f"{prefix}layer_types",
                f"expected a list of {layers} layer types (one per layer)",
            )
        for index, kind in enumerate(types):
            if kind != "full_attention" and kind not in PARTIAL_LAYER_TYPES:
                raise located(
                    shown,
                    f"{prefix}layer_types[{index}]",
                    f"unknown layer type {str(kind)[:40]!r}; known: full_attention, "
                    + ", ".join(PARTIAL_LAYER_TYPES),
                )
        full = types.count("full_attention")
        others = sorted({kind for kind in types if kind != "full_attention"})
        why = f"the other {layers - full} are {' or '.join(others)}"
    else:
        window = data.get("sliding_window")
        if window is not None and not (
            isinstance(window, int) and not isinstance(window, bool) and window >= 1
        ):
            raise located(
                shown,
                f"{prefix}sliding_window",
                f"expected a whole number of tokens or null, got {str(window)[:40]}",
            )
        pattern = data.get("sliding_window_pattern")
        if window is not None and pattern is not None:
            pattern = _count(data, "sliding_window_pattern", shown, prefix)
            full = layers // pattern
            why = f"every {pattern}th layer is global, the other {layers - full} slide over {window} tokens"
        elif window is not None and data.get("use_sliding_window", True) is not False:
            limit = _count(data, "max_window_layers", shown, prefix, required=False, lowest=0)
            if limit is None:
                raise located(
                    shown,
                    f"{prefix}sliding_window",
                    f"every layer slides over {window} tokens: no layer keeps a full KV cache "
                    "for a prefix cache to reuse (give the KV bytes per token directly to size it anyway)",
                )
            full = min(layers, limit)
            why = (
                f"the other {layers - full} slide over {window} tokens (max_window_layers {limit})"
            )
        else:
            return layers, ""
    if full < 1:
        raise located(
            shown,
            f"{prefix}layer_types" if types is not None else f"{prefix}sliding_window",
            "no layer keeps a full KV cache for a prefix cache to reuse (give the KV bytes per token directly to size it anyway)",
        )
    return full, why


__all__ = ["ConfigShape", "TORCH_DTYPE_BYTES", "read_config"]
