#!/usr/bin/env python3
"""Build instances/greedy-gap-30.json: a small capacitated case where greedy falls short.

Two system prompts (blocks 10 and 20), each followed by one of two documents
(chains [10, 11], [10, 12], [20, 21], [20, 22]), a third one-block opening
[30], and a one-off opening (100, 101, ...) that is never asked for again.
Five rounds of

    [10, 11], [20, 21], [10, 12], [20, 22], [30], [one-off]

make 30 requests and 50 block references over 12 distinct blocks; request t
goes to host t mod 2 (routing is given, so per-host runs are defined too).

With one pooled cache of 4 blocks, the hot working set (7 blocks) does not
fit. LRU thrashes on the cycle; keeping the most frequently requested blocks
keeps the wrong ones for the prefix structure (a document block is useless
without its system prompt); the offline optimum keeps a well-chosen subset
(and never caches the one-off openings). The certificate in
proofs/greedy-gap-30.pooled-c4.json records the numbers: the optimum is
certified by CP-SAT and Z3, the greedy runs are replayed by the checker.

Usage: python scripts/make_greedy_gap_instance.py [OUTPUT]   (default: instances/greedy-gap-30.json)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyverify.fileio import write_text_atomic  # noqa: E402

HOT = [[10, 11], [20, 21], [10, 12], [20, 22], [30]]
ROUNDS = 5


def build() -> dict:
    chains = []
    one_off = 100
    for _ in range(ROUNDS):
        chains.extend(HOT)
        chains.append([one_off])
        one_off += 1
    return {
        "format": "pyverify.instance/1",
        "name": "greedy-gap-30",
        "description": (
            "A small capacitated instance on which greedy placement misses strictly more than the offline "
            "optimum: 5 rounds of two system prompts with two documents each, a third opening and a one-off "
            "opening; 30 requests, 50 block references, 12 distinct blocks; certify it with --capacity 4. "
            "Built by scripts/make_greedy_gap_instance.py."
        ),
        "source": "scripts/make_greedy_gap_instance.py",
        "hosts": 2,
        "requests": [{"blocks": chain, "host": t % 2} for t, chain in enumerate(chains)],
    }


def render(data: dict) -> str:
    """One request per line, like instances/lab-512x32x16.json."""
    import json

    head = {key: value for key, value in data.items() if key != "requests"}
    lines = ["{"] + [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    lines.append('  "requests": [')
    requests = [json.dumps(request, separators=(", ", ": ")) for request in data["requests"]]
    lines.append(",\n".join(f"    {request}" for request in requests))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    target = Path(argv[1]) if len(argv) > 1 else ROOT / "instances" / "greedy-gap-30.json"
    write_text_atomic(target, render(build()))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
