"""Build the Lean development, ask Lean what it accepted, maintain the registry.

``check`` does, in order:

0. copies the project, once, into a private scratch folder: everything below
   reads that copy only, so what is scanned is what is compiled and replayed
   (:func:`private_copy`);
1. reads ``lakefile.toml`` (a short allowlist of keys: :mod:`pyverify.lean.trust`)
   for the library name and finds its modules (the root ``<Lib>.lean`` and
   everything under ``<Lib>/``); every module must begin with ``prelude``,
   import only modules of the library, and pass the conservative source scan
   (:mod:`pyverify.lean.sources`), a fast first line of refusal only;
2. builds every module in import order: with ``lake build`` when the backend is
   ``lake``, otherwise one ``lean -o`` per module through the wheel's runtime
   (:mod:`pyverify.lean.runtime`), ``.olean`` files in a build directory on
   ``LEAN_PATH``; any error or warning (including "declaration uses 'sorry'")
   fails the check, naming the module, the line and Lean's first message;
3. replays every declaration of every compiled module through the kernel, in
   a fresh process, from the ``.olean`` files, and refuses the kinds of
   declaration the development may not use (:mod:`pyverify.lean.kernel_replay`):
   this, not the scan, is what soundness rests on;
4. asks Lean about the built environment (:mod:`pyverify.lean.environment`):
   every registered name is a theorem with no axioms and an example
   instantiating it; its elaborated type and every declaration it reaches are
   read from the replayed environment;
5. requires ``Generated.lean`` to be exactly what the Python mirrors generate
   (:mod:`pyverify.lean.generated`), so the definitions are pinned to them;
6. builds the registry (``theorems.json``) and compares it byte for byte with
   the committed file, or writes it into the project the user named
   (:mod:`pyverify.lean.registry`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pyverify.errors import CheckFailed, UserError, located
import pyverify.lean as lean_package
from pyverify.lean import environment, kernel_replay, registry, runtime, sources, trust
from pyverify.lean.kernel_replay import Replayed
from pyverify.lean.registry import REGISTRY_FILE, REGISTRY_FORMAT, build_registry, render_registry  # noqa: F401 (re-exported)
from pyverify.lean.results import (  # noqa: F401 (re-exported)
    CheckResult,
    Message,
    ModuleResult,
    TheoremResult,
    describe_problem,
    parse_json_messages,
    parse_lake_messages,
    relative_to_project as _rel,
)

MODULE_TIMEOUT = 300.0
BACKENDS = lean_package.BACKENDS
#: Modules the check requires besides the theorems' own: the hand-written
#: examples (an instance of every theorem with hypotheses) and the examples generated
#: from the Python mirrors (scripts/gen_lean_examples.py). Deleting either fails.
REQUIRED_MODULES = ("Examples", "Generated")
EXAMPLES_MODULE = environment.EXAMPLES_MODULE
GENERATED_MODULE = "Generated"
TOOLCHAIN = f"leanprover/lean4:v{runtime.EXPECTED_VERSION}"


def packaged_project() -> Path:
    """The ``lean/`` directory beside the installed package (a checkout's own)."""
    return Path(__file__).resolve().parents[2] / "lean"


def default_project(cwd: Path | None = None) -> Path:
    """The Lean project to check when none is named: the ``lean/`` of the
    checkout the working directory is in (walking up), else the package's own.

    So ``pyverify lean check`` run inside another checkout checks that checkout,
    not whichever one pyverify happens to be installed from."""
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if folder.name == "lean" and (folder / "lakefile.toml").is_file():
            return folder
        if (folder / "lean" / "lakefile.toml").is_file():
            return folder / "lean"
    return packaged_project()


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
    :func:`pyverify.lean.sources.blank_comments`, the one comment
    scanner); stops at the first token that is not ``prelude``/``import``.
    """
    text, _ = sources.blank_comments(text)
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
    if (
        not isinstance(libs, list)
        or len(libs) != 1
        or not isinstance(libs[0], dict)
        or not libs[0].get("name")
    ):
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
        text = module.path.read_text(encoding="utf-8")
        refused = sorted(trust.option_problems(text) + sources.problems(text))
        if refused:
            line, reason = refused[0]
            raise CheckFailed(
                f"module {module.name} ({_rel(module.path, project)}), line {line}: refused: {reason}"
            )
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


# --------------------------------------------------------------------------
# Backends


class Backend:
    name = ""
    identity: runtime.Identity

    def build(
        self,
        project: Path,
        modules: list[Module],
        results: list[ModuleResult],
        emit: Callable[[str], None],
    ) -> None:
        """Build ``modules`` in order, appending to ``results``; raise CheckFailed at the first problem."""
        raise NotImplementedError

    def run_file(self, project: Path, path: Path) -> subprocess.CompletedProcess[str]:
        raise NotImplementedError

    def olean(self, project: Path, module: Module) -> Path:
        """Where the build wrote ``module``'s compiled form."""
        raise NotImplementedError

    def replay_library(self) -> Path:
        """The pinned ``libleanshared.so`` the kernel replay runs in."""
        library = runtime.find_library()
        runtime.check_library_hash(library)
        return library


