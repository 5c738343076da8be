"""Inputs are told apart by content, never by file name; validate says what a file is."""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.load import load_described, load_input
from pyverify.inputs.model import instance_sha256, load_instance

from .conftest import LAB_INSTANCE
from .helpers import assert_one_line_error, run_cli

MOONCAKE = "".join(
    json.dumps(r) + "\n"
    for r in (
        {"timestamp": 0, "input_length": 1000, "output_length": 7, "hash_ids": [10, 11]},
        {"timestamp": 3, "input_length": 600, "output_length": 1, "hash_ids": [10, 12]},
    )
)


@pytest.mark.parametrize("name", ["t.jsonl", "t.txt", "t.json", "t"])
def test_a_mooncake_trace_is_recognised_under_any_name(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_text(MOONCAKE)
    loaded = load_described(path)
    assert loaded.format.key == "mooncake-jsonl" and loaded.compression is None
    assert loaded.instance.chains == ((10, 11), (10, 12))
    status, out, _ = run_cli(capsys, "validate", str(path))
    assert status == 0
    assert (
        out.splitlines()[0] == f"{path}: Mooncake JSONL trace, 2 requests, valid and prefix-closed"
    )
    assert "valid pyverify.instance/1" not in out


@pytest.mark.parametrize("name", ["lab.json", "lab.jsonl", "lab.txt"])
def test_an_instance_is_recognised_pretty_or_on_one_line(capsys, tmp_path, name):
    pretty = tmp_path / f"pretty-{name}"
    pretty.write_text(LAB_INSTANCE.read_text())
    one_line = tmp_path / f"one-line-{name}"
    one_line.write_text(json.dumps(json.loads(LAB_INSTANCE.read_text())) + "\n")
    wanted = instance_sha256(load_instance(LAB_INSTANCE))
    for path in (pretty, one_line):
        loaded = load_described(path)
        assert loaded.format.key == "pyverify-instance"
        assert instance_sha256(loaded.instance) == wanted
    status, out, _ = run_cli(capsys, "validate", str(one_line), "--json")
    assert status == 0
    summary = json.loads(out)
    assert (summary["format"], summary["compression"], summary["requests"]) == (
        "pyverify-instance",
        None,
        512,
    )


def test_trace_import_of_an_instance_writes_the_same_instance(capsys, tmp_path):
    out = tmp_path / "copy.json"
    status, stdout, _ = run_cli(
        capsys, "trace", "import", str(LAB_INSTANCE), "-o", str(out), "--json"
    )
    assert status == 0 and json.loads(stdout)["format"] == "pyverify-instance"
    assert instance_sha256(load_instance(out)) == instance_sha256(load_instance(LAB_INSTANCE))


def test_trace_import_refuses_fewer_hosts_than_the_routing_uses(capsys, tmp_path):
    out = tmp_path / "copy.json"
    status, stdout, err = run_cli(
        capsys, "trace", "import", str(LAB_INSTANCE), "-o", str(out), "--hosts", "2"
    )
    assert (
        status == 2
        and stdout == ""
        and err.startswith("pyverify trace import: error: --hosts: 2 is fewer than the 16 hosts")
    )
    assert not out.exists()


UNKNOWN = [
    (
        '{"a": 1}\n',
        "line 1: the record matches no known format (keys: 'a'); see 'pyverify trace formats'",
    ),
    ("\n\nhello\n", "line 3: not a format pyverify reads; see 'pyverify trace formats'"),
    ("[1, 2]\n", "line 1: not a format pyverify reads"),
    (
        '{\n  "hosts": 2\n}\n',
        "a JSON document that is not a pyverify instance (no 'format' field); see 'pyverify trace formats'",
    ),
    ("", "empty input: no requests"),
    (
        '{"timestamp": 1}\n',
        "line 1: missing field 'hash_ids'",
    ),  # a Mooncake field suggests the format
    (
        '{"hosts": 1, "requests": [{"blocks": [1]}]}\n',
        "not a pyverify instance (no 'format' field)",
    ),  # so do an instance's
]


@pytest.mark.parametrize("text, expected", UNKNOWN)
@pytest.mark.parametrize("command", [["validate"], ["trace", "import"], ["simulate"]])
def test_unknown_formats_are_one_line_naming_the_accepted_ones(
    capsys, tmp_path, text, expected, command
):
    path = tmp_path / "input.data"
    path.write_text(text)
    out = tmp_path / "out.json"
    argv = (
        [*command, str(path)]
        + (["-o", str(out)] if command[0] == "trace" else [])
        + (["--model", "pooled"] if command[0] == "simulate" else [])
    )
    assert_one_line_error(*run_cli(capsys, *argv), path, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.data"]


def test_an_unknown_record_is_a_short_line_and_trace_formats_lists_every_format(capsys, tmp_path):
    """The error names the file, the line and a few of the record's keys, each cut short, in under 200
    characters however many keys it has; the formats are listed by 'pyverify trace formats'."""
    from pyverify.inputs.load import FORMATS

    path = tmp_path / "x"
    path.write_text(json.dumps({f"an_unusually_long_key_number_{i}": i for i in range(40)}) + "\n")
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(
        status,
        out,
        err,
        path,
        "line 1: the record matches no known format (keys: 'an_unusually_...'",
    )
    assert "and 37 more" in err and "see 'pyverify trace formats'" in err
    assert len(err.strip()) - len(str(path)) < 200
    status, out, err = run_cli(capsys, "trace", "formats")
    assert status == 0 and all(fmt.key in out and fmt.signature in out for fmt in FORMATS), err
    status, out, err = run_cli(capsys, "trace", "formats", "--json")
    assert status == 0 and [item["key"] for item in json.loads(out)] == [fmt.key for fmt in FORMATS]


# --- gzip (by magic bytes) and standard input ('-') --------------------------

import gzip  # noqa: E402
import io  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from .conftest import REPO  # noqa: E402


def feed_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize(
    "name", ["t.jsonl.gz", "t.jsonl"]
)  # the name does not matter: the magic bytes do
def test_gzip_is_read_by_its_magic_bytes(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(gzip.compress(MOONCAKE.encode()))
    loaded = load_described(path)
    assert (loaded.format.key, loaded.compression) == ("mooncake-jsonl", "gzip")
    assert loaded.instance.chains == ((10, 11), (10, 12)) and loaded.instance.name == "t"
    status, out, _ = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(
        f"{path}: gzip-compressed Mooncake JSONL trace, 2 requests"
    )
    packed = tmp_path / "lab.json.gz"
    packed.write_bytes(gzip.compress(LAB_INSTANCE.read_bytes()))
    assert instance_sha256(load_input(packed)) == instance_sha256(load_instance(LAB_INSTANCE))


def test_stdin_works_wherever_a_file_does(capsys, monkeypatch):
    feed_stdin(monkeypatch, gzip.compress(MOONCAKE.encode()))
    status, out, _ = run_cli(capsys, "simulate", "-", "--model", "pooled", "--json")
    assert status == 0
    result = json.loads(out)
    assert (result["instance"], result["misses"], result["references"]) == ("stdin", 3, 4)
    feed_stdin(monkeypatch, LAB_INSTANCE.read_bytes())
    status, out, _ = run_cli(capsys, "validate", "-")
    assert status == 0 and out.startswith(
        "-: pyverify instance (pyverify.instance/1), 512 requests"
    )


def test_stdin_errors_name_stdin(capsys, monkeypatch, tmp_path):
    feed_stdin(monkeypatch, (MOONCAKE + '{"hash_ids": [10, -1]}\n').encode())
    out = tmp_path / "o.json"
    assert_one_line_error(
        *run_cli(capsys, "trace", "import", "-", "-o", str(out)),
        "<stdin>",
        "line 3.hash_ids[1]: block id -1 is negative",
    )
    assert not out.exists()


def test_a_real_pipe_of_gzip_into_simulate(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(MOONCAKE.encode()))
    with open(path, "rb") as handle:
        run = subprocess.run(
            [sys.executable, "-m", "pyverify", "simulate", "-", "--model", "pooled", "--json"],
            stdin=handle,
            capture_output=True,
            cwd=REPO,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["misses"] == 3


#: Lines that can repeat without breaking time order.
REPEATABLE = "".join(
    json.dumps({"timestamp": 0, "hash_ids": [10, 11, 12, 13, 14, 15]}) + "\n" for _ in range(4)
)


def test_corrupt_gzip_is_one_line(capsys, tmp_path):
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress((REPEATABLE * 50).encode())[:-30])  # truncated
    assert_one_line_error(*run_cli(capsys, "validate", str(path)), path, "corrupt gzip data")
    path.write_bytes(b"\x1f\x8b" + b"not deflate at all" * 10)
    assert_one_line_error(*run_cli(capsys, "validate", str(path)), path, "cannot read")


def test_bounds_count_decompressed_bytes(capsys, monkeypatch, tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(
        gzip.compress((REPEATABLE * 500).encode())
    )  # about 100 kB of text, under 1 kB packed
    assert path.stat().st_size < 5000
    monkeypatch.setenv("PYVERIFY_MAX_INPUT_BYTES", "50000")
    assert_one_line_error(
        *run_cli(capsys, "validate", str(path)),
        path,
        "larger than the input limit of 50000 bytes, counted after decompression",
    )


def test_an_instance_on_one_line_longer_than_a_trace_line(monkeypatch, tmp_path):
    """A one-line instance may exceed the per-line bound of JSONL traces; it is read as a whole document."""
    import pyverify.inputs.detect as detect

    monkeypatch.setattr(detect, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(json.loads(LAB_INSTANCE.read_text())) + "\n")
    assert path.stat().st_size > 10_000
    loaded = load_described(path)
    assert loaded.format.key == "pyverify-instance" and loaded.instance.n_requests == 512


def test_a_terminal_on_stdin_is_refused_not_waited_on(capsys, monkeypatch):
    import os

    master, slave = os.openpty()  # a terminal nobody types into: reading it would wait forever
    try:
        monkeypatch.setattr(
            sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.FileIO(slave, "rb", closefd=False)))
        )
        assert_one_line_error(
            *run_cli(capsys, "validate", "-"),
            "<stdin>",
            "is a terminal: pipe or redirect the input",
        )
    finally:
        os.close(master)
        os.close(slave)


def test_a_path_named_dash_is_a_file_not_stdin(monkeypatch, tmp_path):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    Path("-").write_text(MOONCAKE)
    feed_stdin(monkeypatch, b"")  # were it read, standard input would be empty
    assert load_input(Path("-")).chains == ((10, 11), (10, 12))
