"""The fleet replay (``pyverify replay``): a trace served in time by a fleet of hosts, each with a
GPU cache tier, an optional host-DRAM tier below it and an optional pool shared by the fleet.

What each guarantees:

* :func:`service_model` is the time model of a replay (rates, batching, KV bytes per token),
  with every default the command line's; :func:`prefill_rate` says where its prefill rate
  comes from.
* :func:`replay_fleet` runs one replay per router and tier configuration (every configuration,
  timed and not, with ``compare``): cache contents exact for the eviction named, times a model.
  Beside every run it reports the floor, MIN and the forced-admission optimum of one pool of the
  fleet's GPU memory, and the forced-admission optimum of the run's own routing. Its
  :class:`ReplayReport` ``to_dict()`` is what ``pyverify replay --json`` prints.
* :func:`compiled_refusal` says why ``backend="compiled"`` cannot run a configuration.

The names the parser offers are handed on here from where their meaning lives
(:mod:`pyverify.fleet`, :mod:`pyverify.cost.params`). The event loop, the routers and the
bounds are imported by the call that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from pyverify.api.names import ENGINE_EVICTIONS, LRU
from pyverify.cost.params import (
    DEFAULT_BLOCK_TOKENS,
    DEFAULT_GPUS_PER_HOST,
    DEFAULT_KV_MODEL,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    DEFAULT_MAX_RUNNING,
    MEASURED_PREFILL_TOKENS_PER_S_PER_GPU,
    PREFILL_RATE_MODEL,
    prefill_rate_note,
)
from pyverify.fleet import REPLAY_ENGINES
from pyverify.fleet.routers import (
    DEFAULT_KV_AWARE_LOAD,
    DEFAULT_LOAD_WEIGHT,
    DEFAULT_OVERLAP_WEIGHT,
    KV_AWARE_LOADS,
    ROUTERS,
)
from pyverify.fleet.service import (
    DEFAULT_DECODE_GROWTH,
    DEFAULT_DECODE_TOKENS_PER_S,
    DEFAULT_PREFILL_TOKENS_PER_S,
    DYNAMO_TIMING,
    LINEAR_TIMING,
    SERVICE_MODELS,
    SOURCES,
    STEP_TIMINGS,
    STEPS,
    STREAMS,
)
from pyverify.fleet.tiers import REPLAY_EVICTIONS

if TYPE_CHECKING:
    from pyverify.fleet.report import Bounds
    from pyverify.fleet.routers import RouterOptions
    from pyverify.fleet.service import ServiceModel
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.model import Instance

__all__ = [
    "DEFAULT_DECODE_GROWTH",
    "DEFAULT_DECODE_TOKENS_PER_S",
    "DEFAULT_KV_AWARE_LOAD",
    "DEFAULT_KV_MODEL",
    "DEFAULT_LOAD_WEIGHT",
    "DEFAULT_MAX_NUM_BATCHED_TOKENS",
    "DEFAULT_MAX_RUNNING",
    "DEFAULT_OVERLAP_WEIGHT",
    "DEFAULT_PREFILL_TOKENS_PER_S",
    "DYNAMO_TIMING",
    "KV_AWARE_LOADS",
    "LINEAR_TIMING",
    "MOONCAKE_GLOBAL_GAIN",
    "PREFILL_RATE_MODEL",
    "REPLAY_ENGINES",
    "REPLAY_EVICTIONS",
    "ROUTERS",
    "SERVICE_MODELS",
    "SOURCES",
    "STEPS",
    "STEP_TIMINGS",
    "STREAMS",
    "PrefillRate",
    "ReplayReport",
    "columnar_trace",
    "compiled_refusal",
    "local_against_global",
    "own_fleet_size",
    "prefill_rate",
    "replay_fleet",
    "router_options",
    "service_model",
    "tier_configurations",
]

#: The Mooncake paper's global-pool gain in hit rate over local caches (FAST'25, section 5.3.2), per trace.
MOONCAKE_GLOBAL_GAIN = {"synthetic": 2.36, "conversation": 2.22, "tool&agent": 1.38}


@dataclass(frozen=True)
class PrefillRate:
    """Replay's prefill rate of one host, where it comes from, a note when it does not fit the KV."""

    tokens_per_s: float
    source: str
    note: str | None = None

    def to_json(self) -> dict:
        return {"tokens_per_s": self.tokens_per_s, "source": self.source, "note": self.note}


