"""The bridge: relate instance certificates to the general Lean theorems,
without merging the two.

For each certificate it reports three separate things:

(a) the **instance fact**: what was certified, on which file (by SHA-256), by
    which solvers, with what status; re-checked by the trusted checker
    (:mod:`pyverify.trusted.check`) before anything else is said;
(b) the **general fact**: which registered Lean theorem, its statement as Lean
    prints it and its axioms (none), proved for all request lists;
(c) the **link**: whether this instance and this cache model meet the
    theorem's hypotheses, the count the theorem predicts for this instance
    (computed here from the instance, not taken from the certificate), and
    whether the certificate's objective equals it.

A capacitated or warm-start certificate is "not covered by the theorem",
which is not an error. The bridge *refuses* (raises :class:`CheckFailed`)
when a certificate's scope is anything but its own instance, when it fails
verification, when the registry has been tampered with or does not match
what Lean prints for the current sources, when the Lean check has not passed,
or when a certificate names a theorem that does not exist, that is about
another cache model than the certificate's (pooled or per host, capacity or
none, eviction and admission, openings or block chains: recorded for every
theorem in :mod:`pyverify.lean.scope`), or whose hypotheses it does not meet.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from pyverify.errors import CheckFailed, UserError, located
from pyverify.lean import scope
from pyverify.inputs.model import (
    Instance,
    first_prefix_violation,
    instance_sha256,
    read_json,
    validate_schema,
)

# MIN's count for the lower bound is the trusted checker's own recount (O(n log n) per cache): the bridge is
# checker-side, and none of this is the searcher's code (pyverify.optimal.belady) that produced the certificate.
from pyverify.trusted.recount import flat_min_misses, min_misses  # noqa: F401  (flat_min_misses: re-exported)
from pyverify.trusted.digest import content_sha256
from pyverify.trusted.check import NOT_RECHECKED, certifier_records, read_instance

REGISTRY_FORMAT = "pyverify.theorems/2"
THIS_INSTANCE = "this instance"

#: The count theorems for each cache model: what the cache that keeps every
#: block misses. Opening theorems are about chains of one block; the
#: block-chain theorems (when the registry has them) cover longer chains:
#: pooled caches (distinct block ids) and per-host caches (distinct (host,
#: block) pairs), both on prefix-closed chains, which ``hypotheses_for`` checks
#: on the whole instance.
OPENING_THEOREMS = {
    "pooled": ("pooled_misses_eq_distinct",),
    "per-host": ("per_host_misses_eq_distinct_pairs",),
}
BLOCK_THEOREMS = {
    "pooled": ("pooled_block_misses_eq_distinct",),
    "per-host": ("per_host_block_misses_eq_distinct_pairs",),
}
#: The other half of an uncapacitated certificate's claim (the fewest misses of
#: any demand run): no demand run, of any policy and capacity, starting empty,
#: misses fewer than that count. Candidates per model, in order; the bridge
#: cites the first registered one whose recorded scope is the certificate's
#: model (an opening is a chain of one block, so the chain bounds cover
#: openings too). Without one, a certificate is not covered.
LOWER_BOUND_THEOREMS = {
    "pooled": ("demand_misses_ge_distinct", "prefix_misses_ge_distinct_blocks"),
    "per-host": ("fleet_misses_ge_distinct_host_blocks",),
}
NO_LOWER_BOUND = (
    "no registered theorem shows that no demand cache of this model misses fewer than that count "
    "(the count theorem is about the cache that keeps every block only)"
)
#: The theorems behind the lower bound for capacitated certificates: prefix
#: runs are flat runs, and no flat demand cache misses fewer times than MIN.
#: Without the second in the registry, it is the cited paper theorem.
FLAT_THEOREM = "prefix_run_is_flat_run"
MIN_THEOREM = "min_misses_le"
#: Per-host capacitated certificates: summed over the hosts, each host's cache
#: reading exactly its own chains, no fleet of per-host caches misses fewer than
#: the sum of per-host MIN counts. Cited only when every request's cache is one
#: of hosts 0..n-1 (the theorem's `routed_below`), checked on the instance.
PER_HOST_MIN_THEOREM = "fleet_misses_ge_per_host_min"
#: Forced-admission certificates (``cache_model.admission: forced``: every block a request hits or
#: fetches is held while it runs and when it ends). On one pooled cache whose chains have 1 to C blocks
#: each, no such run misses fewer blocks than forced MIN on the chains read twice each. The witness,
#: replayed by the checker, attains the objective; so when the objective is that count it is the forced
#: optimum on that instance. Otherwise the theorem bounds it only.
PINNED_THEOREM = "pinned_misses_ge_forced_min"
FORCED_ADMISSION = "forced"
NO_PINNED_THEOREM = (
    "no registered theorem shows that no forced-admission cache with the running request pinned misses "
    "fewer than a count computed from the instance"
)
CITED_MIN = (
    "Belady's MIN (L. A. Belady, IBM Systems Journal 5(2), 1966; proved in Mattson et al., "
    "IBM Systems Journal 9(2), 1970): no flat demand cache of C blocks misses fewer times than MIN"
)


# --- the registry -------------------------------------------------------------


@dataclass(frozen=True)
class Theorem:
    """One entry of ``lean/theorems.json``."""

    name: str
    module: str
    statement: str
    statement_sha256: str
    axioms: tuple[str, ...]
    hypotheses: tuple[str, ...]
    plain: str
    #: (name, SHA-256 of its declaration's canonical text) of every declaration the type reaches
    definitions: tuple[tuple[str, str], ...] = ()
    #: the example theorem instantiating it on a concrete input, hypotheses and all (None: no hypotheses)
    applies: str | None = None
    #: the elaborated type (canonical text of the kernel's expression) and its SHA-256
    type: str = ""
    type_sha256: str = ""


def registry_schema() -> dict[str, Any]:
    import json
    from importlib import resources

    return json.loads(
        resources.files("pyverify.schemas")
        .joinpath("theorems.schema.json")
        .read_text(encoding="utf-8")
    )


def load_registry(path: str | Path) -> dict[str, Theorem]:
    """Load the registry; refuse any entry whose statement does not hash to its recorded SHA-256."""
    data = read_json(path)
    validate_schema(data, path, registry_schema())
    printed = trusted_definitions(data, path)
    theorems: dict[str, Theorem] = {}
    for index, entry in enumerate(data["theorems"]):
        for name, digest in entry["definitions"].items():
            if printed.get(name) != digest:
                raise CheckFailed(
                    f"{path}: theorems[{index}] ({entry['name']}): trusted definition {name}: its SHA-256 is not "
                    "the one recorded with its printed form in `definitions`: the registry was altered"
                )
        digest = hashlib.sha256(entry["statement"].encode("utf-8")).hexdigest()
        if digest != entry["statement_sha256"]:
            raise CheckFailed(
                f"{path}: theorems[{index}] ({entry['name']}): statement_sha256 does not match the statement text "
                f"(recorded {entry['statement_sha256'][:12]}..., the text hashes to {digest[:12]}...): the registry was altered"
            )
        digest = hashlib.sha256(entry["type"].encode("utf-8")).hexdigest()
        if digest != entry["type_sha256"]:
            raise CheckFailed(
                f"{path}: theorems[{index}] ({entry['name']}): type_sha256 does not match the type text "
                f"(recorded {entry['type_sha256'][:12]}..., the text hashes to {digest[:12]}...): the registry was altered"
            )
        if entry["axioms"]:
            raise CheckFailed(
                f"{path}: theorems[{index}] ({entry['name']}): depends on axioms {entry['axioms']}; a theorem counts only without axioms"
            )
        theorems[entry["name"]] = Theorem(
            name=entry["name"],
            module=entry["module"],
            statement=entry["statement"],
            statement_sha256=entry["statement_sha256"],
            axioms=tuple(entry["axioms"]),
            hypotheses=tuple(entry["hypotheses"]),
            plain=entry["plain"],
            definitions=tuple(sorted(entry["definitions"].items())),
            applies=entry["applies"],
            type=entry["type"],
            type_sha256=entry["type_sha256"],
        )
    return theorems


def trusted_definitions(data: dict[str, Any], path: str | Path) -> dict[str, str]:
    """Name -> SHA-256 of the registry's trusted definitions, refusing any whose
    printed form does not hash to its recorded SHA-256."""
    found: dict[str, str] = {}
    for index, item in enumerate(data["definitions"]):
        digest = hashlib.sha256(item["printed"].encode("utf-8")).hexdigest()
        if digest != item["sha256"]:
            raise CheckFailed(
                f"{path}: definitions[{index}] ({item['name']}): sha256 does not match the printed form: the registry was altered"
            )
        found[item["name"]] = item["sha256"]
    return found


def check_registry_against_lean(
    registry: dict[str, Theorem], registry_path: str | Path, lean_result
) -> None:
    """Refuse unless the Lean check passed and printed exactly the registry's statements."""
    if not lean_result.ok:
        raise CheckFailed(
            f"the Lean check has not passed on the current sources: {lean_result.failures[0]}"
        )
    printed = {theorem.name: theorem for theorem in lean_result.theorems}
    for name, theorem in registry.items():
        if name not in printed:
            raise CheckFailed(
                f"{registry_path}: theorem {name}: not among the theorems the Lean check accepted"
            )
        if printed[name].statement != theorem.statement:
            raise CheckFailed(
                f"{registry_path}: theorem {name}: statement differs from what Lean prints for the current sources"
            )
        if printed[name].type != theorem.type:
            raise CheckFailed(
                f"{registry_path}: theorem {name}: elaborated type differs from the one the kernel replay read "
                "for the current sources"
            )
        if printed[name].axioms:
            raise CheckFailed(f"theorem {name}: Lean reports axioms {printed[name].axioms}")
        now = {d: lean_result.definitions[d].sha256 for d in printed[name].definitions}
        if now != dict(theorem.definitions):
            changed = sorted(
                d
                for d in set(now) | set(dict(theorem.definitions))
                if now.get(d) != dict(theorem.definitions).get(d)
            )
            raise CheckFailed(
                f"{registry_path}: theorem {name}: trusted definitions differ from the replayed environment of the current sources: "
                + ", ".join(changed)
            )


