"""The registry ``lean/theorems.json``: what the kernel accepted.

Each theorem is pinned by its elaborated type, read from the environment the
kernel replay rebuilt (a canonical text of the expression and its SHA-256:
:mod:`pyverify.lean.kernel_replay`), and by every declaration that type
reaches, each with the canonical text of its declaration (``printed``) and its
SHA-256. The statement as ``#check`` prints it is kept for readers.

Built from a check's results, compared byte for byte with the committed file
(with one readable line per difference), or written atomically."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from pyverify.errors import CheckFailed
from pyverify.lean import catalog, runtime, trust
from pyverify.lean.results import (
    CheckResult,
    TheoremResult,
    relative_to_project as _rel,
)

REGISTRY_FORMAT = "pyverify.theorems/4"
REGISTRY_FILE = "theorems.json"


def build_registry(
    identity: runtime.Identity,
    library: str,
    theorems: list[TheoremResult],
    definitions: dict[str, trust.Printed],
) -> dict:
    specs = catalog.by_name()
    entries = []
    for theorem in sorted(theorems, key=lambda t: t.name):
        spec = specs[theorem.name]
        entries.append(
            {
                "name": theorem.name,
                "module": theorem.module,
                "statement": theorem.statement,
                "statement_sha256": hashlib.sha256(theorem.statement.encode("utf-8")).hexdigest(),
                "type": theorem.type,
                "type_sha256": hashlib.sha256(theorem.type.encode("utf-8")).hexdigest(),
                "axioms": list(theorem.axioms),
                "hypotheses": list(spec.hypotheses),
                "plain": spec.plain,
                "applies": theorem.applies,
                "definitions": {name: definitions[name].sha256 for name in theorem.definitions},
            }
        )
    return {
        "format": REGISTRY_FORMAT,
        "lean_version": identity.version,
        "githash": identity.githash,
        "library": library,
        "theorems": entries,
        "definitions": [
            {"name": name, "kind": item.kind, "sha256": item.sha256, "printed": item.text}
            for name, item in sorted(definitions.items())
        ],
    }


def render_registry(registry: dict) -> str:
    return json.dumps(registry, indent=2, ensure_ascii=False) + "\n"


def registry_differences(committed_text: str | None, fresh: dict) -> list[str]:
    """Human-readable differences between the committed registry and a fresh one."""
    if committed_text is None:
        return ["no committed registry"]
    if committed_text == render_registry(fresh):
        return []
    try:
        committed = json.loads(committed_text)
    except json.JSONDecodeError as error:
        return [f"committed registry is not JSON ({error})"]
    if not isinstance(committed, dict):
        return ["committed registry is not a JSON object"]
    diffs: list[str] = []
    for key in ("format", "lean_version", "githash", "library"):
        if committed.get(key) != fresh[key]:
            diffs.append(f"{key}: committed {committed.get(key)!r}, now {fresh[key]!r}")
    diffs += definition_differences(committed.get("definitions"), fresh["definitions"])
    old = {t.get("name"): t for t in committed.get("theorems", []) if isinstance(t, dict)}
    new = {t["name"]: t for t in fresh["theorems"]}
    for name in sorted(set(old) | set(new)):
        if name not in new:
            diffs.append(f"{name}: in the committed registry but no longer registered")
        elif name not in old:
            diffs.append(f"{name}: registered but missing from the committed registry")
        else:
            for key, value in new[name].items():
                if old[name].get(key) != value:
                    if key == "type_sha256":
                        continue  # said with the type
                    if key == "type":
                        diffs.append(
                            f"{name}: elaborated type changed (SHA-256 committed "
                            f"{str(old[name].get('type_sha256'))[:12]}..., now {new[name]['type_sha256'][:12]}...)"
                        )
                    elif key == "statement":
                        diffs.append(
                            f"{name}: statement changed: committed {old[name].get(key)!r}, now {value!r}"
                        )
                    elif key == "definitions" and isinstance(old[name].get(key), dict):
                        before = old[name][key]
                        changed = sorted(
                            n for n in set(before) | set(value) if before.get(n) != value.get(n)
                        )
                        diffs.append(f"{name}: trusted definitions changed: {', '.join(changed)}")
                    elif key in ("definitions", "applies") and key not in old[name]:
                        diffs.append(f"{name}: {key}: not recorded in the committed registry")
                    else:
                        diffs.append(
                            f"{name}: {key} changed: committed {old[name].get(key)!r}, now {value!r}"
                        )
    if not diffs:
        diffs.append("formatting differs (regenerate to normalise)")
    return diffs


def definition_differences(committed, fresh: list[dict]) -> list[str]:
    """One line per trusted definition that was added, removed or printed differently."""
    if not isinstance(committed, list):
        return ["definitions: the committed registry records no trusted definitions"]
    old = {d.get("name"): d for d in committed if isinstance(d, dict)}
    new = {d["name"]: d for d in fresh}
    diffs = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            diffs.append(
                f"definition {name}: trusted in the committed registry, no longer used by any statement"
            )
        elif name not in old:
            diffs.append(
                f"definition {name}: now trusted (a statement depends on it), not in the committed registry"
            )
        elif (
            old[name].get("sha256") != new[name]["sha256"]
            or old[name].get("printed") != new[name]["printed"]
        ):
            diffs.append(
                f"definition {name} changed: SHA-256 committed {str(old[name].get('sha256'))[:12]}..., "
                f"now {new[name]['sha256'][:12]}... (its declaration in the replayed environment differs)"
            )
    return diffs


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def compare_registry(
    result: CheckResult,
    project: Path,
    library: str,
    write: bool,
    emit,
    write_to: Path | None = None,
) -> None:
    """Compare the fresh registry with ``project``'s; when ``write``, (re)write
    it in ``write_to`` (the project the user named, when ``project`` is the
    check's private copy of it)."""
    path = project / REGISTRY_FILE
    target = (write_to or project) / REGISTRY_FILE
    result.registry_path = target
    fresh = build_registry(result.identity, library, result.theorems, result.definitions)
    committed = path.read_text(encoding="utf-8") if path.is_file() else None
    diffs = registry_differences(committed, fresh)
    if not diffs:
        emit(f"registry: {_rel(path, project)} is up to date ({len(fresh['theorems'])} theorems)")
        return
    if write:
        _write_atomic(target, render_registry(fresh))
        result.registry_written = True
        emit(f"registry: wrote {_rel(path, project)} ({len(fresh['theorems'])} theorems)")
        return
    for diff in diffs:
        emit(f"  registry differs: {diff}")
    raise CheckFailed(
        f"registry {_rel(path, project)} is out of date: {diffs[0]} "
        "(run `pyverify lean registry` to regenerate it, then review and commit)"
    )
