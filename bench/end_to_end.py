"""End to end, whole processes: default ``pyverify simulate`` against DuckDB, Polars and a plain script.

    python bench/end_to_end.py [--refs 5000000] [--big] [--rounds 3] [--fleet 16] [--baseline DIR]

Writes bench/synthetic.py's prefix-closed trace (bench/trace_files.py) as
Mooncake JSONL in two forms (``json.dumps``' own, and ``other``: compact, another
key order, one extra field, as other tools write it) and as Parquet in a temporary folder, at ``--refs`` block
references (and, with ``--big``, also at 20M), then runs every command as a
fresh process, interleaved (each round runs every command once, in an order shuffled each round), ``--rounds``
rounds, and prints the median wall time of each, start-up and parsing
included, and each ratio both of the medians and as its range within the rounds:

* ``pyverify simulate F --model pooled --json`` and ``--model per-host``
  (the default: ``--backend auto``, round-robin over 16 hosts), on the three files;
* DuckDB's own ``count(distinct)`` over ``unnest(hash_ids)`` (pooled) and over
  (row number mod 16, block) pairs (per host, round-robin), on the three files;
* Polars (``explode`` and ``n_unique``), if it is importable (``pip install -e '.[bench]'`` pins it);
* a plain ``json.loads``-and-a-set script (pooled; per host, a set of pairs), and on the conversation
  trace also that script with NumPy (the ids in one array, counted by ``np.unique``): NumPy's import is
  the floor of any tool that holds the trace in NumPy arrays, as pyverify does;
* the exact LRU curve, from the Parquet file: ``pyverify mrc`` against one LRU
  capacity (``pyverify simulate --capacity``) and a plain numba pass of Olken's
  marking (Fenwick tree), all three answering the misses at one capacity;
* start-up, in the same rounds: ``python -c "import numpy, pyarrow.parquet"``, and
  pyverify's and DuckDB's pooled count of a two-request Parquet file, so that each
  tool's time past its own start-up can be set against the other's.

With ``--baseline DIR`` (another checkout of pyverify, e.g. ``git worktree add /tmp/old main``), every
pyverify command also runs from that checkout, in the same rounds, and each is set against it: the
new/old ratio of each command, and the old checkout's ratios to DuckDB beside the new ones.

Every answer is checked equal to pyverify's misses (a mismatch is printed and
the exit status is 1). Then the ratios issue #23 names: pyverify / DuckDB on
JSONL, pooled and per host; pyverify / DuckDB on Parquet; and, on the
288k-reference Mooncake conversation trace (``$PYVERIFY_MOONCAKE_TRACES``, if
present), pyverify / the plain script. Peak memory is each process's own
maximum resident set (``os.wait4``'s ``ru_maxrss``), stated per reference.
Children run without ``PYTHONDONTWRITEBYTECODE`` (as an installed package,
pyverify loads its modules from bytecode) after one untimed warm-up run of
every command, which also compiles numba's cached kernels where they are used.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402
from trace_files import write_jsonl, write_parquet  # noqa: E402

CONVERSATION = (
    Path(os.environ.get("PYVERIFY_MOONCAKE_TRACES") or REPO.parent / "shared" / "data" / "mooncake")
    / "conversation_trace.jsonl"
)

PLAIN = """
import json, sys
path, fleet = sys.argv[1], int(sys.argv[2])
seen = set()
with open(path) as lines:
    for row, line in enumerate(lines):
        ids = json.loads(line)["hash_ids"]
        if fleet:
            host = row % fleet
            seen.update((host, b) for b in ids)
        else:
            seen.update(ids)
print(len(seen))
"""

#: The plain script with NumPy: the same parse, the ids gathered into one array and counted by ``np.unique``.
#: Any tool that holds a trace in NumPy arrays pays NumPy's import (0.06 s on a 2-core VM, near 3x Python's own start), which
#: the set-only script does not: this is the floor of that design on a small trace, run beside it.
NUMPY_SCRIPT = """
import json, sys
import numpy as np
ids = []
with open(sys.argv[1]) as lines:
    for line in lines:
        ids.extend(json.loads(line)["hash_ids"])
