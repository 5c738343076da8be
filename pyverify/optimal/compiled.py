"""Optional numba compilation of the few plain loops that need it, imported only when first used.

numba (a dependency where it has wheels, :mod:`pyverify.sim.kernels`) takes about half a second to import, so modules
that every command imports must not import it at load time. :func:`kernel`
returns the compiled function, or ``None`` when numba is not installed (the
caller then uses its numpy or pure-Python version; tests check they agree).
"""

from __future__ import annotations

from typing import Callable

_compiled: dict[Callable, Callable | None] = {}


def kernel(function: Callable) -> Callable | None:
    if function not in _compiled:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - numba is optional
            _compiled[function] = None
        else:
            from pyverify.numba_cache import caching

            _compiled[function] = njit(cache=caching(), nogil=True)(
                function
            )  # cached per user, never in the checkout
    return _compiled[function]
