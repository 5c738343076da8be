"""Ways a wrong claim once slipped through `pyverify lean check`, and their kin.

An adversarial review found that the check accepted a proof of `False` (the
kernel's Nat acceleration), options hidden from its source scanner by quoted
identifiers, a `ctypes.py` in the project shadowing the child's standard
library, trusted definitions whose helpers escaped the registry, and an
unsatisfiable extra premise. Each test applies one such attack to a fresh copy
of lean/ and expects a refusal naming it. Where a cheap source scan refuses an
attack first, a second test switches the scan off to show the check asked of
Lean itself refuses it too (the scan is a first line, not the soundness).

Each check of a copy costs a few seconds (one Lean build).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyverify.lean import catalog, runner, sources, trust

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "lean"

GEN_OFF = "set_option genCtorIdx false\nset_option genInjectivity false\nset_option genSizeOf false\nset_option genSizeOfSpec false\n"


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "lean"
    shutil.copytree(LEAN, target, ignore=shutil.ignore_patterns(".lake", "build"))
    return target


def check(project: Path) -> list[str]:
    return runner.check(project, backend="wheel", emit=lambda line: None).failures


def add_module(project: Path, name: str, body: str, imports: str = "PrefixPool.Core") -> None:
    (project / "PrefixPool" / f"{name}.lean").write_text(
        f"prelude\nimport {imports}\n{body}", encoding="utf-8"
    )
    root = project / "PrefixPool.lean"
    text = root.read_text(encoding="utf-8")
    root.write_text(
        text.replace(
            "import PrefixPool.Core\n", f"import PrefixPool.Core\nimport PrefixPool.{name}\n", 1
        ),
        encoding="utf-8",
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur exactly once in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture()
def no_source_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the source scan off: what remains is what Lean itself reports."""
    monkeypatch.setattr(sources, "problems", lambda text: [])


# --------------------------------------------------------------------------
# 1. Names the kernel treats specially

OWN_NAT = (
    GEN_OFF
    + """
inductive Nat : Type where
  | zero : Nat
  | succ (n : Nat) : Nat

noncomputable def Nat.add (n m : Nat) : Nat := Nat.rec n (fun _ r => r) m
"""
)


def test_an_own_nat_is_refused_by_the_scan(copy: Path) -> None:
    add_module(copy, "OwnNat", OWN_NAT)
    failures = check(copy)
    assert (
        failures
        and "PrefixPool.OwnNat" in failures[0]
        and "treats names in `Nat` specially" in failures[0]
    ), failures


@pytest.mark.parametrize(
    "name, body",
    [
        ("Nat", OWN_NAT),
        (
            "Nat.add",
            GEN_OFF
            + "namespace Nat\nnoncomputable def add (n _m : Natural) : Natural := n\nend Nat\n",
        ),
        (
            "String",
            GEN_OFF + "inductive String : Type where\n  | ofList (cs : List Natural) : String\n",
        ),
        ("Char.ofNat", GEN_OFF + "noncomputable def Char.ofNat (n : Natural) : Natural := n\n"),
        (
            "Lean.reduceBool",
            GEN_OFF
            + "namespace Lean\nnoncomputable def reduceBool (b : Bool) : Bool := b\nend Lean\n",
        ),
    ],
    ids=lambda value: value if "\n" not in value else "",
)
def test_a_kernel_name_is_refused_by_lean_itself(
    copy: Path, no_source_scan, name: str, body: str
) -> None:
    add_module(copy, "Special", body)
    failures = check(copy)
    assert failures and failures[0].startswith(
        f"declaration {name}: refused: the Lean kernel treats `{name}` specially"
    ), failures


# --------------------------------------------------------------------------
# 2. Options hidden from the scanner


