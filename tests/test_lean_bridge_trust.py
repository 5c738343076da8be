"""The bridge reads the trusted definitions from the registry: it lists them
(name and SHA-256) with each theorem, refuses a registry whose printed
definitions do not hash to their recorded SHA-256, and refuses one whose
hashes are not what Lean prints for the current sources."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pyverify.errors import CheckFailed
from pyverify.lean import runner
from pyverify.lean.bridge import check_registry_against_lean, load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "lean" / "theorems.json"


@pytest.fixture(scope="module")
def lean_result():
    return runner.check(REPO / "lean", backend="wheel", emit=lambda line: None)


def test_every_theorem_carries_its_trusted_definitions(lean_result) -> None:
    registry = load_registry(REGISTRY)
    check_registry_against_lean(registry, REGISTRY, lean_result)
    pooled = dict(registry["pooled_misses_eq_distinct"].definitions)
    # the statement's own definitions and, transitively, the core they rest on
    for name in (
        "pooled_misses",
        "distinct_count",
        "cache_misses",
        "count_distinct",
        "absent",
        "List.elem",
        "Natural.eqb",
        "cond",
        "Bool",
        "Natural",
        "List",
        "Eq",
    ):
        assert name in pooled, name
    demand = dict(registry["demand_misses_ge_distinct"].definitions)
    assert {"demand_valid", "demand_valid_after", "subset", "demand_misses", "Natural.le"} <= set(
        demand
    )
    # nothing the statement does not use
    assert "per_host_walk" not in pooled and "prefix_hits" not in pooled
    assert registry["demand_misses_ge_distinct"].applies == "demand_misses_ge_distinct_applies"


def test_a_printed_definition_edited_in_the_registry_is_refused(tmp_path) -> None:
    data = json.loads(REGISTRY.read_text(encoding="utf-8"))
    entry = next(d for d in data["definitions"] if d["name"] == "demand_valid_after")
    entry["printed"] = entry["printed"].replace("True", "False")
    path = tmp_path / "theorems.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        CheckFailed, match=r"definitions\[\d+\] \(demand_valid_after\): sha256 does not match"
    ):
        load_registry(path)


def test_a_definition_and_its_hash_both_edited_is_refused(tmp_path, lean_result) -> None:
    """Consistent inside the file, but not what Lean prints for the sources."""
    data = json.loads(REGISTRY.read_text(encoding="utf-8"))
    entry = next(d for d in data["definitions"] if d["name"] == "distinct_count")
    entry["printed"] += " "
    entry["sha256"] = hashlib.sha256(entry["printed"].encode("utf-8")).hexdigest()
    for theorem in data["theorems"]:
        if "distinct_count" in theorem["definitions"]:
            theorem["definitions"]["distinct_count"] = entry["sha256"]
    path = tmp_path / "theorems.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    registry = load_registry(path)
    with pytest.raises(
        CheckFailed,
        match="trusted definitions differ from the replayed environment of the current sources: distinct_count",
    ):
        check_registry_against_lean(registry, path, lean_result)


def test_a_theorem_pointing_at_another_hash_is_refused(tmp_path) -> None:
    data = json.loads(REGISTRY.read_text(encoding="utf-8"))
    data["theorems"][0]["definitions"]["Bool"] = "0" * 64
    path = tmp_path / "theorems.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        CheckFailed, match="trusted definition Bool: its SHA-256 is not the one recorded"
    ):
        load_registry(path)


# --- capacitated certificates: the flat lower bound ------------------------------------

from functools import lru_cache as memoize  # noqa: E402
from itertools import combinations  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pyverify.lean.bridge import capacitated_bound, flat_min_misses, link_certificate  # noqa: E402
from pyverify.inputs.model import Instance, load_instance  # noqa: E402
from pyverify.sim.simulate import POOLED, simulate  # noqa: E402


def fewest_flat_misses(blocks: tuple[int, ...], capacity: int) -> int:
    """By exhaustion: the fewest misses of any flat demand cache (any evictions,
    bypass allowed), the runs `flat_valid` admits."""

    @memoize(maxsize=None)
    def best(i: int, held: frozenset) -> int:
        if i == len(blocks):
            return 0
        miss = 0 if blocks[i] in held else 1
        pool = sorted(held | {blocks[i]})
        return miss + min(
            best(i + 1, frozenset(keep))
            for k in range(min(capacity, len(pool)) + 1)
            for keep in combinations(pool, k)
        )

    return best(0, frozenset())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=9), st.integers(1, 3))
def test_bridges_min_is_the_fewest_flat_misses(blocks, capacity):
    assert flat_min_misses(blocks, capacity) == fewest_flat_misses(tuple(blocks), capacity)


@given(
    st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=4), max_size=10), st.integers(1, 4)
)
def test_flat_min_bounds_capacitated_lru(chains, capacity):
    """prefix_run_is_flat_run with MIN: the LRU prefix cache misses at least MIN's flat misses."""
    flat = [b for chain in chains for b in chain]
    assert (
        flat_min_misses(flat, capacity) <= simulate(chains, None, POOLED, capacity=capacity).misses
    )


