"""The array checker's loops, compiled by numba only when asked (:func:`accelerated`).

The trusted checker's own copy of the lazy pattern of :mod:`pyverify.sim.compiled`
(it may not import the simulator). The loops are plain Python over numpy
arrays, and by default :func:`kernel` returns the function itself: ``pyverify
verify`` runs on NumPy alone, with no compiler (numba, LLVM) in its trusted
base. numba is an accelerator only: certify's own check before writing a
certificate turns it on, and tests hold both forms equal
(``tests/test_array_check.py``).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

_compiled: dict[Callable, Callable] = {}
_accelerate = False  # compile the loops with numba (see the module docstring)
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


@contextmanager
def accelerated() -> Iterator[None]:
    """Within the block, :func:`kernel` compiles the loops with numba when it is installed."""
    global _accelerate
    before, _accelerate = _accelerate, True
    try:
        yield
    finally:
        _accelerate = before


def kernel(function: Callable) -> Callable:
    """``function`` compiled by numba (cached per user, never in the checkout) inside
    :func:`accelerated`, else ``function`` itself (the default, and without numba)."""
    if not _accelerate:
        return function
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


__all__ = ["accelerated", "jitable", "kernel"]
