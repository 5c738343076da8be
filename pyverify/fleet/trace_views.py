"""The forms of one :class:`~pyverify.inputs.columnar.ColumnarTrace` that the replay's loops read.

A replay takes the trace as the readers give it (one int64 array of block ids, offsets, optional
per-request columns). The Python event loop indexes chains request by request and the compiled one
wants dense block ids; ``pyverify replay --compare`` runs up to 24 replays of one trace, so each such
form is made here, once per trace, on first use, and kept while the trace lives
(:func:`views_of`): no run flattens or rebuilds the trace.
"""

from __future__ import annotations

import weakref
from functools import cached_property

import numpy as np

from pyverify.inputs.columnar import ColumnarTrace


class TraceViews:
    """Lazily made, cached forms of ``trace`` (see the module docstring)."""

    def __init__(self, trace: ColumnarTrace) -> None:
        # Weak: these views are the value of the trace's entry in _VIEWS, which must not keep it alive.
        self._trace = weakref.ref(trace)

    @property
    def trace(self) -> ColumnarTrace:
        return self._trace()

    @cached_property
    def chains(self) -> tuple[tuple[int, ...], ...]:
        """Every request's chain of block ids as a tuple: the Python event loop's form."""
        return tuple(self.trace.chains())

    @cached_property
    def dense(self) -> tuple[np.ndarray, int]:
        """``(ids, universe)``: the block ids renumbered into ``[0, universe)`` for the compiled loops'
        tables (:func:`pyverify.cache.arrays.dense_ids`); request r's are ``ids[offsets[r]:offsets[r + 1]]``."""
        from pyverify.cache.arrays import dense_ids

        return dense_ids(self.trace.ids)

    @cached_property
    def references(self) -> int:
        return self.trace.n_references

    @cached_property
    def arrival_ms(self) -> list[float | None] | None:
        """Each request's timestamp in ms (``None`` where it gives none; ``None``: no request does)."""
        return _per_request(self.trace.timestamps, whole_as_int=True)

    @cached_property
    def input_tokens(self) -> list[int | None] | None:
        return _per_request(self.trace.input_tokens)

    @cached_property
    def output_tokens(self) -> list[int | None] | None:
        return _per_request(self.trace.output_tokens)

    @cached_property
    def prompt_tokens(self) -> list[int]:
        """Each prompt's length in tokens as the engine evictions read it: its ``input_tokens`` (when
        given and not 0), else its whole blocks of the trace's block size; without a block size, one
        unit per block (as simulate takes it)."""
        lengths = self.trace.lengths.tolist()
        size = self.trace.block_size_tokens
        if size is None or self.input_tokens is None:
            return [length * (size or 1) for length in lengths]
        return [tokens or length * size for tokens, length in zip(self.input_tokens, lengths)]


def _per_request(column: np.ndarray | None, whole_as_int: bool = False) -> list | None:
    """A float64 column (NaN: not given) as Python values, as the instance readers give them:
    ``None`` where not given, token counts as ints, and times as ints when whole."""
    if column is None:
        return None
    return [
        None
        if value != value
        else (int(value) if not whole_as_int or value.is_integer() else value)
        for value in column.tolist()
    ]


_VIEWS: weakref.WeakKeyDictionary[ColumnarTrace, TraceViews] = weakref.WeakKeyDictionary()


def views_of(trace: ColumnarTrace) -> TraceViews:
    """``trace``'s views, the same object for every run of the same trace."""
    views = _VIEWS.get(trace)
    if views is None:
        views = _VIEWS[trace] = TraceViews(trace)
    return views


__all__ = ["TraceViews", "views_of"]
