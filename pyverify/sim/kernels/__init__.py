"""Compiled kernels for the exact LRU curve and for LRU/FIFO replay (numba).

* :mod:`pyverify.sim.kernels.stack_distance`: the histogram of LRU stack
  distances, pooled or per host, in one O(n log n) pass (Olken 1981's
  Fenwick-tree method, counting *dead* marks so that a first reference costs
  no tree walk at all).
* :mod:`pyverify.cache.lru_kernel`: LRU and FIFO at one capacity with
  longest-prefix hits, returning the witness (hits per request).
* :mod:`pyverify.cache.tree_kernel`: the eviction orders that keep the
  cache a prefix tree, leaf-first LRU (``leaf-lru``) and vLLM's free queue
  (``tail-first``), at one capacity, returning the witness.
* :mod:`pyverify.cache.vllm_kernel`: vLLM 0.33's block pool
  (``--eviction vllm``), move for move, returning hits per request.
* :mod:`pyverify.cache.sglang_kernel`: SGLang 0.5.23's radix cache
  (``--eviction sglang`` / ``sglang-fifo``), move for move, returning hits
  per request.

Each kernel has a pure-Python reference kept as the test oracle:
:func:`pyverify.sim.mrc.stack_distances_fenwick` (and the vectorised numpy
:func:`pyverify.sim.mrc.stack_distances`) for the curve,
``pyverify.sim.simulate._capacitated_hits`` (with the cache classes of
:mod:`pyverify.cache.lru` and :mod:`pyverify.cache.tree`) for replay,
:mod:`pyverify.cache.vllm` for vLLM's pool, :mod:`pyverify.cache.sglang`
for SGLang's radix cache. ``tests/test_kernels.py`` (and
``tests/test_sglang_kernel.py``) check every kernel against them on
Hypothesis-generated traces, and against libCacheSim.

Why numba (measured on this project's 2-core x86_64 machine, shared with other jobs)
-----------------------------------------------------------------------------------

* Speed: the numpy wavelet construction :mod:`pyverify.sim.mrc` used before
  runs at 0.3-0.7M refs/s; a plain Fenwick pass compiled by numba at 7-20M;
  the dead-mark pass here is 2-6x faster again (``bench/curves.py``, ratios
  in one run). We did not build a C extension to compare: it would run the
  same memory-bound tree walks, so we expect no more than a small constant
  gain, not worth what it costs to install (next point).
* Installation without a compiler: numba and llvmlite ship binary wheels on
  PyPI (checked with ``pip download --only-binary=:all:`` for numba 0.68.1:
  manylinux x86_64 and aarch64; macOS arm64 and Windows per numba's
  installation guide), 3.8 MB + 58 MB, installed in ~5 s. A C extension of our
  own would need either a compiler on every user's machine (``pip install -e``
  builds from source) or a wheel-building pipeline for every platform; Cython
  and pybind11 have the same problem.
* Start-up: ``import numba`` plus loading the kernels' machine code took
  ~2.4 s here (with the machine's load at 9 on 2 cores; less when idle), and
  compiling them ~5 s the first time. Kernels are compiled with numba's
  cache (later runs load their machine code), kept in a per-user folder,
  ``$XDG_CACHE_HOME/pyverify/numba`` or ``~/.cache/pyverify/numba`` unless
  ``NUMBA_CACHE_DIR`` says otherwise, never in the checkout; without a
  writable folder they are compiled uncached (:mod:`pyverify.sim.numba_cache`);
  and numba is imported only inside the functions that need a
  kernel, so ``pyverify --help`` and commands that never compute a curve or a
  capacitated run do not load it. Under the same load the Python replay ran
  at 1-2.5M refs/s and the numpy curve at 0.3-0.7M, so the start-up is worth
  ~4M references of replay or ~1M of the curve: :func:`use_kernels` leaves
  smaller inputs to the Python code, unless a kernel is already loaded in
  this process (then any input of :data:`MIN_REFERENCES` or more uses it).
* Fallback: ``pyproject.toml`` requires numba only on those platforms (Linux
  x86_64/aarch64, macOS arm64, Windows x86_64), so that no install falls back
  to building numba from source. Where numba cannot be imported,
  :func:`available` is false and callers use the numpy/Python
  implementations: the same results, slower.
"""

from __future__ import annotations

import sys
from functools import lru_cache

#: Below this many block references the Python code is always used: it takes
#: milliseconds there.
MIN_REFERENCES = 20_000
#: Break-even sizes of one call, start-up included (see above).
CURVE_BREAK_EVEN = 1_000_000
REPLAY_BREAK_EVEN = 4_000_000
#: The Python leaf-lru and tail-first caches are slower than the OrderedDict LRU,
#: so their kernel repays its start-up sooner.
TREE_REPLAY_BREAK_EVEN = 1_000_000
#: The Python radix cache runs at ~2M refs/s while nothing is evicted, but
#: heaps every evictable leaf again on each eviction, so under pressure it
#: slows by 10-1000x (183 s for bench/synthetic.py's 1M references in a pool
#: of 100,000 tokens, against 0.07 s compiled): the kernel repays its start-up
#: far sooner there, and costs at most that start-up where it does not.
SGLANG_BREAK_EVEN = 250_000
#: The kernel modules: once one is imported, the start-up is paid.
_KERNEL_MODULES = (
    "pyverify.cache.lru_kernel",
    "pyverify.sim.kernels.stack_distance",
    "pyverify.cache.tree_kernel",
    "pyverify.cache.vllm_kernel",
    "pyverify.cache.sglang_kernel",
)


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether numba can be imported here (imports it: call only when a kernel is wanted)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def use_kernels(references: int, break_even: int) -> bool:
    """Whether a computation over ``references`` block references should use a kernel.

    ``break_even``: the size at which one call repays the start-up
    (:data:`CURVE_BREAK_EVEN`, :data:`REPLAY_BREAK_EVEN`). The results are
    the same either way; only the time differs.
    """
    if references < MIN_REFERENCES:
        return False
    if references < break_even and not any(name in sys.modules for name in _KERNEL_MODULES):
        return False
    return available()


__all__ = [
    "CURVE_BREAK_EVEN",
    "MIN_REFERENCES",
    "REPLAY_BREAK_EVEN",
    "SGLANG_BREAK_EVEN",
    "TREE_REPLAY_BREAK_EVEN",
    "available",
    "use_kernels",
]