# --- one certificate ------------------------------------------------------------


@dataclass
class Hypothesis:
    text: str
    holds: bool
    detail: str = ""


@dataclass
class Bound:
    """A capacitated certificate against the flat lower bound: what Lean checked
    (``prefix_run_is_flat_run``, and ``min_misses_le`` when registered; without
    it MIN's optimality rests on the cited paper theorem; for per-host caches
    on hosts 0..fleet-1 also ``fleet_misses_ge_per_host_min``, the bound as a
    sum over hosts), and the bound the bridge counts from the instance."""

    theorem: str
    capacity: int
    flat_min: int
    objective: int
    min_theorem: str | None = None  # `min_misses_le` when registered
    #: `fleet_misses_ge_per_host_min`, for a per-host certificate whose caches are hosts 0..fleet-1
    per_host_theorem: str | None = None
    fleet: int | None = None

    @property
    def holds(self) -> bool:
        return self.objective >= self.flat_min

    @property
    def theorems(self) -> list[str]:
        return (
            [self.theorem]
            + ([self.min_theorem] if self.min_theorem else [])
            + ([self.per_host_theorem] if self.per_host_theorem else [])
        )

    def to_json(self) -> dict[str, Any]:
        checked = (
            "every run of a capacitated prefix cache, flattened, is a flat demand-paging run "
            f"with no more misses (`{self.theorem}`)"
        )
        if self.min_theorem:
            checked += f"; no flat demand cache of C blocks misses fewer times than MIN (`{self.min_theorem}`)"
        if self.per_host_theorem:
            checked += (
                f"; on hosts 0..{self.fleet - 1}, each host's cache reading exactly the chains routed to it, "
                "no run of the per-host caches misses fewer blocks in total than the sum over the hosts of "
                f"MIN on each host's flattened chains (`{self.per_host_theorem}`)"
            )
        return {
            "theorem": self.theorem,
            "theorems": self.theorems,
            "capacity": self.capacity,
            "flat_min_misses": self.flat_min,
            "certificate_objective": self.objective,
            "holds": self.holds,
            "machine_checked": checked + " (Lean, kernel-checked)",
            "counted_here": "MIN's misses on this instance, recounted by the trusted checker's code "
            "(pyverify/trusted/recount.py `flat_min_misses`; generated Lean examples tie it to Lean's "
            "`min_misses`)",
            "cited": None if self.min_theorem else CITED_MIN,
        }


