"""README.md's quickstart stays true: CI installs and tests exactly as it says."""

from __future__ import annotations

import re

from .conftest import REPO


def quickstart_commands() -> list[str]:
    readme = (REPO / "README.md").read_text()
    block = re.search(r"## Quickstart\s+```sh\n(.*?)```", readme, re.S).group(1)
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_quickstart_has_install_main_job_and_test():
    install, main_job, test = quickstart_commands()
    assert install.startswith("pip install")
    assert main_job.startswith("pyverify ")
    assert test == "pytest"


def test_ci_runs_the_readme_install_and_test_commands():
    install, _, test = quickstart_commands()
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert install in ci_lines
    assert ci_lines[-1] == test


def test_readme_figures_match_what_the_commands_print():
    """Every deterministic figure block in README.md and docs/ is what its command prints today
    (scripts/readme_figures.py regenerates them; timings are kept out of this check)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "readme_figures.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr


def readme_figures():
    """scripts/readme_figures.py, imported as a module."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "readme_figures", REPO / "scripts" / "readme_figures.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_figures"] = (
        module  # dataclasses look their module up while the class is built
    )
    spec.loader.exec_module(module)
    return module


def test_every_figure_block_has_a_command():
    """Every figure block in README.md or a docs/ page has a command, and every command a block."""
    module = readme_figures()
    assert set(module.figure_pages()) == {figure.name for figure in module.FIGURES}


def test_a_stale_figure_in_a_docs_page_is_reported_and_regenerated(tmp_path, monkeypatch):
    """A figure moved into docs/ is still checked against its command, and regenerated in place."""
    import shutil

    module = readme_figures()
    monkeypatch.setattr(module, "REPO", tmp_path)
    (tmp_path / "instances").mkdir()
    shutil.copy(REPO / "instances" / "lab-512x32x16.json", tmp_path / "instances")
    (tmp_path / "README.md").write_text("# short\n")
    page = tmp_path / "docs" / "howto" / "page.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "<!-- figure: lab-sweep -->\n```\n$ pyverify sweep instances/lab-512x32x16.json\n"
        "a number that is no longer printed\n```\n<!-- /figure -->\n"
    )
    lab_sweep = [figure for figure in module.FIGURES if figure.name == "lab-sweep"]
    drifted = module.check(lab_sweep)
    assert len(drifted) == 1 and "docs/howto/page.md" in drifted[0], drifted
    assert module.main(["--only", "lab-sweep"]) == 0
    assert "pooled hit rate" in page.read_text()
    assert module.check(lab_sweep) == []


def test_a_figure_marked_in_two_pages_is_refused(tmp_path, monkeypatch):
    import pytest

    module = readme_figures()
    monkeypatch.setattr(module, "REPO", tmp_path)
    block = "<!-- figure: audit -->\n```\n$ pyverify audit\n```\n<!-- /figure -->\n"
    (tmp_path / "README.md").write_text(block)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tutorial.md").write_text(block)
    with pytest.raises(SystemExit, match="both README.md and docs/tutorial.md"):
        module.figure_pages()


def test_readme_is_short():
    """A newcomer reads the README in ten minutes: the rest lives in docs/."""
    assert len((REPO / "README.md").read_text().splitlines()) <= 250


def test_readme_links_point_at_files_in_the_repository():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", (REPO / "README.md").read_text()):
        if "://" not in target:
            assert (REPO / target).is_file(), target


def test_ci_installs_the_test_libraries_at_pinned_versions():
    """A new release of a test library must not turn main red on the next new machine: the install
    takes constraints.txt (scripts/lock_test_deps.sh regenerates it), which pins each one exactly."""
    install, _, _ = quickstart_commands()
    assert "-c constraints.txt" in install
    pinned = dict(
        line.split("==", 1)
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    for library in (
        "pytest",
        "pytest-xdist",
        "hypothesis",
        "numpy",
        "numba",
        "ortools",
        "z3-solver",
    ):
        assert library in pinned, library
