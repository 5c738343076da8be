"""Small helpers shared by the tests: the CLI as a user calls it, and a
reference LRU written independently of pyverify's simulator."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Iterable

from pyverify.cli import main


def run_cli(capsys, *argv):
    """Run ``pyverify ARGV``; return (exit status, stdout, stderr), bad flags included."""
    try:
        status = main(list(argv))
    except SystemExit as exit_:  # argparse exits for bad flags
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def flat_lru_misses(sequence: Iterable[int], capacity: int) -> int:
    """Misses of a plain LRU cache of ``capacity`` blocks replaying ``sequence``."""
    cache: OrderedDict = OrderedDict()
    misses = 0
    for block in sequence:
        if block in cache:
            cache.move_to_end(block)
        else:
            misses += 1
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
    return misses


def assert_one_line_error(status, stdout, stderr, path, expected):
    """The bad-input contract: exit 2, nothing on stdout, one stderr line naming ``path`` and saying ``expected``."""
    assert status == 2
    assert stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    command, _, rest = lines[0].partition(": error: ")  # 'pyverify simulate: error: FILE: ...'
    assert command.startswith("pyverify") and rest.startswith(f"{path}: "), lines[0]
    assert expected in lines[0]


def write_timed_trace(folder: Path) -> str:
    """A small timed Mooncake-style trace (20 requests, 100 ms apart, five shared tails) in ``folder``."""
    path = folder / "timed.jsonl"
    records = [
        {
            "timestamp": 100 * i,
            "input_length": 2000,
            "output_length": 8,
            "hash_ids": [1, 2, 3 + i % 5],
        }
        for i in range(20)
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)