@dataclass
class Link:
    covered: bool
    hypotheses: list[Hypothesis]
    predicted: int | None = None
    predicted_by: str = ""
    agrees: bool | None = None
    why_not: str = ""
    bound: Bound | None = None
    #: the theorem whose count ``predicted`` is (covered certificates only)
    predicting_theorem: str | None = None
    #: the theorem proving that no demand run misses fewer than ``predicted`` (covered certificates only)
    lower_bound_theorem: str | None = None
    #: what a covered link establishes, in words, when it is not the uncapacitated count (forced admission)
    meaning: str = ""


@dataclass
class BridgeEntry:
    certificate: str
    instance_file: str
    certificate_data: dict[str, Any]
    verify_lines: list[str]
    theorems: list[Theorem]
    link: Link
    named_theorem: str | None = None

    # The three parts, as plain data (for --json and the report).
    def instance_fact(self) -> dict[str, Any]:
        cert = self.certificate_data
        solvers = cert["solvers"]
        return {
            "certificate": self.certificate,
            "instance": {
                "name": cert["instance"]["name"],
                "file": self.instance_file,
                "sha256": cert["instance"]["sha256"],
                "content_sha256": cert["instance"].get("content_sha256"),
            },
            "cache_model": cert["cache_model"],
            "claim": cert["claim"],
            "status": cert["status"],
            "objective": cert["objective"],
            "bound": cert["bound"],
            # What the certificate says about its solver runs: the checker did not re-run them.
            "solver_records": {
                "checked": NOT_RECHECKED,
                "records": {
                    name: None
                    if record is None
                    else {
                        k: v
                        for k, v in record.items()
                        if k
                        in (
                            "name",
                            "version",
                            "status",
                            "objective",
                            "bound",
                            "at_objective",
                            "below_objective",
                            "wall_time_s",
                        )
                    }
                    for name, record in solvers.items()
                },
                "lines": certifier_records(cert),
            },
            "verified": True,
            "verify_summary": self.verify_lines[-1] if self.verify_lines else "",
        }

    def general_fact(self) -> list[dict[str, Any]]:
        return [
            {
                "theorem": t.name,
                "module": t.module,
                "statement": t.statement,
                "statement_sha256": t.statement_sha256,
                "type_sha256": t.type_sha256,
                "axioms": list(t.axioms),
                "plain": t.plain,
                "scope": "every request list (proved in Lean, checked by the kernel)",
                "about": scope.about(t.name),
                "trusted_definitions": [
                    {"name": name, "sha256": digest} for name, digest in t.definitions
                ],
                "applies": t.applies,
            }
            for t in self.theorems
        ]

    def link_json(self) -> dict[str, Any]:
        link = self.link
        return {
            "covered": link.covered,
            "hypotheses": [
                {"hypothesis": h.text, "holds": h.holds, "detail": h.detail}
                for h in link.hypotheses
            ],
            "predicted_misses": link.predicted,
            "predicted_by": link.predicted_by,
            "predicted_by_theorem": link.predicting_theorem,
            "no_demand_run_misses_fewer_by_theorem": link.lower_bound_theorem,
            "certificate_objective": self.certificate_data["objective"],
            "agrees": link.agrees,
            "not_covered_because": link.why_not or None,
            "lower_bound": None if link.bound is None else link.bound.to_json(),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "instance_fact": self.instance_fact(),
            "general_fact": self.general_fact(),
            "link": self.link_json(),
        }


