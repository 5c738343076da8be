"""The content digest (``pyverify.content/1``) of a trace held as arrays: the checker's own copy, with numpy.

The same encoding as :mod:`pyverify.trusted.digest` (plain Python, from an
instance), computed from a :class:`~pyverify.inputs.columnar.ColumnarTrace`'s
arrays without a Python object per block; ``tests/test_array_check.py`` holds
the two equal. The encoding is defined in :mod:`pyverify.inputs.columnar.digest`.
"""

from __future__ import annotations

import hashlib

import numpy as np

from pyverify.trusted.digest import (
    ARRIVALS,
    BLOCK_TOKENS,
    CONTENT_FORMAT,
    INPUT_TOKENS,
    NAN_BITS,
    OUTPUT_TOKENS,
    ROUTE_KEYS,
    ROUTING,
)

#: Values hashed per update, so no little-endian copy of a whole column is made at once.
STEP = 1 << 19


def content_sha256_arrays(trace) -> str:
    """Hex SHA-256 of the trace's ``pyverify.content/1`` encoding."""

    def given(column):  # a float64 column counts only if some request gives a value
        return (
            None
            if column is None or column.size == 0 or np.isnan(column).all()
            else np.asarray(column, dtype=np.float64)
        )

    arrivals, inputs, outputs = (
        given(trace.timestamps),
        given(trace.input_tokens),
        given(trace.output_tokens),
    )
    keys = (
        trace.route_keys
        if trace.route_keys is not None and any(k is not None for k in trace.route_keys)
        else None
    )
    flags = (
        (ROUTING if trace.hosts is not None else 0)
        | (ARRIVALS if arrivals is not None else 0)
        | (INPUT_TOKENS if inputs is not None else 0)
        | (OUTPUT_TOKENS if outputs is not None else 0)
        | (ROUTE_KEYS if keys is not None else 0)
        | (BLOCK_TOKENS if trace.block_tokens is not None else 0)
    )
    if trace.fleet_size is not None:
        fleet = int(trace.fleet_size)
    else:
        fleet = int(trace.hosts.max()) + 1 if trace.hosts is not None and trace.hosts.size else 1
    digest = hashlib.sha256(CONTENT_FORMAT.encode("ascii") + b"\0")
    n_requests = trace.offsets.size - 1
    update(
        digest, np.array([n_requests, trace.ids.size, fleet, trace.block_size_tokens or 0, flags])
    )
    update(digest, trace.offsets)
    update(digest, trace.ids)
    if trace.hosts is not None:
        update(digest, trace.hosts)
    if arrivals is not None:
        bits = (arrivals + 0.0).view(np.int64).copy()  # -0.0 + 0.0 is 0.0
        bits[np.isnan(arrivals)] = NAN_BITS
        update(digest, bits)
    for column in (inputs, outputs):
        if column is not None:
            update(digest, np.where(np.isnan(column), -1, column))
    if keys is not None:
        for key in keys:
            data = None if key is None else key.encode("utf-8")
            digest.update((-1 if data is None else len(data)).to_bytes(8, "little", signed=True))
            if data is not None:
                digest.update(data)
    if trace.block_tokens is not None:
        update(digest, trace.block_tokens)
    return digest.hexdigest()


def update(digest, values: np.ndarray) -> None:
    """Hash ``values`` as little-endian int64, a slice at a time."""
    for start in range(0, values.size, STEP):
        digest.update(np.ascontiguousarray(values[start : start + STEP], dtype="<i8").tobytes())


__all__ = ["content_sha256_arrays"]
