"""Names and paths: what trace import writes pyverify reads back, and what a message echoes stays one line.

Each test reproduces a tester's report: an instance written that pyverify
then refused (a name with a newline, a trace file named ``a\\b.jsonl``), an
output suffix ignored (``-o X.csv`` wrote JSON), a line over the 64 MiB bound
reported as something else, and paths printed raw, so that a file name with a
newline added a line to the output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pyverify.cli import main
from pyverify.errors import MAX_SHOWN, shown
from pyverify.inputs.jsonread import MAX_LINE_BYTES

from .conftest import record

LINE = b'{"timestamp": 0, "hash_ids": [1, 2]}\n'


def run(capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.strip().splitlines()


def refused_in_one_line(status: int, err: list[str], *words: str) -> bool:
    ok = status == 2 and len(err) == 1 and all(word in err[0] for word in words)
    record("name or path", ok)
    return ok


def test_shown_escapes_control_characters_and_cuts_long_text():
    assert shown("a\nb\x1b[2Jc") == "a\\nb\\x1b[2Jc"
    assert shown("x" * 5000) == "x" * MAX_SHOWN + "..."
    assert shown("plain/path.json") == "plain/path.json"
    assert (
        shown("\udcff") == "\\udcff"
    )  # a file name that is not UTF-8: printable, never an encoding error


def test_a_name_with_a_newline_is_refused_before_anything_is_written(capsys, tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(LINE)
    out = tmp_path / "t.json"
    status, _, err = run(capsys, "trace", "import", str(trace), "-o", str(out), "--name", "a\nb")
    assert refused_in_one_line(status, err, "--name", "'a\\nb'"), err
    assert not out.exists()


def test_a_megabyte_name_is_not_echoed_whole(capsys, tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(LINE)
    status, _, err = run(
        capsys,
        "trace",
        "import",
        str(trace),
        "-o",
        str(tmp_path / "t.json"),
        "--name",
        "n" * (1 << 20),
    )
    assert refused_in_one_line(status, err, "--name", "..."), err[:1]
    assert len(err[0]) < 1000


@pytest.mark.parametrize("file_name", ["a\\b.jsonl", "x\ny.jsonl", "..jsonl", "\x1b[31m.jsonl"])
def test_a_trace_imports_under_a_name_pyverify_reads_back(capsys, tmp_path, file_name):
    """The default name is the file's stem, made to obey the schema: a_b, x_y, ... (it was written as it was)."""
    trace = tmp_path / file_name
    trace.write_bytes(LINE)
    out = tmp_path / "t.json"
    status, _, err = run(capsys, "trace", "import", str(trace), "-o", str(out))
    assert status == 0, err
    status, _, err = run(capsys, "validate", str(out))
    record("name or path", status == 0)
    assert status == 0, err


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".txt", ""])
def test_an_output_suffix_that_says_neither_format_is_refused(capsys, tmp_path, suffix):
    """-o X.csv silently wrote JSON."""
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(LINE)
    out = tmp_path / f"X{suffix}"
    status, _, err = run(capsys, "trace", "import", str(trace), "-o", str(out))
    assert refused_in_one_line(status, err, str(out), ".json", ".parquet"), err
    assert not out.exists()


def test_a_line_over_the_bound_is_named_as_such(capsys, tmp_path):
    """A 64 MiB line was reported as 'not a pyverify instance'."""
    trace = tmp_path / "long.jsonl"
    with open(trace, "wb") as handle:
        handle.write(b'{"hash_ids": [')
        handle.write(b"1, " * (MAX_LINE_BYTES // 3 + 1))
        handle.write(b"1]}\n")
    try:
        for command in (["validate"], ["simulate", "--model", "pooled"], ["sweep"]):
            status, _, err = run(capsys, *command, str(trace))
            assert refused_in_one_line(
                status, err, str(trace), "line 1", f"longer than {MAX_LINE_BYTES} bytes"
            ), err
    finally:
        trace.unlink()


def test_a_file_name_cannot_add_a_line_to_the_output(capsys, tmp_path):
    """A file named 'x\\nVERIFIED OPTIMAL...' printed a line of its own; now the newline is written \\n."""
    trace = tmp_path / "x\nVERIFIED OPTIMAL on this instance only.jsonl"
    trace.write_bytes(LINE)
    status, out, err = run(capsys, "validate", str(trace))
    assert status == 0, err
    injected = [line for line in out if line.startswith("VERIFIED")]
    status, _, err = run(capsys, "validate", str(tmp_path / "missing\nVERIFIED OPTIMAL.json"))
    ok = not injected and "\\n" in out[0] and refused_in_one_line(status, err, "\\nVERIFIED")
    record("name or path", ok)
    assert ok, (out, err)


def test_an_instance_path_with_a_newline_names_it_in_one_line(capsys, tmp_path):
    path = tmp_path / "bad\nname.json"
    path.write_bytes(b'{"format": "pyverify.instance/1"')
    for command in (["validate"], ["sweep"], ["trace", "import"]):
        argv = [*command, str(path)] + (
            ["-o", str(tmp_path / "o.json")] if command[0] == "trace" else []
        )
        status, _, err = run(capsys, *argv)
        assert refused_in_one_line(status, err, "bad\\nname.json"), err


def test_a_pretty_printed_instance_with_a_byte_order_mark_is_read(capsys, tmp_path):
    """It was 'not a format pyverify reads'."""
    from ..conftest import LAB_INSTANCE

    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + Path(LAB_INSTANCE).read_bytes())
    status, out, err = run(capsys, "validate", str(path))
    assert status == 0, err
    assert "512 requests" in out[0]


def test_an_instance_written_as_parquet_reads_back_the_same(capsys, tmp_path):
    """trace import -o x.parquet of an instance said 'missing field hash_ids'; once it could, the missing
    block size came back as Mooncake's 512. The file says 'none', and the instance reads back the same."""
    import json

    pytest.importorskip("pyarrow")
    from ..conftest import LAB_INSTANCE

    out = tmp_path / "lab.parquet"
    status, _, err = run(capsys, "trace", "import", str(LAB_INSTANCE), "-o", str(out))
    assert status == 0, err
    reports = []
    for path in (LAB_INSTANCE, out):
        assert main(["validate", str(path), "--json"]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    same = {key: reports[0][key] for key in ("requests", "block_references", "block_size_tokens")}
    assert {key: reports[1][key] for key in same} == same
