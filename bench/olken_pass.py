"""A plain numba pass of Olken's marking (a Fenwick tree over positions): the exact LRU curve's baseline.

    python bench/olken_pass.py TRACE.parquet CAPACITY     prints the misses at CAPACITY (cold + distances >= it)

Self-contained (numpy, numba and pyarrow, no pyverify), so that as a program its start-up is a plain
script's. bench/end_to_end.py runs a copy of this file in its scratch folder (numba caches the machine code
beside the copy, not in the checkout); bench/curves.py compiles :func:`olken_distances` into pyverify's own
numba cache folder and times the call alone.
"""

import sys

import numpy as np


def olken_distances(ids, universe):
    """Every reference's LRU stack distance (-1 for a first one), ``ids`` dense in ``0..universe-1``; compile with numba."""
    n = ids.size
    tree = np.zeros(n + 1, np.int32)
    last = np.full(universe, -1, np.int64)
    distances = np.empty(n, np.int64)
    for t in range(n):
        block = ids[t]
        p = last[block]
        if p < 0:
            distances[t] = -1
        else:
            marks = 0  # marks at positions < t, minus marks at positions <= p
            i = t
            while i > 0:
                marks += tree[i]
                i -= i & -i
            i = p + 1
            while i > 0:
                marks -= tree[i]
                i -= i & -i
            distances[t] = marks
            i = p + 1
            while i <= n:
                tree[i] -= 1
                i += i & -i
        i = t + 1
        while i <= n:
            tree[i] += 1
            i += i & -i
        last[block] = t
    return distances


def main() -> None:
    import pyarrow.parquet as pq
    from numba import njit

    path, capacity = sys.argv[1], int(sys.argv[2])
    ids = (
        pq.read_table(path, columns=["hash_ids"])
        .column("hash_ids")
        .combine_chunks()
        .values.to_numpy()
    )
    d = njit(cache=True)(olken_distances)(ids, int(ids.max()) + 1)
    print(int(np.count_nonzero(d < 0) + np.count_nonzero(d >= capacity)))


if __name__ == "__main__":
    main()
