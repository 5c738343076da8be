"""Memory follows the input, not a flag: a pool of ``--capacity 10**12`` blocks on a tiny trace.

vLLM's pool model built one entry per block of ``--capacity`` up front:
``simulate --eviction vllm --capacity 100000000`` on a two-line trace was a
``MemoryError`` under a 4 GB cap, and ``trace check-events`` with that
capacity took 82 s and 16.8 GB. Each run here is capped at
:data:`~tests.robustness.test_bounds.CAP_KIB` of address space and must
finish in seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..conftest import REPO
from .conftest import record
from .test_bounds import CAP_KIB, run_limited

HUGE = str(10**12)


@pytest.fixture
def two_requests(tmp_path):
    trace = tmp_path / "two.jsonl"
    line = {"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}
    trace.write_text(json.dumps(line) + "\n" + json.dumps(dict(line, timestamp=1)) + "\n")
    return trace


def stored(hashes, parent):
    return {
        "type": "BlockStored",
        "block_hashes": hashes,
        "parent_block_hash": parent,
        "token_ids": list(range(4 * len(hashes))),
        "block_size": 4,
        "lora_id": None,
        "medium": "GPU",
    }


@pytest.mark.parametrize(
    "command",
    [
        ["simulate", "{trace}", "--eviction", "vllm", "--capacity", HUGE],
        ["replay", "{trace}", "--fleet", "2", "--eviction", "vllm", "--capacity", HUGE],
        ["trace", "check-events", "{events}", "--capacity", HUGE],
    ],
)
def test_a_huge_vllm_pool_costs_what_the_trace_uses(tmp_path, two_requests, command):
    events = tmp_path / "events.jsonl"
    events.write_text(
        json.dumps({"ts": 1.0, "events": [stored([1, 2], None)]})
        + "\n"
        + json.dumps({"ts": 2.0, "events": [stored([3], 2)]})
        + "\n"
    )
    argv = [part.format(trace=two_requests, events=events) for part in command]
    result = run_limited(argv, CAP_KIB, timeout=60)
    record("memory bound", result.returncode == 0)
    assert result.returncode == 0, result.stderr[-500:]


def test_the_compiled_pool_sizes_its_arrays_by_the_trace():
    pytest.importorskip("numba")
    script = (
        "from pyverify.cache.vllm_kernel import vllm_kernel_hits\n"
        "print(vllm_kernel_hits([(1, 2), (1, 2), (1, 2, 5)], [4, 4, 6], [0, 0, 0], 10**12, 2))"
    )
    command = f"ulimit -v {CAP_KIB}; exec {sys.executable} -c '{script}'"
    result = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    record("memory bound", result.returncode == 0)
    assert result.returncode == 0 and result.stdout.strip() == "([0, 1, 2], [])", result.stderr[
        -500:
    ]


def test_running_out_of_memory_is_one_line_naming_the_limits():
    """A MemoryError anywhere in a command was a traceback (a 5 MB gzip of 2 GiB of one-block lines, after
    170-200 s under a 3 GiB cap); it is one line naming what ran out and the limits to change, exit 2.
    The parser is made to run out (in a fresh process, before any command imports it)."""
    script = (
        "import sys\n"
        "from pyverify.inputs import jsonread\n"
        "def exhausted(*args, **kwargs):\n"
        "    raise MemoryError\n"
        "jsonread.parse_json = exhausted\n"
        "from pyverify.cli import main\n"
        "sys.exit(main(['validate', 'instances/lab-512x32x16.json']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    lines = result.stderr.strip().splitlines()
    ok = (
        result.returncode == 2
        and not result.stdout
        and len(lines) == 1
        and "Traceback" not in result.stderr
    )
    record("memory bound", ok)
    assert ok, result.stderr[-500:]
    assert "out of memory: pyverify validate" in lines[0] and "PYVERIFY_MAX_INPUT_BYTES" in lines[0]


def test_a_gzip_bomb_is_refused_at_the_input_limit_in_one_line(tmp_path):
    """The bound counts decompressed bytes and says so: 8 MiB unpacked from 8 KB, refused at 1 MiB."""
    import gzip

    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b'{"hash_ids": [1]}\n' * ((8 << 20) // 18), compresslevel=9))
    assert bomb.stat().st_size < 64 << 10
    for command in (["validate"], ["simulate", "--capacity", "5"]):
        command = (
            f"PYVERIFY_MAX_INPUT_BYTES={1 << 20} exec {sys.executable} -m pyverify {command[0]} "
            + " ".join(command[1:])
            + f" '{bomb}'"
        )
        result = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=REPO
        )
        lines = result.stderr.strip().splitlines()
        ok = result.returncode == 2 and len(lines) == 1 and "after decompression" in lines[0]
        record("memory bound", ok)
        assert ok, result.stderr[-500:]


def test_a_big_fleet_of_small_tiers_costs_what_the_caches_hold(tmp_path):
    """replay --fleet 4096 --host-capacity 20 --pool-capacity 100 on the 1.1 MB Mooncake trace took 1.09 GB
    (3.86 GB reported) for tables of a slot per host x distinct block; the Python loop, cheaper there, holds
    only what the caches hold. Here: 40,000 distinct blocks, so the tables alone would pass the cap."""
    trace = tmp_path / "wide.jsonl"
    trace.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": r,
                    "input_length": 40 * 512,
                    "output_length": 1,
                    "hash_ids": list(range(40 * r, 40 * r + 40)),
                }
            )
            + "\n"
            for r in range(1000)
        )
    )
    result = run_limited(
        [
            "replay",
            str(trace),
            "--fleet",
            "4096",
            "--host-capacity",
            "20",
            "--pool-capacity",
            "100",
        ],
        CAP_KIB,
        timeout=120,
    )
    record("memory bound", result.returncode == 0)
    assert result.returncode == 0, result.stderr[-500:]