print(np.unique(np.array(ids, dtype=np.int64)).size)
"""

DUCKDB = """
import sys, duckdb
path, fleet = sys.argv[1], int(sys.argv[2])
source = (f"read_parquet('{path}', file_row_number = true)" if path.endswith(".parquet")
          else f"(select row_number() over () - 1 as file_row_number, hash_ids from read_json('{path}', format = 'newline_delimited', columns = {{hash_ids: 'BIGINT[]'}}))")
if fleet:
    query = f"select count(*) from (select distinct file_row_number % {fleet}, h from (select file_row_number, unnest(hash_ids) as h from {source}))"
else:
    query = f"select count(distinct h) from (select unnest(hash_ids) as h from {source})"
print(duckdb.sql(query).fetchall()[0][0])
"""

POLARS = """
import sys, polars as pl
path, fleet = sys.argv[1], int(sys.argv[2])
frame = pl.read_parquet(path, columns=["hash_ids"]) if path.endswith(".parquet") else pl.read_ndjson(path, schema={"hash_ids": pl.List(pl.Int64)})
if fleet:
    pairs = frame.with_row_index("row").select((pl.col("row") % fleet).alias("host"), "hash_ids").explode("hash_ids")
    print(pairs.unique().height)
else:
    print(frame.select(pl.col("hash_ids").explode().n_unique()).item())
"""


#: The plain numba pass of Olken's marking, a self-contained script, run from a copy in the scratch folder
#: so that numba caches it there (the warm-up run pays its compilation), not in the checkout.
OLKEN = Path(__file__).resolve().parent / "olken_pass.py"

#: The capacity (blocks) of the one-capacity LRU run the curve is set against.
CURVE_CAPACITY = 100_000


#: The name prefix of a command run from the ``--baseline`` checkout.
BASELINE = "baseline "


def from_checkout(argv: list[str], checkout: Path) -> list[str]:
    """``argv`` (``python -m pyverify ...``) run from another checkout: its folder first on ``sys.path``, ahead of
    the working folder and ``PYTHONPATH`` (both this checkout)."""
    assert argv[1:3] == ["-m", "pyverify"], argv
    boot = (
        "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'pyverify'; "
        "runpy.run_module('pyverify', run_name='__main__', alter_sys=True)"
    )
    return [argv[0], "-c", boot, str(checkout), *argv[3:]]


def with_baseline(commands: dict[str, list[str]], checkout: Path | None) -> dict[str, list[str]]:
    """``commands``, and each pyverify command again from ``checkout`` (named :data:`BASELINE` + its name)."""
    if checkout is None:
        return commands
    extra = {
        BASELINE + name: from_checkout(argv, checkout)
        for name, argv in commands.items()
        if argv[1:3] == ["-m", "pyverify"]
    }
    return {**commands, **extra}


def run(argv: list[str]) -> tuple[float, int, str]:
    """``(wall seconds, peak RSS bytes, stdout)`` of one fresh process."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop(
        "PYTHONDONTWRITEBYTECODE", None
    )  # as installed: pyverify's modules load from bytecode, not compiled each run
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO
    )
    out, err = child.communicate()
    wall = time.perf_counter() - start
    _, status, usage = os.wait4(child.pid, 0) if child.returncode is None else (0, 0, None)
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)}: exit {child.returncode}: {err.decode()[-400:]}")
    peak = usage.ru_maxrss * 1024 if usage is not None else 0
    return wall, peak, out.decode()


def run_measured(argv: list[str]) -> tuple[float, int, str]:
    """:func:`run`, with the peak memory of that process alone (a wrapper waits for it with ``wait4``)."""
    wrapper = (
        "import os, subprocess, sys, time, json; t = time.perf_counter(); "
        "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE); out = p.stdout.read(); "
        "_, status, usage = os.wait4(p.pid, 0); "
        "print(json.dumps({'wall': time.perf_counter() - t, 'peak': usage.ru_maxrss * 1024, 'status': status, 'out': out.decode()}))"
    )
    _, _, out = run([sys.executable, "-c", wrapper, *argv])
    data = json.loads(out)
    if data["status"]:
        raise SystemExit(f"{' '.join(argv)}: exit status {data['status']}")
    return data["wall"], data["peak"], data["out"]


