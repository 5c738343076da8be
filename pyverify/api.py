"""pyverify's Python API: the main jobs of the command line, callable from a notebook.

Every function takes a trace as :func:`load_trace` returns it (one
:class:`~pyverify.inputs.columnar.ColumnarTrace`: block ids in one int64 array,
with optional per-request columns) and returns a result object with
``to_dict()``. The numbers are the command line's: ``simulate(trace, ...)``
gives the hits ``pyverify simulate --json`` prints for the same trace and
flags (``tests/test_api.py`` holds them equal on the committed instances).

What each result guarantees:

* :class:`SimulationResult`: the exact hits of demand caches that start empty,
  replayed request by request (pooled: one cache; per host: one per host under
  the routing named), with the eviction named when there is a capacity.
* :class:`Curve`: exact miss counts at *every* capacity from one pass: LRU by
  stack distances, or the optimum (Belady's MIN, bypass form) by its own
  distances; ``misses(c)`` is what a replay at capacity ``c`` would count.
* :func:`verify`: the verdict of the trusted checker (:mod:`pyverify.trusted`),
  which shares no reader with the code that wrote the certificate.

Bad input raises :class:`~pyverify.errors.UserError` (one line naming the file,
the field and the reason); a check that runs and fails returns a failing
:class:`Verdict` (the command line's exit status 1).

Example::

    from pyverify import api
    trace = api.load_trace("instances/lab-512x32x16.json")
    api.simulate(trace, model="per-host", fleet_size=16).hit_rate
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pyverify.inputs.columnar import ColumnarTrace
from pyverify.sim.names import LRU, PER_HOST, POOLED

__all__ = [
    "ColumnarTrace",
    "Curve",
    "SimulationResult",
    "Verdict",
    "load_trace",
    "lru_curve",
    "optimal_curve",
    "simulate",
    "verify",
]


def load_trace(
    path: str | Path, *, block_size: int | None = None, allow_unsorted: bool = False
) -> ColumnarTrace:
    """Read any input pyverify reads (told apart by content) as the one trace type.

    ``block_size``: re-block a token-level trace to this many tokens a block
    (``--block-size``). ``allow_unsorted``: replay decreasing timestamps in
    file order (``--allow-unsorted``)."""
    from pyverify.inputs.load import load_described
    from pyverify.inputs.records import ImportOptions

    options = ImportOptions(
        block_size=block_size, allow_unsorted=allow_unsorted, warn=lambda message: None
    )
    return ColumnarTrace.from_instance(load_described(str(path), options).instance)


@dataclass(frozen=True)
class SimulationResult:
    """Demand caches that start empty, run over a trace (see the module docstring)."""

    trace: str
    sha256: str  # the trace's content digest (pyverify.content/1), equal across formats
    model: str  # "pooled" or "per-host"
    fleet_size: int | None  # None when no routing was needed (one pooled cache, trace unrouted)
    routing: str | None
    capacity: int | None  # blocks per cache; None: uncapacitated
    eviction: str | None
    references: int
    hits: int
    hit_blocks: tuple[int, ...]  # per request, in trace order

    @property
    def misses(self) -> int:
        return self.references - self.hits

    @property
    def hit_rate(self) -> float:
        return self.hits / self.references if self.references else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["hit_blocks"]
        return {**data, "misses": self.misses, "hit_rate": self.hit_rate}


def simulate(
    trace: ColumnarTrace,
    *,
    model: str = POOLED,
    fleet_size: int | None = None,
    routing: str | None = None,
    capacity: int | None = None,
    eviction: str = LRU,
    seed: int = 0,
    slack: float = 1.25,
) -> SimulationResult:
    """Replay ``trace`` through demand caches (``pyverify simulate``).

    ``model``: ``pooled`` (one cache every host reads) or ``per-host``.
    ``fleet_size`` and ``routing`` default as the command line's do: the trace's
    own routing and fleet when it has them, else round-robin over 16 hosts.
    ``capacity`` in blocks per cache (None: uncapacitated); ``eviction`` one of
    ``lru``, ``fifo``, ``leaf-lru``, ``tail-first``."""
    from pyverify.inputs.columnar.digest import content_sha256
    from pyverify.sim.routing import RoutingOptions
    from pyverify.sim.simulate import simulate as run_caches

    instance = trace.to_instance()
    options = RoutingOptions(seed=seed, capacity=capacity, eviction=eviction, slack=slack)
    needed = model == PER_HOST or instance.routing is not None  # a given routing is folded
    routed, fleet, policy = _route(instance, needed, fleet_size, routing, options)
    run = run_caches(instance.chains, routed, model, capacity=capacity, eviction=eviction)
    return SimulationResult(
        trace=instance.name,
        sha256=content_sha256(trace),
        model=run.model,
        fleet_size=fleet if routed is not None else None,
        routing=policy if routed is not None else None,
        capacity=capacity,
        eviction=run.eviction,
        references=run.references,
        hits=run.hits,
        hit_blocks=tuple(run.hit_blocks),
    )


@dataclass(frozen=True)
class Curve:
    """Exact misses at every capacity, from one pass (see the module docstring)."""

    kind: str  # "lru" or "optimal"
    references: int
    cold_misses: int  # first references: missed at any capacity
    caches: int  # 1 pooled, else the fleet size (every cache the same capacity)
    _curve: Any  # pyverify.sim.mrc.MissRatioCurve

    def misses(self, capacity: int) -> int:
        return int(self._curve.misses(capacity))

    def hit_rate(self, capacity: int) -> float:
        return float(self._curve.hit_rate(capacity))

    @property
    def ceiling_hit_rate(self) -> float:
        """The hit rate with room for everything (only first references miss)."""
        return float(self._curve.ceiling_hit_rate)

    def to_dict(self, capacities: list[int] | None = None) -> dict[str, Any]:
        capacities = capacities if capacities is not None else [1, 2, 4, 8, 16, 32, 64]
        return {
            "kind": self.kind,
            "references": self.references,
            "cold_misses": self.cold_misses,
            "caches": self.caches,
            "ceiling_hit_rate": self.ceiling_hit_rate,
            "points": [
                {"capacity": c, "misses": self.misses(c), "hit_rate": self.hit_rate(c)}
                for c in capacities
            ],
        }


def _route(instance, needed: bool, fleet_size, routing, options):
    """``(routing of every request or None, fleet size, policy)``, defaulting as the command line
    does: the instance's own fleet and routing when it has them, else round-robin over 16 hosts."""
    from pyverify.sim.routing import default_fleet, default_policy, route

    fleet = fleet_size or default_fleet(instance)
    policy = routing or default_policy(instance)
    return (route(instance, fleet, policy, options) if needed else None), fleet, policy