def certificate_scope(raw: Any, cert_path: str | Path) -> None:
    """Refuse a certificate that claims anything beyond its own instance.

    Checked on the raw JSON, before the schema, so an overclaim is named as
    such rather than as a schema violation."""
    scope = (
        raw.get("claim", {}).get("scope")
        if isinstance(raw, dict) and isinstance(raw.get("claim"), dict)
        else None
    )
    if scope != THIS_INSTANCE:
        raise CheckFailed(
            f"{cert_path}: claim.scope: {scope!r} overclaims: a certificate may speak only about {THIS_INSTANCE!r}"
        )


def hypotheses_for(
    cert: dict[str, Any], instance: Instance, openings_only: bool
) -> list[Hypothesis]:
    """The theorems' hypotheses, checked against this certificate's model and instance."""
    model = cert["cache_model"]
    violation = first_prefix_violation(instance.chains)
    longest = max(len(chain) for chain in instance.chains)
    found = [
        Hypothesis(
            "demand caches (a block enters a cache only by a miss there)",
            model["eviction"] == "offline-optimal",
            "the run fetches on demand and chooses what to keep",
        ),
        Hypothesis(
            "every cache starts empty",
            model["warm_start"] is False,
            f"warm_start {model['warm_start']}",
        ),
        Hypothesis(
            "uncapacitated",
            model["capacity"] is None,
            "no capacity"
            if model["capacity"] is None
            else f"capacity {model['capacity']} blocks per cache",
        ),
        Hypothesis(
            "prefix-closed chains",
            violation is None,
            "checked here" if violation is None else violation.field,
        ),
    ]
    if openings_only:
        found.append(
            Hypothesis(
                "requests are openings (chains of one block)",
                longest == 1,
                f"longest chain {longest}",
            )
        )
    if model.get("admission", "bypass") == FORCED_ADMISSION:
        # The count theorems are about the bypass optimum; forced certificates are linked by
        # forced_link, to the pinned theorem.
        found.append(
            Hypothesis(
                "bypass admission (a fetched block may be dropped at once)",
                False,
                "admission forced",
            )
        )
    if model["model"] == "per-host":
        caches, fleet = caches_read(cert, instance)
        in_range = len(caches) == len(instance.chains) and all(0 <= host < fleet for host in caches)
        how = (
            "round-robin" if model.get("routing") == "round-robin" else "as routed by the instance"
        )
        found.append(Hypothesis(f"hosts numbered 0..{fleet - 1}, {how}", in_range, "checked here"))
    return found


