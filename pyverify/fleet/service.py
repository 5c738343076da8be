"""The service model of ``pyverify replay``: how long a request keeps a host busy.

A host runs at most ``max_running`` requests at once; the rest wait in a
first-in, first-out queue. A running request progresses at the full rates
below whatever else runs beside it (no batching slowdown is modelled):

* prefill time = tokens the host must compute / ``prefill_tokens_per_s``,
  plus, when some blocks come from the pool, ``fetch_latency_s`` + their
  bytes / ``pool_bytes_per_s``; the first token appears when prefill ends;
* decode time = ``output_length`` / ``decode_tokens_per_s``; the request
  ends (and frees its slot and its pinned blocks) when decode ends.

Tokens to compute: the request's ``input_length`` less the tokens of its hit
blocks (GPU or pool), at least 0; a request without ``input_length`` counts
``block_tokens`` per block. Decode KV (the generated tokens' keys and values)
is neither cached nor counted against any capacity.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pyverify.cost.params import (DEFAULT_BLOCK_TOKENS, DEFAULT_FETCH_LATENCY_MS, DEFAULT_KV_BYTES_PER_TOKEN,
                                  DEFAULT_POOL_BANDWIDTH_GB_S, DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU, DEFAULT_GPUS_PER_HOST)

#: Prefill tokens per second of one host: the cost model's R (pyverify.cost.params: NVIDIA NIM's
#: Llama-3.3-70B TTFT measurement, 5000 tokens in 406.77 ms on 2 x H100, TP2), about 12,292.
DEFAULT_PREFILL_TOKENS_PER_S = DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU * DEFAULT_GPUS_PER_HOST

#: Decode tokens per second of one running request: 40.
#: ASSUMPTION, no published source pinned: an inter-token latency of 25 ms, the order of magnitude
#: of a 70B model on two H100s at low concurrency. Sweep it before trusting a TTFT that depends on
#: it (decode time decides how long a request holds its slot, hence queueing).
DEFAULT_DECODE_TOKENS_PER_S = 40.0

#: Requests one host runs at once: 8. ASSUMPTION (a small batch; engines admit more when memory allows).
DEFAULT_MAX_RUNNING = 8

#: The cost model's defaults, reused for moving blocks between the pool and a GPU.
DEFAULT_BLOCK_BYTES_PER_TOKEN = DEFAULT_KV_BYTES_PER_TOKEN
DEFAULT_BANDWIDTH_GB_S = DEFAULT_POOL_BANDWIDTH_GB_S
DEFAULT_LATENCY_MS = DEFAULT_FETCH_LATENCY_MS
DEFAULT_TOKENS_PER_BLOCK = DEFAULT_BLOCK_TOKENS

#: Where each default comes from, for --help and the JSON output.
SOURCES = {
    "prefill_tokens_per_s": "the cost model's host prefill rate R (NVIDIA NIM Llama-3.3-70B, 2 x H100; pyverify.cost.params)",
    "decode_tokens_per_s": "ASSUMPTION: 25 ms per output token, no published source pinned",
    "max_running": "ASSUMPTION: a small batch",
    "kv_bytes_per_token": "the cost model's default (LLaMA3-70B, 16-bit KV, 320 KiB; Mooncake paper)",
    "pool_bandwidth_gb_s": "the cost model's default (Mooncake Transfer Engine, 87 GB/s)",
    "fetch_latency_ms": "the cost model's ASSUMPTION (1 ms per fetch)",
}


@dataclass(frozen=True)
class ServiceModel:
    """Rates and limits of one host (every host is alike)."""

    prefill_tokens_per_s: float = DEFAULT_PREFILL_TOKENS_PER_S
    decode_tokens_per_s: float = DEFAULT_DECODE_TOKENS_PER_S
    max_running: int = DEFAULT_MAX_RUNNING
    block_tokens: int = DEFAULT_TOKENS_PER_BLOCK
    kv_bytes_per_token: float = DEFAULT_BLOCK_BYTES_PER_TOKEN
    pool_bandwidth_gb_s: float = DEFAULT_BANDWIDTH_GB_S
    fetch_latency_ms: float = DEFAULT_LATENCY_MS

    @property
    def block_bytes(self) -> float:
        return self.block_tokens * self.kv_bytes_per_token

    def prefill_seconds(self, input_tokens: int, hit_blocks: int, pool_blocks: int) -> float:
        """Prefill of a request with ``input_tokens``, ``hit_blocks`` of them cached (``pool_blocks`` from the pool)."""
        compute = max(0, input_tokens - hit_blocks * self.block_tokens)
        seconds = compute / self.prefill_tokens_per_s
        if pool_blocks:
            seconds += self.fetch_latency_ms / 1000.0 + pool_blocks * self.block_bytes / (self.pool_bandwidth_gb_s * 1e9)
        return seconds

    def decode_seconds(self, output_tokens: int) -> float:
        return output_tokens / self.decode_tokens_per_s

    def to_json(self) -> dict:
        return {**asdict(self), "sources": SOURCES}