def prefill_rate(
    given: float | None = None,
    kv_model: str | None = None,
    *,
    kv_given: bool = False,
    kv_words: str = "",
) -> PrefillRate:
    """The rate ``given``; else the rate measured on ``kv_model`` (on the default KV model when no KV
    size is given, ``kv_given`` false); else the default rate, with the note ``cost`` prints for that
    case (``kv_words``: how the KV size was given, for the note)."""
    if given is not None:
        return PrefillRate(given, "--prefill-tokens-per-s")
    model = kv_model if kv_given else DEFAULT_KV_MODEL
    if model in MEASURED_PREFILL_TOKENS_PER_S_PER_GPU:
        return PrefillRate(
            MEASURED_PREFILL_TOKENS_PER_S_PER_GPU[model] * DEFAULT_GPUS_PER_HOST,
            f"measured on {model}: {SOURCES['prefill_tokens_per_s']}",
        )
    note = prefill_rate_note(kv_words, kv_model, "--prefill-tokens-per-s RATE")
    return PrefillRate(DEFAULT_PREFILL_TOKENS_PER_S, SOURCES["prefill_tokens_per_s"], note)


def service_model(
    *,
    prefill_tokens_per_s: float | None = None,
    decode_tokens_per_s: float = DEFAULT_DECODE_TOKENS_PER_S,
    max_running: int = DEFAULT_MAX_RUNNING,
    block_tokens: int | None = None,
    service: str = STEPS,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    step_table: str | Path | None = None,
    step_timing: str = LINEAR_TIMING,
    kv_bytes_per_token: float | None = None,
    pool_bandwidth_gb_s: float | None = None,
    host_bandwidth_gb_s: float | None = None,
) -> ServiceModel:
    """The time model of a replay: one host's rates, how many requests it runs at once, how a step
    is batched and timed (``step_table``: a JSON file read here; bad content raises
    :class:`~pyverify.errors.UserError`), and the KV bytes and bandwidths a lower tier's hit costs.
    ``None`` keeps the command line's default (``prefill_tokens_per_s``: :func:`prefill_rate`'s;
    ``block_tokens``: the cost model's block size)."""
    from pyverify.fleet.service import ServiceModel, read_step_table

    if prefill_tokens_per_s is None:
        prefill_tokens_per_s = prefill_rate().tokens_per_s
    model = ServiceModel(
        prefill_tokens_per_s=prefill_tokens_per_s,
        decode_tokens_per_s=decode_tokens_per_s,
        max_running=max_running,
        block_tokens=block_tokens or DEFAULT_BLOCK_TOKENS,
        service=service,
        max_num_batched_tokens=max_num_batched_tokens,
        step_table=None if step_table is None else read_step_table(step_table),
        step_timing=step_timing,
    )
    for name, value in (
        ("kv_bytes_per_token", kv_bytes_per_token),
        ("pool_bandwidth_gb_s", pool_bandwidth_gb_s),
        ("host_bandwidth_gb_s", host_bandwidth_gb_s),
    ):
        if value is not None:
            model = replace(model, **{name: value})
    return model


def router_options(
    *,
    seed: int = 0,
    slack: float = 1.25,
    overlap_weight: float = DEFAULT_OVERLAP_WEIGHT,
    load_weight: float = DEFAULT_LOAD_WEIGHT,
    kv_aware_load: str = DEFAULT_KV_AWARE_LOAD,
    block_tokens: int = DEFAULT_BLOCK_TOKENS,
) -> RouterOptions:
    """The routers' settings: ``seed`` of random (and of dynamo's ties), ``slack`` of
    prefix-affinity's load cap, kv-aware's weights and load, the block size dynamo counts in."""
    from pyverify.fleet.routers import RouterOptions

    return RouterOptions(
        seed=seed,
        slack=slack,
        overlap_weight=overlap_weight,
        load_weight=load_weight,
        kv_aware_load=kv_aware_load,
        block_tokens=block_tokens,
    )


def own_fleet_size(trace: ColumnarTrace) -> int:
    """Every command's default fleet for ``trace``: the hosts it names (its routing's, or a fleet
    size above one), else the default."""
    from pyverify.api.names import default_fleet_for

    named = trace.fleet_size
    if trace.routing is not None:
        named = named if named is not None else int(trace.routing.max()) + 1
    elif named is not None and named <= 1:
        named = None
    return default_fleet_for(named)


def columnar_trace(instance: Instance) -> ColumnarTrace:
    """An instance read by the instance readers, as the one trace type a replay takes."""
    from pyverify.inputs.columnar import ColumnarTrace

    return ColumnarTrace.from_instance(instance)


def tiers_label(host, pool) -> str:
    return "+".join(["gpu"] + ["host"] * (host is not False) + ["pool"] * (pool is not False))


def tier_configurations(host_capacity, pool_capacity, compare: bool = False) -> list[tuple]:
    """(label, host capacity, pool capacity) of each tier configuration to run; ``False``: no such
    tier. With ``compare``: GPU only, then each lower tier given alone, then both."""
    host, pool = host_capacity, pool_capacity
    if not compare:
        return [(tiers_label(host, pool), host, pool)]
    chosen = (
        [(False, False)]
        + [(host, False)] * (host is not False)
        + [(False, pool)] * (pool is not False)
    )
    if host is not False and pool is not False:
        chosen.append((host, pool))
    return [(tiers_label(h, p), h, p) for h, p in chosen]


