"""Progress bars for long work: tqdm on a terminal, silence otherwise."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator


@contextmanager
def progress_bar(total: int | None, description: str, unit: str = "it") -> Iterator[Callable[..., None]]:
    """Yield ``advance(n=1)``; draws a tqdm bar on stderr only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield lambda n=1: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=description, unit=unit, leave=False, file=sys.stderr, dynamic_ncols=True) as bar:
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
