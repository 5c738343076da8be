"""Cross-check with theory: on one cache with unit blocks, CP-SAT's optimum is Belady's MIN.

The model allows bypass (a fetched block need not be kept), so MIN is in its
bypass form (pyverify/certify/belady.py). Belady itself is checked against an
exhaustive search over every legal residency schedule on tiny traces, so the
comparison with CP-SAT is between three independent computations.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.certify import cpsat
from pyverify.certify.belady import belady_misses
from pyverify.certify.placement import Problem


def exhaustive_misses(pages: tuple[int, ...], capacity: int) -> int:
    """Fewest misses over all runs of rules 1-4 (one cache, unit blocks), by dynamic programming."""

    @lru_cache(maxsize=None)
    def best(t: int, held: frozenset) -> int:
        if t == len(pages):
            return 0
        miss = 0 if pages[t] in held else 1
        pool = sorted(held | {pages[t]})
        return miss + min(
            best(t + 1, frozenset(keep))
            for size in range(0, min(capacity, len(pool)) + 1)
            for keep in combinations(pool, size)
        )

    return best(0, frozenset())


unit_traces = st.tuples(
    st.lists(st.integers(0, 5), min_size=1, max_size=40),
    st.integers(1, 4),
)


@settings(max_examples=60, deadline=None)
@given(unit_traces)
def test_cpsat_optimum_equals_belady_min(trace):
    pages, capacity = trace
    problem = Problem("pooled", tuple((p,) for p in pages), (0,) * len(pages), capacity)
    solved = cpsat.solve(problem, workers=1)
    assert solved.status == "OPTIMAL"
    assert solved.objective == belady_misses(pages, capacity)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=10), st.integers(1, 3))
def test_belady_equals_exhaustive_search(pages, capacity):
    assert belady_misses(pages, capacity) == exhaustive_misses(tuple(pages), capacity)


def test_belady_known_values():
    # a b a with one slot: keep a, bypass b -> 2 misses (forced insertion would give 3).
    assert belady_misses([1, 2, 1], 1) == 2
    # Cyclic a b c d repeated 3 times, two slots: 4 compulsory + 2 per later cycle.
    assert belady_misses([1, 2, 3, 4] * 3, 2) == 8 == exhaustive_misses((1, 2, 3, 4) * 3, 2)
