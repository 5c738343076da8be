"""The compiled replay of ``pyverify replay``: the configurations whose run needs no per-block Python.

Two compiled paths (:func:`unsupported` names, in one line, why any other configuration is not compiled):

* the compiled event loop (:mod:`pyverify.fleet.kernel`): timed or untimed runs, GPU caches
  ``lru``, ``fifo`` or without capacity, optional host-DRAM tiers and pool (capacity or unlimited), and every
  router but ``dynamo`` and ``sglang`` (``round-robin`` and ``random`` on their precomputed picks, :meth:`pyverify.fleet.routers.Router.fixed_picks`;
  ``least-loaded``, ``prefix-affinity`` and ``kv-aware`` computed in the loop from load, routed counts and
  each host's prefix hits, ties as :meth:`~pyverify.fleet.routers.Router.pick`). Pins, ``fits``, queues,
  finishes and every float follow :func:`pyverify.fleet.replay.replay_python` operation for operation.
* untimed, GPU tier alone, round-robin or random: a replay then serves each host's requests one at a time
  in file order, so it is ``simulate --model per-host`` on the picked routing (``tests/test_replay.py``),
  and the hits come from the kernels simulate uses (LRU/FIFO: :mod:`pyverify.cache.lru_kernel`; leaf-lru:
  :mod:`pyverify.cache.tree_kernel`; the engines: :func:`pyverify.sim.simulate.engine_hits`).
  Without a capacity nothing is evicted, which that kernel does with a capacity of every distinct block.

Left to the Python loop: every timed run of the ``steps`` service model (the default; the compiled event loop
runs ``streams``, :mod:`pyverify.fleet.service`); the ``dynamo`` and ``sglang`` routers; and ``leaf-lru`` and the engine evictions (``vllm``, ``sglang``, ``sglang-fifo``) when
timed, with a lower tier, or under a router that reads cache state or load.

Both run on flat arrays (chains renumbered to dense ids). The Python event loop
(:func:`pyverify.fleet.replay.replay_python`) stays the oracle: ``tests/test_replay_fast.py`` and
``tests/test_replay_timed_fast.py`` check every field equal.
"""

from __future__ import annotations

import numpy as np

from pyverify.fleet import run as run_records
from pyverify.fleet.routers import Router
from pyverify.fleet.run import HostStats, ReplayRun, ReplaySettings
from pyverify.fleet.service import STEPS, ServiceModel
from pyverify.fleet.trace_views import views_of
from pyverify.inputs.columnar import ColumnarTrace
from pyverify.sim.simulate import (
    ENGINE_EVICTIONS,
    FIFO,
    LEAF_LRU,
    LRU,
    _capacitated_hits,
    engine_hits,
)


#: The GPU evictions the compiled replay runs: simulate's compiled kernels for them give replay's hits.
COMPILED_EVICTIONS = (LRU, FIFO, LEAF_LRU, *ENGINE_EVICTIONS)


#: Routers the compiled event loop does not run: they keep per-request books (routers.Router.finished).
PYTHON_ROUTERS = ("dynamo", "sglang")

#: Routers whose picks are known before the run (Router.fixed_picks).
FIXED_ROUTERS = ("round-robin", "random")

#: What the compiled event loop (:mod:`pyverify.fleet.kernel`) runs: timed runs, lower tiers, any router.
EVENT_LOOP_EVICTIONS = (LRU, FIFO)


def unsupported(router: Router, settings: ReplaySettings, service_model: str = STEPS) -> str | None:
    """Why the compiled replay cannot run this configuration (timed under ``service_model``), or ``None``
    when it can."""
    capacity, eviction, timed = settings.capacity, settings.eviction, settings.timed
    if router.name in PYTHON_ROUTERS:
        return f"router {router.name} takes the Python event loop (its books of active requests)"
    if timed and service_model == STEPS:
        return (
            "the step service model (the default of a timed replay) runs in the Python event loop; "
            "the compiled one runs --service streams"
        )
    if capacity is None and eviction in ENGINE_EVICTIONS:
        return f"eviction {eviction} needs a capacity"  # the event loop words the refusal
    if capacity is not None and eviction not in COMPILED_EVICTIONS:
        return f"eviction {eviction} takes the Python event loop (compiled: {', '.join(COMPILED_EVICTIONS)})"
    tiers = settings.lower_tiers
    if (
        capacity is None
        or eviction in EVENT_LOOP_EVICTIONS
        or not (timed or tiers or router.name not in FIXED_ROUTERS)
    ):
        return None
    what = (
        "timed"
        if timed
        else "with a host-DRAM or pool tier"
        if tiers
        else f"under router {router.name}"
    )
    return (
        f"eviction {eviction} {what} takes the Python event loop (compiled there: lru, fifo or no capacity; "
        f"{eviction} only untimed, GPU tier alone, round-robin or random)"
    )


