"""first_references (the uncapacitated default's miss marks) equals a plain Python walk with a set per cache."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from pyverify.engines.numpy_engine import first_references


def first_by_sets(ids: list[int], caches: list[int] | None) -> list[bool]:
    seen: set[tuple[int, int]] = set()
    marks = []
    for position, block in enumerate(ids):
        key = (0 if caches is None else caches[position], block)
        marks.append(key not in seen)
        seen.add(key)
    return marks


@st.composite
def references(draw):
    n = draw(st.integers(0, 200))
    sparse = draw(st.booleans())  # 64-bit hash ids take the sorting branch, small ids the table
    high = 2**62 if sparse else draw(st.integers(0, 50))
    ids = draw(st.lists(st.integers(0, high), min_size=n, max_size=n))
    fleet = draw(st.integers(1, 5))
    caches = draw(st.lists(st.integers(0, fleet - 1), min_size=n, max_size=n))
    return ids, caches, fleet


@settings(max_examples=300, deadline=None)
@given(references(), st.booleans())
def test_first_references_equal_the_set_walk(case, pooled):
    ids, caches, fleet = case
    marks = first_references(np.asarray(ids, dtype=np.int64), None if pooled else np.asarray(caches, dtype=np.int64), fleet)
    assert marks.dtype == bool
    assert marks.tolist() == first_by_sets(ids, None if pooled else caches)
