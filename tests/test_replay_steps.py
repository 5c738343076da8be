"""The step-based engine service model of ``pyverify replay`` (pyverify.fleet.service, pyverify.fleet.replay)."""

from __future__ import annotations

import ast
from pathlib import Path

import pyverify.fleet


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_the_two_event_loops_do_not_import_each_other_for_their_records():
    """HostStats, LOAD_SAMPLES and ReplayRun live in pyverify.fleet.run: the compiled loop imports no Python loop."""
    folder = Path(pyverify.fleet.__file__).parent
    assert "pyverify.fleet.replay" not in imported_modules(folder / "compiled_replay.py")
    assert "pyverify.fleet.run" in imported_modules(folder / "replay.py")
