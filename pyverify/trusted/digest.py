"""The content digest of an instance held as arrays (``pyverify.content/1``): the checker's own copy.

The encoding is defined in :mod:`pyverify.inputs.columnar.digest`: little-endian int64 words of
the request count, reference count, fleet size, block size and a flag per optional column, then
the offsets, the block ids, and each column given (routing, arrival bits, token counts, route keys,
per-block tokens). ``tests/test_content_digest.py`` holds the two equal on Hypothesis traces.
"""

from __future__ import annotations

import hashlib

import numpy as np

CONTENT_FORMAT = "pyverify.content/1"
ROUTING, ARRIVALS, INPUT_TOKENS, OUTPUT_TOKENS, ROUTE_KEYS, BLOCK_TOKENS = 1, 2, 4, 8, 16, 32
NAN_BITS = 0x7FF8000000000000
#: Values hashed per update, so no little-endian copy of a whole column is made at once.
STEP = 1 << 19


def routing_of(trace) -> np.ndarray | None:
    """The cache each request reads, as given by the instance (an array: certify's ColumnarTrace
    names it ``routing``; the checker's :class:`~pyverify.trusted.reader.Instance` ``routes``)."""
    return trace.routes if hasattr(trace, "routes") else trace.routing


def content_sha256(trace) -> str:
    """Hex SHA-256 of the ``pyverify.content/1`` encoding of a trace's arrays."""

    def given(column):  # a float64 column counts only if some request gives a value
        absent = column is None or column.size == 0 or np.isnan(column).all()
        return None if absent else np.asarray(column, dtype=np.float64)

    arrivals, inputs, outputs = map(
        given, (trace.timestamps, trace.input_tokens, trace.output_tokens)
    )
    keys = trace.route_keys
    keys = keys if keys is not None and any(k is not None for k in keys) else None
    routing = routing_of(trace)
    columns = (routing, arrivals, inputs, outputs, keys, trace.block_tokens)
    flags = sum(bit for bit, column in zip((1, 2, 4, 8, 16, 32), columns) if column is not None)
    fleet = trace.fleet_size
    if fleet is None:
        fleet = int(routing.max()) + 1 if routing is not None and routing.size else 1
    digest = hashlib.sha256(CONTENT_FORMAT.encode("ascii") + b"\0")
    header = [trace.offsets.size - 1, trace.ids.size, fleet, trace.block_size_tokens or 0, flags]
    for values in (np.array(header), trace.offsets, trace.ids, routing):
        update(digest, values)
    if arrivals is not None:
        bits = (arrivals + 0.0).view(np.int64).copy()  # -0.0 + 0.0 is 0.0
        bits[np.isnan(arrivals)] = NAN_BITS
        update(digest, bits)
    for column in (inputs, outputs):
        update(digest, None if column is None else np.where(np.isnan(column), -1, column))
    for key in keys or ():
        data = None if key is None else key.encode("utf-8")
        digest.update((-1 if data is None else len(data)).to_bytes(8, "little", signed=True))
        digest.update(data or b"")
    update(digest, trace.block_tokens)
    return digest.hexdigest()


def update(digest, values: np.ndarray | None) -> None:
    """Hash ``values`` (if any) as little-endian int64, a slice at a time."""
    for start in range(0, 0 if values is None else values.size, STEP):
        digest.update(np.ascontiguousarray(values[start : start + STEP], dtype="<i8").tobytes())


__all__ = ["CONTENT_FORMAT", "content_sha256", "routing_of"]
