"""``--eviction vllm`` and ``--eviction sglang``: the engines' own caches, on traces checked by hand.

Every expectation below is written out from the engine's source (the lines
named in each test; the modules :mod:`pyverify.cache.vllm` and
:mod:`pyverify.cache.sglang` cite the files), then compared with
pyverify. Each trace is chosen so that the idealised policy without that
rule (``tail-first`` for vLLM, ``leaf-lru`` for SGLang) answers differently,
which the tests also assert: none of them can pass without the rule it is
about.
"""

from __future__ import annotations

import json

from pyverify.cli import main
from .helpers import run_cli
from pyverify.cache.sglang import SglangRadixCache, sglang_hits
from pyverify.sim.simulate import LEAF_LRU, POOLED, SGLANG, TAIL_FIRST, VLLM, simulate
from pyverify.cache.vllm import VllmBlockPool, vllm_hits


def vllm(chains, tokens, capacity, block_size):
    hits, unscheduled = vllm_hits(chains, tokens, [0] * len(chains), capacity, block_size)
    return hits, unscheduled


def idealised(chains, capacity, eviction):
    return list(simulate(chains, None, POOLED, capacity=capacity, eviction=eviction).hit_blocks)


# --- vLLM ---------------------------------------------------------------------
# Blocks of 2 tokens; free queue written front first; "bN" is physical block N.


def test_capacity_is_num_gpu_blocks_minus_the_null_block():
    # block_pool.py BlockPool.__init__: the null block is popped from the free queue.
    assert len(VllmBlockPool(3, 2).free) == 3


def test_vllm_block_aligned_repeat_recomputes_its_last_block_as_a_second_copy():
    chains, tokens = [(1, 2), (1, 2), (1, 2, 5)], [4, 4, 6]
    # A: max_cache_hit_length = 3 tokens -> 1 block, nothing cached: 0 hits; b1=h1, b2=h2;
    #    free (reversed, hashed to the back): b3 b2 b1.
    # B: 1 block at most (kv_cache_manager.py get_computed_blocks): h1 hits b1; block 2 is
    #    recomputed in b3 (popped from the front) and filed under h2 beside b2
    #    (cache_full_blocks, no de-duplication); free: b2 b3 b1 (b2, the old copy, not refreshed).
    # C: limit 5 tokens -> 2 blocks: h1 (b1), h2 (get_cached_block: first copy, b2) hit; h5 goes
    #    to b3, evicting the second copy of h2.
    assert vllm(chains, tokens, 3, 2) == ([0, 1, 2], [])
    assert idealised(chains, 3, TAIL_FIRST) == [0, 2, 2]
    pool = VllmBlockPool(3, 2)
    pool.run((1, 2), 4)
    pool.run((1, 2), 4)
    assert pool.copies[2] == [2, 3] and list(pool.free) == [2, 3, 1]


def test_vllm_hit_touches_the_first_copy_of_a_hash():
    chains, tokens = [(1,), (9,), (1,), (1, 5), (7,), (9, 6)], [1, 1, 1, 2, 1, 2]
    # Blocks of 1 token, pool of 4. A: b1=h1; X: b2=h9; B (limit 0, recomputed): b3 = a second
    #    copy of h1; free: b4 b1 b2 b3.
    # Y: h1 hits; get_cached_block (block_pool.py) returns the first copy filed, b1, which
    #    touch takes out of the queue; b4=h5; free: b2 b3 b4 b1 (b3, the other copy, stays put).
    # Z: pops b2, evicting h9. W: h9 is gone: 0. (Touching the newer copy b3 would leave b1
    #    at the front: Z would pop that stale copy, and W would hit h9.)
    assert vllm(chains, tokens, 4, 1) == ([0, 0, 0, 1, 0, 0], [])