def capacitated_bound(
    cert: dict[str, Any], instance: Instance, registry: dict[str, Theorem]
) -> Bound | None:
    """The flat lower bound for a capacitated demand-cache certificate that
    starts empty (pooled: one cache; per-host: one per host, each bounded on its
    own chains), or None if the certificate is not of that kind."""
    model = cert["cache_model"]
    if model["capacity"] is None or model["warm_start"] or model["eviction"] != "offline-optimal":
        return None
    if FLAT_THEOREM not in registry:
        return None
    caches, fleet = caches_read(cert, instance)
    flat = min_misses(
        instance.chains, caches, model["capacity"]
    )  # sum over the caches of MIN on each one's flat blocks
    min_theorem = MIN_THEOREM if MIN_THEOREM in registry else None
    # The per-host theorem's hypothesis `routed_below fleet requests`, checked here: every cache is a host below fleet.
    per_host = (
        model["model"] == "per-host"
        and min_theorem is not None
        and PER_HOST_MIN_THEOREM in registry
        and len(caches) == len(instance.chains)
        and all(0 <= cache < fleet for cache in caches)
    )
    return Bound(
        FLAT_THEOREM,
        model["capacity"],
        flat,
        cert["objective"],
        min_theorem,
        PER_HOST_MIN_THEOREM if per_host else None,
        fleet if per_host else None,
    )


def caches_read(cert: dict[str, Any], instance: Instance) -> tuple[list[int], int]:
    """The cache each request reads and the number of caches, as the trusted
    checker reads them: one pool; or one cache per host, as the instance routes
    (hosts 0..hosts-1) or round-robin over the certificate's ``hosts``."""
    model = cert["cache_model"]
    if model["model"] == "pooled":
        return [0] * len(instance.chains), 1
    if model.get("routing") == "round-robin":
        hosts = model["hosts"]
        return [t % hosts for t in range(len(instance.chains))], hosts
    return list(instance.routing or ()), instance.fleet_size


def predicted_misses(
    model: str, instance: Instance, caches: list[int] | None = None
) -> tuple[int, str]:
    """What the theorem says the count is, computed from the instance alone
    (per host: with ``caches``, the cache each request reads, else the instance's routing)."""
    if model == "pooled":
        return len({block for chain in instance.chains for block in chain}), "distinct block ids"
    routing = caches if caches is not None else (instance.routing or ())
    pairs = {(host, block) for chain, host in zip(instance.chains, routing) for block in chain}
    return len(pairs), "distinct (host, block) pairs"


def choose_theorems(
    model: str, instance: Instance, registry: dict[str, Theorem]
) -> tuple[list[str], bool]:
    """The theorem names that speak to this model and instance shape, and whether they need openings."""
    openings = all(len(chain) == 1 for chain in instance.chains)
    block_names = BLOCK_THEOREMS.get(model, ())
    if not openings and block_names and all(name in registry for name in block_names):
        return list(block_names), False
    return list(OPENING_THEOREMS[model]), True


def lower_bound_theorem(
    cert: dict[str, Any], instance: Instance, registry: dict[str, Theorem]
) -> str | None:
    """The registered theorem proving that no demand run of the certificate's model misses fewer than
    the keep-everything count (``LOWER_BOUND_THEOREMS``), or None if the registry has none for it."""
    model = scope.certificate_model(cert, instance.chains)
    for name in LOWER_BOUND_THEOREMS.get(cert["cache_model"]["model"], ()):
        if (
            name in registry
            and name in scope.SCOPES
            and scope.mismatch(scope.SCOPES[name], model) is None
        ):
            return name
    return None


def named_theorem_scope(
    cert_path, named: str, cert: dict[str, Any], instance: Instance, registry: dict[str, Theorem]
) -> scope.Scope:
    """The scope of the theorem a certificate names, refusing (one line) a name that is not
    registered, has no recorded scope, or is about another model than the certificate's."""
    if named not in registry:
        raise CheckFailed(
            f"{cert_path}: theorem: names {named!r}, which is not in the theorem registry ({', '.join(sorted(registry))})"
        )
    if named not in scope.SCOPES:
        raise CheckFailed(
            f"{cert_path}: theorem: names {named!r}, whose model pyverify/lean/scope.py does not record: "
            "the bridge cannot tell whether it is about this certificate"
        )
    about = scope.SCOPES[named]
    model = scope.certificate_model(cert, instance.chains)
    reason = scope.mismatch(about, model)
    if reason is not None:
        raise CheckFailed(
            f"{cert_path}: theorem: names {named!r}, which is not about this certificate's model "
            f"({model.describe()}): {reason}"
        )
    return about


