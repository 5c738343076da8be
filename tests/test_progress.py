"""Long work says so on standard error even when it is not a terminal; standard output stays the result alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pyverify.progress import PLAIN_INTERVAL_VARIABLE, PlainProgress

from .conftest import REPO


def test_plain_progress_is_silent_before_its_interval_and_then_prints_a_line(capsys):
    quiet = PlainProgress(10, "replay", "request", interval_s=3600)
    quiet.advance(5)
    assert capsys.readouterr().err == ""
    eager = PlainProgress(10, "mrc verify", "capacity", interval_s=0)
    eager.advance(5)
    assert capsys.readouterr().err.startswith("mrc verify: 5 of 10 capacities (50%), ")


def test_a_piped_replay_prints_progress_lines_and_clean_json(tmp_path):
    """The README's replay --compare ran 90 s with nothing on a piped stderr."""
    trace = tmp_path / "timed.jsonl"
    trace.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": 100 * i,
                    "input_length": 2000,
                    "output_length": 8,
                    "hash_ids": [1, 2 + i % 3],
                }
            )
            + "\n"
            for i in range(30)
        )
    )
    environment = {**os.environ, PLAIN_INTERVAL_VARIABLE: "0"}  # every run counts as long
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify",
            "replay",
            str(trace),
            "--capacity",
            "2",
            "--compare",
            "--host-capacity",
            "4",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)  # nothing but the result on stdout
    lines = result.stderr.splitlines()
    assert lines and all(
        line.startswith("replay: ") and " of 120 requests (" in line for line in lines
    ), result.stderr
