"""``--eviction vllm``: vLLM 0.33's KV block pool, move for move, one request at a time.

This is a reference implementation of what vLLM's v1 scheduler does to its
block pool for a request that runs alone: look up the cached prefix
(``KVCacheManager.get_computed_blocks``), allocate the request's blocks
(``KVCacheManager.allocate_slots``), cache its full blocks, and free them
when it finishes (``KVCacheManager.free``). Public sources, vLLM repository
(https://github.com/vllm-project/vllm):

* ``vllm/v1/core/kv_cache_manager.py``, ``get_computed_blocks``:
  ``max_cache_hit_length = request.num_tokens - 1`` ("When all tokens hit the
  cache, we must recompute the last token to obtain logits"); the hit is a
  whole number of blocks, so at most ``(num_tokens - 1) // block_size``.
* ``vllm/v1/core/single_type_kv_cache_manager.py``, ``find_longest_cache_hit``
  (full attention): walk the request's block hashes in order, stop at the
  first one ``BlockPool.get_cached_block`` does not know.
* ``allocate_slots`` / ``get_num_blocks_to_allocate``: the request needs
  ``cdiv(num_tokens, block_size)`` blocks, its partial last block included;
  the hit blocks that sit in the free queue count as blocks to take from it,
  so with nothing else running it is refused (returns ``None``, the request
  is never scheduled) exactly when ``cdiv(num_tokens, block_size)`` exceeds
  the free blocks.
* ``vllm/v1/core/block_pool.py``: ``touch`` takes hit blocks out of the free
  queue; ``get_new_blocks`` pops new ones from the **front** of the free
  queue, evicting the cached block there (``_maybe_evict_cached_block``);
  ``cache_full_blocks`` gives each new full block its hash and files it under
  that hash *beside* any block already there ("We currently don't
  de-duplicate the blocks in the cache"), and ``get_cached_block`` returns
  the first block filed under a hash; ``free_blocks`` (called with the
  request's blocks in reverse order, so the tail goes first) puts blocks
  without a hash at the **front** of the free queue (``prepend_n``) and
  hashed ones at the back (``append_n``).
* ``BlockPool.__init__``: block 0 is the null block, taken out of the free
  queue for good. A pool of ``--capacity C`` blocks is therefore vLLM's
  ``num_gpu_blocks = C + 1``: C blocks can hold KV.

What that means, against pyverify's idealised ``tail-first`` policy
(:mod:`pyverify.cache.tree`):

1. A prompt whose every full block is cached, and whose length is a whole
   number of blocks, hits one block fewer: its last block is recomputed and
   cached again as a second physical copy under the same hash. The old copy
   is not refreshed; both copies take slots until evicted.
2. A prompt's partial last block takes a slot while the request runs: it is
   popped from the front of the free queue (evicting what was there) and
   returned, uncached, to the front.
3. A prompt shorter than one block still takes that one slot and can evict.
   (Instances leave such prompts out today, :mod:`pyverify.inputs.tokens_import`;
   this module takes them as chains of no blocks.)
4. A prompt needing more blocks than the pool has is never scheduled: no
   hits and no change to the pool (pyverify's ``tail-first`` keeps its first
   C blocks). It counts as a request whose tokens all missed.

Modelled scope here: prompts only (no output tokens are decoded, so no decode
block is cached), no chunked prefill, no preemption, no sliding window, one
KV-cache group; :meth:`VllmBlockPool.allocate` and :meth:`VllmBlockPool.cache` give replay's step
model chunk-by-chunk allocation and the filing of generated blocks (it preempts; :mod:`pyverify.fleet.replay`). Requests run one at a time (:meth:`VllmBlockPool.run`) or
overlap (:meth:`VllmBlockPool.start` / :meth:`VllmBlockPool.finish`: a request
scheduled while others run hits the blocks they hold, whose hashes vLLM files
at allocation; ``allocate_slots`` refuses it while too few blocks are free). Hits are whole blocks, so hit tokens are
``hit_blocks x block_size``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterator, Sequence

from pyverify.cache.prompts import full_blocks


class FreeBlockQueue:
    """vLLM's ``FreeKVCacheBlockQueue`` over physical blocks ``1..capacity``, next block to hand out first.

    vLLM builds the queue with every block in number order; blocks freed later are prepended (unhashed) or
    appended (hashed). So the queue is always: the blocks prepended since (``front``, front first), then
    the blocks never handed out yet, in number order, then the blocks appended since (``back``). The
    never-used run is kept as a count, ``next_unused..capacity``, so memory and time follow the blocks a
    trace uses, never the pool's size.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.front: OrderedDict[int, None] = OrderedDict()
        self.next_unused = 1
        self.back: OrderedDict[int, None] = OrderedDict()

    def free_blocks(self) -> int:
        """How many blocks are free (``len`` too, where it fits in an index: a pool may be bigger)."""
        return len(self.front) + (self.capacity - self.next_unused + 1) + len(self.back)

    def __len__(self) -> int:
        return self.free_blocks()

    def __contains__(self, block: object) -> bool:
        if block in self.front or block in self.back:
            return True
        return isinstance(block, int) and self.next_unused <= block <= self.capacity

    def __iter__(self) -> Iterator[int]:
        yield from self.front
        yield from range(self.next_unused, self.capacity + 1)
        yield from self.back

    def popleft(self) -> int:
        """``popleft``: the front block (the queue must not be empty)."""
        if self.front:
            return self.front.popitem(last=False)[0]
        if self.next_unused <= self.capacity:
            self.next_unused += 1
            return self.next_unused - 1
        return self.back.popitem(last=False)[0]

    def remove(self, block: int) -> None:
        """``remove``: take a free block out of the queue (a cached block a request touches).

        Only a used block can be touched (it carries a hash), so it sits in ``front`` or ``back``."""
        if block in self.front:
            del self.front[block]
        else:
            del self.back[block]

    def prepend(self, block: int) -> None:
        self.front[block] = None
        self.front.move_to_end(block, last=False)

    def append(self, block: int) -> None:
        self.back[block] = None