def link_certificate(
    cert_path: str | Path,
    instance_path: str | Path,
    registry: dict[str, Theorem],
    verify: Callable[[str, str], tuple[int, list[str]]] | None = None,
    raw: dict[str, Any] | None = None,
) -> BridgeEntry:
    """Verify one certificate and relate it to the registry (see the module docstring).

    ``raw`` is the certificate's JSON when the caller has read it already."""
    if verify is None:
        from pyverify.trusted.check import verify_quiet as verify
    if raw is None:
        raw = read_json(cert_path)
    certificate_scope(raw, cert_path)
    status, lines = verify(str(cert_path), str(instance_path))
    if status != 0:
        failure = next(
            (line for line in lines if line.startswith("FAILED")), lines[-1] if lines else "failed"
        )
        raise CheckFailed(
            f"{cert_path}: fails `pyverify verify` against {instance_path}: {failure}"
        )
    instance = read_instance(raw, str(cert_path), str(instance_path))  # read as verify read it
    model = raw["cache_model"]["model"]
    if raw["cache_model"].get("admission") == FORCED_ADMISSION:
        names, link = forced_link(cert_path, raw, instance, registry)
        theorems = [registry[name] for name in names]
        return BridgeEntry(
            str(cert_path), str(instance_path), raw, lines, theorems, link, raw.get("theorem")
        )

    named = raw.get("theorem")
    names, openings_only = choose_theorems(model, instance, registry)
    lower_bound = lower_bound_theorem(raw, instance, registry)
    if lower_bound is not None:
        names.append(lower_bound)
    if named is not None:
        named_scope = named_theorem_scope(cert_path, named, raw, instance, registry)
        names = [named] + [name for name in names if name != named]
        if named_scope.conclusion == scope.COUNT:
            openings_only = named_scope.requests == scope.OPENINGS
    missing = [name for name in names if name not in registry]
    if missing:
        raise CheckFailed(
            f"theorem registry lacks {missing[0]!r}, which the bridge relates {model} certificates to"
        )

    hypotheses = hypotheses_for(raw, instance, openings_only)
    failed = [h for h in hypotheses if not h.holds]
    if failed and named is not None and named_scope.conclusion == scope.COUNT:
        raise CheckFailed(
            f"{cert_path}: theorem: links to {named!r}, but the certificate does not meet its hypothesis "
            f"'{failed[0].text}' ({failed[0].detail}): the theorem does not cover it"
        )
    bound = capacitated_bound(raw, instance, registry)
    if named == PER_HOST_MIN_THEOREM and (bound is None or bound.per_host_theorem is None):
        raise CheckFailed(
            f"{cert_path}: theorem: links to {named!r}, but not every request's cache is a host "
            f"0..n-1 with {MIN_THEOREM!r} registered: the theorem does not cover it"
        )
    if bound is not None:
        names = names + [name for name in bound.theorems if name not in names]
        if not bound.holds:
            raise CheckFailed(
                f"{cert_path}: objective {raw['objective']} is below {bound.flat_min}, the misses of Belady's MIN on "
                f"the flattened blocks with {bound.capacity} blocks per cache, a lower bound by "
                f"{' and '.join(bound.theorems)}"
            )
    theorems = [registry[name] for name in names]
    if failed:
        link = Link(
            covered=False,
            hypotheses=hypotheses,
            why_not=f"'{failed[0].text}' does not hold ({failed[0].detail})",
            bound=bound,
        )
    elif lower_bound is None:
        link = Link(covered=False, hypotheses=hypotheses, why_not=NO_LOWER_BOUND, bound=bound)
    else:
        # The count comes from the first theorem that states one (a named lower bound may come first).
        counting = next(
            (
                name
                for name in names
                if name in scope.SCOPES and scope.SCOPES[name].conclusion == scope.COUNT
            ),
            names[0],
        )
        predicted, unit = predicted_misses(model, instance, caches_read(raw, instance)[0])
        link = Link(
            covered=True,
            hypotheses=hypotheses,
            predicted=predicted,
            predicted_by=unit,
            agrees=predicted == raw["objective"],
            predicting_theorem=counting,
            lower_bound_theorem=lower_bound,
        )
        if not link.agrees:
            raise CheckFailed(
                f"{cert_path}: objective {raw['objective']} differs from the {predicted} {unit} that {counting} "
                f"predicts for this instance"
            )
    return BridgeEntry(str(cert_path), str(instance_path), raw, lines, theorems, link, named)


