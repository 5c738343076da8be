"""A radix tree's child links, ``(parent node, first page id) -> child node``, in arrays (numba).

SGLang keeps each node's children in a dict keyed by the child's first page
(``TreeNode.children``); a compiled tree needs the same lookup without a
Python dict per node. This is one open-addressing hash table for the whole
tree, with linear probing and backward-shift deletion (Knuth, TAOCP vol. 3,
6.4, Algorithm R), so deleting leaves no tombstones and a lookup never walks
past more than the run of occupied slots it hashes into.

A table is three arrays of one power-of-two length, ``parents`` (``EMPTY``
marks a free slot), ``pages`` and ``children``; the caller sizes it to at
least twice the most links it ever holds (a load of at most one half).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pyverify.numba_cache import caching

CACHE = caching()  # numba's cache in a per-user folder, never the checkout; False if none is writable

EMPTY = -1
NOT_FOUND = -1


def table_length(links: int) -> int:
    """The power of two at least twice ``links`` (and at least 16)."""
    length = 16
    while length < 2 * links:
        length *= 2
    return length


@njit(cache=CACHE, nogil=True, inline="always")
def home(parent, page, mask):
    """The slot a link hashes to: both halves mixed (splitmix64's finaliser), so chained page ids spread."""
    x = np.uint64(page) ^ (np.uint64(parent) * np.uint64(0x9E3779B97F4A7C15))
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


@njit(cache=CACHE, nogil=True, inline="always")
def find_slot(parents, pages, parent, page):
    """The slot holding ``(parent, page)``, or the free slot where it would go."""
    mask = parents.size - 1
    slot = home(parent, page, mask)
    while parents[slot] != EMPTY and (parents[slot] != parent or pages[slot] != page):
        slot = (slot + 1) & mask
    return slot


@njit(cache=CACHE, nogil=True, inline="always")
def child_of(parents, pages, children, parent, page):
    """The child of ``parent`` whose key starts with ``page``, or ``NOT_FOUND``."""
    slot = find_slot(parents, pages, parent, page)
    return NOT_FOUND if parents[slot] == EMPTY else children[slot]


@njit(cache=CACHE, nogil=True, inline="always")
def set_child(parents, pages, children, parent, page, child):
    """Link (or relink) ``(parent, page)`` to ``child``."""
    slot = find_slot(parents, pages, parent, page)
    parents[slot] = parent
    pages[slot] = page
    children[slot] = child


@njit(cache=CACHE, nogil=True, inline="always")
def remove_child(parents, pages, children, parent, page):
    """Unlink ``(parent, page)`` (it must be linked), shifting back the entries probed past it."""
    mask = parents.size - 1
    hole = find_slot(parents, pages, parent, page)
    slot = hole
    while True:
        slot = (slot + 1) & mask
        if parents[slot] == EMPTY:
            break
        wanted = home(parents[slot], pages[slot], mask)
        # The entry may stay only if its home lies cyclically in (hole, slot].
        if (hole < wanted <= slot) if hole <= slot else (wanted > hole or wanted <= slot):
            continue
        parents[hole], pages[hole], children[hole] = parents[slot], pages[slot], children[slot]
        hole = slot
    parents[hole] = EMPTY


__all__ = ["EMPTY", "NOT_FOUND", "child_of", "remove_child", "set_child", "table_length"]
