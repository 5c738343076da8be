"""Reading a packed witness: a run as four flat integer arrays, base64 in the certificate's JSON.

A ``pyverify.certificate/2`` names its witness so, a few arrays rather than millions of lists:
``{"encoding": "pyverify.packed/1", "cache_of": {"dtype": "<i4", "length": n, "base64": "..."},
"hit_blocks": ..., "dropped_offsets": ... (n + 1), "dropped_blocks": ... (m)}``. Each array is the
standard base64 (RFC 4648, padded) of little-endian signed integers of its ``dtype`` (``<i4`` or
``<i8``); request ``t`` drops ``dropped_blocks[dropped_offsets[t]:dropped_offsets[t + 1]]``.
Decoding checks what the list form's type check does (non-negative integers), that each array has
its stated length and that the offsets partition ``dropped_blocks``; whether the run is legal is
the replay's job (:mod:`pyverify.trusted.runs`).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np

from pyverify.errors import located

PACKED_ENCODING = "pyverify.packed/1"
PACKED_ARRAYS = ("cache_of", "hit_blocks", "dropped_offsets", "dropped_blocks")
DTYPES = {"<i4": np.dtype("<i4"), "<i8": np.dtype("<i8")}


def unpack(run: dict[str, Any], cert_path: str, where: str) -> dict[str, np.ndarray]:
    """The four arrays of a packed run, as int64; a malformed one raises a located :class:`UserError` (exit 2)."""
    if run.get("encoding") != PACKED_ENCODING:
        raise located(
            cert_path,
            f"{where}.encoding",
            f"is {run.get('encoding')!r}; this checker reads {PACKED_ENCODING}",
        )
    arrays = {key: _decode(run[key], cert_path, f"{where}.{key}") for key in PACKED_ARRAYS}
    offsets, blocks = arrays["dropped_offsets"], arrays["dropped_blocks"]
    if offsets.size != arrays["cache_of"].size + 1:
        raise located(
            cert_path,
            f"{where}.dropped_offsets",
            f"has {offsets.size} entries, not one more than cache_of's {arrays['cache_of'].size}",
        )
    if offsets[0] != 0 or offsets[-1] != blocks.size or np.any(offsets[1:] < offsets[:-1]):
        raise located(
            cert_path,
            f"{where}.dropped_offsets",
            f"is not a partition of dropped_blocks ({blocks.size} entries): "
            "it must start at 0, never decrease and end at their length",
        )
    return arrays


def _decode(field: dict[str, Any], cert_path: str, where: str) -> np.ndarray:
    dtype = DTYPES.get(field["dtype"])
    if dtype is None:
        raise located(
            cert_path, f"{where}.dtype", f"is {field['dtype']!r}, not one of {', '.join(DTYPES)}"
        )
    try:
        data = base64.b64decode(field["base64"], validate=True)
    except (binascii.Error, ValueError) as error:
        raise located(cert_path, f"{where}.base64", f"is not valid base64 ({error})") from None
    if len(data) != field["length"] * dtype.itemsize:
        raise located(
            cert_path,
            f"{where}.base64",
            f"decodes to {len(data)} bytes, but length {field['length']} of "
            f"{field['dtype']} needs {field['length'] * dtype.itemsize}",
        )
    values = np.frombuffer(data, dtype=dtype).astype(np.int64)
    if values.size and values.min() < 0:
        index = int(np.argmax(values < 0))
        raise located(
            cert_path, f"{where}[{index}]", f"is {int(values[index])}, not a non-negative integer"
        )
    return values


__all__ = ["DTYPES", "PACKED_ARRAYS", "PACKED_ENCODING", "unpack"]
