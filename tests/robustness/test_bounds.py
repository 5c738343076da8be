"""Bounds: every count an input or a flag asks for is bounded, and memory grows with what the input holds.

Each test here reproduces a report of a tester: a value that made pyverify
allocate per host number, per sweep point or per blank line, or reserve
memory the input never needed.
"""

from __future__ import annotations

import subprocess
import sys

from pyverify.inputs.model import MAX_BLOCK_SIZE_TOKENS, MAX_HOSTS, instance_schema
from pyverify.sim.sweep import max_load_ratio

from ..conftest import REPO
from .conftest import record


def test_the_bounds_are_the_instance_schemas():
    """One rule for every format: the constants the columnar readers and the flags use are the schema's."""
    properties = instance_schema()["properties"]
    assert properties["hosts"]["maximum"] == MAX_HOSTS
    assert properties["requests"]["items"]["properties"]["host"]["maximum"] == MAX_HOSTS - 1
    assert properties["block_size_tokens"]["maximum"] == MAX_BLOCK_SIZE_TOKENS


def test_max_load_ratio_counts_only_the_hosts_that_occur():
    """It allocated one counter per host number: a routing naming host 10**12 asked for 8 TB."""
    assert max_load_ratio((5, 5, 10**12), 3) == 2.0
    assert max_load_ratio((), 4) == 1.0


def run_limited(
    argv: list[str], limit_kib: int, timeout: float = 120
) -> subprocess.CompletedProcess:
    """``pyverify ARGV`` in a process whose address space is capped (``ulimit -v``)."""
    command = f"ulimit -v {limit_kib}; exec {sys.executable} -m pyverify " + " ".join(
        f"'{a}'" for a in argv
    )
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=timeout, cwd=REPO
    )


def one_line_exit_2(result: subprocess.CompletedProcess, *words: str) -> bool:
    lines = result.stderr.strip().splitlines()
    return (
        result.returncode == 2
        and len(lines) == 1
        and "Traceback" not in result.stderr
        and all(w in lines[0] for w in words)
    )


#: An address-space cap (KiB) well above what these commands need and below what the defects took.
CAP_KIB = 1_000_000


def test_a_small_json_file_does_not_reserve_the_input_bound(tmp_path):
    """read_bounded read limit + 1 bytes in one call, reserving 4 GiB: a MemoryError traceback on a 10 KB file."""
    result = run_limited(["validate", str(REPO / "instances" / "lab-512x32x16.json")], CAP_KIB)
    record("memory bound", result.returncode == 0)
    assert result.returncode == 0, result.stderr[-500:]


def test_blank_lines_cost_no_memory_per_line(tmp_path):
    """20 MiB of blank lines before the first record took 1.85 GB (about 90 bytes a line)."""
    trace = tmp_path / "blank.jsonl"
    trace.write_bytes(b"\n" * (20 << 20) + b'{"hash_ids": [1, 2]}\n')
    result = run_limited(["validate", str(trace)], CAP_KIB)
    record("memory bound", result.returncode == 0)
    assert result.returncode == 0, result.stderr[-500:]


def test_a_gzip_of_blank_lines_is_one_line_naming_the_bound(tmp_path):
    """200 KB of gzip holding 200 MiB of newlines passed 4.2 GB: now refused once the head bound is passed."""
    import gzip

    trace = tmp_path / "blank.jsonl.gz"
    with gzip.open(trace, "wb") as packed:
        for _ in range(200):
            packed.write(b"\n" * (1 << 20))
    result = run_limited(["validate", str(trace)], CAP_KIB)
    ok = one_line_exit_2(result, str(trace), "blank lines")
    record("memory bound", ok)
    assert ok, result.stderr[-500:]


def test_cost_sweep_points_are_bounded(capsys):
    """cost --sweep pool_bandwidth_gb_s=1:100:100000 reached 21.4 GB and was killed."""
    from pyverify.cli import main
    from pyverify.cost.params import MAX_SWEEP_STEPS

    status = main(
        [
            "cost",
            str(REPO / "instances" / "lab-512x32x16.json"),
            "--sweep",
            "pool_bandwidth_gb_s=1:100:100000",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    ok = status == 2 and len(err) == 1 and f"at most {MAX_SWEEP_STEPS}" in err[0]
    record("flag bound", ok)
    assert ok, err


def test_runs_of_blank_lines_keep_the_line_numbers(capsys, tmp_path):
    """Blank lines are passed over in bulk (a readline each took 28 s for 20 MiB); the lines still count."""
    from pyverify.cli import main

    blank = (
        b"\n" * 100_000 + b"  \n\t\n" + b"\n" * 70_000
    )  # runs longer than one buffer, white space in between
    trace = tmp_path / "gaps.jsonl"
    trace.write_bytes(
        b'{"hash_ids": [1]}\n'
        + blank
        + b'{"hash_ids": [1, 2]}\n'
        + blank
        + b'{"hash_ids": [3], "timestamp": "x"}\n'
    )
    expected = 1 + 2 * (blank.count(b"\n") + 1)
    status = main(["validate", str(trace)])
    err = capsys.readouterr().err.strip().splitlines()
    ok = status == 2 and len(err) == 1 and f"line {expected}.timestamp" in err[0]
    record("memory bound", ok)
    assert ok, (expected, err)
