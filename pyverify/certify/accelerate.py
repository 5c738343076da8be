"""numba for the trusted array checker's loops, lent only to certify's own check.

The trusted checker (:mod:`pyverify.trusted.compiled`) runs its loops as plain
Python over NumPy arrays and imports no compiler. certify checks every
certificate with it before writing one; on a trace of millions of references
that check runs the same loops compiled by numba, lent here for the call
(:func:`accelerated`). ``tests/test_array_check.py`` holds both forms equal.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from pyverify.trusted import compiled

_registered = 0  # how many of compiled.helpers numba knows


def numba_compile(function: Callable) -> Callable:
    """``function`` compiled by numba (cached per user, never in the checkout), helpers first."""
    global _registered
    from numba import njit
    from numba.extending import register_jitable

    from pyverify.numba_cache import caching

    for helper in compiled.helpers[_registered:]:  # numba resolves a loop's calls as it compiles
        register_jitable(helper)
    _registered = len(compiled.helpers)
    return njit(cache=caching(), nogil=True)(function)


@contextmanager
def accelerated() -> Iterator[None]:
    """Within the block the trusted array loops run compiled by numba, when it is installed."""
    try:
        import numba  # noqa: F401
    except ImportError:  # pragma: no cover - numba is optional
        yield
        return
    before, compiled.compiler = compiled.compiler, numba_compile
    try:
        yield
    finally:
        compiled.compiler = before


__all__ = ["accelerated", "numba_compile"]