@pytest.mark.parametrize(
    "trick",
    [
        '«"» set_option debug.skipKernelTC true in «x"»',
        "'\"' set_option debug.skipKernelTC true in '\"'",
        'r"\\" set_option debug.skipKernelTC true in "',
        '`«"» set_option debug.skipKernelTC true in',
    ],
)
def test_quotes_that_hid_an_option_are_refused(trick: str) -> None:
    found = sources.problems(f"prelude\n{trick}\ntheorem t : True := True.intro\n")
    assert found and found[0][0] == 2, found
    assert trust.option_problems(f"prelude\n{trick}\n"), "the option itself is seen too"


def test_an_unclosed_comment_is_refused() -> None:
    assert sources.problems("prelude\n/- never closed\nset_option debug.skipKernelTC true\n") == [
        (2, "a block comment is not closed")
    ]


def test_an_unsafe_def_posing_as_a_theorem_is_refused(copy: Path) -> None:
    edit(
        copy / "PrefixPool" / "BeladyOptimal.lean",
        "theorem min_misses_le ",
        "unsafe def min_misses_le ",
    )
    failures = check(copy)
    assert failures and "`unsafe`" in failures[0], failures


def test_a_registered_name_that_is_not_a_theorem_is_refused_by_lean(
    copy: Path, no_source_scan, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registered name declared as a `def` of a Prop-typed value, the linter
    that warns about it switched off: Lean's own `#print` says it is no theorem."""
    monkeypatch.setattr(trust, "option_problems", lambda text: [])
    pooled = copy / "PrefixPool" / "Pooled.lean"
    edit(
        pooled, "theorem pooled_misses_eq_distinct ", "noncomputable def pooled_misses_eq_distinct "
    )
    edit(pooled, "/-! ## Theorems -/", "set_option linter.defProp false\n\n/-! ## Theorems -/")
    monkeypatch.setattr(
        runner.environment,
        "theorem_modules",
        lambda modules: {**_theorems(modules), "pooled_misses_eq_distinct": "PrefixPool.Pooled"},
    )
    failures = check(copy)
    assert failures and failures[0].startswith(
        "registered theorem pooled_misses_eq_distinct: Lean says it is"
    ), failures


def _theorems(modules):
    import re

    found = {}
    for module in modules:
        for match in re.finditer(
            r"^\s*theorem\s+(\S+)", module.path.read_text(encoding="utf-8"), re.M
        ):
            found.setdefault(match.group(1), module.name)
    return found


@pytest.mark.parametrize(
    "word", ["private", "macro", "notation", "syntax", "#eval", "axiom", "opaque", "export"]
)
def test_words_that_hide_or_add_code_are_refused(word: str) -> None:
    text = f"prelude\n{word} foo\n"
    assert any(line == 2 and f"`{word}`" in reason for line, reason in sources.problems(text))


def test_the_development_passes_the_scan() -> None:
    for path in sorted(LEAN.rglob("*.lean")):
        assert sources.problems(path.read_text(encoding="utf-8")) == [], path


# --------------------------------------------------------------------------
# 3. The Lean child cannot be steered by files in the project


@pytest.mark.parametrize("module_name", ["ctypes", "signal", "sitecustomize"])
def test_a_shadowing_module_in_the_project_is_not_imported(
    copy: Path, tmp_path: Path, module_name: str
) -> None:
    """The Lean child once ran `python -c` with the project as its working
    directory, so a `ctypes.py` there replaced the standard library's (and could
    add `-Ddebug.skipKernelTC=true` to every Lean run)."""
    marker = tmp_path / "imported"
    shadow = f"open({str(marker)!r}, 'w').write('yes')\nraise SystemExit(0)\n"
    for folder in (copy, copy / "PrefixPool"):
        (folder / f"{module_name}.py").write_text(shadow, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify.lean.command",
            "check",
            "--backend",
            "wheel",
            "--project",
            str(copy),
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env={**_env(), "PYTHONPATH": str(REPO)},
    )
    assert not marker.exists(), f"{module_name}.py in the project was imported"
    assert proc.returncode == 0, proc.stderr


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


# --------------------------------------------------------------------------
# 4. Trusted definitions whose helpers escape the registry

ROUTED_BELOW = (
    "def routed_below (fleet : Natural) (requests : List (Prod Natural (List Natural))) : Prop :="
)


def delegate_routed_below(project: Path, declaration: str) -> None:
    """Make the trusted `routed_below` call a helper holding its old body,
    declared as ``declaration`` (the helper's modifiers and name)."""
    path = project / "PrefixPool" / "PerHostMin.lean"
    name = declaration.split()[-1]
    text = path.read_text(encoding="utf-8")
    start = text.index(ROUTED_BELOW)
    end = text.index("\n\n", start)
    body = text[start + len(ROUTED_BELOW) : end]
    helper = f"{declaration} (fleet : Natural) (requests : List (Prod Natural (List Natural))) : Prop :={body}\n\n"
    path.write_text(
        text[:start] + helper + f"{ROUTED_BELOW}\n  {name} fleet requests" + text[end:],
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    "declaration, expect",
    [
        ("def «routed-below»", "'«routed-below»' is not a plain ASCII identifier"),
        ("def routed_below᾽", "'routed_below᾽' is not a plain ASCII identifier"),
        ("private def hidden_below", "`private`"),
    ],
)
def test_an_escaping_helper_is_refused_by_the_scan(
    copy: Path, declaration: str, expect: str
) -> None:
    delegate_routed_below(copy, declaration)
    failures = check(copy)
    assert failures and "PrefixPool.PerHostMin" in failures[0] and expect in failures[0], failures


@pytest.mark.parametrize(
    "declaration, pinned",
    [
        ("private def hidden_below", "_private.PrefixPool.PerHostMin.0.hidden_below"),
        ("def «hidden-below»", "«hidden-below»"),
        ("def hidden_below᾽", "«hidden_below᾽»"),
    ],
)
def test_an_escaping_helper_is_pinned_by_the_environment(
    copy: Path, no_source_scan, declaration: str, pinned: str
) -> None:
    """The trusted `routed_below` made to delegate to a helper the registry's
    text closure used to miss: the closure is now read from the replayed
    environment, where the helper is a constant like any other, so the
    registry records it (and the committed one no longer matches)."""
    delegate_routed_below(copy, declaration)
    assert runner.check(copy, backend="wheel", write_registry=True, emit=lambda l: None).ok
    registry = json.loads((copy / "theorems.json").read_text(encoding="utf-8"))
    entry = next(t for t in registry["theorems"] if t["name"] == "fleet_misses_ge_per_host_min")
    assert pinned in entry["definitions"] and "routed_below" in entry["definitions"]
    assert (copy / "theorems.json").read_text(encoding="utf-8") != (
        LEAN / "theorems.json"
    ).read_text(encoding="utf-8")


# --------------------------------------------------------------------------
# 5. A hypothesis that cannot hold


def test_an_unsatisfiable_extra_premise_is_refused(copy: Path) -> None:
    """`Eq zero (succ zero)` added to `min_misses_le`: an example per premise kind
    would be satisfied by any other equation's example; the instantiation of
    the theorem itself cannot be written."""
    edit(
        copy / "PrefixPool" / "BeladyOptimal.lean",
        "theorem min_misses_le (cap : Natural) (blocks : List Natural)",
        "theorem min_misses_le (_absurd : Eq Natural.zero (Natural.succ Natural.zero)) (cap : Natural) (blocks : List Natural)",
    )
    failures = check(copy)
    assert failures and failures[0].startswith("module PrefixPool."), failures


def test_an_example_that_does_not_apply_the_theorem_is_refused(copy: Path) -> None:
    edit(
        copy / "PrefixPool" / "Examples.lean",
        "  pooled_block_misses_eq_distinct tree_chains tree_chains_prefix_closed\n",
        "  rfl\n",
    )
    failures = check(copy)
    assert failures and failures[0].startswith(
        "registered theorem pooled_block_misses_eq_distinct: its example pooled_block_misses_eq_distinct_applies "
        "is not proved by applying pooled_block_misses_eq_distinct"
    ), failures


def test_a_theorem_with_hypotheses_needs_an_example(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    specs = tuple(
        dataclasses.replace(s, applies=None) if s.name == "min_misses_le" else s
        for s in catalog.THEOREMS
    )
    monkeypatch.setattr(catalog, "THEOREMS", specs)
    failures = check(copy)
    assert failures and failures[0].startswith(
        "registered theorem min_misses_le: its hypothesis `flat_valid cap run`"
    ), failures


def test_an_example_about_no_concrete_input_is_refused(copy: Path) -> None:
    edit(
        copy / "PrefixPool" / "Examples.lean",
        "theorem pooled_block_misses_eq_distinct_applies :\n    Eq (pooled_block_misses tree_chains) (distinct_blocks tree_chains) :=\n"
        "  pooled_block_misses_eq_distinct tree_chains tree_chains_prefix_closed\n",
        "theorem pooled_block_misses_eq_distinct_applies (chains : List (List Natural)) (h : prefix_closed chains) :\n"
        "    Eq (pooled_block_misses chains) (distinct_blocks chains) :=\n"
        "  pooled_block_misses_eq_distinct chains h\n",
    )
    failures = check(copy)
    assert failures and "which is not about a concrete input" in failures[0], failures


# --------------------------------------------------------------------------
# 6. Generated examples, unused axioms, the build configuration, which project


def test_an_emptied_generated_module_is_refused(copy: Path) -> None:
    path = copy / "PrefixPool" / "Generated.lean"
    header = path.read_text(encoding="utf-8").split("noncomputable def gen_n0", 1)[0]
    path.write_text(header, encoding="utf-8")
    failures = check(copy)
    assert (
        failures
        and failures[0].startswith(
            "module PrefixPool.Generated (lean/PrefixPool/Generated.lean), line "
        )
        and "not what the Python mirrors generate" in failures[0]
    ), failures


def test_an_unused_axiom_is_refused(copy: Path) -> None:
    add_module(copy, "Extra", "axiom boom : False\n")
    failures = check(copy)
    assert failures and "PrefixPool.Extra" in failures[0] and "`axiom`" in failures[0], failures


@pytest.mark.parametrize(
    "line", ['srcDir = "elsewhere"', 'buildDir = "b"', '[[require]]\nname = "mathlib"']
)
def test_lakefile_keys_that_build_another_tree_are_refused(copy: Path, line: str) -> None:
    lakefile = copy / "lakefile.toml"
    text = lakefile.read_text(encoding="utf-8")
    lakefile.write_text(
        text.replace("defaultTargets", f"{line}\ndefaultTargets", 1)
        if "[[" not in line
        else text + line + "\n",
        encoding="utf-8",
    )
    failures = check(copy)
    assert (
        failures
        and failures[0].startswith("build configuration: lakefile.toml: ")
        and "refused" in failures[0]
    ), failures


def test_the_default_project_is_the_checkout_the_working_directory_is_in(tmp_path: Path) -> None:
    other = tmp_path / "other-checkout"
    shutil.copytree(LEAN, other / "lean", ignore=shutil.ignore_patterns(".lake", "build"))
    (other / "instances").mkdir()
    assert runner.default_project(other / "instances") == other / "lean"
    assert runner.default_project(other / "lean" / "PrefixPool") == other / "lean"
    assert runner.default_project(tmp_path) == runner.packaged_project()


def test_the_check_says_which_project_it_checks(copy: Path) -> None:
    lines: list[str] = []
    runner.check(copy, backend="wheel", emit=lines.append)
    assert lines[0] == f"project: {copy.resolve()}"
