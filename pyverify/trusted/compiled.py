"""The array checker's loops, compiled by numba when it is installed (imported only when first used).

The trusted checker's own copy of the lazy pattern of :mod:`pyverify.sim.compiled`
(it may not import the simulator). The loops are plain Python over numpy
arrays: without numba :func:`kernel` returns the function itself, which
gives the same answers, slowly. Tests run both forms.
"""

from __future__ import annotations

from typing import Callable

_compiled: dict[Callable, Callable] = {}


def kernel(function: Callable) -> Callable:
    """``function`` compiled by numba (cached per user, never in the checkout), or ``function`` itself without numba."""
    if function not in _compiled:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - numba is optional
            _compiled[function] = function
        else:
            from pyverify.numba_cache import caching

            _compiled[function] = njit(cache=caching(), nogil=True)(function)
    return _compiled[function]


__all__ = ["kernel"]
