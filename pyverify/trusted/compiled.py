"""The array checker's loops run as written, plain Python over NumPy, unless a compiler is lent.

``pyverify verify`` runs the loops as they stand, so no compiler (numba, LLVM)
is in its trusted base, and nothing here imports one. A caller outside the
trusted code may lend one for a while (certify's own check before it writes a
certificate: :func:`pyverify.certify.accelerate.accelerated`, numba when
installed); the answers are the same, and ``tests/test_array_check.py`` runs
both forms.
"""

from __future__ import annotations

from typing import Callable

#: The compiler lent by :mod:`pyverify.certify.accelerate` (None: the loops run as written).
compiler: Callable[[Callable], Callable] | None = None
_compiled: dict[Callable, Callable] = {}
#: Small functions the loops call (a compiler must know them before it compiles a caller).
helpers: list[Callable] = []


def jitable(function: Callable) -> Callable:
    """Mark ``function`` as callable from a compiled loop; it stays a plain Python function."""
    helpers.append(function)
    return function


def kernel(function: Callable) -> Callable:
    """``function`` itself, or compiled by the lent :data:`compiler` (once per function)."""
    if compiler is None:
        return function
    if function not in _compiled:
        _compiled[function] = compiler(function)
    return _compiled[function]


__all__ = ["helpers", "jitable", "kernel"]
