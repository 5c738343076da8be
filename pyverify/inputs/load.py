"""Load whatever the user names as input: an instance file or a trace.

Commands call :func:`load_input` so that every command accepts the same kinds
of file, with the same one-line errors:

* ``*.jsonl``: a Mooncake JSONL trace, imported on the fly by
  :func:`pyverify.inputs.mooncake.import_mooncake` (no routing; ``hosts`` 1 unless a
  command routes it to a fleet by a policy). Decreasing timestamps are an
  error here; use ``pyverify trace import --allow-unsorted`` to accept them.
* Parquet (by its magic bytes ``PAR1``) or CSV (by a header naming
  ``hash_ids``): a trace with a ``hash_ids`` list column, read by
  :mod:`pyverify.inputs.columnar` (needs pyarrow).
* anything else: an instance file (``pyverify.instance/1`` JSON), validated.
"""

from __future__ import annotations

from pathlib import Path

from pyverify.inputs.columnar import is_hash_ids_csv, is_parquet, read_columnar
from pyverify.inputs.model import Instance, load_instance
from pyverify.inputs.mooncake import import_mooncake, is_trace_path


def load_input(path: str | Path) -> Instance:
    """Load an instance file or a Mooncake JSONL trace (by suffix), validated."""
    if is_parquet(path) or is_hash_ids_csv(path):
        return read_columnar(path).to_instance()
    if is_trace_path(path):
        return import_mooncake(path)
    return load_instance(path)
