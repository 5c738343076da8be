"""The robustness campaign's tally: how many hostile runs were tried, handled, and found defects.

Each campaign test records its runs in :data:`TALLY`; ``tests/conftest.py`` prints the
totals at the end of the run (and docs/reference/reliability.md quotes them).
Scale the campaign with ``PYVERIFY_CAMPAIGN_SCALE`` (default 1 in CI; try 5
locally for five times as many random mutants and kill times).
"""

from __future__ import annotations

import os
from collections import Counter

TALLY: Counter = Counter()
SCALE = max(1, int(os.environ.get("PYVERIFY_CAMPAIGN_SCALE", "1")))


def record(kind: str, handled: bool) -> None:
    TALLY[f"{kind} tried"] += 1
    TALLY[f"{kind} {'handled' if handled else 'defects'}"] += 1
