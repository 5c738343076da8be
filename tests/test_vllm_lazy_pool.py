"""The vLLM pool keeps its never-used blocks as a count: the same moves as the pool built whole.

vLLM builds its free queue with every block in it (``FreeKVCacheBlockQueue``);
:class:`~pyverify.cache.vllm.FreeBlockQueue` keeps the blocks never handed
out as a run ``next_unused..capacity`` between the blocks prepended and the
blocks appended since. The oracle here is the queue built whole, as the pool
did before (one entry per block of the capacity), and every move is checked
against it: hits, physical blocks, refusals and the queue's order.
"""

from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given, settings, strategies as st

from pyverify.cache.vllm import FreeBlockQueue, VllmBlockPool, vllm_hits


class WholeFreeQueue:
    """The free queue with one entry per block from the start, as vLLM builds it."""

    def __init__(self, capacity: int) -> None:
        self.queue: OrderedDict[int, None] = OrderedDict(
            (block, None) for block in range(1, capacity + 1)
        )

    def free_blocks(self) -> int:
        return len(self.queue)

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, block) -> bool:
        return block in self.queue

    def __iter__(self):
        return iter(self.queue)

    def popleft(self) -> int:
        return self.queue.popitem(last=False)[0]

    def remove(self, block: int) -> None:
        del self.queue[block]

    def prepend(self, block: int) -> None:
        self.queue[block] = None
        self.queue.move_to_end(block, last=False)

    def append(self, block: int) -> None:
        self.queue[block] = None


def whole_pool(capacity: int, block_size: int) -> VllmBlockPool:
    pool = VllmBlockPool(capacity, block_size)
    pool.free = WholeFreeQueue(capacity)
    return pool


def test_a_new_pool_holds_no_entry_per_block():
    pool = VllmBlockPool(10**12, 16)
    assert pool.free.free_blocks() == 10**12 and not pool.free.front and not pool.free.back
    assert pool.run([1, 2, 3], 3 * 16) == 0 and pool.run([1, 2, 3], 3 * 16 + 1) == 3
    assert pool.free.next_unused == 5  # two requests of 3 and 4 blocks used 4 blocks, not 10**12


def test_the_never_used_blocks_come_after_the_prepended_and_before_the_appended():
    queue = FreeBlockQueue(5)
    assert queue.popleft() == 1 and queue.popleft() == 2
    queue.append(1)
    queue.prepend(2)
    assert list(queue) == [2, 3, 4, 5, 1] and 2 in queue and 4 in queue and 6 not in queue
    assert [queue.popleft() for _ in range(5)] == [2, 3, 4, 5, 1] and queue.free_blocks() == 0


@st.composite
def overlapping_runs(draw):
    """A pool, and moves on it: start a request (block ids from a small alphabet) or finish a running one."""
    block = draw(st.integers(1, 3))
    capacity = draw(st.integers(1, 12))
    moves = []
    for _ in range(draw(st.integers(0, 40))):
        if draw(st.booleans()):
            tokens = draw(st.integers(1, 6 * block))
            chain = draw(
                st.lists(st.integers(0, 5), min_size=tokens // block, max_size=tokens // block)
            )
            moves.append(("start", chain, tokens))
        else:
            moves.append(("finish", draw(st.integers(0, 7)), None))
    return capacity, block, moves


@settings(max_examples=300, deadline=None)
@given(overlapping_runs())
def test_the_lazy_pool_moves_as_the_whole_pool(run):
    capacity, block, moves = run
    lazy, whole = VllmBlockPool(capacity, block), whole_pool(capacity, block)
    running: list[list[int]] = []
    for move, chain_or_which, tokens in moves:
        if move == "start":
            started = lazy.start(chain_or_which, tokens)
            assert started == whole.start(chain_or_which, tokens)
            if started is not None:
                running.append(started[1])
        elif running:
            blocks = running.pop(chain_or_which % len(running))
            lazy.finish(blocks)
            whole.finish(blocks)
        assert (
            list(lazy.free) == list(whole.free)
            and lazy.free.free_blocks() == whole.free.free_blocks()
        )
        assert lazy.copies == whole.copies and lazy.users == whole.users


def prefix_hashes(contents: list[int], names: dict) -> list[int]:
    """A chain as an engine hashes it: block i's id names the whole prefix up to it (so no id repeats)."""
    return [names.setdefault(tuple(contents[: i + 1]), len(names)) for i in range(len(contents))]


@st.composite
def traces(draw):
    block = draw(st.integers(1, 3))
    requests = draw(st.integers(0, 30))
    tokens = [draw(st.integers(1, 8 * block)) for _ in range(requests)]
    names: dict = {}
    contents = [
        draw(st.lists(st.integers(0, 2), min_size=t // block, max_size=t // block)) for t in tokens
    ]
    # As an engine hashes prompts, or ids as a file may give them (one chain naming an id twice)
    chains = [prefix_hashes(c, names) for c in contents] if draw(st.booleans()) else contents
    caches = [draw(st.integers(0, 2)) for _ in range(requests)]
    return chains, tokens, caches, draw(st.integers(1, 60)), block


def whole_hits(chains, tokens, caches, capacity, block):
    pools: dict[int, VllmBlockPool] = {}
    hits, unscheduled = [], []
    for index, (chain, count, cache) in enumerate(zip(chains, tokens, caches)):
        pool = pools.setdefault(cache, whole_pool(capacity, block))
        hit = pool.run(chain, count)
        if hit is None:
            unscheduled.append(index)
        hits.append(hit or 0)
    return hits, unscheduled


@settings(max_examples=200, deadline=None)
@given(traces())
def test_lazy_reference_and_kernel_hit_as_the_whole_pool(trace):
    """Capacities up to 60 blocks: most traces here use fewer, so the kernel's arrays are shorter than the pool.
    A chain naming one id twice hits one block twice (the kernel unlinked and freed it twice)."""
    expected = whole_hits(*trace)
    assert vllm_hits(*trace) == expected
    kernels = pytest.importorskip("pyverify.cache.vllm_kernel")
    assert kernels.vllm_kernel_hits(*trace) == expected


def test_kernel_pool_of_more_blocks_than_an_int64_holds():
    kernels = pytest.importorskip("pyverify.cache.vllm_kernel")
    chains, tokens = [(1, 2), (1, 2), (1, 2, 5)], [4, 4, 6]
    assert kernels.vllm_kernel_hits(chains, tokens, [0, 0, 0], 2**80, 2) == ([0, 1, 2], [])
    assert vllm_hits(chains, tokens, [0, 0, 0], 2**80, 2) == ([0, 1, 2], [])


def test_a_chain_naming_an_id_twice_hits_one_block_twice_in_both():
    # [1, 3, 1, 1, 3] hits the copies of 1 and 3 twice over; the kernel unlinked and freed them twice,
    # which broke its free queue: request 4 then missed blocks the reference finds.
    trace = (
        [[1, 3], [1, 3, 1, 1, 3], [2, 2, 0], [3, 0], [0, 1, 3]],
        [2, 5, 3, 2, 3],
        [0] * 5,
        6,
        1,
    )
    assert vllm_hits(*trace) == whole_hits(*trace) == ([0, 4, 0, 1, 2], [])
    kernels = pytest.importorskip("pyverify.cache.vllm_kernel")
    assert kernels.vllm_kernel_hits(*trace) == ([0, 4, 0, 1, 2], [])
