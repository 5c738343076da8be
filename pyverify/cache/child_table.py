"""A radix tree's child links, ``(parent node, first page id) -> child node``, in arrays (numba).

SGLang keeps each node's children in a dict keyed by the child's first page
(``TreeNode.children``); a compiled tree needs the same lookup without a
Python dict per node. This is one open-addressing hash table for the whole
tree, with linear probing and backward-shift deletion (Knuth, TAOCP vol. 3,
6.4, Algorithm R), so deleting leaves no tombstones and a lookup never walks
past more than the run of occupied slots it hashes into.

A table is one int64 array of shape ``(length, 4)``, ``length`` a power of
two: a slot's parent (``EMPTY`` marks a free slot), first page and child
side by side, padded to 32 bytes, so that a probe reads one cache line
(three separate arrays made a lookup three cache misses, which was most of
the kernel's time on large trees). The caller sizes it to at least twice the
most links it ever holds (a load of at most one half).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

EMPTY = -1
NOT_FOUND = -1
PARENT, PAGE, CHILD = 0, 1, 2  # a slot's columns (the fourth is padding)


def new_table(links: int) -> np.ndarray:
    """An empty table for up to ``links`` links: a power of two of slots, at least twice ``links`` (and 16)."""
    length = 16
    while length < 2 * links:
        length *= 2
    table = np.zeros((length, 4), dtype=np.int64)
    table[:, PARENT] = EMPTY
    return table


@njit(cache=CACHE, nogil=True, inline="always")
def home(parent, page, mask):
    """The slot a link hashes to: both halves mixed (splitmix64's finaliser), so chained page ids spread."""
    x = np.uint64(page) ^ (np.uint64(parent) * np.uint64(0x9E3779B97F4A7C15))
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


@njit(cache=CACHE, nogil=True, inline="always")
def find_slot(table, parent, page):
    """The slot holding ``(parent, page)``, or the free slot where it would go."""
    mask = table.shape[0] - 1
    slot = home(parent, page, mask)
    while table[slot, PARENT] != EMPTY and (
        table[slot, PARENT] != parent or table[slot, PAGE] != page
    ):
        slot = (slot + 1) & mask
    return slot


@njit(cache=CACHE, nogil=True, inline="always")
def child_of(table, parent, page):
    """The child of ``parent`` whose key starts with ``page``, or ``NOT_FOUND``."""
    slot = find_slot(table, parent, page)
    return NOT_FOUND if table[slot, PARENT] == EMPTY else table[slot, CHILD]


@njit(cache=CACHE, nogil=True, inline="always")
def set_child(table, parent, page, child):
    """Link (or relink) ``(parent, page)`` to ``child``."""
    slot = find_slot(table, parent, page)
    table[slot, PARENT], table[slot, PAGE], table[slot, CHILD] = parent, page, child


@njit(cache=CACHE, nogil=True, inline="always")
def remove_child(table, parent, page):
    """Unlink ``(parent, page)`` (it must be linked), shifting back the entries probed past it."""
    mask = table.shape[0] - 1
    hole = find_slot(table, parent, page)
    slot = hole
    while True:
        slot = (slot + 1) & mask
        if table[slot, PARENT] == EMPTY:
            break
        wanted = home(table[slot, PARENT], table[slot, PAGE], mask)
        # The entry may stay only if its home lies cyclically in (hole, slot].
        if (hole < wanted <= slot) if hole <= slot else (wanted > hole or wanted <= slot):
            continue
        table[hole, PARENT], table[hole, PAGE], table[hole, CHILD] = (
            table[slot, PARENT],
            table[slot, PAGE],
            table[slot, CHILD],
        )
        hole = slot
    table[hole, PARENT] = EMPTY


__all__ = ["EMPTY", "NOT_FOUND", "child_of", "new_table", "remove_child", "set_child"]
