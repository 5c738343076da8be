"""The numpy parser of json.dumps-form Mooncake JSONL (pyverify.inputs.columnar.plain_parse) never accepts what the
strict reader refuses, and what it accepts it reads exactly as the strict reader does; through the reader, errors
stay the strict ones."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pyverify.inputs.columnar.jsonl as jsonl_module
import pyverify.inputs.columnar.plain_parse as plain_parse
from pyverify.errors import UserError
from pyverify.inputs.columnar import ColumnarTrace, read_jsonl
from pyverify.inputs.columnar.plain_parse import SEPARATORS, read_plain_mooncake
from pyverify.inputs.jsonread import MAX_LINE_BYTES
from pyverify.inputs.mooncake import import_mooncake
from tests.test_columnar import parsed_as_strict, random_chains, same_as_strict, write_lines
from tests.test_columnar import BAD_LINES, GOOD, ODD_BUT_GOOD

COLUMNS = ("ids", "offsets", "timestamps", "input_tokens", "output_tokens")

#: Hostile and odd files the plain parser must decline or read as the pyarrow path does (beyond
#: test_columnar's).
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


def same_trace(small, big) -> None:
    for name in COLUMNS:
        mine, theirs = getattr(small, name), getattr(big, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs, equal_nan=True), name
    assert (small.name, small.source) == (big.name, big.source)


HOSTILE_CASES = {
    **{
        f"bad: {k}": "\n".join([GOOD, '{"timestamp": 1, "hash_ids": [0, 1, 2]}', v, GOOD]) + "\n"
        for k, v in BAD_LINES.items()
    },
    **{f"odd: {k}": v for k, v in ODD_BUT_GOOD.items()},
    **MORE,
}


# What may stand in for a value, a key, a separator or a few bytes of a line.
HOSTILE = [
    "-1",
    "-5",
    "01",
    "00",
    "012",
    "1.5",
    "1e3",
    "1E3",
    "true",
    "false",
    "null",
    "0",
    "00",
    "01",
    "-0",
    "007",
    "9" * 15,
    "9" * 16,
    "1" + "0" * 15,
    "9223372036854775808",
    '"7"',
    "NaN",
    "Infinity",
    "[]",
    "{}",
    "[0,]",
    "[0]",
    "\\u0030",
    "\ufeff",
    "\r",
    "\t",
    "",
    " ",
    "  ",
    ",",
    ", ",
    "}",
    "{",
    "]",
    "[",
    '"',
    ":",
    ": ",
    "\n",
    "\n\n",
    '"hash_ids"',
    '"timestamp": 1, ',
    "\u00e9",
]
KEYS = ["timestamp", "input_length", "output_length"]


@st.composite
def plain_files(draw):
    """A file json.dumps could have written (one key order for every line, hash_ids last), often broken: a value,
    a few bytes or a whole line replaced, a line's keys reordered or respaced, the ending changed."""
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True)) + ["hash_ids"]
    style = draw(st.sampled_from(SEPARATORS))
    n = draw(
        st.integers(1, 8)
    )  # the first line sets the template: damage to a later one is the harder case
    lines = []
    for index in range(n):
        record = {
            key: (
                index
                if key == "timestamp"
                else draw(st.integers(0, 10 ** draw(st.integers(1, 16))))
            )
            for key in keys[:-1]
        }
        record["hash_ids"] = draw(
            st.lists(
                st.integers(0, draw(st.sampled_from([6, 99, 10**8, 10**15, 10**16]))),
                min_size=1,
                max_size=12,
            )
        )
        lines.append(json.dumps(record, separators=style))
    damage = draw(st.integers(0, 6))
    at = draw(st.integers(0, n - 1)) if draw(st.integers(0, 3)) == 0 else n - 1
    if damage == 1:  # a few bytes replaced
        line = lines[at]
        where = draw(st.integers(0, len(line)))
        lines[at] = (
            line[:where] + draw(st.sampled_from(HOSTILE)) + line[where + draw(st.integers(0, 3)) :]
        )
    elif damage == 2:  # one line with its keys in another order, or spaced another way
        record = json.loads(lines[at])
        order = draw(st.permutations(list(record)))
        separators = draw(st.sampled_from([(", ", ": "), (",", ":"), (", ", ":"), (",", ": ")]))
        lines[at] = json.dumps({key: record[key] for key in order}, separators=separators)
    elif damage == 3:  # one line's value replaced by a hostile one
        record = json.loads(lines[at])
        key = draw(st.sampled_from(list(record)))
        text = json.dumps({k: ("@" if k == key else v) for k, v in record.items()})
        lines[at] = text.replace(
            '"@"',
            draw(
                st.sampled_from(
                    HOSTILE
                    + [
                        "[1, 2.0]",
                        "[1, -2]",
                        "[01]",
                        "[1, 01]",
                        "[1, [2]]",
                        "1, 2",
                        "[1,2]",
                        "[1 ]",
                    ]
                )
            ),
        )
    elif damage == 4:  # a whole line replaced, or duplicated keys
        lines[at] = draw(
            st.sampled_from(
                [
                    "",
                    " ",
                    "{}",
                    '{"hash_ids": [0], "hash_ids": [0]}',
                    '{"hash_ids": [0], "x": 1}',
                    '{"timestamp": 1}',
                    '{"hash_ids": []}',
                    "[0]",
                    lines[at] + " ",
                    " " + lines[at],
                ]
            )
        )
    elif damage == 6:  # kvcache-simulator's block size or block weights, given on this line only
        record = json.loads(lines[at])
        extra = draw(
            st.sampled_from(
                [
                    {"block_size": draw(st.sampled_from([16, 64]))},
                    {"block_tokens": [draw(st.integers(1, 600)) for _ in record["hash_ids"]]},
                ]
            )
        )
        lines[at] = json.dumps(
            {**extra, **record} if draw(st.booleans()) else {**record, **extra}, separators=style
        )
    body = "\n".join(lines)
    ending = draw(st.sampled_from(["\n", "\n", "", "\r\n", "\n\n", " \n"]))
    return (body + ending).encode("utf-8")


