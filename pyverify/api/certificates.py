"""Certificates: find the fewest misses and write a claim the trusted checker re-checks
(``pyverify certify``), re-check one (``pyverify verify``), and the bounded proof of the pooled
theorem (``pyverify bounded-check``).

What each guarantees:

* :func:`certify` returns a :class:`Certification` whose certificate the trusted checker
  (:mod:`pyverify.trusted`) accepted before it was written: with ``output``, no certificate is
  written that the checker refuses, and nothing is left half-written.
* :func:`verify` is the checker's verdict, from its own reader of the instance: it shares no
  reader with the code that wrote the certificate.
* :func:`prove_bounded` says ``unsat`` only when Z3 found no counterexample to
  ``pooled_misses_eq_distinct`` among all lists of the bounds given.

Every solver and reader is imported by the call that uses it, so importing this module is cheap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TextIO

if TYPE_CHECKING:
    from pyverify.certify.bounded import BoundedResult
    from pyverify.certify.certificate import Stopped
    from pyverify.inputs.records import ImportOptions

__all__ = [
    "PACKED_MIN_REFERENCES",
    "Certification",
    "Stopped",
    "Verdict",
    "certify",
    "prove_bounded",
    "search_bounded",
    "verify",
]


def __getattr__(name: str):
    # Stopped is defined beside the search, which loads NumPy: handed on only when asked for.
    if name == "Stopped":
        from pyverify.certify.certificate import Stopped

        return Stopped
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: From this many block references, ``witness_form="auto"`` packs the witness: below it the list
#: form is a few MB and the greedy runs it records take seconds.
PACKED_MIN_REFERENCES = 1_000_000


@dataclass(frozen=True)
class Certification:
    """A certificate the trusted checker accepted, and what the search cost.

    ``certificate`` is the document as written (``pyverify.certificate/1`` with the witness as
    lists, or ``/2`` packed); ``canonical_instance`` is where the canonical instance was written
    beside it when the checker does not read the input's format itself."""

    certificate: dict[str, Any]
    name: str
    n_requests: int
    n_references: int
    model: str
    capacity: int | None
    admission: str
    routing: str
    fleet_size: int | None  # the round-robin fleet; None under the instance's own routing
    greedy_skipped: tuple[str, ...]  # greedy runs left out: less of the time limit was left
    wall_time_s: float  # reading and search
    check_time_s: float | None  # the checker's re-check before writing (None: nothing written)
    total_time_s: float
    output: str | None
    canonical_instance: Path | None

    def to_dict(self) -> dict[str, Any]:
        """What ``pyverify certify --json`` prints."""
        cert = self.certificate
        cp, z3 = cert["solvers"]["cp-sat"], cert["solvers"]["z3"]
        recorded_min = cert["solvers"].get("min")
        return {
            "instance": self.name,
            "sha256": cert["instance"].get("sha256", cert["instance"]["content_sha256"]),
            "model": self.model,
            "capacity": self.capacity,
            "admission": self.admission,
            "status": cert["status"],
            "objective": cert["objective"],
            "bound": cert["bound"],
            "floor": cert["floor"],
            "routing": self.routing if self.model == "per-host" else None,
            "fleet": self.fleet_size,
            "basis": cert["basis"],
            "min": None
            if recorded_min is None
            else {
                "misses": recorded_min["objective"],
                "wall_time_s": recorded_min["wall_time_s"],
            },
            "cp_sat": None
            if cp is None
            else {
                "status": cp["status"],
                "objective": cp["objective"],
                "bound": cp["bound"],
                "wall_time_s": cp["wall_time_s"],
            },
            "z3": None
            if z3 is None
            else {
                "at_objective": z3["at_objective"],
                "below_objective": z3["below_objective"],
                "wall_time_s": z3["wall_time_s"],
            },
            "greedy": [
                {"policy": g["policy"], "misses": g["misses"]} for g in cert.get("greedy", [])
            ],
            "greedy_skipped": list(self.greedy_skipped),
            "wall_time_s": round(self.wall_time_s, 3),
            "check_time_s": None if self.check_time_s is None else round(self.check_time_s, 3),
            "total_time_s": round(self.total_time_s, 3),
            "certificate": self.output,
            "canonical_instance": None
            if self.canonical_instance is None
            else str(self.canonical_instance),
        }


