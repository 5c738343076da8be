"""Capacitated runs on a big trace file: the array path against the simulator, ratios measured in this run.

    python bench/capacitated_arrays.py [--refs N] [--capacity C] [--eviction E] [--budgets]

Writes bench/synthetic.py's prefix-closed trace as Mooncake JSONL (N block
references, default 20M; not timed), then runs, each in a fresh process:

1. ``pyverify simulate FILE --model pooled --capacity C --eviction E --backend numpy --json``:
   the trace read as columns and replayed by the compiled kernels
   (pyverify.commands.array_simulate);
2. the same question through the simulator: ``load_input`` (Python chains)
   and ``simulate()`` (which uses the same kernels above its size threshold),
   tallied with the same accounting.

With ``--budgets``, also ``pyverify budgets FILE --kv-model llama-3.3-70b
--eviction E --json`` (kvcache-simulator's 15 default budgets), on arrays
and on chains (the command's size threshold, 256 MiB, set to 1 byte and to
2^62 bytes, so that any ``--refs`` compares the two paths).

Printed: wall time and peak RSS of each process (parsing, routing, replay
and tally included; start-up too), their ratios, and whether both gave the
same block and token hits (the script exits 1 if not).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from trace_files import write_jsonl  # noqa: E402

SIMULATOR = r"""
import json, sys
from pyverify.inputs.load import load_input
from pyverify.sim.accounting import tally
from pyverify.sim.simulate import POOLED, simulate
from pyverify.sim.tokens import instance_token_weights
instance = load_input(sys.argv[1])
run = simulate(instance.chains, None, POOLED, capacity=int(sys.argv[2]), eviction=sys.argv[3])
measured = tally(instance.chains, run.hit_blocks, instance_token_weights(instance))
print(json.dumps({"measured": measured.to_json()}))
"""


BUDGETS = r"""
import sys
import pyverify.commands.engine_options as engine_options
engine_options.AUTO_ENGINE_BYTES = int(sys.argv[1])  # the size from which a trace file is read as arrays
from pyverify.cli import entry
sys.argv = ["pyverify", "budgets", *sys.argv[2:]]
entry()
"""


def timed(argv: list[str]) -> tuple[float, int, dict]:
    """Wall seconds, peak RSS (bytes) and the JSON printed by ``argv``, run in a fresh process."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")])
        ),
    }
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own resource usage
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"failed: {' '.join(argv)}\n{err.read()}")
        return seconds, usage.ru_maxrss * 1024, json.loads(out.read())  # Linux: ru_maxrss in KiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=20_000_000)
    parser.add_argument("--capacity", type=int, default=100_000)
    parser.add_argument("--eviction", default="leaf-lru")
    parser.add_argument(
        "--budgets", action="store_true", help="also time pyverify budgets both ways"
    )
    args = parser.parse_args()
    gib = 1024**3
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.jsonl"
        write_jsonl(path, args.refs)
        print(
            f"trace: {args.refs:,} references, {path.stat().st_size / gib:.2f} GiB of JSONL; "
            f"one pooled cache of {args.capacity:,} blocks, {args.eviction}"
        )
        sim_s, sim_rss, sim = timed(
            [sys.executable, "-c", SIMULATOR, str(path), str(args.capacity), args.eviction]
        )
        arr_s, arr_rss, arr = timed(
            [
                sys.executable,
                "-m",
                "pyverify",
                "simulate",
                str(path),
                "--model",
                "pooled",
                "--capacity",
                str(args.capacity),
                "--eviction",
                args.eviction,
                "--backend",
                "numpy",
                "--json",
            ]
        )
        if args.budgets:
            budget_args = [
                str(path),
                "--kv-model",
                "llama-3.3-70b",
                "--eviction",
                args.eviction,
                "--json",
            ]
            chains_budgets = timed(
                [sys.executable, "-c", BUDGETS, str(1 << 62), *budget_args]
            )  # no file is big
            arrays_budgets = timed(
                [sys.executable, "-c", BUDGETS, "1", *budget_args]
            )  # every file is big
    keys = ("block_hits", "block_references", "token_hits", "tokens")
    same = all(sim["measured"][key] == arr["measured"][key] for key in keys)
    print(f"  simulator (Python chains):   {sim_s:6.1f} s, peak RSS {sim_rss / gib:5.2f} GiB")
    print(f"  array path (--backend numpy): {arr_s:6.1f} s, peak RSS {arr_rss / gib:5.2f} GiB")
    print(
        f"  ratios simulator / arrays: time {sim_s / arr_s:.1f}x, peak RSS {sim_rss / arr_rss:.1f}x"
    )
    print(
        f"  block hits {arr['measured']['block_hits']:,}, token hits {arr['measured']['token_hits']:,}: "
        f"{'the same from both' if same else 'DIFFERENT'}"
    )
    if args.budgets:
        (c_s, c_rss, c_out), (a_s, a_rss, a_out) = chains_budgets, arrays_budgets
        if not a_out.get("engine") or "engine" in c_out:
            raise SystemExit("the two budgets runs did not take the two paths")
        budgets_same = a_out["points"] == c_out["points"]
        print(f"  budgets, {len(a_out['points'][args.eviction])} budgets ({args.eviction}):")
        print(f"    on chains (instance):      {c_s:6.1f} s, peak RSS {c_rss / gib:5.2f} GiB")
        print(f"    on arrays (auto):          {a_s:6.1f} s, peak RSS {a_rss / gib:5.2f} GiB")
        print(
            f"    ratios chains / arrays: time {c_s / a_s:.1f}x, peak RSS {c_rss / a_rss:.1f}x; "
            f"{'every point the same' if budgets_same else 'DIFFERENT POINTS'}"
        )
        same = same and bool(budgets_same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
