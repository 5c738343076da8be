"""The kernel replay, and the six ways a hostile contributor once got an
unchecked or empty claim past `pyverify lean check` (issue 51).

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

from pyverify.lean import catalog, command, kernel_replay, runner, runtime
from pyverify.errors import CheckFailed

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


def test_the_replay_rechecks_every_declaration_of_the_development(tmp_path: Path) -> None:
    result = runner.check(LEAN, backend="wheel", build_dir=tmp_path / "build", emit=lambda l: None)
    assert result.ok, result.failures
    modules = [m.name for m in result.modules]
    assert [m.name for m in result.replayed.modules] == modules
    assert result.replayed.checked == len(result.replayed.constants) > 500
    # the count is the module's own: replaying one module alone finds as many
    core = kernel_replay.replay(
        runtime.find_library(),
        [("PrefixPool.Core", tmp_path / "build" / "PrefixPool" / "Core.olean")],
    )
    assert core.modules[0].checked == result.replayed.modules[0].checked > 50


def test_a_theorem_never_sent_to_the_kernel_is_refused_by_the_replay(tmp_path: Path) -> None:
    with pytest.raises(CheckFailed) as refused:
        replay(tmp_path, {"T.Core": CORE + SKIPPED})
    assert str(refused.value) == (
        "kernel replay: refused: module T.Core: theorem bad: invalid declaration, "
        "it uses unsafe declaration 'loop'"
    )


def test_a_tampered_olean_is_refused_by_lean_check(
    copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the build, one compiled module is replaced by another of the same
    name holding a proof of False the elaborator never had checked."""
    build = runner.WheelBackend.build

    def build_then_tamper(self, project, modules, results, emit):
        build(self, project, modules, results, emit)
        hostile = Path(self.build_dir).parent / "hostile"
        path = hostile / "PrefixPool" / "Counterexamples.lean"
        path.parent.mkdir(parents=True)
        path.write_text("prelude\nimport PrefixPool.Core\n" + SKIPPED, encoding="utf-8")
        olean = self.olean(project, next(m for m in modules if m.name.endswith("Counterexamples")))
        proc = runtime.run_lean(
            self.library,
            ["--json", "-R", str(hostile), "-o", str(olean), str(path)],
            env={"LEAN_PATH": str(self.build_dir)},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr

    monkeypatch.setattr(runner.WheelBackend, "build", build_then_tamper)
    code = command.main(["check", "--project", str(copy), "--backend", "wheel"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines() == [
        "pyverify lean check: FAILED: kernel replay: refused: module PrefixPool.Counterexamples: "
        "theorem bad: invalid declaration, it uses unsafe declaration 'loop'"
    ]


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


# --------------------------------------------------------------------------
# The six holes of issue 51


def test_hole_1_code_hidden_from_the_scanner_by_a_doc_comment_is_refused(copy: Path) -> None:
    """The scanner read `/--/` as a whole comment (and `-/--` as opening one);
    Lean reads a doc comment `/--/ -/` then a line comment, so the lines
    below are code to Lean and a comment to the scanner: MIN's optimality
    "proved" from an unsafe loop, with the kernel told to skip it."""
    path = copy / "PrefixPool" / "BeladyOptimal.lean"
    edit(
        path,
        "  min_le_run cap blocks List.nil List.nil run True.intro (Natural.zero_le cap) (subset_refl List.nil) h hb\n",
        "  False.elim loop\n",
    )
    edit(
        path,
        "/-- Belady's MIN is optimal among flat demand caches",
        "/--/ -/--\n"
        "theorem hidden_true : True := True.intro\n"
        "set_option linter.defProp false in\n"
        "unsafe def loop : False := loop\n"
        "set_option debug.skipKernelTC true in\n"
        "set_option linter.unusedVariables false in\n"
        "-- -/\n"
        "/-- Belady's MIN is optimal among flat demand caches",
    )
    assert check(copy) == [
        "kernel replay: refused: module PrefixPool.BeladyOptimal: theorem min_misses_le: "
        "invalid declaration, it uses unsafe declaration 'loop'"
    ]


def _pin_then_change(
    copy: Path, monkeypatch: pytest.MonkeyPatch, theorem: str, body: str, old: str, new: str
) -> list[str]:
    """Register ``theorem`` (declared in ``body``), write the registry, change
    ``old`` to ``new`` in the module, and check again."""
    add_module(copy, "Attempt", body)
    register(monkeypatch, theorem)
    assert check(copy, write_registry=True) == []
    edit(copy / "PrefixPool" / "Attempt.lean", old, new)
    return check(copy)


def test_hole_2_a_helper_named_like_a_keyword_is_pinned(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`calc` (and `at`, `exists`, ...) is a legal name here; the text closure
    skipped it as a keyword, so its body could change silently."""
    failures = _pin_then_change(
        copy,
        monkeypatch,
        "calc_is_itself",
        "noncomputable def calc (n : Natural) : Natural := n\n"
        "theorem calc_is_itself (n : Natural) : Eq (calc n) (calc n) := Eq.refl (calc n)\n",
        "noncomputable def calc (n : Natural) : Natural := n\n",
        "noncomputable def calc (_n : Natural) : Natural := Natural.zero\n",
    )
    assert failures and "registry lean/theorems.json is out of date" in failures[0], failures
    assert "definition calc changed" in failures[0], failures


#: long enough for Lean to print `have x :=` and the value on the next line
LONG_VALUE = "n"
for _ in range(20):
    LONG_VALUE = f"(Natural.succ {LONG_VALUE})"


def test_hole_3_what_follows_a_have_in_a_statement_is_pinned(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `have x :=` in a statement cut the printed text the closure was read
    from: a helper named after it escaped the registry."""
    failures = _pin_then_change(
        copy,
        monkeypatch,
        "after_have",
        "noncomputable def later (n : Natural) : Natural := n\n"
        "theorem after_have (n : Natural) :\n"
        f"    have x := {LONG_VALUE}\n"
        "    Eq (later x) (later x) := Eq.refl _\n",
        "noncomputable def later (n : Natural) : Natural := n\n",
        "noncomputable def later (_n : Natural) : Natural := Natural.zero\n",
    )
    assert failures and "registry lean/theorems.json is out of date" in failures[0], failures


def test_hole_4_a_change_hidden_by_an_elided_statement_is_pinned(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lean prints a deep statement with `⋯`; a change below it left the
    printed statement, and so the registry, as it was."""
    deep = "n"
    for _ in range(80):
        deep = f"(Natural.succ {deep})"
    changed = deep.replace("(Natural.succ n)", "(Natural.succ (Natural.succ n))")
    failures = _pin_then_change(
        copy,
        monkeypatch,
        "deep_statement",
        f"theorem deep_statement (n : Natural) : Eq {deep} {deep} := Eq.refl _\n",
        f"Eq {deep} {deep} := Eq.refl _",
        f"Eq {changed} {changed} := Eq.refl _",
    )
    assert failures and "deep_statement: elaborated type changed" in failures[0], failures


def test_hole_5_an_example_hiding_its_arrow_in_a_definition_is_refused(copy: Path) -> None:
    """The example must apply the theorem to every argument: a closed-looking
    statement that unfolds to the theorem itself shows nothing can hold."""
    edit(
        copy / "PrefixPool" / "Examples.lean",
        "theorem pooled_block_misses_eq_distinct_applies :\n"
        "    Eq (pooled_block_misses tree_chains) (distinct_blocks tree_chains) :=\n"
        "  pooled_block_misses_eq_distinct tree_chains tree_chains_prefix_closed\n",
        "def HiddenArrow : Prop := ∀ (chains : List (List Natural)), prefix_closed chains →\n"
        "    Eq (pooled_block_misses chains) (distinct_blocks chains)\n"
        "theorem pooled_block_misses_eq_distinct_applies : HiddenArrow :=\n"
        "  pooled_block_misses_eq_distinct\n",
    )
    failures = check(copy)
    assert failures and failures[0].startswith(
        "registered theorem pooled_block_misses_eq_distinct: its example "
        "pooled_block_misses_eq_distinct_applies is not proved by applying "
        "pooled_block_misses_eq_distinct to all its 2 arguments"
    ), failures


def test_hole_5_a_dependent_premise_needs_an_example(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`∀ (z : 0 = 1), ...` was not read as a hypothesis, so nothing showed it can hold."""
    add_module(
        copy,
        "Attempt",
        "theorem vacuous (z : Eq Natural.zero (Natural.succ Natural.zero)) : Eq z z := Eq.refl z\n",
    )
    register(monkeypatch, "vacuous")
    failures = check(copy, write_registry=True)
    assert failures and failures[0].startswith(
        "registered theorem vacuous: its hypothesis number 1 (a binder of its type) (and every other) "
        "needs an example"
    ), failures


#: Premises no constant heads: `h : P x` with `P` a binder of the theorem, and `k : ∀ (Q : Prop), Q`,
#: which no proof inhabits (so the theorem proves its conclusion from nothing that can hold).
BOUND_PREMISES = (
    "(P : Natural → Prop) (_h : P Natural.zero) (k : ∀ (Q : Prop), Q) : "
    "Eq Natural.zero (Natural.succ Natural.zero) := k _\n"
)


def test_hole_5_premises_headed_by_a_bound_variable_are_counted(tmp_path: Path) -> None:
    """Read from the replayed environment: binders over data (`n`, `α`, `x : α`) and over
    propositions (`R : Prop`) are not hypotheses; `h : P n`, `k : ∀ Q, Q` and `j : R` are."""
    replayed = replay(
        tmp_path,
        {
            "Attempt": CORE
            + "inductive Natural : Type where\n  | zero : Natural\n  | succ (n : Natural) : Natural\n"
            "theorem forged (n : Natural) (P : Natural → Prop) (h : P n) (k : ∀ (Q : Prop), Q) "
            "(α : Type) (x : α) (R : Prop) (j : R) : False := k False\n"
        },
    )
    assert kernel_replay.premises(replayed, "forged") == [2, 3, 7]


def test_hole_5_a_theorem_whose_premises_a_bound_variable_heads_needs_an_example(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vacuous theorem (its premise `∀ (Q : Prop), Q` is false) whose premises no constant
    heads was read as having none, so it passed with no example."""
    add_module(copy, "Attempt", "theorem bound_premise " + BOUND_PREMISES)
    register(monkeypatch, "bound_premise")
    failures = check(copy, write_registry=True)
    assert failures and failures[0].startswith(
        "registered theorem bound_premise: its hypothesis `P Natural.zero` (and every other) "
        "needs an example"
    ), failures


def test_hole_6_a_file_swapped_after_the_scan_is_not_what_is_compiled(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sources were scanned, then compiled from the project: a file swapped
    in between was compiled unscanned. Now the check works on one private
    copy: the swap (here, text Lean cannot parse) changes nothing."""
    scan = runner.discover_modules
    target = copy / "PrefixPool" / "Flat.lean"

    def scan_then_swap(project, library):
        modules = scan(project, library)
        target.write_text("prelude\nthis is not Lean\n", encoding="utf-8")
        return modules

    monkeypatch.setattr(runner, "discover_modules", scan_then_swap)
    assert check(copy) == []
    assert target.read_text(encoding="utf-8") == "prelude\nthis is not Lean\n"
