"""``--eviction sglang``: SGLang 0.5.23's radix cache, move for move, one request at a time.

A reference implementation of what SGLang's scheduler does to its
``RadixCache`` and KV pool for a request that runs alone (prompt only):
``match_prefix``, ``inc_lock_ref``, allocate (evicting first), and on finish
``cache_finished_req`` (``insert``, free duplicates and the unaligned tail,
``dec_lock_ref``). Public sources, SGLang repository
(https://github.com/sgl-project/sglang):

* ``python/sglang/srt/managers/schedule_batch.py``, ``Req.init_next_round_input``
  with ``Req._compute_max_prefix_len`` (``adjust_max_prefix_ids`` in older
  releases): ``max_prefix_len = input_len - 1`` ("the matched length is at
  most 1 less than the input length"), lower only for prompt logprobs,
  which this model does not ask for.
* ``python/sglang/srt/mem_cache/radix_cache.py``:
  ``match_prefix`` truncates the key to whole pages; ``_match_prefix_helper``
  sets one ``access_time`` on every node of the path *before* splitting the
  last one (``_split_node``), so the untouched remainder counts as just used
  and the new prefix node, created after, as even newer; ``_insert_helper``
  does the same on the inserted path and adds the new pages as one new leaf
  node; ``evict`` heaps the evictable leaves (no lock, no child) by the
  strategy's priority (``LRUStrategy``: ``last_access_time``;
  ``FIFOStrategy``: ``creation_time``), frees **whole nodes** until the freed
  tokens reach the request, and pushes a parent that becomes an unlocked
  leaf; ``cache_finished_req`` inserts the page-aligned prompt, frees the
  tokens the tree already held (the recomputed duplicates) and the unaligned
  tail, then unlocks; ``inc_lock_ref`` / ``dec_lock_ref`` lock the matched
  path, which is never evicted.
* ``python/sglang/srt/mem_cache/common.py``: ``evict_from_tree_cache`` evicts
  the shortfall (``num_tokens - available_size``) when the pool has fewer
  free tokens than asked; ``alloc_paged_token_slots_extend`` asks for
  ``extend_num_tokens + page_size`` per request with a page size above 1
  (``alloc_token_slots`` asks for the extension alone with page size 1), and
  the request's pages, its partial last page included, stay allocated while
  it runs.

What that means, against pyverify's ``leaf-lru`` (kvcache-simulator's
idealisation of this cache, :mod:`pyverify.cache.tree`):

1. hits are limited to ``input_len - 1`` tokens, whole pages;
2. eviction frees whole leaf nodes, oldest ``last_access_time`` first, until
   the shortfall is covered, so it can free more than needed; a node is a
   run of pages between the points where cached prompts diverge;
3. a match or insert that splits a node stamps it before the split, so the
   untouched remainder counts as just used;
4. with a page size above 1 the eviction demand is the extension plus one
   page, and the unaligned tail holds a page while the request runs;
5. the running request's matched prefix is locked and never evicted (as in
   ``leaf-lru``, which pins it);
6. with SGLang's ``fifo`` strategy (``--eviction sglang-fifo``) leaves leave
   by creation time; a split's prefix node is a new node, its remainder
   keeps the old creation time.

Units: the tree's keys are pages of ``page_size`` tokens. A trace names
blocks of ``block_size`` tokens by chained ids, so a page is named by the id
of its last block and ``page_size`` must be a multiple of ``block_size``
(page size 1 needs a trace imported with ``--block-size 1``). The pool holds
``capacity x block_size`` tokens (``--capacity`` counts the trace's blocks),
``capacity x block_size // page_size`` pages.

Refused prompts: SGLang sets ``max_req_input_len = min(context_len - 1,
kv_capacity - 1) - 5`` (``python/sglang/srt/managers/tp_worker.py``,
``get_worker_info``) and refuses a prompt of that many tokens or more
(``managers/utils.py``, ``validate_input_length``) before it reaches the
cache. With no context length below the pool, a pool of ``P`` tokens refuses
every prompt of ``P - 6`` tokens or more: no match, no hits, no change
(listed as never scheduled). ``max_input`` (the longest prompt accepted)
lowers or lifts that bound; the hand-checked tests lift it to isolate an
eviction rule in a pool of a few tokens.

Modelled scope: prompts only (no decode tokens), one request at a time, no
chunked prefill, no hierarchical cache, priority 0 for every request. Timestamps are a counter: one tick per ``match_prefix`` or
``insert`` call (SGLang's one ``time.monotonic()`` per call) and one per new
node (``TreeNode.__init__``).
"""

