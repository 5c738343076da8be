"""First references of (cache, block) pairs in one compiled pass, once numba is loaded anyway.

The numpy version (:func:`pyverify.engines.numpy_engine.first_references`)
makes several passes over position tables (an ``arange``, a scatter, a
``minimum.at``, a gather: 1.0 s at 20M references on this project's 2-core
machine, mostly page faults on the temporaries). One loop with a table of one
byte per (block, cache) does the same in a single pass. Importing numba costs
more than that pass saves on a small trace, so it runs only when numba is
already in the process (the big-file byte parser, :mod:`pyverify.inputs.columnar.byte_parse`,
loaded it) or not at all (:func:`compiled_first_references` returns ``None``).
"""

from __future__ import annotations

import numpy as np

from pyverify.inputs.columnar.compiled import kernel, numba_loaded

#: Largest (blocks x caches) byte table marked directly; past it, the numpy version (which sorts) decides.
TABLE_LIMIT = 1 << 31


def mark_first(keys, caches, fleet, seen, first):
    """``first[i]``: whether ``(keys[i], caches[i])`` is new (``caches`` empty: one pooled cache); ``seen``: zeroed scratch."""
    pooled = caches.size == 0
    for i in range(keys.size):
        key = keys[i] if pooled else keys[i] * fleet + caches[i]
        first[i] = seen[key] == 0
        seen[key] = 1


def compiled_first_references(
    dense: np.ndarray, universe: int, caches: np.ndarray | None, fleet: int
) -> np.ndarray | None:
    """First-reference marks of dense block ids (``0..universe-1``) per cache, or ``None`` when numba is not
    loaded (nor installed) or the table would be too big."""
    if not numba_loaded() or universe * max(fleet, 1) > TABLE_LIMIT:
        return None
    run = kernel(mark_first)
    if run is None:
        return None
    first = np.empty(dense.size, dtype=bool)
    seen = np.zeros(
        universe * (1 if caches is None else fleet), dtype=np.uint8
    )  # calloc'd: only touched pages are paid for
    no_caches = np.zeros(0, dtype=np.int64)
    run(
        np.ascontiguousarray(dense, dtype=np.int64),
        no_caches if caches is None else np.ascontiguousarray(caches, dtype=np.int64),
        int(fleet),
        seen,
        first,
    )
    return first


__all__ = ["TABLE_LIMIT", "compiled_first_references", "mark_first"]