#: The start-up commands' names begin so: no answer is compared (the two-request file's is its own).
START_UP = "start-up"


def misses_of(command: str, out: str) -> int:
    command = command.removeprefix(BASELINE)
    if command.startswith(START_UP):
        return -1
    if command.startswith("pyverify mrc"):
        return json.loads(out)["points"][0]["misses"]
    return (
        json.loads(out)["misses"]
        if command.startswith("pyverify")
        else int(out.strip().splitlines()[-1])
    )


def curve_commands(parquet: Path, olken: Path) -> dict[str, list[str]]:
    """The exact LRU curve (``mrc``) against one LRU capacity (``simulate --capacity``) and the plain Olken pass,
    all from the Parquet file (so parsing weighs least), each answering the misses at :data:`CURVE_CAPACITY`."""
    py, c = sys.executable, str(CURVE_CAPACITY)
    return {
        "pyverify mrc curve": [
            py,
            "-m",
            "pyverify",
            "mrc",
            str(parquet),
            "--capacities",
            c,
            "--json",
        ],
        "pyverify simulate lru curve": [
            py,
            "-m",
            "pyverify",
            "simulate",
            str(parquet),
            "--capacity",
            c,
            "--json",
        ],
        "plain numba Olken curve": [py, str(olken), str(parquet), c],
    }


def start_up_commands(tiny: Path) -> dict[str, list[str]]:
    """The floors under a run: the two libraries every array reader imports, and each tool's pooled count of
    a two-request Parquet file ``tiny`` (start-up, imports and output, with next to nothing to count)."""
    py = sys.executable
    return {
        f"{START_UP}: import numpy, pyarrow.parquet": [py, "-c", "import numpy, pyarrow.parquet"],
        f"{START_UP}: pyverify, 2 requests": [
            py,
            "-m",
            "pyverify",
            "simulate",
            str(tiny),
            "--model",
            "pooled",
            "--json",
        ],
        f"{START_UP}: duckdb, 2 requests": [py, "-c", DUCKDB, str(tiny), "0"],
    }


def write_tiny_parquet(path: Path) -> None:
    from pyverify.inputs.columnar import ParquetTraceWriter

    with ParquetTraceWriter(path) as writer:
        writer.write(np.array([0, 1, 2, 0, 3], dtype=np.int64), np.array([0, 3, 5], dtype=np.int64))


#: The kinds of file each size is written as, in the order the report shows them: ``JSONL-other`` is the
#: trace in bench/trace_files.py's ``other`` form (compact, another key order, one extra field).
KINDS = ("JSONL", "JSONL-other", "Parquet")


def commands_for(files: dict[str, Path], fleet: int, polars: bool) -> dict[str, list[str]]:
    """The commands on each of :data:`KINDS`' files (``files``: kind to path)."""
    py = sys.executable
    jsonl = files["JSONL"]
    commands: dict[str, list[str]] = {}
    for kind, path in files.items():
        for model, hosts in (("pooled", 0), ("per-host", fleet)):
            extra = ["--fleet", str(fleet)] if hosts else []
            commands[f"pyverify {model} {kind}"] = [
                py,
                "-m",
                "pyverify",
                "simulate",
                str(path),
                "--model",
                model,
                *extra,
                "--json",
            ]
            commands[f"duckdb {model} {kind}"] = [py, "-c", DUCKDB, str(path), str(hosts)]
            if polars:
                commands[f"polars {model} {kind}"] = [py, "-c", POLARS, str(path), str(hosts)]
        if kind == "JSONL":
            commands["plain script pooled JSONL"] = [py, "-c", PLAIN, str(jsonl), "0"]
            commands["plain script per-host JSONL"] = [py, "-c", PLAIN, str(jsonl), str(fleet)]
    return commands


