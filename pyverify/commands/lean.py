"""``pyverify lean check`` and ``pyverify lean registry``: see :mod:`pyverify.lean.command`."""

from pyverify.lean.command import register

ORDER = 40

__all__ = ["register"]
