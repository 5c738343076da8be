"""The package's folders show its architecture; these tests keep the layers honest.

* the trusted checkers import no solver, no searcher and no simulator;
* nothing below the command layer imports :mod:`pyverify.commands` (the audit
  sits above the commands' logic, never on top of the commands themselves);
* the model-and-inputs layer imports nothing from simulation, certify, Lean or reports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pyverify"


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def modules_in(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def relative(path: Path) -> str:
    """A test id by path inside the package, so ``inputs/__init__.py`` and ``inputs/columnar/__init__.py`` differ."""
    return str(path.relative_to(PACKAGE))


#: The trusted modules that work on arrays (packed witnesses): they alone may import numpy, and numba only through
#: trusted/compiled.py; the plain-Python checker (check.py, digest.py, recount.py) stays free of both.
TRUSTED_ARRAY_MODULES = {"packed.py", "array_check.py", "array_recount.py", "array_digest.py", "compiled.py"}


@pytest.mark.parametrize("path", modules_in("trusted"), ids=relative)
def test_trusted_imports_no_searcher(path):
    forbidden = ("ortools", "z3", "pyverify.certify", "pyverify.sim", "pyverify.commands", "pyverify.reports", "pyverify.engines")
    if path.name not in TRUSTED_ARRAY_MODULES:
        forbidden += ("numpy", "numba")
    elif path.name != "compiled.py":
        forbidden += ("numba",)
    bad = {name for name in imports_of(path) if name.startswith(forbidden)}
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_the_array_modules_are_named():
    assert TRUSTED_ARRAY_MODULES <= {p.name for p in modules_in("trusted")}


@pytest.mark.parametrize("path", [p for p in PACKAGE.rglob("*.py") if "commands" not in p.parts and p.name != "cli.py"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_nothing_below_the_commands_imports_them(path):
    assert not {name for name in imports_of(path) if name.startswith("pyverify.commands")}


@pytest.mark.parametrize("path", modules_in("inputs"), ids=relative)
def test_inputs_layer_is_at_the_bottom(path):
    upper = ("pyverify.sim", "pyverify.certify", "pyverify.lean", "pyverify.reports", "pyverify.cost", "pyverify.trusted")
    assert not {name for name in imports_of(path) if name.startswith(upper)}
