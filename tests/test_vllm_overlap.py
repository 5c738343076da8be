"""vLLM's block pool with several requests running at once (VllmBlockPool.start / finish).

The one-at-a-time model (``run``) is the parity-checked one; ``start`` and
``finish`` add vLLM's reference counts. bench/engine_parity.py compares them
with vLLM's own KVCacheManager under overlapping schedules; here, hand-checked
cases and the pool's bookkeeping under random schedules.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.cache.vllm import VllmBlockPool

B = 4  # tokens per block


def test_a_request_started_while_another_runs_hits_its_blocks():
    pool = VllmBlockPool(capacity=8, block_size=B)
    hit, a_blocks = pool.start(
        [10, 11], 2 * B + 1
    )  # two full blocks and a partial one: three slots
    assert hit == 0 and len(a_blocks) == 3
    hit, b_blocks = pool.start(
        [10, 11, 12], 3 * B + 2
    )  # vLLM files hashes at allocation: A's two blocks hit
    assert hit == 2 and b_blocks[:2] == a_blocks[:2]
    assert len(pool.free) == 8 - 3 - 2  # B took its third full block and its partial one
    pool.finish(
        a_blocks
    )  # the shared blocks still have a user: only A's partial block is free again
    assert set(a_blocks[:2]) <= set(pool.users) and a_blocks[2] in pool.free
    pool.finish(b_blocks)
    assert not pool.users and len(pool.free) == 8


def test_a_request_is_refused_while_others_hold_the_blocks_and_fits_after():
    pool = VllmBlockPool(capacity=4, block_size=B)
    _, held = pool.start([1, 2, 3], 3 * B)
    assert pool.start([7, 8], 2 * B) is None  # two new blocks, one free
    assert len(pool.free) == 1 and pool.users == {
        block: 1 for block in held
    }  # a refusal changes nothing
    pool.finish(held)
    assert pool.start([7, 8], 2 * B) is not None
    assert pool.run([1, 2, 3, 4, 5], 5 * B) is None  # more blocks than the pool: never, even alone


def test_hit_blocks_in_the_free_queue_count_against_the_free_blocks():
    """get_num_blocks_to_allocate: touching a free hit block takes it from the free queue, so it counts."""
    pool = VllmBlockPool(capacity=4, block_size=B)
    assert pool.run([1, 2], 2 * B + 1) == 0  # blocks 1, 2 cached and free
    _, held = pool.start([9], B)  # one block in use: three free, two of them cached
    _, second = pool.start([1, 2], 2 * B + 3)  # two free hits + one new = 3 <= 3
    pool.finish(second)
    pool.finish(held)
    _, held = pool.start(
        [9, 8], 2 * B
    )  # two blocks in use; the two free ones are 1 and 2's cached blocks
    assert sorted(pool.hash_of[block] for block in pool.free) == [1, 2]
    assert (
        pool.start([1, 2], 2 * B + 3) is None
    )  # two free hits + one new = 3 > 2 free: refused now


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**9), capacity=st.integers(1, 12), max_running=st.integers(1, 5))
def test_every_block_is_free_or_in_use_and_hashes_are_filed_once(seed, capacity, max_running):
    rng = random.Random(seed)
    pool = VllmBlockPool(capacity, B)
    running: list[list[int]] = []
    for _ in range(60):
        if running and (len(running) >= max_running or rng.random() < 0.4):
            pool.finish(running.pop(rng.randrange(len(running))))
        else:
            k = rng.randint(0, 4)
            chain = [rng.randint(0, 3) * 10 + j for j in range(k)]  # a few shared heads
            started = pool.start(chain, k * B + rng.randint(0 if k else 1, B - 1))
            if started is not None:
                running.append(started[1])
        in_use = [block for blocks in running for block in blocks]
        assert set(pool.users) == set(in_use) and not set(pool.users) & set(pool.free)
        assert all(pool.users[block] == in_use.count(block) for block in pool.users)
        assert len(pool.free) + len(pool.users) == capacity
        filed = [block for copies in pool.copies.values() for block in copies]
        assert sorted(filed) == sorted(pool.hash_of) and all(
            pool.hash_of[b] == h for h, c in pool.copies.items() for b in c
        )
    for blocks in running:
        pool.finish(blocks)
    assert not pool.users and len(pool.free) == capacity
