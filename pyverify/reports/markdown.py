"""Reviewer reports: the bridge's three parts, and the audit report (Markdown and HTML).

Every generated text passes the wording guard (:mod:`pyverify.reports.wording`): an
instance result is never stated in general terms.
"""

from __future__ import annotations

from typing import Any, Sequence

from pyverify.lean import scope
from pyverify.lean.bridge import BridgeEntry, BridgeReport
from pyverify.errors import CheckFailed
from pyverify.reports.wording import overclaims

#: What the result does not show, said plainly (after the seed's own list).
LIMITS = (
    "This is one instance, not a fleet benchmark: each certificate speaks about its own instance file, named by its SHA-256, and about nothing else.",
    "The Lean theorems are the general statements; they say nothing about any particular file. The two are separate objects and this report keeps them apart.",
    "It counts misses only. It does not count the time spent moving cached work between machines, so it cannot settle on its own whether a pool is faster in practice (see `pyverify cost`).",
    "The theorems cover caches with no size limit and, with a memory limit, the fewest misses of a cache that may drop a block it has just fetched (Belady's MIN in bypass form), which a serving engine never does: an engine admits every block it fetches, so it can only miss as often or more. They model one request at a time, with no timing, no tiers and a static routing.",
    "The hit rates come from runs of this one instance; they are not a forecast for real traffic.",
)


def yes_no(flag: bool | None) -> str:
    return {True: "yes", False: "no", None: "n/a"}[flag]


def instance_identity(instance: dict) -> str:
    """How the certificate names its instance, and which of its hashes the checker compared.

    A trace's certificate is matched by its content digest; the SHA-256 of the canonical JSON it also
    carries depends on the path the trace was read from, so ``verify`` does not check it (and says so).
    """
    if instance.get("content_sha256"):
        return (
            f"content digest `{instance['content_sha256']}` (checked); "
            f"SHA-256 `{instance['sha256']}` not checked (it depends on the path read)"
        )
    return f"SHA-256 `{instance['sha256']}`"


def instance_fact_markdown(entry: BridgeEntry) -> list[str]:
    fact = entry.instance_fact()
    model = fact["cache_model"]
    size = (
        "uncapacitated"
        if model["capacity"] is None
        else f"capacity {model['capacity']} blocks per cache"
    )
    lines = [
        f"- certificate: `{fact['certificate']}`",
        f"- instance: `{fact['instance']['file']}` ({fact['instance']['name']}), {instance_identity(fact['instance'])}",
        f"- cache model: {model['model']}, {size}, starting empty, routing {model['routing']}",
        f"- claim (scope: {fact['claim']['scope']}): {fact['claim']['statement']}",
        f"- status {fact['status']} on this instance: objective {fact['objective']} misses, bound {fact['bound']}",
    ]
    records = fact["solver_records"]
    lines += [f"- {name}: not run" for name, record in records["records"].items() if record is None]
    # The certificate's word about its solver runs, said as such: the checker does not re-run a solver.
    lines += [f"- on this instance, {line}" for line in records["lines"]]
    for greedy in entry.certificate_data.get("greedy", []):
        gap = greedy["misses"] - fact["objective"]
        lines.append(
            f"- greedy `{greedy['policy']}`, on this instance: {greedy['misses']} misses ({gap} more than the witness)"
        )
    lines.append(
        f"- re-checked by the trusted checker (`pyverify verify`): {fact['verify_summary']}"
    )
    return lines


def general_fact_markdown(entry: BridgeEntry) -> list[str]:
    lines = []
    for fact in entry.general_fact():
        # Not a list item: Python-Markdown does not render a fenced block nested
        # in a list, so each statement is a paragraph and a top-level code block.
        lines += [
            f"`{fact['theorem']}` ({fact['module']}): {fact['plain']}",
            "",
            "```lean",
            f"{fact['theorem']} : {fact['statement']}",
            "```",
            "",
            f"Axioms: none. Statement SHA-256 `{fact['statement_sha256']}`.",
            "",
        ]
        about = fact.get("about")
        if (
            about
        ):  # the model the statement is about (pyverify/lean/scope.py), which the bridge matched
            lines += [
                f"About (the model the bridge matches against the certificate's): caches {about['caches']}; "
                f"{about['capacity']}; runs: {about['policy']}; requests: {about['requests']}; "
                f"states: {about['conclusion']}.",
                "",
            ]
        trusted = fact.get("trusted_definitions") or []
        if trusted:
            # What the statement means rests on these definitions: a reader checks
            # them (printed in full in the registry), not the proofs.
            lines.append(
                f"  trusted definitions ({len(trusted)}; printed in full in the registry): "
                + ", ".join(f"`{d['name']}` `{d['sha256'][:16]}`" for d in trusted)
            )
            lines.append("")
    return lines


