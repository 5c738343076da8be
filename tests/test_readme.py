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