def certify(
    instance: str,
    *,
    model: str,
    capacity: int | None = None,
    time_limit: float | None = 60.0,
    routing: str = "given",
    fleet_size: int | None = None,
    admission: str = "bypass",
    greedy: list[str] | None = None,
    use_z3: bool = True,
    witness_form: str = "auto",
    reading: ImportOptions | None = None,
    output: str | None = None,
    started: float | None = None,
) -> Certification:
    """The fewest misses on the input at ``instance`` (``pyverify certify``), as a certificate.

    ``model``: ``pooled`` or ``per-host``; ``routing``: the instance's own (``given``) or
    ``round-robin`` over ``fleet_size`` hosts (default: the trace's own fleet, else 16).
    ``witness_form``: ``lists``, ``packed`` (the trace read and solved as arrays; needs a capacity,
    records no greedy runs) or ``auto`` (packed from :data:`PACKED_MIN_REFERENCES` block references
    with a capacity and no greedy runs). ``reading``: the reading flags, recorded in the
    certificate so that the checker reads the input alike. ``output``: write the certificate there,
    only once the trusted checker accepted it. ``time_limit`` counts from ``started`` (a
    ``time.perf_counter()`` value; default: now). Raises :class:`Stopped` when the time ran out
    before any witness existed (a :class:`~pyverify.errors.UserError`)."""
    from pyverify.certify.certificate import Certified, certify as search, write_certificate
    from pyverify.inputs.load import load_described
    from pyverify.inputs.records import ImportOptions, reading_record
    from pyverify.sim.routing import default_fleet, default_fleet_for

    started = time.perf_counter() if started is None else started
    reading = reading if reading is not None else ImportOptions()
    trace = _packed_input(instance, witness_form, capacity, greedy, reading)
    loaded = None if trace is not None else load_described(instance, reading).instance
    hosts = None
    if routing == "round-robin":
        if trace is None:
            hosts = fleet_size or default_fleet(loaded)
        else:  # as default_fleet: the trace's own fleet when it routes or names one
            own = trace.fleet_size or (
                int(trace.routing.max()) + 1
                if trace.routing is not None and trace.routing.size
                else 1
            )
            hosts = fleet_size or default_fleet_for(
                own if (trace.routing is not None or own > 1) else None
            )
    if trace is not None:
        from pyverify.certify.packed_certificate import certify_packed, write_packed_certificate

        cert, packed, seconds = certify_packed(
            trace,
            model,
            capacity,
            time_limit,
            instance,
            routing,
            hosts,
            admission,
            reading_record(reading),
            started,
        )
        done = Certified(cert, None, None, seconds)
        name, n_requests, n_references = trace.name, trace.n_requests, trace.n_references
    else:
        done = search(
            loaded,
            model,
            capacity,
            time_limit,
            greedy,
            use_z3=use_z3,
            instance_path=instance,
            routing=routing,
            hosts=hosts,
            admission=admission,
            read_with=reading_record(reading),
            started=started,
        )
        name, n_requests, n_references = loaded.name, loaded.n_requests, loaded.n_references
    cert = done.certificate
    check_s = canonical = None
    if output:
        check_started = time.perf_counter()
        if cert["witness"] is None:
            canonical = write_packed_certificate(cert, packed, output, instance, trace)
        else:
            canonical = write_certificate(cert, output, instance, loaded)
        check_s = time.perf_counter() - check_started
    return Certification(
        certificate=cert,
        name=name,
        n_requests=n_requests,
        n_references=n_references,
        model=model,
        capacity=capacity,
        admission=admission,
        routing=routing,
        fleet_size=hosts,
        greedy_skipped=tuple(done.skipped),
        wall_time_s=done.wall_time_s,
        check_time_s=check_s,
        total_time_s=time.perf_counter() - started,
        output=output,
        canonical_instance=canonical,
    )


def _packed_input(path: str, form: str, capacity, greedy, reading):
    """The trace as arrays if this run takes the packed route, else None (read as an instance)."""
    from pyverify.errors import UserError

    if form == "packed" and capacity is None:
        raise UserError(
            "--witness-form packed: needs --capacity (the packed route runs MIN with a capacity)"
        )
    if form == "packed" and greedy is not None:
        raise UserError(
            "--witness-form packed: records no greedy runs; drop --greedy or use --witness-form lists"
        )
    if form == "lists" or (form == "auto" and (capacity is None or greedy is not None)):
        return None
    from pyverify.inputs.arrays_load import load_arrays, reads_as_arrays

    if form == "auto" and not reads_as_arrays(path, reading):
        return None
    trace = load_arrays(path, reading)
    if form == "auto" and trace.n_references < PACKED_MIN_REFERENCES:
        return None  # a small trace: the list form, read again as an instance (a second or less)
    return trace


@dataclass(frozen=True)
class Verdict:
    """What the trusted checker said of a certificate: ``ok`` is the command's exit status 0."""

    ok: bool
    lines: tuple[str, ...]  # what ``pyverify verify`` prints, line by line

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "lines": list(self.lines)}


def verify(
    certificate: str | Path,
    instance: str | Path,
    *,
    on_line: Callable[[str], None] | None = None,
    reading: ImportOptions | None = None,
) -> Verdict:
    """Re-check a certificate against its instance with the trusted checker (``pyverify verify``).

    The instance is read as the certificate records; each reading flag set in ``reading``
    overrides the record. ``on_line`` is called with each line as the checker says it."""
    from pyverify.trusted.check import verify as check

    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        if on_line is not None:
            on_line(line)

    flags = {}
    if reading is not None:
        flags = {
            "allow_unsorted": reading.allow_unsorted,
            "block_size": reading.block_size,
            "tokenizer": reading.tokenizer,
            "source_block_size": reading.source_block_size,
            "rag_order": reading.rag_order,
            "rag_lengths": reading.rag_lengths,
        }
    status = check(str(certificate), str(instance), say, **flags)
    return Verdict(status == 0, tuple(lines))


def prove_bounded(max_length: int, openings: int) -> BoundedResult:
    """Z3's bounded check of ``pooled_misses_eq_distinct`` on every list of at most
    ``max_length`` requests and ``openings`` blocks (``pyverify bounded-check``): ``unsat``
    proves it there; ``sat`` is a counterexample."""
    from pyverify.certify.bounded import prove

    return prove(max_length, openings)


def search_bounded(
    start: int, budget_s: float, progress: TextIO | None = None
) -> list[BoundedResult]:
    """:func:`prove_bounded` at N = K = start, start + 1, ..., each within ``budget_s`` seconds,
    up to the first bound not proved (``pyverify bounded-check --search``)."""
    from pyverify.certify.bounded import search

    return search(start, budget_s, progress=progress)
