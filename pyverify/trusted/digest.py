"""The content digest of an instance, in plain Python (no numpy): the trusted checker's own copy.

The encoding, ``pyverify.content/1``, is defined in
:mod:`pyverify.inputs.columnar.digest`, which computes it from a trace's
arrays; this module computes it from an :class:`~pyverify.inputs.model.Instance`
(chains, routing, fleet size, block size and the per-request ``arrival_ms``,
``input_tokens``, ``output_tokens``, ``route_key`` and ``block_tokens``), so that
:mod:`pyverify.trusted.check` needs nothing outside the trusted code to name an
instance by its content. ``tests/test_content_digest.py`` checks that both
give the same digest on Hypothesis traces.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array

CONTENT_FORMAT = "pyverify.content/1"
ROUTING, ARRIVALS, INPUT_TOKENS, OUTPUT_TOKENS, ROUTE_KEYS, BLOCK_TOKENS = 1, 2, 4, 8, 16, 32
NAN_BITS = 0x7FF8000000000000


def _int64s(values) -> bytes:
    data = array("q", values)
    if sys.byteorder != "little":
        data.byteswap()
    return data.tobytes()


def _arrival_bits(value) -> int:
    if value is None or value != value:
        return NAN_BITS
    return struct.unpack("<q", struct.pack("<d", float(value) + 0.0))[0]


def content_sha256(instance) -> str:
    """Hex SHA-256 of the instance's ``pyverify.content/1`` encoding."""
    extra = list(instance.extra) if instance.extra else [{}] * instance.n_requests

    def column(key):
        values = [item.get(key) for item in extra]
        return values if any(v is not None for v in values) else None

    arrivals, inputs, outputs, keys, weights = (
        column(k)
        for k in ("arrival_ms", "input_tokens", "output_tokens", "route_key", "block_tokens")
    )
    flags = (
        (ROUTING if instance.routing is not None else 0)
        | (ARRIVALS if arrivals is not None else 0)
        | (INPUT_TOKENS if inputs is not None else 0)
        | (OUTPUT_TOKENS if outputs is not None else 0)
        | (ROUTE_KEYS if keys is not None else 0)
        | (BLOCK_TOKENS if weights is not None else 0)
    )
    digest = hashlib.sha256(CONTENT_FORMAT.encode("ascii") + b"\0")
    references = sum(len(chain) for chain in instance.chains)
    digest.update(
        _int64s(
            [
                instance.n_requests,
                references,
                instance.hosts,
                instance.block_size_tokens or 0,
                flags,
            ]
        )
    )
    offsets, at = [0], 0
    for chain in instance.chains:
        at += len(chain)
        offsets.append(at)
    digest.update(_int64s(offsets))
    for chain in instance.chains:
        digest.update(_int64s(chain))
    if instance.routing is not None:
        digest.update(_int64s(instance.routing))
    if arrivals is not None:
        digest.update(_int64s([_arrival_bits(v) for v in arrivals]))
    for values in (inputs, outputs):
        if values is not None:
            digest.update(_int64s([-1 if v is None else int(v) for v in values]))
    if keys is not None:
        for key in keys:
            data = None if key is None else key.encode("utf-8")
            digest.update(_int64s([-1 if data is None else len(data)]))
            if data is not None:
                digest.update(data)
    if weights is not None:
        for chain, tokens in zip(instance.chains, weights):
            digest.update(_int64s([-1] * len(chain) if tokens is None else tokens))
    return digest.hexdigest()


__all__ = ["CONTENT_FORMAT", "content_sha256"]
