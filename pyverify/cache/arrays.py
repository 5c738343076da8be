"""Chains as flat arrays, the form the compiled kernels (and the curves) read.

A trace's chains become one array of block ids in reference order and one
length per chain (:func:`flatten`); ids are then made dense, so that a table
indexed by id stays small (:func:`dense_ids`).
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

#: Use a direct table when ids are below this multiple of the reference count.
DENSE_FACTOR = 4


def flatten(chains: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, lengths)``: all block ids in reference order (int64), and each chain's length."""
    lengths = np.fromiter(map(len, chains), dtype=np.int64, count=len(chains))
    # chain.from_iterable walks the chains in C: twice as fast as a generator expression.
    ids = np.fromiter(
        itertools.chain.from_iterable(chains), dtype=np.int64, count=int(lengths.sum())
    )
    return ids, lengths


def dense_ids(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """``(ids', universe)``: ids unchanged if already dense, else renumbered 0..distinct-1."""
    if ids.size == 0:
        return ids, 0
    low, high = int(ids.min()), int(ids.max())
    if low < 0:
        raise ValueError("block ids must be non-negative")
    if high < DENSE_FACTOR * ids.size + 1024:
        return ids, high + 1
    unique, inverse = np.unique(ids, return_inverse=True)
    return inverse.reshape(ids.shape), int(unique.size)