def measure(
    commands: dict[str, list[str]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, int], dict[str, int]]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, int] = {name: 0 for name in commands}
    answers: dict[str, int] = {}
    for argv in commands.values():  # warm-up, untimed: bytecode and numba's cache written once
        run_measured(argv)
    for round_number in range(rounds):
        # Interleaved: every command once per round, in an order shuffled each round (seeded). On this VM a
        # process that follows one that freed much memory pays for faulting it in again (freed guest pages
        # go back to the host), so a fixed order charged that to whichever command came next.
        names = list(commands)
        random.Random(round_number).shuffle(names)
        for name in names:
            argv = commands[name]
            wall, peak, out = run_measured(argv)
            times[name].append(wall)
            peaks[name] = max(peaks[name], peak)
            answers[name] = misses_of(name, out)
    return times, peaks, answers


def ratio(times: dict[str, list[float]], ours: str, theirs: str) -> str:
    """``ours`` over ``theirs``: the ratio of the medians, then the range of the ratios within each round.

    Two commands in one round ran minutes apart at most, under the same load; on this VM one command's time
    moves by up to 2x between rounds, so the within-round range says how far to trust the median's ratio."""
    mine, peer = statistics.median(times[ours]), statistics.median(times[theirs])
    per_round = [a / b for a, b in zip(times[ours], times[theirs])]
    return f"{mine / peer:.2f}x ({mine:.2f} s / {peer:.2f} s; rounds {min(per_round):.2f}-{max(per_round):.2f}x)"


