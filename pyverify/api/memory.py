"""KV memory: how many blocks a cache of so many GiB holds, for a model named or described.

What it guarantees: :func:`kv_size` gives one token's KV bytes from ``--kv-bytes-per-token``, a
catalog model (:data:`CATALOG`, each entry citing the model's published ``config.json``) or a
``config.json`` given, and says which; :func:`blocks_for_gib` is the whole number of blocks that
fit (kvcache-simulator's rounding). The arithmetic is written out in
:mod:`pyverify.inputs.kv_models`; importing this module is cheap (no NumPy).
"""

from __future__ import annotations

from pyverify.inputs.kv_models import (
    CATALOG,
    DTYPE_BYTES,
    KVModel,
    KVSize,
    blocks_for_gib,
    kv_size,
    lookup,
)

__all__ = ["CATALOG", "DTYPE_BYTES", "KVModel", "KVSize", "blocks_for_gib", "kv_size", "lookup"]
