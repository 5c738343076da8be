"""A doubly linked queue of block ids in two arrays, for the compiled replay kernels.

``before[b]`` and ``after[b]`` are block b's neighbours (``NONE`` at the
ends); the queue's ``head`` (next to leave) and ``tail`` are plain integers
that the calling kernel keeps in local variables (in registers: passing
them around in arrays made the kernels 4-5x slower). Each operation takes
them and returns them updated. The functions are inlined into the kernels
(``inline="always"``), so using them costs nothing over writing the pointer
moves out by hand, which is what the LRU/FIFO and leaf-first kernels did
before they shared this module.
"""

from __future__ import annotations

from numba import njit

from pyverify.numba_cache import caching

CACHE = (
    caching()
)  # numba's cache in a per-user folder, never the checkout; False if none is writable

NONE = -1


@njit(cache=CACHE, nogil=True, inline="always")
def push_back(before, after, head, tail, block):
    """Append ``block`` (not in the queue) at the tail; returns ``(head, tail)``."""
    before[block] = tail
    after[block] = NONE
    if tail == NONE:
        head = block
    else:
        after[tail] = block
    return head, block


@njit(cache=CACHE, nogil=True, inline="always")
def push_front(before, after, head, tail, block):
    """Put ``block`` (not in the queue) at the head; returns ``(head, tail)`` (vLLM's ``prepend_n`` of one block)."""
    after[block] = head
    before[block] = NONE
    if head == NONE:
        tail = block
    else:
        before[head] = block
    return block, tail


@njit(cache=CACHE, nogil=True, inline="always")
def pop_front(before, after, head, tail):
    """Remove the head (the queue must not be empty); returns ``(removed, head, tail)``."""
    removed = head
    head = after[removed]
    if head == NONE:
        tail = NONE
    else:
        before[head] = NONE
    return removed, head, tail


@njit(cache=CACHE, nogil=True, inline="always")
def unlink(before, after, head, tail, block):
    """Remove ``block`` (in the queue) from wherever it is; returns ``(head, tail)``."""
    b, a = before[block], after[block]
    if b == NONE:
        head = a
    else:
        after[b] = a
    if a == NONE:
        tail = b
    else:
        before[a] = b
    return head, tail


@njit(cache=CACHE, nogil=True, inline="always")
def move_to_back(before, after, head, tail, block):
    """Make ``block`` (in the queue) the tail; returns ``(head, tail)``. The LRU touch.
    It unlinks knowing ``block`` is not the tail (the general :func:`unlink`
    followed by :func:`push_back` made the LRU kernel 3-5x slower)."""
    if block == tail:
        return head, tail
    b, a = before[block], after[block]  # a != NONE: block is not the tail
    if b == NONE:
        head = a
    else:
        after[b] = a
    before[a] = b
    return push_back(before, after, head, tail, block)


__all__ = ["NONE", "move_to_back", "pop_front", "push_back", "unlink"]