def test_vllm_partial_last_block_takes_a_slot_and_returns_to_the_front():
    chains, tokens = [(1, 2), (5,), (1,)], [4, 3, 3]
    # A: b1=h1, b2=h2; free: b2 b1.
    # B: 3 tokens need cdiv(3, 2) = 2 blocks (allocate_slots): pops b2 (evicts h2) and b1
    #    (evicts h1); b2=h5, b1 holds the partial block, unhashed: free_blocks prepends it.
    # C: h1 was evicted by B's partial block: 0 hits (without that slot, h1 would hit).
    assert vllm(chains, tokens, 2, 2) == ([0, 0, 0], [])
    assert idealised(chains, 2, TAIL_FIRST) == [0, 0, 1]
    pool = VllmBlockPool(2, 2)
    pool.run((1, 2), 4)
    pool.run((5,), 3)
    assert list(pool.free) == [1, 2] and pool.hash_of == {2: 5}


def test_vllm_freed_partial_block_is_the_next_one_handed_out():
    chains, tokens = [(1, 2), (5,), (7,), (1,)], [4, 3, 2, 3]
    # A: b1=h1, b2=h2; free: b3 b2 b1.  B (3 tokens, 2 blocks): pops b3 and b2 (evicting h2);
    #    b3=h5, b2 partial. free_blocks: b2 unhashed -> prepend_n (front), b3 -> append_n: b2 b1 b3.
    # C (one block): pops the front, b2, which holds nothing: h1 survives.
    # D: h1 hits (had the partial block gone to the back, C would have evicted h1).
    assert vllm(chains, tokens, 3, 2) == ([0, 0, 0, 1], [])


def test_vllm_prompt_shorter_than_a_block_takes_a_slot_and_can_evict():
    chains, tokens = [(1, 2), (7,), (), (1, 2)], [4, 2, 1, 5]
    # A: b1=h1, b2=h2; free: b3 b2 b1.  A2 ([7], 2 tokens, limit 1 token -> 0 blocks): b3=h7;
    #    free: b2 b1 b3.  B (1 token, no full block): one block, popped from the front: b2,
    #    evicting h2; back to the front unhashed.
    # C (5 tokens, limit 2 blocks): h1 hits, h2 is gone: 1 hit (2 if B had been left out).
    assert vllm(chains, tokens, 3, 2) == ([0, 0, 0, 1], [])
    without_short = [chain for chain in chains if chain]
    assert vllm(without_short, [4, 2, 5], 3, 2) == ([0, 0, 2], [])


def test_vllm_prompt_longer_than_the_pool_is_never_scheduled():
    chains, tokens = [(1, 2, 3), (1,)], [6, 3]
    # A needs 3 blocks of a 2-block pool: allocate_slots returns None, nothing changes.
    # B: nothing cached: 0 hits (tail-first keeps A's first 2 blocks, and B hits 1).
    assert vllm(chains, tokens, 2, 2) == ([0, 0], [0])
    assert idealised(chains, 2, TAIL_FIRST) == [0, 1]


