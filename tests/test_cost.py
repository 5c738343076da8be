"""The cost model: hand-computed cases, properties, and break-even."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.cost.estimate import (
    BREAK_EVEN_RTOL,
    NEVER_PAYS,
    NO_FETCHES,
    PARAMETERS,
    PAYS_ABOVE,
    Params,
    break_even,
    estimate,
    net_total_at,
    parse_params,
    parse_sweep,
    token_split,
    zero_latency_break_even_gb_s,
)
from pyverify.cost.summary import distribution, sweep_conclusion, sweep_rows
from pyverify.errors import UserError
from pyverify.sim.simulate import PER_HOST, POOLED, simulate

from .strategies import routed_instances

# A toy parameter set chosen so every number below can be done by hand:
# R = 100 tokens/s, k = 1000 bytes/token, B = 1e6 bytes/s, latency 10 ms.
TOY = Params(
    kv_bytes_per_token=1000,
    prefill_tokens_per_s_per_gpu=100,
    gpus_per_host=1,
    pool_bandwidth_gb_s=1e-3,
    fetch_latency_ms=10,
    block_tokens=100,
)


def runs(chains, routing, capacity=None, pool_capacity=None):
    local = simulate(chains, routing, PER_HOST, capacity=capacity)
    pooled = simulate(chains, None, POOLED, capacity=pool_capacity)
    return local.hit_blocks, pooled.hit_blocks


# --- hand-computed ----------------------------------------------------------------


def test_hand_computed_small_case():
    # host 0: [1,2] then [1,3]; host 1: [1,2].
    chains = [(1, 2), (1, 2), (1, 3)]
    local, pooled = runs(chains, [0, 1, 0])
    assert local == (0, 0, 1) and pooled == (0, 2, 1)
    split = token_split(chains, local, pooled, 100)
    assert split.total.tolist() == [200, 200, 200]
    assert split.local.tolist() == [0, 0, 100]
    assert split.fetched.tolist() == [0, 200, 0]
    assert split.recomputed_pooled.tolist() == [200, 0, 100]
    assert split.recomputed_per_host.tolist() == [200, 200, 100]
    est = estimate(split, TOY)
    # request 1: saved 200/100 = 2 s; transfer 200*1000/1e6 + 0.010 = 0.21 s.
    assert est.saved.tolist() == pytest.approx([0, 2.0, 0])
    assert est.transfer.tolist() == pytest.approx([0, 0.21, 0])
    assert est.net.tolist() == pytest.approx([0, 1.79, 0])
    assert est.ttft_per_host.tolist() == pytest.approx([2.0, 2.0, 1.0])
    assert est.ttft_pooled.tolist() == pytest.approx([2.0, 0.21, 1.0])
    be = break_even(split, TOY)
    # B* = F k / ((F/R - n*lat) * 1e9) = 200*1000 / ((2 - 0.01) * 1e9) GB/s
    assert be.status == PAYS_ABOVE
    assert be.bandwidth_gb_s == pytest.approx(200 * 1000 / (1.99 * 1e9), rel=1e-12)


def test_partial_last_block_uses_input_tokens():
    chains = [(1, 2), (1, 2)]
    local, pooled = runs(chains, [0, 1])
    split = token_split(chains, local, pooled, 100, input_tokens=[150, 150])
    # the second block holds 50 tokens: all 150 are fetched, none recomputed
    assert split.total.tolist() == [150, 150]
    assert split.fetched.tolist() == [0, 150]
    assert split.recomputed_pooled.tolist() == [150, 0]
    # prompt tokens beyond the chain are never cached
    split = token_split(chains, local, pooled, 100, input_tokens=[None, 260])
    assert split.total.tolist() == [200, 260]
    assert split.fetched.tolist() == [0, 200] and split.recomputed_pooled.tolist() == [200, 60]


def test_capacitated_pool_that_lost_a_block_fetches_nothing():
    # per-host capacity 1: host 0 keeps block 1 and hits it again.
    # pool capacity 1: block 2 evicts block 1, so the pool misses where host 0 hits.
    chains = [(1,), (2,), (1,)]
    local, pooled = runs(chains, [0, 1, 0], capacity=1, pool_capacity=1)
    assert local == (0, 0, 1) and pooled == (0, 0, 0)
    split = token_split(chains, local, pooled, 100)
    assert split.local.tolist() == [0, 0, 100]
    assert split.fetched.tolist() == [0, 0, 0]  # max(L, P) = L: the local copy is used


def test_break_even_statuses():
    chains = [(1,), (1,)]
    local, pooled = runs(chains, [0, 1])
    split = token_split(chains, local, pooled, 100)  # one fetch of 100 tokens: saves 1 s at R = 100
    assert (
        break_even(split, replace(TOY, fetch_latency_ms=1000)).status == NEVER_PAYS
    )  # latency 1 s eats it all
    assert break_even(split, replace(TOY, fetch_latency_ms=999)).status == PAYS_ABOVE
    none = token_split(chains, local, None, 100)
    be = break_even(none, TOY)
    assert be.status == NO_FETCHES and be.bandwidth_gb_s is None


def test_zero_latency_break_even_is_k_times_r():
    chains = [(1, 2, 3), (1, 2, 4), (1, 5)]
    local, pooled = runs(chains, [0, 1, 2])
    params = replace(TOY, fetch_latency_ms=0)
    be = break_even(token_split(chains, local, pooled, 100), params)
    assert be.bandwidth_gb_s == pytest.approx(1000 * 100 / 1e9, rel=1e-12)
    assert zero_latency_break_even_gb_s(params) == pytest.approx(1e-4)


def test_distribution_percentiles():
    d = distribution(np.arange(101) / 1000.0)  # 0 .. 100 ms
    assert (d["median_ms"], d["p90_ms"], d["p99_ms"]) == pytest.approx((50.0, 90.0, 99.0))
    assert d["total_s"] == pytest.approx(5.05)


def test_defaults_are_the_cited_figures():
    params = Params()
    assert params.kv_bytes_per_token == 320 * 1024  # LLaMA3-70B, Mooncake
    assert params.prefill_rate == pytest.approx(
        5000 / 0.40677
    )  # NIM: 5000 tokens, TTFT 406.77 ms, on the 2-GPU host
    assert params.pool_bandwidth_gb_s == 87.0
    for parameter in PARAMETERS.values():
        assert parameter.source and parameter.unit


def test_sweep_reports_where_the_conclusion_flips():
    chains = [(1,), (1,)]
    local, pooled = runs(chains, [0, 1])
    split = token_split(chains, local, pooled, 100)
    params = replace(TOY, fetch_latency_ms=0)  # break-even at k*R = 1e-4 GB/s
    rows = sweep_rows(lambda p: split, params, parse_sweep("pool_bandwidth_gb_s=0.00005:0.00025:3"))
    assert [row.value for row in rows] == pytest.approx([5e-5, 1.5e-4, 2.5e-4])
    assert [row.verdict for row in rows] == ["pool loses", "pool pays", "pool pays"]
    assert sweep_conclusion(rows) == (
        "the conclusion changes as pool_bandwidth_gb_s varies: "
        "between 5e-05 (pool loses) and 0.00015 (pool pays)"
    )
    same = sweep_rows(lambda p: split, params, parse_sweep("pool_bandwidth_gb_s=1:2:2"))
    assert "does not change" in sweep_conclusion(same)


# --- parsing --------------------------------------------------------------------


@pytest.mark.parametrize(
    "assignment, message",
    [
        (
            "bandwidth=3",
            "unknown parameter 'bandwidth'; known parameters: kv_bytes_per_token, prefill_tokens_per_s_per_gpu",
        ),
        ("pool_bandwidth_gb_s", "expected NAME=VALUE"),
        ("pool_bandwidth_gb_s=fast", "expected a number, got 'fast'"),
        ("pool_bandwidth_gb_s=0", "must be greater than 0"),
        ("prefill_tokens_per_s_per_gpu=-5", "must be greater than 0"),
        ("fetch_latency_ms=-1", "must not be negative"),
        ("gpus_per_host=1.5", "must be a whole number"),
        ("kv_bytes_per_token=nan", "expected a finite number"),
        ("kv_bytes_per_token=inf", "expected a finite number"),
    ],
)
def test_bad_params(assignment, message):
    with pytest.raises(UserError, match=None) as error:
        parse_params([assignment])
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_zero_latency_is_allowed_and_repeats_are_not():
    params, names = parse_params(["fetch_latency_ms=0", "gpus_per_host=8"])
    assert (
        params.fetch_latency_ms == 0
        and params.gpus_per_host == 8
        and names == ["fetch_latency_ms", "gpus_per_host"]
    )
    with pytest.raises(UserError, match="given more than once"):
        parse_params(["gpus_per_host=8", "gpus_per_host=4"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("pool_bandwidth_gb_s", "expected NAME=LO:HI:STEPS"),
        ("speed=1:2:3", "unknown parameter 'speed'"),
        ("pool_bandwidth_gb_s=1:10", "malformed range '1:10'"),
        ("pool_bandwidth_gb_s=1:10:3:4", "malformed range"),
        ("pool_bandwidth_gb_s=a:10:3", "LO and HI must be numbers"),
        ("pool_bandwidth_gb_s=1:10:x", "STEPS must be a whole number"),
        ("pool_bandwidth_gb_s=1:10:1", "STEPS must be at least 2"),
        ("pool_bandwidth_gb_s=10:1:3", "LO must be less than HI"),
        ("pool_bandwidth_gb_s=0:10:3", "must be greater than 0"),
        ("gpus_per_host=1:8:3", "must be a whole number"),
    ],
)
def test_bad_sweeps(text, message):
    with pytest.raises(UserError) as error:
        parse_sweep(text)
    assert message in str(error.value)


def test_sweep_values_inclusive():
    assert parse_sweep("gpus_per_host=1:8:8").values == [1, 2, 3, 4, 5, 6, 7, 8]
    assert parse_sweep("pool_bandwidth_gb_s=1:3:3").values == [1.0, 2.0, 3.0]


# --- properties -----------------------------------------------------------------

# Each example runs two simulations and the model; cap the count so this file stays
# well under the project's 30 s test budget under either profile.
few = settings(max_examples=min(settings.default.max_examples, 100))

rates = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
params_strategy = st.builds(
    Params,
    kv_bytes_per_token=st.floats(min_value=1, max_value=1e7),
    prefill_tokens_per_s_per_gpu=rates,
    gpus_per_host=st.integers(1, 16),
    pool_bandwidth_gb_s=rates,
    fetch_latency_ms=st.floats(min_value=0, max_value=100),
    block_tokens=st.integers(1, 1024),
)


def split_of(instance, params, capacity=None):
    chains, _hosts, routing = instance
    local, pooled = runs(chains, routing, capacity=capacity, pool_capacity=capacity)
    return token_split(chains, local, pooled, params.block_tokens)


@few
@given(routed_instances(), params_strategy, rates, rates, st.sampled_from([None, 1, 2, 4]))
def test_more_bandwidth_never_makes_pooling_worse(instance, params, b1, b2, capacity):
    lo, hi = sorted((b1, b2))
    split = split_of(instance, params, capacity)
    slow = estimate(split, replace(params, pool_bandwidth_gb_s=lo))
    fast = estimate(split, replace(params, pool_bandwidth_gb_s=hi))
    assert np.all(fast.net >= slow.net)
    assert fast.net_total >= slow.net_total - 1e-12 * max(1.0, abs(slow.net_total))


@few
@given(routed_instances(), params_strategy)
def test_accounting_identities(instance, params):
    chains, _hosts, routing = instance
    local, pooled = runs(chains, routing)
    # uncapacitated, the pool holds everything a host holds (module docstring)
    assert all(p >= l for p, l in zip(pooled, local))
    split = token_split(chains, local, pooled, params.block_tokens)
    assert np.all(split.local + split.fetched + split.recomputed_pooled == split.total)
    assert np.all(split.fetched >= 0) and np.all(split.recomputed_pooled >= 0)
    est = estimate(split, params)
    assert np.allclose(est.ttft_per_host - est.ttft_pooled, est.net, rtol=1e-9, atol=1e-12)
    assert est.net_if_fetch_only_when_faster >= est.net_total - 1e-9


@few
@given(routed_instances(), params_strategy)
def test_zero_hits_zero_savings(instance, params):
    chains, _hosts, routing = instance
    # Give every block of every request a fresh id: nothing repeats, so no cache can hit.
    fresh = [tuple(1000 * i + j for j in range(len(chain))) for i, chain in enumerate(chains)]
    local, pooled = runs(fresh, routing)
    assert sum(pooled) == 0
    est = estimate(token_split(fresh, local, pooled, params.block_tokens), params)
    assert est.saved.sum() == 0 and est.transfer.sum() == 0 and est.net_total == 0
    assert np.array_equal(est.ttft_pooled, est.ttft_per_host)
    assert break_even(est.split, params).status == NO_FETCHES


@few
@given(routed_instances(), params_strategy, st.sampled_from([None, 1, 3]))
def test_break_even_is_where_net_is_zero(instance, params, capacity):
    split = split_of(instance, params, capacity)
    be = break_even(split, params)
    if be.status == PAYS_ABOVE:
        assert abs(net_total_at(split, params, be.bandwidth_gb_s)) <= BREAK_EVEN_RTOL * be.saved_s
        assert net_total_at(split, params, be.bandwidth_gb_s * 1.01) > 0
        assert net_total_at(split, params, be.bandwidth_gb_s * 0.99) < 0
    elif be.status == NEVER_PAYS:
        # even a bandwidth far beyond any network leaves the net at or below zero
        assert net_total_at(split, params, 1e12) <= 1e-9 * max(be.saved_s, 1e-300)
    else:
        assert split.fetched.sum() == 0
        assert net_total_at(split, params, params.pool_bandwidth_gb_s) == 0
