"""The routers people deploy, each against hand-computed cases: kv-aware's load in blocks, Dynamo's cost
and books, and the SGLang router's cache_aware policy and approximate tree (ties included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.replay_oracle import replay_chains
from pyverify.fleet.routers import (
    PeerDecision,
    Router,
    RouterOptions,
    dynamo_costs_of_decisions,
)
from pyverify.fleet.service import ServiceModel
from pyverify.fleet.sglang_tree import ApproxTree
from tests.helpers import run_cli


class Cached:
    """A host cache the router reads: the blocks it holds, nothing evicted."""

    def __init__(self, *blocks: int) -> None:
        self.blocks = set(blocks)

    def prefix_hits(self, chain) -> int:
        hits = 0
        for block in chain:
            if block not in self.blocks:
                break
            hits += 1
        return hits


# --- kv-aware ---------------------------------------------------------------------------------------


def test_kv_aware_counts_load_in_blocks_by_default():
    caches = [Cached(1, 2), Cached()]
    router = Router("kv-aware", 2)
    assert router.options.kv_aware_load == "blocks"
    # score host 0: 2 overlap - 0 load; host 1: 0
    assert router.pick(0, (1, 2, 3), caches, [0, 0], [0, 0]) == 0
    # host 0 now carries 3 blocks: 2 - 3 = -1 < 0, so host 1
    assert router.pick(1, (1, 2), caches, [1, 0], [1, 0]) == 1
    router.finished(0)
    router.finished(1)
    assert router.pick(2, (1, 2), caches, [0, 0], [1, 1]) == 0


def test_kv_aware_with_requests_as_load_keeps_the_old_rule():
    caches = [Cached(1, 2), Cached()]
    router = Router("kv-aware", 2, RouterOptions(kv_aware_load="requests"))
    assert router.pick(0, (1, 2, 3), caches, [0, 0], [0, 0]) == 0
    assert router.pick(1, (1, 2), caches, [1, 0], [1, 0]) == 0  # 2 - 1 request = 1 > 0


def test_kv_aware_ties_go_to_smaller_load_then_fewer_routed_then_lowest_id():
    caches = [Cached(), Cached(), Cached()]
    router = Router("kv-aware", 3)
    assert router.pick(0, (7,), caches, [0, 0, 0], [2, 1, 1]) == 1
    # host 1 now carries a block (score -1); hosts 0 and 2 tie on score, load and routed: the lowest id
    assert router.pick(1, (8,), caches, [0, 0, 0], [0, 0, 0]) == 0


def test_an_unknown_kv_aware_load_is_refused():
    with pytest.raises(ValueError, match="kv-aware load"):
        Router("kv-aware", 2, RouterOptions(kv_aware_load="tokens"))


# --- dynamo -----------------------------------------------------------------------------------------

FOUR = RouterOptions(block_tokens=4)


def test_dynamo_cost_equals_the_hand_computed_cost():
    caches = [Cached(1, 2), Cached()]
    router = Router("dynamo", 2, FOUR)
    # 10 tokens: 2 full blocks (1, 2) hashed. Host 0: overlap 2, raw prefill (0 + max(10, 8)) / 4 = 2.5,
    # less the overlap 2 -> 0.5; decode: 2 new blocks -> 2.5. Host 1: 10 / 4 = 2.5 + 2 = 4.5.
    costs, overlaps, isl, hashed = router.dynamo_costs((1, 2, 3), caches, 0.0, 10)
    assert (costs, overlaps, isl, hashed) == ([2.5, 4.5], [2, 0], 10, [1, 2])
    assert router.pick(0, (1, 2, 3), caches, [0, 0], [0, 0], 0.0, 10) == 0
    # Host 0 now holds 2 prefill tokens (10 - 8) and blocks {1, 2}. 16 tokens, blocks 1..4:
    # host 0: (2 + 16) / 4 - 2 = 2.5, decode |{1,2} | {1,2,3,4}| = 4 -> 6.5; host 1: 4 + 4 = 8.
    assert router.dynamo_costs((1, 2, 3, 4), caches, 0.0, 16)[0] == [6.5, 8.0]
    assert router.pick(1, (1, 2, 3, 4), caches, [1, 0], [1, 0], 0.0, 16) == 0
    # Request 0's first token at 1 s: at 2 s its 2 prefill tokens are gone, request 1's 8 remain.
    # Block 9 (4 tokens): host 0: (8 + 4) / 4 = 3, decode |{1,2,3,4,9}| = 5 -> 8; host 1: 1 + 1 = 2.
    router.prefill_done(0, 1.0)
    assert router.dynamo_costs((9,), caches, 0.5, 4)[0] == [8.5, 2.0]  # before it, still counted
    assert router.dynamo_costs((9,), caches, 2.0, 4)[0] == [8.0, 2.0]
    # Both finished: host 0's books are empty again.
    router.finished(0)
    router.finished(1)
    assert router.dynamo_costs((9,), caches, 2.0, 4)[0] == [2.0, 2.0]


def test_dynamo_counts_a_block_shared_by_active_requests_once():
    caches = [Cached(), Cached()]
    router = Router("dynamo", 2, FOUR)
    first = router.pick(0, (1, 2), caches, [0, 0], [0, 0], 0.0, 8)  # a tie: drawn
    router.prefill_done(0, 0.0)
    # On request 0's host: no prefill pending, 8 / 4 = 2, + |{1,2}| = 2 -> 4; the other: 2 + 2 = 4.
    assert router.dynamo_costs((1, 2), caches, 0.0, 8)[0] == [4.0, 4.0]
    second = router.pick(1, (1, 2), caches, [1, 0], [1, 0], 0.0, 8)
    router.finished(0)
    # request 1 still holds (1, 2) and its 8 prefill tokens on its host: (8 + 4) / 4 + |{1, 2, 3}|
    expected = [2.0, 2.0]
    expected[second] = 3.0 + 3
    assert router.dynamo_costs((3,), caches, 0.0, 4)[0] == expected
    assert first in (0, 1)


def test_dynamo_without_input_tokens_counts_a_full_block_per_chain_entry():
    router = Router("dynamo", 1, FOUR)
    costs, _, isl, hashed = router.dynamo_costs((5, 6, 7), [Cached(5)], 0.0, None)
    assert (isl, hashed) == (12, [5, 6, 7])
    assert costs == [(12 / 4 - 1) + 3]


def test_dynamo_draws_among_equal_costs_from_its_seed():
    caches = [Cached(), Cached(1), Cached(1)]
    picks = {
        Router("dynamo", 3, RouterOptions(block_tokens=4, seed=seed)).pick(
            0, (1, 2), caches, [0] * 3, [0] * 3, 0.0, 8
        )
        for seed in range(40)
    }
    assert picks == {1, 2}  # hosts 1 and 2 tie (one cached block each); host 0 costs more
    again = [
        Router("dynamo", 3, RouterOptions(block_tokens=4, seed=7)).pick(
            0, (1, 2), caches, [0] * 3, [0] * 3, 0.0, 8
        )
        for _ in range(5)
    ]
    assert len(set(again)) == 1  # the same seed, the same draw


def test_dynamo_spreads_requests_with_no_cached_prefix_over_idle_hosts():
    caches = [Cached() for _ in range(4)]
    router = Router("dynamo", 4, FOUR)
    picks = []
    for index in range(200):
        picks.append(router.pick(index, (1000 + index,), caches, [0] * 4, [0] * 4, 0.0, 4))
        router.prefill_done(index, 0.0)
        router.finished(index)
    assert min(picks.count(host) for host in range(4)) > 25  # the lowest id took all 200


@settings(max_examples=60, deadline=None)
@given(
    chains=st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=5), min_size=1, max_size=30),
    fleet=st.integers(1, 4),
    capacity=st.one_of(st.none(), st.integers(2, 8)),
)
def test_dynamo_books_are_empty_after_every_timed_run(chains, fleet, capacity):
    """Every request routed is finished: no block or prefill token is left on any host."""
    chains = [tuple(dict.fromkeys(chain)) for chain in chains]
    router = Router("dynamo", fleet)
    arrivals = [100.0 * index for index in range(len(chains))]
    outputs = [3] * len(chains)
    service = ServiceModel(prefill_tokens_per_s=2000.0, decode_tokens_per_s=10.0, max_running=2)
    replay_chains(chains, router, capacity, "lru", False, service, arrivals, None, outputs)
    for books in router._dynamo:
        assert not books.active and not books.prefill_tokens and not books.prefill_ends


def test_the_event_loop_tells_the_router_each_first_token_and_each_end():
    calls = []

    class Spy(Router):
        def prefill_done(self, index, at):
            calls.append(("first", index, at))
            super().prefill_done(index, at)

        def finished(self, index):
            calls.append(("end", index, None))
            super().finished(index)

    chains = [(1, 2), (1, 2, 3), (4,), (1, 2), (5, 6)]
    service = ServiceModel(prefill_tokens_per_s=1000.0, decode_tokens_per_s=5.0, max_running=1)
    run = replay_chains(
        chains, Spy("dynamo", 2), 3, "lru", False, service, [0, 10, 20, 30, 40], None, [4] * 5
    )
    assert {index: at for kind, index, at in calls if kind == "first"} == dict(
        enumerate(run.first_token)
    )
    assert sorted(index for kind, index, _ in calls if kind == "end") == list(range(5))
    calls.clear()
    replay_chains(chains, Spy("dynamo", 2), 3, "lru", timed=False)
    assert [index for kind, index, _ in calls if kind == "end"] == list(range(5))


def test_the_step_model_shows_the_router_each_arrival_instant_and_prompt_length():
    """Under the (default) steps service model the router sees when a request arrives and how long
    its prompt is, as under the streams model: Dynamo's books drop a prefill at its first token and
    hash the prompt's full blocks only."""
    seen = []

    class Spy(Router):
        def pick(self, index, chain, caches, load, routed, now=0.0, input_tokens=None):
            seen.append((index, now, input_tokens))
            return super().pick(index, chain, caches, load, routed, now, input_tokens)

    chains = [(1, 2), (1, 2, 3), (4,)]
    service = ServiceModel(prefill_tokens_per_s=1000.0, decode_tokens_per_s=5.0, block_tokens=4)
    replay_chains(
        chains, Spy("dynamo", 2, FOUR), 8, "lru", False, service, [0, 250, 500], [7, 12, None]
    )
    assert seen == [(0, 0.0, 7), (1, 0.25, 12), (2, 0.5, None)]


