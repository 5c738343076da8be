"""Prefix closure, vectorised: does every block id keep one parent throughout?

The same rule as :class:`pyverify.inputs.model.PrefixClosure`, checked on the
flat arrays of a :class:`~pyverify.inputs.columnar.trace.ColumnarTrace`
without a Python object per block; :func:`first_violation` names the first
offending reference with the strict checker's words.
"""

from __future__ import annotations

import numpy as np

from pyverify.inputs.columnar.compiled import MIN_REFERENCES, compiled_closed, worth_it
from pyverify.inputs.model import ROOT
from pyverify.threads import on_cores


def parents_of(ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each reference's parent: the id before it in its chain, or ``ROOT`` for a chain's first block."""
    parents = np.empty_like(ids)
    if ids.size:
        parents[1:] = ids[:-1]
        parents[offsets[:-1][offsets[:-1] < ids.size]] = ROOT
    return parents


def is_prefix_closed(ids: np.ndarray, offsets: np.ndarray) -> bool:
    """Whether every block id keeps one parent throughout (see :class:`pyverify.inputs.model.PrefixClosure`).

    Dense ids (Mooncake's) use a table indexed by id: write every reference's
    parent at its id, read back, compare. Whichever write wins, a mismatch
    appears exactly when some id has two parents. A reference's parent is the
    id before it (the root at a chain start), so the writes take the trace
    itself as values (``table[ids[1:]] = ids[:-1]``, then the root at every
    chain start) and no array of parents is made; the read-back goes chunk by
    chunk, so its temporaries stay small next to the trace. Sparse ids (64-bit
    hashes) are sorted instead.
    """
    if ids.size == 0:
        return True
    high = int(ids.max())
    if high >= 2 * ids.size + 1024:
        return first_violation(ids, offsets) is None
    if worth_it(ids.size, MIN_REFERENCES):  # one compiled pass (pyverify.inputs.columnar.compiled)
        closed = compiled_closed(ids, offsets, high)
        if closed is not None:
            return closed
    starts = offsets[:-1][
        offsets[:-1] < ids.size
    ]  # chain starts (a chain of no blocks starts nowhere)
    table = np.empty(high + 1, dtype=np.int64)
    table[ids[1:]] = ids[:-1]
    table[ids[starts]] = ROOT

    def agree(begin: int) -> bool:
        end = min(begin + CHUNK, ids.size)
        return all(
            _agree_at(table, ids, starts, step, min(step + STEP, end))
            for step in range(begin, end, STEP)
        )

    # numpy lets go of the GIL in the gathers and compares, so the chunks are read back on every core
    # (at 20M references the read-back took 0.13 s on one and 0.08 s on two).
    return all(on_cores(agree, range(0, ids.size, CHUNK)))


def _agree_at(table: np.ndarray, ids: np.ndarray, starts: np.ndarray, begin: int, end: int) -> bool:
    """Whether every reference in ``begin:end`` finds its own parent written at its id in ``table``."""
    written = table[ids[begin:end]]
    agrees = np.empty(
        end - begin, dtype=bool
    )  # agrees[k]: the parent written at ids[begin + k] is this reference's
    agrees[0] = written[0] == (ids[begin - 1] if begin else ROOT)
    np.equal(written[1:], ids[begin : end - 1], out=agrees[1:])
    here = starts[np.searchsorted(starts, begin) : np.searchsorted(starts, end)] - begin
    agrees[here] = written[here] == ROOT
    return bool(agrees.all())


#: References per step of a chunk's read-back, so that its temporaries stay in cache (at 20M references the
#: check took 0.11 s in steps of 64Ki against 0.12 s in whole chunks).
STEP = 1 << 16


#: References per chunk of the closure check's read-back (a few, so that the cores share them).
CHUNK = 1 << 22


def first_violation(
    ids: np.ndarray, offsets: np.ndarray, parents: np.ndarray | None = None
) -> tuple[int, int, str] | None:
    """``(request, position, reason)`` of the first reference whose parent differs from its id's first parent.

    The same violation, with the same words, as :class:`pyverify.inputs.model.PrefixClosure`
    finds reading the trace in order: a stable sort by id puts each id's
    first reference first in its run.
    """
    if ids.size == 0:
        return None
    parents = parents_of(ids, offsets) if parents is None else parents
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    sorted_parents = parents[order]
    run_start = np.empty(ids.size, dtype=bool)
    run_start[0] = True
    np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=run_start[1:])
    first_parent = sorted_parents[run_start][np.cumsum(run_start) - 1]
    bad = sorted_parents != first_parent
    if not bad.any():
        return None
    where = np.flatnonzero(bad)
    at_sorted = where[np.argmin(order[where])]
    at = int(order[at_sorted])
    request = int(np.searchsorted(offsets, at, side="right") - 1)
    known, now = int(first_parent[at_sorted]), int(parents[at])
    before = "the root" if known == ROOT else f"block {known}"
    here = "the root" if now == ROOT else f"block {now}"
    return (
        request,
        at - int(offsets[request]),
        f"not prefix-closed: block {int(ids[at])} follows {here} here but followed {before} earlier",
    )
