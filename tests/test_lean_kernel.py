"""The kernel replay of compiled modules (issue 51).

Every declaration of every compiled module is re-checked by the Lean kernel in
a fresh process, from the `.olean` files (pyverify/lean/kernel_replay.py), and
each registered theorem is pinned by its elaborated type and by every
declaration that type reaches, read from that environment, not from text.
Each attack below is applied to a fresh copy of lean/ (or to a small module of
its own) and must be refused; each was accepted before the replay existed.

Each check of a copy costs a few seconds (one Lean build).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyverify.lean import catalog, kernel_replay, runner, runtime
from pyverify.lean.results import CheckFailed

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "lean"


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "lean"
    shutil.copytree(LEAN, target, ignore=shutil.ignore_patterns(".lake", "build"))
    return target


def check(project: Path, write_registry: bool = False) -> list[str]:
    return runner.check(
        project, backend="wheel", write_registry=write_registry, emit=lambda line: None
    ).failures


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur exactly once in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def add_module(project: Path, name: str, body: str) -> None:
    (project / "PrefixPool" / f"{name}.lean").write_text(
        f"prelude\nimport PrefixPool.Core\n{body}", encoding="utf-8"
    )
    edit(
        project / "PrefixPool.lean",
        "import PrefixPool.Core\n",
        f"import PrefixPool.Core\nimport PrefixPool.{name}\n",
    )


def register(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Add ``name`` to the catalog of registered theorems (no hypotheses, no example)."""
    spec = catalog.TheoremSpec(name=name, hypotheses=(), plain="an attempt")
    monkeypatch.setattr(catalog, "THEOREMS", (*catalog.THEOREMS, spec))


def compile_modules(root: Path, sources: dict[str, str]) -> list[tuple[str, Path]]:
    """Compile prelude modules (name -> source, in import order) with the wheel's Lean."""
    library = runtime.find_library()
    compiled = []
    for name, text in sources.items():
        path = root.joinpath(*name.split(".")).with_suffix(".lean")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        olean = path.with_suffix(".olean")
        proc = runtime.run_lean(
            library,
            ["--json", "-R", str(root), "-o", str(olean), str(path)],
            env={"LEAN_PATH": str(root)},
        )
        assert proc.returncode == 0 and olean.is_file(), proc.stdout + proc.stderr
        compiled.append((name, olean))
    return compiled


def replay(tmp_path: Path, sources: dict[str, str]) -> kernel_replay.Replayed:
    return kernel_replay.replay(runtime.find_library(), compile_modules(tmp_path, sources))


CORE = (
    "prelude\n"
    "set_option genCtorIdx false\nset_option genInjectivity false\n"
    "set_option genSizeOf false\nset_option genSizeOfSpec false\n"
    "inductive False : Prop\ninductive True : Prop where\n  | intro : True\n"
)
#: A theorem of False whose value the elaborator never sent to the kernel.
SKIPPED = (
    "set_option linter.defProp false\n"
    "set_option debug.skipKernelTC true\n"
    "unsafe def loop : False := loop\n"
    "theorem bad : False := loop\n"
)


# --------------------------------------------------------------------------
# The replay itself


def test_a_theorem_never_sent_to_the_kernel_is_refused_by_the_replay(tmp_path: Path) -> None:
    with pytest.raises(CheckFailed) as refused:
        replay(tmp_path, {"T.Core": CORE + SKIPPED})
    assert str(refused.value) == (
        "kernel replay: refused: module T.Core: theorem bad: invalid declaration, "
        "it uses unsafe declaration 'loop'"
    )


@pytest.mark.parametrize(
    "body, refusal",
    [
        ("axiom boom : False\n", "declaration boom: refused: it is an axiom"),
        (
            "set_option linter.defProp false\nunsafe def loop : False := loop\n",
            "declaration loop: refused: it is unsafe",
        ),
        ("opaque hidden : Prop := True\n", "declaration hidden: refused: it is an opaque"),
        ("unsafe axiom lcAny : Prop\n", "declaration lcAny: refused: `lcAny` may only be"),
    ],
    ids=["axiom", "unsafe", "opaque", "placeholder-of-another-type"],
)
def test_kinds_of_declaration_are_refused_from_the_environment(
    tmp_path: Path, body: str, refusal: str
) -> None:
    replayed = replay(tmp_path, {"T.Core": CORE + body})
    problems = kernel_replay.declaration_problems(replayed)
    assert problems and problems[0].startswith(refusal), problems
    assert problems[0].endswith("(module T.Core)")


def test_a_kernel_name_is_refused_from_the_environment(tmp_path: Path) -> None:
    replayed = replay(tmp_path, {"T.Core": CORE + "inductive Nat : Type where\n  | zero : Nat\n"})
    assert kernel_replay.declaration_problems(replayed)[0].startswith(
        "declaration Nat: refused: the Lean kernel treats `Nat` specially"
    )


def test_statements_and_dependencies_come_from_the_environment(tmp_path: Path) -> None:
    replayed = replay(
        tmp_path,
        {
            "T.Core": CORE
            + "inductive Natural : Type where\n  | zero : Natural\n  | succ (n : Natural) : Natural\n"
            + "inductive Eq {α : Sort u} : α → α → Prop where\n  | refl (a : α) : Eq a a\n"
            + "def calc (n : Natural) : Natural := Natural.succ n\n"
            + "def unused (n : Natural) : Natural := n\n"
            + "theorem t (n : Natural) : Eq (calc n) (calc n) := Eq.refl (calc n)\n"
        },
    )
    assert kernel_replay.statement(replayed, "t") == (
        "(pi (const Natural []) (app (app (app (const Eq [(succ 0)]) (const Natural [])) "
        "(app (const calc []) #0)) (app (const calc []) #0)))"
    )
    assert kernel_replay.dependencies(replayed, "t") == ["Eq", "Natural", "calc"]
    assert kernel_replay.declaration_text(replayed, "calc") == (
        "definition calc.{} : (pi (const Natural []) (const Natural [])) := "
        "(lam (const Natural []) (app (const Natural.succ []) #0))"
    )
