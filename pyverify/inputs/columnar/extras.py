"""Optional dependencies: import one, or say in one line how to install it.

pyarrow (and, for the engines, DuckDB and Dask) come with the ``scale``
extra. Everything that needs one asks :func:`require` for it at the moment it
runs, so a command that never reads Parquet starts without loading pyarrow.
"""

from __future__ import annotations

from pyverify.errors import UserError

INSTALL_HINT = "install the scale extra: pip install 'pyverify[scale]'"


class MissingExtra(UserError):
    """An optional dependency is not installed (the message says how to get it)."""


def require(module: str):
    """Import an optional dependency, or one line of error saying how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{module.split('.')[0]} is needed for this; {INSTALL_HINT}") from None