def timings_of(compare: bool, timed: bool) -> list[bool]:
    """Whether each pass is timed: both with ``compare``, else ``timed`` alone."""
    return [True, False] if compare else [timed]


def compiled_refusal(
    routers: Sequence[str],
    *,
    capacity_given: bool,
    eviction: str = LRU,
    host_capacity=False,
    pool_capacity=False,
    compare: bool = False,
    timed: bool = True,
    service: str = STEPS,
) -> str | None:
    """Why the compiled replay cannot run every run asked for, or ``None`` when it can. Needs no
    trace: ``capacity_given`` stands for a capacity not yet converted to blocks."""
    from pyverify.fleet.compiled_replay import unsupported
    from pyverify.fleet.routers import Router
    from pyverify.fleet.run import ReplaySettings

    for run_timed in timings_of(compare, timed):
        for _, host, pool in tier_configurations(host_capacity, pool_capacity, compare):
            for name in routers:
                # Any finite capacity stands for the one the input will give.
                settings = ReplaySettings(
                    1 if capacity_given else None, eviction, host, pool, run_timed
                )
                reason = unsupported(Router(name, 1), settings, service)
                if reason is not None:
                    return reason
    return None


def json_capacity(capacity):
    """A tier's capacity in JSON: blocks, "inf", or None without the tier."""
    return None if capacity is False else ("inf" if capacity is None else capacity)


def local_against_global(summaries: Sequence[dict]) -> list[dict]:
    """Per timing and router, the hit rate of local caches (GPU + host DRAM) against one global pool (GPU + pool).

    The Mooncake paper's question: the same GPUs, with the lower-tier memory either split per host or shared.
    Empty unless ``--compare`` ran both configurations."""
    rows = {
        (summary["timed"], summary["tiers"], summary["router"]): summary for summary in summaries
    }
    pairs = []
    for (timed, tiers, router), local in rows.items():
        shared = rows.get((timed, "gpu+pool", router))
        if tiers != "gpu+host" or shared is None:
            continue
        ratio = shared["hit_rate"] / local["hit_rate"] if local["hit_rate"] else None
        pairs.append(
            {
                "timed": timed,
                "router": router,
                "local_hit_rate": local["hit_rate"],
                "global_hit_rate": shared["hit_rate"],
                "global_over_local": ratio,
            }
        )
    return pairs


@dataclass
class ReplayReport:
    """Every run of one :func:`replay_fleet` call and what they ran with.

    ``runs``: one summary per (timing, tiers, router), in that order; ``bounds``: of one pool of
    the fleet's GPU memory; ``per_request``: one record per request and run when asked for."""

    instance: str
    n_requests: int
    fleet_size: int
    capacity: int | None
    eviction: str
    host_capacity: int | None | bool
    pool_capacity: int | None | bool
    timed: bool
    compare: bool
    arrival_scale: float
    service: ServiceModel
    kv_model: str | None
    prefill_rate: PrefillRate
    options: RouterOptions
    bounds: Bounds
    runs: list[dict]
    per_request: list[dict] = field(default_factory=list)

    def to_dict(self, charts: Sequence[str | Path] = ()) -> dict[str, Any]:
        """What ``pyverify replay --json`` prints (``charts``: the chart files written beside)."""
        return {
            "instance": self.instance,
            "fleet_size": self.fleet_size,
            "capacity": self.capacity,
            "eviction": self.eviction,
            "host_tier": self.host_capacity is not False,
            "host_capacity": json_capacity(self.host_capacity),
            "pool": self.pool_capacity is not False,
            "pool_capacity": json_capacity(self.pool_capacity),
            "timed": self.timed,
            "compare": self.compare,
            "arrival_scale": self.arrival_scale,
            "service": self.service.to_json(),
            "kv": {"model": self.kv_model, "bytes_per_token": self.service.kv_bytes_per_token},
            "prefill_rate": self.prefill_rate.to_json(),
            "router_options": {
                "seed": self.options.seed,
                "affinity_slack": self.options.slack,
                "overlap_weight": self.options.overlap_weight,
                "load_weight": self.options.load_weight,
                "kv_aware_load": self.options.kv_aware_load,
            },
            "bounds": self.bounds.to_json(),
            "runs": self.runs,
            "charts": [str(path) for path in charts],
            "local_against_global": local_against_global(self.runs),
        }


