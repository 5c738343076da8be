"""The array checker's loops, compiled by numba when it is installed (imported only when first used).

The trusted checker's own copy of the lazy pattern of :mod:`pyverify.sim.compiled`
(it may not import the simulator). The loops are plain Python over numpy
arrays: without numba :func:`kernel` returns the function itself, which
gives the same answers, slowly. Tests run both forms.
"""

from __future__ import annotations

from typing import Callable

_compiled: dict[Callable, Callable] = {}
_helpers: list[Callable] = []  # small functions the loops call; numba must know them before it compiles a caller
_registered = 0  # how many of _helpers numba knows


def jitable(function: Callable) -> Callable:
    """Mark ``function`` as callable from a compiled loop; it stays a plain Python function.

    numba resolves a loop's calls when it compiles the loop, so the helpers are
    registered with ``numba.extending.register_jitable`` (which keeps the Python
    function as it is) on the first compilation, not at import.
    """
    _helpers.append(function)
    return function


def kernel(function: Callable) -> Callable:
    """``function`` compiled by numba (cached per user, never in the checkout), or ``function`` itself without numba."""
    if function not in _compiled:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - numba is optional
            _compiled[function] = function
        else:
            from pyverify.numba_cache import caching

            _register_helpers()
            _compiled[function] = njit(cache=caching(), nogil=True)(function)
    return _compiled[function]



def _register_helpers() -> None:
    """Tell numba of the helpers marked since the last compilation (a module imported later may add some)."""
    global _registered
    from numba.extending import register_jitable

    for helper in _helpers[_registered:]:
        register_jitable(helper)
    _registered = len(_helpers)


__all__ = ["jitable", "kernel"]