class WheelBackend(Backend):
    """One ``lean`` run per module through the wheel's ``lean_main``."""

    name = "wheel"

    def __init__(
        self, build_dir: Path, library: Path | None = None, identity_check=runtime.check_identity
    ):
        self.library = runtime.find_library(library)
        runtime.check_library_hash(self.library)  # before running anything from it
        self.identity = identity_check(
            runtime.runtime_identity(self.library), source=str(self.library)
        )
        self.build_dir = build_dir

    def _env(self) -> dict[str, str]:
        return {"LEAN_PATH": str(self.build_dir)}

    def olean(self, project, module):
        return self.build_dir.joinpath(*module.name.split(".")).with_suffix(".olean")

    def replay_library(self):
        return self.library  # already hash-checked

    def build(self, project, modules, results, emit):
        for module in modules:
            olean = self.olean(project, module)
            olean.parent.mkdir(parents=True, exist_ok=True)
            start = time.perf_counter()
            try:
                proc = runtime.run_lean(
                    self.library,
                    ["--json", "-R", str(project), "-o", str(olean), str(module.path)],
                    env=self._env(),
                    timeout=MODULE_TIMEOUT,
                )
            except subprocess.TimeoutExpired:
                raise CheckFailed(
                    f"module {module.name} ({_rel(module.path, project)}): timed out after {MODULE_TIMEOUT:.0f} s"
                ) from None
            seconds = time.perf_counter() - start
            result = ModuleResult(
                module.name,
                module.path,
                seconds,
                parse_json_messages(proc.stdout, str(module.path)),
            )
            results.append(result)
            emit(f"  {module.name:<30} {seconds:6.2f} s")
            problems = result.problems
            if problems:
                raise CheckFailed(
                    describe_problem(
                        module.name,
                        _rel(module.path, project),
                        problems[0],
                        module.path.read_text(encoding="utf-8"),
                    )
                )
            if (
                proc.returncode != 0
                and not olean.is_file()
                and "failed to write" in proc.stderr + proc.stdout
            ):
                # A full or read-only build folder is the machine's problem, not the proofs'.
                free = shutil.disk_usage(olean.parent).free if olean.parent.exists() else 0
                raise UserError(
                    f"{olean}: cannot write the compiled module ({free} bytes free): the build folder's disk "
                    "is full or not writable; this is not a failure of the proofs"
                )
            if proc.returncode != 0 or not olean.is_file():
                detail = (proc.stderr or proc.stdout).strip().splitlines()
                raise CheckFailed(
                    f"module {module.name} ({_rel(module.path, project)}): lean exited {proc.returncode}"
                    + (f": {detail[0]}" if detail else "")
                )

    def run_file(self, project, path):
        return runtime.run_lean(
            self.library, ["--json", str(path)], env=self._env(), timeout=MODULE_TIMEOUT
        )


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
            raise UserError(
                f"lake env lean --version: exited {version.returncode}: {version.stderr.strip()[:200]}"
            )
        identity = runtime.parse_identity(
            version.stdout, githash.stdout if githash.returncode == 0 else None
        )
        self.identity = identity_check(identity, source="lake env lean")

    def _lake(self, project, args, timeout=None):
        return subprocess.run(
            [self.lake, *args],
            cwd=project,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
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
            lines = [
                l for l in output.splitlines() if "error" in l.lower()
            ] or output.strip().splitlines()
            raise CheckFailed(
                f"lake build exited {proc.returncode}" + (f": {lines[0].strip()}" if lines else "")
            )
        emit(f"  lake build ({len(modules)} modules)      {seconds:6.2f} s")
        results.extend(ModuleResult(m.name, m.path, None) for m in modules)

    def run_file(self, project, path):
        return self._lake(project, ["env", "lean", "--json", str(path)], timeout=MODULE_TIMEOUT)

    def olean(self, project, module):
        return project.joinpath(
            ".lake", "build", "lib", "lean", *module.name.split(".")
        ).with_suffix(".olean")


def choose_backend(name: str) -> str:
    if name not in BACKENDS:
        raise UserError(f"--backend: {name}: expected one of {', '.join(BACKENDS)}")
    if name == "auto":
        return "lake" if shutil.which("lake") else "wheel"
    return name


# --------------------------------------------------------------------------
# The check


#: Scratch folders are ``$TMPDIR/pyverify-lean-PID-XXXX``, so a later run can remove a killed run's.
SCRATCH_PREFIX = "pyverify-lean"


def check_generated(project: Path, library: str) -> None:
    """``Generated.lean`` must be exactly what the Python mirrors generate today.

    It pins every computable definition to its Python mirror, so an emptied or
    hand-edited file would switch that pinning off while everything still builds."""
    from pyverify.lean import generated

    path = project / library / f"{GENERATED_MODULE}.lean"
    expected = generated.render().splitlines()
    found = path.read_text(encoding="utf-8").splitlines()
    if found != expected:
        line = next(
            (i for i, (a, b) in enumerate(zip(found, expected)) if a != b),
            min(len(found), len(expected)),
        )
        raise CheckFailed(
            f"module {library}.{GENERATED_MODULE} ({_rel(path, project)}), line {line + 1}: not what the Python "
            f"mirrors generate ({len(found)} lines, expected {len(expected)}): run python scripts/gen_lean_examples.py"
        )


def generated_bound() -> str:
    """The inputs on which ``Generated.lean`` pins every mirrored definition, in words."""
    from pyverify.lean import generated

    return f"on every input up to: {generated.exhaustive_bound()}"


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
        raise located(
            project,
            None,
            "no such directory (expected the Lean project, e.g. the repository's lean/)",
        )
    library = library_name(project)
    chosen = choose_backend(backend)
    emit(f"project: {project}")

    from pyverify.outdir import fresh_owned_dir, sweep_dead_temporaries

    sweep_dead_temporaries(SCRATCH_PREFIX)  # scratch folders of killed runs
    build_dir_existed = build_dir is not None and Path(build_dir).is_dir()
    if build_dir is not None:
        # Always a clean build (nothing stale is trusted), but only in a folder pyverify made:
        # a --build-dir naming the checkout, or any folder of the user's, is refused, never wiped.
        build_dir = fresh_owned_dir(build_dir, "lean-build").resolve()
    try:
        return _check_in(
            project,
            library,
            chosen,
            build_dir,
            library_path,
            write_registry,
            emit,
            identity_check,
            started,
        )
    except BaseException:
        # Interrupted, or the build folder could not be written: the half-built folder
        # (pyverify's own, emptied at the start) goes, so nothing partial is left behind.
        if build_dir is not None:
            shutil.rmtree(build_dir, ignore_errors=True)
            if build_dir_existed:  # an empty folder the user named stays, empty
                build_dir.mkdir(exist_ok=True)
        raise


#: Folders of the project never copied: build output (the check always builds afresh).
_NOT_COPIED = (".lake", "build")


def private_copy(project: Path, destination: Path) -> Path:
    """Copy the Lean project, once, into ``destination`` and return the copy.

    Everything after is read from the copy only: the sources the scan reads
    are the ones Lean compiles and the kernel replays, so a file changed in
    the project while the check runs changes nothing. Links are followed
    once, here (the copy holds plain files)."""
    target = destination / project.name
    target.mkdir(parents=True)
    for path in sorted(project.rglob("*")):
        relative = path.relative_to(project)
        if relative.parts[0] in _NOT_COPIED or not path.is_file():
            continue
        copied = target / relative
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.write_bytes(path.read_bytes())
    return target


def replay_modules(engine: Backend, project: Path, modules: list[Module], emit) -> Replayed:
    """Re-check every compiled module with the kernel (:mod:`pyverify.lean.kernel_replay`)
    and refuse the kinds of declaration the development may not use."""
    start = time.perf_counter()
    replayed = kernel_replay.replay(
        engine.replay_library(), [(m.name, engine.olean(project, m)) for m in modules]
    )
    seconds = time.perf_counter() - start
    emit(
        f"kernel replay (a fresh process, from the .olean files): {replayed.checked} declarations "
        "re-checked (sent to the kernel, or generated by it and compared), "
        f"{seconds:.2f} s"
    )
    for module in replayed.modules:
        emit(f"  {module.name:<30} {module.checked:4d} declarations re-checked by the kernel")
    refused = kernel_replay.declaration_problems(replayed)
    if refused:
        raise CheckFailed(refused[0])
    return replayed


def _check_in(
    original,
    library,
    chosen,
    build_dir,
    library_path,
    write_registry,
    emit,
    identity_check,
    started,
):
    from pyverify.outdir import record_written_files

    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}-{os.getpid()}-") as scratch:
        project = private_copy(original, Path(scratch) / "source")
        library = library_name(project)
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
            if build_dir is not None:
                record_written_files(
                    build_dir
                )  # the marker lists the .olean files: a later run replaces only those
            result.replayed = replay_modules(engine, project, modules, emit)
            probe = environment.Probe(engine, project, library, Path(scratch))
            result.theorems = environment.collect_theorems(probe, modules, emit, result.replayed)
            result.definitions = environment.pin_statements(result.replayed, result.theorems)
            emit(
                f"trusted definitions: {len(result.definitions)} (read from the replayed environment, "
                "hashed in the registry)"
            )
            check_generated(project, library)
            emit(
                f"mirrors: {GENERATED_MODULE}.lean is what the Python twins compute, {generated_bound()}"
            )
            registry.compare_registry(
                result, project, library, write_registry, emit, write_to=original
            )
        except CheckFailed as failure:
            result.failures.append(str(failure))
    result.seconds = time.perf_counter() - started
    return result
