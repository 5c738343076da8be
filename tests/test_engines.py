"""The engines agree exactly: numpy, DuckDB and Dask (a real two-worker LocalCluster)
against pyverify's own simulator and routing, trace by trace, policy by policy."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

pytest.importorskip("pyarrow")
duckdb_module = pytest.importorskip("duckdb")
distributed = pytest.importorskip("distributed")

from pyverify.cost.reuse import reuse_report  # noqa: E402
from pyverify.engines import dask as dask_engine  # noqa: E402
from pyverify.engines import duckdb as duckdb_engine  # noqa: E402
from pyverify.engines import numpy_engine  # noqa: E402
from pyverify.engines.routing import ONE_MACHINE, random_hosts, static_hosts  # noqa: E402
from pyverify.errors import UserError  # noqa: E402
from pyverify.inputs.columnar import ColumnarTrace, write_parquet  # noqa: E402
from pyverify.inputs.model import Instance  # noqa: E402
from pyverify.inputs.mooncake import import_mooncake  # noqa: E402
from pyverify.sim.mrc import lru_curve  # noqa: E402
from pyverify.sim.routing import RoutingOptions, route  # noqa: E402
from pyverify.sim.simulate import PER_HOST, POOLED, simulate  # noqa: E402
from tests.conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE  # noqa: E402
from tests.helpers import assert_one_line_error, run_cli  # noqa: E402
from tests.test_columnar import random_chains  # noqa: E402

MOONCAKE = MOONCAKE_SYNTHETIC
POLICIES = ("round-robin", "random", "prefix-hash", "route-key", "given", "fold")


@pytest.fixture(scope="module")
def cluster():
    """A real dask.distributed cluster: two worker processes, one thread each."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as local:
        yield local.scheduler_address


def routed_instance(seed: int) -> Instance:
    """Random prefix-closed chains with a given routing over 6 hosts and a route key per request."""
    chains = random_chains(seed, 400)
    rng = random.Random(seed)
    routing = tuple(rng.randrange(6) for _ in chains)
    extra = tuple({"route_key": f"user-{rng.randrange(40)}"} for _ in chains)
    return Instance(
        name=f"r{seed}",
        fleet_size=6,
        chains=tuple(tuple(c) for c in chains),
        routing=routing,
        extra=extra,
    )


def instances():
    found = [routed_instance(seed) for seed in (1, 2)]
    if MOONCAKE.exists():
        found.append(import_mooncake(MOONCAKE))
    return found


def expected(instance: Instance, fleet: int, policy: str | None, seed: int):
    """What pyverify's simulator says: pooled misses, per-host misses, the reuse report."""
    pooled = simulate(instance.chains, None, POOLED).misses
    if policy is None:
        return pooled, None, None
    routing = route(instance, fleet, policy, RoutingOptions(seed=seed))
    per_host = simulate(instance.chains, routing, PER_HOST).misses
    return pooled, per_host, reuse_report(instance.chains, routing, fleet).to_json()


def cases():
    for instance in instances():
        has_routing = instance.routing is not None
        for policy in (None,) + POLICIES:
            if not has_routing and policy in ("route-key", "given", "fold"):
                continue
            fleet = instance.fleet_size if policy == "given" else (4 if policy == "fold" else 8)
            yield instance, fleet, policy


CASES = list(cases())


def case_id(case):
    instance, fleet, policy = case
    return f"{instance.name}-{policy or 'pooled'}-{fleet}"


@pytest.fixture(scope="module")
def parquet_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("engines")
    paths = {}
    for instance in instances():
        path = folder / f"{instance.name}.parquet"
        write_parquet(ColumnarTrace.from_instance(instance), path)
        paths[instance.name] = path
    return paths


def check(counts, instance, fleet, policy, seed):
    pooled, per_host, report = expected(instance, fleet, policy, seed)
    assert counts.references == instance.n_references
    assert counts.pooled_misses == pooled
    if policy is not None:
        assert counts.per_host_misses == per_host
        assert counts.reuse_report().to_json() == report


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_numpy_engine_equals_the_simulator(case):
    instance, fleet, policy = case
    trace = ColumnarTrace.from_instance(instance)
    hosts = None if policy is None else static_hosts(trace, fleet, policy, seed=5)
    check(numpy_engine.count(trace, hosts, fleet), instance, fleet, policy, 5)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_duckdb_engine_equals_the_simulator_on_parquet_and_in_memory(case, parquet_files):
    instance, fleet, policy = case
    check(
        duckdb_engine.count(parquet_files[instance.name], fleet, policy, seed=5),
        instance,
        fleet,
        policy,
        5,
    )
    check(
        duckdb_engine.count(ColumnarTrace.from_instance(instance), fleet, policy, seed=5),
        instance,
        fleet,
        policy,
        5,
    )


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_dask_engine_equals_the_simulator_on_two_workers(case, parquet_files, cluster, monkeypatch):
    instance, fleet, policy = case
    check(
        dask_engine.count(parquet_files[instance.name], fleet, policy, seed=5, scheduler=cluster),
        instance,
        fleet,
        policy,
        5,
    )
    monkeypatch.setattr(
        dask_engine, "PIECE_REQUESTS", 97
    )  # many pieces: buckets gather ids from several workers
    check(
        dask_engine.count(
            ColumnarTrace.from_instance(instance), fleet, policy, seed=5, scheduler=cluster
        ),
        instance,
        fleet,
        policy,
        5,
    )


