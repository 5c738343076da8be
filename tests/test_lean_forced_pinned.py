"""Definition edits that would make `pinned_misses_ge_forced_min` vacuous must be refused.

The theorem (lean/PrefixPool/ForcedPinned.lean) says something only if some run is
`pinned_valid` and some chains are `chains_fit`. Each edit below makes one of them
unsatisfiable while the theorem still builds (its proof is patched to use only the
real conjuncts), as a hostile contributor would; `pyverify lean check` must refuse it:
first the positive examples in Examples.lean stop elaborating, and with those deleted
the catalog's `applies` example is missing. Each check of a copy costs one Lean build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyverify.lean import runner

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "lean"


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "lean"
    shutil.copytree(LEAN, target, ignore=shutil.ignore_patterns(".lake", "build"))
    return target


MISSING_EXAMPLE = (
    "registered theorem pinned_misses_ge_forced_min: its example pinned_misses_ge_forced_min_applies "
    "is not a theorem of PrefixPool.Examples"
)


def check(project: Path) -> list[str]:
    return runner.check(project, backend="wheel", emit=lambda line: None).failures


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur exactly once in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def cut(path: Path, start: str, end: str) -> None:
    """Delete from the line starting ``start`` through the first blank line after ``end``."""
    text = path.read_text(encoding="utf-8")
    first = text.index(start)
    last = text.index("\n\n", text.index(end, first))
    path.write_text(text[:first] + text[last + 2 :], encoding="utf-8")


def delete_the_examples(copy: Path, positive: str) -> None:
    examples = copy / "PrefixPool" / "Examples.lean"
    cut(examples, positive, positive)
    cut(
        examples,
        "/-- `pinned_misses_ge_forced_min` applied to that run",
        "theorem pinned_misses_ge_forced_min_applies",
    )


def test_pinned_valid_made_unsatisfiable_is_refused(copy: Path) -> None:
    """`pinned_valid ... ∧ False`: no run is pinned, so the theorem would say nothing."""
    pinned = copy / "PrefixPool" / "ForcedPinned.lean"
    edit(
        pinned,
        "  And (prefix_valid cap run) (pinned_after List.nil run)\n",
        "  And (prefix_valid cap run) (And (pinned_after List.nil run) False)\n",
    )
    # the theorem's proof uses only the real conjunct, so it still builds
    text = pinned.read_text(encoding="utf-8")
    start = text.index("theorem pinned_misses_ge_forced_min ")
    pinned.write_text(
        text[:start] + text[start:].replace("h.right", "h.right.left"), encoding="utf-8"
    )
    failures = check(copy)
    assert failures and failures[0].startswith(
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line "
    ), failures
    delete_the_examples(copy, "/-- The LRU prefix run of 2 blocks on `[[1, 2], [1, 3]]` pins")
    failures = check(copy)
    assert failures and failures[0] == MISSING_EXAMPLE, failures


def test_chains_fit_made_unsatisfiable_is_refused(copy: Path) -> None:
    """`chains_fit` false for every nonempty list of chains: the theorem would hold only of the
    empty request list."""
    pinned = copy / "PrefixPool" / "ForcedPinned.lean"
    edit(pinned, "        fit_rest)\n", "        (And fit_rest False))\n")
    # the proofs use only the real conjuncts, so they still build
    text = pinned.read_text(encoding="utf-8")
    pinned.write_text(text.replace("hfit.right", "hfit.right.left"), encoding="utf-8")
    failures = check(copy)
    assert failures and failures[0].startswith(
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line "
    ), failures
    delete_the_examples(copy, "/-- Both chains of `[[1, 2], [1, 3]]` have one to 2 blocks")
    failures = check(copy)
    assert failures and failures[0] == MISSING_EXAMPLE, failures
