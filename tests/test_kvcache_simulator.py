"""Agreement with kvcache-simulator (PyPI, KVCache.AI), an independent implementation.

With matching settings -- leaf-first LRU (``leaf-lru``) or FIFO, token
weights from ``input_length``, the last 50 % of requests measured, the same
cache blocks per GiB budget -- pyverify's token hits must equal theirs
exactly, from the reference caches and from the compiled kernels alike. The
differences that remain are listed in README.md ("Numbers that match
serving engines").
"""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pyverify.sim.kernels as kernels
from pyverify.inputs.kv_models import CATALOG, blocks_for_gib
from pyverify.inputs.load import load_input
from pyverify.sim.accounting import tally
from pyverify.sim.engine_curves import tail_first_ranks, weighted_curve
from pyverify.sim.simulate import FIFO, LEAF_LRU, POOLED, simulate
from pyverify.sim.tokens import token_weights
from pyverify.sim.window import Window

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .strategies import prefix_closed_chains

kvsim_trace = pytest.importorskip("kvcache_sim.trace")
from kvcache_sim import calculator as kvsim_calculator  # noqa: E402
from kvcache_sim import simulator as kvsim_simulator  # noqa: E402
from kvcache_sim.plan import build_execution_plan  # noqa: E402
from kvcache_sim.policies import simulate_policy  # noqa: E402

TRACE = MOONCAKE_SYNTHETIC
OURS = {"fifo": FIFO, "lru": LEAF_LRU}


def theirs(chains, input_lengths, block_size, capacity, policy, warmup=0.5):
    lines = [
        json.dumps({"hash_ids": list(c), "input_length": n, "block_size": block_size})
        for c, n in zip(chains, input_lengths)
    ]
    plan = build_execution_plan(kvsim_trace.parse_trace_lines(lines), warmup_fraction=warmup)
    return simulate_policy(plan, policy, capacity)


def ours(chains, input_lengths, block_size, capacity, policy, warmup=0.5):
    weights = token_weights(chains, block_size, [{"input_tokens": n} for n in input_lengths])
    return tally(chains, hit_blocks(chains, capacity, policy), weights, Window(warmup))


def hit_blocks(chains, capacity, policy):
    """The reference run's witness; the compiled kernel's must be the same (both are compared with theirs)."""
    run = simulate(chains, None, POOLED, capacity=capacity, eviction=OURS[policy])
    if kernels.available():
        from pyverify.cache.lru_kernel import capacitated_hits
        from pyverify.cache.tree_kernel import tree_hits

        compiled = (
            tree_hits(chains, [0] * len(chains), capacity, LEAF_LRU)
            if policy == "lru"
            else capacitated_hits(chains, [0] * len(chains), capacity, lru=False)
        )
        assert compiled == list(run.hit_blocks), (capacity, policy)
    return run.hit_blocks


@pytest.mark.parametrize(
    "name",
    [
        "llama-3.1-8b",
        "llama-3.3-70b",
        "qwen2.5-7b",
        "qwen2.5-72b",
        "qwen3-32b",
        "qwen3-235b-a22b",
        "deepseek-v3",
    ],
)
def test_catalog_bytes_per_token_equal_theirs(name):
    data = kvsim_calculator.load_models_data()
    model = kvsim_calculator.models_by_id(data)[name]
    size = kvsim_calculator.calculate_cache_size(
        model, tokens=1024, precision="bf16_fp16", block_size=512, models_data=data
    )
    assert CATALOG[name].bytes_per_token("bf16") == size.bytes_per_token
    assert CATALOG[name].bytes_per_token("fp8") * 2 == size.bytes_per_token


@pytest.mark.parametrize("gib", kvsim_simulator.DEFAULT_BUDGETS_GIB)
def test_blocks_per_budget_equal_theirs(gib):
    per_block = CATALOG["llama-3.3-70b"].bytes_per_token() * 512
    assert blocks_for_gib(
        gib, CATALOG["llama-3.3-70b"].bytes_per_token(), 512
    ) == kvsim_simulator.cache_blocks_for_gib(gib, per_block)


def test_hand_cases_where_policies_are_easy_to_get_wrong():
    # a chain longer than the cache (leaf-lru keeps C - 1 blocks) and a held block after a miss (FIFO)
    cases = [
        ([(1, 2, 3), (1, 2), (1, 2)], 2, "lru"),
        ([(1,), (7,), (1, 2), (8,), (1, 2), (9,), (1, 2)], 3, "fifo"),
        ([(1, 2, 3), (1, 4), (1, 2, 3), (1, 2, 3)], 3, "lru"),
    ]
    for chains, capacity, policy in cases:
        lengths = [100 * len(c) - 7 for c in chains]
        expected = theirs(chains, lengths, 100, capacity, policy)
        assert (
            expected.measurementMode == "fixed_window"
        )  # each case fills the cache within its first half
        got = ours(chains, lengths, 100, capacity, policy)
        assert got.token_hits > 0
        assert (got.token_hits, got.tokens) == (expected.hitTokens, expected.totalTokens), (
            chains,
            policy,
        )


@settings(max_examples=300)
@given(
    prefix_closed_chains(max_nodes=16, max_requests=40), st.sampled_from(["fifo", "lru"]), st.data()
)
def test_random_prefix_closed_traces(chains, policy, data):
    # A capacity past the blocks the warm-up half ever asks for leaves their cache unfilled, and such a draw is
    # discarded below: drawn from 1..10 regardless, most draws were, and Hypothesis's health check failed the
    # test on some runs ("filtering out a lot of inputs").
    warm_up_blocks = len({block for chain in chains[: max(1, len(chains) // 2)] for block in chain})
    capacity = data.draw(st.integers(1, max(1, min(10, warm_up_blocks))))
    lengths = [16 * (len(c) - 1) + data.draw(st.integers(1, 16)) for c in chains]
    expected = theirs(chains, lengths, 16, capacity, policy)
    assume(
        expected.measurementMode == "fixed_window"
    )  # they report nothing when the cache never filled during warm-up
    got = ours(chains, lengths, 16, capacity, policy)
    assert (got.token_hits, got.tokens) == (expected.hitTokens, expected.totalTokens)


@pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)
def test_mooncake_synthetic_trace_default_budgets():
    parsed = kvsim_trace.parse_trace_file(TRACE, block_size=512)
    backend = "cpp" if shutil.which("c++") else "python"
    report = kvsim_simulator.run_sweep(
        parsed, model_id="llama-3.3-70b", policies=["fifo", "lru"], backend=backend
    )
    assert len(report["points"]) >= 10
    instance = load_input(str(TRACE))
    weights = token_weights(instance.chains, instance.block_size_tokens, instance.extra)
    window = Window(0.5)
    one_pass = weighted_curve(tail_first_ranks(instance.chains), instance.chains, weights, window)
    longest = max(len(chain) for chain in instance.chains)
    for point in report["points"]:
        capacity = point["cacheBlocks"]
        assert capacity == blocks_for_gib(
            point["gib"], CATALOG["llama-3.3-70b"].bytes_per_token(), 512
        )
        for policy in ("fifo", "lru"):
            got = tally(
                instance.chains, hit_blocks(instance.chains, capacity, policy), weights, window
            )
            result = point["results"][policy]
            assert (got.token_hits, got.tokens) == (result["hitTokens"], result["totalTokens"]), (
                point["gib"],
                policy,
            )
        if (
            capacity >= longest
        ):  # every chain fits: vLLM's order is their LRU, and has a one-pass curve
            assert one_pass.token_hits([capacity])[0] == point["results"]["lru"]["hitTokens"]
