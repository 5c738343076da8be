"""Commands that default to the project's own files work from any folder, not only the repository root."""

from __future__ import annotations

import subprocess
import sys


def test_audit_and_bridge_defaults_from_another_folder(tmp_path):
    audit = subprocess.run(
        [sys.executable, "-m", "pyverify", "audit", "-o", "report"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert audit.returncode == 0, audit.stderr
    assert (tmp_path / "report" / "report.md").is_file()
    assert "lab-512x32x16" in (tmp_path / "report" / "summary.json").read_text()
    bridge = subprocess.run(
        [sys.executable, "-m", "pyverify", "bridge", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bridge.returncode == 0, bridge.stderr
    assert '"certificates"' in bridge.stdout


def test_help_says_where_defaults_come_from():
    result = subprocess.run(
        [sys.executable, "-m", "pyverify", "audit", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "in the pyverify checkout" in result.stdout
