#!/usr/bin/env python3
"""Build instances/lab-512x32x16.json, the reconstruction of the lab's instance.

The lab did not publish its file, only its figures: 512 requests over 32
distinct prompt openings on 16 hosts, no cache limit; pooled hit rate 0.9375
at every fleet size; per-host hit rate 0.875 on the smallest fleet (2 hosts)
and 0.3398 (174 hits of 512, so 338 misses) on 16 hosts. This script builds
an instance with exactly those figures, deterministically:

1. Popularity. Opening i (i = 0..31) gets n_i requests: 2 each, plus 448
   shared out in proportion to a Zipf weight 1/(i+1)^s (largest-remainder
   rounding). s is the smallest value on a 0.001 grid for which the 16-host
   per-host misses come to 338 (it is 0.932).
2. Order. The 512 requests are shuffled with a fixed seed.
3. Routing. The j-th request (in arrival order) for opening i goes to host
   (7*i + j) mod 16: consecutive hosts, so opening i is seen by min(n_i, 16)
   hosts, and after folding to F hosts (h -> h mod F) by min(n_i, F).

Per-host misses at F hosts are then sum_i min(n_i, F): 64 at F=2 (every
n_i >= 2), 338 at F=16; pooled misses are 32 (one per opening) at every F.
The script checks these with its own arithmetic before writing.

Usage: python scripts/make_lab_instance.py [OUTPUT]   (default: instances/lab-512x32x16.json)
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OPENINGS = 32
REQUESTS = 512
HOSTS = 16
FLOOR = 2  # every opening is requested at least twice, so both hosts of a 2-host fleet see it
SHUFFLE_SEED = 20240706
TARGET_PER_HOST_MISSES_16 = 338  # 512 - 174 hits: hit rate 0.3398


def popularity(exponent: float) -> list[int]:
    weights = [1 / (i + 1) ** exponent for i in range(OPENINGS)]
    spare = REQUESTS - FLOOR * OPENINGS
    raw = [spare * w / sum(weights) for w in weights]
    counts = [int(r) for r in raw]
    by_remainder = sorted(range(OPENINGS), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in by_remainder[: spare - sum(counts)]:
        counts[i] += 1
    return [FLOOR + c for c in counts]


def per_host_misses(counts: list[int], fleet: int) -> int:
    return sum(min(n, fleet) for n in counts)


def choose_exponent() -> tuple[float, list[int]]:
    for step in range(0, 3000):
        exponent = step / 1000
        counts = popularity(exponent)
        if per_host_misses(counts, HOSTS) == TARGET_PER_HOST_MISSES_16:
            return exponent, counts
    raise SystemExit("no Zipf exponent on the grid reproduces the published figures")


def build() -> dict:
    exponent, counts = choose_exponent()
    order = [opening for opening, n in enumerate(counts) for _ in range(n)]
    random.Random(SHUFFLE_SEED).shuffle(order)
    seen = [0] * OPENINGS
    requests = []
    for opening in order:
        host = (7 * opening + seen[opening]) % HOSTS
        seen[opening] += 1
        requests.append({"blocks": [opening], "host": host})

    # The published figures, checked by direct counting before anything is written.
    assert len(requests) == REQUESTS and len(set(order)) == OPENINGS
    for fleet in (2, 4, 8, 16):
        pairs = {(r["host"] % fleet, r["blocks"][0]) for r in requests}
        assert len(pairs) == per_host_misses(counts, fleet)
    assert per_host_misses(counts, 2) == 64  # hit rate 448/512 = 0.875
    assert per_host_misses(counts, 16) == 338  # hit rate 174/512 = 0.3398

    return {
        "format": "pyverify.instance/1",
        "name": "lab-512x32x16",
        "description": (
            "A reconstruction of the lab's fixed test instance from its published figures "
            "(512 requests, 32 distinct prompt openings, 16 hosts, uncapacitated): pooled hit rate "
            "0.9375 at every fleet size, per-host 0.875 at 2 hosts and 0.3398 at 16 hosts. "
            "It is not the lab's own file, which was not published. "
            f"Opening popularity is Zipf-like (exponent {exponent}); each opening's requests go to "
            "consecutive hosts; built by scripts/make_lab_instance.py."
        ),
        "source": "scripts/make_lab_instance.py",
        "hosts": HOSTS,
        "requests": requests,
    }


def render(instance: dict) -> str:
    """One request per line: readable in a diff, stable byte for byte."""
    head = {key: value for key, value in instance.items() if key != "requests"}
    lines = json.dumps(head, indent=2)[:-2] + ',\n  "requests": [\n'
    lines += ",\n".join(
        "    " + json.dumps(r, separators=(", ", ": ")) for r in instance["requests"]
    )
    return lines + "\n  ]\n}\n"


def main() -> None:
    target = Path(
        sys.argv[1]
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "instances" / "lab-512x32x16.json"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(render(build()), encoding="utf-8")
    tmp.replace(target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