from __future__ import annotations

import heapq
from typing import Sequence

from pyverify.cache.prompts import full_blocks

SGLANG_LRU = "lru"
SGLANG_FIFO = "fifo"

#: ``kv_capacity - max_req_input_len`` with no context length below the pool: 1 + 5 (tp_worker.py).
REFUSED_WITHIN = 6


def default_max_input(pool_tokens: int) -> int:
    """The longest prompt SGLang accepts with a pool of ``pool_tokens`` tokens (``max_req_input_len - 1``)."""
    return pool_tokens - REFUSED_WITHIN - 1


class Node:
    """A radix-tree node: a run of page ids (``key``), its parent and children keyed by first page."""

    __slots__ = ("key", "parent", "children", "lock_ref", "last_access_time", "creation_time")

    def __init__(self, key: list[int], parent: "Node | None", now: int) -> None:
        self.key = key
        self.parent = parent
        self.children: dict[int, Node] = {}
        self.lock_ref = 0
        self.last_access_time = now
        self.creation_time = now


class SglangRadixCache:
    """SGLang's radix cache over a pool of ``pages`` pages of ``page_size`` tokens."""

    def __init__(
        self, pages: int, page_size: int, policy: str = SGLANG_LRU, max_input: int | None = None
    ) -> None:
        if pages < 1:
            raise ValueError("the pool must hold at least one page")
        if policy not in (SGLANG_LRU, SGLANG_FIFO):
            raise ValueError(f"unknown radix-cache eviction {policy!r}")
        self.page_size = page_size
        self.pages = pages
        self.free_pages = pages
        self.policy = policy
        self.max_input = default_max_input(pages * page_size) if max_input is None else max_input
        self.clock = 0
        self.root = Node([], None, self._tick())
        self.root.lock_ref = 1  # RadixCache.reset: the root is never evicted

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    # --- the radix tree ------------------------------------------------------

    def _split(self, child: Node, length: int) -> Node:
        """``_split_node``: a new node holding the first ``length`` pages of ``child``, made its parent."""
        prefix = Node(child.key[:length], child.parent, self._tick())
        prefix.lock_ref = child.lock_ref
        child.parent.children[child.key[0]] = prefix
        child.key = child.key[length:]
        child.parent = prefix
        prefix.children[child.key[0]] = child
        return prefix

    @staticmethod
    def _common(node_key: list[int], key: list[int]) -> int:
        length = 0
        for a, b in zip(node_key, key):
            if a != b:
                break
            length += 1
        return length

    def match_prefix(self, pages: list[int]) -> tuple[int, Node]:
        """``_match_prefix_helper``: (matched pages, last matched node); stamps the path, splits at the end."""
        now = self._tick()
        node = self.root
        node.last_access_time = now
        matched = 0
        while pages and pages[0] in node.children:
            child = node.children[pages[0]]
            child.last_access_time = now
            length = self._common(child.key, pages)
            matched += length
            if length < len(child.key):
                node = self._split(child, length)
                break
            node, pages = child, pages[length:]
        return matched, node

    def insert(self, pages: list[int]) -> int:
        """``_insert_helper``: pages already in the tree (a prefix); the rest become one new leaf."""
        now = self._tick()
        node = self.root
        node.last_access_time = now
        known = 0
        while pages and pages[0] in node.children:
            node = node.children[pages[0]]
            node.last_access_time = now
            length = self._common(node.key, pages)
            known += length
            if length < len(node.key):
                node = self._split(node, length)
            pages = pages[length:]
        if pages:
            leaf = Node(list(pages), node, self._tick())
            node.children[pages[0]] = leaf
            self.free_pages -= len(pages)  # the request's pages now belong to the tree
        return known

    def lock(self, node: Node, delta: int) -> None:
        """``inc_lock_ref`` (+1) / ``dec_lock_ref`` (-1) from ``node`` up to the root."""
        while node is not self.root:
            node.lock_ref += delta
            node = node.parent

    def _priority(self, node: Node) -> int:
        return node.last_access_time if self.policy == SGLANG_LRU else node.creation_time

    def evict(self, tokens: int) -> int:
        """``evict``: free whole unlocked leaves, lowest priority first, until ``tokens`` are freed; return tokens freed."""
        heap = [(self._priority(node), id(node), node) for node in self._evictable_leaves()]
        heapq.heapify(heap)
        freed = 0
        while freed < tokens and heap:
            _, _, node = heapq.heappop(heap)
            freed += len(node.key) * self.page_size
            self.free_pages += len(node.key)
            parent = node.parent
            del parent.children[node.key[0]]
            if not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, (self._priority(parent), id(parent), parent))
        return freed

    def _evictable_leaves(self) -> list[Node]:
        leaves, stack = [], [self.root]
        while stack:
            node = stack.pop()
            if node.children:
                stack.extend(node.children.values())
            elif node.lock_ref == 0:
                leaves.append(node)
        return leaves

    def tree_pages(self) -> int:
        total, stack = 0, [self.root]
        while stack:
            node = stack.pop()
            total += len(node.key)
            stack.extend(node.children.values())
        return total

    # --- one request ----------------------------------------------------------

    def run(self, pages: Sequence[int], num_tokens: int) -> int | None:
        """Serve one request alone; return its hit pages, or ``None`` when it could never be scheduled.

        ``pages`` are the ids of the prompt's full pages (``num_tokens // page_size`` of them).
        """
        size = self.page_size
        if num_tokens < 1 or len(pages) != num_tokens // size:
            raise ValueError(
                f"a prompt of {num_tokens} tokens has {num_tokens // size} full pages of {size}, not {len(pages)}"
            )
        needed = -(-num_tokens // size)
        if num_tokens > self.max_input or needed > self.pages:  # validate_input_length refuses it
            return None
        limit = (num_tokens - 1) // size  # input_len - 1 tokens, whole pages
        hit, last = self.match_prefix(list(pages[:limit])) if limit else (0, self.root)
        self.lock(last, +1)
        extension = num_tokens - hit * size
        demand = extension + (size if size > 1 else 0)
        available = self.free_pages * size
        if available < demand:
            self.evict(demand - available)
        # The request's new pages, its partial last one included, are allocated
        # now and held while it runs. Only the matched path is locked, so the
        # eviction above can always make room for them.
        allocated = needed - hit
        assert allocated <= self.free_pages, (
            "a request that fits the pool always fits beside its locked prefix"
        )
        # cache_finished_req: the tree keeps the pages insert() adds (it
        # charges them to the pool); the duplicates of pages it already held and
        # the unaligned tail go back to the pool, so nothing of the allocation
        # stays outside the tree.
        self.insert(list(pages))
        self.lock(last, -1)
        return hit


class SglangGpu:
    """One SGLang radix cache of ``capacity`` blocks of ``block_size`` tokens, as pages of
    ``page_size``, behind the one cache interface (:mod:`pyverify.cache.protocol`).

    A request's chain is cut to its full blocks (:func:`pyverify.cache.prompts.full_blocks`), a page
    is named by the id of its last block (as :func:`sglang_hits` names it), and the cache's rules
    hold unchanged: node-level leaf eviction, the ``input_len - 1`` cap, the ``pool tokens - 6``
    refusal bound. The model serves a request *alone* (``lock_ref`` on matched nodes and pages
    allocated outside the tree while others run are not modelled): :meth:`start` serves the
    request whole and :meth:`finish` has nothing left to do, so it is right only when requests do
    not overlap, and ``replay`` offers ``sglang`` and ``sglang-fifo`` without timing only.

    :meth:`prefix_hits` is what a router sees, read without touching the tree: the leading pages
    it holds, in blocks, uncapped, with no access time stamped and no node split.
    """

    def __init__(self, capacity: int, block_size: int, page_size: int, fifo: bool) -> None:
        if page_size % block_size:
            raise ValueError(
                f"page size {page_size} is not a multiple of the block size {block_size}"
            )
        pages = capacity * block_size // page_size
        if pages < 1:
            raise ValueError(
                f"a pool of {capacity} blocks of {block_size} tokens holds no page of {page_size}"
            )
        self.cache = SglangRadixCache(pages, page_size, SGLANG_FIFO if fifo else SGLANG_LRU)
        self.block_size, self.page_size = block_size, page_size
        self.per_page = page_size // block_size

    def _pages(self, chain: Sequence[int], tokens: int) -> list[int]:
        per_page = self.per_page
        return [chain[(j + 1) * per_page - 1] for j in range(tokens // self.page_size)]

    def prefix_hits(self, chain: Sequence[int]) -> int:
        per_page = self.per_page
        pages = [chain[(j + 1) * per_page - 1] for j in range(len(chain) // per_page)]
        node, matched, at = self.cache.root, 0, 0
        while at < len(pages) and pages[at] in node.children:
            child = node.children[pages[at]]
            key = child.key
            length = 0
            while (
                length < len(key) and at + length < len(pages) and key[length] == pages[at + length]
            ):
                length += 1
            matched += length
            if length < len(key):
                break
            node, at = child, at + length
        return matched * per_page

    def start(self, index: int, chain: Sequence[int], tokens: int) -> tuple[int, None] | None:
        """Serve request ``index`` alone: ``(its hit blocks, None)``, or ``None`` when SGLang refuses it."""
        chain = full_blocks(index, chain, tokens, self.block_size)
        hit = self.cache.run(self._pages(chain, tokens), tokens)
        return None if hit is None else (hit * self.per_page, None)

    def finish(self, handle: None) -> None:
        """Nothing: :meth:`start` served the request whole."""


def sglang_hits(
    chains: Sequence[Sequence[int]],
    prompt_tokens: Sequence[int],
    cache_of: Sequence[int],
    capacity: int,
    block_size: int,
    page_size: int,
    policy: str = SGLANG_LRU,
    max_input: int | None = None,
) -> tuple[list[int], list[int]]:
    """Per request: hit *blocks* under SGLang's radix cache, and the requests never scheduled (0 hits).

    ``capacity`` counts blocks of ``block_size`` tokens; ``page_size`` is a
    multiple of ``block_size``. One cache per cache id in ``cache_of``.
    ``max_input``: the longest prompt accepted (default SGLang's, ``pool tokens - 7``).
    """
    if page_size % block_size:
        raise ValueError(f"page size {page_size} is not a multiple of the block size {block_size}")
    per_page = page_size // block_size
    pages_in_pool = capacity * block_size // page_size
    caches: dict[int, SglangRadixCache] = {}
    hits, unscheduled = [], []
    for index, (chain, tokens, cache_id) in enumerate(
        zip(chains, prompt_tokens, cache_of, strict=True)
    ):
        if len(chain) != tokens // block_size:
            raise ValueError(
                f"request {index}: {tokens} tokens make {tokens // block_size} blocks, not {len(chain)}"
            )
        cache = caches.get(cache_id)
        if cache is None:
            if pages_in_pool < 1:
                raise ValueError(
                    f"a pool of {capacity} blocks of {block_size} tokens holds no page of {page_size}"
                )
            cache = caches[cache_id] = SglangRadixCache(pages_in_pool, page_size, policy, max_input)
        pages = [chain[(j + 1) * per_page - 1] for j in range(tokens // page_size)]
        hit = cache.run(pages, tokens)
        if hit is None:
            unscheduled.append(index)
            hit = 0
        hits.append(hit * per_page)
    return hits, unscheduled


__all__ = [
    "REFUSED_WITHIN",
    "SGLANG_FIFO",
    "SGLANG_LRU",
    "SglangGpu",
    "SglangRadixCache",
    "default_max_input",
    "sglang_hits",
]
