"""The program's first lines: the memory settings it makes for itself, and leaves alone when the user made them."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest

from pyverify import launch

from .conftest import REPO


class RecordingLibc:
    """Stands in for the C library: records mallopt calls; a glibc has gnu_get_libc_version."""

    def __init__(self, glibc: bool = True):
        self.calls: list[tuple[int, int]] = []
        if glibc:
            self.gnu_get_libc_version = lambda: b"2.36"

    def mallopt(self, parameter: int, value: int) -> int:
        self.calls.append((parameter, value))
        return 1


@pytest.fixture
def libc(monkeypatch):
    fake = RecordingLibc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: fake)
    monkeypatch.setattr(sys, "platform", "linux")
    for name in list(os.environ):
        if name == "GLIBC_TUNABLES" or name.startswith("MALLOC_"):
            monkeypatch.delenv(name)
    return fake


def test_glibc_is_told_to_keep_freed_memory(libc):
    launch._keep_freed_memory()
    assert libc.calls == [(launch.M_MMAP_MAX, 0), (launch.M_TRIM_THRESHOLD, 2**31 - 1)]


@pytest.mark.parametrize(
    "variable", ["GLIBC_TUNABLES", "MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_"]
)
def test_a_users_own_malloc_settings_are_left_alone(libc, monkeypatch, variable):
    monkeypatch.setenv(variable, "glibc.malloc.mmap_max=4" if variable == "GLIBC_TUNABLES" else "4")
    launch._keep_freed_memory()
    assert libc.calls == []


def test_nothing_is_changed_off_glibc(libc, monkeypatch):
    other = RecordingLibc(glibc=False)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: other)
    launch._keep_freed_memory()
    assert other.calls == []


@pytest.mark.parametrize(
    ("variable", "ours", "given"),
    [
        ("NUMPY_MADVISE_HUGEPAGE", "0", None),
        ("NUMPY_MADVISE_HUGEPAGE", "0", "1"),
        ("OPENBLAS_NUM_THREADS", "1", None),
        ("OPENBLAS_NUM_THREADS", "1", "4"),
    ],
)
def test_numpys_settings_are_the_programs_unless_the_user_set_them(variable, ours, given):
    # Huge pages off, and one OpenBLAS thread: both read by NumPy when it is imported, so set before the CLI loads.
    env = {k: v for k, v in os.environ.items() if k != variable}
    if given is not None:
        env[variable] = given
    code = (
        "import sys; from pyverify import launch, cli; "
        f"cli.entry = lambda: print(__import__('os').environ[{variable!r}], 'numpy' in sys.modules); launch.entry()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, check=True
    ).stdout
    assert out.split() == [
        ours if given is None else given,
        "False",
    ]  # set, and before NumPy was imported


# The exit: the interpreter's teardown is skipped (pyverify.cli._leave), but nothing finalisation would have done is lost.

TRACE_LINE = '{"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [0, 1]}\n'


def run_entry(tmp_path, before: str, *argv: str) -> subprocess.CompletedProcess:
    """``pyverify ARGV`` through the program's own entry point, after the Python lines ``before``."""
    script = f"import sys\n{before}\nsys.argv = ['pyverify', *sys.argv[1:]]\nfrom pyverify.launch import entry\nentry()\n"
    return subprocess.run(
        [sys.executable, "-c", script, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_atexit_functions_run_and_every_line_is_written(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text(TRACE_LINE * 3)
    result = run_entry(
        tmp_path,
        "import atexit\natexit.register(lambda: print('atexit ran'))",
        "simulate",
        str(trace),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report, _, tail = result.stdout.rpartition("}\n")
    assert tail == "atexit ran\n"  # after the report, as at an ordinary exit
    assert json.loads(report + "}")["misses"] == 2


def test_the_status_of_a_refused_input_is_kept(tmp_path):
    (tmp_path / "bad.json").write_text("{")
    result = run_entry(
        tmp_path,
        "import atexit\natexit.register(lambda: print('atexit ran'))",
        "simulate",
        "bad.json",
    )
    assert (result.returncode, result.stdout) == (2, "atexit ran\n")
    assert result.stderr.startswith("pyverify simulate: error:") and result.stderr.count("\n") == 1


def test_a_thread_still_working_is_waited_for(tmp_path):
    """A thread that is not a daemon is waited for at an ordinary exit; skipping the teardown must not kill it."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(TRACE_LINE)
    worker = (
        "import threading, time, pathlib\n"
        "threading.Thread(target=lambda: (time.sleep(0.5), pathlib.Path('done').write_text('yes'))).start()"
    )
    result = run_entry(tmp_path, worker, "simulate", str(trace))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "done").read_text() == "yes"


def test_an_output_file_is_whole_when_the_process_ends(tmp_path):
    """What a command writes is on disk when it exits (its own files are closed before the exit is skipped)."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(TRACE_LINE * 200)
    result = run_entry(tmp_path, "", "trace", "import", str(trace), "-o", "t.json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads((tmp_path / "t.json").read_text())["requests"]) == 200


def test_a_reader_that_stops_early_gets_no_complaint(tmp_path):
    """``pyverify ... | head``: the pipe closes before the report is written; the run ends quietly, status 0."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(TRACE_LINE * 20000)  # a witness far longer than a pipe's buffer
    script = "import sys\nsys.argv = ['pyverify', *sys.argv[1:]]\nfrom pyverify.launch import entry\nentry()\n"
    process = subprocess.Popen(
        [sys.executable, "-c", script, "simulate", str(trace), "--json", "--witness"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert process.stdout.read(10) == b'{\n  "insta'
    process.stdout.close()
    assert (process.wait(timeout=120), process.stderr.read()) == (0, b"")
