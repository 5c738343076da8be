"""``pyverify audit``: the whole check of one instance, as a reviewer wants it.

Steps, in order, each timed:

1. validate the instance (schema, routing, prefix closure) and hash it;
2. sweep pooled against per-host hit rate over fleet sizes, with the chart;
3. certify the fewest misses with CP-SAT and confirm with Z3, pooled and (when
   the instance gives a routing) per-host, writing each certificate;
4. verify every certificate with the small trusted checker;
5. run the Lean check (kernel, axioms, registry);
6. bridge: relate each certificate to the theorems, keeping the three parts
   (instance fact, general fact, link) apart;
7. write the report directory: ``report.md``, ``report.html``, the chart
   (``sweep.png``, ``sweep.svg``), ``certificates/*.json`` and ``summary.json``.

The directory is built beside the target and renamed into place at the end,
so a failed audit leaves no partial report.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pyverify import __version__
from pyverify.lean.bridge import check_registry_against_lean, link_certificate, load_registry
from pyverify.errors import CheckFailed, UserError
from pyverify.inputs.load import load_described
from pyverify.inputs.records import ImportOptions, reading_record
from pyverify.inputs.model import instance_sha256, safe_file_stem
from pyverify.outdir import MARKER, StagedDirectory
from pyverify.stdin_once import stdin_read_once
from pyverify.reports.markdown import (
    bridge_markdown,
    guarded,
    limits_markdown,
    markdown_to_html,
    table,
    trust_markdown,
)
from pyverify.sim.routing import default_policy, describe_hosts
from pyverify.project import DEFAULT_REGISTRY
from pyverify.trusted.check import NOT_RECHECKED

STEPS = ("validate", "sweep", "memory limit", "certify", "verify", "lean check", "bridge", "report")


@dataclass
class StepRecord:
    name: str
    seconds: float
    result: str


@dataclass
class Audit:
    instance_path: str
    registry_path: Path
    time_limit: float
    on_start: Callable[[str], None] = lambda name: None
    on_done: Callable[[StepRecord], None] = lambda record: None
    steps: list[StepRecord] = field(default_factory=list)

    def timed(self, name: str, work: Callable[[], Any], describe: Callable[[Any], str]) -> Any:
        self.on_start(name)
        started = time.perf_counter()
        value = work()
        record = StepRecord(name, time.perf_counter() - started, describe(value))
        self.steps.append(record)
        self.on_done(record)
        return value


def run_audit(
    instance_path: str,
    output: Path,
    registry_path: Path = Path(DEFAULT_REGISTRY),
    time_limit: float = 60.0,
    on_start: Callable[[str], None] = lambda name: None,
    on_done: Callable[[StepRecord], None] = lambda record: None,
    node_tokens: int | None = None,
    node_blocks: int | None = None,
    reading: ImportOptions = ImportOptions(),
) -> dict[str, Any]:
    """Run every step and write the report directory; return the summary.

    ``reading``: how the input is read (``trace import``'s flags); the
    certificates record it, so the checker reads the input the same way.

    ``on_start(name)`` is called as each step (or sub-step, such as one
    model's certificate) begins, ``on_done(record)`` as each step ends."""
    from pyverify.certify.certificate import certify, write_certificate
    from pyverify.trusted.check import verify_quiet
    from pyverify.lean.bridge import lean_check_for
    from pyverify.lean import runner, runtime
    from pyverify.sim.sweep import default_fleets_for, sweep

    if runner.choose_backend("auto") == "wheel":
        runtime.find_library()  # no Lean runtime: one line naming the lean extra, before any work

    audit = Audit(instance_path, registry_path, time_limit, on_start, on_done)
    output = Path(output)
    # The instance and the registry are inputs: a report folder that holds either is never replaced.
    # Every step below reads the instance again: standard input ('-') is read once and kept for them.
    with (
        StagedDirectory(output, "audit", inputs=[instance_path, registry_path]) as stage,
        stdin_read_once([instance_path]),
    ):
        staging = stage.path
        instance = audit.timed(
            "validate",
            lambda: load_described(instance_path, reading).instance,
            lambda i: (
                f"{i.n_requests} requests, {i.n_references} block references, {describe_hosts(i)}, prefix-closed"
            ),
        )
        digest = instance_sha256(instance)

        policy = default_policy(instance)
        fleets = default_fleets_for(instance)
        rows = audit.timed(
            "sweep",
            lambda: sweep(instance, fleets, policy),
            lambda r: f"{len(r)} fleet sizes, {policy} routing",
        )
        from pyverify.reports.charts import fleet_sweep_chart

        fleet_sweep_chart(
            rows,
            staging / "sweep",
            title=f"{instance.name}: hit rate as the fleet grows (uncapacitated, {policy} routing)",
        )

        memory = audit.timed(
            "memory limit",
            lambda: memory_limit(instance, node_tokens, node_blocks, instance_path),
            lambda m: (
                f"{m['fleet_size']} hosts x {m['node_capacity_blocks']:,} blocks, hit rate on this instance: "
                f"global pool {m['local_vs_global']['global_lru']:.4f} LRU, {m['local_vs_global']['global_opt']:.4f} MIN; "
                f"local caches {m['local_vs_global']['local_lru']:.4f} LRU, {m['local_vs_global']['local_opt']:.4f} MIN"
            ),
        )

        models = ["pooled"] + (["per-host"] if instance.routing is not None else [])
        cert_dir = staging / "certificates"
        cert_paths: dict[str, Path] = {}

        def certify_all() -> dict[str, dict]:
            done = {}
            for model in models:
                on_start(f"certify {model} (CP-SAT, then Z3)")
                result = certify(
                    instance,
                    model,
                    None,
                    time_limit,
                    [],
                    use_z3=True,
                    instance_path=instance_path,
                    read_with=reading_record(reading),
                )
                cert_paths[model] = (
                    cert_dir / f"{safe_file_stem(instance.name, digest)}.{model}.json"
                )
                write_certificate(result.certificate, cert_paths[model], instance_path, instance)
                done[model] = result.certificate
            return done

        certificates = audit.timed(
            "certify",
            certify_all,
            lambda c: (
                "on this instance: "
                + "; ".join(
                    f"{m} {cert['status']} {cert['objective']} (bound {cert['bound']})"
                    for m, cert in c.items()
                )
            ),
        )

        def verify_all() -> dict[str, list[str]]:
            lines = {}
            for model, path in cert_paths.items():
                status, said = verify_quiet(str(path), instance_path)
                if status != 0:
                    raise CheckFailed(f"{path.name}: the trusted checker rejected it: {said[-1]}")
                lines[model] = said
            return lines

        verified = audit.timed(
            "verify",
            verify_all,
            lambda v: f"{len(v)} certificate(s) verified by the trusted checker",
        )

        lean = audit.timed(
            "lean check",
            lambda: lean_check_for(registry_path),
            lambda r: (
                f"{len(r.modules)} modules, {len(r.theorems)} theorems, no axioms"
                if r.ok
                else f"FAILED: {r.failures[0]}"
            ),
        )

        def bridge_all():
            registry = load_registry(registry_path)
            check_registry_against_lean(registry, registry_path, lean)
            entries = [
                link_certificate(path, instance_path, registry) for path in cert_paths.values()
            ]
            for entry in entries:  # name the file where it will be, not the staging copy
                entry.certificate = str(output / Path(entry.certificate).relative_to(staging))
            return entries

        entries = audit.timed(
            "bridge",
            bridge_all,
            lambda e: ", ".join(
                f"{x.certificate_data['cache_model']['model']}: "
                + ("covered, agrees" if x.link.covered and x.link.agrees else "not covered")
                for x in e
            ),
        )

        from pyverify.lean.bridge import BridgeReport

        bridge = BridgeReport(str(registry_path), entries)
        on_start("report")
        report_record = StepRecord(
            "report", 0.0, "report.md, report.html, sweep.png/.svg, certificates/, summary.json"
        )
        audit.steps.append(report_record)  # listed in the summary it is part of; timed below
        summary = build_summary(
            audit,
            instance,
            digest,
            rows,
            certificates,
            cert_paths,
            verified,
            lean,
            bridge,
            policy,
            staging,
        )
        summary["memory_limit"] = memory
        markdown = render_markdown(audit, instance, digest, rows, lean, bridge, policy, summary)
        (staging / "report.md").write_text(markdown, encoding="utf-8")
        (staging / "report.html").write_text(
            markdown_to_html(markdown, f"pyverify audit: {instance.name}"), encoding="utf-8"
        )
        (staging / "summary.json").write_text(
            json.dumps(summary, indent=2) + "\n", encoding="utf-8"
        )
        stage.commit()
    on_done(report_record)
    return summary


def build_summary(
    audit, instance, digest, rows, certificates, cert_paths, verified, lean, bridge, policy, staging
) -> dict[str, Any]:
    return {
        "format": "pyverify.audit/1",
        "tool": {"name": "pyverify", "version": __version__},
        "instance": {
            "name": instance.name,
            "file": audit.instance_path,
            "sha256": digest,
            "requests": instance.n_requests,
            "block_references": instance.n_references,
            "hosts": instance.fleet_size,
        },
        "sweep": {"routing": policy, "rows": [row.to_json() for row in rows]},
        "certificates": {
            model: {
                "file": str(Path("certificates") / cert_paths[model].name),
                "status": cert["status"],
                "objective": cert["objective"],
                "bound": cert["bound"],
                "scope": cert["claim"]["scope"],
                "solver_times_s": {
                    "cp-sat": (cert["solvers"].get("cp-sat") or {}).get("wall_time_s"),
                    "z3": (cert["solvers"].get("z3") or {}).get("wall_time_s"),
                    "checked": NOT_RECHECKED,
                },
                "basis": cert.get("basis", []),
                "verified": True,
            }
            for model, cert in certificates.items()
        },
        "lean": {
            "ok": lean.ok,
            "backend": lean.backend,
            "version": lean.identity.version,
            "githash": lean.identity.githash,
            "theorems": [{"name": t.name, "axioms": t.axioms} for t in lean.theorems],
            "seconds": round(lean.seconds, 3),
        },
        "bridge": bridge.to_json(),
        "steps": [
            {"step": s.name, "seconds": round(s.seconds, 3), "result": s.result}
            for s in audit.steps
        ],
        "files": sorted(
            str(p.relative_to(staging))
            for p in staging.rglob("*")
            if p.is_file() and p.name != MARKER
        )
        + ["report.md", "report.html", "summary.json"],
    }


#: Mooncake's local-against-global comparison puts 3M tokens of KV cache on each node
#: (Qin et al., "Mooncake: A KVCache-centric disaggregated architecture for LLM
#: serving", FAST 2025, section 5.3.2).
NODE_TOKENS = 3_000_000
MEMORY_FLEET = 16


def memory_limit(
    instance,
    node_tokens: int | None = None,
    node_blocks: int | None = None,
    path: str | None = None,
) -> dict[str, Any]:
    """The memory-limit answers (LRU against the optimum; pooled against per-host; local against global).

    The fleet is the instance's own routing when it gives one, else 16 hosts
    round-robin; each node holds 3M tokens when blocks have a token size
    (Mooncake's setting), else an equal share of the distinct blocks.
    """
    from pyverify.optimal.curve import memory_limit_summary
    from pyverify.sim.routing import route

    if instance.routing is not None:
        fleet, routing = instance.fleet_size, list(instance.routing)
    else:
        fleet = MEMORY_FLEET
        routing = route(instance, fleet, "round-robin")
    block = instance.block_size_tokens
    distinct = len({b for chain in instance.chains for b in chain})
    if node_blocks is not None:
        node = node_blocks
    elif node_tokens is not None:
        if not block:
            raise UserError(
                f"{path or instance.name}: block_size_tokens: not given, so --node-tokens cannot be converted "
                "to blocks; use --node-blocks"
            )
        node = max(1, node_tokens // block)
    else:
        node = NODE_TOKENS // block if block else max(1, distinct // fleet)
    summary = memory_limit_summary(
        instance.chains, routing, fleet, node_capacity_blocks=node, block_size_tokens=block
    )
    summary["node_capacity_blocks"] = node
    summary["node_size_source"] = (
        "--node-blocks"
        if node_blocks is not None
        else "--node-tokens"
        if node_tokens is not None
        else "default"
    )
    summary["routing"] = "given" if instance.routing is not None else "round-robin"
    return summary


def solver_times(cert: dict[str, Any]) -> str:
    """Which solvers ran and how long, as the certificate reports it, or why none did
    (large instances are certified without them)."""
    times = cert["solver_times_s"]
    ran = [
        f"{name} {times[key]} s"
        for name, key in (("CP-SAT", "cp-sat"), ("Z3", "z3"))
        if times[key] is not None
    ]
    return (
        f"solver runs {NOT_RECHECKED}: " + ", ".join(ran)
        if ran
        else "no solver needed: witness replay and the compulsory floor"
    )


def render_markdown(audit, instance, digest, rows, lean, bridge, policy, summary) -> str:
    certs = summary["certificates"]
    parts = [
        f"# pyverify audit: {instance.name}",
        "",
        f"Instance `{audit.instance_path}`, SHA-256 `{digest}`: {instance.n_requests} requests, "
        f"{instance.n_references} block references, {describe_hosts(instance)}.",
        "",
    ]
    if instance.description:
        quoted = " ".join(
            instance.description.split()
        )  # one line, so the whole quotation stays a quotation
        parts += ["The instance file describes itself as (quoted):", "", f"> {quoted}", ""]
    parts += ["## Summary", ""]
    for model, cert in certs.items():
        parts.append(
            f"- {model}, uncapacitated, on this instance: {cert['status']} with {cert['objective']} misses "
            f"(proven bound {cert['bound']}; {solver_times(cert)}), verified by the trusted checker."
        )
    for entry in bridge.entries:
        model = entry.certificate_data["cache_model"]["model"]
        if entry.link.covered:
            parts.append(
                f"- {model}: the Lean theorem `{entry.link.predicting_theorem}` predicts {entry.link.predicted} misses for "
                f"this instance and `{entry.link.lower_bound_theorem}` that no demand cache misses fewer; the "
                "certificate agrees."
            )
        else:
            parts.append(f"- {model}: not covered by the theorem ({entry.link.why_not}).")
    parts.append(
        f"- Lean {lean.identity.version}: {len(lean.theorems)} theorems accepted by the kernel, none depends on an axiom."
    )
    parts += ["", "## Steps", ""]
    parts += table(
        ["step", "seconds", "result"], [(s.name, f"{s.seconds:.2f}", s.result) for s in audit.steps]
    )
    parts += ["", f"## Fleet sweep (simulation, {policy} routing, uncapacitated)", ""]
    parts += table(
        ["hosts", "pooled misses", "pooled hit rate", "per-host misses", "per-host hit rate"],
        [
            (
                r.fleet_size,
                r.pooled_misses,
                f"{r.pooled_hit_rate:.4f}",
                r.per_host_misses,
                f"{r.per_host_hit_rate:.4f}",
            )
            for r in rows
        ],
    )
    parts += ["", "![hit rate against fleet size](sweep.png)", ""]
    memory = summary["memory_limit"]
    parts += [
        f"## With a memory limit (simulation and Belady's MIN): one pooled cache, then {memory['fleet_size']} "
        f"per-host caches ({memory['routing']} routing)",
        "",
    ]
    from pyverify.optimal.curve import memory_limit_markdown

    parts += memory_limit_markdown(memory) + [""]
    parts += [node_size_sentence(memory, instance), ""]
    parts += [bridge_markdown(bridge, heading="##")]
    parts += [
        "## Lean check",
        "",
        f"Lean {lean.identity.version} (commit `{lean.identity.githash}`) via {lean.backend}, {lean.seconds:.1f} s.",
        "",
    ]
    parts += table(
        ["module", "seconds"],
        [(m.name, "-" if m.seconds is None else f"{m.seconds:.2f}") for m in lean.modules],
    )
    parts += ["", "```"] + [t.axioms_line for t in lean.theorems] + ["```", ""]
    parts += [trust_markdown("##")]
    parts += [limits_markdown("##")]
    return guarded("\n".join(parts))


def node_size_sentence(memory: dict[str, Any], instance) -> str:
    """Where the local-against-global node size comes from, in one sentence."""
    node = memory["node_capacity_blocks"]
    block = instance.block_size_tokens
    if memory.get("node_size_source", "default") != "default":
        return f"Each node in the local-against-global line holds {node:,} blocks, as `audit {memory['node_size_source']}` asked."
    if block:
        return (
            f"Each node in the local-against-global line holds {node:,} blocks: {NODE_TOKENS:,} tokens of KV cache "
            f"divided by {block} tokens per block, the per-node capacity of the Mooncake paper's local-against-global "
            "comparison (Qin et al., FAST 2025, section 5.3.2). `audit --node-tokens` or `--node-blocks` "
            "sets another size, and `pyverify sweep --capacity-tokens` and `budgets` try many."
        )
    return (
        f"Each node in the local-against-global line holds {node:,} blocks, an equal share of the instance's distinct "
        f"blocks over {memory['fleet_size']} hosts (the instance gives no block size in tokens, so the Mooncake "
        "paper's 3M tokens per node cannot be converted). `audit --node-blocks` sets another size."
    )
