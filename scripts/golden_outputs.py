"""The golden outputs: what each command prints with --json on the committed instances.

The redesign moves code, not behaviour: tests/test_golden.py runs every command below and compares
its JSON with tests/golden/NAME.json, key by key, values exact (content digests included). Keys
that measure time on this machine are left out (VOLATILE). Run this script to write the files
again after a change that means to alter an output, and say which field and why in CHANGELOG.md.

    python scripts/golden_outputs.py           # rewrite tests/golden/
    python scripts/golden_outputs.py --check   # exit 1 naming the first difference
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden"
LAB = "instances/lab-512x32x16.json"
GAP = "instances/greedy-gap-30.json"
MOONCAKE = "instances/mooncake-synthetic.json"

#: name -> the words after `pyverify` (run from the repository's top folder, so paths print alike).
COMMANDS = {
    "simulate-lab-pooled": ["simulate", LAB, "--json"],
    "simulate-lab-per-host-c2": [
        "simulate",
        LAB,
        "--model",
        "per-host",
        "--capacity",
        "2",
        "--json",
    ],
    "simulate-mooncake-c1000-vllm": [
        "simulate",
        MOONCAKE,
        "--capacity",
        "1000",
        "--eviction",
        "vllm",
        "--json",
    ],
    "sweep-lab": ["sweep", LAB, "--json"],
    "mrc-lab": ["mrc", LAB, "--json"],
    "budgets-mooncake": [
        "budgets",
        MOONCAKE,
        "--budgets-gib",
        "1,4",
        "--kv-bytes-per-token",
        "327680",
        "--json",
    ],
    "cost-lab": ["cost", LAB, "--json"],
    "replay-mooncake": ["replay", MOONCAKE, "--json"],
    "certify-gap-pooled-c4": [
        "certify",
        GAP,
        "--model",
        "pooled",
        "--capacity",
        "4",
        "--json",
        "-o",
        "{tmp}/certificate.json",
    ],
}

#: Keys whose values are times measured on this machine, wherever they occur.
VOLATILE = {"wall_time_s", "total_time_s", "check_time_s", "created_at", "created_by"}


def stable(value):
    """``value`` without the keys that measure this run's time."""
    if isinstance(value, dict):
        return {key: stable(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [stable(item) for item in value]
    return value


def output(name: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        words = [word.format(tmp=tmp) for word in COMMANDS[name]]
        result = subprocess.run(
            [sys.executable, "-m", "pyverify", *words],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            raise SystemExit(
                f"pyverify {' '.join(words)}: exit {result.returncode}: {result.stderr.strip()}"
            )
        return stable(
            json.loads(result.stdout.replace(tmp, "{tmp}"))
        )  # where it wrote, as the command says


def first_difference(expected, got, where: str = "") -> str | None:
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got)):
            if key not in got or key not in expected:
                return f"{where}.{key}: {'missing' if key not in got else 'new'}"
            found = first_difference(expected[key], got[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for index, (one, other) in enumerate(zip(expected, got)):
            found = first_difference(one, other, f"{where}[{index}]")
            if found:
                return found
        return None
    return None if expected == got else f"{where}: expected {expected!r:.200}, got {got!r:.200}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("names", nargs="*", help="only these outputs (default: all)")
    args = parser.parse_args()
    GOLDEN.mkdir(exist_ok=True)
    for name in args.names or COMMANDS:
        path = GOLDEN / f"{name}.json"
        got = output(name)
        if args.check:
            difference = first_difference(json.loads(path.read_text()), got)
            if difference:
                print(f"{name}: {difference}", file=sys.stderr)
                return 1
        else:
            path.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
