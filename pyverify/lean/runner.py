"""Build the Lean development, collect ``#print axioms``, maintain the registry.

``check`` does, in order:

1. reads ``lakefile.toml`` for the library name and finds its modules (the
   root ``<Lib>.lean`` and everything under ``<Lib>/``); every module must
   begin with ``prelude`` and import only modules of the library;
2. builds every module in import order: with ``lake build`` when the backend is
   ``lake``, otherwise one ``lean -o`` per module through the wheel's runtime
   (:mod:`pyverify.lean.runtime`), ``.olean`` files in a build directory on
   ``LEAN_PATH``; any error or warning (including "declaration uses 'sorry'")
   fails the check, naming the module, the line and Lean's first message;
3. runs a generated file that imports the library and, for each registered
   theorem (:mod:`pyverify.lean.catalog`), prints its statement
   (``#check @name``) and its axioms (``#print axioms name``); a theorem that
   depends on any axiom fails the check;
4. builds the registry (``theorems.json``) from those statements and compares
   it byte for byte with the committed file, or writes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pyverify.errors import UserError, located
from pyverify.lean import catalog, runtime, trust

REGISTRY_FORMAT = "pyverify.theorems/2"
REGISTRY_FILE = "theorems.json"
MODULE_TIMEOUT = 300.0
BACKENDS = ("auto", "lake", "wheel")
#: Modules the check requires besides the theorems' own: the hand-written
#: examples (positive instances of every hypothesis) and the examples generated
#: from the Python mirrors (scripts/gen_lean_examples.py). Deleting either fails.
REQUIRED_MODULES = ("Examples", "Generated")
EXAMPLES_MODULE = "Examples"
TOOLCHAIN = f"leanprover/lean4:v{runtime.EXPECTED_VERSION}"


def default_project() -> Path:
    """The repository's ``lean/`` directory."""
    return Path(__file__).resolve().parents[2] / "lean"


# --------------------------------------------------------------------------
# Results


@dataclass
class Message:
    """One message from Lean."""

    file: str
    line: int | None
    severity: str
    text: str

    def first_line(self) -> str:
        """The message on one line (whitespace collapsed), at most 300 characters."""
        text = " ".join(self.text.split())
        return text if len(text) <= 300 else text[:297] + "..."


@dataclass
class ModuleResult:
    name: str
    path: Path
    seconds: float | None
    messages: list[Message] = field(default_factory=list)

    @property
    def problems(self) -> list[Message]:
        return [m for m in self.messages if m.severity in ("error", "warning")]


@dataclass
class TheoremResult:
    name: str
    module: str
    statement: str
    axioms: list[str]
    axioms_line: str
    definitions: list[str] = field(default_factory=list)  # trusted: what the statement depends on
    examples: dict[str, str] = field(default_factory=dict)  # hypothesis -> example theorem proving it


@dataclass
class CheckResult:
    backend: str
    identity: runtime.Identity
    modules: list[ModuleResult] = field(default_factory=list)
    theorems: list[TheoremResult] = field(default_factory=list)
    definitions: dict[str, trust.Printed] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    registry_path: Path | None = None
    registry_written: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "backend": self.backend,
            "lean_version": self.identity.version,
            "githash": self.identity.githash,
            "modules": [
                {"name": m.name, "seconds": None if m.seconds is None else round(m.seconds, 3)}
                for m in self.modules
            ],
            "theorems": [
                {"name": t.name, "module": t.module, "statement": t.statement, "axioms": t.axioms,
                 "definitions": t.definitions, "examples": t.examples}
                for t in self.theorems
            ],
            "definitions": {name: p.sha256 for name, p in sorted(self.definitions.items())},
            "failures": list(self.failures),
            "registry": None if self.registry_path is None else str(self.registry_path),
            "registry_written": self.registry_written,
            "seconds": round(self.seconds, 3),
        }


class CheckFailed(Exception):
    """Stops the check at the first failing step (recorded in the result)."""


# --------------------------------------------------------------------------
# Modules


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    imports: tuple[str, ...]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_'.]*")


