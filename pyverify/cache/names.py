"""The eviction policies' names, as ``--eviction`` spells them.

Kept apart from the caches themselves so that building a command's parser
(:mod:`pyverify.sim.names`) reads the names without importing any cache.
"""

from __future__ import annotations

#: Chain-order LRU: pyverify's original policy (:mod:`pyverify.cache.lru`).
LRU = "lru"
CHAIN_LRU = LRU
FIFO = "fifo"
LEAF_LRU = "leaf-lru"
TAIL_FIRST = "tail-first"
EVICTIONS = (LRU, FIFO, LEAF_LRU, TAIL_FIRST)

#: Serving engines' own caches, replayed exactly (they need each prompt's
#: length in tokens): vLLM 0.33's block pool (:mod:`pyverify.cache.vllm`)
#: and SGLang 0.5.23's radix cache (:mod:`pyverify.cache.sglang`).
VLLM = "vllm"
SGLANG = "sglang"
SGLANG_FIFO = "sglang-fifo"
ENGINE_EVICTIONS = (VLLM, SGLANG, SGLANG_FIFO)
