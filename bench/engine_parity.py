"""Per-request parity of ``--eviction vllm`` / ``sglang`` / ``sglang-fifo`` with the real engines' cache code.

    python bench/engine_parity.py [--engine vllm|sglang|both] [--model python|compiled] [--requests 400] [--seed 0]
                                  [--mooncake-requests 200] [--mooncake-blocks 8,64,256,1024,5859]

Drives the engines' own cache structures request by request, one request at a
time, as their schedulers do (and vLLM's also with up to ``--max-running``
requests running at once, started in file order and finished in a seeded
random order: :func:`overlapping`), and compares every request's hit tokens (and
which requests never run) with pyverify's references
(:mod:`pyverify.cache.vllm`, :mod:`pyverify.cache.sglang`):

* vLLM 0.33.0 (``vllm/v1/core/kv_cache_manager.py``): ``get_computed_blocks``,
  then ``allocate_slots(request, num_tokens - hit, hit, computed_blocks)``
  (``None``: never scheduled), then ``free``; ``KVCacheConfig(num_blocks=C + 1)``
  (the null block), one full-attention group, ``sha256`` block hashes.
* SGLang 0.5.23: ``validate_input_length`` (``managers/utils.py``, with
  ``max_req_input_len`` as ``managers/tp_worker.py`` sets it), ``match_prefix``
  limited to ``input_len - 1`` tokens, ``lock``, the allocator's
  ``evict_to_free_tokens`` with the extension (plus one page above page size
  1, ``mem_cache/allocation.py``), ``alloc``, then as ``release_kv_cache``
  with a checkpoint: ``insert`` the page-aligned prompt, free the duplicates,
  re-match and move the lock, free the unaligned tail, unlock. The radix
  cache (``mem_cache/radix_cache.py``, ``RadixCache``) and the allocators
  (``TokenToKVPoolAllocator``, ``PagedTokenToKVPoolAllocator``) are SGLang's
  own; the allocators get ``kvcache=None``, as nothing on this path reads
  the KV buffer.

Traces (token ids): ``generated`` (multi-turn conversations, shared system
prompts, exact re-sends, prompts of every length modulo 16, prompts shorter
than 16 tokens), ``aligned+short`` (block-aligned prompts with short ones
among them: the case where an imported instance, which has no request
without a block, differs from vLLM; the script prints how many requests
differ on such an instance), the first ``--mooncake-requests`` of the Mooncake
synthetic trace expanded to tokens (block id h -> tokens h*512+1..h*512+512,
cut to ``input_length``), each at six pools from 64 tokens to the trace's
working set, with blocks/pages of 16 and 1; and the whole Mooncake trace at
its own 512-token blocks at ``--mooncake-blocks``, compared with the hits
pyverify gives the trace as ``pyverify simulate`` loads it. The Mooncake
trace is read from ``$PYVERIFY_MOONCAKE_TRACES/synthetic_trace.jsonl``
(default ``../shared/data/mooncake`` beside the checkout; skipped, with a
line saying so, when absent).

Installing the engines (not in CI, not in the ``dev`` extra): each pins its
own torch, so one venv each, outside the repository::

    python -m venv ~/venv-vllm && ~/venv-vllm/bin/pip install vllm==0.33.0 && \
        ~/venv-vllm/bin/pip install -e . --no-deps
    python -m venv ~/venv-sglang && ~/venv-sglang/bin/pip install sglang==0.5.23 && \
        ~/venv-sglang/bin/pip install -e . --no-deps
    ~/venv-vllm/bin/python bench/engine_parity.py --engine vllm
    ~/venv-sglang/bin/python bench/engine_parity.py --engine sglang

(``pip install -e '.[engine-vllm]'`` / ``'.[engine-sglang]'`` name the same
pins.) On a CPU-only machine both import and run as they are: no
environment variable, stub or patch is needed (vLLM and torch print
warnings about CUDA on stderr). Prints one line per configuration and the
first disagreements; exits 1 on any. Without the engine installed it says
so in one line and exits 0.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import inspect
import random
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyverify.inputs.tokens_import import chain_of_tokens  # noqa: E402
from pyverify.cache.sglang import sglang_hits  # noqa: E402
from pyverify.cache.sglang_kernel import sglang_kernel_hits  # noqa: E402
from pyverify.cache.vllm_kernel import vllm_kernel_hits  # noqa: E402
from pyverify.cache.vllm import VllmBlockPool, vllm_hits  # noqa: E402


def generated_trace(n: int, seed: int, block: int = 16) -> list[list[int]]:
    """Prompts as token ids: conversations, shared system prompts, re-sends, odd and short lengths."""
    rng = random.Random(seed)
    systems = [
        [rng.randrange(1, 50_000) for _ in range(rng.choice([block, 2 * block, 3 * block + 5]))]
        for _ in range(3)
    ]
    conversations: list[list[int]] = []
    prompts: list[list[int]] = []
    while len(prompts) < n:
        kind = rng.random()
        if kind < 0.1 and prompts:  # an exact re-send
            prompts.append(list(rng.choice(prompts)))
        elif kind < 0.2:  # shorter than one block
            prompts.append([rng.randrange(1, 50_000) for _ in range(rng.randrange(1, block))])
        elif (
            kind < 0.55 and conversations
        ):  # the next turn of a conversation: history + answer + question
            index = rng.randrange(len(conversations))
            history = conversations[index] + [
                rng.randrange(1, 50_000) for _ in range(rng.randrange(1, 3 * block))
            ]
            conversations[index] = history
            prompts.append(list(history))
        else:  # a new conversation, often under a shared system prompt
            head = list(rng.choice(systems)) if rng.random() < 0.7 else []
            prompt = head + [rng.randrange(1, 50_000) for _ in range(rng.randrange(1, 4 * block))]
            conversations.append(prompt)
            prompts.append(list(prompt))
    return prompts


def aligned_trace(n: int, seed: int, block: int = 16) -> list[list[int]]:
    """Block-aligned prompts (shared heads, re-sends) with prompts shorter than a block among them.

    After a block-aligned prompt the front of vLLM's free queue is a cached
    block (no partial block was prepended), so the short prompt that follows
    evicts it: the case an imported instance, which leaves short prompts out,
    cannot show (point 3).
    """
    rng = random.Random(seed)
    heads = [
        [rng.randrange(1, 50_000) for _ in range(block * rng.randrange(1, 4))] for _ in range(4)
    ]
    prompts: list[list[int]] = []
    while len(prompts) < n:
        kind = rng.random()
        if kind < 0.3:
            prompts.append([rng.randrange(1, 50_000) for _ in range(rng.randrange(1, block))])
        elif kind < 0.5 and prompts:
            prompts.append(list(rng.choice(prompts)))
        else:
            prompts.append(
                list(rng.choice(heads))
                + [rng.randrange(1, 50_000) for _ in range(block * rng.randrange(1, 4))]
            )
    return prompts


# --- vLLM ---------------------------------------------------------------------


def _accepted(function, **kwargs):
    """The keyword arguments ``function`` takes (vLLM's constructors gain and lose some across versions)."""
    parameters = inspect.signature(function).parameters
    return {key: value for key, value in kwargs.items() if key in parameters}


class VllmEngine:
    """vLLM's own KVCacheManager over ``capacity`` usable blocks: requests start and finish in any order."""

    def __init__(self, capacity: int, block_size: int) -> None:
        import torch
        from vllm.utils.hashing import sha256
        from vllm.v1.core.kv_cache_manager import KVCacheManager
        from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
        from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec

        init_none_hash(sha256)
        spec = FullAttentionSpec(
            block_size=block_size, num_kv_heads=1, head_size=1, dtype=torch.float32
        )
        config = KVCacheConfig(
            num_blocks=capacity + 1,
            kv_cache_tensors=[],  # + the null block
            kv_cache_groups=[KVCacheGroupSpec(["layer"], spec)],
        )
        self.manager = KVCacheManager(
            config,
            **_accepted(
                KVCacheManager.__init__,
                max_model_len=1 << 20,
                scheduler_block_size=block_size,
                hash_block_size=block_size,
                enable_caching=True,
            ),
        )
        self.hasher = get_request_block_hasher(block_size, sha256)
        self.requests: dict[int, object] = {}

    def start(self, index: int, tokens: list[int]) -> int | None:
        """Schedule request ``index`` now: its hit tokens, or ``None`` when ``allocate_slots`` refuses it."""
        from vllm.sampling_params import SamplingParams
        from vllm.v1.request import Request

        request = Request(
            **_accepted(
                Request.__init__,
                request_id=str(index),
                prompt_token_ids=tokens,
                sampling_params=SamplingParams(max_tokens=1),
                pooling_params=None,
                eos_token_id=None,
                block_hasher=self.hasher,
                mm_features=None,
                lora_request=None,
                cache_salt=None,
            )
        )
        computed, hit_tokens = self.manager.get_computed_blocks(request)[:2]
        if (
            self.manager.allocate_slots(request, len(tokens) - hit_tokens, hit_tokens, computed)
            is None
        ):
            return None
        self.requests[index] = request
        return hit_tokens

    def finish(self, index: int) -> None:
        self.manager.free(self.requests.pop(index))


def vllm_engine_hits(
    prompts: list[list[int]], capacity: int, block_size: int
) -> tuple[list[int], list[int]]:
    """Hit tokens per request from vLLM's own KVCacheManager, one request at a time, and the requests it never schedules."""
    engine = VllmEngine(capacity, block_size)
    hits, unscheduled = [], []
    for index, tokens in enumerate(prompts):
        hit = engine.start(index, tokens)
        if hit is None:
            unscheduled.append(index)
            hits.append(0)
            continue
        hits.append(hit)
        engine.finish(index)
    return hits, unscheduled


class OurVllm:
    """pyverify's reference pool (:class:`pyverify.cache.vllm.VllmBlockPool`) behind the same two calls."""

    def __init__(self, capacity: int, block_size: int) -> None:
        self.pool = VllmBlockPool(capacity, block_size)
        self.block_size = block_size
        self.held: dict[int, list[int]] = {}

    def start(self, index: int, tokens: list[int]) -> int | None:
        started = self.pool.start(chain_of_tokens(tokens, self.block_size), len(tokens))
        if started is None:
            return None
        hit, self.held[index] = started
        return hit * self.block_size

    def finish(self, index: int) -> None:
        self.pool.finish(self.held.pop(index))


def overlapping(
    prompts: list[list[int]], engine, max_running: int, seed: int
) -> tuple[list[int], list[int]]:
    """Requests started in file order and finished in a seeded random order, at most ``max_running`` at once.

    A request the pool refuses while others run waits: a running request (chosen
    by the same seeded draw) finishes and it is tried again; refused with none
    running, it is never scheduled. The draws depend only on the answers, so two
    pools that answer alike see the same schedule.
    """
    rng = random.Random(seed)
    hits, never, running, index = [0] * len(prompts), [], [], 0
    while index < len(prompts) or running:
        if (
            index < len(prompts)
            and len(running) < max_running
            and (not running or rng.random() < 0.6)
        ):
            hit = engine.start(index, prompts[index])
            if hit is not None:
                hits[index] = hit
                running.append(index)
                index += 1
            elif not running:
                never.append(index)
                index += 1
            else:
                engine.finish(running.pop(rng.randrange(len(running))))
        else:
            engine.finish(running.pop(rng.randrange(len(running))))
    return hits, never


# --- SGLang -------------------------------------------------------------------


def sglang_engine_hits(
    prompts: list[list[int]], capacity_tokens: int, page_size: int, policy: str = "lru"
) -> tuple[list[int], list[int]]:
    """Hit tokens per request from SGLang's own RadixCache and token allocator, and the requests that never fit.

    One request at a time, as the scheduler runs it (SGLang 0.5.23):
    ``match_kv_cache`` (``mem_cache/common.py``: ``match_prefix`` on a key
    limited to ``Req._compute_max_prefix_len``, ``input_len - 1``), ``lock``,
    ``alloc_for_extend`` (``mem_cache/allocation.py``: ``alloc_token_slots``
    evicts ``extend_num_tokens`` with page size 1, ``alloc_paged_token_slots_extend``
    ``extend_num_tokens + page_size`` above 1, both through the allocator's
    ``evict_to_free_tokens``), then ``release_kv_cache`` with a checkpoint
    (``RadixCache._insert_cache``: insert the page-aligned prompt, free the
    duplicates; ``checkpoint``: re-match, move the lock; then free the
    unaligned tail and unlock). The allocators are SGLang's own
    (``TokenToKVPoolAllocator``, ``PagedTokenToKVPoolAllocator``) with no KV
    buffer behind them (``kvcache=None``: the cache code never reads it).
    """
    import torch
    from array import array
    from sglang.srt.mem_cache import radix_cache as rc
    from sglang.srt.mem_cache.allocator.paged import PagedTokenToKVPoolAllocator
    from sglang.srt.mem_cache.allocator.token import TokenToKVPoolAllocator
    from sglang.srt.mem_cache.base_prefix_cache import InsertParams, MatchPrefixParams
    from sglang.srt.managers.utils import validate_input_length
    from sglang.srt.mem_cache.cache_init_params import CacheInitParams

    size = capacity_tokens // page_size * page_size
    if page_size == 1:
        allocator = TokenToKVPoolAllocator(size, torch.float16, "cpu", None, False)
    else:
        allocator = PagedTokenToKVPoolAllocator(size, page_size, torch.float16, "cpu", None, False)
    cache = rc.RadixCache(
        CacheInitParams(
            disable=False,
            req_to_token_pool=None,
            token_to_kv_pool_allocator=allocator,
            page_size=page_size,
            eviction_policy=policy,
        )
    )
    # tp_worker.py get_worker_info, with no --context-length below the pool
    max_req_input_len = min(1 << 40, allocator.size) - 1 - 5
    hits, unscheduled = [], []
    for index, tokens in enumerate(prompts):
        n = len(tokens)
        ids = array("q", tokens)
        if (
            validate_input_length(
                SimpleNamespace(origin_input_ids=tokens), max_req_input_len, False
            )
            is not None
        ):
            unscheduled.append(index)  # refused before it reaches the cache
            hits.append(0)
            continue
        match = cache.match_prefix(MatchPrefixParams(key=rc.RadixKey(ids, limit=max(n - 1, 0))))
        hit, last = match.device_prefix_len, match.last_device_node
        lock = cache.lock(last)
        prefix = cache.path_device_indices(last)
        extension = n - hit
        demand = extension + (page_size if page_size > 1 else 0)
        allocator.evict_to_free_tokens(cache, demand)
        new = allocator.alloc(-(-extension // page_size) * page_size)
        if new is None:
            raise RuntimeError(f"request {index}: SGLang could not allocate {extension} tokens")
        kv = torch.cat([prefix.to(torch.int64), new[:extension].to(torch.int64)])
        # release_kv_cache(checkpoint=True): RadixCache._insert_cache, then checkpoint
        aligned = n // page_size * page_size
        key = rc.RadixKey(ids).page_aligned(page_size)
        result = cache.insert(
            InsertParams(key=key, value=kv[:aligned].clone(), inserted_len=0, priority=0)
        )
        if result.prefix_len > hit:  # the duplicates of what the tree already held
            allocator.free_segment(kv[hit : result.prefix_len], start_pos=hit)
        again = cache.match_prefix(MatchPrefixParams(key=key))
        cache.unlock(lock)
        lock = cache.lock(again.last_device_node)
        if aligned < n:  # free_kv_row: the unaligned tail (its page)
            allocator.free(new[aligned - hit :])
        elif len(new) > extension:
            allocator.free(new[extension:])
        cache.unlock(lock)
        hits.append(hit)
    return hits, unscheduled


# --- the comparison -----------------------------------------------------------


def mooncake_prompts(path: Path, limit: int | None) -> list[list[int]]:
    """Mooncake JSONL (``hash_ids``: one id per 512-token block, equal ids = equal prefixes) as token ids.

    Block id h becomes the 512 tokens ``h * 512 + 1 .. h * 512 + 512``, so equal
    ids give equal tokens and different ids different ones; the last block
    holds only the tokens ``input_length`` leaves it (``input_length - 512 * (k - 1)``).
    """
    import json

    prompts = []
    with path.open() as handle:
        for line in handle:
            if limit is not None and len(prompts) >= limit:
                break
            record = json.loads(line)
            ids, length = record["hash_ids"], record["input_length"]
            tokens = [h * MOONCAKE_BLOCK + t + 1 for h in ids for t in range(MOONCAKE_BLOCK)]
            prompts.append(tokens[:length])
    return prompts


MOONCAKE_BLOCK = 512

# Which of pyverify's two forms of each engine model is compared (--model): the Python reference or the compiled
# kernel simulate uses on large traces (tests hold the two equal; this holds each to the engine itself).
VLLM_MODELS = {"python": vllm_hits, "compiled": vllm_kernel_hits}
SGLANG_MODELS = {"python": sglang_hits, "compiled": sglang_kernel_hits}
MODEL = "python"


def ours(
    prompts: list[list[int]],
    engine: str,
    capacity_tokens: int,
    block: int,
    policy: str = "lru",
    chains: list[tuple[int, ...]] | None = None,
) -> tuple[list[int], list[int]]:
    """pyverify's hit tokens per request (prompts shorter than a block included, as chains of no blocks)."""
    chains = (
        chains if chains is not None else [chain_of_tokens(tokens, block) for tokens in prompts]
    )
    lengths = [len(tokens) for tokens in prompts]
    zeros = [0] * len(prompts)
    if engine == "vllm":
        hits, unscheduled = VLLM_MODELS[MODEL](
            chains, lengths, zeros, capacity_tokens // block, block
        )
    else:
        hits, unscheduled = SGLANG_MODELS[MODEL](
            chains, lengths, zeros, capacity_tokens // block, block, block, policy
        )
    return [h * block for h in hits], unscheduled


def compare(
    name: str, theirs: tuple[list[int], list[int]], mine: tuple[list[int], list[int]]
) -> tuple[int, int]:
    """Print one line (and the first disagreements); return (requests compared, requests equal)."""
    their_hits, their_unscheduled = theirs
    our_hits, our_unscheduled = mine
    wrong = [i for i, (a, b) in enumerate(zip(their_hits, our_hits, strict=True)) if a != b]
    wrong += [i for i in sorted(set(their_unscheduled) ^ set(our_unscheduled)) if i not in wrong]
    print(
        f"{name}: {len(their_hits)} requests, {len(their_hits) - len(wrong)} equal; hit tokens engine "
        f"{sum(their_hits)}, pyverify {sum(our_hits)}; never scheduled: engine {len(their_unscheduled)}, "
        f"pyverify {len(our_unscheduled)}",
        flush=True,
    )
    for i in wrong[:5]:
        print(f"  request {i}: engine {their_hits[i]} hit tokens, pyverify {our_hits[i]}")
    return len(their_hits), len(their_hits) - len(wrong)


class LazyMooncake:
    """The whole Mooncake trace as token ids, one request made at a time (61M tokens do not fit as lists)."""

    def __init__(self, path: Path) -> None:
        import json

        with path.open() as handle:
            self.records = [json.loads(line) for line in handle]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self):
        for record in self.records:
            ids, length = record["hash_ids"], record["input_length"]
            yield [h * MOONCAKE_BLOCK + t + 1 for h in ids for t in range(MOONCAKE_BLOCK)][:length]


def mooncake_at_its_block_size(
    path: Path, engines: list[str], blocks: list[int]
) -> tuple[int, int]:
    """The whole trace at 512-token blocks (pages): engines on its tokens, pyverify on the trace as
    ``pyverify simulate`` loads it (``load_input``, ``engine_hits`` with ``input_tokens``)."""
    from pyverify.inputs.load import load_input
    from pyverify.sim.simulate import engine_hits

    instance = load_input(path)
    lengths = [item["input_tokens"] for item in instance.extra]
    zeros = [0] * instance.n_requests
    prompts = LazyMooncake(path)
    compared = equal = 0
    for capacity in blocks:
        runs = []
        if "vllm" in engines:
            runs.append(("vllm", lambda: vllm_engine_hits(prompts, capacity, MOONCAKE_BLOCK)))
        if "sglang" in engines:
            for policy in ("lru", "fifo"):
                runs.append(
                    (
                        f"sglang-{policy}" if policy == "fifo" else "sglang",
                        lambda policy=policy: sglang_engine_hits(
                            prompts, capacity * MOONCAKE_BLOCK, MOONCAKE_BLOCK, policy
                        ),
                    )
                )
        for eviction, run in runs:
            hits, unscheduled = engine_hits(
                instance.chains, zeros, capacity, eviction, lengths, MOONCAKE_BLOCK
            )
            a, b = compare(
                f"mooncake (all, blocks of 512), {eviction}, {capacity} blocks",
                run(),
                ([h * MOONCAKE_BLOCK for h in hits], unscheduled),
            )
            compared, equal = compared + a, equal + b
    return compared, equal


def capacities(prompts: list[list[int]], block: int, count: int = 6) -> list[int]:
    """``count`` pool sizes in tokens, geometric from 4 blocks of 16 to the trace's working set (whole pages of 16)."""
    distinct = {block_id for tokens in prompts for block_id in chain_of_tokens(tokens, 16)}
    working = max(len(distinct) * 16 + max(map(len, prompts)) + 16, 128)
    low = 64
    sizes = sorted(
        {int(low * (working / low) ** (i / (count - 1))) // 16 * 16 for i in range(count)}
    )
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=400, help="generated requests (default 400)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--model",
        choices=("python", "compiled"),
        default="python",
        help="pyverify's Python reference models (default) or the compiled kernels simulate runs on large traces",
    )
    parser.add_argument(
        "--engine",
        choices=("vllm", "sglang", "both"),
        default="both",
        help="which engine to drive (each may live in its own venv); default both",
    )
    parser.add_argument(
        "--mooncake-requests",
        type=int,
        default=200,
        help="first N requests of $PYVERIFY_MOONCAKE_TRACES/synthetic_trace.jsonl, expanded to "
        "tokens (0: skip; default 200)",
    )
    parser.add_argument(
        "--mooncake-blocks",
        type=lambda text: [int(x) for x in text.split(",") if x],
        default=[8, 64, 256, 1024, 5859],
        help="pool sizes (blocks of 512) for the whole Mooncake trace at its own block size "
        "(default 8,64,256,1024,5859; empty: skip)",
    )
    parser.add_argument(
        "--max-running",
        type=lambda text: [int(x) for x in text.split(",") if x],
        default=[2, 4, 8],
        help="vLLM with several requests running at once, up to N (default 2,4,8; empty: skip)",
    )
    args = parser.parse_args(argv)
    engines = ["vllm", "sglang"] if args.engine == "both" else [args.engine]
    global MODEL
    MODEL = args.model
    missing = [name for name in engines if importlib.util.find_spec(name) is None]
    if missing:
        print(f"engine_parity: {' and '.join(missing)} not importable here; nothing compared")
        return 0
    for name in engines:
        print(f"{name} {importlib.import_module(name).__version__}", flush=True)
    traces = [
        ("generated", generated_trace(args.requests, args.seed, block=16)),
        ("aligned+short", aligned_trace(args.requests // 2, args.seed, block=16)),
    ]
    mooncake = (
        Path(
            os.environ.get("PYVERIFY_MOONCAKE_TRACES")
            or Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mooncake"
        )
        / "synthetic_trace.jsonl"
    )
    if args.mooncake_requests and mooncake.exists():
        traces.append(
            (
                f"mooncake[:{args.mooncake_requests}]",
                mooncake_prompts(mooncake, args.mooncake_requests),
            )
        )
    elif args.mooncake_requests:
        print(f"{mooncake}: absent (set PYVERIFY_MOONCAKE_TRACES); the Mooncake trace is skipped")
    compared = equal = 0
    for trace, prompts in traces:
        short = sum(len(tokens) < 16 for tokens in prompts)
        sizes = capacities(prompts, 16)
        print(
            f"{trace}: {len(prompts)} prompts, {sum(map(len, prompts))} tokens, {short} shorter than 16 tokens; "
            f"pools of {sizes} tokens",
            flush=True,
        )
        for block in (16, 1):
            chains = [chain_of_tokens(tokens, block) for tokens in prompts]
            for capacity in sizes:
                runs = []
                if "vllm" in engines:
                    runs.append(
                        (
                            f"vllm, blocks of {block}",
                            "vllm",
                            "lru",
                            lambda: vllm_engine_hits(prompts, capacity // block, block),
                        )
                    )
                if "sglang" in engines:
                    for policy in ("lru", "fifo"):
                        runs.append(
                            (
                                f"sglang {policy}, page size {block}",
                                "sglang",
                                policy,
                                lambda policy=policy: sglang_engine_hits(
                                    prompts, capacity, block, policy
                                ),
                            )
                        )
                for label, engine, policy, run in runs:
                    theirs = run()
                    a, b = compare(
                        f"{trace}, {label}, {capacity} tokens",
                        theirs,
                        ours(prompts, engine, capacity, block, policy, chains),
                    )
                    compared, equal = compared + a, equal + b
                    kept = [i for i, chain in enumerate(chains) if chain]
                    if len(kept) < len(
                        chains
                    ):  # point 3: an imported instance leaves these prompts out
                        imported = ours(
                            [prompts[i] for i in kept],
                            engine,
                            capacity,
                            block,
                            policy,
                            [chains[i] for i in kept],
                        )
                        differ = sum(theirs[0][i] != h for i, h in zip(kept, imported[0]))
                        print(
                            f"  as an imported instance ({len(chains) - len(kept)} prompts shorter than a block "
                            f"left out): {differ} of the other {len(kept)} requests differ from the engine"
                        )
        if (
            "vllm" in engines
        ):  # several requests running at once on one pool (VllmBlockPool.start / finish)
            for capacity in sizes:
                for max_running in args.max_running:
                    block = 16
                    theirs = overlapping(
                        prompts, VllmEngine(capacity // block, block), max_running, args.seed
                    )
                    mine = overlapping(
                        prompts, OurVllm(capacity // block, block), max_running, args.seed
                    )
                    a, b = compare(
                        f"{trace}, vllm, blocks of {block}, {capacity} tokens, up to {max_running} running",
                        theirs,
                        mine,
                    )
                    compared, equal = compared + a, equal + b
    if args.mooncake_blocks and mooncake.exists():
        a, b = mooncake_at_its_block_size(mooncake, engines, args.mooncake_blocks)
        compared, equal = compared + a, equal + b
    print(
        f"requests compared {compared}, equal {equal}"
        + ("" if compared == equal else f", {compared - equal} differ")
    )
    return 0 if compared == equal else 1


if __name__ == "__main__":
    sys.exit(main())
