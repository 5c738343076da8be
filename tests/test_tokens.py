"""Token weights, the measurement window and block/token tallies, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.errors import UserError
from pyverify.sim.accounting import tally
from pyverify.sim.engine_curves import chain_order_distances, tail_first_ranks, weighted_curve
from pyverify.sim.simulate import LRU, POOLED, TAIL_FIRST, simulate
from pyverify.sim.tokens import token_weights
from pyverify.sim.window import Window

from .strategies import prefix_closed_chains

CHAINS = [(1, 2, 3), (1, 2), (1, 4)]


def test_last_block_is_partial():
    weights = token_weights(
        CHAINS, 512, [{"input_tokens": 1100}, {"input_tokens": 1024}, {"input_tokens": 600}]
    )
    # 1100 = 512 + 512 + 76; 1024 = 512 + 512; 600 = 512 + 88
    assert weights.block_tokens.tolist() == [512, 512, 76, 512, 512, 512, 88]
    assert weights.uncached_tail.tolist() == [0, 0, 0]
    assert weights.total == 1100 + 1024 + 600
    assert weights.source == "input_tokens (blocks of 512, last block partial)"


def test_given_block_tokens_win_and_missing_lengths_use_the_block_size():
    weights = token_weights(CHAINS, 16, [{"block_tokens": [16, 16, 3]}, {}, {"input_tokens": 20}])
    assert weights.block_tokens.tolist() == [16, 16, 3, 16, 16, 16, 4]
    assert "mixed" in weights.source


def test_tokens_beyond_the_chain_are_an_uncached_tail():
    # a token-id log hashes only full blocks: 40 tokens in blocks of 16 give 2 blocks and 8 tail tokens
    weights = token_weights([(1, 2)], 16, [{"input_tokens": 40}])
    assert weights.block_tokens.tolist() == [16, 16]
    assert weights.uncached_tail.tolist() == [8]
    # and says so: its blocks are full, not "last block partial"
    assert (
        weights.source
        == "input_tokens (blocks of 16, full blocks, tokens past the last block never cached)"
    )
    assert (
        token_weights([(1, 2)], 16, [{"input_tokens": 32}]).source
        == "input_tokens (blocks of 16, full blocks)"
    )


def test_no_block_size_means_no_token_weights():
    assert token_weights(CHAINS, None) is None


@pytest.mark.parametrize(
    "extra, field",
    [
        ([{"input_tokens": 1024}, {}, {}], "requests[0].input_tokens"),
        ([{"block_tokens": [1, 2]}, {}, {}], "requests[0].block_tokens"),
        ([{}, {"block_tokens": [1, 0]}, {}], "requests[1].block_tokens[1]"),
    ],
)
def test_inconsistent_token_counts_name_the_request_and_field(extra, field):
    with pytest.raises(UserError) as error:
        token_weights(CHAINS, 512, extra, where="trace.jsonl")
    assert str(error.value).startswith(f"trace.jsonl: {field}:")


def test_window_arithmetic_matches_kvcache_simulator():
    # warmup_requests = floor(n * fraction)
    assert Window(0.5).first_measured(3993) == 1996
    assert Window(0.5).first_measured(3) == 1
    assert Window(0.0).first_measured(10) == 0
    with pytest.raises(UserError):
        Window(1.0)


def test_tally_by_hand():
    weights = token_weights(
        CHAINS, 512, [{"input_tokens": 1100}, {"input_tokens": 1024}, {"input_tokens": 600}]
    )
    run = simulate(CHAINS, None, POOLED)
    assert run.hit_blocks == (0, 2, 1)
    whole = tally(CHAINS, run.hit_blocks, weights)
    assert (whole.block_references, whole.block_hits, whole.tokens, whole.token_hits) == (
        7,
        3,
        2724,
        1536,
    )
    last_two = tally(
        CHAINS, run.hit_blocks, weights, Window(0.5)
    )  # floor(3 * 0.5) = 1: requests 1 and 2
    assert (last_two.first_request, last_two.block_references, last_two.block_hits) == (1, 4, 3)
    assert (last_two.tokens, last_two.token_hits) == (1624, 1536)
    assert last_two.token_hit_rate == pytest.approx(1536 / 1624)


@given(
    prefix_closed_chains(max_nodes=12, max_requests=20),
    st.integers(1, 6),
    st.sampled_from([0.0, 0.3, 0.5]),
    st.data(),
)
def test_weighted_curves_equal_per_capacity_tallies(chains, capacity, fraction, data):
    extra = [
        {"input_tokens": 8 * (len(chain) - 1) + data.draw(st.integers(1, 12))} for chain in chains
    ]
    weights = token_weights(chains, 8, extra)
    window = Window(fraction)
    for eviction, distances in (
        (LRU, chain_order_distances(chains)),
        (TAIL_FIRST, tail_first_ranks(chains)),
    ):
        curve = weighted_curve(distances, chains, weights, window)
        run = simulate(chains, None, POOLED, capacity=capacity, eviction=eviction)
        expected = tally(chains, run.hit_blocks, weights, window)
        assert curve.token_hits([capacity])[0] == expected.token_hits
        assert curve.block_hits([capacity])[0] == expected.block_hits
        assert curve.tokens == expected.tokens


@given(
    prefix_closed_chains(max_nodes=12, max_requests=30),
    st.sampled_from([0.0, 0.3, 0.5]),
    st.booleans(),
    st.data(),
)
def test_the_curve_binned_in_the_pass_is_the_curve_of_the_distances(
    chains, fraction, weighed, data
):
    # lru_weighted_curve bins one pooled cache with compact weights inside the compiled pass; the oracle
    # histograms every reference's distance.
    pytest.importorskip("numba")
    from pyverify.cache.arrays import flatten
    from pyverify.sim.engine_curves import _binned_in_the_pass

    extra = [
        {"input_tokens": 8 * (len(chain) - 1) + data.draw(st.integers(1, 12))} for chain in chains
    ]
    weights = token_weights(chains, 8, extra) if weighed else None
    window = Window(fraction)
    expected = weighted_curve(chain_order_distances(chains), chains, weights, window)
    ids, lengths = flatten(chains)
    binned = _binned_in_the_pass(ids, lengths, weights, window)
    assert binned.blocks == expected.blocks and binned.tokens == expected.tokens
    assert binned.block_hist.tolist() == expected.block_hist.tolist()
    assert (binned.token_histogram() is None) == (expected.token_histogram() is None)
    if weighed:
        assert binned.token_histogram().tolist() == expected.token_histogram().tolist()
        # read at capacities without the histogram: below, at and past every distance, unsorted, repeated
        capacities = data.draw(
            st.lists(st.integers(1, binned.block_hist.size + 2), min_size=1, max_size=6)
        )
        assert binned.token_hits(capacities).tolist() == expected.token_hits(capacities).tolist()


def test_token_weights_of_mooncake_lines_agree_with_the_cost_model():
    from pyverify.cost.estimate import token_split

    extra = [{"input_tokens": 1100}, {"input_tokens": 1024}, {"input_tokens": 600}]
    weights = token_weights(CHAINS, 512, extra)
    split = token_split(CHAINS, [0, 2, 1], None, 512, [e["input_tokens"] for e in extra])
    assert int(split.total.sum()) == weights.total
    assert int(split.local.sum()) == tally(CHAINS, [0, 2, 1], weights).token_hits
    assert np.all(split.total >= 0)


def weights_one_request_at_a_time(chains, block_size, extra, where="input"):
    """The rules of pyverify.sim.tokens, written request by request (the form they had before
    the vectorised one): the oracle for token_weights and weights_of_lengths."""
    weights, tails, sources = [], [], set()
    for index, chain in enumerate(chains):
        k = len(chain)
        fields = extra[index] if index < len(extra) else {}
        given, total = fields.get("block_tokens"), fields.get("input_tokens")
        if given is not None:
            if not isinstance(given, (list, tuple)) or len(given) != k:
                raise UserError(
                    f"{where}: requests[{index}].block_tokens: expected a list of {k} token counts, one per block"
                )
            for position, value in enumerate(given):
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise UserError(
                        f"{where}: requests[{index}].block_tokens[{position}]: expected a positive integer, got {value!r}"
                    )
            weights += list(given)
            tails.append(0)
            sources.add("block_tokens")
        elif total is not None:
            if total <= block_size * (k - 1):
                raise UserError(
                    f"{where}: requests[{index}].input_tokens: {total} tokens cannot fill {k} blocks of "
                    f"{block_size} tokens (needs more than {block_size * (k - 1)})"
                )
            weights += [block_size] * (k - 1) + [min(block_size, total - block_size * (k - 1))]
            tails.append(max(0, total - block_size * k))
            sources.add("input_tokens")
        else:
            weights += [block_size] * k
            tails.append(0)
            sources.add("block size")
    return weights, tails, sources


request_fields = st.one_of(
    st.just({}),
    st.builds(lambda n: {"input_tokens": n}, st.integers(0, 40)),
    st.builds(lambda counts: {"block_tokens": counts}, st.lists(st.integers(0, 9), max_size=4)),
    st.builds(
        lambda n, counts: {"input_tokens": n, "block_tokens": counts},
        st.integers(0, 40),
        st.lists(st.integers(1, 9), max_size=4),
    ),
)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=12), st.integers(1, 8), st.data())
def test_vectorised_weights_follow_the_rules_request_by_request(lengths, block_size, data):
    chains = [tuple(range(k)) for k in lengths]
    extra = data.draw(st.lists(request_fields, min_size=0, max_size=len(chains)))
    try:
        expected = weights_one_request_at_a_time(chains, block_size, extra)
    except UserError as error:
        with pytest.raises(UserError) as raised:
            token_weights(chains, block_size, extra)
        assert str(raised.value) == str(error)
        return
    weights = token_weights(chains, block_size, extra)
    assert weights.block_tokens.tolist() == expected[0]
    assert weights.uncached_tail.tolist() == expected[1]
    assert weights.source.startswith("mixed") == (len(expected[2]) > 1)


@st.composite
def weighted_requests(draw):
    """Chains' lengths, each request's prompt length (or none) or its own block counts, and a hit prefix."""
    block = draw(st.integers(1, 9))
    requests = []
    for _ in range(draw(st.integers(1, 12))):
        k = draw(st.integers(1, 5))
        kind = draw(st.sampled_from(["length", "none", "given"]))
        if kind == "length":  # more than block * (k - 1) tokens: the last block holds at least one
            extra = {"input_tokens": draw(st.integers(block * (k - 1) + 1, block * (k + 2)))}
        elif kind == "given":
            extra = {"block_tokens": draw(st.lists(st.integers(1, 20), min_size=k, max_size=k))}
        else:
            extra = {}
        requests.append((k, extra, draw(st.integers(0, k))))
    return block, requests


@settings(max_examples=300, deadline=None)
@given(weighted_requests(), st.data())
def test_compact_weights_count_the_tokens_the_rules_give(case, data):
    """Hit tokens and totals, from the compact weights, against each block's weight written out by the rules."""
    block, requests = case
    chains = [tuple(range(100 * i, 100 * i + k)) for i, (k, _, _) in enumerate(requests)]
    weights = token_weights(chains, block, [extra for _, extra, _ in requests])
    by_rule, tails = [], []
    for k, extra, _ in requests:
        if "block_tokens" in extra:
            row, tail = list(extra["block_tokens"]), 0
        elif "input_tokens" in extra:
            total = extra["input_tokens"]
            row = [block] * (k - 1) + [min(block, total - block * (k - 1))]
            tail = max(0, total - block * k)
        else:
            row, tail = [block] * k, 0
        by_rule.append(row)
        tails.append(tail)
    hits = np.array([h for _, _, h in requests], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([k for k, _, _ in requests]))).astype(np.int64)
    assert weights.hit_tokens(offsets, hits).tolist() == [
        sum(row[:h]) for row, (_, _, h) in zip(by_rule, requests)
    ]
    assert weights.block_tokens.tolist() == [w for row in by_rule for w in row]
    first = data.draw(st.integers(0, len(requests)))
    assert weights.tokens_from(first) == sum(sum(row) for row in by_rule[first:]) + sum(
        tails[first:]
    )
