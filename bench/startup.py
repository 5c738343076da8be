"""Start-up: whole ``pyverify simulate`` processes on a small trace against a plain script (issue #23).

    python bench/startup.py [--rounds 5] [--trace PATH] [--fleet 16] [--out PATH]

Issue #23 asks that ``simulate`` on the 288,500-reference Mooncake
conversation trace (``$PYVERIFY_MOONCAKE_TRACES/conversation_trace.jsonl``,
default ``../shared/data/mooncake`` beside the checkout) take at most twice
the time of a plain script: ``json.loads`` per line and a set. On a trace
this small the time is mostly start-up (the interpreter, imports, building
the command line) rather than counting, so this runs every command below as
a fresh process, interleaved (each round runs every command once),
``--rounds`` rounds, and prints the median wall time of each and its ratio to
the plain script:

* the interpreter alone (``python -c pass``) and ``python -c "import numpy"``:
  the floors under any numpy program (the trace is held in numpy arrays);
* the plain script, pooled, and its per-host form (a set of (host, block)
  pairs, round-robin): the answers pyverify's are checked against;
* ``python -m pyverify simulate T --model pooled``, the same with ``--json``,
  ``--model per-host --fleet F --routing round-robin`` with and without
  ``--json``, and the installed console script (``pyverify`` beside the
  interpreter, a setuptools entry point) on the pooled run.

Children run without ``PYTHONDONTWRITEBYTECODE`` (as an installed package,
pyverify loads its modules from bytecode) with this checkout first on
``PYTHONPATH`` (so the console script, too, runs this checkout's code), after
one untimed warm-up run of every command. Every pyverify answer (misses, in
the ``--json`` runs) is checked equal to the plain script's; a mismatch is
printed and the exit status is 1. The table, the machine (architecture,
cores, Python) and the load average before and after are printed, and written
to ``--out`` if given (results are kept outside the repository). Not a test: nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACES = Path(
    os.environ.get("PYVERIFY_MOONCAKE_TRACES") or REPO.parent / "shared" / "data" / "mooncake"
)

#: The plain script of issue #23: one json.loads per line and a set; prints references, distinct blocks, hits.
#: With a fleet size F > 0 as its second argument, the set holds (host, block) pairs, request i on host i mod F.
PLAIN = """
import json, sys
path, fleet = sys.argv[1], int(sys.argv[2])
seen = set(); refs = 0
with open(path) as f:
    for row, line in enumerate(f):
        ids = json.loads(line)["hash_ids"]; refs += len(ids)
        if fleet:
            host = row % fleet
            seen.update((host, b) for b in ids)
        else:
            seen.update(ids)
print(refs, len(seen), refs - len(seen))
"""


def run(argv: list[str]) -> tuple[float, str]:
    """``(wall seconds, stdout)`` of one fresh process, from just before its start until it has been reaped."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop(
        "PYTHONDONTWRITEBYTECODE", None
    )  # as installed: pyverify's modules load from bytecode, not compiled each run
    start = time.perf_counter()
    child = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    wall = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(
            f"{' '.join(argv)}: exit {child.returncode}: {child.stderr.decode()[-400:]}"
        )
    return wall, child.stdout.decode()


def commands_for(trace: Path, fleet: int, script: Path) -> dict[str, list[str]]:
    py = sys.executable
    simulate = ["-m", "pyverify", "simulate", str(trace)]
    per_host = ["--model", "per-host", "--fleet", str(fleet), "--routing", "round-robin"]
    return {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "plain script, pooled": [py, "-c", PLAIN, str(trace), "0"],
        "plain script, per-host": [py, "-c", PLAIN, str(trace), str(fleet)],
        "pyverify simulate, pooled": [py, *simulate, "--model", "pooled"],
        "pyverify simulate, pooled --json": [py, *simulate, "--model", "pooled", "--json"],
        "pyverify simulate, per-host": [py, *simulate, *per_host],
        "pyverify simulate, per-host --json": [py, *simulate, *per_host, "--json"],
        "console script pyverify, pooled": [str(script), *simulate[2:], "--model", "pooled"],
    }


def measure(
    commands: dict[str, list[str]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, str]]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    outputs: dict[str, str] = {}
    for argv in commands.values():  # warm-up, untimed: bytecode written once
        run(argv)
    for _ in range(rounds):
        for name, argv in commands.items():  # interleaved: every command once per round
            wall, out = run(argv)
            times[name].append(wall)
            outputs[name] = out
    return times, outputs


def check(outputs: dict[str, str]) -> list[str]:
    """Mismatches between pyverify's misses and the plain script's distinct blocks (pooled; per host, pairs)."""
    problems = []
    for model in ("pooled", "per-host"):
        refs, distinct, _ = (int(word) for word in outputs[f"plain script, {model}"].split())
        report = json.loads(outputs[f"pyverify simulate, {model} --json"])
        if (report["references"], report["misses"]) != (refs, distinct):
            problems.append(
                f"MISMATCH ({model}): pyverify references/misses {report['references']}/{report['misses']}, "
                f"plain script {refs}/{distinct}"
            )
    return problems


def table(times: dict[str, list[float]], rounds: int) -> list[str]:
    medians = {name: statistics.median(values) for name, values in times.items()}
    plain = medians["plain script, pooled"]
    lines = [
        f"| command | median wall ({rounds} rounds) | min | max | / plain script, pooled |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, values in times.items():
        lines.append(
            f"| {name} | {medians[name]:.3f} s | {min(values):.3f} s | {max(values):.3f} s | {medians[name] / plain:.2f}x |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trace", type=Path, default=TRACES / "conversation_trace.jsonl")
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument(
        "--script",
        type=Path,
        default=Path(sys.executable).with_name("pyverify"),
        help="the installed console script (default: pyverify beside this interpreter, not a pyenv shim)",
    )
    parser.add_argument("--out", type=Path, help="also write the output to this file")
    args = parser.parse_args(argv)
    if not args.trace.is_file():
        print(f"{args.trace}: absent (set PYVERIFY_MOONCAKE_TRACES); nothing measured")
        return 0
    if not args.script.is_file():
        raise SystemExit(
            f"{args.script}: no console script (pip install -e . installs it; or pass --script)"
        )
    before = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    times, outputs = measure(commands_for(args.trace, args.fleet, args.script), args.rounds)
    after = os.getloadavg()
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    lines = [
        f"# bench/startup.py --rounds {args.rounds}, run {started:%Y-%m-%d %H:%M} UTC at commit {commit or '?'}",
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average (1, 5, 15 min) {before[0]:.2f} {before[1]:.2f} {before[2]:.2f} before, "
        f"{after[0]:.2f} {after[1]:.2f} {after[2]:.2f} after",
        f"trace: {args.trace.name}, {json.loads(outputs['pyverify simulate, pooled --json'])['references']:,} block references; "
        f"per-host: round-robin over {args.fleet} hosts; whole processes, interleaved, bytecode cached",
        "",
        *table(times, args.rounds),
        "",
    ]
    problems = check(outputs)
    lines += problems or [
        "answers: pyverify's references and misses equal the plain script's (pooled and per-host)"
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"written to {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
