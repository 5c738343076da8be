"""Progress for long work, on standard error: a tqdm bar on a terminal, plain lines otherwise.

Standard output carries only the command's result (a table, or ``--json``), so
progress never mixes into it. When standard error is a file or a pipe (a CI
log, ``2>&1 | tee``), a bar's carriage returns would be noise: a run that is
still working after :func:`plain_interval_s` seconds says so in one plain line,
and again every as many seconds, so a long run is never silent and a short
one prints nothing.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

#: Seconds between plain progress lines (and before the first); the environment variable sets
#: another (the tests set 0, so that a short run prints its lines).
PLAIN_INTERVAL_S = 5.0
PLAIN_INTERVAL_VARIABLE = "PYVERIFY_PROGRESS_SECONDS"


def plain_interval_s() -> float:
    """:data:`PLAIN_INTERVAL_S`, or the number :data:`PLAIN_INTERVAL_VARIABLE` holds."""
    try:
        return max(0.0, float(os.environ[PLAIN_INTERVAL_VARIABLE]))
    except (KeyError, ValueError):
        return PLAIN_INTERVAL_S


class PlainProgress:
    """``advance(n)`` counts work done; once every interval, one line on stderr: done, total, elapsed."""

    def __init__(self, total: int | None, description: str, unit: str, interval_s: float) -> None:
        self.total, self.description, self.unit = total, description, unit
        self.interval_s = interval_s
        self.done = 0
        self.started = time.monotonic()
        self.next_line = self.started + interval_s

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now < self.next_line:
            return
        self.next_line = now + self.interval_s
        of = f" of {self.total}" if self.total else ""
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        units = self.unit[:-1] + "ies" if self.unit.endswith("y") else self.unit + "s"
        elapsed = now - self.started
        sys.stderr.write(f"{self.description}: {self.done}{of} {units}{share}, {elapsed:.0f} s\n")
        sys.stderr.flush()


@contextmanager
def progress_bar(
    total: int | None, description: str, unit: str = "it"
) -> Iterator[Callable[..., None]]:
    """Yield ``advance(n=1)``: a tqdm bar on a terminal stderr, else :class:`PlainProgress` lines."""
    if not sys.stderr.isatty():
        yield PlainProgress(total, description, unit, plain_interval_s()).advance
        return
    from tqdm import tqdm

    with tqdm(
        total=total, desc=description, unit=unit, leave=False, file=sys.stderr, dynamic_ncols=True
    ) as bar:
        yield lambda n=1: bar.update(n)


class StepReporter:
    """Steps of a long command: each finished step's line is printed at once; a bar shows the current one.

    ``start(name)`` names the step under way (on the bar, when stderr is a
    terminal); ``done(line)`` prints that step's result line on stdout,
    flushed, so a pipe sees each line as it happens, not all at the end.
    """

    def __init__(self, bar, quiet: bool) -> None:
        self._bar = bar
        self._quiet = quiet

    def start(self, name: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(f"audit: {name}")
            self._bar.refresh()

    def done(self, line: str) -> None:
        if not self._quiet:
            if self._bar is not None:
                self._bar.write(line, file=sys.stdout)
            else:
                print(line, flush=True)
        if self._bar is not None:
            self._bar.update(1)


@contextmanager
def step_reporter(total: int, quiet: bool = False) -> Iterator[StepReporter]:
    """A :class:`StepReporter` over ``total`` steps (no bar when stderr is not a terminal)."""
    if not sys.stderr.isatty():
        yield StepReporter(None, quiet)
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="step", leave=False, file=sys.stderr, dynamic_ncols=True) as bar:
        yield StepReporter(bar, quiet)
