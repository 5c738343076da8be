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


def run_limited(argv: list[str], limit_kib: int, timeout: float = 120) -> subprocess.CompletedProcess:
    """``pyverify ARGV`` in a process whose address space is capped (``ulimit -v``)."""
    command = f"ulimit -v {limit_kib}; exec {sys.executable} -m pyverify " + " ".join(f"'{a}'" for a in argv)
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def one_line_exit_2(result: subprocess.CompletedProcess, *words: str) -> bool:
    lines = result.stderr.strip().splitlines()
    return result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr and all(w in lines[0] for w in words)
