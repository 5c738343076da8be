"""The Mooncake FAST'25 synthetic trace: pyverify's printed figures against a
recomputation from the raw JSONL with plain Python (json, sets, an
OrderedDict LRU), calling none of pyverify's simulators or routers."""

from __future__ import annotations

import hashlib
import json
import math
import random
import subprocess
import sys
from collections import OrderedDict

import pytest

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .helpers import flat_lru_misses


def flatten(chains):
    return [block for chain in chains for block in chain]


TRACE = MOONCAKE_SYNTHETIC
pytestmark = pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)

FLEET = 16
BLOCKS_PER_NODE = 3_000_000 // 512  # 5859: whole blocks only


@pytest.fixture(scope="module")
def chains():
    return [json.loads(line)["hash_ids"] for line in TRACE.read_text().splitlines() if line.strip()]


def pyverify_json(*argv):
    result = subprocess.run(
        [sys.executable, "-m", "pyverify.cli", *argv, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def distinct_pairs(chains, routing):
    return len({(host, block) for chain, host in zip(chains, routing) for block in chain})


def sha_host(text):
    return int(hashlib.sha256(text.encode()).hexdigest()[:16], 16) % FLEET


def test_readme_facts_and_pooled_hit_rate(chains):
    references = sum(map(len, chains))
    distinct = len({b for chain in chains for b in chain})
    assert (len(chains), references, distinct) == (3993, 121877, 43924)
    out = pyverify_json("simulate", str(TRACE), "--model", "pooled")
    assert out["misses"] == 43924 and out["hit_rate"] == (121877 - 43924) / 121877
    assert math.isclose(out["hit_rate"], 1 - 43924 / 121877, rel_tol=1e-15)


def test_per_host_at_16_hosts_under_static_policies(chains):
    references = sum(map(len, chains))
    rng = random.Random(0)
    expected_routing = {
        "round-robin": [i % FLEET for i in range(len(chains))],
        "random": [rng.randrange(FLEET) for _ in chains],
        "prefix-hash": [sha_host(str(chain[0])) for chain in chains],
    }
    out = pyverify_json(
        "sweep", str(TRACE), "--fleets", str(FLEET), "--routing", ",".join(expected_routing)
    )
    for policy, routing in expected_routing.items():
        row = out["by_routing"][policy][0]
        misses = distinct_pairs(chains, routing)
        assert row["per_host_misses"] == misses, policy
        assert row["per_host_hit_rate"] == (references - misses) / references
        assert row["pooled_misses"] == 43924


def plain_affinity(chains, capacity, slack=1.25):
    """The prefix-affinity rule of pyverify.sim.routing, re-implemented from its docstring:
    longest cached prefix, cap ceil(slack*(i+1)/F) requests, ties by load then id;
    per-host LRU caches of `capacity` blocks touching the whole chain."""
    caches = [OrderedDict() for _ in range(FLEET)]
    loads = [0] * FLEET
    routing, misses = [], 0
    for i, chain in enumerate(chains):
        cap = math.ceil(slack * (i + 1) / FLEET)

        def prefix(cache):
            n = 0
            while n < len(chain) and chain[n] in cache:
                n += 1
            return n

        host = min(
            (h for h in range(FLEET) if loads[h] < cap),
            key=lambda h: (-prefix(caches[h]), loads[h], h),
        )
        hit = prefix(caches[host])
        misses += len(chain) - hit
        cache = caches[host]
        for (
            block
        ) in chain:  # flat LRU touch: on a prefix-closed trace this is the longest-prefix run
            if block in cache:
                cache.move_to_end(block)
            else:
                if len(cache) >= capacity:
                    cache.popitem(last=False)
                cache[block] = None
        loads[host] += 1
        routing.append(host)
    return routing, misses


def test_local_versus_global_at_3m_tokens_per_node(chains):
    """16 nodes x 3M tokens (5859 blocks each) with prefix-affinity, against one pool of 16 x 5859 blocks."""
    references = sum(map(len, chains))
    out = pyverify_json(
        "sweep",
        str(TRACE),
        "--fleets",
        "16",
        "--routing",
        "prefix-affinity",
        "--capacity-tokens",
        "3000000",
    )
    assert out["capacity"] == BLOCKS_PER_NODE and out["pool_capacity"] == {
        "16": FLEET * BLOCKS_PER_NODE
    }
    row = out["rows"][0]
    _, local_misses = plain_affinity(chains, BLOCKS_PER_NODE)
    assert row["per_host_misses"] == local_misses
    assert row["pooled_misses"] == flat_lru_misses(flatten(chains), FLEET * BLOCKS_PER_NODE)
    assert row["per_host_hit_rate"] == (references - local_misses) / references


def test_local_versus_global_when_memory_is_tight(chains):
    """At 64 blocks (32K tokens) per node the caches evict; recompute both sides the same plain way."""
    out = pyverify_json(
        "sweep", str(TRACE), "--fleets", "16", "--routing", "prefix-affinity", "--capacity", "64"
    )
    row = out["rows"][0]
    assert row["per_host_misses"] == plain_affinity(chains, 64)[1]
    assert row["pooled_misses"] == flat_lru_misses(flatten(chains), 16 * 64)


def test_mrc_command_matches_plain_lru(chains):
    out = pyverify_json("mrc", str(TRACE), "--capacities", "100,5859,41186,41187")
    by_capacity = {p["capacity_blocks"]: p["misses"] for p in out["points"]}
    for capacity in (100, 5859):
        assert by_capacity[capacity] == flat_lru_misses(flatten(chains), capacity)
    assert (
        by_capacity[41187] == 43924 and by_capacity[41186] > 43924
    )  # the ceiling is reached exactly there
    assert out["capacity_reaching_ceiling"] == 41187
