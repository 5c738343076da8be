"""The names the commands offer, and the fleet defaults: what a command line needs before anything runs.

The cache models, the evictions, the routing policies and the default fleet
sizes are read when the parser is built, for every run, while the simulators
that give them meaning (:mod:`pyverify.sim.simulate`, :mod:`pyverify.sim.routing`)
are needed only by the runs that use them. Kept here, building ``simulate``'s
parser imports no simulator (issue #23: start-up within 2x a plain script);
both modules take their names from here, and the tests check that
:data:`POLICY_NAMES` names exactly :data:`pyverify.sim.routing.POLICIES`.
"""

from __future__ import annotations

from pyverify.cache.names import (  # noqa: F401 (the names, handed on to the commands)
    CHAIN_LRU,
    ENGINE_EVICTIONS,
    EVICTIONS,
    FIFO,
    LEAF_LRU,
    LRU,
    SGLANG,
    SGLANG_FIFO,
    TAIL_FIRST,
    VLLM,
)

POOLED = "pooled"
PER_HOST = "per-host"
MODELS = (POOLED, PER_HOST)

#: What "lru" (--eviction lru, every command's default) is, wherever a command prints it:
#: chain-order LRU, which idealises an engine's cache. One wording for every header, note
#: and --help (simulate, sweep, mrc, replay).
LRU_NAME = "chain-order LRU (not an engine's leaf-first LRU)"
LRU_NOTE = (
    "LRU here is chain-order LRU, an idealisation: a request touches its chain's root "
    "first, so a parent block can be evicted before its child, which no engine does; "
    "engines evict leaf-first (SGLang) or from a free queue (vLLM): --eviction vllm or "
    "sglang (simulate, replay) runs their own caches, and 'pyverify budgets --eviction "
    "lru,leaf-lru' compares leaf-first LRU"
)


def eviction_name(eviction: str) -> str:
    """An eviction as a header names it: :data:`LRU_NAME` for chain-order LRU, else its value."""
    return LRU_NAME if eviction == LRU else eviction


#: One line per policy, for --help texts and reports.
EVICTION_HELP = {
    LRU: "chain-order LRU (pyverify's original: touches a chain root first, can evict a parent before its child)",
    FIFO: "first in, first out (a held block keeps its entry time)",
    LEAF_LRU: (
        "leaf-first LRU: evict the least recently used block with no cached child (kvcache-simulator's "
        "idealisation of SGLang's radix cache; --eviction sglang is the exact cache)"
    ),
    VLLM: (
        "vLLM 0.33's block pool exactly (a fully cached prompt recomputes its last token, hence a block-aligned "
        "repeat its last block, cached again as a second copy; a partial last block takes a slot; a prompt longer "
        "than the pool is never scheduled; --capacity C is num_gpu_blocks = C + 1, one null block; what an instance "
        "cannot hold: prompts shorter than one block, which vLLM runs in one slot that can evict, since an instance "
        "has no request without a block (trace import leaves them out and says how many))"
    ),
    SGLANG: (
        "SGLang 0.5.23's radix cache exactly (hits at most input_len - 1 tokens, whole pages; evicts whole leaf "
        "nodes, least recently used first, until the shortfall is covered; locked prefixes stay; a prompt of "
        "pool tokens - 6 or more is refused; --page-size)"
    ),
    SGLANG_FIFO: "SGLang's radix cache with --radix-eviction-policy fifo: leaves leave by creation time",
    TAIL_FIRST: (
        "vLLM's free-queue order, idealised: a finished request's blocks are freed tail first, the oldest "
        "freed block is evicted (no partial blocks, no duplicate copies; --eviction vllm is the exact pool)"
    ),
}


#: The static and online routing policies (:mod:`pyverify.sim.routing`), in the order the help lists them.
POLICY_NAMES = (
    "given",
    "fold",
    "round-robin",
    "random",
    "route-key",
    "prefix-hash",
    "prefix-affinity",
)

#: The fleet size when an input names none: 16 nodes (a round number; the Mooncake paper's
#: local-against-global comparison, FAST'25 section 5.3.2, uses 10 prefill nodes).
DEFAULT_TRACE_FLEET = 16

#: Fleet sizes swept by default for an input that names no fleet (a trace).
UNROUTED_FLEET_SIZES = [2, 4, 8, 16]


def default_policy_for(gives_hosts: bool) -> str:
    """Every command's default routing policy for an input that gives a host per request (or not): ``fold``
    when it does, else ``round-robin`` (traces)."""
    return "fold" if gives_hosts else "round-robin"


def default_fleet_for(own_hosts: int | None) -> int:
    """Every command's default fleet size for an input whose own fleet is ``own_hosts`` (``None``: it names none)."""
    return own_hosts or DEFAULT_TRACE_FLEET
