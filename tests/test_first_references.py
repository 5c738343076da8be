"""first_references (the uncapacitated default's miss marks) equals a plain Python walk with a set per cache."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pyverify.engines.numpy_engine as numpy_engine
from pyverify.engines.compiled_misses import compiled_first_references
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


@pytest.fixture(params=["numpy", "numpy in steps of 3", "compiled"])
def way(request, monkeypatch):
    """Both ways first_references counts: numpy's passes (whole, or a few references per step, so that a
    key's first reference and its repeats fall in different steps), and the compiled pass it takes once
    numba is loaded."""
    if request.param.startswith("numpy"):
        monkeypatch.setattr(numpy_engine, "compiled_first_references", lambda *args: None)
        if request.param.endswith("steps of 3"):
            monkeypatch.setattr(numpy_engine, "TABLE_STEP", 3)
    else:
        pytest.importorskip("numba")
        assert compiled_first_references(np.zeros(1, dtype=np.int64), 1, None, 1) is not None
    return request.param


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(references(), st.booleans())
def test_first_references_equal_the_set_walk(way, case, pooled):
    ids, caches, fleet = case
    marks = first_references(
        np.asarray(ids, dtype=np.int64),
        None if pooled else np.asarray(caches, dtype=np.int64),
        fleet,
    )
    assert marks.dtype == bool
    assert marks.tolist() == first_by_sets(ids, None if pooled else caches)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 1 << 20)), max_size=40),
    st.sampled_from([1, 2, 3, 4096]),
)
def test_sums_per_request_equal_python_sums(requests, step):
    """Each request's sum of marks, empty requests (0) included, in steps of any number of requests."""
    from unittest import mock

    import pyverify.sim.counting as counting

    lengths = [length for length, _ in requests]
    marks = np.array(
        [bool(seed >> k & 1) for length, seed in requests for k in range(length)], dtype=bool
    )
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64)
    with mock.patch.object(counting, "REQUEST_STEP", step):
        sums = counting.sums_per_request(marks, offsets)
    assert sums.dtype == np.int64
    assert sums.tolist() == [
        int(marks[a:b].sum()) for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())
    ]
