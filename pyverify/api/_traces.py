"""The one conversion the API's functions share: a trace in either form, as the simulators take it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.model import Instance

#: What the API's functions take: the trace as :func:`pyverify.api.load_trace` returns it, or the
#: per-request instance a command read (passed as it is, not converted).
Trace = Union["ColumnarTrace", "Instance"]


def as_instance(trace: Trace) -> Instance:
    """``trace`` as an instance (the per-request form the simulators run on)."""
    to_instance = getattr(trace, "to_instance", None)
    return to_instance() if to_instance is not None else trace
