"""The trusted checker for ``pyverify.certificate/1`` files (``pyverify verify``).

This is the part to read. It imports no solver, no searcher
(``pyverify.certify``) and not the simulator: it replays the witness from the
rules themselves (``pyverify/certify/placement.py``, rules 1-4):

1. every cache starts empty;
2. a request's ``h`` hit blocks are resident in the cache it reads, and its
   next block (if any) is not (longest resident prefix); the rest are misses;
3. after the request, that cache holds what it held plus the request's own
   blocks, minus ``dropped`` (each dropped block must be one of those): a
   block enters only with a request that fetched it there; other caches are
   unchanged;
4. with a capacity ``C``, the cache then holds at most ``C`` blocks;
5. only if ``cache_model.admission`` is ``forced``: none of the request's
   first ``min(k, C)`` blocks is dropped (every block it hit or fetched is
   admitted and held when it ends; a longer chain's blocks beyond ``C`` are
   computed, not cached). Absent, admission is ``bypass`` and rule 5 is off.

What it trusts: its own short reader (:mod:`pyverify.trusted.reader`, stdlib
``json``) for a ``pyverify.instance/1`` file or a Mooncake JSONL trace -- every
other input reaches it as the canonical instance certify writes beside the
certificate (``instance.canonical_file``), so no fast parser of
:mod:`pyverify.inputs` reads what it checks -- and jsonschema for the
certificate's shape (the long per-request run arrays are type-checked here by
a plain loop).

What it proves itself: the witness is a legal run with ``objective`` misses
(an upper bound), and the compulsory floor (distinct (cache, block) pairs) is a
lower bound for every run. Uncapacitated, OPTIMAL is accepted only when the
objective equals that floor. Capacitated, it recounts Belady's MIN on each
cache's flat block sequence (:mod:`pyverify.trusted.recount`, its own short
implementation) and accepts OPTIMAL only when the witness has exactly that
many misses; a recorded bound above the recount is refused. That MIN's count
is the optimum rests on Belady's theorem and the flat relaxation, both
kernel-checked in Lean (``min_misses_le``, ``prefix_run_is_flat_run``), and on
recount.py counting what Lean's MIN defines (tested, not proved): the output
says so (:func:`basis_of`). With one cache per host, the recount is the sum
over hosts of MIN on each host's flat sequence; that no run of the per-host
caches misses fewer in total is kernel-checked too
(``fleet_misses_ge_per_host_min``, hosts numbered 0 to n - 1). Certificates made with the solvers must
also record CP-SAT OPTIMAL and Z3 unsat at ``objective - 1`` to be OPTIMAL.

What it does not check: the solver records (``solvers.cp-sat``, ``solvers.z3``,
and the name, version and time of ``solvers.min``). No solver runs here, so a
record of a run that never happened reads the same as a real one. They are
checked only not to contradict the witness and the bound (a contradiction
refuses the certificate), never relied on, and printed as "reported by the
certifier, not re-checked" (:func:`certifier_records`), never as facts.

Forced admission: the lower bound is the checker's own forced-admission
recount (:func:`pyverify.trusted.recount.forced_misses`: Belady's rule with the
running request's blocks pinned), and OPTIMAL means the witness, a legal run
by rules 1-5, has exactly that many misses. That no forced run misses fewer
rests on Belady's theorem with its exchange argument applied to the pinned
blocks (argued in pyverify/sim/forced_min.py, tested against exhaustive
search), not on a Lean proof; the output says so. Solver records of a forced
certificate name ``admission: forced`` in their problem, so a bypass record
cannot stand in for one.

Greedy runs are replayed like the witness (by rule 5 too in a forced certificate). One labelled ``lru`` is recounted
(:func:`pyverify.trusted.recount.lru_misses`); other labels are printed as
unchecked and are not part of the verdict; a replayed run with fewer misses
than a claimed optimum refutes it.

Packed certificates (``pyverify.certificate/2``, for traces of millions of
references): the witness is four flat arrays (:mod:`pyverify.trusted.packed`
decodes and type-checks them), the instance is read as arrays
(:mod:`pyverify.inputs.arrays_load`) and named by its content digest
(:mod:`pyverify.trusted.array_digest`), and the replay, floor and recounts run
on arrays (:mod:`pyverify.trusted.array_check`, :mod:`pyverify.trusted.array_recount`):
the same rules and the same refusals, word for word, held equal to the plain
code here and in recount.py by Hypothesis tests (tests/test_array_check.py);
the basis says so. Every other check below is shared.

Every check prints one line; the first failure prints ``FAILED: reason`` and
:func:`verify` returns 1. Malformed files raise :class:`UserError` (exit 2).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any, Callable

from pyverify.errors import CheckFailed, UserError, located
from pyverify.trusted import digest, reader, recount

CERTIFICATE_FORMAT = "pyverify.certificate/1"
#: A certificate whose witness is packed into flat arrays (:mod:`pyverify.trusted.packed`), for runs of millions of
#: references; it is checked by the same rules, on arrays (:mod:`pyverify.trusted.array_check`).
PACKED_CERTIFICATE_FORMAT = "pyverify.certificate/2"
CERTIFICATE_FORMATS = (CERTIFICATE_FORMAT, PACKED_CERTIFICATE_FORMAT)


#: The largest integer a certificate may hold (the schema's bound): signed 64 bits, as the array
#: checker holds it.
MAX_INTEGER = 2**63 - 1


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


def basis_of(
    capacity: int | None, status: str, admission: str = "bypass", packed: bool = False
) -> list[str]:
    """The reliance statement for a certificate of this kind (certify writes it; the checker recomputes it).

    The solver records are not part of it: nothing here re-runs a solver (see :func:`certifier_records`).
    ``packed``: a ``pyverify.certificate/2``, replayed and recounted on arrays (:mod:`pyverify.trusted.array_check`,
    :mod:`pyverify.trusted.array_recount`), which tests hold equal to the plain code the statements name."""
    basis = _basis(capacity, status, admission)
    if packed:
        basis = [
            line.replace("recounted here by pyverify/trusted/recount.py", PACKED_RECOUNT)
            for line in basis
        ]
    return basis


#: How a packed certificate's basis names its recount.
PACKED_RECOUNT = (
    "recounted here on arrays by pyverify/trusted/array_recount.py (held equal to pyverify/trusted/recount.py "
    "by tests, not proved)"
)


def _basis(capacity: int | None, status: str, admission: str) -> list[str]:
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


def replay(
    chains, caches, capacity: int | None, run: dict[str, Any], what: str, forced: bool = False
) -> int:
    """Replay a run by rules 1-4 (and 5 if ``forced``) and return its misses; raise CheckFailed on the first illegal step."""
    n = len(chains)
    for key in ("cache_of", "hit_blocks", "dropped"):
        if len(run[key]) != n:
            raise CheckFailed(
                f"{what}.{key} has {len(run[key])} entries, the instance has {n} requests"
            )
    held: dict[int, set[int]] = {}  # rule 1: every cache starts empty
    misses = 0
    for t, chain in enumerate(chains):
        q, h, dropped = run["cache_of"][t], run["hit_blocks"][t], run["dropped"][t]
        if q != caches[t]:
            raise CheckFailed(
                f"{what}.cache_of[{t}] is {q}, but request {t} reads cache {caches[t]}"
            )
        if h > len(chain):
            raise CheckFailed(
                f"{what}.hit_blocks[{t}] is {h}, but request {t} has only {len(chain)} blocks"
            )
        resident = held.get(q, set())
        for j in range(h):
            if chain[j] not in resident:
                raise CheckFailed(
                    f"{what}.hit_blocks[{t}]: block {chain[j]} counted as a hit but not held by cache {q}"
                )
        if h < len(chain) and chain[h] in resident:
            raise CheckFailed(
                f"{what}.hit_blocks[{t}]: block {chain[h]} is held by cache {q}, so the hit prefix is longer than {h}"
            )
        if len(set(dropped)) != len(dropped):
            raise CheckFailed(f"{what}.dropped[{t}] repeats a block")
        fetched = set(chain[h:])
        for b in dropped:
            if b not in resident and b not in fetched:
                raise CheckFailed(
                    f"{what}.dropped[{t}]: cache {q} drops block {b}, which it neither held nor fetched"
                )
        if forced:  # rule 5: the request's first min(k, C) blocks are held when it ends
            kept, gone = (chain if capacity is None else chain[:capacity]), set(dropped)
            for j, b in enumerate(kept):
                if b in gone:
                    how = "hit" if j < h else "fetched"
                    raise CheckFailed(
                        f"{what}.dropped[{t}]: cache {q} drops block {b}, which request {t} {how}: "
                        "forced admission holds every block of the request (up to the capacity) when it ends"
                    )
        resident.update(fetched)  # rule 3: what it held plus what it fetched ...
        resident.difference_update(dropped)  # ... minus what it lets go
        if capacity is not None and len(resident) > capacity:
            raise CheckFailed(
                f"{what}.dropped[{t}]: cache {q} would hold {len(resident)} blocks, capacity is {capacity}"
            )
        held[q] = resident
        misses += len(chain) - h
    return misses


RUN_KEYS = ("cache_of", "hit_blocks", "dropped")


def is_packed(run: Any) -> bool:
    """A run in packed form (:mod:`pyverify.trusted.packed`): it names its encoding."""
    return isinstance(run, dict) and "encoding" in run


def validate_certificate(cert: Any, cert_path: str) -> None:
    """The JSON Schema, with the long per-request arrays of runs checked here by a plain loop.

    jsonschema visits every array item as an object (minutes for a trace's
    witness); the schema still describes them, and this check is the same:
    non-negative integers, and lists of them for ``dropped``.
    """
    runs = []
    if isinstance(cert, dict):
        if isinstance(cert.get("witness"), dict):
            runs.append(("witness", cert["witness"]))
        if isinstance(cert.get("greedy"), list):
            runs += [
                (f"greedy[{i}].run", g["run"])
                for i, g in enumerate(cert["greedy"])
                if isinstance(g, dict) and isinstance(g.get("run"), dict)
            ]
    saved = []
    for _, run in runs:
        if is_packed(
            run
        ):  # the schema sees each array's dtype and length; its base64 (megabytes) is decoded later
            saved.append(
                {
                    key: field["base64"]
                    for key, field in run.items()
                    if isinstance(field, dict) and isinstance(field.get("base64"), str)
                }
            )
            for key in saved[-1]:
                run[key]["base64"] = ""
            continue
        saved.append({key: run[key] for key in RUN_KEYS if isinstance(run.get(key), list)})
        for key in saved[-1]:
            run[key] = []
    try:
        validate_schema(cert, cert_path, certificate_schema())
    finally:
        for (_, run), arrays in zip(runs, saved):
            if is_packed(run):
                for key, text in arrays.items():
                    run[key]["base64"] = text
            else:
                run.update(arrays)
    for (where, run), arrays in zip(runs, saved):
        if is_packed(run):
            continue  # decoded and type-checked by pyverify.trusted.packed
        for key, values in arrays.items():
            for index, value in enumerate(values):
                if key == "dropped":
                    if type(value) is not list:
                        raise located(
                            cert_path, f"{where}.{key}[{index}]", "is not a list of block ids"
                        )
                    if not all(type(b) is int and 0 <= b <= MAX_INTEGER for b in value):
                        raise located(
                            cert_path,
                            f"{where}.{key}[{index}]",
                            "holds something other "
                            "than a non-negative integer block id "
                            f"(at most {MAX_INTEGER})",
                        )
                elif type(value) is not int or not 0 <= value <= MAX_INTEGER:
                    raise located(
                        cert_path,
                        f"{where}.{key}[{index}]",
                        f"is {value!r}, not a non-negative integer (at most {MAX_INTEGER})",
                    )


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
    fmt = cert["format"]
    if fmt == PACKED_CERTIFICATE_FORMAT:
        from pyverify.trusted.array_check import ArrayCounts
        from pyverify.trusted.packed import unpack

        if "content_sha256" not in cert["instance"]:
            raise located(
                cert_path,
                "instance.content_sha256",
                f"is missing: a {fmt} names its instance by its content",
            )
        if "greedy" in cert:
            raise located(
                cert_path,
                "greedy",
                f"is not part of a {fmt} (its witness is the only run it records)",
            )
        if "sha256" in cert["instance"]:  # read as arrays: no canonical JSON to check it by
            raise located(
                cert_path,
                "instance.sha256",
                f"is not part of a {fmt} (it names its instance by content_sha256)",
            )
        witness = unpack(
            cert["witness"], cert_path, "witness"
        )  # malformed arrays are refused before the instance is read
    elif is_packed(cert["witness"]):
        raise located(
            cert_path,
            "witness.encoding",
            f"a packed witness belongs in a {PACKED_CERTIFICATE_FORMAT}, not a {fmt}",
        )
    say(f"certificate {cert_path}: {fmt}, matches its JSON Schema")
    own = read_already is not None and "canonical_file" not in cert["instance"]
    if fmt == PACKED_CERTIFICATE_FORMAT and own:
        instance, file_format = read_already, None  # certify's own arrays: no canonical JSON here
    else:
        instance, file_format, instance_path = read_certified(
            cert, cert_path, instance_path, say, canonical_at, **reading
        )
    witness = cert["witness"] if fmt != PACKED_CERTIFICATE_FORMAT else witness
    try:
        counts = PlainCounts
        if fmt == PACKED_CERTIFICATE_FORMAT:
            counts = _counts_on_arrays if isinstance(instance, reader.Instance) else ArrayCounts
        _verify(cert, instance, instance_path, say, counts, witness, file_format)
    except CheckFailed as failure:
        say(f"FAILED: {failure}")
        return 1
    return 0


class PlainCounts:
    """What the checker counts on an instance, in plain Python: the replay, the floor and the recounts (the reference)."""

    def __init__(self, instance, caches: list[int]):
        self.chains, self.caches = instance.chains, caches
        self.n_requests, self.references = len(self.chains), sum(len(c) for c in self.chains)

    def replay(self, capacity: int | None, run: dict[str, Any], what: str, forced: bool) -> int:
        return replay(self.chains, self.caches, capacity, run, what, forced)

    def floor(self) -> int:
        return len({(q, b) for q, chain in zip(self.caches, self.chains) for b in chain})

    def min_misses(self, capacity: int) -> int:
        return recount.min_misses(self.chains, self.caches, capacity)

    def forced_misses(self, capacity: int) -> int:
        return recount.forced_misses(self.chains, self.caches, capacity)

    def lru_misses(self, capacity: int) -> int:
        return recount.lru_misses(self.chains, self.caches, capacity)


def _verify(
    cert: dict[str, Any],
    instance,
    instance_path: str,
    say: Callable[[str], None],
    counts=PlainCounts,
    witness: Any = None,
    file_format: str | None = None,
) -> None:
    """The checks, on ``counts(instance, caches)`` (:class:`PlainCounts`, or :class:`~pyverify.trusted.array_check.ArrayCounts`
    for a packed ``witness``). ``file_format``: the input format's key
    (:mod:`pyverify.inputs.load`), None when read as arrays."""

    def require(condition: bool, reason: str) -> None:
        if not condition:
            raise CheckFailed(reason)

    named = cert["instance"]
    if "content_sha256" in named:
        # The identity is the content (pyverify.content/1), so the same trace in another format verifies;
        # instance.sha256 (the certified file's canonical JSON) is informational.
        plain = isinstance(instance, reader.Instance)
        identity = digest.content_sha256(instance) if plain else _array_digest(instance)
        require(
            named["content_sha256"] == identity,
            f"instance.content_sha256 is {named['content_sha256']}, but the content of {instance_path} "
            f"hashes to {identity}: the certificate is for another instance",
        )
        key, words = (
            "content_sha256",
            f"content sha256 {identity} matches (pyverify.content/1, any format)",
        )
        file_hash = None
        if "sha256" in named:
            file_hash = _check_file_hash(named, instance, instance_path, file_format, require)
    else:  # certificates written before content digests: the canonical JSON names the instance
        identity = reader.canonical_sha256(instance)
        require(
            named["sha256"] == identity,
            f"instance.sha256 is {named['sha256']}, but {instance_path} hashes to {identity}: the certificate is for another instance",
        )
        key, words, file_hash = "instance_sha256", f"sha256 {identity} matches", None
    if key == "instance_sha256" or (file_hash is not None and file_format == INSTANCE_FILE):
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
    count = counts(instance, caches)
    size = "uncapacitated" if capacity is None else f"capacity {capacity} blocks per cache"
    admits = (
        ", forced admission (every block a request hits or fetches is held when it ends)"
        if forced
        else ", bypass allowed"
    )
    say(
        f"cache model: {model}, {size}, offline-optimal eviction{admits}, {caches_phrase(model, routing, hosts)}, starting empty"
    )

    problem = {
        key: identity,
        "model": model,
        "capacity": capacity,
        **({"admission": FORCED} if forced else {}),
    }
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
    misses = count.replay(
        capacity, cert["witness"] if witness is None else witness, "witness", forced
    )
    references = count.references
    require(
        misses == objective, f"the witness replays to {misses} misses, but objective is {objective}"
    )
    rules = "rules 1-5 (forced admission)" if forced else "rules 1-4"
    say(
        f"witness: replayed {count.n_requests} requests by {rules}: {references - misses} hits, {misses} misses = objective {objective}"
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
        optimum = count.forced_misses(capacity)
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
        optimum = count.min_misses(capacity)
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
        greedy_misses = count.replay(capacity, greedy["run"], f"{what}.run", forced)
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
            lru = count.lru_misses(capacity)
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
    basis = basis_of(capacity, status, admission, packed=counts is not PlainCounts)
    require(
        cert.get("basis") in (None, basis),
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


#: The format key of a ``pyverify.instance/1`` file (:mod:`pyverify.inputs.load`), the file
#: ``instance.sha256`` names.
INSTANCE_FILE = reader.INSTANCE_FORMAT


def _check_file_hash(
    named: dict[str, Any], instance, instance_path: str, file_format: str | None, require
) -> str:
    """Check ``instance.sha256`` (the canonical JSON of the input as certified) where it can be:
    against a ``pyverify.instance/1`` file, whose every field the canonical JSON covers. A trace's
    canonical JSON also names the path it was read from (its ``source``), so there the field is
    printed as not checked, never as a fact."""
    recorded = named["sha256"]
    if file_format != INSTANCE_FILE:
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


def _caches_read(model: str, routing: str, hosts: int | None, instance, require) -> list[int]:
    """The cache each request reads: the pool, the instance's own routing, or round-robin over ``hosts``."""
    if model == "pooled":
        require(routing == "given" and hosts is None, "a pooled certificate names no routing")
        return [0] * instance.n_requests
    if routing == "round-robin":
        require(hosts is not None, "cache_model.hosts: round-robin routing needs a host count")
        return [t % hosts for t in range(instance.n_requests)]
    require(
        hosts is None,
        "cache_model.hosts: only for round-robin routing (given routing uses the instance's hosts)",
    )
    given = (
        instance.routing if hasattr(instance, "routing") else instance.hosts
    )  # an Instance, or a ColumnarTrace
    require(given is not None, "per-host certificate, but the instance gives no routing")
    return list(given) if hasattr(instance, "routing") else given.tolist()


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


def _counts_on_arrays(instance, caches: list[int]):
    """The array checker's counts on the chains of an instance the checker's reader read."""
    from pyverify.trusted.array_check import counts_on_chains

    return counts_on_chains(instance.chains, caches)


def _array_digest(trace) -> str:
    from pyverify.trusted.array_digest import content_sha256_arrays

    return content_sha256_arrays(trace)


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


__all__ = [
    "CERTIFICATE_FORMAT",
    "NOT_RECHECKED",
    "CheckFailed",
    "UserError",
    "basis_of",
    "certifier_records",
    "claim_statement",
    "read_instance",
    "replay",
    "verify",
    "verify_quiet",
]
