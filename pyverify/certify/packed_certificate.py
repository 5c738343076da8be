"""Certify a whole trace on arrays, with a packed witness (``pyverify.certificate/2``).

The route of :func:`pyverify.certify.certificate.certify` for traces of
millions of references, with a capacity: the trace stays flat arrays
(:class:`~pyverify.inputs.columnar.ColumnarTrace`), the compiled MIN (or the
forced rule) returns its run as arrays (:func:`pyverify.optimal.belady.min_witness_arrays`,
:func:`pyverify.optimal.forced.forced_witness_arrays`), and the witness is
written as four base64 arrays (:mod:`pyverify.trusted.packed`), streamed into
the file, which is renamed into place only after the trusted checker accepted
it. The certificate says what the list-form one says: the same claim, basis
and MIN record; it records no greedy runs (they are informational, and on a
trace cost more than MIN) and names the instance by its content digest only.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from pyverify import __version__
from pyverify.errors import UserError
from pyverify.trusted.check import PACKED_CERTIFICATE_FORMAT, basis_of, claim_statement
from pyverify.trusted.packed import PACKED_ARRAYS, PACKED_ENCODING

#: Bytes of an array encoded per write (a multiple of 3, so the base64 pieces join with no padding between them).
ENCODE_STEP = 3 << 20


def certify_packed(
    trace,
    model: str,
    capacity: int,
    time_limit: float | None,
    instance_path: str | None,
    routing: str = "given",
    hosts: int | None = None,
    admission: str = "bypass",
    read_with: dict[str, Any] | None = None,
    started: float | None = None,
):
    """``(certificate, witness arrays, wall seconds)``: MIN's (or the forced rule's) run on ``trace``, OPTIMAL."""
    from pyverify.certify.certificate import FORCED_NAME, MIN_NAME, Stopped, cache_model_record
    from pyverify.inputs.columnar.digest import content_sha256
    from pyverify.optimal.belady import min_witness_arrays
    from pyverify.optimal.forced import FORCED, forced_witness_arrays

    started = time.perf_counter() if started is None else started

    def deadline() -> None:
        if time_limit is not None and time.perf_counter() - started >= time_limit:
            raise Stopped(
                f"status UNKNOWN: --time-limit {time_limit:g} s ran out after {time.perf_counter() - started:.1f} s, "
                "before a witness was found; no certificate written"
            )

    forced = admission == FORCED
    caches = _caches(trace, model, routing, hosts, instance_path)
    lengths = np.diff(trace.offsets)
    deadline()
    min_started = time.perf_counter()
    search = forced_witness_arrays if forced else min_witness_arrays
    hit_blocks, dropped_offsets, dropped_blocks, misses = search(
        trace.ids, lengths, caches, capacity, deadline
    )
    min_seconds = time.perf_counter() - min_started
    content = content_sha256(trace)
    problem = {
        "content_sha256": content,
        "model": model,
        "capacity": capacity,
        **({"admission": FORCED} if forced else {}),
    }
    cache_model = cache_model_record(model, capacity, routing, hosts, forced)
    cert: dict[str, Any] = {
        "format": PACKED_CERTIFICATE_FORMAT,
        "instance": {
            "name": trace.name,
            "content_sha256": content,
            **({"path": instance_path} if instance_path else {}),
            **({"read_with": read_with} if read_with else {}),
        },
        "cache_model": cache_model,
        "claim": {
            "statement": claim_statement(
                model, capacity, "OPTIMAL", misses, misses, routing, hosts, admission
            ),
            "scope": "this instance",
        },
        "basis": basis_of(capacity, "OPTIMAL", admission),
        "status": "OPTIMAL",
        "objective": misses,
        "bound": misses,
        "floor": _floor(trace.ids, np.repeat(caches, lengths)),
        "solvers": {
            "cp-sat": None,
            "z3": None,
            "min": {
                "name": FORCED_NAME if forced else MIN_NAME,
                "version": __version__,
                "problem": problem,
                "status": "OPTIMAL",
                "objective": misses,
                "bound": misses,
                "wall_time_s": round(min_seconds, 3),
            },
        },
        "witness": None,  # written packed by write_packed_certificate
        "created_by": {"tool": "pyverify certify", "version": __version__},
    }
    arrays = {
        "cache_of": caches,
        "hit_blocks": hit_blocks,
        "dropped_offsets": dropped_offsets,
        "dropped_blocks": dropped_blocks,
    }
    return cert, arrays, time.perf_counter() - started


def _caches(trace, model: str, routing: str, hosts: int | None, path: str | None) -> np.ndarray:
    if model == "pooled":
        return np.zeros(trace.n_requests, dtype=np.int64)
    if routing == "round-robin":
        return np.arange(trace.n_requests, dtype=np.int64) % hosts
    if trace.routing is None:
        raise UserError(
            f"{path or '<instance>'}: requests[*].host: per-host certificates use the instance's given routing, and this "
            "instance gives none (for a trace, route it: --routing round-robin --fleet N)"
        )
    return np.asarray(trace.routing, dtype=np.int64)


def _floor(ids: np.ndarray, cache_of_reference: np.ndarray) -> int:
    """Compulsory misses: distinct (cache, block) pairs."""
    from pyverify.cache.arrays import dense_ids

    fleet = int(cache_of_reference.max()) + 1 if cache_of_reference.size else 1
    keys, universe = dense_ids(
        ids
    )  # no sort when ids are small; renumbered first, so pairing cannot overflow
    if fleet > 1:
        keys, universe = dense_ids(keys.astype(np.int64) * fleet + cache_of_reference)
    seen = np.zeros(universe, dtype=bool)
    seen[keys] = True
    return int(np.count_nonzero(seen))


def write_packed_certificate(
    cert: dict[str, Any],
    arrays: dict[str, np.ndarray],
    target: str | Path,
    instance_path: str | Path,
    trace=None,
) -> Path | None:
    """Write ``cert`` with its witness ``arrays`` packed, streamed, atomically, only if the trusted checker accepts it.

    ``trace``: the trace as certify read it, handed to the checker so that it is not read again."""
    from pyverify.certify.certificate import canonical_target, dumps, write_checked

    marks = {key: f"@@packed:{key}@@" for key in PACKED_ARRAYS}
    cert = dict(
        cert,
        witness={
            "encoding": PACKED_ENCODING,
            **{
                key: {
                    "dtype": _dtype(arrays[key]),
                    "length": int(arrays[key].size),
                    "base64": marks[key],
                }
                for key in PACKED_ARRAYS
            },
        },
    )

    def write(tmp) -> None:
        text = dumps(cert)
        with open(tmp, "w", encoding="ascii") as out:
            for key in PACKED_ARRAYS:
                before, text = text.split(json.dumps(marks[key]), 1)
                out.write(before + '"')
                data = np.ascontiguousarray(arrays[key], dtype=_dtype(arrays[key])).view(np.uint8)
                for start in range(0, data.size, ENCODE_STEP):
                    out.write(
                        base64.b64encode(data[start : start + ENCODE_STEP].tobytes()).decode(
                            "ascii"
                        )
                    )
                out.write('"')
            out.write(text)

    canonical = None if trace is None else canonical_target(target, instance_path, cert["instance"])
    return write_checked(
        cert,
        target,
        instance_path,
        canonical,
        write,
        lambda: trace.to_instance().to_json(),
        read_already=trace,
    )


def _dtype(values: np.ndarray) -> str:
    """``<i4`` when every value fits in 32 bits, else ``<i8``."""
    return "<i4" if values.size == 0 or int(values.max()) < 2**31 else "<i8"


__all__ = ["certify_packed", "write_packed_certificate"]
