"""A prefix-closed synthetic trace at any size, generated with numpy in chunks.

Shape (loosely like Mooncake's traces): P popular prompts, each a fixed chain
of 5..59 blocks; prompt popularity is Zipf-like. Each request takes the first
s blocks of one prompt (1 <= s <= its length) and appends a fresh suffix of
0..2*mean_suffix blocks that no other request shares. Prompt chains are fixed
and suffix ids are unique, so the trace is prefix-closed. Returned as flat
arrays: ``ids`` (int32), per-request ``lengths`` (int32) -- the last request
is cut so that there are exactly ``n_refs`` references (a cut chain is still
a prefix, so closure holds).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np


def synthetic_chunks(
    n_refs: int,
    seed: int = 0,
    prompts: int = 20_000,
    mean_suffix: int = 10,
    chunk_requests: int = 200_000,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(ids int64, lengths int64)`` per chunk of requests, in order: the trace, streamed with bounded memory."""
    rng = np.random.default_rng(seed)
    prompt_len = rng.integers(5, 60, prompts).astype(np.int64)
    prompt_base = np.concatenate(([0], np.cumsum(prompt_len)[:-1]))
    next_fresh = int(prompt_len.sum())
    filled = 0
    while filled < n_refs:
        p = (rng.zipf(1.3, chunk_requests) - 1) % prompts
        shared = rng.integers(1, prompt_len[p] + 1)
        suffix = rng.integers(0, 2 * mean_suffix + 1, chunk_requests)
        lengths = shared + suffix
        total = int(lengths.sum())
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        request = np.repeat(np.arange(chunk_requests), lengths)
        position = np.arange(total) - starts[request]
        is_suffix = position >= shared[request]
        block = prompt_base[p][request] + position
        fresh = np.cumsum(is_suffix) - 1 + next_fresh
        block[is_suffix] = fresh[is_suffix]
        next_fresh += int(is_suffix.sum())
        take = min(total, n_refs - filled)
        if take < total:  # cut the last request that fits partly (a cut chain is still a prefix)
            ends = np.cumsum(lengths)
            last = int(np.searchsorted(ends, take, side="left"))
            lengths = lengths[: last + 1].copy()
            lengths[-1] -= int(ends[last] - take)
        filled += take
        yield block[:take].astype(np.int64), lengths.astype(np.int64)


def synthetic_trace(
    n_refs: int,
    seed: int = 0,
    prompts: int = 20_000,
    mean_suffix: int = 10,
    chunk_requests: int = 200_000,
) -> tuple[np.ndarray, np.ndarray]:
    """The whole trace: ``ids`` (int32, filled chunk by chunk so only one chunk is int64 at a time) and ``lengths``."""
    ids = np.empty(n_refs, dtype=np.int32)
    lengths_parts = []
    filled = 0
    for chunk_ids, lengths in synthetic_chunks(n_refs, seed, prompts, mean_suffix, chunk_requests):
        ids[filled : filled + chunk_ids.size] = chunk_ids
        filled += chunk_ids.size
        lengths_parts.append(lengths.astype(np.int32))
    return ids, np.concatenate(lengths_parts)


def chains_of(ids: np.ndarray, lengths: np.ndarray) -> list[tuple[int, ...]]:
    """The chains as tuples (for the pure-Python simulators; small traces only)."""
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    flat = ids.tolist()
    return [tuple(flat[a:b]) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
