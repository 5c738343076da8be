"""``replay --step-table``: a table whose times would overflow a run's clock is one line, exit 2."""

from __future__ import annotations

import json

import pytest

from ..helpers import run_cli
from .conftest import record

#: Rows that once reached the clock as inf (seconds past float's range, a slope over a tiny step of x)
#: or as a negative step time (a falling row extrapolated past the table).
HOSTILE = [
    ({"prefill": [[1, 1e308]], "decode": [[1, 1]]}, "prefill[0]: seconds must be"),
    ({"prefill": [[1, 0], [2, 1e300]], "decode": [[1, 1]]}, "prefill[1]: seconds must be"),
    ({"prefill": [[1, 0.5]], "decode": [[1, 1], [2, 0]]}, "decode[1]: seconds must not fall"),
    ({"prefill": [[1e-300, 0], [1, 1]], "decode": [[1, 1]]}, "prefill[0]: x must be a whole"),
]


@pytest.mark.parametrize("table, words", HOSTILE)
def test_a_step_table_past_the_clocks_range_is_one_line(capsys, tmp_path, table, words):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        "".join(
            json.dumps(
                {"timestamp": i, "input_length": 600, "output_length": 40, "hash_ids": [1, 2]}
            )
            + "\n"
            for i in range(3)
        )
    )
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    status, out, err = run_cli(capsys, "replay", str(trace), "--step-table", str(path))
    lines = err.strip().splitlines()
    ok = (
        status == 2
        and out == ""
        and len(lines) == 1
        and words in lines[0]
        and "Traceback" not in err
    )
    record("step table bound", ok)
    assert ok, (status, out[-300:], err[-800:])
