"""The README's wall-time figures for certify, verify and bounded-check, as ranges.

Each command runs ROUNDS times in a fresh process (start-up and parsing
included), interleaved, and the table gives the fastest and slowest wall
time, with the machine named, so a reader knows what "2 s" meant here. The
trusted checker's size is counted from the files, not written by hand.

    python bench/readme_timings.py [--rounds 3]

Needs the Mooncake synthetic trace ($PYVERIFY_MOONCAKE_TRACES, default
../shared/data/mooncake); scripts/readme_figures.py --only timings writes the
output into README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = (
    Path(os.environ.get("PYVERIFY_MOONCAKE_TRACES") or REPO.parent / "shared" / "data" / "mooncake")
    / "synthetic_trace.jsonl"
)


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pyverify", *argv], cwd=REPO, check=True, capture_output=True
    )
    return time.perf_counter() - start


def seconds(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.1f} s" if high - low < 0.05 else f"{low:.1f}-{high:.1f} s"


#: What verify runs on every certificate (one path, on NumPy).
CHECKER = ("reader.py", "check.py", "runs.py", "recount.py", "digest.py", "packed.py")


def trusted_lines(names: tuple[str, ...]) -> int:
    files = [REPO / "pyverify" / "trusted" / name for name in names]
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(f"{TRACE}: absent (set PYVERIFY_MOONCAKE_TRACES)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        pooled, per_host = str(Path(scratch) / "pooled.json"), str(Path(scratch) / "per-host.json")
        commands = [
            (
                "`certify $T --model pooled --capacity 4096 -o c.json`",
                ["certify", str(TRACE), "--model", "pooled", "--capacity", "4096", "-o", pooled],
            ),
            ("`verify c.json $T` (pooled)", ["verify", pooled, str(TRACE)]),
            (
                "`certify $T --model per-host --routing round-robin --fleet 16 --capacity 4096 -o c.json`",
                [
                    "certify",
                    str(TRACE),
                    "--model",
                    "per-host",
                    "--routing",
                    "round-robin",
                    "--fleet",
                    "16",
                    "--capacity",
                    "4096",
                    "-o",
                    per_host,
                ],
            ),
            ("`verify c.json $T` (per host)", ["verify", per_host, str(TRACE)]),
            ("`bounded-check -n 6 -k 6`", ["bounded-check", "-n", "6", "-k", "6"]),
            ("`bounded-check -n 7 -k 7`", ["bounded-check", "-n", "7", "-k", "7"]),
        ]
        times: dict[str, list[float]] = {label: [] for label, _ in commands}
        for _ in range(args.rounds):
            for label, command in commands:  # interleaved: each round runs every command once
                times[label].append(wall(command))
    cores = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}, "
        f"load {load:.1f} at the end; {args.rounds} fresh processes each, interleaved"
    )
    print("| command | wall time (fastest-slowest) |")
    print("| --- | --- |")
    for label, values in times.items():
        print(f"| {label} | {seconds(values)} |")
    print(
        f"trusted checker: {trusted_lines(CHECKER)} lines (pyverify/trusted/{' + '.join(CHECKER)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