@pytest.mark.parametrize("policy", ["round-robin", "random", "prefix-hash"])
def test_dask_per_host_lru_curves_equal_the_one_machine_curve(
    policy, parquet_files, cluster, monkeypatch
):
    instance = instances()[-1]
    monkeypatch.setattr(dask_engine, "PIECE_REQUESTS", 500)
    for source in (parquet_files[instance.name], ColumnarTrace.from_instance(instance)):
        curve = dask_engine.lru_curves(source, 8, policy, seed=5, scheduler=cluster)
        exact = lru_curve(instance.chains, route(instance, 8, policy, RoutingOptions(seed=5)), 8)
        assert (curve.references, curve.cold, curve.caches) == (
            exact.references,
            exact.cold,
            exact.caches,
        )
        assert np.array_equal(curve.histogram, exact.histogram)


@pytest.mark.parametrize("seed", [0, 1, 7, 2**40 + 3, -5])
@pytest.mark.parametrize("fleet", [1, 2, 3, 16, 17, 1000])
def test_vectorised_random_routing_is_pythons(seed, fleet):
    rng = random.Random(seed)
    assert random_hosts(3000, fleet, seed).tolist() == [rng.randrange(fleet) for _ in range(3000)]


def test_prefix_affinity_says_it_runs_on_one_machine(tmp_path, capsys, cluster):
    with pytest.raises(UserError, match="runs on one machine only"):
        dask_engine.count(
            ColumnarTrace.from_instance(routed_instance(1)), 4, "prefix-affinity", scheduler=cluster
        )
    with pytest.raises(UserError, match="runs on one machine only"):
        duckdb_engine.count(ColumnarTrace.from_instance(routed_instance(1)), 4, "prefix-affinity")
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"hash_ids": c}) + "\n" for c in random_chains(2, 30)))
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(path),
        "--model",
        "per-host",
        "--fleet",
        "4",
        "--routing",
        "prefix-affinity",
        "--backend",
        "duckdb",
    )
    assert_one_line_error(status, out, err, path, ONE_MACHINE)


def bad_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "bad.parquet"
    pq.write_table(
        pa.table({"hash_ids": pa.array([[0, 1], [0, 2], [5, 1]], type=pa.list_(pa.int64()))}), path
    )
    return path


def test_engines_refuse_a_bad_trace_with_the_numpy_paths_words(tmp_path, capsys, cluster):
    path = bad_parquet(tmp_path)
    said = set()
    for engine in ("numpy", "duckdb", "dask"):
        extra = ["--scheduler", cluster] if engine == "dask" else []
        status, out, err = run_cli(
            capsys,
            "simulate",
            str(path),
            "--model",
            "per-host",
            "--fleet",
            "2",
            "--routing",
            "round-robin",
            "--backend",
            engine,
            *extra,
        )
        assert_one_line_error(
            status, out, err, path, "row 3.hash_ids[1]: not prefix-closed: block 1 follows block 5"
        )
        said.add(err)
    assert len(said) == 1


@pytest.mark.skipif(not MOONCAKE.exists(), reason=NO_MOONCAKE)
def test_simulate_cli_agrees_across_engines(tmp_path, capsys, cluster):
    parquet = tmp_path / "mc.parquet"
    assert run_cli(capsys, "trace", "import", str(MOONCAKE), "-o", str(parquet))[0] == 0
    outputs = []
    for source in (MOONCAKE, parquet):
        for engine, extra in (("numpy", []), ("duckdb", []), ("dask", ["--scheduler", cluster])):
            for model in (
                ["--model", "pooled"],
                ["--model", "per-host", "--fleet", "16", "--routing", "random", "--seed", "3"],
            ):
                status, out, err = run_cli(
                    capsys, "simulate", str(source), *model, "--backend", engine, *extra, "--json"
                )
                assert status == 0, err
                data = json.loads(out)
                assert data["backend"] == engine
                outputs.append((model[1], data["references"], data["misses"]))
    # The simulator itself (no engine: capacity-free runs of the instance file).
    instance_file = tmp_path / "mc.json"
    assert run_cli(capsys, "trace", "import", str(MOONCAKE), "-o", str(instance_file))[0] == 0
    for model in (
        ["--model", "pooled"],
        ["--model", "per-host", "--fleet", "16", "--routing", "random", "--seed", "3"],
    ):
        status, out, _ = run_cli(capsys, "simulate", str(instance_file), *model, "--json")
        data = json.loads(out)
        assert "backend" not in data
        outputs.append((model[1], data["references"], data["misses"]))
    assert len(set(outputs)) == 2, outputs