@pytest.mark.parametrize("seed", range(8))
def test_dynamo_under_the_step_model_sends_a_follow_up_to_the_host_caching_its_prefix(seed):
    """Request 0 (8 blocks) has given its first token when request 1 (its 8 blocks and 1 token of a
    ninth) arrives. Request 0's host costs 8 active blocks + 8.25 blocks of prefill - 8 credited =
    8.25, the idle host 8 + 8.25. A router told neither the time (request 0's prefill still counted
    as pending) nor the prompt length (a ninth block hashed) sees both hosts cost 18 and sends
    request 1 away about one seed in two."""
    block = 4
    prefix = tuple(range(1, 9))
    chains = [prefix, prefix + (9,)]
    service = ServiceModel(prefill_tokens_per_s=1000.0, decode_tokens_per_s=5.0, block_tokens=block)
    options = RouterOptions(block_tokens=block, seed=seed)
    run = replay_chains(
        chains,
        Router("dynamo", 2, options),
        None,
        "lru",
        False,
        service,
        [0, 500],  # request 0's prefill takes 32 ms; its 50 decodes 10 s
        [8 * block, 8 * block + 1],
        [50, 1],
    )
    assert run.first_token[0] < run.arrival[1] < run.first_token[1]
    assert run.host_of[1] == run.host_of[0]
    assert run.gpu_hits[1] == 8


