"""The Lean bridge (``pyverify bridge``) and the audit that ends with it (``pyverify audit``).

What each guarantees:

* :func:`bridge` links each certificate's claim to a Lean theorem of the registry only after
  the Lean check of that registry's project passed and the certificate verified: the report
  says, per certificate, which theorem carries it and what is assumed besides.
* :func:`audit` runs validate, sweep, memory limit, certify, verify, the Lean check and the
  bridge on one input and writes the report folder, atomically (a folder that is not
  pyverify's own is never replaced).

The Lean runner and the steps are imported by the call that uses them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from pyverify.inputs.records import ImportOptions
    from pyverify.lean.bridge import BridgeReport
    from pyverify.reports.audit import STEPS as AUDIT_STEPS
    from pyverify.reports.audit import StepRecord

__all__ = ["AUDIT_STEPS", "audit", "bridge"]


def __getattr__(name: str):
    # The steps' names live with the audit, which imports the readers and the certifier.
    if name == "AUDIT_STEPS":
        from pyverify.reports.audit import STEPS

        return STEPS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def bridge(proofs: Path, registry: Path, instance_dirs: list[Path]) -> BridgeReport:
    """Run the Lean check on the project of ``registry``, then bridge every certificate in
    ``proofs`` to its theorem, finding each one's instance by SHA-256 in ``instance_dirs``
    (refusing on the first problem). ``to_json()`` of the report is what ``--json`` prints."""
    from pyverify.lean.bridge import lean_check_for, run_bridge

    return run_bridge(proofs, registry, instance_dirs, lean_check_for(registry))


def audit(
    instance: str,
    output: Path,
    *,
    registry: Path,
    time_limit: float = 60.0,
    on_start: Callable[[str], None] = lambda name: None,
    on_done: Callable[[StepRecord], None] = lambda record: None,
    node_tokens: int | None = None,
    node_blocks: int | None = None,
    reading: ImportOptions | None = None,
) -> dict[str, Any]:
    """Every step of :data:`AUDIT_STEPS` on the input at ``instance``, the report written to the
    folder ``output``; returns the summary (what ``--json`` prints). ``on_start(name)`` is called
    as each step begins, ``on_done(record)`` as it ends. ``reading``: how the input is read,
    recorded in the certificates so that the checker reads it alike."""
    from pyverify.inputs.records import ImportOptions
    from pyverify.reports.audit import run_audit

    return run_audit(
        instance,
        output,
        registry,
        time_limit,
        on_start,
        on_done,
        node_tokens=node_tokens,
        node_blocks=node_blocks,
        reading=reading if reading is not None else ImportOptions(),
    )
