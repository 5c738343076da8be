"""The trusted checker of ``pyverify.certificate/1`` and ``/2`` files (``pyverify verify``): read first.

It imports no solver, no searcher and not the simulator; it replays the witness by the rules
themselves (``pyverify/certify/placement.py``):

1. every cache starts empty;
2. a request's ``h`` hit blocks are resident in the cache it reads, and its next block (if any)
   is not (longest resident prefix); the rest are misses;
3. after the request, that cache holds what it held plus the request's own blocks, minus
   ``dropped`` (each one held or fetched): a block enters only with a request that fetched it;
4. with a capacity ``C``, the cache then holds at most ``C`` blocks;
5. only if ``cache_model.admission`` is ``forced``: none of the request's first ``min(k, C)``
   blocks is dropped (absent, admission is ``bypass`` and rule 5 is off).

What it trusts: its own strict reader (:mod:`pyverify.trusted.reader`) of a
``pyverify.instance/1`` file or a Mooncake JSONL trace (any other input reaches it as the
canonical instance certify writes beside the certificate), jsonschema for the certificate's
shape, and NumPy, on which every certificate is replayed (:mod:`pyverify.trusted.runs`), named by
its content digest (:mod:`pyverify.trusted.digest`) and recounted (:mod:`pyverify.trusted.recount`).

What it proves itself: the witness is a legal run with ``objective`` misses (an upper bound),
and the compulsory floor (distinct (cache, block) pairs) bounds every run from below.
Uncapacitated, OPTIMAL needs the objective to equal the floor. Capacitated, it recounts Belady's
MIN per cache (with forced admission: Belady's rule with the running request pinned) and accepts
OPTIMAL only when the witness has exactly that many misses. What those recounts rest on
(theorems, proved in Lean or not) is printed as the basis (:func:`basis_of`).

What it does not check: the solver records (CP-SAT, Z3, the MIN run's name, version and time).
They are refused only if they contradict the witness or the bound, and printed as "reported by
the certifier, not re-checked" (:func:`certifier_records`); every other field it does not read
is printed as a label (:func:`labels_not_checked`). Greedy runs are replayed like the witness;
one labelled ``lru`` is recounted, and one with fewer misses than a claimed optimum refutes it.

Certificates made with the solvers must also record CP-SAT OPTIMAL and Z3 unsat at ``objective - 1``
to be OPTIMAL; a forced certificate's records name ``admission: forced`` in their problem.

Every check prints one line; the first failure prints ``FAILED: reason`` and :func:`verify`
returns 1. Malformed files raise :class:`UserError` (exit 2).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from pyverify.errors import CheckFailed, located
from pyverify.trusted import digest, packed, reader, recount, runs

CERTIFICATE_FORMAT = "pyverify.certificate/1"
PACKED_CERTIFICATE_FORMAT = "pyverify.certificate/2"  # its witness packed (trusted/packed.py)
CERTIFICATE_FORMATS = (CERTIFICATE_FORMAT, PACKED_CERTIFICATE_FORMAT)
MAX_INTEGER = 2**63 - 1  # the largest integer a certificate may hold (the schema's bound)
#: What a packed certificate may not lack or hold: it names its instance by content only.
PACKED_REFUSALS = {
    "instance.content_sha256": "is missing: a {} names its instance by its content",
    "greedy": "is not part of a {} (its witness is the only run it records)",
    "instance.sha256": "is not part of a {} (it names its instance by content_sha256)",
}


def certificate_schema() -> dict[str, Any]:
    return json.loads(
        resources.files("pyverify.schemas")
        .joinpath("certificate.schema.json")
        .read_text(encoding="utf-8")
    )


def caches_phrase(model: str, routing: str = "given", hosts: int | None = None) -> str:
    if model == "pooled":
        return "one pooled cache"
    if routing == "round-robin":
        return f"one cache per host ({hosts} hosts, round-robin routing)"
    return "one cache per host (routing as given)"


def claim_statement(
    model: str,
    capacity: int | None,
    status: str,
    objective: int,
    bound: int,
    routing: str = "given",
    hosts: int | None = None,
    admission: str = "bypass",
) -> str:
    """The only sentence a certificate may state: about this instance and this model, nothing more."""
    size = "no capacity limit" if capacity is None else f"at most {capacity} blocks per cache"
    where = f"On this instance only, with {caches_phrase(model, routing, hosts)}, {size}, starting empty and fetching on demand"
    if admission == FORCED:
        where += (
            ", admitting every block it fetches (forced admission: a request's first min(k, C) blocks are held "
            "when it ends)"
        )
    if status == "OPTIMAL":
        return f"{where}: some run has {objective} misses and no run has fewer."
    return f"{where}: some run has {objective} misses; the best proven lower bound is {bound} (optimality not established)."


#: What an OPTIMAL or FEASIBLE verdict rests on, as the checker states it (and a certificate must repeat).
UPPER = "upper bound: the witness run, replayed by rules 1-4 (checked here, no assumption)"
UPPER_FORCED = "upper bound: the witness run, replayed by rules 1-5 (forced admission; checked here, no assumption)"
BYPASS, FORCED = "bypass", "forced"
FLOOR = "lower bound: the compulsory floor, distinct (cache, block) pairs (computed here, no assumption)"
MIN_BOUND = (
    "lower bound: Belady's MIN on each cache's flat block sequence, recounted here by pyverify/trusted/recount.py; "
    "no flat demand cache misses fewer times (Belady 1966; Lean theorem min_misses_le, kernel-checked); "
    "that recount.py counts what Lean's MIN defines is tested, not proved"
)
RELAXATION = (
    "flat relaxation: every run of the prefix cache is a flat run with no fewer misses "
    "(Lean theorem prefix_run_is_flat_run, kernel-checked; docs/min-flat-relaxation.md), "
    "so the flat optimum bounds the prefix cache's"
)
FORCED_BOUND = (
    "lower bound: Belady's rule with forced admission (after each request keep its first min(k, C) blocks "
    "and the soonest-used others) on each cache's requests, recounted here by pyverify/trusted/recount.py; "
    "no cache that admits every block it fetches and keeps the running request's blocks misses fewer times, "
    "by Belady's theorem (Belady 1966; Mattson, Gecsei, Slutz, Traiger 1970) with its exchange argument "
    "applied to the pinned blocks (pyverify/sim/forced_min.py, docs/min-flat-relaxation.md 'Forced admission'); "
    "NOT proved in Lean; equality with exhaustive search on small traces is tested"
)
FORCED_RELAXATION = (
    "flat relaxation, forced admission: a prefix-cache run's hits are among the blocks it holds, so "
    "its misses are at least the flat count above (argued in pyverify/sim/forced_min.py; not proved in Lean)"
)
RECORDED_BOUND = "lower bound: as recorded by CP-SAT, checked here to be at most the MIN recount"


#: How the checker words every record it did not check (the solver records): never as a fact.
NOT_RECHECKED = "reported by the certifier, not re-checked"


def basis_of(capacity: int | None, status: str, admission: str = "bypass") -> list[str]:
    """The reliance statement for a certificate of this kind (certify writes it; the checker
    recomputes it). The solver records are not part of it: nothing here re-runs a solver."""
    if capacity is None:
        return [UPPER, FLOOR]
    if admission == FORCED:
        if status != "OPTIMAL":
            return [
                UPPER_FORCED,
                RECORDED_BOUND.replace("the MIN recount", "the forced recount"),
                FORCED_RELAXATION,
            ]
        return [UPPER_FORCED, FORCED_BOUND, FORCED_RELAXATION]
    if status != "OPTIMAL":
        return [UPPER, RECORDED_BOUND, RELAXATION]
    return [UPPER, MIN_BOUND, RELAXATION]


def legacy_basis(basis: list[str]) -> list[str]:
    """How packed certificates written before the checker had one path named its recount."""
    named = "recounted here on arrays by pyverify/trusted/array_recount.py (held equal to "
    named += "pyverify/trusted/recount.py by tests, not proved)"
    return [line.replace("recounted here by pyverify/trusted/recount.py", named) for line in basis]


def certifier_records(cert: dict[str, Any]) -> list[str]:
    """One line per solver record of ``cert``, each saying that the checker did not re-check it.

    What a record says about a solver run (its status, bound, version, time) is
    the certifier's word: the checker only refuses records that contradict the
    witness or the bound, and its verdict never rests on them."""
    lines = []
    cpsat, z3, recorded_min = (cert["solvers"].get(name) for name in ("cp-sat", "z3", "min"))
    if cpsat is not None:
        lines.append(
            f"solvers.cp-sat: {NOT_RECHECKED}: {cpsat['name']} {cpsat['version']}, status {cpsat['status']}, "
            f"objective {cpsat['objective']}, bound {cpsat['bound']}, {cpsat['wall_time_s']} s"
        )
    if z3 is not None:
        lines.append(
            f"solvers.z3: {NOT_RECHECKED}: {z3['name']} {z3['version']}, {z3['at_objective']} with at most "
            f"{z3['objective']} misses, {z3['below_objective']} with at most {z3['objective'] - 1}, {z3['wall_time_s']} s"
        )
    if recorded_min is not None:
        lines.append(
            f"solvers.min: {NOT_RECHECKED}: {recorded_min['name']} {recorded_min['version']}, "
            f"{recorded_min['wall_time_s']} s (its count, {recorded_min['objective']}, is recounted here)"
        )
    return lines


def labels_not_checked(cert: dict[str, Any]) -> list[str]:
    """One line per field of ``cert`` that no check reads and no verdict rests on (the others are
    checked, or are the solver records of :func:`certifier_records`): none is carried silently."""
    lines = []
    if "path" in cert["instance"]:
        lines.append(
            f"instance.path {cert['instance']['path']!r}: where certify read the instance "
            "(a label; the file checked is the one named on this command line)"
        )
    if "canonical_file" in cert["instance"] and "read_with" in cert["instance"]:
        lines.append(
            f"instance.read_with {cert['instance']['read_with']}: how certify read the "
            "original input (a label here: the checker read the canonical instance it wrote)"
        )
    for name in ("cp-sat", "z3", "min"):
        record = cert["solvers"].get(name)
        if record is not None and "parameters" in record:
            shown = ", ".join(f"{key} {value}" for key, value in record["parameters"].items())
            lines.append(f"solvers.{name}.parameters: {NOT_RECHECKED}: {shown or 'none'}")
    for index, greedy in enumerate(cert.get("greedy", [])):
        if "description" in greedy:
            lines.append(f"greedy[{index}].description: a label ({greedy['description']!r})")
    if "theorem" in cert:
        lines.append(
            f"theorem {cert['theorem']!r}: not read here; 'pyverify bridge' relates the "
            "certificate to it"
        )
    created = ", ".join(f"{key} {value}" for key, value in cert["created_by"].items())
    lines.append(f"created_by: a label ({created})")
    return lines


def replay(chains, caches, capacity: int | None, run, what: str, forced: bool = False) -> int:
    """Replay a list-form run on chains of block ids by rules 1-4 (and 5 if ``forced``): its
    misses, or CheckFailed at the first illegal step (:func:`pyverify.trusted.runs.replay`)."""
    ids, offsets = reader.flat([list(chain) for chain in chains])
    trace = Counts(SimpleNamespace(ids=ids, offsets=offsets), caches)
    return trace.replay(capacity, runs.arrays_of(run), what, forced)


RUN_KEYS = ("cache_of", "hit_blocks", "dropped")


def is_packed(run: Any) -> bool:
    """A run in packed form (:mod:`pyverify.trusted.packed`): it names its encoding."""
    return isinstance(run, dict) and "encoding" in run


def thin(run: Any) -> Any:
    """A run without the contents of its long arrays (the schema still sees what they are)."""
    if not isinstance(run, dict):
        return run
    if is_packed(run):  # its base64 (megabytes) is decoded and checked by trusted/packed.py
        text = {key for key, field in run.items() if isinstance(field, dict) and "base64" in field}
        return {key: {**run[key], "base64": ""} if key in text else run[key] for key in run}
    return {k: [] if k in RUN_KEYS and isinstance(v, list) else v for k, v in run.items()}


def validate_certificate(cert: Any, cert_path: str) -> None:
    """The JSON Schema, on the certificate with its runs :func:`thin` (jsonschema visits every
    array item as an object: minutes for a trace's witness); those items are checked here."""
    runs, light = [], cert
    if isinstance(cert, dict):
        light = dict(cert)
        if "witness" in cert:
            runs.append(("witness", cert["witness"]))
            light["witness"] = thin(cert["witness"])
        if isinstance(cert.get("greedy"), list):
            light["greedy"] = list(cert["greedy"])
            for index, greedy in enumerate(cert["greedy"]):
                if isinstance(greedy, dict) and "run" in greedy:
                    runs.append((f"greedy[{index}].run", greedy["run"]))
                    light["greedy"][index] = {**greedy, "run": thin(greedy["run"])}
    validate_schema(light, cert_path, certificate_schema())
    for where, run in runs:
        if is_packed(run):
            continue
        for key in RUN_KEYS:
            for index, value in enumerate(run[key]):
                items = value if key == "dropped" and type(value) is list else [value]
                if key == "dropped" and type(value) is not list:
                    reason = "is not a list of block ids"
                elif all(type(item) is int and 0 <= item <= MAX_INTEGER for item in items):
                    continue
                elif key == "dropped":
                    reason = f"holds something other than a non-negative integer block id (at most {MAX_INTEGER})"
                else:
                    reason = f"is {value!r}, not a non-negative integer (at most {MAX_INTEGER})"
                raise located(cert_path, f"{where}.{key}[{index}]", reason)


def verify(
    cert_path: str,
    instance_path: str,
    say: Callable[[str], None] = print,
    read_already=None,
    canonical_at: str | None = None,
    **reading: Any,
) -> int:
    """Check a certificate against an instance; print each check. 0 = verified, 1 = failed.

    The instance is read with the reading flags the certificate records
    (``instance.read_with``), each overridden by a flag in ``reading`` that is set.
    ``read_already``: for certify's check of a packed certificate before writing it, the trace as it read it
    (the same reader, :func:`pyverify.inputs.arrays_load.load_arrays`, so not read a second time); its content
    digest is computed here all the same. ``pyverify verify`` always reads the instance itself.
    ``canonical_at``: for certify's check before renaming its files into place, where the canonical
    instance the certificate names (``instance.canonical_file``) is for now."""
    cert = reader.read_document(cert_path)
    if isinstance(cert, dict) and cert.get("format", CERTIFICATE_FORMAT) not in CERTIFICATE_FORMATS:
        raise located(
            cert_path,
            "format",
            f"is {cert['format']!r}; this checker reads {' and '.join(CERTIFICATE_FORMATS)} only",
        )
    validate_certificate(cert, cert_path)
    fmt, named = cert["format"], cert["instance"]
    if fmt == PACKED_CERTIFICATE_FORMAT:
        wrong = ("content_sha256" not in named, "greedy" in cert, "sha256" in named)
        for (where, reason), refused in zip(PACKED_REFUSALS.items(), wrong):
            if refused:
                raise located(cert_path, where, reason.format(fmt))
        # malformed arrays are refused before the instance is read
        witness = packed.unpack(cert["witness"], cert_path, "witness")
    elif is_packed(cert["witness"]):
        raise located(
            cert_path,
            "witness.encoding",
            f"a packed witness belongs in a {PACKED_CERTIFICATE_FORMAT}, not a {fmt}",
        )
    else:
        witness = runs.arrays_of(cert["witness"])
    say(f"certificate {cert_path}: {fmt}, matches its JSON Schema")
    if (
        read_already is not None
        and fmt == PACKED_CERTIFICATE_FORMAT
        and "canonical_file" not in named
    ):
        instance, file_format = read_already, None  # certify's own arrays: no canonical JSON here
    else:
        instance, file_format, instance_path = read_certified(
            cert, cert_path, instance_path, say, canonical_at, **reading
        )
    try:
        _verify(cert, instance, instance_path, say, witness, file_format)
    except CheckFailed as failure:
        say(f"FAILED: {failure}")
        return 1
    return 0


class Counts:
    """What the checker counts on a trace's arrays: the replay (:mod:`pyverify.trusted.runs`), the
    floor and the recounts (:mod:`pyverify.trusted.recount`), on one key per (cache, block) pair."""

    def __init__(self, trace, caches):
        self.trace, self.caches = trace, np.asarray(caches, dtype=np.int64)
        self.n_requests, self.references = int(trace.offsets.size - 1), int(trace.ids.size)
        fleet = int(self.caches.max()) + 1 if self.caches.size else 1
        of_reference = np.repeat(self.caches, np.diff(trace.offsets))
        self.keyed = runs.PairKeys(trace.ids, of_reference, fleet)

    def replay(self, capacity: int | None, run, what: str, forced: bool) -> int:
        return runs.replay(self.trace, self.caches, self.keyed, capacity, run, what, forced)

    def floor(self) -> int:  # distinct (cache, block) pairs: every key is some reference's
        return self.keyed.universe

    def recount(self, rule: str, capacity: int) -> int:
        keys, universe = self.keyed.of_references, self.keyed.universe
        return recount.count(rule, keys, self.trace.offsets, self.caches, capacity, universe)


def _verify(
    cert: dict[str, Any],
    instance,
    instance_path: str,
    say: Callable[[str], None],
    witness: dict[str, np.ndarray],
    file_format: str | None,
) -> None:
    """The checks, in the order they print. ``witness``: its four arrays; ``file_format``: the form
    the checker's reader read (None: certify's own arrays)."""

    def require(condition: bool, reason: str) -> None:
        if not condition:
            raise CheckFailed(reason)

    named, file_hash = cert["instance"], None
    if "content_sha256" in named:
        # The identity is the content (pyverify.content/1): the same trace in another format verifies.
        key, identity = "content_sha256", digest.content_sha256(instance)
        require(
            named["content_sha256"] == identity,
            f"instance.content_sha256 is {named['content_sha256']}, but the content of {instance_path} "
            f"hashes to {identity}: the certificate is for another instance",
        )
        words = f"content sha256 {identity} matches (pyverify.content/1, any format)"
        if "sha256" in named:
            file_hash = _check_file_hash(named, instance, instance_path, file_format, require)
    else:  # certificates written before content digests: the canonical JSON names the instance
        key, identity = "instance_sha256", reader.canonical_sha256(instance)
        require(
            named["sha256"] == identity,
            f"instance.sha256 is {named['sha256']}, but {instance_path} hashes to {identity}: the certificate is for another instance",
        )
        words = f"sha256 {identity} matches"
    if key == "instance_sha256" or (
        file_hash is not None and file_format == reader.INSTANCE_FORMAT
    ):
        # The canonical JSON holds the name: where the file hash is checked, another name is
        # another file.
        require(
            named["name"] == instance.name,
            f"instance.name is {named['name']!r}, the instance is named {instance.name!r}",
        )
    if named["name"] == instance.name:
        say(f"instance {instance_path}: {words}, name {instance.name!r}")
    else:  # names are outside the content: the same trace saved under another file name is the same instance
        say(
            f"instance {instance_path}: {words}; named {instance.name!r} here, {named['name']!r} in the certificate "
            "(names are not part of the content)"
        )
    if file_hash is not None:
        say(file_hash)

    cm = cert["cache_model"]
    model, capacity, routing, hosts = cm["model"], cm["capacity"], cm["routing"], cm.get("hosts")
    admission = cm.get("admission", BYPASS)
    forced = admission == FORCED
    require(
        not forced or capacity is not None,
        "cache_model.admission is forced, but there is no capacity (forced admission needs one)",
    )
    caches = _caches_read(model, routing, hosts, instance, require)
    count = Counts(instance, caches)
    size = "uncapacitated" if capacity is None else f"capacity {capacity} blocks per cache"
    admits = (
        ", forced admission (every block a request hits or fetches is held when it ends)"
        if forced
        else ", bypass allowed"
    )
    say(
        f"cache model: {model}, {size}, offline-optimal eviction{admits}, {caches_phrase(model, routing, hosts)}, starting empty"
    )

    problem = {key: identity, "model": model, "capacity": capacity}
    problem.update({"admission": FORCED} if forced else {})
    solvers = cert["solvers"]
    cpsat, z3, recorded_min = solvers["cp-sat"], solvers["z3"], solvers.get("min")
    for name, record in (("cp-sat", cpsat), ("z3", z3), ("min", recorded_min)):
        if record is not None:
            require(
                record["problem"] == problem,
                f"solvers.{name}.problem {record['problem']} is not this certificate's problem {problem}",
            )
    require(
        capacity is None or cpsat is not None or recorded_min is not None,
        "the certificate records neither CP-SAT nor MIN: nothing backs its bound",
    )

    status, objective, bound = cert["status"], cert["objective"], cert["bound"]
    misses = count.replay(capacity, witness, "witness", forced)
    require(
        misses == objective, f"the witness replays to {misses} misses, but objective is {objective}"
    )
    rules = "rules 1-5 (forced admission)" if forced else "rules 1-4"
    say(
        f"witness: replayed {count.n_requests} requests by {rules}: {count.references - misses} hits, {misses} misses = objective {objective}"
    )

    floor = count.floor()
    unit = "distinct blocks" if model == "pooled" else "distinct (host, block) pairs"
    require(
        cert["floor"] == floor, f"floor is {cert['floor']}, but the instance has {floor} {unit}"
    )
    require(
        objective >= floor,
        f"objective {objective} is below the compulsory floor {floor}: impossible",
    )
    say(f"compulsory floor: {floor} {unit} (computed here); no run misses fewer")
    require(
        bound <= objective,
        f"bound {bound} exceeds the witness's {objective} misses: the bound is false",
    )

    if capacity is None:
        optimum = floor
        require(
            bound <= floor,
            f"bound {bound} exceeds the floor {floor}, but uncapacitated the run that keeps everything misses exactly {floor} times",
        )
    elif forced:
        optimum = count.recount("forced", capacity)
        require(
            objective >= optimum,
            f"the witness has {objective} misses, fewer than the forced-admission recount {optimum}: "
            "Belady's theorem with pinned blocks would be false (please report this certificate)",
        )
        require(
            bound <= optimum,
            f"bound {bound} exceeds the fewest misses with forced admission, {optimum} (Belady's rule, recounted here)",
        )
        say(
            f"Belady's rule with forced admission on each cache's requests, recounted here: {optimum} misses"
        )
    else:
        optimum = count.recount("min", capacity)
        require(
            objective >= optimum,
            f"the witness has {objective} misses, fewer than the MIN recount {optimum}: "
            "Belady's theorem or the flat relaxation would be false (please report this certificate)",
        )
        require(
            bound <= optimum,
            f"bound {bound} exceeds the fewest misses, {optimum} (Belady's MIN, recounted here)",
        )
        say(f"Belady's MIN on each cache's flat sequence, recounted here: {optimum} misses")
    if recorded_min is not None:
        for key in ("objective", "bound"):
            require(
                capacity is not None and recorded_min[key] == optimum,
                f"solvers.min.{key} is {recorded_min[key]}, but the recount here gives {optimum if capacity is not None else 'nothing (uncapacitated)'}",
            )
        require(
            bound == optimum or cpsat is not None,
            f"bound is {bound}, but MIN's recorded count is {recorded_min['bound']}",
        )

    if cpsat is not None:
        require(
            bound == cpsat["bound"],
            f"bound is {bound}, but CP-SAT's recorded bound is {cpsat['bound']}",
        )
        require(
            cpsat["objective"] in (None, objective),
            f"CP-SAT's recorded objective {cpsat['objective']} differs from the witness's {objective}",
        )
        require(
            cpsat["status"] in ("OPTIMAL", "FEASIBLE", "UNKNOWN"),
            f"CP-SAT status {cpsat['status']} contradicts the witness (a run exists)",
        )
        require(
            (cpsat["objective"] is not None) == (cpsat["status"] in ("OPTIMAL", "FEASIBLE")),
            f"CP-SAT status {cpsat['status']} with objective {cpsat['objective']} is inconsistent",
        )
        require(
            cpsat["status"] != "OPTIMAL" or cpsat["bound"] == cpsat["objective"],
            f"CP-SAT status OPTIMAL but bound {cpsat['bound']} != objective {cpsat['objective']}",
        )
    if z3 is not None:
        require(
            z3["objective"] == objective,
            f"solvers.z3.objective is {z3['objective']}, the certificate's objective is {objective}",
        )
        require(
            z3["at_objective"] != "unsat",
            f"Z3 recorded no run with {objective} misses, but the witness is one",
        )
        require(
            not (z3["below_objective"] == "sat" and bound == objective),
            f"Z3 recorded a run with {objective - 1} misses, contradicting bound {bound}",
        )
        require(
            z3["below_objective"] != "sat" or objective > optimum,
            f"Z3 recorded a run with {objective - 1} misses, below the optimum {optimum}",
        )
    if cpsat is not None or z3 is not None:
        say(
            "solver records: checked here only not to contradict the witness, the floor and the bound; "
            f"the runs they describe are {NOT_RECHECKED} (listed below)"
        )

    # Greedy runs: replayed like the witness; an LRU label is recounted; a run that beats the objective refutes OPTIMAL.
    for index, greedy in enumerate(cert.get("greedy", [])):
        what = f"greedy[{index}]"
        run = runs.arrays_of(greedy["run"])
        greedy_misses = count.replay(capacity, run, f"{what}.run", forced)
        require(
            greedy_misses == greedy["misses"],
            f"{what}: the run replays to {greedy_misses} misses, but misses is {greedy['misses']}",
        )
        require(
            greedy_misses >= optimum,
            f"{what}: {greedy_misses} misses is below the fewest possible, {optimum}: impossible",
        )
        require(
            status != "OPTIMAL" or greedy_misses >= objective,
            f"{what}: a legal run with {greedy_misses} misses, fewer than the claimed optimum {objective}",
        )
        if greedy["policy"] == "lru" and capacity is not None and not forced:
            lru = count.recount("lru", capacity)
            require(
                greedy_misses == lru,
                f"{what} is labelled 'lru', but LRU misses {lru} times here (recounted), not {greedy_misses}",
            )
            label = f"label recounted here: LRU misses {lru} times"
        else:
            label = "label not checked (informational; not part of the verdict)"
        gap = (
            f"{greedy_misses - objective} more than the witness"
            if greedy_misses > objective
            else "no more than the witness"
        )
        say(f"{what} {greedy['policy']!r}: run replayed, {greedy_misses} misses ({gap}); {label}")

    supported = objective == optimum and bound == objective
    if cpsat is not None:
        # A certificate made with the solvers claims OPTIMAL only when their records say so too.
        supported = (
            supported
            and cpsat["status"] == "OPTIMAL"
            and z3 is not None
            and z3["at_objective"] == "sat"
            and z3["below_objective"] == "unsat"
        )
    require(
        status == "FEASIBLE" or supported, f"status is {status}, but the records support FEASIBLE"
    )
    expected = claim_statement(model, capacity, status, objective, bound, routing, hosts, admission)
    require(
        cert["claim"]["statement"] == expected,
        f"claim.statement does not match the model and numbers; expected: {expected!r}",
    )
    basis = basis_of(capacity, status, admission)
    require(
        cert.get("basis") in (None, basis, legacy_basis(basis)),
        f"basis does not state what the verdict rests on; expected: {basis!r}",
    )
    say(
        f"status {status}: what the records support; claim: scope 'this instance', statement matches the model and the numbers"
    )

    for line in basis:
        say(f"relied on: {line}")
    for line in certifier_records(cert):
        say(f"not relied on: {line}")
    for line in labels_not_checked(cert):
        say(f"not checked: {line}")
    if status == "OPTIMAL" and capacity is None:
        say(
            f"VERIFIED OPTIMAL on this instance only: the witness has {objective} misses and the compulsory floor, computed here, is {floor}."
        )
    elif status == "OPTIMAL" and forced:
        say(
            f"VERIFIED OPTIMAL on this instance only, for caches that admit every block they fetch and keep the running request's: the witness has {objective} "
            "misses (replayed here) = Belady's rule with forced admission recounted here; that none has fewer rests on Belady's "
            "theorem with the running request's blocks pinned (stated above; not proved in Lean)."
        )
    elif status == "OPTIMAL":
        say(
            f"VERIFIED OPTIMAL on this instance only: the witness has {objective} misses (replayed here) = Belady's MIN recounted here; "
            "that none has fewer rests on Belady's theorem and the flat relaxation (stated above)."
        )
    else:
        say(
            f"VERIFIED as FEASIBLE only: a run with {objective} misses (replayed here); optimality on this instance is not claimed (recorded bound {bound})."
        )


def _check_file_hash(
    named: dict[str, Any], instance, instance_path: str, file_format: str | None, require
) -> str:
    """Check ``instance.sha256`` (the canonical JSON of the input as certified) where it can be:
    against a ``pyverify.instance/1`` file, whose every field the canonical JSON covers. A trace's
    canonical JSON also names the path it was read from (its ``source``), so there the field is
    printed as not checked, never as a fact."""
    recorded = named["sha256"]
    if file_format != reader.INSTANCE_FORMAT:
        return (
            f"instance.sha256 {recorded}: not checked (the canonical JSON of the input as "
            "certify read it, which names the path it was read from; "
            f"{instance_path} is identified by its content digest above)"
        )
    found = reader.canonical_sha256(instance)
    require(
        recorded == found,
        f"instance.sha256 is {recorded}, but {instance_path} hashes to {found} "
        "(its canonical JSON): the content is the one certified, but the instance file is not "
        "(its name, description or source differ), or the recorded hash is false",
    )
    return f"instance.sha256 {found} matches (the canonical JSON of {instance_path})"


def _caches_read(model: str, routing: str, hosts: int | None, instance, require) -> np.ndarray:
    """The cache each request reads: the pool, the instance's own routing, or round-robin over ``hosts``."""
    n = int(instance.offsets.size - 1)
    if model == "pooled":
        require(routing == "given" and hosts is None, "a pooled certificate names no routing")
        return np.zeros(n, dtype=np.int64)
    if routing == "round-robin":
        require(hosts is not None, "cache_model.hosts: round-robin routing needs a host count")
        return np.arange(n, dtype=np.int64) % hosts
    require(
        hosts is None,
        "cache_model.hosts: only for round-robin routing (given routing uses the instance's hosts)",
    )
    given = digest.routing_of(instance)
    require(given is not None, "per-host certificate, but the instance gives no routing")
    return np.asarray(given, dtype=np.int64)


#: The reading flags the checker's own reader applies to a Mooncake JSONL trace (as
#: :mod:`pyverify.inputs.mooncake` does); an input read with any other flag reaches the checker
#: as the canonical instance certify writes beside the certificate.
OWN_READING_FLAGS = ("allow_unsorted", "source_block_size")


def reading_of(cert: dict[str, Any], reading: dict[str, Any]) -> dict[str, Any]:
    """The reading flags the certificate records (its schema checked their shapes), each
    overridden by a flag in ``reading`` that is set (``None``, ``False`` and ``()`` are not)."""
    flags = dict(cert["instance"].get("read_with", {}))
    flags.update(
        {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in reading.items()
            if value not in (None, False, ())
        }
    )
    return flags


def canonical_path(cert: dict[str, Any], cert_path: str) -> str | None:
    """The canonical instance the certificate names (``instance.canonical_file``), beside it."""
    name = cert["instance"].get("canonical_file")
    if name is None:
        return None
    return os.path.join("" if cert_path == "-" else os.path.dirname(cert_path), name)


def read_certified(
    cert: dict[str, Any],
    cert_path: str,
    instance_path: str,
    say: Callable[[str], None],
    canonical_at: str | None = None,
    **reading: Any,
):
    """``(instance, form, path read)``, read by the checker's own reader
    (:mod:`pyverify.trusted.reader`): the canonical instance the certificate names, else
    ``instance_path`` read as the certificate records."""
    flags = reading_of(cert, reading)
    canonical = canonical_path(cert, cert_path)
    if canonical is not None:
        canonical = canonical_at or canonical
        if not os.path.isfile(canonical):
            raise located(
                cert_path,
                "instance.canonical_file",
                f"names {canonical!r}, which is not "
                "a file (certify writes it beside the certificate: keep the two together)",
            )
        instance, form = reader.read_instance(canonical)
        if form != reader.INSTANCE_FORMAT:
            raise located(
                canonical,
                None,
                f"not a {reader.INSTANCE_FORMAT} document (instance.canonical_file)",
            )
        say(
            f"instance {canonical}: the canonical instance certify wrote beside the certificate "
            "(instance.canonical_file), read by the checker's own reader"
        )
        if instance_path != canonical and not _same_file(instance_path, canonical):
            say(
                f"instance {instance_path}: not read; the checker read the canonical instance "
                "written by certify, whose content digest is checked against the certificate below "
                "(the digest is the identity)"
            )
        given = reading_of({"instance": {}}, reading)
        if given:
            say(
                f"reading flags {_flags_text(given)}: not applied (the canonical instance is read "
                "as it stands)"
            )
        return instance, form, canonical
    other = [key for key in flags if key not in OWN_READING_FLAGS]
    if other:
        flag = "--" + other[0].replace("_", "-")
        raise located(
            cert_path,
            f"instance.read_with.{other[0]}",
            "the trusted checker reads "
            f"{reader.INSTANCE_FORMAT} files and Mooncake JSONL as they stand; an input "
            f"read with {flag} reaches it as the canonical instance certify writes beside "
            "the certificate (instance.canonical_file), and this certificate names none: "
            "certify again",
        )
    instance, form = reader.read_instance(
        instance_path, flags.get("allow_unsorted", False), flags.get("source_block_size")
    )
    if flags:
        say(
            f"instance {instance_path}: read with {_flags_text(flags)} "
            "(as 'pyverify trace import' reads it)"
        )
    return instance, form, instance_path


def _same_file(first: str, second: str) -> bool:
    try:
        return first != "-" and os.path.samefile(first, second)
    except OSError:
        return False


def _flags_text(flags: dict[str, Any]) -> str:
    """Reading flags as command-line flags."""
    words = []
    for key, value in flags.items():
        flag = f"--{key.replace('_', '-')}"
        if value is True:
            words.append(flag)
        elif key == "rag_lengths":  # one flag per side file, as given on the command line
            words += [f"{flag} {item}" for item in value]
        else:
            words.append(f"{flag} {','.join(value) if isinstance(value, list) else value}")
    return " ".join(words)


def read_instance(cert: dict[str, Any], cert_path: str, instance_path: str, **reading: Any):
    """The instance :func:`verify` checks the certificate against (read as it reads it)."""
    return read_certified(cert, cert_path, instance_path, lambda line: None, None, **reading)[0]


def validate_schema(data: Any, path: str, schema: dict[str, Any]) -> None:
    """One line naming the first (most relevant) schema violation; integers are strict here
    (``1.0`` is not one, as every reader of pyverify holds)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    strict = base.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    )
    validator = jsonschema.validators.extend(base, type_checker=strict)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
        ).lstrip(".")
        raise located(path, where or "(top level)", error.message)


def verify_quiet(cert_path: str, instance_path: str) -> tuple[int, list[str]]:
    """Run :func:`verify` collecting its lines (for tests and for certify's self-check)."""
    lines: list[str] = []
    status = verify(cert_path, instance_path, lines.append)
    return status, lines
