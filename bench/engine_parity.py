"""Per-request parity of ``--eviction vllm`` / ``sglang`` with the real engines' cache structures.

    python bench/engine_parity.py [--requests 400] [--seed 0]

When ``vllm`` and ``sglang`` are importable, this drives their cache
structures request by request, one request at a time, as their schedulers do,
on generated token-id traces, and compares every request's hit tokens with
pyverify's reference implementations (:mod:`pyverify.sim.vllm_pool`,
:mod:`pyverify.sim.sglang_radix`):

* vLLM (``vllm/v1/core/kv_cache_manager.py``): ``get_computed_blocks``, then
  ``allocate_slots(request, num_tokens - hit, hit, computed_blocks)`` (``None``:
  never scheduled), then ``free``; ``num_gpu_blocks = C + 1`` (the null block).
* SGLang (``python/sglang/srt/mem_cache/radix_cache.py``,
  ``python/sglang/srt/mem_cache/common.py``): ``match_prefix`` on
  ``input_ids[:input_len - 1]``, ``inc_lock_ref``, ``evict_from_tree_cache``
  with the extension (plus one page when the page size is above 1),
  allocate, then as ``cache_finished_req``: ``insert`` the page-aligned
  prompt, free the duplicates and the unaligned tail, ``dec_lock_ref``. The
  radix cache is SGLang's own; its token pool is a page free-list written
  here (``PagePool``: ``available_size``, ``free``, ``page_size``, ``device``),
  because SGLang's allocators need a KV buffer on a device.

Traces (token ids): multi-turn conversations (each turn re-sends the
history), shared system prompts, exact re-sends, prompts of every length
modulo the block size, and prompts shorter than one block; at several
capacities, page sizes 1 and 16 (block sizes 1 and 16 on pyverify's side:
a page is named by its last block). Prints one line per configuration and
every disagreement; exits 1 on any. Without both engines installed it says
so in one line and exits 0; this project's machine does not have them, so
this script has not been run here.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyverify.inputs.tokens_import import chain_of_tokens  # noqa: E402
from pyverify.sim.sglang_radix import sglang_hits  # noqa: E402
from pyverify.sim.vllm_pool import vllm_hits  # noqa: E402


def generated_trace(n: int, seed: int, block: int = 16) -> list[list[int]]:
    """Prompts as token ids: conversations, shared system prompts, re-sends, odd and short lengths."""
    rng = random.Random(seed)
    systems = [[rng.randrange(1, 50_000) for _ in range(rng.choice([block, 2 * block, 3 * block + 5]))] for _ in range(3)]
    conversations: list[list[int]] = []
    prompts: list[list[int]] = []
    while len(prompts) < n:
        kind = rng.random()
        if kind < 0.1 and prompts:  # an exact re-send
            prompts.append(list(rng.choice(prompts)))
        elif kind < 0.2:  # shorter than one block
            prompts.append([rng.randrange(1, 50_000) for _ in range(rng.randrange(1, block))])
        elif kind < 0.55 and conversations:  # the next turn of a conversation: history + answer + question
            index = rng.randrange(len(conversations))
            history = conversations[index] + [rng.randrange(1, 50_000) for _ in range(rng.randrange(1, 3 * block))]
            conversations[index] = history
            prompts.append(list(history))
        else:  # a new conversation, often under a shared system prompt
            head = list(rng.choice(systems)) if rng.random() < 0.7 else []
            prompt = head + [rng.randrange(1, 50_000) for _ in range(rng.randrange(1, 4 * block))]
            conversations.append(prompt)
            prompts.append(list(prompt))
    return prompts


# --- vLLM ---------------------------------------------------------------------


def _accepted(function, **kwargs):
    """The keyword arguments ``function`` takes (vLLM's constructors gain and lose some across versions)."""
    parameters = inspect.signature(function).parameters
    return {key: value for key, value in kwargs.items() if key in parameters}


def vllm_engine_hits(prompts: list[list[int]], capacity: int, block_size: int) -> tuple[list[int], list[int]]:
    """Hit tokens per request from vLLM's own KVCacheManager, and the requests it never schedules."""
    import torch
    from vllm.sampling_params import SamplingParams
    from vllm.utils.hashing import sha256
    from vllm.v1.core.kv_cache_manager import KVCacheManager
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
    from vllm.v1.request import Request

    init_none_hash(sha256)
    spec = FullAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=1, dtype=torch.float32)
    config = KVCacheConfig(num_blocks=capacity + 1, kv_cache_tensors=[],  # + the null block
                           kv_cache_groups=[KVCacheGroupSpec(["layer"], spec)])
    manager = KVCacheManager(config, **_accepted(KVCacheManager.__init__, max_model_len=1 << 20,
                                                 scheduler_block_size=block_size, hash_block_size=block_size,
                                                 enable_caching=True))
    hasher = get_request_block_hasher(block_size, sha256)
    hits, unscheduled = [], []
    for index, tokens in enumerate(prompts):
        params = SamplingParams(max_tokens=1)
        request = Request(**_accepted(Request.__init__, request_id=str(index), prompt_token_ids=tokens,
                                      sampling_params=params, pooling_params=None, eos_token_id=None,
                                      block_hasher=hasher, mm_features=None, lora_request=None, cache_salt=None))
        computed, hit_tokens = manager.get_computed_blocks(request)[:2]
        blocks = manager.allocate_slots(request, len(tokens) - hit_tokens, hit_tokens, computed)
        if blocks is None:
            unscheduled.append(index)
            hits.append(0)
            continue
        hits.append(hit_tokens)
        manager.free(request)
    return hits, unscheduled


