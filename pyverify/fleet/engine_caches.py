"""The engine-exact GPU caches of ``pyverify replay``: ``vllm``, ``sglang``, ``sglang-fifo``.

These adapt the parity-checked reference models (:mod:`pyverify.cache.vllm`,
:mod:`pyverify.cache.sglang`) to the replay's per-host GPU cache; they do
not change them. Each host gets one :class:`~pyverify.cache.vllm.VllmBlockPool`
or :class:`~pyverify.cache.sglang.SglangRadixCache`, and a request is
served by the model's own ``run`` (prompt only), exactly as
``simulate --eviction vllm|sglang`` serves it
(:func:`pyverify.sim.simulate.engine_hits`): a chain that names a partial last
block is cut to its full blocks before the engine sees it, and the engine's
rules hold unchanged (vLLM: hits capped at ``num_tokens - 1`` tokens, the
partial last block takes a slot, a prompt needing more blocks than the pool
is never scheduled; SGLang: node-level leaf eviction, the ``input_len - 1``
cap, the ``pool tokens - 6`` refusal bound, pages of ``page_size`` tokens).
A request the engine never schedules gets no hits and changes nothing.

With timing, several requests run on a host at once, each keeping its blocks
in use. vLLM's model covers that (:meth:`VllmGpu.start` / :meth:`VllmGpu.finish`:
per-block reference counts, allocation refused while too few blocks are free;
checked against vLLM 0.33.0's own BlockPool with up to 8 overlapping requests,
``git show 5a744a9:bench/engine_parity-vllm-overlap-2026-12-02.txt``), so ``vllm`` runs timed.
SGLang's model serves a request *alone* (``lock_ref`` on matched nodes and
pages allocated outside the tree while others run are not modelled), so the
replay offers ``sglang`` and ``sglang-fifo`` with ``--no-timing`` only. Every
engine eviction is refused with a host-DRAM or pool tier (the engines' hit cap
and refusals have no agreed meaning for those tiers here).

What a router sees (:meth:`prefix_hits`) is read without touching the
engine: the leading blocks of the chain whose hashes the pool holds (vLLM), or
whose pages the radix tree holds (SGLang, in blocks), uncapped, with no access
time stamped and no node split.
"""

from __future__ import annotations

from typing import Sequence

from pyverify.cache.sglang import (
    SGLANG_FIFO as RADIX_FIFO,
    SGLANG_LRU as RADIX_LRU,
    SglangRadixCache,
)
from pyverify.sim.simulate import ENGINE_EVICTIONS, SGLANG, SGLANG_FIFO, VLLM
from pyverify.cache.vllm import VllmBlockPool


def full_blocks(index: int, chain: Sequence[int], tokens: int, block_size: int) -> Sequence[int]:
    """The chain's full blocks (what the engine hashes), as :func:`pyverify.sim.simulate.engine_hits` cuts it."""
    full = tokens // block_size
    if full > len(chain):
        raise ValueError(
            f"requests[{index}]: {tokens} tokens make {full} full blocks of {block_size}, but the chain "
            f"names {len(chain)}: the engine would cache blocks the trace does not name"
        )
    return chain if full == len(chain) else chain[:full]


class VllmGpu:
    """One host's vLLM block pool of ``capacity`` blocks of ``block_size`` tokens."""

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

    def run(self, index: int, chain: Sequence[int], tokens: int) -> int | None:
        """Serve request ``index`` alone: its hit blocks, or ``None`` when vLLM never schedules it."""
        return self.pool.run(full_blocks(index, chain, tokens, self.block_size), tokens)

    def start(self, index: int, chain: Sequence[int], tokens: int) -> tuple[int, list[int]] | None:
        """Schedule request ``index`` beside the host's running ones: ``(hit blocks, its physical blocks)``, or
        ``None`` when too few blocks are free now (with nothing running: never)."""
        return self.pool.start(full_blocks(index, chain, tokens, self.block_size), tokens)

    def finish(self, blocks: Sequence[int]) -> None:
        """The request holding ``blocks`` (from :meth:`start`) ends: vLLM's ``free``."""
        self.pool.finish(blocks)


class SglangGpu:
    """One host's SGLang radix cache: ``capacity`` blocks of ``block_size`` tokens, as pages of ``page_size``."""

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
        self.cache = SglangRadixCache(pages, page_size, RADIX_FIFO if fifo else RADIX_LRU)
        self.block_size, self.page_size = block_size, page_size
        self.per_page = page_size // block_size

    def _pages(self, chain: Sequence[int], tokens: int) -> list[int]:
        """A page is named by the id of its last block (as :func:`pyverify.cache.sglang.sglang_hits` names it)."""
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

    def run(self, index: int, chain: Sequence[int], tokens: int) -> int | None:
        """Serve request ``index`` alone: its hit *blocks*, or ``None`` when SGLang refuses it."""
        chain = full_blocks(index, chain, tokens, self.block_size)
        hit = self.cache.run(self._pages(chain, tokens), tokens)
        return None if hit is None else hit * self.per_page


def engine_gpu(capacity: int | None, eviction: str, block_size: int, page_size: int | None = None):
    """One host's engine-exact GPU cache (``eviction`` in :data:`ENGINE_EVICTIONS`)."""
    if capacity is None:
        raise ValueError(f"the {eviction} engine needs a capacity (its pool size)")
    if eviction == VLLM:
        return VllmGpu(capacity, block_size)
    if eviction in (SGLANG, SGLANG_FIFO):
        return SglangGpu(capacity, block_size, page_size or block_size, eviction == SGLANG_FIFO)
    raise ValueError(f"unknown engine {eviction!r}; expected one of {ENGINE_EVICTIONS}")
