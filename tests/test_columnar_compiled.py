"""The readers' compiled loops (pyverify.inputs.columnar.compiled) answer as the numpy passes they replace.

* the line pre-scan against ``_plain_lines`` + ``too_deep_at`` on Hypothesis
  JSONL-like bytes (mostly plain lines, with every byte the scan refuses);
* the closure check against the numpy table and the strict checker on
  Hypothesis traces, closed or not;
* without numba (the kernel is ``None``) the readers still read, with the same results.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.inputs.columnar import compiled, jsonl
from pyverify.inputs.columnar.closure import is_prefix_closed
from pyverify.inputs.jsonread import MAX_JSON_DEPTH, too_deep_at
from pyverify.inputs.model import first_prefix_violation

from .strategies import prefix_closed_chains

pytest.importorskip("numba")

pieces = st.sampled_from(
    [
        '{"hash_ids": [1, 2]}',
        '{"a": "x"}',
        '{"b": [[1]]}',
        "\n",
        "{",
        "}",
        "[",
        "]",
        '"',
        "NaN",
        "Infinity",
        "\\",
        "\t",
        "\r",
        "\u00e9",
        " ",
        "N",
        "I",
        '{"k": "[[["}',
        "{}",
    ]
)


def reference(data: bytes):
    counts = jsonl._plain_lines(data) if data else None
    if counts is None:
        return None
    return None if too_deep_at(data) is not None else counts


def compiled_answer(data: bytes, limit: int = MAX_JSON_DEPTH):
    verdict, lines, longest, quotes = compiled.compiled_scan(data, limit)
    return (lines, longest, quotes) if verdict == compiled.PLAIN else None


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=30), st.booleans())
def test_the_compiled_scan_answers_as_the_numpy_passes(parts, newline_at_end):
    text = "".join(parts) + ("\n" if newline_at_end else "")
    data = text.encode("utf-8")
    assert compiled_answer(data) == reference(data)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 99), min_size=1, max_size=6), min_size=1, max_size=8),
    st.integers(0, 4),
)
def test_plain_jsonl_is_counted_line_by_line(rows, extra_depth):
    lines = [json.dumps({"hash_ids": row, "x": "[" * extra_depth}) for row in rows]
    data = ("\n".join(lines) + "\n").encode()
    assert (
        compiled_answer(data)
        == reference(data)
        == (len(rows), max(len(line) for line in lines) + 1, 4 * len(rows) + 2 * len(rows))
    )


def test_nesting_past_the_limit_is_refused():
    deep = ('{"a": ' + "[" * (MAX_JSON_DEPTH) + "]" * MAX_JSON_DEPTH + "}\n").encode()
    assert reference(deep) is None and compiled_answer(deep) is None
    assert compiled_answer(deep, MAX_JSON_DEPTH + 1) is not None


@st.composite
def traces(draw):
    chains = draw(prefix_closed_chains())
    if draw(st.booleans()):  # break closure somewhere: give a block a second parent
        chains = list(chains)
        chains.append(
            tuple(draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=5, unique=True)))
        )
    return chains


@settings(max_examples=300, deadline=None)
@given(traces())
def test_the_compiled_closure_check_answers_as_the_numpy_one(chains):
    ids = np.array([b for chain in chains for b in chain], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(c) for c in chains]))).astype(np.int64)
    expected = first_prefix_violation(chains) is None
    assert compiled.compiled_closed(ids, offsets, int(ids.max())) is expected
    assert is_prefix_closed(ids, offsets) is expected


def test_without_numba_the_readers_use_numpy(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(json.dumps({"hash_ids": [0, i + 1], "timestamp": i}) + "\n" for i in range(50))
    )
    with_kernels = jsonl.read_jsonl(path)
    monkeypatch.setattr(compiled, "kernel", lambda function: None)
    monkeypatch.setattr(compiled, "MIN_BYTES", 0)
    monkeypatch.setattr(compiled, "MIN_REFERENCES", 0)
    without = jsonl.read_jsonl(path)
    assert np.array_equal(with_kernels.ids, without.ids) and np.array_equal(
        with_kernels.offsets, without.offsets
    )


def test_big_inputs_take_the_compiled_path(tmp_path, monkeypatch):
    calls = []
    real = compiled.compiled_scan
    monkeypatch.setattr(
        jsonl, "compiled_scan", lambda data, limit: calls.append(len(data)) or real(data, limit)
    )
    monkeypatch.setattr(jsonl, "MIN_BYTES", 1)
    parsed = []
    real_bytes = jsonl.read_mooncake_bytes
    monkeypatch.setattr(
        jsonl,
        "read_mooncake_bytes",
        lambda data, limit: parsed.append(len(data)) or real_bytes(data, limit),
    )
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({"hash_ids": [0, i + 1]}) + "\n" for i in range(20)))
    assert jsonl.read_jsonl(plain).n_references == 40
    assert (
        parsed == [plain.stat().st_size] and calls == []
    )  # the byte parser read it: no pre-scan needed
    # An id of 19 digits, past the byte parser's 18: it declines, the compiled pre-scan runs.
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"hash_ids": [0, 10**18 + i]}) + "\n" for i in range(20)))
    trace = jsonl.read_jsonl(path)
    assert calls == [path.stat().st_size] and trace.n_references == 40
