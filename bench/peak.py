"""Run one command in a fresh process; report its wall time and peak resident set size.

    python bench/peak.py -- COMMAND ARGS...

Prints one JSON line: ``{"seconds": ..., "peak_rss_bytes": ..., "status": ..., "stdout": ...}``.
The peak is ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` read in this wrapper,
which has no other child, so it is the command's own peak (its threads and
DuckDB's buffers included; a command's own subprocesses would count too).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def measure(command: list[str], env: dict | None = None) -> dict:
    """Run ``command`` in a fresh wrapper process so that the peak is this command's alone."""
    wrapper = [sys.executable, __file__, "--", *command]
    done = subprocess.run(wrapper, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {command} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    command = sys.argv[sys.argv.index("--") + 1 :]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # Linux: KiB
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_bytes": peak,
                "status": done.returncode,
                "stdout": done.stdout,
                "stderr": done.stderr[-2000:],
            }
        )
    )


if __name__ == "__main__":
    main()
