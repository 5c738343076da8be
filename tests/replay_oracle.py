"""The replay on cases stated as chains, as the tests write them.

``pyverify.fleet.replay`` takes the one trace type (:class:`~pyverify.inputs.columnar.ColumnarTrace`),
its settings and its service model. The tests state a case as Python chains and per-request lists:
:func:`trace_of` makes the trace of such a case, and :func:`replay_chains` / :func:`replay_python_chains`
run it with the settings spelled as keywords.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from pyverify.fleet.replay import replay, replay_python
from pyverify.fleet.routers import Router
from pyverify.fleet.run import ReplayRun, ReplaySettings
from pyverify.fleet.service import ServiceModel
from pyverify.inputs.columnar import ColumnarTrace


def trace_of(
    chains: Sequence[Sequence[int]],
    arrival_ms: Sequence[float | None] | None = None,
    input_tokens: Sequence[int | None] | None = None,
    output_tokens: Sequence[int | None] | None = None,
    block_size: int | None = None,
) -> ColumnarTrace:
    """The trace of ``chains`` with these per-request columns (``None`` in a list: not given)."""
    lengths = np.fromiter(map(len, chains), dtype=np.int64, count=len(chains))
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])

    def column(values):
        if values is None:
            return None
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

    return ColumnarTrace(
        name="chains",
        ids=np.fromiter(
            (block for chain in chains for block in chain), dtype=np.int64, count=int(offsets[-1])
        ),
        offsets=offsets,
        timestamps=column(arrival_ms),
        input_tokens=column(input_tokens),
        output_tokens=column(output_tokens),
        block_size_tokens=block_size,
    )


def _trace_and_settings(
    chains,
    capacity,
    eviction,
    pool_capacity,
    arrival_ms,
    input_tokens,
    output_tokens,
    arrival_scale,
    timed,
    host_capacity,
    prompt_tokens,
    block_size,
    page_size,
) -> tuple[ColumnarTrace, ReplaySettings]:
    # An engine reads each prompt's length from the trace's input_tokens: a case that names its
    # prompts' tokens states them there.
    if prompt_tokens is not None:
        if input_tokens is not None and list(input_tokens) != list(prompt_tokens):
            raise ValueError("a trace gives each prompt one length: input_tokens or prompt_tokens")
        input_tokens = prompt_tokens
    trace = trace_of(chains, arrival_ms if timed else None, input_tokens, output_tokens, block_size)
    settings = ReplaySettings(
        capacity=capacity,
        eviction=eviction,
        host_capacity=host_capacity,
        pool_capacity=pool_capacity,
        timed=timed,
        arrival_scale=arrival_scale,
        page_size=page_size,
    )
    return trace, settings


def replay_chains(
    chains: Sequence[Sequence[int]],
    router: Router,
    capacity: int | None,
    eviction: str,
    pool_capacity: int | None | bool = False,
    service: ServiceModel = ServiceModel(),
    arrival_ms: Sequence[float] | None = None,
    input_tokens: Sequence[int | None] | None = None,
    output_tokens: Sequence[int | None] | None = None,
    arrival_scale: float = 1.0,
    timed: bool = True,
    progress: Callable[..., None] = lambda n=1: None,
    host_capacity: int | None | bool = False,
    prompt_tokens: Sequence[int] | None = None,
    block_size: int | None = None,
    page_size: int | None = None,
    backend: str = "auto",
) -> ReplayRun:
    """:func:`pyverify.fleet.replay.replay` of the case (see the module docstring)."""
    trace, settings = _trace_and_settings(
        chains,
        capacity,
        eviction,
        pool_capacity,
        arrival_ms,
        input_tokens,
        output_tokens,
        arrival_scale,
        timed,
        host_capacity,
        prompt_tokens,
        block_size,
        page_size,
    )
    return replay(trace, router, settings, service, progress=progress, backend=backend)


def replay_python_chains(
    chains: Sequence[Sequence[int]],
    router: Router,
    capacity: int | None,
    eviction: str,
    pool_capacity: int | None | bool = False,
    service: ServiceModel = ServiceModel(),
    arrival_ms: Sequence[float] | None = None,
    input_tokens: Sequence[int | None] | None = None,
    output_tokens: Sequence[int | None] | None = None,
    arrival_scale: float = 1.0,
    timed: bool = True,
    progress: Callable[..., None] = lambda n=1: None,
    host_capacity: int | None | bool = False,
    prompt_tokens: Sequence[int] | None = None,
    block_size: int | None = None,
    page_size: int | None = None,
    step_log: list | None = None,
) -> ReplayRun:
    """:func:`pyverify.fleet.replay.replay_python` (the Python event loop) of the case."""
    trace, settings = _trace_and_settings(
        chains,
        capacity,
        eviction,
        pool_capacity,
        arrival_ms,
        input_tokens,
        output_tokens,
        arrival_scale,
        timed,
        host_capacity,
        prompt_tokens,
        block_size,
        page_size,
    )
    return replay_python(trace, router, settings, service, progress=progress, step_log=step_log)