def strict_of(path):
    try:
        return ColumnarTrace.from_instance(import_mooncake(path)), None
    except UserError as error:
        return None, str(error)


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of a few bytes, so that a file of a few lines is cut into many, as a big file is."""

    def with_piece(size):
        monkeypatch.setattr(plain_parse, "PIECE_BYTES", size)

    return with_piece


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plain_files(), st.sampled_from([1, 7, 40, 1 << 19]))
def test_plain_parser_accepts_only_what_the_strict_reader_reads_the_same(
    tmp_path_factory, small_pieces, data, piece
):
    path = tmp_path_factory.mktemp("plain") / "t.jsonl"
    path.write_bytes(data)
    strict, error = strict_of(path)
    small_pieces(piece)
    parsed = read_plain_mooncake(data, MAX_LINE_BYTES)
    if parsed is None:
        return
    mine = parsed_as_strict(parsed, strict, error, "plain parser")
    if mine is not None:
        same_as_strict(mine, path)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plain_files(), st.sampled_from([7, 1 << 19]))
def test_reader_with_the_plain_parser_gives_the_strict_result_or_error(
    tmp_path_factory, monkeypatch, small_pieces, data, piece
):
    path = tmp_path_factory.mktemp("reader") / "t.jsonl"
    path.write_bytes(data)
    strict, error = strict_of(path)
    small_pieces(piece)
    monkeypatch.setattr(
        jsonl_module, "worth_it", lambda *args: False
    )  # as in a process without numba loaded
    if error is not None:
        with pytest.raises(UserError) as raised:
            read_jsonl(path)
        assert str(raised.value) == error
    else:
        same_as_strict(read_jsonl(path), path)


@pytest.mark.parametrize("seed", range(4))
def test_plain_parser_takes_what_json_dumps_writes(tmp_path, small_pieces, seed):
    """Whole, and in pieces of a few lines; the sparse ids of the odd seeds (up to 19 digits) are declined."""
    path = tmp_path / "t.jsonl"
    write_lines(path, random_chains(seed))
    for piece in (1 << 19, 300):
        small_pieces(piece)
        parsed = read_plain_mooncake(path.read_bytes(), MAX_LINE_BYTES)
        if seed % 2:
            assert parsed is None
            continue
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


def test_the_reader_takes_the_plain_parser_for_such_a_file(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    write_lines(path, random_chains(0))
    calls = []
    real = jsonl_module.read_plain_mooncake
    monkeypatch.setattr(
        jsonl_module, "read_plain_mooncake", lambda *args: calls.append(1) or real(*args)
    )
    monkeypatch.setattr(
        jsonl_module, "worth_it", lambda *args: False
    )  # as in a process without numba loaded
    monkeypatch.setattr(
        jsonl_module,
        "_prescan",
        lambda data: pytest.fail("the plain parser should have read the file"),
    )
    same_as_strict(read_jsonl(path), path)
    assert calls == [1]


@pytest.mark.parametrize(
    "keys",
    [
        ["hash_ids"],
        ["timestamp", "hash_ids"],
        ["output_length", "timestamp", "input_length", "hash_ids"],
    ],
)
def test_any_key_order_that_every_line_keeps(keys):
    lines = [
        {
            "timestamp": 3 * k,
            "input_length": 512 * (k + 1),
            "output_length": 7,
            "hash_ids": list(range(k + 1)),
        }
        for k in range(5)
    ]
    data = "".join(json.dumps({key: line[key] for key in keys}) + "\n" for line in lines).encode()
    ids, offsets, times, inputs, outputs = read_plain_mooncake(data, MAX_LINE_BYTES)
    assert offsets.tolist() == [0, 1, 3, 6, 10, 15] and ids.tolist() == [
        i for k in range(5) for i in range(k + 1)
    ]
    assert (times is None) == ("timestamp" not in keys) and (outputs is None) == (
        "output_length" not in keys
    )
    if inputs is not None:
        assert inputs.tolist() == [512.0 * (k + 1) for k in range(5)]


@pytest.mark.parametrize(
    "value, read",
    [
        ("123456789012345", 123456789012345),
        ("1234567890123456", None),
        ("12345678", 12345678),
        ("123456789", 123456789),
        ("0", 0),
        ("01", None),
        ("10000000000", 10**10),
    ],
)
def test_values_eight_digits_at_a_time(value, read):
    data = f'{{"timestamp": 1, "hash_ids": [5, {value}]}}\n'.encode()
    parsed = read_plain_mooncake(data, MAX_LINE_BYTES)
    assert (parsed is None) == (read is None)
    if read is not None:
        assert parsed[0].tolist() == [5, read]


def test_a_line_longer_than_the_limit_is_declined():
    line = ('{"hash_ids": [' + ", ".join(["0"] * 50) + "]}\n").encode()
    assert read_plain_mooncake(line, len(line)) is not None
    assert read_plain_mooncake(line, len(line) - 1) is None
    assert (
        read_plain_mooncake(line[:-1], len(line) - 1) is not None
    )  # the last line's length has no newline
    assert read_plain_mooncake(line + line[:-1], len(line)) is not None


GOOD = '{"timestamp": 0, "input_length": 512, "hash_ids": [1]}\n'


@pytest.mark.parametrize(
    "line",
    [
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1]}x',
        '\n{"timestamp": 1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1]}\r\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1]} \n',
        ' {"timestamp": 1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1, 2]}{"timestamp": 1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids":[1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1,2]}\n',
        '{"timestamp": 1, 2, "input_length": 512, "hash_ids": [1]}\n',  # a list separator among the values
        '{"timestamp": 1, "input_length": 512, 3, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": []}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1], "hash_ids": [2]}\n',
        '{"timestamp": 1, "timestamp": 1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512}\n',
        '{"input_length": 512, "timestamp": 1, "hash_ids": [1]}\n',
        '{"timestamp": 01, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 0512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1, 01]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [00]}\n',
        '{"timestamp": -1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": -512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [-1]}\n',
        '{"timestamp": 1, "input_length": 5.12, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1.0]}\n',
        '{"timestamp": 1, "input_length": 512e0, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": "512", "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": ["1"]}\n',
        '{"timestamp": 1, "input_lengtX": 512, "hash_ids": [1]}\n',
        '{"timestamq": 1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_idz": [1]}\n',
        '{"timestamp"  1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1 , "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1 ]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1]]\n',
        '["timestamp": 1, "input_length": 512, "hash_ids": [1]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1, [2]]}\n',
        '{"timestamp": 1, "input_length": 512, "hash_ids": [1, 1234567890123456]}\n',
    ],
)
def test_near_misses_are_declined(line):
    """After a good first line (which sets the template), one line that is almost it: declined, whole and in pieces."""
    data = (GOOD + line).encode()
    assert read_plain_mooncake(GOOD.encode() * 2, MAX_LINE_BYTES) is not None
    for piece in (1, 1 << 19):
        plain_parse.PIECE_BYTES, saved = piece, plain_parse.PIECE_BYTES
        try:
            assert read_plain_mooncake(data, MAX_LINE_BYTES) is None
        finally:
            plain_parse.PIECE_BYTES = saved


@pytest.mark.parametrize(
    "first",
    [
        '{"timestamp": 1, 2, "hash_ids": [3]}',
        '{"hash_ids": [1], "timestamp": 1}',
        '{"hash_ids": [1], "x": 1}',
        '{"hash_ids": 1}',
        "[1]",
        "{}",
        '\ufeff{"hash_ids": [1]}',
        '{"hash_ids": [1]} ',
    ],
)
def test_a_first_line_outside_the_form_sets_no_template(first):
    assert (
        read_plain_mooncake((first + "\n" + '{"hash_ids": [1]}\n').encode(), MAX_LINE_BYTES) is None
    )


def test_decreasing_timestamps_go_to_the_strict_reader(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"timestamp": 5, "hash_ids": [1]}\n{"timestamp": 4, "hash_ids": [1, 2]}\n')
    assert read_plain_mooncake(path.read_bytes(), MAX_LINE_BYTES) is not None
    with pytest.raises(UserError) as raised:
        read_jsonl(path)
    assert str(raised.value) == strict_of(path)[1]


@pytest.mark.parametrize("name", sorted(HOSTILE_CASES))
def test_the_plain_parser_declines_or_reads_as_pyarrow_does(tmp_path, monkeypatch, name):
    """On the list of hostile and odd files: the plain parser's trace is the pyarrow path's, array for
    array and dtype for dtype (names and source too), or it declines."""
    path = tmp_path / "t.jsonl"
    path.write_text(HOSTILE_CASES[name])
    parsed = read_plain_mooncake(path.read_bytes(), MAX_LINE_BYTES)
    with monkeypatch.context() as patch:
        patch.setattr(jsonl_module, "read_plain_mooncake", lambda *args: None)
        pyarrow_path = jsonl_module._fast_jsonl(path)
    plain = jsonl_module._fast_jsonl(path)
    if parsed is None:
        return
    assert (plain is None) == (pyarrow_path is None)
    if plain is not None:
        same_trace(plain, pyarrow_path)


def test_the_plain_parser_takes_the_plain_cases():
    """Not vacuous: of those files, the ones json.dumps could have written (one key order throughout) are read."""
    for text in (
        HOSTILE_CASES["no optional fields"],
        HOSTILE_CASES["id 2**63 - 1"].replace("9223372036854775807", "922337203685477"),
        GOOD * 3,
    ):
        assert read_plain_mooncake(text.encode(), MAX_LINE_BYTES) is not None, text
    assert (
        read_plain_mooncake(HOSTILE_CASES["plain"].encode(), MAX_LINE_BYTES) is None
    )  # its second line lacks two keys


@pytest.mark.parametrize("separators", SEPARATORS)
def test_each_separator_style_json_dumps_writes(tmp_path, separators):
    path = tmp_path / "t.jsonl"
    chains = random_chains(0)
    path.write_text(
        "".join(
            json.dumps(
                {"timestamp": k, "input_length": 512 * len(c), "hash_ids": c}, separators=separators
            )
            + "\n"
            for k, c in enumerate(chains)
        )
    )
    parsed = read_plain_mooncake(path.read_bytes(), MAX_LINE_BYTES)
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
    mixed = path.read_text().splitlines()
    mixed[5] = json.dumps(
        json.loads(mixed[5]), separators=SEPARATORS[(SEPARATORS.index(separators) + 1) % 4]
    )
    assert read_plain_mooncake(("\n".join(mixed) + "\n").encode(), MAX_LINE_BYTES) is None


def test_a_file_the_byte_parser_declined_is_not_parsed_again(tmp_path, monkeypatch):
    """The plain parser's form lies inside the byte parser's: after the byte parser declines, it is not asked."""
    pytest.importorskip("numba")
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"hash_ids": [0], "timestamp": 1.5}\n{"hash_ids": [0, 1], "timestamp": 2}\n'
    )  # a float: both decline
    monkeypatch.setattr(jsonl_module, "MIN_BYTES", 0)
    monkeypatch.setattr(
        jsonl_module, "read_plain_mooncake", lambda *args: pytest.fail("asked again")
    )
    same_as_strict(read_jsonl(path), path)