def forced_hypotheses(cert: dict[str, Any], instance: Instance) -> list[Hypothesis]:
    """The hypotheses of ``pinned_misses_ge_forced_min``, checked against a forced certificate and its instance."""
    model = cert["cache_model"]
    capacity = model["capacity"]
    lengths = [len(chain) for chain in instance.chains]
    shortest, longest = (min(lengths), max(lengths)) if lengths else (0, 0)
    pooled = model["model"] == "pooled"
    return [
        Hypothesis(
            "demand caches (a block enters a cache only by a miss there)",
            model["eviction"] == "offline-optimal",
            "the run fetches on demand and chooses what to keep",
        ),
        Hypothesis(
            "every cache starts empty",
            model["warm_start"] is False,
            f"warm_start {model['warm_start']}",
        ),
        Hypothesis(
            "forced admission, the running request pinned",
            model.get("admission") == FORCED_ADMISSION,
            f"admission {model.get('admission', 'bypass')}",
        ),
        Hypothesis(
            "one pooled cache",
            pooled,
            "pooled"
            if pooled
            else f"model {model['model']}: no theorem about pinned per-host caches is registered",
        ),
        Hypothesis(
            "every chain has 1 to C blocks (pinned whole)",
            capacity is not None and shortest >= 1 and longest <= capacity,
            f"chains of {shortest} to {longest} blocks, C = {capacity}",
        ),
    ]


def twice_forced_min_misses(chains, capacity: int) -> int:
    """Lean's ``forced_min_misses`` on ``List.flatten (List.map twice chains)``, the bound of
    ``pinned_misses_ge_forced_min``: the checker's own forced recount with every block of the chains read
    twice as its own request (a request of one block pins just that block: the flat forced rule)."""
    from pyverify.trusted.recount import forced_misses

    blocks = [[block] for chain in chains for block in (*chain, *chain)]
    return forced_misses(blocks, [0] * len(blocks), capacity) if blocks else 0


def forced_link(
    cert_path, raw: dict[str, Any], instance: Instance, registry: dict[str, Theorem]
) -> tuple[list[str], Link]:
    """The link of a forced-admission certificate: covered by ``pinned_misses_ge_forced_min`` when the
    model meets its hypotheses and its bound, counted here, is the objective; not covered otherwise."""
    named = raw.get("theorem")
    if named is not None:
        named_theorem_scope(cert_path, named, raw, instance, registry)
    hypotheses = forced_hypotheses(raw, instance)
    failed = [h for h in hypotheses if not h.holds]
    if named == PINNED_THEOREM and failed:
        raise CheckFailed(
            f"{cert_path}: theorem: links to {named!r}, but the certificate does not meet its hypothesis "
            f"'{failed[0].text}' ({failed[0].detail}): the theorem does not cover it"
        )
    # Forced runs are demand runs: the bypass bound holds of them too, as for any capacitated certificate.
    bound = capacitated_bound(raw, instance, registry)
    if bound is not None and not bound.holds:
        raise CheckFailed(
            f"{cert_path}: objective {raw['objective']} is below {bound.flat_min}, the misses of Belady's MIN on "
            f"the flattened blocks with {bound.capacity} blocks per cache, a lower bound by "
            f"{' and '.join(bound.theorems)}"
        )
    names = list(bound.theorems) if bound is not None else []
    if named is not None and named not in names:
        names.insert(0, named)
    if PINNED_THEOREM not in registry:
        return names, Link(False, hypotheses, why_not=NO_PINNED_THEOREM, bound=bound)
    if failed:  # the theorem says nothing of this certificate: not cited
        why = f"'{failed[0].text}' does not hold ({failed[0].detail})"
        return names, Link(False, hypotheses, why_not=why, bound=bound)
    names = [PINNED_THEOREM] + [name for name in names if name != PINNED_THEOREM]
    capacity = raw["cache_model"]["capacity"]
    predicted = twice_forced_min_misses(instance.chains, capacity)
    unit = f"forced MIN's misses with {capacity} blocks on the chains read twice each"
    objective = raw["objective"]
    if objective < predicted:
        raise CheckFailed(
            f"{cert_path}: objective {objective} is below {predicted}, {unit}, a lower bound by {PINNED_THEOREM}"
        )
    if objective > predicted:
        why = (
            f"the theorem's bound, {unit} ({predicted}), is below the objective {objective}: the bound "
            "does not show that no forced run misses fewer than the objective"
        )
        return names, Link(False, hypotheses, predicted, unit, False, why, bound)
    meaning = (
        f"The instance meets the hypotheses of `{PINNED_THEOREM}`: no pooled cache of {capacity} blocks with "
        f"forced admission, the running request pinned, misses fewer than {predicted} blocks ({unit}, "
        f"counted by the bridge from the instance file); the certificate's witness, replayed by the checker, "
        f"misses {objective}: they agree, so on this instance {objective} is the forced-admission optimum."
    )
    link = Link(
        True,
        hypotheses,
        predicted,
        unit,
        True,
        bound=bound,
        predicting_theorem=PINNED_THEOREM,
        lower_bound_theorem=PINNED_THEOREM,
        meaning=meaning,
    )
    return names, link