def _routing_for_curve(trace: ColumnarTrace, model: str, fleet_size, routing, seed):
    from pyverify.sim.routing import RoutingOptions

    instance = trace.to_instance()
    if model != PER_HOST:
        return instance, None, 1
    routed, fleet, _ = _route(instance, True, fleet_size, routing, RoutingOptions(seed=seed))
    return instance, routed, fleet


def lru_curve(
    trace: ColumnarTrace,
    *,
    model: str = POOLED,
    fleet_size: int | None = None,
    routing: str | None = None,
    seed: int = 0,
) -> Curve:
    """LRU's exact miss curve (``pyverify mrc``): one pass of stack distances; ``misses(c)``
    equals ``simulate(trace, capacity=c, eviction="lru", ...)``'s misses at every ``c``."""
    from pyverify.sim.mrc import lru_curve as curve_of

    instance, routed, fleet = _routing_for_curve(trace, model, fleet_size, routing, seed)
    curve = curve_of(instance.chains, routed, fleet)
    return Curve("lru", curve.references, curve.cold, curve.caches, curve)


def optimal_curve(
    trace: ColumnarTrace,
    *,
    model: str = POOLED,
    fleet_size: int | None = None,
    routing: str | None = None,
    seed: int = 0,
) -> Curve:
    """The optimum's exact miss curve (Belady's MIN, bypass form, at every capacity: no demand
    cache of that capacity misses fewer times), from one pass (``pyverify mrc --optimal``)."""
    from pyverify.optimal.curve import optimal_curve as curve_of

    instance, routed, fleet = _routing_for_curve(trace, model, fleet_size, routing, seed)
    curve = curve_of(instance.chains, routed, fleet)
    return Curve("optimal", curve.references, curve.cold, curve.caches, curve)


@dataclass(frozen=True)
class Verdict:
    """What the trusted checker said of a certificate: ``ok`` is the command's exit status 0."""

    ok: bool
    lines: tuple[str, ...]  # what ``pyverify verify`` prints, line by line

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "lines": list(self.lines)}


def verify(certificate: str | Path, instance: str | Path) -> Verdict:
    """Re-check a certificate against its instance with the trusted checker (``pyverify verify``)."""
    from pyverify.trusted.check import verify_quiet

    status, lines = verify_quiet(str(certificate), str(instance))
    return Verdict(status == 0, tuple(lines))