def test_dynamo_books_give_the_costs_dynamo_logged_for_its_own_choices():
    """Dynamo 1.6.1's own run (tests/peers, its source inside): its choices, fed into pyverify's books,
    give for each chosen worker the logit Dynamo logged."""
    recorded = json.loads(
        (Path(__file__).parent / "peers" / "dynamo-1.6.1-kv-router.json").read_text()
    )
    rows = recorded["requests"]
    decisions = [
        PeerDecision(
            row["worker"],
            row["cached_blocks"],
            row["input_length"],
            row["arrival_ms"],
            row["first_token_ms"],
            row["end_ms"],
        )
        for row in rows
    ]
    costs = dynamo_costs_of_decisions(
        recorded["workers"],
        [row["hash_ids"] for row in rows],
        decisions,
        RouterOptions(block_tokens=recorded["block_tokens"]),
    )
    assert costs == pytest.approx([row["logit"] for row in rows], rel=1e-9, abs=1e-9)
    assert len({row["worker"] for row in rows}) == recorded["workers"]  # every worker's books used


# --- sglang -----------------------------------------------------------------------------------------


def test_sglang_cache_aware_rule_on_hand_made_requests():
    router = Router("sglang", 3)
    # Empty tree: match rate 0 -> the least loaded host; all at 0 -> host 0 (lowest id).
    assert router.pick(0, (1, 2, 3, 4), [], [0, 0, 0], [0, 0, 0]) == 0
    # 3 of 4 blocks matched on host 0's path: 0.75 > 0.3, though host 0 is the busiest.
    assert router.pick(1, (1, 2, 3, 9), [], [1, 0, 0], [1, 0, 0]) == 0
    # No match: the least loaded, hosts 1 and 2 tie -> host 1.
    assert router.pick(2, (5, 6), [], [1, 0, 0], [2, 0, 0]) == 1
    # 1 of 5 matched: 0.2 <= 0.3 -> the least loaded: host 2.
    assert router.pick(3, (1, 7, 8, 9, 10), [], [1, 1, 0], [2, 1, 0]) == 2
    # 2 of 3 matched on host 1's (5, 6): 0.67 > 0.3, though host 2 now carries less.
    assert router.pick(4, (5, 6, 7), [], [0, 0, 5], [2, 1, 1]) == 1
    assert router._tree.tenant_char_count == {0: 5, 1: 3, 2: 5}
    assert router._tree.used_size_per_tenant() == {0: 5, 1: 3, 2: 5}


