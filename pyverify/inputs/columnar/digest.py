"""The content digest of a trace, from its arrays: what a trace *is*, whatever file it came in.

``content_sha256`` is the SHA-256 of one canonical binary encoding of a
trace's content, ``pyverify.content/1``. Every integer is a little-endian
int64, every float a little-endian IEEE-754 float64, in this order:

1. the 19 bytes ``pyverify.content/1`` and one zero byte;
2. a header of five integers: requests, block references, fleet size (the
   instance's ``hosts``; for a trace file that names no fleet, its largest
   host id + 1, or 1 without a host column), block size in tokens (0 when the
   trace gives none) and a flags word saying which optional columns follow
   (1 routing, 2 arrival times, 4 prompt tokens, 8 output tokens, 16 route keys,
   32 tokens per block);
3. the chain offsets (requests + 1 integers, from 0) and every block id in order;
4. the optional columns, each present when *some* request gives it: the host
   of every request; arrival times in ms as float64 (a missing one is the NaN
   ``0x7ff8000000000000``, -0.0 is written as 0.0); prompt tokens and output
   tokens (a missing one is -1); route keys, each as its UTF-8 length (-1 when
   missing) and then its bytes; the tokens of every block reference, when
   blocks differ in size (-1 for the blocks of a request that gives none).

Outside it: the instance's name, description and source, the per-request ``labels`` (kept for grouping, used by no simulation), the file's format,
layout, key order and compression, and whether a number was written as
``7`` or ``7.0``. So a trace in JSONL, Parquet, CSV or ``pyverify.instance/1``
form has one content digest, as long as the format holds the content: a
Parquet or CSV file keeps no fleet size beyond its host column, so an
instance naming more hosts than it routes to (or, without a routing, more
than one) has another digest there, as it has other default runs. Token
counts are encoded from the trace's float64 columns, exact up to 2**53, and
every reader refuses a count above it (``pyverify.inputs.model.MAX_TOKEN_COUNT``),
so no two traces it reads share a digest through rounding.

:func:`pyverify.trusted.digest.content_sha256` computes the same digest from an
:class:`~pyverify.inputs.model.Instance` in plain Python, for the trusted
checker (tests compare the two on Hypothesis traces).
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Callable

import numpy as np

from pyverify.inputs.columnar.trace import ColumnarTrace
from pyverify.inputs.model import Instance
from pyverify.threads import beside

CONTENT_FORMAT = "pyverify.content/1"
#: Flag bits of the header's last word: which optional columns follow.
ROUTING, ARRIVALS, INPUT_TOKENS, OUTPUT_TOKENS, ROUTE_KEYS, BLOCK_TOKENS = 1, 2, 4, 8, 16, 32
#: Bytes hashed per update, so no copy of a whole column is made at once.
CHUNK = 1 << 22


def fleet_size_of(trace: ColumnarTrace) -> int:
    """The fleet size the digest encodes: the trace's own, else its largest host id + 1, else 1."""
    if trace.fleet_size is not None:
        return int(trace.fleet_size)
    return int(trace.routing.max()) + 1 if trace.routing is not None and trace.routing.size else 1


def content_sha256(trace: ColumnarTrace | Instance) -> str:
    """Hex SHA-256 of the trace's ``pyverify.content/1`` encoding (see the module docstring): its
    chains, routing, fleet size, block size, arrival times, token counts and route keys, equal across
    formats. A digest its reader began (:func:`begin_content_sha256`) is waited for, not taken again."""
    if isinstance(trace, Instance):
        trace = ColumnarTrace.from_instance(trace)
    begun = _begun.get(trace)
    return begun() if begun is not None else _digest_of(trace)


