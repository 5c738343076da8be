"""``read_bounded``: all of an input, in one buffer for a regular file, within the input limit.

A regular file is read by its raw file from the start (``_read_whole``), not through the buffered handle
that opening it left holding its first bytes (read to tell gzip by its magic), whose ``read()`` would join
that buffer to the rest, a copy of the whole file. These tests hold the reading to what the buffered
``read()`` gave: every byte once, in order, whatever was peeked, and the handle at its end afterwards.
"""

from __future__ import annotations

import gzip
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.errors import UserError
from pyverify.inputs.jsonread import open_input, read_bounded


@settings(max_examples=60, deadline=None)
@given(
    # gzip's magic makes the file a gzip file (read decompressed: the test below), not a plain one
    content=st.binary(min_size=0, max_size=20_000).filter(
        lambda data: not data.startswith(b"\x1f\x8b")
    ),
    peek=st.integers(0, 9000),
)
def test_a_regular_file_reads_whole_whatever_was_peeked(tmp_path_factory, content, peek):
    path = tmp_path_factory.mktemp("read") / "t.jsonl"
    path.write_bytes(content)
    with open_input(path) as handle:
        handle.peek(
            peek
        )  # the buffer holds some of the file already, as after the format detection
        assert read_bounded(handle, path) == content
        assert handle.read() == b""  # at the end, as after handle.read()


def test_a_gzip_file_reads_decompressed(tmp_path):
    content = b'{"hash_ids": [1, 2]}\n' * 1000
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(content))
    with open_input(path) as handle:
        assert read_bounded(handle, path) == content


@pytest.mark.parametrize("limit, fits", [(999, False), (1000, True)])
def test_a_regular_file_past_the_limit_is_refused(tmp_path, limit, fits):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x" * 1000)
    with open_input(path) as handle:
        if fits:
            assert read_bounded(handle, path, limit) == b"x" * 1000
        else:
            with pytest.raises(UserError, match="larger than the input limit of 999 bytes"):
                read_bounded(handle, path, limit)


def test_a_handle_part_read_reads_the_rest_only(tmp_path):
    """Not unread: the steps, from where the handle stands (the whole-file read is only for an unread one)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"0123456789" * 100)
    with open(path, "rb") as handle:
        assert handle.read(15) == b"0123456789" * 1 + b"01234"
        assert read_bounded(handle, path) == (b"0123456789" * 100)[15:]
    assert read_bounded(io.BytesIO(b"abc"), "x") == b"abc"  # not a file: read in steps, whole
