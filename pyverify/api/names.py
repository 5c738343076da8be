"""The names and bounds a command line offers before anything runs: cache models, evictions,
routing policies, default fleets, the bounds of the sizing flags.

Cheap to import (no simulator, no reader): every command's parser is built from these on every
run. Each name is defined where its meaning lives and only handed on here, so a parser, a report
and the code that runs agree on one spelling.
"""

from __future__ import annotations

from pyverify.certify import SOLVER_LIMIT
from pyverify.inputs.kv_models import (
    DEFAULT_BUDGETS_GIB,
    KV_BYTES_PER_TOKEN_RANGE,
    MAX_CACHE_BLOCKS,
    MAX_CACHE_GIB,
)
from pyverify.inputs.model import INSTANCE_FORMAT, MAX_HOSTS
from pyverify.sim.names import (
    CHAIN_LRU,
    DEFAULT_TRACE_FLEET,
    ENGINE_EVICTIONS,
    EVICTION_HELP,
    EVICTIONS,
    FIFO,
    LEAF_LRU,
    LRU,
    LRU_NAME,
    LRU_NOTE,
    MODELS,
    PER_HOST,
    POLICY_NAMES,
    POOLED,
    SGLANG,
    SGLANG_FIFO,
    TAIL_FIRST,
    UNROUTED_FLEET_SIZES,
    VLLM,
    default_fleet_for,
    default_policy_for,
    eviction_name,
)
from pyverify.sim.window import Window, warmup_fraction

__all__ = [
    "CHAIN_LRU",
    "DEFAULT_BUDGETS_GIB",
    "DEFAULT_TRACE_FLEET",
    "ENGINE_EVICTIONS",
    "EVICTIONS",
    "EVICTION_HELP",
    "FIFO",
    "INSTANCE_FORMAT",
    "KV_BYTES_PER_TOKEN_RANGE",
    "LEAF_LRU",
    "LRU",
    "LRU_NAME",
    "LRU_NOTE",
    "MAX_CACHE_BLOCKS",
    "MAX_CACHE_GIB",
    "MAX_HOSTS",
    "MODELS",
    "PER_HOST",
    "POLICY_NAMES",
    "POOLED",
    "SGLANG",
    "SGLANG_FIFO",
    "SOLVER_LIMIT",
    "TAIL_FIRST",
    "UNROUTED_FLEET_SIZES",
    "VLLM",
    "Window",
    "default_fleet_for",
    "default_policy_for",
    "eviction_name",
    "warmup_fraction",
]