def _digest_of(trace: ColumnarTrace) -> str:
    digest = hashlib.sha256(CONTENT_FORMAT.encode("ascii") + b"\0")
    arrivals = _present(trace.timestamps)
    inputs, outputs = _present(trace.input_tokens), _present(trace.output_tokens)
    keys = (
        trace.route_keys
        if trace.route_keys is not None and any(k is not None for k in trace.route_keys)
        else None
    )
    flags = (
        (ROUTING if trace.routing is not None else 0)
        | (ARRIVALS if arrivals is not None else 0)
        | (INPUT_TOKENS if inputs is not None else 0)
        | (OUTPUT_TOKENS if outputs is not None else 0)
        | (ROUTE_KEYS if keys is not None else 0)
        | (BLOCK_TOKENS if trace.block_tokens is not None else 0)
    )
    header = [
        trace.n_requests,
        trace.n_references,
        fleet_size_of(trace),
        trace.block_size_tokens or 0,
        flags,
    ]
    digest.update(np.asarray(header, dtype="<i8").tobytes())
    _update(digest, trace.offsets, "<i8")
    _update(digest, trace.ids, "<i8")
    if trace.routing is not None:
        _update(digest, trace.routing, "<i8")
    if arrivals is not None:
        values = np.asarray(arrivals, dtype="<f8") + 0.0  # -0.0 + 0.0 is 0.0
        bits = values.view("<i8").copy()
        bits[np.isnan(values)] = 0x7FF8000000000000
        _update(digest, bits, "<i8")
    for column in (inputs, outputs):
        if column is not None:
            _update(digest, np.where(np.isnan(column), -1, column).astype("<i8"), "<i8")
    if keys is not None:
        for key in keys:
            data = None if key is None else key.encode("utf-8")
            digest.update((-1 if data is None else len(data)).to_bytes(8, "little", signed=True))
            if data is not None:
                digest.update(data)
    if trace.block_tokens is not None:
        _update(digest, trace.block_tokens, "<i8")
    return digest.hexdigest()


#: From this many references a trace is hashed on a second thread (:func:`begin_content_sha256`,
#: :func:`content_sha256_beside`); below, starting one costs about what it saves.
BACKGROUND_DIGEST_MIN = 1_000_000

#: The digests begun on a thread, by trace (a trace is immutable and compared by identity), each a wait for
#: its hex digest: kept while the trace lives, so every later request for it is answered at once.
_begun: "weakref.WeakKeyDictionary[ColumnarTrace, Callable[[], str]]" = weakref.WeakKeyDictionary()


def begin_content_sha256(trace: ColumnarTrace) -> None:
    """Start hashing ``trace`` on a second thread, for a reader about to hand it over: its last check (the
    prefix closure) runs meanwhile, and :func:`content_sha256` then waits for this digest. A trace the check
    refuses is dropped with its digest. Below :data:`BACKGROUND_DIGEST_MIN` references, nothing is begun."""
    if trace.n_references >= BACKGROUND_DIGEST_MIN and trace not in _begun:
        _begun[trace] = beside(lambda: _digest_of(trace))


def content_sha256_beside(trace: ColumnarTrace) -> Callable[[], str]:
    """:func:`content_sha256` taken on a second thread while the caller computes; call the result for the digest.

    hashlib lets go of the GIL over large buffers, and the compiled kernels run without it (``nogil``), so the
    two share no core: at 20M references the digest took 0.1-0.15 s of a 1.2-2 s run when taken in line. The
    arrays must not change until the result is called (no command changes a trace it has read). An error in
    the thread is raised by the call. A digest the reader began is the one waited for.
    """
    begin_content_sha256(trace)
    begun = _begun.get(trace)
    if begun is not None:
        return begun
    value = _digest_of(trace)  # too small for a thread to repay
    return lambda: value


def _present(column: np.ndarray | None) -> np.ndarray | None:
    """A column as float64, or ``None`` when no request gives a value."""
    if column is None:
        return None
    values = np.asarray(column, dtype=np.float64)
    return None if values.size == 0 or np.isnan(values).all() else values


def _update(digest, values: np.ndarray, dtype: str) -> None:
    values = np.ascontiguousarray(values, dtype=dtype)
    step = CHUNK // 8
    for start in range(0, values.size, step):
        digest.update(memoryview(values[start : start + step]).cast("B"))


__all__ = [
    "ARRIVALS",
    "BACKGROUND_DIGEST_MIN",
    "BLOCK_TOKENS",
    "CONTENT_FORMAT",
    "INPUT_TOKENS",
    "OUTPUT_TOKENS",
    "ROUTE_KEYS",
    "ROUTING",
    "begin_content_sha256",
    "content_sha256",
    "content_sha256_beside",
    "fleet_size_of",
]