def report(
    title: str,
    refs: int,
    times: dict[str, list[float]],
    peaks: dict[str, int],
    answers: dict[str, int],
) -> bool:
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"\n## {title}: {refs:,} block references, median of the rounds, whole processes")
    print("| command | median wall | peak RSS | bytes/ref | answer |")
    print("| --- | --- | --- | --- | --- |")
    for name, wall in medians.items():
        if name.removeprefix(BASELINE).startswith(START_UP):
            print(f"| {name} | {wall:.2f} s | {peaks[name] / 2**20:.0f} MiB | - | - |")
        else:
            print(
                f"| {name} | {wall:.2f} s | {peaks[name] / 2**20:.0f} MiB | {peaks[name] / refs:.0f} | {answers[name]:,} |"
            )
    same = True
    for model in ("pooled", "per-host", "curve"):
        wanted = {answers[name] for name in answers if f" {model} " in f" {name} "}
        if len(wanted) != 1:
            print(
                f"MISMATCH ({model}): {sorted((name, answers[name]) for name in answers if f' {model} ' in f' {name} ')}"
            )
            same = False
    for model in ("pooled", "per-host"):
        for kind in KINDS:
            peers = [name for name in ("duckdb", "polars") if f"{name} {model} {kind}" in medians]
            for ours in ("pyverify", BASELINE + "pyverify"):
                if f"{ours} {model} {kind}" not in medians:
                    continue
                print(
                    f"ratio {ours}/"
                    + ", ".join(
                        f"{name}: {ratio(times, f'{ours} {model} {kind}', f'{name} {model} {kind}')}"
                        for name in peers
                    )
                    + f"  [{model}, {kind}]"
                )
    for name in medians:
        if name.startswith(BASELINE):
            print(
                f"ratio new/baseline, {name.removeprefix(BASELINE)}: {ratio(times, name.removeprefix(BASELINE), name)}"
            )
    ours, theirs = (
        medians.get(f"{START_UP}: pyverify, 2 requests"),
        medians.get(f"{START_UP}: duckdb, 2 requests"),
    )
    if ours is not None and theirs is not None:
        past = []  # each tool's time past its own start-up (its run on the two-request file), set against the other's
        for model in ("pooled", "per-host"):
            mine, peer = (
                medians[f"pyverify {model} Parquet"] - ours,
                medians[f"duckdb {model} Parquet"] - theirs,
            )
            past.append(f"{model} Parquet {mine / peer:.2f}x ({mine:.3f} s / {peer:.3f} s)")
        print(
            f"start-up: import numpy, pyarrow.parquet {medians[f'{START_UP}: import numpy, pyarrow.parquet']:.3f} s, pyverify on 2 requests "
            f"{ours:.3f} s, duckdb {theirs:.3f} s; past it, pyverify/duckdb: " + ", ".join(past)
        )
    if "pyverify mrc curve" in medians:
        print(
            f"ratio mrc/simulate --capacity {CURVE_CAPACITY}: {ratio(times, 'pyverify mrc curve', 'pyverify simulate lru curve')}; "
            f"mrc/plain numba Olken pass: {ratio(times, 'pyverify mrc curve', 'plain numba Olken curve')}"
        )
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--refs", type=int, default=5_000_000)
    parser.add_argument("--big", action="store_true", help="also 20M references")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of pyverify whose commands run beside this one's, interleaved",
    )
    args = parser.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "pyverify" / "__init__.py").is_file():
        parser.error(
            f"--baseline {args.baseline}: not a checkout of pyverify (no pyverify/__init__.py)"
        )
    try:
        import polars  # noqa: F401

        polars_here = True
    except ImportError:
        polars_here = False
    sizes = [args.refs] + ([20_000_000] if args.big and args.refs != 20_000_000 else [])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f} at the start; "
        f"{args.rounds} rounds, interleaved; Polars {'included' if polars_here else 'not importable, skipped'}"
    )
    ok = True
    with tempfile.TemporaryDirectory() as scratch:
        tiny = Path(scratch) / "two_requests.parquet"
        write_tiny_parquet(tiny)
        for refs in sizes:
            files = {
                "JSONL": Path(scratch) / f"t{refs}.jsonl",
                "JSONL-other": Path(scratch) / f"t{refs}.other.jsonl",
                "Parquet": Path(scratch) / f"t{refs}.parquet",
            }
            write_jsonl(files["JSONL"], refs)
            write_jsonl(files["JSONL-other"], refs, form="other")
            write_parquet(files["Parquet"], refs)
            print(
                "\nwrote "
                + ", ".join(
                    f"{path.name} ({path.stat().st_size / 2**20:.0f} MiB)"
                    for path in files.values()
                )
            )
            olken = Path(scratch) / OLKEN.name
            shutil.copyfile(OLKEN, olken)
            commands = {
                **commands_for(files, args.fleet, polars_here),
                **curve_commands(files["Parquet"], olken),
                **start_up_commands(tiny),
            }
            times, peaks, answers = measure(with_baseline(commands, args.baseline), args.rounds)
            ok &= report("synthetic trace", refs, times, peaks, answers)
            for path in files.values():
                path.unlink()
    if CONVERSATION.is_file():
        py = sys.executable
        commands = {
            "pyverify pooled conversation": [
                py,
                "-m",
                "pyverify",
                "simulate",
                str(CONVERSATION),
                "--model",
                "pooled",
                "--json",
            ],
            "plain script pooled conversation": [py, "-c", PLAIN, str(CONVERSATION), "0"],
            "numpy script pooled conversation": [py, "-c", NUMPY_SCRIPT, str(CONVERSATION)],
        }
        times, peaks, answers = measure(with_baseline(commands, args.baseline), args.rounds)
        medians = {name: statistics.median(values) for name, values in times.items()}
        refs = json.loads(
            run(
                [py, "-m", "pyverify", "simulate", str(CONVERSATION), "--model", "pooled", "--json"]
            )[2]
        )["references"]
        print(f"\n## Mooncake conversation trace: {refs:,} block references")
        for name, wall in medians.items():
            print(
                f"| {name} | {wall:.2f} s | {peaks[name] / 2**20:.0f} MiB | {peaks[name] / refs:.0f} bytes/ref | {answers[name]:,} |"
            )
        if len(set(answers.values())) != 1:
            print(f"MISMATCH: {answers}")
            ok = False
        print(
            f"ratio pyverify/plain script, conversation trace, pooled: "
            f"{ratio(times, 'pyverify pooled conversation', 'plain script pooled conversation')}"
        )
        print(
            f"ratio pyverify/numpy script (the same parse, counted by np.unique), conversation trace, pooled: "
            f"{ratio(times, 'pyverify pooled conversation', 'numpy script pooled conversation')}"
        )
    else:
        print(
            f"\n{CONVERSATION}: absent (set PYVERIFY_MOONCAKE_TRACES); the conversation-trace ratio is skipped"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