@pytest.mark.parametrize(
    "recorded", ["sglang-router-0.3.2-synthetic.json", "sglang-router-0.3.2-hot-prompt.json"]
)
def test_sglang_allows_every_decision_the_sglang_router_package_made(recorded):
    """sglang-router 0.3.2's own decisions (tests/peers, recorded by bench/vs_sglang_router.py, the
    source inside), fed into the port one by one: each is one the port's rule allows there."""
    record = json.loads((Path(__file__).parent / "peers" / recorded).read_text())
    port = Router("sglang", record["workers"])
    branches = set()
    for index, decision in enumerate(record["requests"]):
        branch, allowed = port.sglang_candidates(decision["hash_ids"], decision["loads"])
        assert decision["worker"] in allowed, (index, branch, allowed)
        branches.add(branch)
        port.record_sglang_pick(decision["hash_ids"], decision["worker"])
    expected = {"match", "fallback"} | ({"imbalanced"} if "hot-prompt" in recorded else set())
    assert branches == expected


def test_sglang_switches_to_the_least_loaded_host_when_load_is_imbalanced():
    router = Router("sglang", 3)
    assert router.pick(0, (1, 2), [], [0, 0, 0], [0, 0, 0]) == 0
    # max - min = 65 > 64 and 70 > 5 * 1.5: the least loaded, though host 0 matches all of it
    assert router.pick(1, (1, 2), [], [70, 5, 5], [1, 0, 0]) == 1  # equal loads: the lowest id
    # still balanced at max - min = 64: the match wins
    assert router.pick(2, (1, 2), [], [64, 0, 0], [1, 1, 0]) == 0
    # 100 - 40 = 60 <= 64: balanced
    assert router.pick(3, (1, 2), [], [100, 40, 40], [2, 1, 0]) == 0
    # The imbalanced pick was recorded in the tree for host 1.
    assert router._tree.prefix_match((1, 2), 0) == (2, 0)
    assert 1 in router._tree.root.children[1].tenants