def test_the_greedy_gap_certificate_meets_the_flat_bound():
    cert = REPO / "proofs" / "greedy-gap-30.pooled-c4.json"
    entry = link_certificate(
        cert, REPO / "instances" / "greedy-gap-30.json", load_registry(REGISTRY)
    )
    bound = entry.link.bound
    assert bound is not None and bound.theorem == "prefix_run_is_flat_run" and bound.capacity == 4
    assert bound.flat_min == 24 and bound.objective == 24 and bound.holds
    assert [t.name for t in entry.theorems][-2:] == ["prefix_run_is_flat_run", "min_misses_le"]
    bound_json = entry.link_json()["lower_bound"]
    assert bound_json["cited"] is None  # Belady's theorem is in the registry, kernel-checked
    assert (
        "min_misses_le" in bound_json["machine_checked"]
        and "flat_min_misses" in bound_json["counted_here"]
    )


def test_a_bound_below_min_would_be_refused_and_uncapacitated_has_none():
    instance = load_instance(REPO / "instances" / "greedy-gap-30.json")
    registry = load_registry(REGISTRY)
    cert = {
        "cache_model": {
            "model": "pooled",
            "capacity": 4,
            "eviction": "offline-optimal",
            "warm_start": False,
        },
        "objective": 23,
    }
    assert not capacitated_bound(cert, instance, registry).holds
    cert["cache_model"]["capacity"] = None
    assert capacitated_bound(cert, instance, registry) is None


def test_the_bound_is_per_cache(tmp_path):
    """Per-host: one MIN per host, on its own chains; pooled: one MIN on all."""
    path = tmp_path / "two.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "two",
                "hosts": 2,
                "requests": [
                    {"blocks": [b], "host": h} for b, h in ((1, 0), (2, 1), (1, 0), (2, 1))
                ],
            }
        )
    )
    instance, registry = load_instance(path), load_registry(REGISTRY)
    model = {"capacity": 1, "eviction": "offline-optimal", "warm_start": False}
    per_host = capacitated_bound(
        {"cache_model": {"model": "per-host", **model}, "objective": 2}, instance, registry
    )
    pooled = capacitated_bound(
        {"cache_model": {"model": "pooled", **model}, "objective": 3}, instance, registry
    )
    assert (per_host.flat_min, pooled.flat_min) == (
        2,
        3,
    )  # [1, 1] and [2, 2]: 1 each; [1, 2, 1, 2]: 3
    assert per_host.holds and pooled.holds
    # Per host, the sum over hosts 0..1 is fleet_misses_ge_per_host_min's (its routing hypothesis holds here).
    assert per_host.theorems == [
        "prefix_run_is_flat_run",
        "min_misses_le",
        "fleet_misses_ge_per_host_min",
    ]
    assert (
        per_host.fleet == 2
        and "fleet_misses_ge_per_host_min" in per_host.to_json()["machine_checked"]
    )
    assert pooled.theorems == ["prefix_run_is_flat_run", "min_misses_le"]
    # Round-robin over 3 hosts: the caches the checker reads (t mod 3), not the instance's routing.
    robin = capacitated_bound(
        {
            "cache_model": {"model": "per-host", "routing": "round-robin", "hosts": 3, **model},
            "objective": 4,
        },
        instance,
        registry,
    )
    assert (
        robin.flat_min == 4 and robin.fleet == 3
    )  # [1, 2] on host 0 (2 misses), [2] and [1] on hosts 1 and 2
    # Without min_misses_le (or without the per-host theorem) the per-host theorem is not cited.
    partial = {name: theorem for name, theorem in registry.items() if name != "min_misses_le"}
    bare = capacitated_bound(
        {"cache_model": {"model": "per-host", **model}, "objective": 2}, instance, partial
    )
    assert bare.theorems == ["prefix_run_is_flat_run"] and bare.per_host_theorem is None


def test_a_per_host_capacitated_certificate_links_to_the_per_host_theorem(tmp_path):
    """End to end: a verified per-host certificate with 2 blocks per host on the
    routed tree of lean/PrefixPool/Examples.lean (`routed_tree`): MIN per host
    sums to 5, the objective; the bridge cites the per-host theorem."""
    from pyverify.certify.certificate import certify, write_certificate

    path = tmp_path / "tree.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "tree",
                "hosts": 2,
                "requests": [
                    {"blocks": c, "host": h} for c, h in (([1, 2], 0), ([1, 3], 1), ([1, 2, 4], 0))
                ],
            }
        )
    )
    done = certify(
        load_instance(path), "per-host", 2, 30.0, [], use_z3=False, instance_path=str(path)
    )
    write_certificate(done.certificate, tmp_path / "tree.per-host-c2.json", path)
    entry = link_certificate(tmp_path / "tree.per-host-c2.json", path, load_registry(REGISTRY))
    bound = entry.link.bound
    assert bound is not None and bound.flat_min == 5 == entry.certificate_data["objective"]
    assert [t.name for t in entry.theorems][-3:] == [
        "prefix_run_is_flat_run",
        "min_misses_le",
        "fleet_misses_ge_per_host_min",
    ]
    assert "hosts 0..1" in entry.link_json()["lower_bound"]["machine_checked"]


