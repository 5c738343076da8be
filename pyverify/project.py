"""Where the project's own files are: the committed instances, proofs and Lean sources.

Commands that default to them (``audit``, ``bridge``) find them beside the
installed package (the checkout that ``pip install -e .`` points at), so they
work from any folder, not only from the repository root.
"""

from __future__ import annotations

from pathlib import Path

#: The checkout the package was installed from (``pyverify/`` lives directly in it).
ROOT = Path(__file__).resolve().parent.parent

#: The committed lab instance: what ``pyverify audit`` checks by default.
DEFAULT_INSTANCE = "instances/lab-512x32x16.json"
#: The Lean theorem registry (the Lean sources are beside it).
DEFAULT_REGISTRY = "lean/theorems.json"
#: Where ``pyverify audit`` writes its report by default (in the current folder).
DEFAULT_OUTPUT = "audit-out"


def project_file(relative: str) -> Path:
    """``relative`` inside the checkout, shown relative to the current folder when it is there.

    Reports quote the path they were given, so from the repository root the
    defaults read ``instances/lab-512x32x16.json`` as before; from elsewhere
    they are absolute.
    """
    here = Path(relative)
    try:
        if here.resolve() == (ROOT / relative).resolve():
            return here
    except OSError:
        pass
    return ROOT / relative