def parse_header(text: str) -> tuple[bool, list[str]]:
    """Return (begins with ``prelude``, imported module names) of a Lean file.

    Skips comments and doc comments between header commands (blanked by
    :func:`pyverify.lean.trust.blank_comments_and_strings`, the one comment
    scanner); stops at the first token that is not ``prelude``/``import``.
    """
    text = trust.blank_comments_and_strings(text)
    i, n = 0, len(text)
    saw_prelude = False
    first = True
    imports: list[str] = []
    while i < n:
        if text[i].isspace():
            i += 1
        else:
            match = _IDENT.match(text, i)
            word = match.group(0) if match else ""
            if word == "prelude" and first:
                saw_prelude = True
                i = match.end()
            elif word == "import":
                i = match.end()
                while i < n and text[i] in " \t":
                    i += 1
                target = _IDENT.match(text, i)
                if not target:
                    break
                imports.append(target.group(0))
                i = target.end()
            else:
                break
            first = False
    return saw_prelude, imports


def library_name(project: Path) -> str:
    lakefile = project / "lakefile.toml"
    if not lakefile.is_file():
        raise located(lakefile, None, "no such file: the Lean project needs a lakefile.toml")
    try:
        config = tomllib.loads(lakefile.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise located(lakefile, None, f"cannot read: {error}") from None
    libs = config.get("lean_lib")
    if not isinstance(libs, list) or len(libs) != 1 or not isinstance(libs[0], dict) or not libs[0].get("name"):
        raise located(lakefile, "lean_lib", "expected exactly one [[lean_lib]] with a name")
    return str(libs[0]["name"])


def discover_modules(project: Path, library: str) -> list[Module]:
    """All modules of ``library``, in an import order (dependencies first)."""
    files: list[Path] = []
    root_file = project / f"{library}.lean"
    if root_file.is_file():
        files.append(root_file)
    lib_dir = project / library
    if lib_dir.is_dir():
        files.extend(sorted(lib_dir.rglob("*.lean")))
    if not files:
        raise located(project, library, "no Lean modules found")
    modules: dict[str, Module] = {}
    for path in files:
        name = ".".join(path.relative_to(project).with_suffix("").parts)
        text = path.read_text(encoding="utf-8")
        has_prelude, imports = parse_header(text)
        modules[name] = Module(name, path, tuple(imports))
        if not has_prelude:
            raise CheckFailed(
                f"module {name} ({_rel(path, project)}), line 1: must begin with `prelude` "
                "(the development imports nothing from Lean's library)"
            )
    for module in modules.values():
        refused = trust.option_problems(module.path.read_text(encoding="utf-8"))
        if refused:
            line, reason = refused[0]
            raise CheckFailed(f"module {module.name} ({_rel(module.path, project)}), line {line}: refused: {reason}")
    for required in REQUIRED_MODULES:
        name = f"{library}.{required}"
        if name not in modules:
            raise CheckFailed(
                f"module {name} ({library}/{required}.lean): missing; it is required "
                "(it shows the definitions compute and every hypothesis can hold)"
            )
    for module in modules.values():
        for target in module.imports:
            if target not in modules:
                raise CheckFailed(
                    f"module {module.name} ({_rel(module.path, project)}): imports {target}, "
                    f"which is not a module of {library} (the development is import-free)"
                )
    ordered: list[Module] = []
    done: set[str] = set()
    pending = dict(sorted(modules.items()))
    while pending:
        ready = [m for m in pending.values() if all(t in done for t in m.imports)]
        if not ready:
            raise CheckFailed("import cycle among: " + ", ".join(pending))
        for module in ready:
            ordered.append(module)
            done.add(module.name)
            del pending[module.name]
    return ordered


def _rel(path: Path, project: Path) -> str:
    try:
        return str(path.relative_to(project.parent))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------
# Lean output


def parse_json_messages(stdout: str, default_file: str) -> list[Message]:
    """Messages from ``lean --json`` (one JSON object a line); other lines become errors."""
    messages: list[Message] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "severity" in data:
            pos = data.get("pos") or {}
            messages.append(
                Message(
                    file=str(data.get("fileName", default_file)),
                    line=pos.get("line"),
                    severity=str(data["severity"]),
                    text=str(data.get("data", "")),
                )
            )
        else:
            messages.append(Message(default_file, None, "error", line))
    return messages


_LAKE_MESSAGE = re.compile(
    r"^(?P<severity>error|warning|info): (?P<file>[^\s:]+\.lean):(?P<line>\d+):(?P<col>\d+): (?P<text>.*)$"
)


def parse_lake_messages(output: str) -> list[Message]:
    messages: list[Message] = []
    for raw in output.splitlines():
        match = _LAKE_MESSAGE.match(raw.strip().lstrip("✖⚠ ").strip())
        if match:
            messages.append(
                Message(
                    file=match.group("file"),
                    line=int(match.group("line")),
                    severity=match.group("severity"),
                    text=match.group("text"),
                )
            )
    return messages


def describe_problem(module: str, path: str, message: Message, source: str | None = None) -> str:
    where = f"line {message.line}" if message.line is not None else "no line"
    text = message.first_line()
    if source is not None and message.line is not None and text.startswith("internal exception"):
        # Without Lean's library there is no `sorryAx`, so `sorry` cannot even
        # elaborate and Lean only says "internal exception". Say why.
        lines = source.splitlines()[message.line - 1:]
        declaration = "\n".join(lines[: next((i for i, l in enumerate(lines) if i and not l.strip()), len(lines))])
        if re.search(r"\bsorry\b", declaration):
            text += " (this declaration uses `sorry`, which cannot elaborate here: there is no `sorryAx`)"
    return f"module {module} ({path}), {where}: {message.severity}: {text}"


# --------------------------------------------------------------------------
# Backends


class Backend:
    name = ""
    identity: runtime.Identity

    def build(
        self, project: Path, modules: list[Module], results: list[ModuleResult], emit: Callable[[str], None]
    ) -> None:
        """Build ``modules`` in order, appending to ``results``; raise CheckFailed at the first problem."""
        raise NotImplementedError

    def run_file(self, project: Path, path: Path) -> subprocess.CompletedProcess[str]:
        raise NotImplementedError


class WheelBackend(Backend):
    """One ``lean`` run per module through the wheel's ``lean_main``."""

    name = "wheel"

    def __init__(self, build_dir: Path, library: Path | None = None, identity_check=runtime.check_identity):
        self.library = runtime.find_library(library)
        runtime.check_library_hash(self.library)  # before running anything from it
        self.identity = identity_check(runtime.runtime_identity(self.library), source=str(self.library))
        self.build_dir = build_dir

    def _env(self) -> dict[str, str]:
        return {"LEAN_PATH": str(self.build_dir)}

    def build(self, project, modules, results, emit):
        for module in modules:
            olean = self.build_dir.joinpath(*module.name.split(".")).with_suffix(".olean")
            olean.parent.mkdir(parents=True, exist_ok=True)
            start = time.perf_counter()
            try:
                proc = runtime.run_lean(
                    self.library,
                    ["--json", "-R", str(project), "-o", str(olean), str(module.path)],
                    env=self._env(),
                    cwd=project,
                    timeout=MODULE_TIMEOUT,
                )
            except subprocess.TimeoutExpired:
                raise CheckFailed(
                    f"module {module.name} ({_rel(module.path, project)}): timed out after {MODULE_TIMEOUT:.0f} s"
                ) from None
            seconds = time.perf_counter() - start
            result = ModuleResult(module.name, module.path, seconds, parse_json_messages(proc.stdout, str(module.path)))
            results.append(result)
            emit(f"  {module.name:<30} {seconds:6.2f} s")
            problems = result.problems
            if problems:
                raise CheckFailed(
                    describe_problem(
                        module.name, _rel(module.path, project), problems[0],
                        module.path.read_text(encoding="utf-8"),
                    )
                )
            if proc.returncode != 0 or not olean.is_file():
                detail = (proc.stderr or proc.stdout).strip().splitlines()
                raise CheckFailed(
                    f"module {module.name} ({_rel(module.path, project)}): lean exited {proc.returncode}"
                    + (f": {detail[0]}" if detail else "")
                )

    def run_file(self, project, path):
        return runtime.run_lean(self.library, ["--json", str(path)], env=self._env(), cwd=project, timeout=MODULE_TIMEOUT)


class LakeBackend(Backend):
    """``lake build`` with the toolchain pinned in ``lean-toolchain``."""

    name = "lake"

    def __init__(self, project: Path, identity_check=runtime.check_identity):
        self.lake = shutil.which("lake")
        if self.lake is None:
            raise UserError("lake: not found on PATH (install elan, or use --backend wheel)")
        version = self._lake(project, ["env", "lean", "--version"])
        githash = self._lake(project, ["env", "lean", "--githash"])
        if version.returncode != 0:
            raise UserError(f"lake env lean --version: exited {version.returncode}: {version.stderr.strip()[:200]}")
        identity = runtime.parse_identity(version.stdout, githash.stdout if githash.returncode == 0 else None)
        self.identity = identity_check(identity, source="lake env lean")

    def _lake(self, project, args, timeout=None):
        return subprocess.run(
            [self.lake, *args], cwd=project, capture_output=True, text=True,
            encoding="utf-8", errors="replace", timeout=timeout,
        )

    def build(self, project, modules, results, emit):
        start = time.perf_counter()
        proc = self._lake(project, ["build"], timeout=MODULE_TIMEOUT * max(1, len(modules)))
        seconds = time.perf_counter() - start
        output = proc.stdout + "\n" + proc.stderr
        messages = parse_lake_messages(output)
        by_path = {m.path.resolve(): m for m in modules}
        for message in messages:
            if message.severity in ("error", "warning"):
                module = by_path.get((project / message.file).resolve())
                name = module.name if module else message.file
                source = module.path.read_text(encoding="utf-8") if module else None
                raise CheckFailed(describe_problem(name, message.file, message, source))
        if proc.returncode != 0:
            lines = [l for l in output.splitlines() if "error" in l.lower()] or output.strip().splitlines()
            raise CheckFailed(f"lake build exited {proc.returncode}" + (f": {lines[0].strip()}" if lines else ""))
        emit(f"  lake build ({len(modules)} modules)      {seconds:6.2f} s")
        results.extend(ModuleResult(m.name, m.path, None) for m in modules)

    def run_file(self, project, path):
        return self._lake(project, ["env", "lean", "--json", str(path)], timeout=MODULE_TIMEOUT)


def choose_backend(name: str) -> str:
    if name not in BACKENDS:
        raise UserError(f"--backend: {name}: expected one of {', '.join(BACKENDS)}")
    if name == "auto":
        return "lake" if shutil.which("lake") else "wheel"
    return name


# --------------------------------------------------------------------------
# Theorems and registry


def theorem_modules(modules: list[Module]) -> dict[str, str]:
    """Map each declared theorem name to the module that declares it."""
    found: dict[str, str] = {}
    pattern = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?(?:protected\s+|private\s+)?theorem\s+([^\s(:{\[]+)", re.M)
    for module in modules:
        for match in pattern.finditer(module.path.read_text(encoding="utf-8")):
            found.setdefault(match.group(1), module.name)
    return found


def axioms_probe(library: str, names: list[str]) -> tuple[str, dict[int, tuple[str, str]]]:
    """The Lean file that prints each theorem's statement and axioms, and which line asks what."""
    lines = [
        "prelude",
        f"import {library}",
        "set_option pp.fieldNotation false",
    ]
    asks: dict[int, tuple[str, str]] = {}
    for name in names:
        lines.append(f"#check @{name}")
        asks[len(lines)] = (name, "statement")
        lines.append(f"#print axioms {name}")
        asks[len(lines)] = (name, "axioms")
    return "\n".join(lines) + "\n", asks


_NO_AXIOMS = re.compile(r"^'(?P<name>[^']+)' does not depend on any axioms$")
_AXIOMS = re.compile(r"^'(?P<name>[^']+)' depends on axioms: \[(?P<list>.*)\]$", re.S)


def parse_axioms(text: str) -> list[str] | None:
    """Axioms named by a ``#print axioms`` message, or None if it is not one."""
    text = " ".join(text.split())
    if _NO_AXIOMS.match(text):
        return []
    match = _AXIOMS.match(text)
    if match:
        return [a.strip() for a in match.group("list").split(",") if a.strip()]
    return None


def normalize_statement(name: str, text: str) -> str:
    """``name : STATEMENT`` as printed by ``#check @name``, on one line."""
    flat = " ".join(text.split())
    prefix = f"{name} : "
    return flat[len(prefix):] if flat.startswith(prefix) else flat


def build_registry(
    identity: runtime.Identity, library: str, theorems: list[TheoremResult], definitions: dict[str, trust.Printed]
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
                "axioms": list(theorem.axioms),
                "hypotheses": list(spec.hypotheses),
                "plain": spec.plain,
                "examples": dict(sorted(theorem.examples.items())),
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
                    if key == "statement":
                        diffs.append(f"{name}: statement changed: committed {old[name].get(key)!r}, now {value!r}")
                    elif key == "definitions" and isinstance(old[name].get(key), dict):
                        before = old[name][key]
                        changed = sorted(n for n in set(before) | set(value) if before.get(n) != value.get(n))
                        diffs.append(f"{name}: trusted definitions changed: {', '.join(changed)}")
                    elif key in ("definitions", "examples") and old[name].get(key) is None:
                        diffs.append(f"{name}: {key}: not recorded in the committed registry")
                    else:
                        diffs.append(f"{name}: {key} changed: committed {old[name].get(key)!r}, now {value!r}")
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
            diffs.append(f"definition {name}: trusted in the committed registry, no longer used by any statement")
        elif name not in old:
            diffs.append(f"definition {name}: now trusted (a statement depends on it), not in the committed registry")
        elif old[name].get("sha256") != new[name]["sha256"] or old[name].get("printed") != new[name]["printed"]:
            diffs.append(
                f"definition {name} changed: SHA-256 committed {str(old[name].get('sha256'))[:12]}..., "
                f"now {new[name]['sha256'][:12]}... (Lean prints it differently)"
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


# --------------------------------------------------------------------------
# The check


#: Scratch folders are ``$TMPDIR/pyverify-lean-PID-XXXX``, so a later run can remove a killed run's.
SCRATCH_PREFIX = "pyverify-lean"


def check(
    project: Path | None = None,
    *,
    backend: str = "auto",
    build_dir: Path | None = None,
    library_path: Path | None = None,
    write_registry: bool = False,
    emit: Callable[[str], None] = print,
    identity_check=runtime.check_identity,
) -> CheckResult:
    """Run the whole Lean check; see the module docstring.

    Raises :class:`UserError` for a missing project or runtime (exit 2); every
    failure of the development itself is recorded in ``result.failures``.
    """
    started = time.perf_counter()
    project = (project or default_project()).resolve()
    if not project.is_dir():
        raise located(project, None, "no such directory (expected the Lean project, e.g. the repository's lean/)")
    library = library_name(project)
    chosen = choose_backend(backend)

    from pyverify.outdir import fresh_owned_dir, sweep_dead_temporaries

    sweep_dead_temporaries(SCRATCH_PREFIX)  # scratch folders of killed runs
    if build_dir is not None:
        # Always a clean build (nothing stale is trusted), but only in a folder pyverify made:
        # a --build-dir naming the checkout, or any folder of the user's, is refused, never wiped.
        build_dir = fresh_owned_dir(build_dir, "lean-build").resolve()
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}-{os.getpid()}-") as scratch:
        out_dir = build_dir if build_dir is not None else Path(scratch) / "build"
        out_dir.mkdir(parents=True, exist_ok=True)
        if chosen == "lake":
            engine: Backend = LakeBackend(project, identity_check=identity_check)
        else:
            engine = WheelBackend(out_dir, library_path, identity_check=identity_check)
        result = CheckResult(backend=chosen, identity=engine.identity)
        emit(f"Lean {engine.identity.version} (commit {engine.identity.githash}) via {chosen}")
        try:
            refused = trust.lakefile_problems(project, TOOLCHAIN)
            if refused:
                raise CheckFailed(f"build configuration: {refused[0]}")
            modules = discover_modules(project, library)
            emit(f"building {library}: {len(modules)} modules")
            engine.build(project, modules, result.modules, emit)
            result.theorems = _collect_theorems(engine, project, library, modules, Path(scratch), emit)
            result.definitions = _collect_definitions(engine, project, library, modules, result.theorems, Path(scratch))
            emit(f"trusted definitions: {len(result.definitions)} (printed and hashed in the registry)")
            _compare_registry(result, project, library, write_registry, emit)
        except CheckFailed as failure:
            result.failures.append(str(failure))
    result.seconds = time.perf_counter() - started
    return result


def _collect_theorems(engine, project, library, modules, scratch, emit) -> list[TheoremResult]:
    declared = theorem_modules(modules)
    names = [spec.name for spec in catalog.THEOREMS]
    missing = [name for name in names if name not in declared]
    if missing:
        raise CheckFailed(f"registered theorem {missing[0]}: not declared in any module of {library}")
    examples_module = f"{library}.{EXAMPLES_MODULE}"
    for spec in catalog.THEOREMS:
        for predicate, example in spec.examples:
            if declared.get(example) != examples_module:
                raise CheckFailed(
                    f"registered theorem {spec.name}: {example}, the positive example of its hypothesis "
                    f"`{predicate}`, is not a theorem of {examples_module}"
                )
    examples = sorted({example for spec in catalog.THEOREMS for _, example in spec.examples})
    answers = _ask_statements_and_axioms(engine, project, library, names + examples, scratch)
    results = []
    emit("axioms:")
    for name in names:
        statement, axioms, line = answers[name]
        emit(f"  {line}")
        results.append(TheoremResult(name, declared[name], statement, axioms, line))
    bad = [t for t in results if t.axioms]
    if bad:
        raise CheckFailed(
            f"registered theorem {bad[0].name} (module {bad[0].module}) depends on axioms: "
            + ", ".join(bad[0].axioms)
        )
    for theorem in results:
        theorem.examples = _check_examples(theorem, library, declared, answers)
    return results


def _ask_statements_and_axioms(engine, project, library, names, scratch) -> dict[str, tuple[str, list[str], str]]:
    """For each name: (statement as `#check @name` prints it, axioms, the `#print axioms` line)."""
    text, asks = axioms_probe(library, names)
    probe = scratch / "PyverifyAxioms.lean"
    probe.write_text(text, encoding="utf-8")
    proc = engine.run_file(project, probe)
    messages = parse_json_messages(proc.stdout, str(probe))
    answers: dict[tuple[str, str], Message] = {}
    for message in messages:
        ask = asks.get(message.line) if message.line is not None else None
        if message.severity == "error":
            what = f"theorem {ask[0]}" if ask else "axioms probe"
            raise CheckFailed(f"{what}: {message.first_line()}")
        if ask:
            answers.setdefault(ask, message)
    if proc.returncode != 0:
        raise CheckFailed(f"axioms probe: lean exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}")
    found = {}
    for name in names:
        statement_msg = answers.get((name, "statement"))
        axioms_msg = answers.get((name, "axioms"))
        if statement_msg is None or axioms_msg is None:
            raise CheckFailed(f"theorem {name}: Lean printed no statement or axioms")
        axioms = parse_axioms(axioms_msg.text)
        if axioms is None:
            raise CheckFailed(f"theorem {name}: unexpected #print axioms output: {axioms_msg.first_line()}")
        found[name] = (normalize_statement(name, statement_msg.text), axioms, " ".join(axioms_msg.text.split()))
    return found


def _check_examples(theorem: TheoremResult, library: str, declared: dict[str, str], answers) -> dict[str, str]:
    """Every hypothesis of ``theorem`` must have a positive example: a theorem of
    the examples module, without axioms, proving it of a concrete input. Otherwise
    a hypothesis could be unsatisfiable and the theorem vacuous."""
    named = dict(catalog.by_name()[theorem.name].examples)
    module = f"{library}.{EXAMPLES_MODULE}"
    found: dict[str, str] = {}
    for premise in trust.premises(theorem.statement):
        predicate = trust.head(premise)
        example = named.get(predicate)
        where = f"registered theorem {theorem.name}: hypothesis `{premise}`"
        if example is None:
            raise CheckFailed(f"{where} has no positive example (name one in the catalog, proved in {module})")
        if declared.get(example) != module:
            raise CheckFailed(f"{where}: its example {example} is not a theorem of {module}")
        statement, axioms, _ = answers[example]
        if trust.head(statement) != predicate or "∀" in statement or len(trust.premises(statement)) or " → " in statement:
            raise CheckFailed(f"{where}: its example {example} proves `{statement}`, not `{predicate}` of a concrete input")
        if axioms:
            raise CheckFailed(f"{where}: its example {example} depends on axioms: {', '.join(axioms)}")
        found[predicate] = example
    return found


def _collect_definitions(engine, project, library, modules, theorems, scratch) -> dict[str, trust.Printed]:
    """Print every constant the registered statements depend on, transitively.

    Asks Lean to ``#print`` the registered theorems and every definition the
    sources declare, then, round by round, every identifier in what it printed
    that has not been asked yet (bound variables answer "Unknown constant" and
    are dropped). Constructors and recursors stand for their inductive type.
    Each theorem's ``definitions`` is the closure of its statement."""
    printed: dict[str, trust.Printed] = {}
    asked: set[str] = set()
    edges: dict[str, set[str]] = {}
    todo = {t.name for t in theorems}
    for module in modules:
        todo.update(trust.declared_names(module.path.read_text(encoding="utf-8")))
    round_number = 0
    while todo:
        round_number += 1
        batch = sorted(todo - asked)
        asked.update(batch)
        answers = _print_constants(engine, project, library, batch, scratch / f"PyverifyPrint{round_number}.lean")
        todo = set()
        for name, item in answers.items():
            printed[name] = item
            parent = trust.owner(item)
            edges[name] = {parent} if parent else trust.candidate_names(item)
            todo.update(edges[name])
        todo -= asked
    for name in edges:
        edges[name] = {target for target in edges[name] if target in printed}
    trusted: dict[str, trust.Printed] = {}
    for theorem in theorems:
        names = [n for n in trust.closure(edges[theorem.name], edges) if n != theorem.name]
        theorem.definitions = [n for n in names if trust.owner(printed[n]) is None]
        for name in theorem.definitions:
            trusted[name] = printed[name]
    return dict(sorted(trusted.items()))


def _print_constants(engine, project, library, names, probe) -> dict[str, trust.Printed]:
    lines = ["prelude", f"import {library}"] + [f"set_option {o}" for o in trust.PRINT_OPTIONS]
    asks: dict[int, str] = {}
    for name in names:
        lines.append(f"#print {name}")
        asks[len(lines)] = name
    probe.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = engine.run_file(project, probe)
    found: dict[str, trust.Printed] = {}
    for message in parse_json_messages(proc.stdout, str(probe)):
        name = asks.get(message.line) if message.line is not None else None
        if name is None:
            raise CheckFailed(f"definitions probe: {message.severity}: {message.first_line()}")
        if message.severity == "error":
            if message.text.startswith("Unknown constant"):
                continue  # a bound variable's name, not a constant
            raise CheckFailed(f"definitions probe: #print {name}: {message.first_line()}")
        if "⋯" in message.text:
            raise CheckFailed(f"definitions probe: #print {name}: Lean elided part of it (⋯)")
        found[name] = trust.reduce_printed(name, message.text)
    return found


def _compare_registry(result: CheckResult, project: Path, library: str, write: bool, emit) -> None:
    path = project / REGISTRY_FILE
    result.registry_path = path
    fresh = build_registry(result.identity, library, result.theorems, result.definitions)
    committed = path.read_text(encoding="utf-8") if path.is_file() else None
    diffs = registry_differences(committed, fresh)
    if not diffs:
        emit(f"registry: {_rel(path, project)} is up to date ({len(fresh['theorems'])} theorems)")
        return
    if write:
        _write_atomic(path, render_registry(fresh))
        result.registry_written = True
        emit(f"registry: wrote {_rel(path, project)} ({len(fresh['theorems'])} theorems)")
        return
    for diff in diffs:
        emit(f"  registry differs: {diff}")
    raise CheckFailed(
        f"registry {_rel(path, project)} is out of date: {diffs[0]} "
        "(run `pyverify lean registry` to regenerate it, then review and commit)"
    )
