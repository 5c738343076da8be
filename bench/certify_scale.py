"""``certify --capacity C -o`` then ``verify``, as whole processes, on 5M and 20M-reference traces (issue #23).

    python bench/certify_scale.py [--sizes 5000000,20000000] [--formats jsonl,parquet] [--rounds 3] [--capacity 4096]

Writes bench/synthetic.py's prefix-closed trace (bench/trace_files.py) at each
size and format into a temporary folder, then, round by round (interleaved:
every size and format once per round), runs ``pyverify certify TRACE --model
pooled --capacity C -o cert.json`` and ``pyverify verify cert.json TRACE``,
each in a fresh process, and reads its wall time and peak RSS
(``os.wait4``'s ``ru_maxrss``). Prints the median of the rounds per size and
format: seconds, microseconds per reference, peak MiB, and the ratios to the
target of issue #23 (certify + verify under 60 s together, each under 2 GiB
peak RSS; a ratio below 1 meets it). Above a million references ``certify``
takes the packed route by default (pyverify.certificate/2); the certificate's
size is printed too. Certify's own time includes its check of the
certificate before writing it (the trusted checker, in process).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from trace_files import write_jsonl, write_parquet  # noqa: E402

TARGET_SECONDS = 60.0
TARGET_BYTES = 2 * 2**30


def run(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS bytes of ``command`` (a fresh process; its output is discarded)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}): {error[-2000:]}")
    return seconds, usage.ru_maxrss * 1024  # Linux: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000000,20000000")
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--capacity", type=int, default=4096)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    env_python = [sys.executable, "-m", "pyverify"]
    load = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), Python {platform.python_version()}, "
        f"load {load:.1f} at the start; medians of {args.rounds} interleaved rounds"
    )
    with tempfile.TemporaryDirectory(prefix="certify-scale-") as folder:
        traces = {}
        for size in sizes:
            for fmt in formats:
                path = Path(folder) / f"trace-{size}.{fmt}"
                (write_jsonl if fmt == "jsonl" else write_parquet)(path, size)
                traces[size, fmt] = path
        measured: dict[tuple[int, str], dict[str, list]] = {
            key: {"certify": [], "verify": []} for key in traces
        }
        cert_bytes = {}
        for _ in range(args.rounds):
            for key, path in traces.items():
                cert = Path(folder) / f"cert-{key[0]}-{key[1]}.json"
                measured[key]["certify"].append(
                    run(
                        env_python
                        + [
                            "certify",
                            str(path),
                            "--model",
                            "pooled",
                            "--capacity",
                            str(args.capacity),
                            "--time-limit",
                            "600",
                            "-o",
                            str(cert),
                        ]
                    )
                )
                measured[key]["verify"].append(run(env_python + ["verify", str(cert), str(path)]))
                cert_bytes[key] = cert.stat().st_size
        print(
            f"{'references':>11} {'format':>7} | {'certify s':>9} {'us/ref':>6} {'MiB':>6} | {'verify s':>8} {'us/ref':>6} {'MiB':>6} | "
            f"{'sum s':>6} {'/60 s':>6} {'peak/2GiB':>9} | cert MiB"
        )
        for (size, fmt), runs in measured.items():
            c_s = statistics.median(s for s, _ in runs["certify"])
            c_b = statistics.median(b for _, b in runs["certify"])
            v_s = statistics.median(s for s, _ in runs["verify"])
            v_b = statistics.median(b for _, b in runs["verify"])
            print(
                f"{size:>11,} {fmt:>7} | {c_s:9.1f} {c_s / size * 1e6:6.2f} {c_b / 2**20:6.0f} | {v_s:8.1f} {v_s / size * 1e6:6.2f} "
                f"{v_b / 2**20:6.0f} | {c_s + v_s:6.1f} {(c_s + v_s) / TARGET_SECONDS:6.2f} {max(c_b, v_b) / TARGET_BYTES:9.2f} | "
                f"{cert_bytes[size, fmt] / 2**20:.1f}"
            )
    print(
        f"load {os.getloadavg()[0]:.1f} at the end. Target (issue #23): sum under {TARGET_SECONDS:.0f} s (ratio < 1), "
        "each peak under 2 GiB (ratio < 1)."
    )


if __name__ == "__main__":
    main()
