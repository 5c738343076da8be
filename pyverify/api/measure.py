"""Measuring a run: its block and token hits over the requests a window measures, and the two
optima at the same capacity to measure it against (``simulate``'s report, ``--optimum``).

What each guarantees: :func:`measured` counts exactly the hits given, over the requests from the
window's first on (the warm-up's hits are replayed but not counted), weighing each block by its
tokens when weights are given; :func:`optimum_hits` gives the hits per request of Belady's MIN
(bypass: no demand cache of that capacity hits more) and of the forced-admission optimum (no
cache that admits what it fetches hits more), on the same caches. The counters are imported by
the call that uses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

    from pyverify.sim.accounting import Tally
    from pyverify.sim.tokens import TokenWeights
    from pyverify.sim.window import Window

__all__ = ["measured", "measured_offsets", "optimum_hits"]


def measured(
    chains: Sequence[Sequence[int]],
    hit_blocks: Sequence[int],
    weights: TokenWeights | None = None,
    window: Window | None = None,
) -> Tally:
    """Block and token hits of a run (``hit_blocks``: per request, in trace order) over the
    window's requests (default: every request)."""
    from pyverify.sim.accounting import tally
    from pyverify.sim.window import WHOLE_TRACE

    return tally(chains, hit_blocks, weights, window if window is not None else WHOLE_TRACE)


def measured_offsets(
    offsets: np.ndarray,
    hit_blocks: Sequence[int] | np.ndarray,
    weights: TokenWeights | None = None,
    window: Window | None = None,
) -> Tally:
    """:func:`measured` for a trace held as arrays, given by its chain offsets."""
    from pyverify.sim.accounting import tally_offsets
    from pyverify.sim.window import WHOLE_TRACE

    return tally_offsets(
        offsets, hit_blocks, weights, window if window is not None else WHOLE_TRACE
    )


def optimum_hits(
    ids: np.ndarray, lengths: np.ndarray, cache_of, capacity: int
) -> dict[str, list[int]]:
    """Hits per request of the two optima with ``capacity`` blocks per cache (``cache_of``: the
    cache of each request, None for one pooled cache): ``{"forced": ..., "bypass": ...}``."""
    from pyverify.optimal.forced import optimum_hits as hits_of

    return hits_of(ids, lengths, cache_of, capacity)
