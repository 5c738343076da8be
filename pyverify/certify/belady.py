"""Belady's offline MIN for one cache of unit (one-block) requests, bypass form.

L. A. Belady, "A study of replacement algorithms for a virtual-storage
computer", IBM Systems Journal 5(2), 1966. In the model of
:mod:`.placement` a fetched block need not be kept (bypass), so the rule is:
after each request, among the blocks held and the block just requested, keep
the (at most) ``C`` whose next request comes soonest, and drop blocks never
requested again. An exchange argument shows this is optimal; the tests check
it against CP-SAT and an exhaustive search on small cases.

Written without reference to the solvers; used only to cross-check them.
"""

from __future__ import annotations

from typing import Sequence


def belady_misses(pages: Sequence[int], capacity: int) -> int:
    """Misses of MIN (bypass form) on ``pages`` with a cache of ``capacity`` blocks."""
    n = len(pages)
    next_use = [n] * n  # index of the next request for the same page, n if none
    last: dict[int, int] = {}
    for t in range(n - 1, -1, -1):
        next_use[t] = last.get(pages[t], n)
        last[pages[t]] = t
    held: dict[int, int] = {}  # page -> index of its next request
    misses = 0
    for t, page in enumerate(pages):
        if page not in held:
            misses += 1
        held[page] = next_use[t]
        live = sorted((when, p) for p, when in held.items() if when < n)
        held = {p: when for when, p in live[:capacity]}
    return misses
