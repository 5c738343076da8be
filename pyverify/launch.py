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


def entry() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stopped_before_start)
    # NumPy asks Linux for transparent huge pages on every large array (madvise). Where the kernel then
    # compacts memory to find them (transparent_hugepage/defrag = madvise, a common default), a fresh array
    # can stall: on this project's 2-core machine touching 600 MB took 0.05-1.2 s of system time with them
    # and a steady 0.3 s without, and a 20M-reference simulate 2.4-3.4 s against 2.0-2.6 s. NumPy reads
    # this variable once, at import (its documented switch); a value the user set is kept.
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    from pyverify.cli import entry as run

    run()