def test_sglang_tree_eviction_by_hand():
    tree = ApproxTree()
    tree.insert((1, 2, 3), 0, 1)
    tree.insert((1, 2, 4), 1, 2)
    tree.insert((5,), 0, 3)
    assert tree.tenant_char_count == {0: 4, 1: 3}
    tree.evict_tenant_by_size(2)
    # Host 0: leaf (3) at 1 ms goes, then its (1, 2) at 1 ms -> 1 block left; (5) stays.
    # Host 1: leaf (4) at 2 ms goes -> 2 blocks; its (1, 2) is then at the limit and stays.
    assert tree.tenant_char_count == {0: 1, 1: 2}
    assert tree.used_size_per_tenant() == {0: 1, 1: 2}
    assert tree.prefix_match((1, 2, 3), 4) == (2, 1)
    assert tree.prefix_match((5,), 5) == (1, 0)


@settings(max_examples=100, deadline=None)
@given(
    inserts=st.lists(
        st.tuples(st.lists(st.integers(0, 4), max_size=6), st.integers(0, 3)), max_size=25
    ),
    limit=st.integers(0, 8),
)
def test_sglang_tree_counts_stay_the_recomputed_sizes(inserts, limit):
    """tree.rs's test_tenant_char_count as a property: the kept counts equal a fresh count of the nodes."""
    tree = ApproxTree()
    for now, (text, tenant) in enumerate(inserts):
        tree.insert(text, tenant, now)
    recomputed = tree.used_size_per_tenant()
    assert {t: c for t, c in tree.tenant_char_count.items() if c} == {
        t: c for t, c in recomputed.items() if c
    }
    tree.evict_tenant_by_size(limit)
    recomputed = tree.used_size_per_tenant()
    assert {t: c for t, c in tree.tenant_char_count.items() if c} == {
        t: c for t, c in recomputed.items() if c
    }
    assert all(count <= limit for count in tree.tenant_char_count.values())


def test_sglang_evicts_on_its_interval_of_trace_time():
    router = Router(
        "sglang", 2, RouterOptions(sglang_max_tree_size=1, sglang_eviction_interval_s=10)
    )
    assert router.pick(0, (1, 2, 3), [], [0, 0], [0, 0], now=0.0) == 0
    assert (
        router.pick(1, (1, 2, 3), [], [5, 0], [1, 0], now=9.0) == 0
    )  # matched: nothing evicted yet
    assert router._tree.tenant_char_count == {0: 3, 1: 0}
    # At 10 s each host is cut to 1 block before routing: host 0 loses (1, 2, 3), the match is gone,
    # and the request goes to the least loaded host.
    assert router.pick(2, (1, 2, 3), [], [5, 0], [2, 0], now=10.0) == 1
    assert router._tree.tenant_char_count == {0: 0, 1: 3}


# --- the command --------------------------------------------------------------------------------------


def test_replay_names_each_router_settings_in_json_and_text(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": 100 * i,
                    "input_length": 1024,
                    "output_length": 4,
                    "hash_ids": [i % 3, 10 + i],
                }
            )
            + "\n"
            for i in range(12)
        )
    )
    status, out, err = run_cli(
        capsys, "replay", str(trace), "--fleet", "2", "--router", "kv-aware,dynamo,sglang", "--json"
    )
    assert status == 0, err
    runs = {run["router"]: run["router_settings"] for run in json.loads(out)["runs"]}
    assert runs["kv-aware"] == {"overlap_weight": 1.0, "load_weight": 1.0, "load": "blocks"}
    assert runs["dynamo"]["overlap_score_credit"] == 1.0
    assert runs["dynamo"]["block_tokens"] == 512
    assert runs["sglang"]["cache_threshold"] == 0.3
    status, out, _ = run_cli(capsys, "replay", str(trace), "--fleet", "2", "--router", "kv-aware")
    assert status == 0
    assert "kv-aware: overlap_weight 1.0, load_weight 1.0, load blocks" in out


def test_compiled_engine_refuses_the_python_routers_in_one_line(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 512, "output_length": 2, "hash_ids": [1]}\n')
    status, out, err = run_cli(
        capsys, "replay", str(trace), "--router", "dynamo", "--backend", "compiled"
    )
    assert (status, out) == (2, "")
    assert "router dynamo takes the Python event loop" in err
    assert len(err.strip().splitlines()) == 1
