"""Ruff's lint (configured in pyproject.toml) passes on the whole tree: no unused or undefined names."""

from __future__ import annotations

import subprocess
import sys

from .conftest import REPO


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "pyverify", "tests",
                             "scripts", "bench", "docs/_hooks"], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
