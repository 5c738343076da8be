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
    """Every deterministic figure block in README.md is what its command prints today
    (scripts/readme_figures.py regenerates them; timings are kept out of this check)."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(REPO / "scripts" / "readme_figures.py"), "--check"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr


def test_every_figure_block_has_a_command():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("readme_figures", REPO / "scripts" / "readme_figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_figures"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    names = set(module.blocks((REPO / "README.md").read_text()))
    assert names == {figure.name for figure in module.FIGURES}


def test_ci_installs_the_test_libraries_at_pinned_versions():
    """A new release of a test library must not turn main red on the next new machine: the install
    takes constraints.txt (scripts/lock_test_deps.sh regenerates it), which pins each one exactly."""
    install, _, _ = quickstart_commands()
    assert "-c constraints.txt" in install
    pinned = dict(line.split("==", 1) for line in (REPO / "constraints.txt").read_text().splitlines()
                  if line and not line.startswith("#"))
    for library in ("pytest", "pytest-xdist", "hypothesis", "numpy", "numba", "ortools", "z3-solver"):
        assert library in pinned, library
