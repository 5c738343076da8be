"""The service model of ``pyverify replay``: how long a request keeps a host busy.

A host runs at most ``max_running`` requests at once; the rest wait in a
first-in, first-out queue. A running request progresses at the full rates
below whatever else runs beside it (no batching slowdown is modelled):

* prefill time = tokens the host must compute / ``prefill_tokens_per_s``,
  plus, when some blocks come from the host tier, ``host_fetch_latency_ms`` +
  their bytes / ``host_bandwidth_gb_s``, and when some come from the pool,
  ``fetch_latency_ms`` + their bytes / ``pool_bandwidth_gb_s``; the first
  token appears when prefill ends (writes to lower tiers are not waited on);
* decode time = (``output_length`` - 1) / ``decode_tokens_per_s``: the first
  token comes out of prefill's last forward pass, as in vLLM, SGLang and
  Dynamo's mocker, and each later token is one decode step; the request ends
  (and frees its slot and its pinned blocks) when decode ends.

Tokens to compute: the request's ``input_length`` less the tokens of its hit
blocks (any tier), at least 0; a request without ``input_length`` counts
``block_tokens`` per block. Decode KV (the generated tokens' keys and values)
is neither cached nor counted against any capacity.

Every default is the cost model's (:mod:`pyverify.cost.params`, where each
number's source or its ASSUMPTION label is written out); none is repeated here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pyverify.cost.params import (
    DEFAULT_BLOCK_TOKENS,
    DEFAULT_DECODE_ITL_MS,
    DEFAULT_FETCH_LATENCY_MS,
    DEFAULT_GPUS_PER_HOST,
    DEFAULT_HOST_BANDWIDTH_GB_S,
    DEFAULT_HOST_FETCH_LATENCY_MS,
    DEFAULT_KV_BYTES_PER_TOKEN,
    DEFAULT_MAX_RUNNING,
    DEFAULT_POOL_BANDWIDTH_GB_S,
    DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU,
)

#: Prefill tokens per second of one host: the cost model's R, about 12,292.
DEFAULT_PREFILL_TOKENS_PER_S = DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU * DEFAULT_GPUS_PER_HOST

#: Decode tokens per second of one running request: 1000 / the cost model's inter-token latency, about 53.8.
DEFAULT_DECODE_TOKENS_PER_S = 1000.0 / DEFAULT_DECODE_ITL_MS

#: Where each default comes from, for --help and the JSON output.
SOURCES = {
    "prefill_tokens_per_s": "NVIDIA NIM benchmark, Llama-3.3-70B on 2 x H100 TP2: 5000 tokens, TTFT 406.77 ms "
    "(docs.nvidia.com/nim/benchmarking/llm; pyverify.cost.params)",
    "decode_tokens_per_s": "the same NIM benchmark: inter-token latency 18.58 ms at concurrency 1 "
    "(21.83 ms at 5, 38.75 ms at 25; no batching slowdown is modelled)",
    "max_running": "ASSUMPTION: a small batch, no published source",
    "kv_bytes_per_token": "LLaMA3-70B, 16-bit KV, 320 KiB per token (Mooncake paper; pyverify.cost.params)",
    "pool_bandwidth_gb_s": "Mooncake Transfer Engine README, 87 GB/s on 4 x 200 Gbps RoCE",
    "fetch_latency_ms": "ASSUMPTION: 1 ms per pool fetch, no published source",
    "host_bandwidth_gb_s": "PCIe Gen5 x16 one way, 64 GB/s (NVIDIA H100 product page: 128 GB/s both ways)",
    "host_fetch_latency_ms": "ASSUMPTION: 0 ms per host-DRAM load (only bytes / bandwidth), no published source",
}


@dataclass(frozen=True)
class ServiceModel:
    """Rates and limits of one host (every host is alike)."""

    prefill_tokens_per_s: float = DEFAULT_PREFILL_TOKENS_PER_S
    decode_tokens_per_s: float = DEFAULT_DECODE_TOKENS_PER_S
    max_running: int = DEFAULT_MAX_RUNNING
    block_tokens: int = DEFAULT_BLOCK_TOKENS
    kv_bytes_per_token: float = DEFAULT_KV_BYTES_PER_TOKEN
    pool_bandwidth_gb_s: float = DEFAULT_POOL_BANDWIDTH_GB_S
    fetch_latency_ms: float = DEFAULT_FETCH_LATENCY_MS
    host_bandwidth_gb_s: float = DEFAULT_HOST_BANDWIDTH_GB_S
    host_fetch_latency_ms: float = DEFAULT_HOST_FETCH_LATENCY_MS

    @property
    def block_bytes(self) -> float:
        return self.block_tokens * self.kv_bytes_per_token

    def prefill_seconds(
        self, input_tokens: int, hit_blocks: int, pool_blocks: int, host_blocks: int = 0
    ) -> float:
        """Prefill of a request with ``input_tokens``, ``hit_blocks`` of them cached in any tier
        (``host_blocks`` of those loaded from host DRAM, ``pool_blocks`` from the pool)."""
        compute = max(0, input_tokens - hit_blocks * self.block_tokens)
        seconds = compute / self.prefill_tokens_per_s
        if host_blocks:
            seconds += self.host_fetch_latency_ms / 1000.0 + host_blocks * self.block_bytes / (
                self.host_bandwidth_gb_s * 1e9
            )
        if pool_blocks:
            seconds += self.fetch_latency_ms / 1000.0 + pool_blocks * self.block_bytes / (
                self.pool_bandwidth_gb_s * 1e9
            )
        return seconds

    def decode_seconds(self, output_tokens: int) -> float:
        """Decode after the first token: ``output_tokens - 1`` steps (prefill gives the first)."""
        return max(output_tokens - 1, 0) / self.decode_tokens_per_s

    def to_json(self) -> dict:
        return {**asdict(self), "sources": SOURCES}
