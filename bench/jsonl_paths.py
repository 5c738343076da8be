"""What each fast Mooncake JSONL path is worth end to end: ``simulate`` with the default paths against the same
run with one path taken away.

    python bench/jsonl_paths.py [--refs 300000,1000000,5000000] [--rounds 3]

The project keeps one fast parser beside the strict one, and another only where it is worth at least 1.2x
end to end at some size. For each size (below the byte parser's 128 MiB: from there on it is the default
for both forms), the synthetic trace (bench/trace_files.py) is written in both JSONL forms (``dumps``:
json.dumps' own; ``other``: compact, another key order, an extra field), and ``pyverify simulate F
--model pooled --json`` runs as fresh processes, interleaved, in three variants:

* ``default``: the reader as it ships (pyverify/inputs/columnar/jsonl.py);
* ``no numpy parser``: without plain_parse (a json.dumps file then goes to pyarrow below the byte parser's
  size, to the byte parser from it);
* ``byte parser only``: the compiled byte parser for every size (as if the numpy parser and pyarrow were
  gone; numba's import is then paid on every file).

The variants are made by a wrapper that changes module attributes before the command runs: nothing in
pyverify knows about them. Each line gives the variant's median over the default's, with the range of
the ratios within the rounds. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_files import JSONL_FORMS, write_jsonl  # noqa: E402

#: Run ``pyverify`` with one fast path taken away (argv[1] names the variant).
WRAPPER = """
import sys
import pyverify.inputs.columnar.jsonl as jsonl
variant = sys.argv.pop(1)
if variant == "no numpy parser":
    jsonl.read_plain_mooncake = lambda data, limit: None
elif variant == "byte parser only":
    jsonl.MIN_BYTES = 0
from pyverify.cli import main
sys.exit(main(sys.argv[1:]))
"""

VARIANTS = ("default", "no numpy parser", "byte parser only")


def run(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, cwd=REPO)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--refs", default="300000,1000000,5000000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for refs in (int(value) for value in args.refs.split(",")):
            for form in JSONL_FORMS:
                path = Path(scratch) / f"t{refs}.{form}.jsonl"
                write_jsonl(path, refs, form=form)
                commands = {
                    variant: [
                        sys.executable,
                        "-c",
                        WRAPPER,
                        variant,
                        "simulate",
                        str(path),
                        "--model",
                        "pooled",
                        "--json",
                    ]
                    for variant in VARIANTS
                }
                for argv in commands.values():  # warm-up: bytecode and numba's cache
                    run(argv)
                times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
                for round_number in range(args.rounds):
                    order = list(VARIANTS)
                    random.Random(round_number).shuffle(order)
                    for variant in order:
                        times[variant].append(run(commands[variant]))
                base = times["default"]
                print(
                    f"{refs:,} references, {form} form ({path.stat().st_size / 2**20:.0f} MiB): "
                    f"default {statistics.median(base):.2f} s"
                )
                for variant in VARIANTS[1:]:
                    mine = times[variant]
                    per_round = [a / b for a, b in zip(mine, base)]
                    print(
                        f"  {variant}: {statistics.median(mine):.2f} s, "
                        f"{statistics.median(mine) / statistics.median(base):.2f}x the default "
                        f"(rounds {min(per_round):.2f}-{max(per_round):.2f}x)"
                    )
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
