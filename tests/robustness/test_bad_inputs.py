"""Every command, every hostile input: one line naming the file, exit 2, no traceback, nothing written.

The inputs come from :mod:`tests.robustness.hostile`. Commands run in-process
(fast); a sample also runs as a real subprocess, where a traceback or a crash
would show as the user sees it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pyverify.cli import main

from ..conftest import LAB_INSTANCE, REPO
from .conftest import SCALE, record
from .hostile import Case, all_invalid_cases, mutated_cases, valid_variants

GOOD_CERT = REPO / "proofs" / "lab-512x32x16.pooled.json"

# Each command as a user types it; INPUT is the hostile file, OUT a folder for outputs.
COMMANDS = {
    "validate": ["validate", "INPUT"],
    "simulate": [
        "simulate",
        "INPUT",
        "--model",
        "per-host",
        "--routing",
        "round-robin",
        "--fleet",
        "2",
    ],
    "simulate-lru": ["simulate", "INPUT", "--model", "pooled", "--capacity", "2"],
    "sweep": ["sweep", "INPUT", "--chart", "OUT/sweep"],
    "mrc": ["mrc", "INPUT", "--chart", "OUT/mrc"],
    "cost": ["cost", "INPUT", "--chart", "OUT/cost"],
    "tree": ["tree", "INPUT", "--draw", "OUT/tree"],
    "certify": ["certify", "INPUT", "--model", "pooled", "-o", "OUT/c.json"],
    "verify-instance": ["verify", str(GOOD_CERT), "INPUT"],
    "verify-certificate": ["verify", "INPUT", str(LAB_INSTANCE)],
    "trace-import": ["trace", "import", "INPUT", "-o", "OUT/imported.json"],
    "audit": [
        "audit",
        "INPUT",
        "-o",
        "OUT/report",
        "--registry",
        str(REPO / "lean" / "theorems.json"),
    ],
    # The array paths: trace files read by the columnar readers (pyarrow's JSON, CSV and Parquet readers).
    "simulate-numpy": ["simulate", "INPUT", "--model", "pooled", "--backend", "numpy"],
    "simulate-duckdb": [
        "simulate",
        "INPUT",
        "--model",
        "pooled",
        "--backend",
        "duckdb",
    ],  # reads Parquet itself
    "trace-import-parquet": ["trace", "import", "INPUT", "-o", "OUT/imported.parquet"],
    # mrc and budgets read a trace file as arrays by default (as simulate does), at any size; per record when asked.
    "mrc-python": ["mrc", "INPUT", "--backend", "python"],
    "budgets": ["budgets", "INPUT", "--kv-model", "llama-3.1-8b"],
    "budgets-python": ["budgets", "INPUT", "--kv-model", "llama-3.1-8b", "--backend", "python"],
}


def run_in_process(capsys, argv):
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    except BaseException as error:  # a defect: it escaped main()
        captured = capsys.readouterr()
        return "traceback", captured.out, captured.err + f"\n{type(error).__name__}: {error}"
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def judge(
    status, err: str, path: Path, outputs_before, outputs_after, may_succeed: bool
) -> str | None:
    """None when the run kept the contract, else what went wrong."""
    if status == "traceback":
        return f"exception escaped: {err.strip().splitlines()[-1]}"
    if outputs_after != outputs_before and status != 0:
        return f"left files behind: {sorted(set(outputs_after) - set(outputs_before))}"
    if status == 0 and may_succeed:
        return None
    if status != 2:
        return f"exit status {status}, expected 2"
    lines = err.strip().splitlines()
    if len(lines) != 1:
        return f"{len(lines)} lines on stderr, expected 1: {err[:300]!r}"
    if str(path) not in lines[0]:
        return f"the error does not name the file: {lines[0]!r}"
    return None


def campaign(
    capsys, tmp_path, command: str, cases: list[Case], may_succeed: bool = False, monkeypatch=None
) -> list[str]:
    defects = []
    for index, case in enumerate(cases):
        folder = tmp_path / f"case{index}"
        out = folder / "out"
        out.mkdir(parents=True)
        path = folder / f"input{case.suffix}"
        path.write_bytes(case.data)
        argv = [
            str(path) if a == "INPUT" else a.replace("OUT", str(out)) for a in COMMANDS[command]
        ]
        before = files_under(out)
        status, _, err = run_in_process(capsys, argv)
        problem = judge(status, err, path, before, files_under(out), may_succeed)
        record("bad input", problem is None)
        if problem:
            defects.append(f"{command} / {case.name}: {problem}")
    return defects


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_invalid_input_is_one_line_exit_2(capsys, tmp_path, monkeypatch, command):
    if command == "simulate-duckdb":
        pytest.importorskip("duckdb")
    defects = campaign(capsys, tmp_path, command, all_invalid_cases(), monkeypatch=monkeypatch)
    assert not defects, "\n".join(defects)


#: Commands that read an input and write nothing a valid variant could upset (no certify/audit: slow).
READERS = [
    "validate",
    "simulate",
    "simulate-lru",
    "sweep",
    "mrc",
    "tree",
    "trace-import",
    "simulate-numpy",
    "trace-import-parquet",
    "mrc-python",
]


@pytest.mark.parametrize("command", READERS)
def test_every_valid_variant_is_accepted(capsys, tmp_path, monkeypatch, command):
    """A byte order mark, blank lines or CRLF line ends change nothing: every command reads the input (exit 0)."""
    refused = []
    for index, case in enumerate(valid_variants()):
        folder = tmp_path / f"case{index}"
        (folder / "out").mkdir(parents=True)
        path = folder / f"input{case.suffix}"
        path.write_bytes(case.data)
        argv = [
            str(path) if a == "INPUT" else a.replace("OUT", str(folder / "out"))
            for a in COMMANDS[command]
        ]
        status, _, err = run_in_process(capsys, argv)
        record("valid variant", status == 0)
        if status != 0:
            refused.append(f"{command} / {case.name}: {status}: {err.strip()[:300]}")
    assert not refused, "\n".join(refused)


@pytest.mark.parametrize("command", ["validate", "simulate", "sweep", "verify-certificate"])
def test_random_mutants_never_crash(capsys, tmp_path, command):
    assert (
        campaign(capsys, tmp_path, command, list(mutated_cases(40 * SCALE)), may_succeed=True) == []
    )


def test_missing_directory_and_device_inputs(capsys, tmp_path):
    defects = []
    for label, path in (
        ("missing", tmp_path / "nope.json"),
        ("directory", tmp_path),
        ("device", Path("/dev/zero")),
    ):
        for command in ("validate", "simulate", "verify-instance", "trace-import"):
            argv = [
                str(path) if a == "INPUT" else a.replace("OUT", str(tmp_path / "out"))
                for a in COMMANDS[command]
            ]
            status, _, err = run_in_process(capsys, argv)
            problem = judge(status, err, path, [], [], False)
            record("bad input", problem is None)
            if problem:
                defects.append(f"{command} / {label}: {problem}")
    assert defects == []


def test_endless_stream_stops_with_one_line(capsys, tmp_path, monkeypatch):
    """A named pipe that never ends (as /dev/zero through a pipe would): stopped by the input bound."""
    monkeypatch.setenv("PYVERIFY_MAX_INPUT_BYTES", str(1 << 20))
    instance_head = (
        b'{"format": "pyverify.instance/1", "name": "endless", "hosts": 1, "requests": ['
    )
    for suffix, head, chunk in (
        (".json", instance_head, b'{"blocks": [1]}, ' * 256),
        (".jsonl", b"", b'{"hash_ids": [1]}\n' * 256),
    ):
        fifo = tmp_path / f"endless{suffix}"
        os.mkfifo(fifo)
        stop = threading.Event()

        def feed() -> None:
            try:
                with open(fifo, "wb") as pipe:
                    pipe.write(head)
                    while not stop.is_set():
                        pipe.write(chunk)
            except (BrokenPipeError, OSError):
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        status, out, err = run_in_process(capsys, ["validate", str(fifo)])
        stop.set()
        writer.join(timeout=5)
        problem = judge(status, err, fifo, [], [], False)
        record("bad input", problem is None)
        assert problem is None, problem
        assert "limit" in err


def test_sample_through_a_real_process(tmp_path):
    """What a user's terminal shows: one line, exit 2, no 'Traceback', for a few hostile files."""
    chosen = {case.name: case for case in all_invalid_cases()}
    for name in (
        "deep list nesting",
        "duplicate hosts key",
        "lone surrogate in name",
        "hosts 2.0",
        "timestamp NaN",
    ):
        case = chosen[name]
        path = tmp_path / f"input{case.suffix}"
        path.write_bytes(case.data)
        result = subprocess.run(
            [sys.executable, "-m", "pyverify", "sweep", str(path)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        ok = (
            result.returncode == 2
            and "Traceback" not in result.stderr
            and len(result.stderr.strip().splitlines()) == 1
        )
        record("bad input (subprocess)", ok)
        assert ok, (name, result.returncode, result.stderr)


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "INPUT", "--backend", "numpy", "--model", "pooled"],
        ["trace", "import", "INPUT", "-o", "OUT.parquet"],
    ],
)
def test_deep_nesting_does_not_crash_the_process(tmp_path, argv):
    """pyarrow's JSON reader (the fast path of these commands) died of a segmentation fault (status -11)
    on a well-formed line nested 20,000 deep; a crash in-process would take pytest with it, so here it
    runs as a real process."""
    pytest.importorskip("pyarrow")
    chosen = {case.name: case for case in all_invalid_cases()}
    for name in (
        "deep nesting in a whole line",
        "deep nesting in the first line",
        "deep objects in a whole line",
    ):
        path = tmp_path / "input.jsonl"
        path.write_bytes(chosen[name].data)
        command = [
            str(path) if a == "INPUT" else a.replace("OUT", str(tmp_path / "out")) for a in argv
        ]
        result = subprocess.run(
            [sys.executable, "-m", "pyverify", *command],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        lines = result.stderr.strip().splitlines()
        ok = (
            result.returncode == 2
            and len(lines) == 1
            and "nested deeper than" in lines[0]
            and "line " in lines[0]
        )
        record("bad input (subprocess)", ok)
        assert ok, (name, result.returncode, result.stderr[-300:])