def link_markdown(entry: BridgeEntry) -> list[str]:
    link = entry.link_json()
    lines = ["| hypothesis | holds here | detail |", "| --- | --- | --- |"]
    lines += [
        f"| {h['hypothesis']} | {yes_no(h['holds'])} | {h['detail']} |" for h in link["hypotheses"]
    ]
    lines.append("")
    if link["covered"] and entry.link.meaning:
        lines.append(entry.link.meaning)
    elif link["covered"]:
        main = entry.link.predicting_theorem or entry.theorems[0].name
        lines.append(
            f"The instance meets the hypotheses of `{main}`, so the theorem predicts "
            f"{link['predicted_misses']} misses ({link['predicted_by']}, counted by the bridge from the instance file) "
            "for the cache that keeps every block, and "
            f"`{entry.link.lower_bound_theorem}` that no demand cache misses fewer. "
            f"The certificate's objective is {link['certificate_objective']}: "
            + ("they agree." if link["agrees"] else "they DISAGREE.")
        )
    else:
        counts = [
            t.name
            for t in entry.theorems
            if (scope.about(t.name) or {}).get("conclusion") == scope.COUNT
        ]
        kind = "an exact count" if len(counts) == 1 else "exact counts"
        which = f" ({', '.join(f'`{name}`' for name in counts)}: {kind})" if counts else ""
        lines.append(
            f"Not covered by the theorem{which}: {link['not_covered_because']}. This is not an error; "
            "the certificate stands on its own for this instance."
        )
    bound = link.get("lower_bound")
    if bound:
        # Say plainly which half Lean checked and which half is a cited paper theorem.
        lines += [
            "",
            (
                f"Lower bound, {bound['capacity']} blocks per cache: the bridge counts {bound['flat_min_misses']} misses "
                f"for Belady's MIN on the flattened blocks of this instance; the certificate's objective "
                f"{bound['certificate_objective']} is not below it. "
                f"Machine-checked: {bound['machine_checked']}. "
                f"Counted here: {bound['counted_here']}."
                + (f" Not machine-checked, cited: {bound['cited']}." if bound["cited"] else "")
            ),
        ]
    return lines


def bridge_markdown(report: BridgeReport, heading: str = "##") -> str:
    parts = [
        f"{heading} Bridge: instance facts, general facts and their link",
        "",
        f"Theorem registry: `{report.registry_path}` (checked against what Lean prints for the current sources).",
        "",
    ]
    for entry in report.entries:
        title = f"{entry.certificate_data['instance']['name']}, {entry.certificate_data['cache_model']['model']}"
        parts += [f"{heading}# {title}", "", "**(a) Instance fact** (this instance only)", ""]
        parts += instance_fact_markdown(entry)
        parts += ["", "**(b) General fact** (Lean 4, kernel-checked, no axioms)", ""]
        parts += general_fact_markdown(entry)
        parts += ["**(c) Link**", ""]
        parts += link_markdown(entry)
        parts.append("")
    return guarded("\n".join(parts))


#: What a reader of a report must trust, and what not (docs/explanation/theorems.md, "What a reviewer must trust").
TRUST = (
    "The trusted checker, `pyverify/trusted/check.py` and `pyverify/trusted/recount.py`: small code that imports no solver and no simulator, and recounts every certified number from the instance file.",
    "The Lean 4.35.0 kernel, in the runtime whose SHA-256 is pinned (`pyverify/lean/runtime.py`), for the general facts.",
    "The definitions printed and hashed in `lean/theorems.json`, and that the plain words given with each theorem say what its statement says.",
    "That no option skipped Lean's kernel: the source scan (`pyverify/lean/sources.py`) refuses every option that could, and whatever could hide one from it.",
    "Not trusted, because the checker re-derives what they claim: CP-SAT, Z3, the simulator, the certifier, and the solver records a certificate carries (reported by the certifier, not re-checked).",
)


def trust_markdown(heading: str = "##") -> str:
    return (
        "\n".join([f"{heading} What you must trust", ""] + [f"- {item}" for item in TRUST]) + "\n"
    )


def limits_markdown(heading: str = "##") -> str:
    return (
        "\n".join([f"{heading} What this does not show", ""] + [f"- {limit}" for limit in LIMITS])
        + "\n"
    )


def guarded(text: str) -> str:
    """Return ``text`` if it passes the wording guard; refuse to emit it otherwise."""
    bad = overclaims(text)
    if bad:
        raise CheckFailed(
            f"report wording guard: refusing to print an instance result in general terms: {bad[0]!r}"
        )
    return text


def markdown_to_html(markdown_text: str, title: str) -> str:
    import html

    import markdown

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code"])
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
        "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.25rem .5rem}"
        # Long Lean statements wrap inside their block instead of scrolling sideways.
        "code,pre{background:#f4f4f4}pre{padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere}img{max-width:100%}</style>\n"
        f"</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines
