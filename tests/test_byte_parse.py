"""The compiled byte parser (pyverify.inputs.columnar.byte_parse) never accepts what the strict reader refuses,
and what it accepts it reads exactly as the strict reader does: arrays, digest, misses; errors stay the strict ones."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

pytest.importorskip("numba")

import pyverify.inputs.columnar.byte_parse as byte_parse  # noqa: E402
import pyverify.inputs.columnar.jsonl as jsonl_module  # noqa: E402
from pyverify.engines.numpy_engine import first_references  # noqa: E402
from pyverify.errors import UserError  # noqa: E402
from pyverify.inputs.columnar import ColumnarTrace, read_jsonl  # noqa: E402
from pyverify.inputs.columnar.byte_parse import read_mooncake_bytes  # noqa: E402
from pyverify.inputs.columnar.digest import content_sha256  # noqa: E402
from pyverify.inputs.jsonread import MAX_LINE_BYTES  # noqa: E402
from pyverify.inputs.mooncake import import_mooncake  # noqa: E402
from tests.test_columnar import parsed_as_strict, random_chains, same_as_strict, write_lines  # noqa: E402

# Fragments a hostile line may carry in place of a value, a key or a separator.
HOSTILE = [
    "-1",
    "1.5",
    "1e3",
    "1E3",
    "true",
    "null",
    "01",
    "9223372036854775808",
    "1234567890123456789",
    '"7"',
    "NaN",
    "Infinity",
    "[]",
    "{}",
    "[0,]",
    "\\u0030",
    "\ufeff",
    "\r",
    "\t",
    "",
    " ",
    ",",
    "}",
    "{",
    "]",
    "[",
    '"',
    ":",
]
KEYS = ["hash_ids", "timestamp", "input_length", "output_length"]


@st.composite
def lines(draw, index: int):
    """One line: a plain Mooncake line with random spacing and key order, sometimes broken by a hostile fragment."""
    chain = draw(st.lists(st.integers(0, 6), min_size=1, max_size=5))
    members = {"hash_ids": chain}
    if (
        index > 0 and draw(st.integers(0, 5)) == 0
    ):  # kvcache-simulator's fields, on a later line only
        key = draw(st.sampled_from(["block_size", "block_tokens"]))
        members[key] = (
            draw(st.sampled_from([16, 64]))
            if key == "block_size"
            else [draw(st.integers(1, 600)) for _ in chain]
        )
    for key in KEYS[1:]:
        if draw(st.booleans()):
            members[key] = index if key == "timestamp" else draw(st.integers(0, 10**6))
    order = draw(st.permutations(list(members)))
    space = draw(st.sampled_from(["", " ", "  "]))
    text = (
        "{"
        + ("," + space).join(
            f'"{key}"{space}:{space}{json.dumps(members[key], separators=(",", space + ""))}'
            for key in order
        )
        + "}"
    )
    numbers = [match.span() for match in re.finditer(r"[0-9]+", text)]
    if draw(st.integers(0, 3)) == 0:  # a value replaced by a hostile one
        begin, end = draw(st.sampled_from(numbers))
        text = text[:begin] + draw(st.sampled_from(HOSTILE)) + text[end:]
    elif draw(st.integers(0, 3)) == 0:  # broken somewhere
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(st.sampled_from(HOSTILE)) + text[at + cut :]
    if draw(st.integers(0, 9)) == 0:
        text = draw(
            st.sampled_from(
                [
                    '{"hash_ids": [0], "hash_ids": [0]}',
                    '{"hash_ids": [0], "x": 1}',
                    "",
                    " ",
                    '{"timestamp": 1}',
                ]
            )
        )
    return text


#: JSON whitespace within a line, as writers put it between tokens (and some that is not JSON's).
SPACES = ["", "", " ", "  ", "\t", "\r", " \t ", "\x0c", "\n"]
#: Keys of the extra fields other tools write (and some awkward ones: non-ASCII, escapes, size fields).
EXTRA_KEYS = [
    "request_id",
    "x",
    "model",
    "é",
    "a b",
    "hash_id",
    "timestamps",
    "",
    "\\u0078",
    "block_size",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "é"]), children, max_size=3)
    ),
    max_leaves=6,
)


def written(draw, value, space: str, ascii_only: bool) -> str:
    """``value`` as JSON with ``space`` between its tokens (a string as json.dumps writes it)."""
    if isinstance(value, list):
        inner = ("," + space).join(written(draw, item, space, ascii_only) for item in value)
        return "[" + space + inner + space + "]"
    if isinstance(value, dict):
        inner = ("," + space).join(
            json.dumps(key, ensure_ascii=False)  # a key written with an escape is declined
            + space
            + ":"
            + space
            + written(draw, item, space, ascii_only)
            for key, item in value.items()
        )
        return "{" + space + inner + space + "}"
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def written_lines(draw, index: int):
    """One Mooncake line as other tools write it: any key order, any spacing, extra fields with any JSON value,
    timestamps as integers, decimals or exponents, nulls; a chain that is a path from the root (prefix-closed)."""
    chain = list(range(draw(st.integers(1, 5))))
    members = {"hash_ids": chain}
    for key in ("input_length", "output_length"):
        if draw(st.booleans()):
            members[key] = draw(st.integers(0, 10**6))
    if draw(st.booleans()):
        members["timestamp"] = draw(
            st.sampled_from(
                [index, index + 0.25, float(index), f"{index}e0", f"{index * 10 + 5}E-1"]
            )
        )
    if draw(st.integers(0, 5)) == 0:
        members[draw(st.sampled_from(KEYS[1:]))] = None
    for key in draw(st.lists(st.sampled_from(EXTRA_KEYS[:7]), unique=True, max_size=3)):
        members[key] = draw(json_values)
    space = draw(st.sampled_from(SPACES[:7]))
    ascii_only = draw(st.booleans())
    order = draw(st.permutations(list(members)))
    text = "{" + space
    text += ("," + space).join(
        json.dumps(key, ensure_ascii=False)
        + space
        + ":"
        + space
        + (
            members[key]
            if isinstance(members[key], str) and key == "timestamp"
            else written(draw, members[key], space, ascii_only)
        )
        for key in order
    )
    return text + space + "}"


@st.composite
def written_files(draw):
    n = draw(st.integers(1, 6))
    body = "\n".join(draw(written_lines(index)) for index in range(n))
    ending = draw(st.sampled_from(["\n", "", "\r\n", "\n\n", "\n \t\n"]))
    prefix = draw(st.sampled_from(["", "", "\ufeff", "\n", " \n"]))
    return (prefix + body + ending).encode("utf-8")


@st.composite
def broken_files(draw):
    """A file :func:`written_files` makes, then broken here and there: a hostile fragment put in, a byte
    changed, a key repeated, a line swapped for one that is not Mooncake's."""
    text = draw(written_files()).decode("utf-8")
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        fragment = draw(
            st.sampled_from(HOSTILE + SPACES + EXTRA_KEYS)
            | st.sampled_from(['"x": 1, "x": 2, ', '"timestamp": 1, ', '"é": 1, "\\u00e9": 2, '])
            | st.text(max_size=2)
        )
        text = text[:at] + fragment + text[at + cut :]
    data = text.encode("utf-8", "surrogatepass")
    if (
        data and draw(st.integers(0, 4)) == 0
    ):  # one raw byte changed: invalid UTF-8, a control character
        at = draw(st.integers(0, len(data) - 1))
        data = (
            data[:at]
            + bytes([draw(st.sampled_from([0x00, 0x1F, 0x80, 0xC0, 0xED, 0xFF]))])
            + data[at + 1 :]
        )
    return data


@st.composite
def files(draw):
    n = draw(st.integers(1, 6))
    body = "\n".join(draw(lines(index)) for index in range(n))
    ending = draw(st.sampled_from(["\n", "", "\r\n", "\n\n"]))
    prefix = draw(st.sampled_from(["", "", "", "\ufeff"]))
    return (prefix + body + ending).encode("utf-8")


def strict_of(path):
    try:
        return ColumnarTrace.from_instance(import_mooncake(path)), None
    except UserError as error:
        return None, str(error)


def assert_same_trace(mine: ColumnarTrace, theirs: ColumnarTrace) -> None:
    assert np.array_equal(mine.ids, theirs.ids) and np.array_equal(mine.offsets, theirs.offsets)
    for name in ("timestamps", "input_tokens", "output_tokens", "block_tokens"):
        a, b = getattr(mine, name), getattr(theirs, name)
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b, equal_nan=True)), (
            name
        )
    assert mine.block_size_tokens == theirs.block_size_tokens
    assert content_sha256(mine) == content_sha256(theirs)
    assert np.array_equal(first_references(mine.ids), first_references(theirs.ids))


@pytest.fixture
def always_compiled(monkeypatch):
    """The reader takes the byte parser whatever the file's size."""
    monkeypatch.setattr(jsonl_module, "MIN_BYTES", 0)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files(), st.booleans())
def test_byte_parser_accepts_only_what_the_strict_reader_reads_the_same(
    tmp_path_factory, monkeypatch, data, split
):
    """Whole, and cut in two halves parsed on two threads (as a big file is), timestamps checked across the cut."""
    path = tmp_path_factory.mktemp("bytes") / "t.jsonl"
    path.write_bytes(data)
    strict, error = strict_of(path)
    with monkeypatch.context() as patch:
        patch.setattr(byte_parse, "SPLIT_MIN_BYTES", 0 if split else byte_parse.SPLIT_MIN_BYTES)
        parsed = read_mooncake_bytes(data, MAX_LINE_BYTES)
    if parsed is None:
        return
    mine = parsed_as_strict(parsed, strict, error, "byte parser")
    if mine is not None:
        assert_same_trace(mine, strict)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(written_files(), st.booleans())