def replay_compiled(
    trace: ColumnarTrace,
    router: Router,
    settings: ReplaySettings,
    service: ServiceModel,
    progress,
    frugal: bool = False,
):
    """The run :func:`pyverify.fleet.replay.replay_python` gives for a configuration :func:`unsupported` accepts;
    a string saying why the tables would not fit in memory or (``frugal``) would cost more than the Python
    loop (then nothing is consumed from the router: a fresh one is asked)."""
    if settings.timed or settings.lower_tiers or router.name not in FIXED_ROUTERS:
        return event_loop_compiled(trace, router, settings, service, progress, frugal)
    from pyverify.cache.lru_kernel import link_array, replay, requests_by_cache
    from pyverify.cache.tree_kernel import tree_hits

    views = views_of(trace)
    capacity, eviction = settings.capacity, settings.eviction
    n, fleet = trace.n_requests, router.fleet
    picks = router.fixed_picks(n)
    ids, universe, starts, order, bounds = requests_by_cache(views.dense[0], trace.offsets, picks)
    limit = (
        universe if capacity is None else capacity
    )  # no capacity: room for every distinct block, nothing evicted
    unscheduled: list[int] = []
    if (
        eviction in ENGINE_EVICTIONS
    ):  # the engine's own requests, one at a time per host: simulate's engine runs
        engine_run, unscheduled = engine_hits(
            views.chains,
            picks,
            capacity,
            eviction,
            views.prompt_tokens,
            trace.block_size_tokens,
            settings.page_size,
        )
        hits = np.asarray(engine_run, dtype=np.int64)
    elif eviction == LEAF_LRU and capacity is not None:
        tree_run = tree_hits(views.chains, picks, capacity, eviction)
        if tree_run is None:  # not prefix-closed: the reference replay
            tree_run = _capacitated_hits(views.chains, picks, capacity, eviction)
        hits = np.asarray(tree_run, dtype=np.int64)
    else:
        hits = replay(
            ids,
            starts,
            order,
            bounds,
            link_array(universe),
            max(limit, 1),
            eviction == LRU or capacity is None,
        )
    lengths = np.diff(starts)
    host = np.asarray(picks, dtype=np.int64)
    requests = np.bincount(host, minlength=fleet)
    gpu = np.bincount(host, weights=hits, minlength=fleet).astype(np.int64)
    recomputed = np.bincount(host, weights=lengths - hits, minlength=fleet).astype(np.int64)
    stats = [
        HostStats(
            requests=int(requests[h]),
            gpu_hit_blocks=int(gpu[h]),
            recomputed_blocks=int(recomputed[h]),
        )
        for h in range(fleet)
    ]
    progress(n)
    zeros = [0] * n
    return ReplayRun(
        router.name,
        host.tolist(),
        hits.tolist(),
        zeros,
        list(zeros),
        int(lengths.sum()),
        None,
        None,
        None,
        stats,
        False,
        False,
        unscheduled=list(unscheduled),
    )


#: The most memory the compiled event loop's tables may take: they hold a slot per (host, distinct block) per tier,
#: where the Python loop's dicts hold only what is cached, so past this a run takes the Python loop.
MAX_TABLE_BYTES = 8 << 30


def table_bytes(
    fleet: int, universe: int, gpu_capacity: int, host_limit: int, pool_limit: int, timed: bool
) -> int:
    """Bytes of :func:`pyverify.fleet.kernel.tier_arrays`' tables and the GPU pins for this run:
    per slot a held flag, two int32 links when the tier has a capacity, an int32 pin count on a timed GPU."""
    from pyverify.fleet.kernel import NO_TIER, UNLIMITED

    def tier(caches: int, limit: int, pins: bool) -> int:
        if limit == NO_TIER:
            return 0
        per_slot = 1 + (8 if limit != UNLIMITED else 0) + (4 if pins and limit != UNLIMITED else 0)
        return caches * universe * per_slot

    return (
        tier(fleet, gpu_capacity, timed)
        + tier(fleet, host_limit, False)
        + tier(1, pool_limit, False)
    )


#: What ``--backend auto`` weighs before laying out the event loop's tables. Measured on this
#: project's 2-core machine, ``replay synthetic_trace.jsonl --fleet 4096 --host-capacity 20
#: --pool-capacity 100`` (tables of 1.8 GiB) took 4.0 s and 1.09 GB compiled, 2.3 s and 0.13 GB
#: in Python: laying out and touching the tables costs about 1.7 s a GiB; the Python loop about
#: 10 us a block reference, and 1 us a host for each request a router weighs every host for.
#: Where the Python loop costs less, auto takes it, and its memory follows what the caches hold
#: rather than hosts x distinct blocks.
TABLE_SECONDS_PER_BYTE = 1.7 / 2**30
PYTHON_SECONDS_PER_REFERENCE = 10e-6
PYTHON_SECONDS_PER_HOST_LOOK = 1e-6


def python_loop_cheaper(
    table: int, references: int, requests: int, fleet: int, weighs_hosts: bool
) -> bool:
    """Whether the Python event loop should take less time than laying out ``table`` bytes."""
    looks = requests * fleet if weighs_hosts else 0
    python = references * PYTHON_SECONDS_PER_REFERENCE + looks * PYTHON_SECONDS_PER_HOST_LOOK
    return python < table * TABLE_SECONDS_PER_BYTE


