"""Where numba keeps the compiled kernels' machine code: see :mod:`pyverify.numba_cache`.

The module moved below every layer so that the input readers' compiled scans
(:mod:`pyverify.inputs.columnar.compiled`) share it; this name stays for the
simulator's kernels.
"""

from __future__ import annotations

from pyverify.numba_cache import caching, user_cache_dir, writable

__all__ = ["caching", "user_cache_dir", "writable"]
