"""Load whatever the user names as input: an instance file (or, later, a trace).

Commands call :func:`load_input` so that every command accepts the same kinds
of file, with the same one-line errors.
"""

from __future__ import annotations

from pathlib import Path

from pyverify.model import Instance, load_instance


def load_input(path: str | Path) -> Instance:
    """Load an instance file (``pyverify.instance/1`` JSON), validated."""
    return load_instance(path)
