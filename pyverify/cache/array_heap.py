"""A binary min-heap of ``(priority, item)`` pairs in two arrays, for the compiled kernels.

The heap's size is a plain integer the calling kernel keeps in a local
variable; each operation takes it and returns it updated (as
:mod:`pyverify.cache.array_queue` does with a queue's ends). Items with equal
priorities leave in no particular order: the radix-tree kernel only ever
compares entries whose priorities differ (see
:mod:`pyverify.cache.sglang_kernel`).
"""

from __future__ import annotations

from numba import njit

from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable


@njit(cache=CACHE, nogil=True, inline="always")
def heap_push(priorities, items, size, priority, item):
    """Add ``(priority, item)`` (the arrays must have room); returns the new size."""
    at = size
    while at > 0:
        up = (at - 1) >> 1
        if priorities[up] <= priority:
            break
        priorities[at], items[at] = priorities[up], items[up]
        at = up
    priorities[at], items[at] = priority, item
    return size + 1


@njit(cache=CACHE, nogil=True, inline="always")
def heap_pop(priorities, items, size):
    """Remove the lowest priority (the heap must not be empty); returns ``(priority, item, new size)``."""
    priority, item = priorities[0], items[0]
    size -= 1
    last_priority, last_item = priorities[size], items[size]
    at = 0
    while True:
        down = 2 * at + 1
        if down >= size:
            break
        if down + 1 < size and priorities[down + 1] < priorities[down]:
            down += 1
        if last_priority <= priorities[down]:
            break
        priorities[at], items[at] = priorities[down], items[down]
        at = down
    if size > 0:
        priorities[at], items[at] = last_priority, last_item
    return priority, item, size


__all__ = ["heap_pop", "heap_push"]
