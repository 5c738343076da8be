"""The JSONL fast path's cheap depth bound (:func:`jsonl._lines_shallow`) proves only what the full scan would.

pyarrow's JSON reader crashes on nesting past a few hundred levels, so the
fast path hands a file to it only when no line nests deeper than
``MAX_JSON_DEPTH``. The cheap bound counts each line's opening brackets
(strings included); when it says "shallow", the full scan
(:func:`~pyverify.inputs.jsonread.too_deep_at`) must agree on every line,
and a file whose lines are left open (which a parser cannot carry from one
line into the next) must still end in the strict reader's one-line error.
"""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.inputs.columnar import jsonl
from pyverify.inputs.jsonread import MAX_JSON_DEPTH, too_deep_at

#: Pieces of a line's inside: brackets of both kinds, strings holding brackets, runs near the limit.
PIECES = st.sampled_from(
    [
        "[",
        "]",
        "{",
        "}",
        '"a": ',
        '"[{"',
        "1",
        ", ",
        "[" * (MAX_JSON_DEPTH // 2),
        "]" * (MAX_JSON_DEPTH // 2),
        "{" * (MAX_JSON_DEPTH // 3),
        '"x": [0]',
    ]
)


def lines_of(parts: list[list[str]]) -> bytes:
    return "".join("{" + "".join(inside) + "}\n" for inside in parts).encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=8), min_size=1, max_size=5))
def test_shallow_lines_are_shallow_to_the_full_scan(parts):
    data = lines_of(parts)
    if jsonl._plain_lines(data) is None or not jsonl._lines_shallow(data):
        return
    for line in data.splitlines(keepends=True):
        assert too_deep_at(line) is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2 * MAX_JSON_DEPTH), min_size=1, max_size=4))
def test_balanced_lines_get_the_full_scans_answer(depths):
    """On well-formed lines every level closes on the line that opens it: a line of d nested lists holds
    d + 1 openers and nests d + 1 deep, so the bound is exact and agrees with the full scan."""
    data = "".join('{"x": ' + "[" * d + "1" + "]" * d + "}\n" for d in depths).encode()
    assert (
        jsonl._lines_shallow(data)
        == (max(depths) + 1 <= MAX_JSON_DEPTH)
        == (too_deep_at(data) is None)
    )


def test_one_bracket_past_the_limit_goes_to_the_full_scan():
    at_limit = (
        '{"x": ' + "[" * (MAX_JSON_DEPTH - 1) + "1" + "]" * (MAX_JSON_DEPTH - 1) + "}\n"
    ).encode()
    assert jsonl._lines_shallow(at_limit) and jsonl._prescan(at_limit) is not None
    past = at_limit.replace(b"[", b"[[", 1).replace(b"]", b"]]", 1)
    assert (
        not jsonl._lines_shallow(past)
        and too_deep_at(past) is not None
        and jsonl._prescan(past) is None
    )


#: Lines that each leave 96 levels open and end with a "}" that closes an object: the full scan adds the
#: levels up across lines, far past the depth at which pyarrow's reader crashes (one line 100,000 deep
#: ends the process with SIGSEGV), while each line alone holds 99 openers.
OPEN_LINES = """
import sys
from pyverify.errors import UserError
from pyverify.inputs.columnar import jsonl
from pyverify.inputs.jsonread import too_deep_at
line = '{"hash_ids": [0], "x": ' + "[" * 95 + '{"a": {}}' + "\\n"
path = sys.argv[1]
open(path, "w").write(line * 3000)
data = open(path, "rb").read()
assert too_deep_at(data) is not None and jsonl._lines_shallow(data) and jsonl._prescan(data) is not None
try:
    jsonl.read_jsonl(path)
except UserError as error:
    print(error)
"""


def test_lines_left_open_reach_the_strict_readers_error_not_a_crash(tmp_path):
    """The bound lets pyarrow read these lines: its parser stops where the second line starts (a "{" cannot
    follow a value inside a list), never carrying the levels on; the strict reader then names the first line.
    Run in a child process, so that a crash is a failed test rather than the end of the test run."""
    done = subprocess.run(
        [sys.executable, "-c", OPEN_LINES, str(tmp_path / "open.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "line 1" in done.stdout


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.lists(PIECES, max_size=8), min_size=1, max_size=5),
    step=st.sampled_from([1, 2, 3, 7, 64]),
    trailing_newline=st.booleans(),
)
def test_the_scans_in_steps_find_what_one_whole_pass_finds(parts, step, trailing_newline):
    """The byte scans compare :data:`jsonl.SCAN_STEP` bytes at a time; in any step, a bracket or a line end that
    straddles two steps is found once, as a comparison of the whole text finds it."""
    import numpy as np

    data = lines_of(parts)
    data = data if trailing_newline else data[:-1]
    text = np.frombuffer(data, dtype=np.uint8)
    whole_ends = np.flatnonzero(text == ord("\n"))
    whole_ends = whole_ends if data.endswith(b"\n") else np.append(whole_ends, text.size)
    per_line = np.diff(
        np.searchsorted(
            np.flatnonzero((text == ord("{")) | (text == ord("["))), whole_ends, side="right"
        ),
        prepend=0,
    )
    default = jsonl.SCAN_STEP
    try:
        jsonl.SCAN_STEP = step
        assert jsonl._line_ends(text).tolist() == whole_ends.tolist()
        assert jsonl._count(text, '"') == data.count(b'"')
        assert jsonl._lines_shallow(data) == (int(per_line.max()) <= MAX_JSON_DEPTH)
        counts = jsonl._plain_lines(data)
    finally:
        jsonl.SCAN_STEP = default
    assert counts == jsonl._plain_lines(data)
