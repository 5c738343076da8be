"""The documentation site under docs/ builds with MkDocs, strictly, and its flag reference is complete."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from .conftest import REPO


def test_the_docs_site_builds_strictly(tmp_path):
    """`mkdocs build --strict` fails on any warning: a broken link or anchor, a page left out of
    the navigation, a hook that fails. The commands page is generated from the parser."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it is in the dev extra: pip install -e '.[dev]')")
    site = tmp_path / "site"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(REPO / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    commands = (site / "reference" / "commands" / "index.html").read_text()
    from pyverify.cli import COMMAND_MODULES

    for name in COMMAND_MODULES:
        assert f'id="pyverify-{name}"' in commands, name
    assert "--capacity" in commands


def test_no_comment_points_at_a_missing_design_document():
    """Source comments point at pages that exist (docs/explanation/model.md), not at a DESIGN.md."""
    assert not (REPO / "DESIGN.md").exists()
    mentions = [
        str(path.relative_to(REPO))
        for path in (REPO / "pyverify").rglob("*")
        if path.is_file()
        and path.suffix in (".py", ".json")
        and "DESIGN.md" in path.read_text(encoding="utf-8")
    ]
    assert mentions == []


def test_every_docs_page_is_in_the_navigation():
    nav = (REPO / "mkdocs.yml").read_text()
    pages = {str(path.relative_to(REPO / "docs")) for path in (REPO / "docs").rglob("*.md")}
    listed = set(re.findall(r":\s+(\S+\.md)\s*$", nav, re.M))
    assert pages == listed


def test_no_dated_bench_results_are_kept_in_the_repository():
    """Bench results belong outside git or on the one regenerated benchmarks page, not as dated files."""
    import re

    dated = [
        path.name
        for path in (REPO / "bench").iterdir()
        if re.search(r"\d{4}-\d{2}-\d{2}", path.name)
    ]
    assert dated == []