class VllmBlockPool:
    """vLLM's block pool with ``capacity`` usable blocks (``num_gpu_blocks = capacity + 1``).

    ``free`` is the free block queue (:class:`FreeBlockQueue`), next block to hand out first; it holds
    physical block numbers 1..capacity (0 is the null block, never free).
    ``hash_of[block]`` is the hash a cached block carries;
    ``copies[hash]`` lists the physical blocks filed under a hash, in filing
    order (``get_cached_block`` returns the first).

    :meth:`run` serves a request alone (the parity-checked one-at-a-time
    model); :meth:`start` and :meth:`finish` let several run at once, each
    holding its blocks with a reference count as vLLM's ``KVCacheBlock.ref_cnt``.
    """

    def __init__(self, capacity: int, block_size: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1 block")
        if block_size < 1:
            raise ValueError("block_size must be at least 1 token")
        self.capacity = capacity
        self.block_size = block_size
        self.free = FreeBlockQueue(capacity)
        self.hash_of: dict[int, int] = {}
        self.copies: dict[int, list[int]] = {}
        self.users: dict[
            int, int
        ] = {}  # ref_cnt of the blocks in use (running requests), never in the free queue

    def cached_blocks(self) -> int:
        """How many physical blocks hold a hash (copies of one hash counted each)."""
        return len(self.hash_of)

    def lookup(self, chain: Sequence[int], num_tokens: int) -> list[int]:
        """``get_computed_blocks``: the physical blocks of the longest cached prefix, at most ``num_tokens - 1`` tokens."""
        limit = (num_tokens - 1) // self.block_size
        found = []
        for block_hash in chain[:limit]:
            copies = self.copies.get(block_hash)
            if not copies:
                break
            found.append(copies[0])
        return found

    def run(self, chain: Sequence[int], num_tokens: int) -> int | None:
        """Serve one request alone; return its hit blocks, or ``None`` when vLLM would never schedule it.

        ``chain`` holds the hashes of the prompt's full blocks (``num_tokens // block_size`` of them).
        """
        started = self.start(chain, num_tokens)
        if started is None:  # nothing else runs, so every block is free: it never will be scheduled
            return None
        hit, blocks = started
        self.finish(blocks)
        return hit

    def start(self, chain: Sequence[int], num_tokens: int) -> tuple[int, list[int]] | None:
        """Schedule a request now, other requests possibly running: ``(hit blocks, its physical blocks)``, or
        ``None`` when ``allocate_slots`` refuses it now (the pool holds too few free blocks; with nothing
        running, never). The blocks stay in use (out of the free queue) until :meth:`finish`."""
        size = self.block_size
        if num_tokens < 1 or len(chain) != num_tokens // size:
            raise ValueError(
                f"a prompt of {num_tokens} tokens has {num_tokens // size} full blocks of {size}, "
                f"not {len(chain)}"
            )
        hit = self.lookup(chain, num_tokens)
        needed = -(-num_tokens // size)  # cdiv: the partial last block takes a slot too
        # get_num_blocks_to_allocate: the new blocks, plus the hit blocks that wait in the free queue (touching
        # them takes them out of it); hit blocks another running request holds cost nothing.
        taken = needed - len(hit) + sum(1 for block in hit if block in self.free)
        if taken > self.free.free_blocks():
            return None
        for block in hit:  # touch: one more user; out of the free queue while in use
            if block in self.free:
                self.free.remove(block)
            self.users[block] = self.users.get(block, 0) + 1
        blocks = list(hit)
        for _ in range(needed - len(hit)):  # get_new_blocks: pop the front, evicting a cached block
            block = self.free.popleft()
            evicted = self.hash_of.pop(block, None)
            if evicted is not None:
                self.copies[evicted].remove(block)
                if not self.copies[evicted]:
                    del self.copies[evicted]
            self.users[block] = 1
            blocks.append(block)
        for position in range(
            len(hit), len(chain)
        ):  # cache_full_blocks, at allocation: no de-duplication
            block, block_hash = blocks[position], chain[position]
            self.hash_of[block] = block_hash
            self.copies.setdefault(block_hash, []).append(block)
        return len(hit), blocks

    def allocate(self, blocks: list[int], new_hits: Sequence[int], tokens: int) -> bool:
        """``allocate_slots`` for one step of a request, chunk by chunk (replay's step model): extend
        ``blocks``, the request's physical blocks (empty when it is admitted, ``new_hits`` then being
        the cached blocks :meth:`lookup` found), to cover ``tokens`` tokens. ``False``, nothing changed,
        when the free queue holds too few blocks (vLLM then preempts, or leaves the request waiting)."""
        needed = max(-(-tokens // self.block_size) - len(blocks) - len(new_hits), 0)
        if needed + sum(1 for block in new_hits if block in self.free) > self.free.free_blocks():
            return False
        for block in new_hits:  # touch
            if block in self.free:
                self.free.remove(block)
            self.users[block] = self.users.get(block, 0) + 1
            blocks.append(block)
        for _ in range(needed):  # get_new_blocks
            block = self.free.popleft()
            evicted = self.hash_of.pop(block, None)
            if evicted is not None:
                self.copies[evicted].remove(block)
                if not self.copies[evicted]:
                    del self.copies[evicted]
            self.users[block] = 1
            blocks.append(block)
        return True

    def cache(self, blocks: Sequence[int], hashes: Sequence, start: int, stop: int) -> None:
        """``cache_full_blocks``: file the request's blocks at positions ``start`` to ``stop`` (now
        full) under their hashes, beside any copy already filed (no de-duplication)."""
        for position in range(start, stop):
            block, block_hash = blocks[position], hashes[position]
            self.hash_of[block] = block_hash
            self.copies.setdefault(block_hash, []).append(block)

    def finish(self, blocks: Sequence[int]) -> None:
        """``free``: one user fewer on each of the request's blocks, in reverse order; a block nobody uses any
        more returns to the free queue, unhashed at the front, hashed at the back."""
        unhashed, hashed = [], []
        for block in reversed(blocks):
            self.users[block] -= 1
            if self.users[block] == 0:
                del self.users[block]
                (hashed if block in self.hash_of else unhashed).append(block)
        for block in reversed(
            unhashed
        ):  # prepend_n; at most one block per request: its partial last one
            self.free.prepend(block)
        for block in hashed:
            self.free.append(block)


class VllmGpu:
    """One vLLM block pool of ``capacity`` blocks of ``block_size`` tokens, behind the one cache
    interface (:mod:`pyverify.cache.protocol`): what ``simulate`` and ``replay`` drive.

    A request's chain is cut to its full blocks (:func:`pyverify.cache.prompts.full_blocks`) before
    the pool sees it, and the pool's rules hold unchanged: hits capped at ``num_tokens - 1`` tokens,
    the partial last block takes a slot, a prompt needing more blocks than the pool is never
    scheduled. Several requests may run at once, each keeping its blocks in use (per-block
    reference counts, allocation refused while too few blocks are free; checked against vLLM
    0.33.0's own BlockPool with up to 8 overlapping requests,
    ``git show 5a744a9:bench/engine_parity-vllm-overlap-2026-12-02.txt``), so ``replay`` runs
    ``vllm`` timed.

    :meth:`prefix_hits` is what a router sees, read without touching the pool: the leading blocks
    of the chain whose hashes the pool holds, uncapped.
    """

    def __init__(self, capacity: int, block_size: int) -> None:
        self.pool = VllmBlockPool(capacity, block_size)
        self.block_size = block_size

    def prefix_hits(self, chain: Sequence[int]) -> int:
        copies, hits = self.pool.copies, 0
        for block in chain:
            if not copies.get(block):
                break
            hits += 1
        return hits

    def start(self, index: int, chain: Sequence[int], tokens: int) -> tuple[int, list[int]] | None:
        """Schedule request ``index`` beside the running ones: ``(hit blocks, its physical blocks)``, or
        ``None`` when too few blocks are free now (with nothing running: never)."""
        return self.pool.start(full_blocks(index, chain, tokens, self.block_size), tokens)

    def finish(self, blocks: Sequence[int]) -> None:
        """The request holding ``blocks`` (from :meth:`start`) ends: vLLM's ``free``."""
        self.pool.finish(blocks)


def vllm_hits(
    chains: Sequence[Sequence[int]],
    prompt_tokens: Sequence[int],
    cache_of: Sequence[int],
    capacity: int,
    block_size: int,
) -> tuple[list[int], list[int]]:
    """Per request: hit blocks under vLLM's pool, and the indices of requests vLLM would never schedule (0 hits).

    One pool of ``capacity`` blocks per cache id in ``cache_of``.
    """
    pools: dict[int, VllmBlockPool] = {}
    hits, unscheduled = [], []
    for index, (chain, tokens, cache_id) in enumerate(
        zip(chains, prompt_tokens, cache_of, strict=True)
    ):
        pool = pools.get(cache_id)
        if pool is None:
            pool = pools[cache_id] = VllmBlockPool(capacity, block_size)
        hit = pool.run(chain, tokens)
        if hit is None:
            unscheduled.append(index)
            hit = 0
        hits.append(hit)
    return hits, unscheduled


__all__ = ["FreeBlockQueue", "VllmBlockPool", "VllmGpu", "vllm_hits"]