_ROUTER_CODES = {
    "least-loaded": 1,
    "prefix-affinity": 2,
    "kv-aware": 3,
}  # pyverify.fleet.kernel's LEAST_LOADED, ...


def event_loop_compiled(
    trace: ColumnarTrace,
    router: Router,
    settings: ReplaySettings,
    service: ServiceModel,
    progress,
    frugal: bool = False,
):
    """replay_python's run from :func:`pyverify.fleet.kernel.fleet_replay`; the reason (a string)
    when its tables would take more than :data:`MAX_TABLE_BYTES`, or (``frugal``) when :func:`python_loop_cheaper`."""
    from pyverify.fleet.kernel import (
        FIXED,
        NO_TIER,
        UNLIMITED,
        Requests,
        Rules,
        Tiers,
        Timing,
        fleet_replay,
        tier_arrays,
    )

    views = views_of(trace)
    timed = settings.timed
    n, fleet = trace.n_requests, router.fleet
    ids, universe = views.dense
    picks = router.fixed_picks(n)
    code = FIXED if picks is not None else _ROUTER_CODES[router.name]

    def limit(value):
        return NO_TIER if value is False else UNLIMITED if value is None else int(value)

    gpu_capacity, host_limit, pool_limit = (
        limit(settings.capacity),
        limit(settings.host_capacity),
        limit(settings.pool_capacity),
    )
    needed = table_bytes(fleet, universe, gpu_capacity, host_limit, pool_limit, timed)
    if needed > MAX_TABLE_BYTES:
        return (
            f"the compiled event loop would hold {needed / 2**30:.1f} GiB of tables ({fleet} hosts x {universe} "
            f"distinct blocks per tier), more than {MAX_TABLE_BYTES >> 30} GiB; the Python loop's memory follows what "
            "the caches hold"
        )
    if frugal and python_loop_cheaper(needed, views.references, n, fleet, code != FIXED):
        return (
            f"the Python loop costs less than the compiled event loop's "
            f"{needed / 2**30:.1f} GiB of tables ({fleet} hosts x {universe} distinct blocks per tier)"
        )
    if timed:
        if views.arrival_ms is None or None in views.arrival_ms:
            raise ValueError("a timed replay needs arrival times")
        arrival = [  # replay_python's floats, computed as it does
            ms / 1000.0 * settings.arrival_scale for ms in views.arrival_ms
        ]
        span = max(arrival, default=0.0)
        samples = run_records.LOAD_SAMPLES
        sample_s = [span * k / samples for k in range(samples)]
    else:
        arrival, sample_s = [], []
    inputs = trace.input_tokens
    given = np.zeros(n, dtype=np.bool_) if inputs is None else ~np.isnan(inputs)
    outputs = trace.output_tokens
    options = router.options
    requests = Requests(
        ids,
        trace.offsets,
        universe,
        np.asarray(arrival, dtype=np.float64),
        np.zeros(n, dtype=np.int64)
        if inputs is None
        else np.where(given, inputs, 0).astype(np.int64),
        given,
        np.zeros(n, dtype=np.int64)
        if outputs is None
        else np.nan_to_num(outputs, nan=0.0).astype(np.int64),
    )
    rules = Rules(
        code,
        np.asarray(picks if picks is not None else [], dtype=np.int64),
        float(options.slack),
        float(options.overlap_weight),
        float(options.load_weight),
        options.kv_aware_load == "blocks",
    )
    tiers = Tiers(
        tier_arrays(fleet, universe, gpu_capacity),
        gpu_capacity,
        settings.eviction != FIFO,
        tier_arrays(fleet, universe, host_limit),
        host_limit,
        tier_arrays(1, universe, pool_limit),
        pool_limit,
    )
    timing = Timing(
        int(service.max_running),
        int(service.block_tokens),
        float(service.prefill_tokens_per_s),
        float(service.decode_tokens_per_s),
        float(service.block_bytes),
        float(service.host_fetch_latency_ms),
        float(service.host_bandwidth_gb_s),
        float(service.fetch_latency_ms),
        float(service.pool_bandwidth_gb_s),
    )
    host_of, hits, start, first_token, counts, busy, samples, taken = fleet_replay(
        requests, fleet, timed, np.asarray(sample_s, dtype=np.float64), rules, tiers, timing
    )
    progress(n)
    counts = counts.tolist()
    busy = busy.tolist()
    stats = [
        HostStats(
            requests=counts[0][h],
            gpu_hit_blocks=counts[1][h],
            host_hit_blocks=counts[2][h],
            pool_hit_blocks=counts[3][h],
            recomputed_blocks=counts[4][h],
            max_queue=counts[5][h],
            busy_prefill_s=busy[h] if timed else 0.0,
        )
        for h in range(fleet)
    ]
    hits = hits.tolist()
    times = (arrival, start.tolist(), first_token.tolist()) if timed else (None, None, None)
    return ReplayRun(
        router.name,
        host_of.tolist(),
        hits[0],
        hits[1],
        hits[2],
        views.references,
        *times,
        stats,
        settings.host_capacity is not False,
        settings.pool_capacity is not False,
        list(sample_s[:taken]),
        samples[:taken].tolist(),
        [],
    )