def test_without_belady_in_the_registry_the_bound_cites_it():
    from pyverify.lean.bridge import CITED_MIN, Bound

    bound = Bound("prefix_run_is_flat_run", 4, 24, 24)
    assert bound.theorems == ["prefix_run_is_flat_run"] and bound.to_json()["cited"] == CITED_MIN


def test_round_robin_per_host_certificates_are_read_as_the_checker_reads_them(tmp_path):
    """A per-host certificate with round-robin routing (request t on host t mod
    hosts) is related to the theorems on those caches, not on the instance's own
    routing: uncapacitated, the distinct (host, block) pairs of the round-robin
    hosts; with 2 blocks per host, MIN summed over them."""
    from pyverify.certify.certificate import certify, write_certificate

    path = tmp_path / "one.json"
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "one",
                "hosts": 1,
                "requests": [{"blocks": c, "host": 0} for c in ([1, 2], [1, 3], [1, 2, 4], [1])],
            }
        )
    )
    registry = load_registry(REGISTRY)
    for capacity, objective in ((None, 5), (2, 5)):
        done = certify(
            load_instance(path),
            "per-host",
            capacity,
            30.0,
            [],
            use_z3=False,
            instance_path=str(path),
            routing="round-robin",
            hosts=2,
        )
        cert = tmp_path / f"one.rr-{capacity}.json"
        write_certificate(done.certificate, cert, path)
        entry = link_certificate(cert, path, registry)
        assert entry.certificate_data["objective"] == objective
        hosts = next(h for h in entry.link.hypotheses if h.text.startswith("hosts numbered"))
        assert hosts.text == "hosts numbered 0..1, round-robin" and hosts.holds
        if capacity is None:
            # host 0 reads [1, 2], [1, 2, 4]; host 1 reads [1, 3], [1]: pairs 3 + 2
            assert entry.link.covered and entry.link.predicted == 5 and entry.link.agrees
        else:
            assert entry.link.bound.flat_min == 5 and entry.link.bound.fleet == 2


def min_by_its_definition(blocks: list[int], capacity: int) -> int:
    """Bypass MIN exactly as stated, for a test oracle: on a miss, of the held blocks
    and the requested one keep the ``capacity`` used soonest (never again: dropped).
    A scan of the held blocks per miss, so O(misses x capacity): the bridge's count
    was this loop until it took a minute at C = 4096; it now uses the checker's heap."""
    never = len(blocks)
    following = [never] * len(blocks)
    last: dict[int, int] = {}
    for i in range(len(blocks) - 1, -1, -1):
        following[i] = last.get(blocks[i], never)
        last[blocks[i]] = i
    held: dict[int, int] = {}
    misses = 0
    for i, block in enumerate(blocks):
        misses += block not in held
        held[block] = following[i]
        if len(held) > capacity:
            del held[max(held, key=lambda b: (held[b], b))]
    return misses


@pytest.mark.parametrize("model", ["pooled", "per-host"])
def test_the_bridges_bound_on_a_moderate_trace_is_mins_count(model):
    """On a 30,000-reference prefix-closed trace with 4 hosts, the bridge's lower bound
    is MIN by its definition (per host: summed over the hosts' own sequences) and the
    searcher's count (pyverify.optimal.belady), at three capacities."""
    import random

    from pyverify.optimal.belady import min_misses as searchers_min

    rng = random.Random(26)
    prompts = [[1000 * p + j for j in range(rng.randint(2, 30))] for p in range(300)]
    chains, routing, fresh = [], [], 10**6
    while sum(map(len, chains)) < 30_000:
        prompt = prompts[min(int(rng.paretovariate(1.1)) - 1, len(prompts) - 1)]
        suffix = list(range(fresh, fresh + rng.randint(0, 4)))
        fresh += len(suffix)
        chains.append(tuple(prompt[: rng.randint(1, len(prompt))] + suffix))
        routing.append(rng.randrange(4))
    instance = Instance(name="moderate", fleet_size=4, chains=tuple(chains), routing=tuple(routing))
    caches = list(routing) if model == "per-host" else [0] * len(chains)
    registry = load_registry(REGISTRY)
    for capacity in (16, 256, 2048):
        cert = {
            "cache_model": {
                "model": model,
                "capacity": capacity,
                "eviction": "offline-optimal",
                "warm_start": False,
                "routing": "given",
            },
            "objective": 0,
        }
        bound = capacitated_bound(cert, instance, registry)
        by_definition = sum(
            min_by_its_definition(
                [b for c, q in zip(chains, caches) if q == host for b in c], capacity
            )
            for host in set(caches)
        )
        assert bound.flat_min == by_definition == searchers_min(chains, caches, capacity), capacity
