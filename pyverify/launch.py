"""The ``pyverify`` program's first lines: stop cleanly even before the CLI is imported.

Importing the CLI (argparse, numpy, the command modules) takes a moment, and
a Ctrl-C or SIGTERM that lands then used to end the process by the signal's
default action (status -15, nothing printed) or with Python's
``KeyboardInterrupt`` traceback. Nothing has been read or written at that
point, so these handlers say so in one line and exit with 130 or 143, as the
CLI's own handlers do once :func:`pyverify.cli.main` installs them (it
replaces these).
"""

from __future__ import annotations

import os
import signal
import sys


def _stopped_before_start(signum, frame) -> None:  # noqa: ARG001 (signal handler signature)
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    sys.stderr.write(f"pyverify: {word} before it started; nothing was read or written\n")
    sys.stderr.flush()
    os._exit(128 + signum)


#: mallopt(3) parameters (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4


def _keep_freed_memory() -> None:
    """Have glibc's malloc serve every block from its heap and keep what is freed there for the next one.

    By default each array over a few hundred KiB is a fresh ``mmap``, returned to the kernel when freed, so
    a run that makes and drops temporaries of the trace's size faults every page in again each time; on
    this project's 2-core VM a page fault is slow (about 2 microseconds), and a 20M-reference ``simulate``
    spent 0.45-0.77 s of 1.24-1.49 s in the kernel, against 0.31-0.44 s of 1.08-1.21 s with memory kept
    (glibc's ``MALLOC_MMAP_MAX_=0``, ``MALLOC_TRIM_THRESHOLD_`` past any heap; set here through
    ``mallopt``, which takes effect at once). A one-shot command loses nothing by not handing memory back
    before it exits. Elsewhere than glibc, or when the user tuned glibc's malloc (``GLIBC_TUNABLES`` or a
    ``MALLOC_*_`` variable), nothing is changed.
    """
    if not sys.platform.startswith("linux") or any(
        name == "GLIBC_TUNABLES" or (name.startswith("MALLOC_") and name.endswith("_"))
        for name in os.environ
    ):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(
            libc, "gnu_get_libc_version"
        ):  # musl and others: their own malloc, left alone
            return
        libc.mallopt(M_MMAP_MAX, 0)
        libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1)  # an int; the largest it takes
    except (OSError, AttributeError):
        return


def entry() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stopped_before_start)
    # NumPy asks Linux for transparent huge pages on every large array (madvise). Where the kernel then
    # compacts memory to find them (transparent_hugepage/defrag = madvise, a common default), a fresh array
    # can stall: on this project's 2-core machine touching 600 MB took 0.05-1.2 s of system time with them
    # and a steady 0.3 s without, and a 20M-reference simulate 2.4-3.4 s against 2.0-2.6 s. NumPy reads
    # this variable once, at import (its documented switch); a value the user set is kept.
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    # NumPy's OpenBLAS starts a thread per core when NumPy is imported, and those threads spin for a while:
    # 0.1 s of CPU on this machine, on the second core, for a library no command here calls (pyverify does no
    # linear algebra). One thread, unless the user chose.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _keep_freed_memory()
    try:
        from pyverify.cli import entry as run
    except MemoryError:  # the CLI's own handler is not there yet: the same one line
        sys.stderr.write(
            "pyverify: error: out of memory while starting (ulimit -v is below what Python and "
            "NumPy need); nothing was read or written\n"
        )
        os._exit(2)

    run()