# --- many certificates -------------------------------------------------------------


#: The files a search directory offers as instances: instance JSON and the trace formats a certificate can be made from.
INSTANCE_PATTERNS = ("*.json", "*.jsonl", "*.parquet", "*.csv")


def find_instance(cert_path: Path, raw: dict[str, Any], search: Iterable[Path]) -> Path:
    """The instance file the certificate names: by its content digest (``instance.content_sha256``), as ``verify``
    matches it, so the same trace in another format is found; older certificates by their canonical SHA-256."""
    named = raw.get("instance") if isinstance(raw.get("instance"), dict) else {}
    if isinstance(named.get("content_sha256"), str):
        key, wanted, identity = "instance.content_sha256", named["content_sha256"], content_sha256
    else:
        key, wanted, identity = "instance.sha256", named.get("sha256"), instance_sha256
    if not isinstance(wanted, str):
        raise located(
            cert_path,
            "instance.sha256",
            "missing: the certificate must name its instance by SHA-256",
        )
    # The search directories come first; the path the certificate records is
    # only a hint, written by whoever made the file, so it is opened last and
    # only when it is a non-empty regular file (never a device or /proc entry).
    candidates: list[Path] = []
    for directory in search:
        if directory.is_dir():
            candidates.extend(
                sorted(path for pattern in INSTANCE_PATTERNS for path in directory.glob(pattern))
            )
    recorded = named.get("path")
    if isinstance(recorded, str):
        candidates.append(Path(recorded))
    for candidate in candidates:
        if _is_plain_file(candidate):
            try:
                if identity(read_instance(raw, str(cert_path), str(candidate))) == wanted:
                    return candidate
            except UserError:
                continue
    where = ", ".join(str(d) for d in search)
    raise CheckFailed(f"{cert_path}: {key}: no instance file in {where} hashes to {wanted}")


def _is_plain_file(path: Path) -> bool:
    """A regular file with a size (procfs files report size 0 and may block on read)."""
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def certificate_files(proofs: Path) -> list[Path]:
    if not proofs.is_dir():
        raise located(proofs, None, "no such directory (expected the certificates, e.g. proofs/)")
    files = sorted(proofs.glob("*.json"))
    if not files:
        raise located(proofs, None, "no certificate files (*.json) here")
    return files


@dataclass
class BridgeReport:
    registry_path: str
    entries: list[BridgeEntry] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "registry": self.registry_path,
            "certificates": [entry.to_json() for entry in self.entries],
        }


def run_bridge(
    proofs: Path, registry_path: Path, instance_dirs: list[Path], lean_result
) -> BridgeReport:
    """Bridge every certificate in ``proofs`` (refusing on the first problem)."""
    registry = load_registry(registry_path)
    check_registry_against_lean(registry, registry_path, lean_result)
    report = BridgeReport(str(registry_path))
    for cert_path in certificate_files(proofs):
        raw = read_json(cert_path)
        if not isinstance(raw, dict):
            raise located(cert_path, None, "expected a JSON object (a pyverify.certificate/1)")
        certificate_scope(raw, cert_path)
        instance_path = find_instance(cert_path, raw, instance_dirs)
        report.entries.append(link_certificate(cert_path, instance_path, registry, raw=raw))
    return report


def lean_check_for(registry: Path, quiet: bool = True):
    """Run the Lean check on the project the registry belongs to."""
    import sys

    from pyverify.lean import runner

    project = registry.parent
    if not (project / "lakefile.toml").is_file():
        raise located(registry, None, "no Lean project (lakefile.toml) beside this registry")
    emit = (lambda line: None) if quiet else (lambda line: print(line, file=sys.stderr))
    return runner.check(project, emit=emit)
