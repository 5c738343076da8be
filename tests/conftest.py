"""Shared test set-up: Hypothesis profiles and paths.

Profiles: ``ci`` (selected when the CI environment variable is set) is
derandomised so a CI run is reproducible; ``dev`` explores more examples.
Choose one explicitly with ``HYPOTHESIS_PROFILE=dev pytest``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .robustness.conftest import TALLY

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=400, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

REPO = Path(__file__).resolve().parents[1]
LAB_INSTANCE = REPO / "instances" / "lab-512x32x16.json"
SHARED = REPO.parent / "shared"
#: The Mooncake FAST'25 traces: FAST25-release/traces/ in the kvcache-ai/Mooncake
#: repository on GitHub. Tests that replay a real trace look for
#: synthetic_trace.jsonl in $PYVERIFY_MOONCAKE_TRACES (default: ../shared/data/mooncake
#: beside the checkout, where this project's CI keeps a copy) and skip, saying so, without it.
MOONCAKE_TRACES = Path(os.environ.get("PYVERIFY_MOONCAKE_TRACES") or SHARED / "data" / "mooncake")
MOONCAKE_SYNTHETIC = MOONCAKE_TRACES / "synthetic_trace.jsonl"
NO_MOONCAKE = (
    f"{MOONCAKE_SYNTHETIC} is absent: download FAST25-release/traces/synthetic_trace.jsonl from the "
    "kvcache-ai/Mooncake repository on GitHub and set PYVERIFY_MOONCAKE_TRACES to its folder"
)


# The robustness campaign's tally (tests/robustness/conftest.py), printed at the end of the run. These
# hooks live here, not beside the tally, because pytest's controller process loads only this conftest
# at start-up: under pytest-xdist the workers count and the controller prints.


def pytest_sessionfinish(session):
    """Under pytest-xdist each worker counts its own runs: hand them to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["robustness_tally"] = dict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):  # noqa: ARG001 (xdist's hook signature)
    TALLY.update(getattr(node, "workeroutput", {}).get("robustness_tally", {}))


def pytest_terminal_summary(terminalreporter):
    if not TALLY:
        return
    kinds = sorted({key.rsplit(" ", 1)[0] for key in TALLY})
    terminalreporter.section("robustness campaign")
    for kind in kinds:
        terminalreporter.write_line(
            f"{kind}: tried {TALLY[f'{kind} tried']}, handled {TALLY[f'{kind} handled']}, defects {TALLY[f'{kind} defects']}"
        )