def test_vllm_through_simulate_and_the_cli(tmp_path, capsys):
    path = tmp_path / "t.json"
    requests = [
        {"blocks": [1, 2], "input_tokens": 4},
        {"blocks": [1, 2], "input_tokens": 4},
        {"blocks": [1, 2, 5], "input_tokens": 6},
    ]
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "t",
                "hosts": 1,
                "block_size_tokens": 2,
                "requests": requests,
            }
        )
    )
    assert (
        main(
            [
                "simulate",
                str(path),
                "--model",
                "pooled",
                "--capacity",
                "3",
                "--eviction",
                "vllm",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["eviction"] == "vllm" and out["measured"]["token_hits"] == 2 * (0 + 1 + 2)
    assert out["unscheduled_requests"] == []
    assert simulate(
        [(1, 2), (1, 2), (1, 2, 5)], None, POOLED, 3, VLLM, block_size=2
    ).hit_blocks == (0, 1, 2)


def test_engine_flags_fail_in_one_line(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "t",
                "hosts": 1,
                "block_size_tokens": 2,
                "requests": [{"blocks": [1, 2]}],
            }
        )
    )
    for argv, words in (
        (["--eviction", "vllm"], "needs a capacity"),
        (
            ["--capacity", "3", "--eviction", "lru", "--page-size", "2"],
            "only with --eviction sglang",
        ),
        (["--capacity", "3", "--eviction", "sglang", "--page-size", "3"], "not a multiple"),
        (
            ["--capacity", "3", "--eviction", "vllm", "--page-size", "2"],
            "only with --eviction sglang",
        ),
        (["--capacity", "3", "--eviction", "vllm", "--optimum"], "the optima are block-level"),
        (
            ["--capacity", "3", "--eviction", "sglang", "--routing", "prefix-affinity"],
            "not with --eviction",
        ),
        (["--capacity", "1", "--eviction", "sglang", "--page-size", "4"], "holds no page"),
    ):
        status, _, err = run_cli(
            capsys, "simulate", str(path), "--model", "pooled", *argv
        )  # flag checks exit as argparse does
        err = err.strip()
        assert status == 2
        assert words in err and "\n" not in err


# --- SGLang -------------------------------------------------------------------
# Block size 1 (a block id per token), so page size 1 is the token-level radix tree.


def sglang(chains, capacity, page_size=1, policy="lru", tokens=None, max_input="pool"):
    """SGLang's cache over a pool of ``capacity`` tokens.

    SGLang refuses prompts of ``pool - 6`` tokens or more (tp_worker.py,
    ``max_req_input_len``), which in a pool of a few tokens is every prompt;
    the traces below isolate one eviction rule each in such pools, so by
    default they lift that bound to the pool (``max_input="pool"``).
    ``test_sglang_refuses_prompts_within_six_tokens_of_the_pool`` checks the
    bound itself, and the CLI tests run with it.
    """
    tokens = tokens or [len(chain) for chain in chains]
    lifted = capacity if max_input == "pool" else max_input
    return sglang_hits(chains, tokens, [0] * len(chains), capacity, 1, page_size, policy, lifted)


def test_sglang_refuses_prompts_within_six_tokens_of_the_pool():
    # Pool of 16 tokens: max_req_input_len = min(context_len - 1, 16 - 1) - 5 = 10 (tp_worker.py),
    # and validate_input_length refuses len >= 10. A (9 tokens) runs; B (10 tokens) is refused
    # before the cache sees it; C re-sends A: limit 8 tokens, 8 hit.
    chains = [tuple(range(1, 10)), tuple(range(1, 11)), tuple(range(1, 10))]
    assert sglang(chains, 16, max_input=None) == ([0, 0, 8], [1])
    # Accepted, B would hit A's 9 tokens (its limit is 9).
    assert sglang(chains, 16) == ([0, 9, 8], [])


def test_sglang_hits_at_most_input_len_minus_one():
    # schedule_batch.py: the prefix is matched on input_ids[:input_len - 1]; B hits 2 of 3.
    assert sglang([(1, 2, 3), (1, 2, 3)], 8) == ([0, 2], [])
    assert idealised([(1, 2, 3), (1, 2, 3)], 8, LEAF_LRU) == [0, 3]


def test_sglang_evicts_whole_leaf_nodes_until_the_shortfall_is_covered():
    chains = [(1, 2, 3), (7,), (8, 9), (1, 2), (7, 5)]
    # Pool of 5 tokens. A: node [1,2,3] (2 free); B: node [7] (1 free).
    # C needs 2 (alloc_token_slots), 1 free: evict(1) (common.py evict_from_tree_cache: the
    #   shortfall) pops the least recently used leaf, the whole node [1,2,3] (3 tokens >= 1):
    #   [7] stays; [8,9] inserted (2 free).
    # D (limit 1 token): [1] is gone: 0 (leaf-lru frees block by block, keeps 1 and 2, hits 2).
    #   D fits without evicting. E: [7] hits 1.
    assert sglang(chains, 5) == ([0, 0, 0, 0, 1], [])
    assert idealised(chains, 5, LEAF_LRU)[3] == 2


def test_sglang_split_remainder_counts_as_just_used():
    chains = [(1, 2, 3, 4), (7,), (1, 2, 9), (5, 6), (7, 8)]
    # Pool of 6. A: node X=[1,2,3,4] (2 free). B: node [7] (1 free).
    # C: match [1,2] (limit 2) stamps X, *then* splits it (_match_prefix_helper): P=[1,2] and
    #    R=[3,4], R keeping C's stamp; hit 2; insert adds leaf [9] (0 free).
    # D: evict(2): leaves [7] (B's time), R (C's time), [9] (newest): [7] (1 token), then R (2): 3 freed.
    # E: [7] was evicted: 0. (Had R kept A's time, R alone would go first and E would hit 1.)
    assert sglang(chains, 6) == ([0, 0, 2, 0, 0], [])
    assert idealised(chains, 6, LEAF_LRU)[4] == 1


def test_sglang_paged_demand_is_the_extension_plus_one_page():
    chains = [(1, 2, 3, 4), (5, 6), (1, 2, 3, 4)]
    # Page size 2, pool of 6 tokens = 3 pages. A: pages [2,4] (ids of each page's last block),
    #    limit (4 - 1) // 2 = 1 page, nothing cached; inserted as one node (1 page free).
    # B: extension 2 + one page 2 = 4 > 2 free (alloc_paged_token_slots_extend): evict(2) frees
    #    the whole node [2,4]. C: 0 hits. Without the extra page B would fit and C would hit
    #    1 page = 2 blocks.
    assert sglang(chains, 6, page_size=2) == ([0, 0, 0], [])
    assert sglang([(1, 2, 3, 4), (5, 6, 7, 8), (1, 2, 3, 4)], 12, page_size=2)[0] == [0, 0, 2]


def test_sglang_unaligned_tail_holds_a_page_and_a_prompt_longer_than_the_pool_never_runs():
    # Page size 2, pool of 2 pages: 3 tokens need cdiv(3, 2) = 2 pages, 5 tokens need 3.
    assert sglang([(1, 2, 3), (1, 2, 3, 4, 5)], 4, page_size=2) == ([0, 0], [1])


def test_sglang_prompt_shorter_than_a_page_takes_a_page_and_can_evict():
    # Blocks and pages of 2 tokens, pool of 14 tokens = 7 pages (prompts of up to 7 tokens accepted).
    # A, B, E (4 tokens each): one node of 2 pages each; 1 page (2 tokens) free.
    # C (1 token, no full page): limit 0, nothing matched; demand = extension 1 + one page 2 = 3 > 2
    #   (alloc_paged_token_slots_extend): evict(1) frees the least recently used leaf, A's node.
    # F re-sends A: limit 3 tokens = 1 page, A's node is gone: 0.
    chains, tokens = [(1, 2), (5, 6), (7, 8), (), (1, 2)], [4, 4, 4, 1, 4]
    assert sglang_hits(chains, tokens, [0] * 5, 7, 2, 2) == ([0, 0, 0, 0, 0], [])
    # Without C (an imported instance leaves it out): F's demand 2 + 2 evicts B's node instead,
    # and F hits A's first page (1 block).
    assert sglang_hits([c for c in chains if c], [4, 4, 4, 4], [0] * 4, 7, 2, 2) == (
        [0, 0, 0, 1],
        [],
    )


def test_sglang_locked_prefix_is_never_evicted_and_fifo_goes_by_creation_time():
    chains = [(1, 2), (7,), (1, 2, 5, 6), (1, 2)]
    # FIFO, pool of 4. A: X=[1,2] (oldest); B: [7] (1 free). C: match [1,2,5] -> X whole, hit 2,
    #    X locked (inc_lock_ref); needs 2, 1 free: evict(1) skips the locked X although it is
    #    the oldest, frees [7]. D: X is still there: hit 1 (limit 1).
    assert sglang(chains, 4, policy="fifo") == ([0, 0, 2, 1], [])
    chains = [(1, 2), (7,), (1, 2), (8, 9), (7, 6)]
    # Pool of 4. C re-sends A: match [1] splits X into P=[1] (new) and R=[2] (stamped, created with A).
    # D: evict(1): LRU takes [7] (older stamp than R); FIFO takes R (older creation than [7]).
    # E: [7] hits 1 under FIFO only.
    assert sglang(chains, 4)[0] == [0, 0, 1, 0, 0]
    assert sglang(chains, 4, policy="fifo")[0] == [0, 0, 1, 0, 1]


def test_sglang_through_the_cli(tmp_path, capsys):
    path = tmp_path / "t.json"
    requests = [{"blocks": list(chain)} for chain in [(1, 2, 3), (7,), (8, 9), (1, 2), (7, 5)]]
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "t",
                "hosts": 1,
                "block_size_tokens": 1,
                "requests": requests,
            }
        )
    )
    # A pool of 5 tokens refuses every prompt (len >= 5 - 6): no hits, all listed.
    assert (
        main(
            [
                "simulate",
                str(path),
                "--model",
                "pooled",
                "--capacity",
                "5",
                "--eviction",
                "sglang",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["measured"]["token_hits"] == 0 and out["unscheduled_requests"] == [0, 1, 2, 3, 4]
    # 12 tokens (prompts of up to 5 accepted) evict nothing: D hits [1] (limit 1), E hits [7].
    assert (
        main(
            [
                "simulate",
                str(path),
                "--model",
                "pooled",
                "--capacity",
                "12",
                "--eviction",
                "sglang",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["measured"]["token_hits"] == 2 and out["unscheduled_requests"] == []
    assert simulate([(1, 2, 3), (1, 2, 3)], None, POOLED, 10, SGLANG, block_size=1).hit_blocks == (
        0,
        2,
    )
    assert SglangRadixCache(2, 1).tree_pages() == 0


def test_engines_ignore_a_partial_last_block_the_trace_names_and_run_one_cache_per_host(
    tmp_path, capsys
):
    # Mooncake-style chains name the partial last block; vLLM and SGLang never hash it:
    # [1,2] with 3 tokens in blocks of 2 is one full block (h1) plus a partial one.
    path = tmp_path / "t.json"
    requests = [{"blocks": [1, 2], "input_tokens": 3}] * 4
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "t",
                "hosts": 2,
                "block_size_tokens": 2,
                "requests": requests,
            }
        )
    )
    # vLLM, per host of 2 blocks, round-robin: each host sees [1,2] twice. First: limit
    # (3 - 1) // 2 = 1 block, nothing cached; h1 and the partial block take both slots.
    # Second: h1 hits (1 block, 2 tokens); the partial block never does.
    argv = [
        "simulate",
        str(path),
        "--model",
        "per-host",
        "--routing",
        "round-robin",
        "--fleet",
        "2",
        "--capacity",
        "2",
        "--eviction",
        "vllm",
        "--json",
        "--witness",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["witness"] == {"cache_of": [0, 1, 0, 1], "hit_blocks": [0, 0, 1, 1]}
    assert out["measured"]["token_hits"] == 4
    # SGLang, one pool of 12 tokens in pages of 2 (prompts of up to 5 tokens accepted): the
    # first request's one full page is inserted; every later one matches it (limit 1 page):
    # hits 0, 1, 1, 1.
    assert (
        main(
            [
                "simulate",
                str(path),
                "--model",
                "pooled",
                "--capacity",
                "6",
                "--eviction",
                "sglang",
                "--page-size",
                "2",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["measured"]["block_hits"] == 3


def test_budgets_points_an_engine_eviction_to_simulate(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "t",
                "hosts": 1,
                "block_size_tokens": 2,
                "requests": [{"blocks": [1, 2]}],
            }
        )
    )
    try:
        code = main(["budgets", str(path), "--eviction", "leaf-lru,vllm"])
    except SystemExit as stop:  # argparse's own exit
        code = stop.code
    assert code == 2
    assert "simulate --eviction vllm" in capsys.readouterr().err


# --- properties on generated token-id traces --------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pyverify.inputs.tokens_import import chain_of_tokens  # noqa: E402


@st.composite
def prompts(draw):
    """Token-id prompts over a tiny alphabet: shared heads, re-sends, partial and short blocks."""
    heads = draw(st.lists(st.lists(st.integers(0, 2), max_size=6), min_size=1, max_size=3))
    picks = draw(
        st.lists(
            st.tuples(st.integers(0, len(heads) - 1), st.lists(st.integers(0, 2), max_size=6)),
            min_size=1,
            max_size=20,
        )
    )
    return [heads[head] + tail or [0] for head, tail in picks]


def longest_earlier_prefix(earlier, chain):
    """Blocks of ``chain`` that some earlier chain starts with (block ids name whole prefixes)."""
    return max(
        (
            next(
                (j for j, (a, b) in enumerate(zip(chain, other)) if a != b),
                min(len(chain), len(other)),
            )
            for other in earlier
        ),
        default=0,
    )


@given(prompts(), st.integers(1, 3))
def test_a_pool_that_never_evicts_hits_the_longest_earlier_prefix_up_to_the_limit(tokens, block):
    chains = [chain_of_tokens(prompt, block) for prompt in tokens]
    lengths = [len(prompt) for prompt in tokens]
    expected = [
        min(longest_earlier_prefix(chains[:i], chain), (n - 1) // block)
        for i, (chain, n) in enumerate(zip(chains, lengths))
    ]
    # vLLM: room for every block ever allocated, so no cached block is ever evicted
    room = sum(-(-n // block) for n in lengths)
    assert vllm(chains, lengths, room, block) == (expected, [])
    # SGLang, page = block: room for every token plus a page per request
    assert sglang_hits(
        chains,
        lengths,
        [0] * len(chains),
        room + len(chains),
        block,
        block,
        max_input=(room + len(chains)) * block,
    ) == (expected, [])


@given(prompts(), st.integers(1, 3), st.integers(1, 8), st.sampled_from(["lru", "fifo"]))
def test_pools_keep_their_books(tokens, block, capacity, policy):
    chains = [chain_of_tokens(prompt, block) for prompt in tokens]
    pool, cache = (
        VllmBlockPool(capacity, block),
        SglangRadixCache(capacity, block, policy, capacity * block),
    )
    for chain, prompt in zip(chains, tokens):
        n = len(prompt)
        hit = pool.run(chain, n)
        assert hit is None or hit <= (n - 1) // block
        # every block is free between requests; each hash's copies carry that hash
        assert sorted(pool.free) == list(range(1, capacity + 1))
        assert all(pool.hash_of[copy] == h for h, copies in pool.copies.items() for copy in copies)
        assert sum(map(len, pool.copies.values())) == len(pool.hash_of) <= capacity
        page_hit = cache.run(list(chain), n)
        assert page_hit is None or page_hit <= (n - 1) // block
        assert (
            cache.tree_pages() + cache.free_pages == capacity
        )  # nothing leaks, nothing is counted twice
        assert (
            all(node.lock_ref == 0 for node in nodes_below(cache.root)) and cache.root.lock_ref == 1
        )  # unlocked


def nodes_below(root):
    stack, found = list(root.children.values()), []
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children.values())
    return found
