"""Compiled kernels for the exact LRU curve and for LRU/FIFO replay (numba).

* :mod:`pyverify.sim.kernels.stack_distance`: the histogram of LRU stack
  distances, pooled or per host, in one O(n log n) pass (Olken 1981's
  Fenwick-tree method, counting *dead* marks so that a first reference costs
  no tree walk at all).
* :mod:`pyverify.sim.kernels.replay`: LRU and FIFO at one capacity with
  longest-prefix hits, returning the witness (hits per request).

Each kernel has a pure-Python reference kept as the test oracle:
:func:`pyverify.sim.mrc.stack_distances_fenwick` (and the vectorised numpy
:func:`pyverify.sim.mrc.stack_distances`) for the curve,
``pyverify.sim.simulate._capacitated_hits`` for replay. ``tests/test_kernels.py``
checks every kernel against them on Hypothesis-generated traces, and against
libCacheSim.

Why numba (measured on this project's 2-core x86_64 machine, 5M references of
``bench/synthetic.py``)
-----------------------------------------------------------------------------

* Speed: a Fenwick pass compiled by numba runs at ~20M refs/s against 0.7M for
  the numpy wavelet construction that :mod:`pyverify.sim.mrc` used before;
  the dead-mark pass here runs at ~54M refs/s. A hand-written C extension
  would run the same loop at the same speed: the work is memory-bound tree
  walks, not interpreter overhead.
* Installation without a compiler: numba and llvmlite ship binary wheels on
  PyPI (checked with ``pip download --only-binary=:all:`` for numba 0.68.1:
  manylinux x86_64 and aarch64; macOS arm64 and Windows per numba's
  installation guide), 3.8 MB + 58 MB, installed in ~5 s. A C extension of our
  own would need either a compiler on every user's machine (``pip install -e``
  builds from source) or a wheel-building pipeline for every platform; Cython
  and pybind11 have the same problem.
* Start-up: ``import numba`` costs ~0.25 s and compiling these kernels ~1-2 s
  the first time. Kernels are compiled with ``cache=True`` (later runs load
  machine code from numba's cache, ``__pycache__`` or ``~/.cache/numba`` when
  the package directory is read-only), and numba is imported only inside the
  functions that need a kernel, so ``pyverify --help`` and commands that
  never compute a curve or a capacitated run do not load it.
  :func:`use_kernels` also leaves small inputs (below :data:`MIN_REFERENCES`
  references) to the Python code, for which compiling would cost more than it
  saves.
* Fallback: where numba cannot be imported (a platform without its wheels),
  :func:`available` is false and callers use the numpy/Python implementations:
  the same results, slower.
"""

from __future__ import annotations

from functools import lru_cache

#: Below this many block references the pure-Python paths are used: they take
#: milliseconds there, and loading numba would cost more.
MIN_REFERENCES = 20_000


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether numba can be imported here (imports it: call only when a kernel is wanted)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def use_kernels(references: int) -> bool:
    """Whether a computation over ``references`` block references should use a kernel."""
    return references >= MIN_REFERENCES and available()


__all__ = ["MIN_REFERENCES", "available", "use_kernels"]
