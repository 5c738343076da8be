"""The program's first lines: the memory settings it makes for itself, and leaves alone when the user made them."""

from __future__ import annotations

import ctypes
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


@pytest.mark.parametrize("variable", ["GLIBC_TUNABLES", "MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_"])
def test_a_users_own_malloc_settings_are_left_alone(libc, monkeypatch, variable):
    monkeypatch.setenv(variable, "glibc.malloc.mmap_max=4" if variable == "GLIBC_TUNABLES" else "4")
    launch._keep_freed_memory()
    assert libc.calls == []


def test_nothing_is_changed_off_glibc(libc, monkeypatch):
    other = RecordingLibc(glibc=False)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: other)
    launch._keep_freed_memory()
    assert other.calls == []


@pytest.mark.parametrize(("variable", "ours", "given"), [("NUMPY_MADVISE_HUGEPAGE", "0", None), ("NUMPY_MADVISE_HUGEPAGE", "0", "1"),
                                                     ("OPENBLAS_NUM_THREADS", "1", None), ("OPENBLAS_NUM_THREADS", "1", "4")])
def test_numpys_settings_are_the_programs_unless_the_user_set_them(variable, ours, given):
    # Huge pages off, and one OpenBLAS thread: both read by NumPy when it is imported, so set before the CLI loads.
    env = {k: v for k, v in os.environ.items() if k != variable}
    if given is not None:
        env[variable] = given
    code = ("import sys; from pyverify import launch, cli; "
            f"cli.entry = lambda: print(__import__('os').environ[{variable!r}], 'numpy' in sys.modules); launch.entry()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, check=True).stdout
    assert out.split() == [ours if given is None else given, "False"]  # set, and before NumPy was imported
