"""The Lean child process: isolated from the project, and never outliving its parent.

After a SIGKILL of `pyverify audit` or `pyverify lean check`, the Lean child
used to keep running (orphans in 8 of 8 kills). It now asks the kernel to be
killed with its parent (PR_SET_PDEATHSIG) and exits at once if the parent is
already gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyverify.lean import runtime

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def lean_children_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` and that run the Lean child script."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = next(
            (int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), None
        )
        if ppid == pid and b"lean_main" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = next(
            line
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("State:")
        )
    except (OSError, StopIteration):
        return False
    return "Z" not in state  # a zombie has exited


def test_a_killed_check_leaves_no_lean_running(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-m", "pyverify.lean.command", "check", "--backend", "wheel"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        children: list[int] = []
        while time.monotonic() < deadline and not children:
            children = lean_children_of(parent.pid)
            time.sleep(0.02)
        assert children, "no Lean child seen within 60 s"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(child) for child in children):
            time.sleep(0.05)
        assert not any(alive(child) for child in children), (
            "the Lean child outlived its killed parent"
        )
    finally:
        if parent.poll() is None:
            parent.kill()


def test_the_child_environment_is_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent/evil.so")
    monkeypatch.setenv("PYTHONPATH", "/nonexistent")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = runtime.child_environment({"LEAN_PATH": "/x"})
    assert "LD_PRELOAD" not in env and "PYTHONPATH" not in env
    assert env["LEAN_PATH"] == "/x" and env["PATH"] == os.defpath and env["LANG"] == "C.UTF-8"
    assert set(env) <= {"LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "PATH", "LEAN_PATH"}
    # and a run with LD_PRELOAD set in the parent still works (the child never sees it)
    identity = runtime.runtime_identity(runtime.find_library())
    assert identity.version == runtime.EXPECTED_VERSION


def test_a_full_build_folder_is_a_user_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lean failing to write an .olean (a full or read-only disk) used to be
    reported as "FAILED: module ..." (exit 1) as if a proof failed, and left
    the half-built folder behind."""
    from pyverify.errors import UserError
    from pyverify.lean import runner

    real = runtime.run_lean
    calls = {"n": 0}

    def full_disk_after_two_modules(library, args, **kwargs):
        if "-o" in args:
            calls["n"] += 1
            if calls["n"] > 2:
                olean = args[args.index("-o") + 1]
                return subprocess.CompletedProcess(
                    args, 1, "", f"failed to write '{olean}': failed to create file\n"
                )
        return real(library, args, **kwargs)

    monkeypatch.setattr(runtime, "run_lean", full_disk_after_two_modules)
    build = tmp_path / "build"
    with pytest.raises(
        UserError, match=r"cannot write the compiled module .*not a failure of the proofs"
    ):
        runner.check(REPO / "lean", backend="wheel", build_dir=build, emit=lambda line: None)
    assert not build.exists(), "the half-built folder was left behind"