def test_auto_reads_every_trace_file_as_arrays_and_big_parquet_by_duckdb(
    tmp_path, capsys, monkeypatch, parquet_files
):
    import pyverify.engines
    from pyverify.commands import basic

    path = parquet_files["r1"]
    status, out, _ = run_cli(
        capsys, "simulate", str(path), "--model", "pooled", "--json", "--backend", "python"
    )
    oracle = json.loads(out)
    monkeypatch.setattr(
        basic, "simulate_in_python", None
    )  # whatever the size: the array path, the same report
    status, out, _ = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0 and json.loads(out) == oracle and "backend" not in oracle
    monkeypatch.setattr(pyverify.engines, "AUTO_DUCKDB_BYTES", 1)  # where choose reads it
    status, out, _ = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0 and json.loads(out)["backend"] == "duckdb"


def test_a_missing_extra_is_one_line_saying_how_to_get_it(
    tmp_path, capsys, monkeypatch, parquet_files
):
    monkeypatch.setitem(__import__("sys").modules, "duckdb", None)  # as if not installed
    status, out, err = run_cli(
        capsys, "simulate", str(parquet_files["r1"]), "--model", "pooled", "--backend", "duckdb"
    )
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        "pyverify simulate: error: duckdb is needed for this; install the scale extra: pip install 'pyverify[scale]'"
    ]


def test_a_trace_without_hosts_is_routed_round_robin_by_default(tmp_path, capsys):
    instance = routed_instance(2)
    unrouted = Instance(name="u", fleet_size=1, chains=instance.chains)
    path = tmp_path / "u.parquet"
    write_parquet(ColumnarTrace.from_instance(unrouted), path)
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(path),
        "--model",
        "per-host",
        "--fleet",
        "16",
        "--backend",
        "duckdb",
        "--json",
    )
    assert status == 0, err
    data = json.loads(out)
    routing = route(unrouted, 16, "round-robin")
    assert data["routing"] == "round-robin"
    assert data["misses"] == simulate(unrouted.chains, routing, PER_HOST).misses


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_a_dask_worker_reads_its_row_group_in_batches_as_written(tmp_path, monkeypatch, batch):
    """A worker's piece (a path and a row group) is decoded a few rows at a time into one array: each group's
    ids, offsets, hosts and route keys are the slices of the trace written, whatever the batch size; a bad id
    is a ValueError the client then names with the in-memory reader."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import pyverify.inputs.columnar.tables as tables

    monkeypatch.setattr(tables, "BATCH_ROWS", batch)
    chains = random_chains(8, 60)
    lengths = np.array([len(chain) for chain in chains])
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    hosts = np.arange(len(chains)) % 5
    keys = [f"user-{i % 7}" for i in range(len(chains))]
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {
                "hash_ids": pa.array(chains, type=pa.list_(pa.int64())),
                "host": pa.array(hosts),
                "route_key": pa.array(keys),
            }
        ),
        path,
        row_group_size=11,
    )
    groups = pq.ParquetFile(path).metadata.num_row_groups
    assert groups == 6
    for group in range(groups):
        first, last = 11 * group, min(11 * group + 11, len(chains))
        data = dask_engine._load((str(path), group))
        want = np.concatenate([np.array(chain) for chain in chains[first:last]])
        assert data["ids"].dtype == np.int64 and np.array_equal(data["ids"], want)
        assert np.array_equal(data["offsets"], offsets[first : last + 1] - offsets[first])
        assert (
            np.array_equal(data["hosts"], hosts[first:last])
            and data["route_keys"] == keys[first:last]
        )
    bad = [[0, 1], [0, 2], [3], [3, 4], [5, -6], [7]]
    pq.write_table(
        pa.table({"hash_ids": pa.array(bad, type=pa.list_(pa.int64()))}), path, row_group_size=2
    )
    assert dask_engine._load((str(path), 0))["route_keys"] is None
    with pytest.raises(ValueError, match=r"block id -6 is negative"):
        dask_engine._load((str(path), 2))