def replay_fleet(
    trace: ColumnarTrace,
    *,
    routers: Sequence[str] = ("round-robin",),
    fleet_size: int | None = None,
    capacity: int | None = None,
    eviction: str = LRU,
    host_capacity: int | None | bool = False,
    pool_capacity: int | None | bool = False,
    compare: bool = False,
    timed: bool = True,
    arrival_scale: float = 1.0,
    page_size: int | None = None,
    service: ServiceModel | None = None,
    options: RouterOptions | None = None,
    rate: PrefillRate | None = None,
    kv_model: str | None = None,
    backend: str = "auto",
    per_request: bool = False,
    progress: Callable[..., None] = lambda n=1: None,
    where: str = "trace",
) -> ReplayReport:
    """Replay ``trace`` on ``fleet_size`` hosts once per router, tier configuration
    (:func:`tier_configurations`) and timing (timed and untimed with ``compare``).

    ``fleet_size``: :func:`own_fleet_size` when ``None``. Capacities are in blocks (``None``: no limit; ``False``: no such lower tier). A timed replay
    needs a timestamp on every request. ``service``, ``options``: :func:`service_model`,
    :func:`router_options` (their defaults when ``None``); ``rate`` (where the service's prefill
    rate comes from; :func:`prefill_rate`'s default when it is that rate) and ``kv_model`` are
    only reported. ``progress(n)`` is called as requests are served; ``where`` names the input in
    errors. Runs with an engine's eviction also count the requests the engine never schedules."""
    from pyverify.fleet.replay import replay
    from pyverify.fleet.report import bounds, forced_routed_hits, per_request_records, run_summary
    from pyverify.fleet.routers import Router
    from pyverify.fleet.run import ReplaySettings
    from pyverify.fleet.trace_views import views_of
    from pyverify.sim.array_run import trace_token_weights

    if service is None:
        service = service_model(block_tokens=trace.block_size_tokens)
    if options is None:
        options = router_options(block_tokens=service.block_tokens)
    if fleet_size is None:
        fleet_size = own_fleet_size(trace)
    if rate is None:
        rate = prefill_rate()
        if rate.tokens_per_s != service.prefill_tokens_per_s:
            rate = PrefillRate(service.prefill_tokens_per_s, "service_model(prefill_tokens_per_s)")
    outputs = views_of(trace).output_tokens
    bound = bounds(trace, fleet_size, capacity)
    weights = trace_token_weights(trace, where)
    forced_by_routing: dict[tuple, int] = {}
    runs: list[dict] = []
    records: list[dict] = []
    for run_timed in timings_of(compare, timed):
        for label, host, pool in tier_configurations(host_capacity, pool_capacity, compare):
            settings = ReplaySettings(
                capacity=capacity,
                eviction=eviction,
                host_capacity=host,
                pool_capacity=pool,
                timed=run_timed,
                arrival_scale=arrival_scale,
                page_size=page_size,
            )
            for name in routers:
                router = Router(name, fleet_size, options)
                run = replay(trace, router, settings, service, progress=progress, backend=backend)
                routing = tuple(run.host_of)
                if routing not in forced_by_routing:
                    forced_by_routing[routing] = forced_routed_hits(trace, routing, capacity)
                summary = run_summary(run, service, bound, forced_by_routing[routing], outputs)
                summary.update(token_summary(trace, run, weights, eviction in ENGINE_EVICTIONS))
                runs.append(
                    {
                        "timed": run_timed,
                        "tiers": label,
                        "host_capacity": json_capacity(host),
                        "pool_capacity": json_capacity(pool),
                        **summary,
                        "router_settings": options.to_json(name),
                    }
                )
                if per_request:
                    records.extend(
                        per_request_records(run, service, outputs, timed=run_timed, tiers=label)
                    )
    return ReplayReport(
        instance=trace.name,
        n_requests=trace.n_requests,
        fleet_size=fleet_size,
        capacity=capacity,
        eviction=eviction,
        host_capacity=host_capacity,
        pool_capacity=pool_capacity,
        timed=timed,
        compare=compare,
        arrival_scale=arrival_scale,
        service=service,
        kv_model=kv_model,
        prefill_rate=rate,
        options=options,
        bounds=bound,
        runs=runs,
        per_request=records,
    )


def token_summary(trace, run, weights, engine_run: bool) -> dict:
    """Hit tokens as simulate counts them (``measured.token_hits``): the tokens of each request's hit blocks."""
    from pyverify.sim.accounting import tally_offsets

    hits = [g + h + p for g, h, p in zip(run.gpu_hits, run.host_hits, run.pool_hits)]
    measured = tally_offsets(trace.offsets, hits, weights)
    extra = {"tokens": measured.tokens, "token_hits": measured.token_hits}
    if engine_run:  # prompts the engine never schedules: no hits, counted as misses (as simulate)
        extra["unscheduled_requests"] = list(run.unscheduled)
    return extra