# --- SGLang -------------------------------------------------------------------


class PagePool:
    """A page free-list with the interface SGLang's RadixCache calls (``available_size``, ``free``).

    Page 0 is reserved, as in SGLang's allocators (slot 0 is the padding slot).
    """

    def __init__(self, pages: int, page_size: int) -> None:
        import torch

        self.page_size = page_size
        self.device = torch.device("cpu")
        self.free_pages = list(range(1, pages + 1))

    def available_size(self) -> int:
        return len(self.free_pages) * self.page_size

    def alloc_pages(self, count: int) -> list[int]:
        if count > len(self.free_pages):
            raise RuntimeError("out of pages")
        taken, self.free_pages = self.free_pages[:count], self.free_pages[count:]
        return taken

    def free(self, indices) -> None:
        if len(indices) == 0:
            return
        pages = sorted({int(index) // self.page_size for index in indices})
        self.free_pages.extend(pages)


def sglang_engine_hits(prompts: list[list[int]], capacity_tokens: int, page_size: int,
                       policy: str = "lru") -> tuple[list[int], list[int]] | None:
    """Hit tokens per request from SGLang's own RadixCache, and the requests that never fit the pool
    (``None`` if this SGLang cannot be given ``policy``)."""
    import torch
    from sglang.srt.mem_cache import radix_cache as rc

    pages = capacity_tokens // page_size
    pool = PagePool(pages, page_size)
    params_type = getattr(rc, "CacheInitParams", None)
    if params_type is not None:
        cache = rc.RadixCache(params_type(**_accepted(params_type, disable=False, req_to_token_pool=None,
                                                      token_to_kv_pool_allocator=pool, page_size=page_size,
                                                      eviction_policy=policy)))
    else:
        cache = rc.RadixCache(**_accepted(rc.RadixCache.__init__, req_to_token_pool=None, token_to_kv_pool_allocator=pool,
                                          page_size=page_size, eviction_policy=policy))
    if getattr(cache, "eviction_policy", "lru") != policy:
        return None  # this SGLang takes no eviction policy: the comparison is skipped, not run against LRU
    params = {name: getattr(rc, name, None) for name in ("MatchPrefixParams", "InsertParams", "EvictParams")}

    def match(tokens):
        key = rc.RadixKey(tokens)
        result = cache.match_prefix(params["MatchPrefixParams"](key=key)) if params["MatchPrefixParams"] else cache.match_prefix(key=key)
        return result.device_indices, result.last_device_node

    def insert(tokens, value):
        key = rc.RadixKey(tokens)
        result = cache.insert(params["InsertParams"](key=key, value=value)) if params["InsertParams"] else cache.insert(key, value)
        return result.prefix_len if hasattr(result, "prefix_len") else int(result)

    def evict(tokens):
        cache.evict(params["EvictParams"](num_tokens=tokens)) if params["EvictParams"] else cache.evict(tokens)

    hits, unscheduled = [], []
    for index, tokens in enumerate(prompts):
        n = len(tokens)
        needed_pages = -(-n // page_size)
        if needed_pages > pages:  # never fits the pool: the driver skips it
            unscheduled.append(index)
            hits.append(0)
            continue
        prefix, last = match(tokens[: n - 1]) if n > 1 else (torch.empty((0,), dtype=torch.int64), cache.root_node)
        hit = len(prefix)
        cache.inc_lock_ref(last)
        demand = (n - hit) + (page_size if page_size > 1 else 0)  # common.py: alloc_paged_token_slots_extend
        available = pool.available_size()
        if available < demand:  # common.py evict_from_tree_cache: the shortfall
            evict(demand - available)
        new_pages = pool.alloc_pages(needed_pages - hit // page_size)
        new = [page * page_size + offset for page in new_pages for offset in range(page_size)][: n - hit]
        kv = torch.cat([prefix.to(torch.int64), torch.tensor(new, dtype=torch.int64)])
        aligned = n // page_size * page_size
        known = insert(tokens[:aligned], kv[:aligned].clone())  # cache_finished_req
        pool.free(kv[hit:known])  # the duplicates of what the tree already held
        pool.free(kv[aligned:])  # the unaligned tail
        cache.dec_lock_ref(last)
        hits.append(hit)
    return hits, unscheduled


# --- the comparison -----------------------------------------------------------


def compare(name: str, theirs: tuple[list[int], list[int]] | None, ours: tuple[list[int], list[int]]) -> int:
    if theirs is None:
        print(f"{name}: skipped (this engine version has no such setting)")
        return 0
    their_hits, their_unscheduled = theirs
    our_hits, our_unscheduled = ours
    wrong = [i for i, (a, b) in enumerate(zip(their_hits, our_hits, strict=True)) if a != b]
    print(f"{name}: {len(their_hits)} requests, engine hit tokens {sum(their_hits)}, pyverify {sum(our_hits)}, "
          f"{len(wrong)} request(s) differ; never scheduled: engine {len(their_unscheduled)}, pyverify {len(our_unscheduled)}")
    for i in wrong[:10]:
        print(f"  request {i}: engine {their_hits[i]} hit tokens, pyverify {our_hits[i]}")
    return len(wrong) + (their_unscheduled != our_unscheduled)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    missing = [name for name in ("vllm", "sglang") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"engine_parity: {' and '.join(missing)} not importable here; nothing compared")
        return 0
    failures = 0
    for block in (16, 1):
        prompts = generated_trace(args.requests, args.seed, block=16)
        ids = [chain_of_tokens(tokens, block) for tokens in prompts]
        lengths = [len(tokens) for tokens in prompts]
        zeros = [0] * len(prompts)
        for capacity_tokens in (64, 256, 1024, 4096):
            capacity = capacity_tokens // block
            if block == 16:
                ours = vllm_hits(ids, lengths, zeros, capacity, block)
                failures += compare(f"vllm, blocks of {block}, C={capacity}", vllm_engine_hits(prompts, capacity, block),
                                    ([h * block for h in ours[0]], ours[1]))
            for policy in ("lru", "fifo"):
                ours = sglang_hits(ids, lengths, zeros, capacity, block, block, policy)
                failures += compare(f"sglang {policy}, page size {block}, {capacity_tokens} tokens",
                                    sglang_engine_hits(prompts, capacity_tokens, block, policy),
                                    ([h * block for h in ours[0]], ours[1]))
    print("all requests agree" if not failures else f"{failures} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