def test_byte_parser_reads_every_form_writers_use_as_the_strict_reader_does(
    tmp_path_factory, monkeypatch, data, split
):
    """Any key order, any JSON whitespace, extra fields holding any JSON value, decimal timestamps, nulls, blank
    lines, a byte order mark: the strict reader reads these files, and the byte parser reads them the same. It may
    decline only a value it does not read exactly (a float a float64 would overflow, a UTF-16 surrogate pair
    written as escapes, a key written with an escape, a timestamp of more digits than it reads exactly)."""
    path = tmp_path_factory.mktemp("written") / "t.jsonl"
    path.write_bytes(data)
    strict, error = strict_of(path)
    assert error is None, error
    with monkeypatch.context() as patch:
        patch.setattr(byte_parse, "SPLIT_MIN_BYTES", 0 if split else byte_parse.SPLIT_MIN_BYTES)
        parsed = read_mooncake_bytes(data, MAX_LINE_BYTES)
    if parsed is None:
        text = data.decode("utf-8")
        assert re.search(r"[0-9]e\+?[0-9]{3}|\\u[dD][89abAB]|[0-9.]{17}|\\u0078", text), text
        return
    assert_same_trace(parsed_as_strict(parsed, strict, error, "byte parser"), strict)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(broken_files(), st.booleans())
def test_byte_parser_declines_or_reads_broken_files_as_the_strict_reader_does(
    tmp_path_factory, monkeypatch, data, split
):
    """The same files broken: whatever the byte parser accepts, the strict reader reads with the same values."""
    path = tmp_path_factory.mktemp("broken") / "t.jsonl"
    path.write_bytes(data)
    strict, error = strict_of(path)
    with monkeypatch.context() as patch:
        patch.setattr(byte_parse, "SPLIT_MIN_BYTES", 0 if split else byte_parse.SPLIT_MIN_BYTES)
        parsed = read_mooncake_bytes(data, MAX_LINE_BYTES)
    if parsed is None:
        return
    mine = parsed_as_strict(parsed, strict, error, "byte parser")
    if mine is not None:
        assert_same_trace(mine, strict)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files() | written_files() | broken_files())
def test_reader_with_the_byte_parser_gives_the_strict_result_or_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("reader") / "t.jsonl"
    path.write_bytes(data)
    strict, error = strict_of(path)
    jsonl_module.MIN_BYTES, saved = 0, jsonl_module.MIN_BYTES
    try:
        if error is not None:
            with pytest.raises(UserError) as raised:
                read_jsonl(path)
            assert str(raised.value) == error
        else:
            assert_same_trace(read_jsonl(path), strict)
    finally:
        jsonl_module.MIN_BYTES = saved


@pytest.mark.parametrize("seed", range(4))
def test_byte_parser_takes_a_plain_mooncake_file(tmp_path, seed):
    path = tmp_path / "t.jsonl"
    write_lines(path, random_chains(seed))
    parsed = read_mooncake_bytes(path.read_bytes(), MAX_LINE_BYTES)
    if seed % 2:  # sparse ids of up to 19 digits: beyond the parser's 18, left to the other readers
        return
    assert parsed is not None
    same_as_strict(
        ColumnarTrace(
            name="t",
            ids=parsed[0],
            offsets=parsed[1],
            timestamps=parsed[2],
            input_tokens=parsed[3],
            output_tokens=parsed[4],
        ),
        path,
    )


def test_timestamps_that_go_back_across_the_cut_are_declined(monkeypatch):
    monkeypatch.setattr(byte_parse, "SPLIT_MIN_BYTES", 0)
    forward = b'{"hash_ids": [0], "timestamp": 1}\n{"hash_ids": [0, 1]}\n{"hash_ids": [0], "timestamp": 2}\n'
    assert len(byte_parse._parts(forward)) == 2
    assert read_mooncake_bytes(forward, MAX_LINE_BYTES)[2].tolist()[::2] == [1.0, 2.0]
    assert (
        read_mooncake_bytes(forward.replace(b'"timestamp": 1', b'"timestamp": 3'), MAX_LINE_BYTES)
        is None
    )


def test_a_huge_line_is_declined(tmp_path):
    line = ('{"hash_ids": [' + ", ".join(["0"] * 50) + "]}\n").encode()
    assert read_mooncake_bytes(line, len(line)) is not None
    assert read_mooncake_bytes(line, len(line) - 1) is None
