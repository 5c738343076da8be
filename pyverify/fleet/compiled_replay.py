"""The compiled replay of ``pyverify replay``: the configurations whose run needs no per-block Python.

Supported today (:func:`unsupported` names why any other is not): no timing,
the GPU tier alone, ``lru``, ``fifo``, ``leaf-lru`` or an engine's eviction (``vllm``, ``sglang``,
``sglang-fifo``; or no capacity), and a
router whose picks do not depend on cache state or load
(:meth:`pyverify.fleet.routers.Router.fixed_picks`: ``round-robin``,
``random``). Without timing a replay serves each host's requests one at a
time in file order, so it is ``simulate --model per-host`` on the picked
routing (tested in ``tests/test_replay.py``), and the hits come from the
compiled kernels that simulate uses (LRU/FIFO: :mod:`pyverify.sim.kernels.replay`; leaf-lru:
:mod:`pyverify.sim.kernels.tree_replay`; the engines: :func:`pyverify.sim.simulate.engine_hits`),
on flat arrays (chains renumbered to dense ids). Without a capacity nothing
is evicted, which that kernel does with a capacity of every distinct block.

The Python event loop (:func:`pyverify.fleet.replay.replay_python`) stays
the oracle: ``tests/test_replay_fast.py`` checks every field equal.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pyverify.fleet.routers import Router
from pyverify.sim.simulate import ENGINE_EVICTIONS, FIFO, LEAF_LRU, LRU, engine_hits


#: The GPU evictions the compiled replay runs: simulate's compiled kernels for them give replay's hits.
COMPILED_EVICTIONS = (LRU, FIFO, LEAF_LRU, *ENGINE_EVICTIONS)


def unsupported(router: Router, capacity: int | None, eviction: str, pool_capacity, host_capacity, timed: bool) -> str | None:
    """Why the compiled replay cannot run this configuration, or ``None`` when it can."""
    if timed:
        return "timed runs take the Python event loop (use --no-timing)"
    if pool_capacity is not False or host_capacity is not False:
        return "the host-DRAM and pool tiers take the Python event loop"
    if capacity is None and eviction in ENGINE_EVICTIONS:
        return f"eviction {eviction} needs a capacity"  # the event loop words the refusal
    if capacity is not None and eviction not in COMPILED_EVICTIONS:
        return f"eviction {eviction} takes the Python event loop (compiled: {', '.join(COMPILED_EVICTIONS)})"
    if router.name not in ("round-robin", "random"):
        return f"router {router.name} reads cache state or load at each arrival (compiled: round-robin, random)"
    return None


def replay_compiled(chains: Sequence[Sequence[int]], router: Router, capacity: int | None, eviction: str, progress,
                    prompt_tokens: Sequence[int] | None = None, block_size: int | None = None, page_size: int | None = None):
    """The run :func:`pyverify.fleet.replay.replay_python` gives for a configuration :func:`unsupported` accepts;
    ``None`` when a block id does not fit in 64 bits (nothing consumed from the router: a fresh one is asked)."""
    from pyverify.fleet.replay import HostStats, ReplayRun
    from pyverify.sim.kernels.replay import flat_requests, link_array, replay
    from pyverify.sim.kernels.tree_replay import tree_hits

    n, fleet = len(chains), router.fleet
    picks = router.fixed_picks(n)
    flat = flat_requests(chains, picks)
    if flat is None:  # block ids beyond 64 bits fit no array
        return None
    ids, universe, starts, order, bounds = flat
    limit = universe if capacity is None else capacity  # no capacity: room for every distinct block, nothing evicted
    unscheduled: list[int] = []
    if eviction in ENGINE_EVICTIONS:  # the engine's own requests, one at a time per host: simulate's engine runs
        engine_run, unscheduled = engine_hits(chains, picks, capacity, eviction, prompt_tokens, block_size, page_size)
        hits = np.asarray(engine_run, dtype=np.int64)
    elif eviction == LEAF_LRU and capacity is not None:
        hits = np.asarray(tree_hits(chains, picks, capacity, eviction), dtype=np.int64)
    else:
        hits = replay(ids, starts, order, bounds, link_array(universe), max(limit, 1), eviction == LRU or capacity is None)
    lengths = np.diff(starts)
    host = np.asarray(picks, dtype=np.int64)
    requests = np.bincount(host, minlength=fleet)
    gpu = np.bincount(host, weights=hits, minlength=fleet).astype(np.int64)
    recomputed = np.bincount(host, weights=lengths - hits, minlength=fleet).astype(np.int64)
    stats = [HostStats(requests=int(requests[h]), gpu_hit_blocks=int(gpu[h]), recomputed_blocks=int(recomputed[h]))
             for h in range(fleet)]
    progress(n)
    zeros = [0] * n
    return ReplayRun(router.name, host.tolist(), hits.tolist(), zeros, list(zeros), int(lengths.sum()), None, None, None,
                     stats, False, False, unscheduled=list(unscheduled))
