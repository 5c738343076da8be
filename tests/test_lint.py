"""Ruff (configured in pyproject.toml) passes on the whole tree: its lint finds nothing and
``ruff format`` would change nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import REPO


TREE = ["pyverify", "tests", "scripts", "bench", "docs/_hooks"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=" ".join)
def test_ruff_finds_nothing(command):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            *command,
            "--no-cache",
            *TREE,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
