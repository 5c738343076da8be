"""pyarrow arrays as numpy arrays, without loading pandas.

pyarrow's own ``Array.to_numpy`` imports pandas on first use (0.3-1.4 s on
this project's 2-core machine, more than reading the 288k-reference Mooncake
trace), so the readers view an array's data buffer directly instead: a
fixed-width array's values are one buffer, its nulls a bit-packed validity
buffer (the Arrow columnar format, "Fixed-size primitive layout").
"""

from __future__ import annotations

import numpy as np


def numpy_of(array, floats: bool = False) -> np.ndarray:
    """The values of a numeric or boolean pyarrow ``Array`` or ``ChunkedArray`` as numpy (a copy when needed).

    ``floats``: as float64, a null as NaN (else nulls are left as whatever the
    buffer holds: call it with ``floats=False`` only on arrays without nulls)."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    n, kind = len(array), array.type
    if pa.types.is_null(kind):
        return np.full(n, np.nan) if floats else np.zeros(n, dtype=np.int64)
    buffers = array.buffers()
    if pa.types.is_boolean(kind):
        bits = np.frombuffer(buffers[1], dtype=np.uint8)
        values = np.unpackbits(bits, bitorder="little")[array.offset : array.offset + n].astype(
            bool
        )
    else:
        dtype = np.dtype(_numpy_type(kind)).newbyteorder("<")
        values = np.frombuffer(
            buffers[1], dtype=dtype, count=n, offset=array.offset * dtype.itemsize
        )
    if floats:
        values = values.astype(np.float64)
        if array.null_count:
            values[~valid_of(array)] = np.nan
    return values


def valid_of(array) -> np.ndarray:
    """Which entries of a pyarrow ``Array`` are not null (bool)."""
    n = len(array)
    validity = array.buffers()[0]
    if validity is None or array.null_count == 0:
        return np.ones(n, dtype=bool) if array.null_count == 0 else np.zeros(n, dtype=bool)
    bits = np.frombuffer(validity, dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + n].astype(bool)


def _numpy_type(kind) -> str:
    import pyarrow as pa

    for test, prefix in (
        (pa.types.is_signed_integer, "i"),
        (pa.types.is_unsigned_integer, "u"),
        (pa.types.is_floating, "f"),
    ):
        if test(kind):
            return f"{prefix}{kind.bit_width // 8}"
    raise TypeError(f"not a numeric arrow type: {kind}")


__all__ = ["numpy_of", "valid_of"]
