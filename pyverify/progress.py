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
