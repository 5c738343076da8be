#!/usr/bin/env python3
"""A bounded check by enumeration: MIN equals the prefix-cache optimum on every small trace.

For every tree on at most NODES nodes (parent lists: node i's parent is the
root or an earlier node) and every sequence of 1..REQUESTS requests (each the
root path of a node), and every capacity in CAPACITIES, compare Belady's MIN
on the flat sequence (pyverify.optimal.belady) with the fewest misses over
*all* runs of rules 1-4 of pyverify/certify/placement.py (dynamic programming
over resident sets; one pooled cache). Complete for that size, nothing
beyond it. tests/test_min.py runs the 4 x 4 case in CI.

Usage: python scripts/enumerate_min_check.py [--nodes 5] [--requests 4] [--capacities 1,2,3]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import lru_cache
from itertools import combinations, product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyverify.optimal.belady import min_run  # noqa: E402


def optimum(chains: tuple[tuple[int, ...], ...], capacity: int) -> int:
    @lru_cache(maxsize=None)
    def best(t: int, held: frozenset) -> int:
        if t == len(chains):
            return 0
        chain = chains[t]
        hits = 0
        while hits < len(chain) and chain[hits] in held:
            hits += 1
        pool = sorted(held | set(chain))
        return (
            len(chain)
            - hits
            + min(
                best(t + 1, frozenset(keep))
                for size in range(min(capacity, len(pool)) + 1)
                for keep in combinations(pool, size)
            )
        )

    return best(0, frozenset())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5)
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--capacities", default="1,2,3")
    args = parser.parse_args()
    capacities = [int(c) for c in args.capacities.split(",")]
    started = time.perf_counter()
    checked = 0
    for parents in product(*[range(-1, i) for i in range(args.nodes)]):
        paths = []
        for node in range(args.nodes):
            path = []
            while node != -1:
                path.append(node)
                node = parents[node]
            paths.append(tuple(reversed(path)))
        for length in range(1, args.requests + 1):
            for targets in product(range(args.nodes), repeat=length):
                chains = tuple(paths[t] for t in targets)
                for capacity in capacities:
                    mine, best = min_run(chains, None, capacity).misses, optimum(chains, capacity)
                    if mine != best:
                        print(
                            f"COUNTEREXAMPLE: chains {chains}, capacity {capacity}: MIN {mine}, optimum {best}"
                        )
                        return 1
                    checked += 1
    print(
        f"MIN = optimum on all {checked:,} cases: every trace of 1..{args.requests} requests over trees of "
        f"{args.nodes} nodes, capacities {capacities} ({time.perf_counter() - started:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
