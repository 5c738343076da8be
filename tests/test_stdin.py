"""Every command that takes an input path takes ``-``, standard input, and reads it once.

Run as a user runs them: a separate process with the lab instance piped in
(``cat instances/lab-512x32x16.json | pyverify COMMAND -``). ``certify -o`` and
``audit`` read their input at several steps (the trusted checker re-reads it
before a certificate is written); they used to find standard input at its end
on the second reading: "<stdin>: empty input: no requests".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import LAB_INSTANCE, REPO

REGISTRY = str(REPO / "lean" / "theorems.json")
LAB_BYTES = LAB_INSTANCE.read_bytes()
NAME = "lab-512x32x16"


def pyverify(argv: list[str], stdin: bytes, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pyverify", *argv],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def with_block_size(data: bytes, tokens: int) -> bytes:
    """The lab instance with a block size, which ``budgets`` needs to turn GiB into blocks."""
    instance = json.loads(data)
    instance["block_size_tokens"] = tokens
    return json.dumps(instance).encode()


@pytest.fixture(scope="module")
def lab_certificate(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "lab.pooled.json"
    done = pyverify(["certify", str(LAB_INSTANCE), "--model", "pooled", "-o", str(out)], b"", REPO)
    assert done.returncode == 0, done.stderr
    return out


# command -> (argv with '-' for the input, what its output must say about the instance read)
READERS = {
    "validate": (["validate", "-"], "512 requests, valid and prefix-closed"),
    "simulate": (["simulate", "-", "--model", "pooled"], "block misses      32"),
    "sweep": (["sweep", "-"], NAME),
    "certify": (["certify", "-", "--model", "pooled"], "misses        32"),
    "mrc": (["mrc", "-"], "1 - 32/512"),
    "cost": (["cost", "-"], "512 requests, 512 block references"),
    "tree": (["tree", "-"], "32  distinct block ids"),
    "budgets": (["budgets", "-", "--kv-model", "llama-3.1-8b"], NAME),
}


@pytest.mark.parametrize("command", sorted(READERS))
def test_a_command_reads_the_instance_from_stdin(tmp_path, command):
    argv, expected = READERS[command]
    data = with_block_size(LAB_BYTES, 16) if command == "budgets" else LAB_BYTES
    done = pyverify(argv, data, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert expected in done.stdout.decode()


def test_certify_to_a_file_reads_stdin_once(tmp_path):
    """The checker re-reads the instance before the certificate is written: the same bytes, not an empty pipe."""
    out = tmp_path / "x.json"
    done = pyverify(["certify", "-", "--model", "pooled", "-o", str(out)], LAB_BYTES, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert "verified by the checker" in done.stdout.decode()
    check = pyverify(["verify", str(out), str(LAB_INSTANCE)], b"", tmp_path)
    assert check.returncode == 0, check.stdout.decode()


def test_trace_import_reads_stdin(tmp_path):
    out = tmp_path / "i.json"
    done = pyverify(["trace", "import", "-", "-o", str(out)], LAB_BYTES, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(out.read_text())["name"] == NAME


def test_verify_reads_the_certificate_from_stdin(tmp_path, lab_certificate):
    done = pyverify(["verify", "-", str(LAB_INSTANCE)], lab_certificate.read_bytes(), tmp_path)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert "VERIFIED OPTIMAL" in done.stdout.decode()


def test_verify_reads_the_instance_from_stdin(tmp_path, lab_certificate):
    done = pyverify(["verify", str(lab_certificate), "-"], LAB_BYTES, tmp_path)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert "VERIFIED OPTIMAL" in done.stdout.decode()


def test_verify_refuses_both_from_stdin_in_one_line(tmp_path, lab_certificate):
    done = pyverify(["verify", "-", "-"], lab_certificate.read_bytes(), tmp_path)
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2 and done.stdout == b"" and len(lines) == 1
    assert "cannot both be read from standard input" in lines[0]


def test_audit_reads_stdin_once(tmp_path):
    out = tmp_path / "report"
    done = pyverify(["audit", "-", "-o", str(out), "--registry", REGISTRY], LAB_BYTES, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["instance"]["name"] == NAME
    assert {model: cert["objective"] for model, cert in summary["certificates"].items()} == {
        "pooled": 32,
        "per-host": 338,
    }
    assert all(entry["link"]["agrees"] for entry in summary["bridge"]["certificates"])


def test_a_gzip_stream_is_kept_whole_for_the_second_reading(tmp_path):
    import gzip

    out = tmp_path / "x.json"
    done = pyverify(
        ["certify", "-", "--model", "pooled", "-o", str(out)], gzip.compress(LAB_BYTES), tmp_path
    )
    assert done.returncode == 0, done.stderr.decode()


def test_an_endless_stdin_kept_for_a_second_reading_stops_at_the_input_bound(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify",
            "certify",
            "-",
            "--model",
            "pooled",
            "-o",
            str(tmp_path / "x.json"),
        ],
        input=b"\0" * 300_000,
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYVERIFY_MAX_INPUT_BYTES": "100000"},
    )
    lines = done.stderr.decode().strip().splitlines()
    assert (
        done.returncode == 2
        and len(lines) == 1
        and "<stdin>: larger than the input limit of 100000 bytes" in lines[0]
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "in_memory_bytes", [1 << 20, 4], ids=["kept in memory", "kept in a temporary file"]
)
def test_every_reading_of_kept_stdin_starts_at_its_beginning(monkeypatch, in_memory_bytes):
    import io

    import pyverify.stdin_once as stdin_once

    monkeypatch.setattr(stdin_once, "IN_MEMORY_BYTES", in_memory_bytes)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"first line\nsecond line\n")))
    original = sys.stdin
    with stdin_once.stdin_read_once(["a-file.json", "-"]):
        first = sys.stdin.buffer
        assert first.readline() == b"first line\n"
        assert (
            sys.stdin.buffer.read() == b"first line\nsecond line\n"
        )  # a second reader, from the start
        assert first.read() == b"second line\n"  # the first keeps its own place
    assert sys.stdin is original


def test_stdin_is_left_alone_when_no_input_is_dash(monkeypatch):
    import io

    from pyverify.stdin_once import stdin_read_once

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"not for us")))
    original = sys.stdin
    with stdin_read_once(["a-file.json"]):
        assert sys.stdin is original
    assert sys.stdin.buffer.read() == b"not for us"


def test_a_plain_file_is_handed_on_itself_and_a_gzip_one_decompressed(tmp_path):
    """After its magic bytes are read a plain regular file is seeked back and handed on as itself (so a
    reader takes it in one read of its size); gzip is still recognised by them and decompressed."""
    import gzip
    import io

    from pyverify.inputs.stream import open_source

    plain = tmp_path / "t.jsonl"
    plain.write_bytes(b'{"hash_ids": [1, 2]}\n' * 3)
    with open_source(plain) as source:
        assert type(source.handle) is io.BufferedReader and isinstance(source.handle.raw, io.FileIO)
        assert source.compression is None and source.handle.read() == plain.read_bytes()
    packed = tmp_path / "t.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with open_source(packed) as source:
        assert source.compression == "gzip" and source.handle.read() == plain.read_bytes()
    tiny = tmp_path / "one"
    tiny.write_bytes(b"{")  # shorter than the magic: read back whole all the same
    with open_source(tiny) as source:
        assert source.handle.read() == b"{"
