"""Where numba keeps the compiled kernels' machine code: a per-user folder, never the checkout.

The kernels are compiled with ``cache=True`` so that later runs load their
machine code instead of compiling again (:mod:`pyverify.sim.kernels`). Left
alone, numba writes that cache into ``__pycache__`` beside the source, that
is into the pyverify checkout or the installed package. :func:`caching` runs
before a kernel is compiled and, unless the user has set ``NUMBA_CACHE_DIR``
themselves, sets it to ``$XDG_CACHE_HOME/pyverify/numba`` (or
``~/.cache/pyverify/numba``). If that folder cannot be created or written,
the kernels are compiled without a cache (``cache=False``), because numba
would otherwise fall back to ``__pycache__``: slower start-ups, same results.

numba reads ``NUMBA_CACHE_DIR`` when it is imported; if it was imported
already (by the user's own code, say), its configuration is updated too.
"""

from __future__ import annotations

import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pyverify/numba``, or ``~/.cache/pyverify/numba`` (the XDG base directory default)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG specification: a relative path is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyverify" / "numba"


def writable(folder: Path) -> bool:
    """Whether ``folder`` exists or can be created, and a file can be written in it (numba's own test)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


@lru_cache(maxsize=1)
def caching() -> bool:
    """Point numba's cache at a per-user folder (unless ``NUMBA_CACHE_DIR`` is set); whether to cache.

    The kernel modules call it before they compile anything and pass the
    answer as ``cache=``: False when no writable folder is available."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    folder = Path(chosen) if chosen else user_cache_dir()
    if not writable(folder):
        return False
    if not chosen:
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
        config = sys.modules.get("numba.core.config")
        if config is not None:  # numba was imported before us: it has read the environment already
            config.CACHE_DIR = str(folder)
    return True


__all__ = ["caching", "user_cache_dir", "writable"]
