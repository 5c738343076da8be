"""The small-file JSONL path (the standard library's json, no pyarrow) reads exactly what the pyarrow path reads.

:func:`pyverify.inputs.columnar.jsonl._stdlib_columns` reads files below
``STDLIB_MAX_BYTES`` so that a small trace needs no pyarrow (start-up, issue
#23). It must never accept a file the pyarrow path would not, nor read one
differently: on every file here, either it declines (and the pyarrow path
decides, as before) or the trace is the pyarrow path's, array for array and
dtype for dtype.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from pyverify.inputs.columnar import jsonl  # noqa: E402
from tests.test_columnar import BAD_LINES, GOOD, ODD_BUT_GOOD, random_chains, write_lines  # noqa: E402

COLUMNS = ("ids", "offsets", "timestamps", "input_tokens", "output_tokens")


@pytest.fixture(autouse=True)
def without_the_plain_parser(monkeypatch):
    """These files are mostly in json.dumps' form, which the numpy parser (tested against the pyarrow path in
    tests/test_plain_parse.py) would read before either path here is asked."""
    monkeypatch.setattr(jsonl, "read_plain_mooncake", lambda *args: None)


#: Files the small path must decline or read as the pyarrow path does (beyond test_columnar's).
MORE = {
    "plain": GOOD + "\n" + '{"timestamp": 1, "hash_ids": [0, 1, 2]}\n',
    "no optional fields": '{"hash_ids": [0, 1]}\n{"hash_ids": [0, 2]}\n',
    "some lines without a length": GOOD + "\n" + '{"timestamp": 2, "hash_ids": [0, 3]}\n',
    "float timestamp": '{"timestamp": 0.5, "hash_ids": [0]}\n{"timestamp": 1.5, "hash_ids": [0, 1]}\n',
    "exponent id": '{"hash_ids": [0, 1e2]}\n',
    "exponent length": '{"hash_ids": [0], "input_length": 1E3}\n',
    "null length": '{"hash_ids": [0], "input_length": null}\n',
    "true length": '{"hash_ids": [0], "input_length": true}\n',
    "string length": '{"hash_ids": [0], "input_length": "5"}\n',
    "nested id": '{"hash_ids": [0, [1]]}\n',
    "list of lists": '{"hash_ids": [[0], [1]]}\n',
    "object id": '{"hash_ids": [0, {"a": 1}]}\n',
    "huge length": '{"hash_ids": [0], "input_length": 99999999999999999999}\n',
    "length past 2**53": '{"hash_ids": [0], "input_length": 9007199254740993}\n',
    "timestamp past 2**53": '{"hash_ids": [0], "timestamp": 9007199254740993}\n',
    "id 2**63 - 1": '{"hash_ids": [9223372036854775807]}\n',
    "id 2**63": '{"hash_ids": [9223372036854775808]}\n',
    "negative zero": '{"hash_ids": [-0, 1], "timestamp": -0}\n',
    "leading zero": '{"hash_ids": [01]}\n',
    "string in a key's place": '{"hash_ids": [0], "timestamp": 1, "x": "y"}\n',
    "unknown key, number": '{"hash_ids": [0], "extra": 3}\n',
    "duplicate timestamp": '{"hash_ids": [0], "timestamp": 1, "timestamp": 0}\n',
    "string hash_ids": '{"hash_ids": "0"}\n',
    "two objects": '{"hash_ids": [0]}{"hash_ids": [0]}\n{"hash_ids": [0]}\n',
    "newline in a string": '{"hash_ids": [0], "x": "a}\n{b"}\n',
    "spaces": '{ "hash_ids" : [ 0 , 1 ] , "timestamp" : 3 }\n',
}


def both(path, monkeypatch):
    """``(trace or None, pyarrow path's trace or None, whether the small path itself read it)`` for the file at ``path``."""
    small = jsonl._fast_jsonl(path)
    with monkeypatch.context() as patch:
        patch.setattr(jsonl, "STDLIB_MAX_BYTES", 0)
        patch.setattr(
            jsonl, "_stdlib_columns", lambda *args: pytest.fail("the pyarrow path was asked for")
        )
        big = jsonl._fast_jsonl(path)
    data = path.read_bytes()
    counts = jsonl._prescan(data)
    parsed = counts is not None and jsonl._stdlib_columns(data, counts[0], counts[2]) is not None
    return small, big, parsed and small is not None


def same_trace(small, big) -> None:
    for name in COLUMNS:
        mine, theirs = getattr(small, name), getattr(big, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs, equal_nan=True), name
    assert (small.name, small.source) == (big.name, big.source)


CASES = {
    **{
        f"bad: {k}": "\n".join([GOOD, '{"timestamp": 1, "hash_ids": [0, 1, 2]}', v, GOOD]) + "\n"
        for k, v in BAD_LINES.items()
    },
    **{f"odd: {k}": v for k, v in ODD_BUT_GOOD.items()},
    **MORE,
}


#: Chunk sizes for the small path's parse: a line per chunk, a few lines per chunk (each chunk's end is sought
#: from a byte inside a line, and the chunk runs to that line's end), and the default (one chunk for these files).
CHUNKS = (1, 40, jsonl.STDLIB_CHUNK_BYTES)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_small_path_declines_or_reads_as_pyarrow_does(tmp_path, monkeypatch, name, chunk):
    """Whether the small path parsed the file or declined it, the answer is the pyarrow path's: the same trace, or
    None (then the strict reader names the line, or reads what neither fast path vouches for). So in chunks of
    any size: a bad line in a later chunk than the first still declines the whole file."""
    monkeypatch.setattr(jsonl, "STDLIB_CHUNK_BYTES", chunk)
    path = tmp_path / "t.jsonl"
    path.write_text(CASES[name])
    small, big, _ = both(path, monkeypatch)
    assert (small is None) == (big is None)
    if small is not None:
        same_trace(small, big)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("seed", range(6))
def test_the_small_path_reads_plain_traces(tmp_path, monkeypatch, seed, chunk):
    """Not vacuous: a plain Mooncake file (dense ids, or sparse ones up to 2**63) is read by the small path itself,
    in one chunk or many."""
    monkeypatch.setattr(jsonl, "STDLIB_CHUNK_BYTES", chunk)
    path = tmp_path / "t.jsonl"
    write_lines(path, random_chains(seed))
    small, big, taken = both(path, monkeypatch)
    assert taken and small is not None
    same_trace(small, big)


def test_plain_cases_are_taken(tmp_path, monkeypatch):
    for name in (
        "plain",
        "no optional fields",
        "some lines without a length",
        "spaces",
        "negative zero",
        "id 2**63 - 1",
    ):
        path = tmp_path / "t.jsonl"
        path.write_text(MORE[name])
        assert both(path, monkeypatch)[2], name


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("fails", [False, True])
def test_the_cycle_collector_is_left_as_it_was_found(enabled, fails):
    # Paused while json parses a small file (nothing it makes is in a cycle), then as the caller had it,
    # whether the parse returned or raised.
    import gc

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with pytest.raises(ValueError) if fails else contextlib.nullcontext():
            with jsonl._no_cycle_collection():
                assert not gc.isenabled()
                if fails:
                    raise ValueError("the parse failed")
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
