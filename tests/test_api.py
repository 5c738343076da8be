"""The Python API gives the command line's numbers: each result here is held equal to the
committed ``--json`` output of the same command on the same instance (tests/golden)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings

from pyverify import api
from pyverify.errors import UserError

from .conftest import REPO
from .strategies import prefix_closed_chains

LAB = REPO / "instances" / "lab-512x32x16.json"
GAP = REPO / "instances" / "greedy-gap-30.json"
GOLDEN = REPO / "tests" / "golden"


def golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def lab():
    return api.load_trace(LAB)


@pytest.mark.parametrize(
    "name, flags",
    [
        ("simulate-lab-pooled", {}),
        ("simulate-lab-per-host-c2", {"model": "per-host", "capacity": 2}),
    ],
)
def test_simulate_gives_the_commands_numbers(lab, name, flags):
    expected = golden(name)
    result = api.simulate(lab, **flags).to_dict()
    for field in ("sha256", "model", "capacity", "eviction", "references", "hits", "misses"):
        assert result[field] == expected[field], field
    assert result["hit_rate"] == expected["hit_rate"]
    assert result["trace"] == expected["instance"]


def test_the_lru_curve_gives_mrcs_points(lab):
    expected = golden("mrc-lab")
    curve = api.lru_curve(lab)
    assert curve.cold_misses == expected["cold_misses"]
    assert curve.ceiling_hit_rate == expected["ceiling_hit_rate"]
    for point in expected["points"]:
        assert curve.misses(point["capacity_blocks"]) == point["misses"]


@given(prefix_closed_chains(max_nodes=30, max_requests=30))
@settings(max_examples=40, deadline=None)
def test_curves_equal_replays_at_every_capacity(chains):
    from pyverify.inputs.model import Instance
    from pyverify.optimal.belady import min_misses

    trace = api.ColumnarTrace.from_instance(
        Instance(name="t", fleet_size=1, chains=tuple(map(tuple, chains)))
    )
    lru, optimal = api.lru_curve(trace), api.optimal_curve(trace)
    distinct = len({block for chain in chains for block in chain})
    for capacity in range(1, distinct + 2):
        replayed = api.simulate(trace, capacity=capacity, eviction="lru")
        assert lru.misses(capacity) == replayed.misses
        assert optimal.misses(capacity) == min_misses(chains, None, capacity)


def test_verify_says_what_the_checker_says(tmp_path):
    certificate = REPO / "proofs" / "lab-512x32x16.pooled.json"
    verdict = api.verify(certificate, LAB)
    assert verdict.ok and any("VERIFIED" in line for line in verdict.lines)
    forged = json.loads(certificate.read_text(encoding="utf-8"))
    forged["objective"] = forged["objective"] - 1
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    assert not api.verify(path, LAB).ok


def without_times(value):
    """``value`` without the keys that measure this run's time (as scripts/golden_outputs.py)."""
    if isinstance(value, dict):
        return {key: without_times(item) for key, item in value.items() if not key.endswith("_s")}
    return [without_times(item) for item in value] if isinstance(value, list) else value


def test_certify_gives_the_commands_summary(tmp_path):
    target = tmp_path / "certificate.json"
    done = api.certify(str(GAP), model="pooled", capacity=4, output=str(target))
    summary = json.loads(json.dumps(done.to_dict()).replace(str(tmp_path), "{tmp}"))
    assert without_times(summary) == without_times(golden("certify-gap-pooled-c4"))
    assert api.verify(target, GAP).ok  # what was written is what the checker accepts


def test_verify_hands_each_line_on_as_the_checker_says_it():
    heard: list[str] = []
    verdict = api.verify(REPO / "proofs" / "lab-512x32x16.pooled.json", LAB, on_line=heard.append)
    assert verdict.ok and tuple(heard) == verdict.lines and heard


def test_a_certify_stopped_by_its_time_limit_is_a_user_error():
    assert issubclass(api.Stopped, UserError)


def test_the_bounded_check_proves_the_pooled_theorem_on_small_lists():
    assert api.prove_bounded(2, 2).result == "unsat"


def test_importing_the_api_loads_no_numpy_reader_or_solver():
    import subprocess
    import sys

    script = (
        "import sys, pyverify.api, pyverify.api.names, pyverify.api.certificates\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'ortools', 'z3'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout.strip() == "[]"


def test_the_bridge_gives_the_commands_report(capsys, monkeypatch):
    import pyverify.lean.bridge as lean_bridge
    from pyverify.project import project_file

    from .helpers import run_cli

    checked = {}  # one Lean check of the registry's project, shared by both runs
    real_check = lean_bridge.lean_check_for

    def check_once(registry, quiet=True):
        if registry not in checked:
            checked[registry] = real_check(registry, quiet)
        return checked[registry]

    monkeypatch.setattr(lean_bridge, "lean_check_for", check_once)
    registry = project_file("lean/theorems.json")  # the command's defaults, named as it names them
    report = api.bridge(project_file("proofs"), registry, [project_file("instances")])
    status, out, _ = run_cli(capsys, "bridge", "--json")
    assert status == 0 and json.loads(out) == report.to_json()
    assert list(checked) == [registry] and report.entries


def test_estimate_cost_gives_the_commands_figures(lab):
    expected = golden("cost-lab")
    fleet = api.default_fleet(lab)
    routing = api.route(lab, fleet, expected["routing"])
    params = api.cost.Params().with_value("block_tokens", expected["block_tokens"])
    cost = api.estimate_cost(lab, routing, fleet, params, capacity=None, pool_capacity=None)
    assert fleet == expected["fleet_size"]
    assert cost.per_host.hit_rate == expected["hit_rate"]["per_host"]
    assert cost.pooled.hit_rate == expected["hit_rate"]["pooled"]
    assert cost.estimate.net_total == expected["net_total_s"]
    assert cost.verdict() == expected["verdict"]
    assert cost.reuse.to_json() == {k: v for k, v in expected["reuse"].items() if k != "assumes"}
    assert cost.split.totals() == expected["tokens"]


def test_sweep_gives_the_commands_rows(lab):
    expected = golden("sweep-lab")
    swept = api.sweep(lab, weights=api.token_weights(lab))
    assert swept.routings == (expected["routing"],)
    assert [row.to_json() for row in swept.rows] == expected["rows"]
    assert {
        routing: [row.to_json() for row in rows] for routing, rows in swept.by_routing.items()
    } == expected["by_routing"]


def test_route_gives_one_host_per_request_and_names_the_online_policy(lab):
    from pyverify.api.names import POLICY_NAMES

    for policy in set(POLICY_NAMES) - {"route-key"}:  # the lab's requests carry no route key
        fleet = 16 if policy == "given" else 4  # a given routing only at its own fleet
        hosts = api.route(lab, fleet, policy)
        assert len(hosts) == lab.n_requests and set(hosts) <= set(range(fleet))
    online = {p for p in POLICY_NAMES if api.routing.depends_on_cache_state(p)}
    assert online == {"prefix-affinity"}
    assert api.route(lab, 4, "prefix-affinity", capacity=2) != api.route(lab, 4, "prefix-affinity")


def test_reading_names_the_trace_as_the_commands_do(lab):
    from pyverify.api import reading

    expected = golden("sweep-lab")
    loaded = reading.read_input(LAB)
    assert reading.content_sha256(lab) == reading.content_sha256(loaded.instance)
    assert reading.content_sha256(lab) == expected["sha256"]
    assert reading.instance_sha256(loaded.instance) == expected["instance_sha256"]
    assert reading.is_stdin("-") and not reading.is_stdin(Path("-"))


def test_memory_converts_gib_to_blocks_for_a_catalog_model():
    from pyverify.api import memory

    kv = memory.kv_size("llama-3.1-8b", None, None)
    assert kv.bytes_per_token == 2 * 32 * 8 * 128 * 2  # K and V x layers x KV heads x dim x bf16
    assert memory.blocks_for_gib(1, kv.bytes_per_token, 16) == 2**30 // (kv.bytes_per_token * 16)


def test_the_estimated_curve_is_the_commands(capsys):
    from pyverify.api import curves

    from .helpers import run_cli

    status, out, _ = run_cli(capsys, "mrc", str(LAB), "--sample-rate", "0.5", "--json")
    expected = json.loads(out)
    curve = curves.estimated_lru_curve(api.load_trace(LAB), 0.5)
    assert status == 0 and curve.sampled_references == expected["sampled_references"]
    capacities = [point["capacity_blocks"] for point in expected["points"]]
    assert curve.points(capacities) == expected["points"]
    assert curve.references == api.lru_curve(api.load_trace(LAB)).references


def test_memory_budgets_give_the_commands_points():
    from pyverify.api import reading
    from pyverify.api.budgets import memory_budgets

    expected = golden("budgets-mooncake")
    instance = reading.read_input(REPO / "instances" / "mooncake-synthetic.json").instance
    found = memory_budgets(
        instance, budgets_gib=[1, 4], kv_bytes_per_token=327680, evictions=["leaf-lru"]
    )  # the command's default eviction
    as_arrays = memory_budgets(
        api.ColumnarTrace.from_instance(instance),
        budgets_gib=[1, 4],
        kv_bytes_per_token=327680,
        evictions=["leaf-lru"],
    )
    points = {policy: [p.to_json() for p in rows] for policy, rows in found.by_eviction.items()}
    assert points == expected["points"]
    assert {
        policy: [p.to_json() for p in rows] for policy, rows in as_arrays.by_eviction.items()
    } == points


def test_the_reference_page_documents_every_function_of_every_family():
    import importlib
    import importlib.util
    import inspect
    import pkgutil

    spec = importlib.util.spec_from_file_location("cli_help", REPO / "docs/_hooks/cli_help.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.api_reference()
    for family in pkgutil.iter_modules(api.__path__):
        if family.name.startswith("_"):
            continue
        module = importlib.import_module(f"pyverify.api.{family.name}")
        assert f"## `{module.__name__}`" in page
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                assert f"def {name}(" in page, f"{module.__name__}.{name}"


def test_the_event_log_check_is_the_commands_report(capsys, tmp_path):
    from pyverify.api.engine_logs import check_vllm_events

    from .helpers import run_cli
    from .test_trace_formats import ENGINE_RUN, lines, write

    path = write(tmp_path, lines(*ENGINE_RUN))
    status, out, _ = run_cli(capsys, "trace", "check-events", str(path), "--json")
    checked = check_vllm_events(str(path))
    assert status == 0 and checked.agrees and checked.to_dict() == json.loads(out)
    assert check_vllm_events(str(path), capacity=1).capacity_from == "--capacity"


def test_measure_counts_the_runs_hits_and_the_optimum_hits_most(lab):
    import numpy as np

    from pyverify.api import measure
    from pyverify.api.names import Window

    run = api.simulate(lab, capacity=4)
    chains = lab.to_instance().chains
    assert measure.measured(chains, run.hit_blocks).block_hits == run.hits
    later = measure.measured(chains, run.hit_blocks, window=Window(0.5))
    assert later.requests == lab.n_requests - lab.n_requests // 2
    lengths = np.diff(lab.offsets)
    optima = measure.optimum_hits(lab.ids, lengths, None, 4)
    assert sum(optima["bypass"]) == run.references - api.optimal_curve(lab).misses(4)
    assert sum(optima["forced"]) <= sum(optima["bypass"]) and sum(optima["forced"]) >= run.hits


def test_read_as_arrays_gives_one_trace_by_either_reader(tmp_path):
    from pyverify.api import reading

    path = tmp_path / "t.jsonl"
    records = [[1, 2, 3], [1, 2, 4], [5]]
    path.write_text(
        "".join(
            json.dumps({"timestamp": i, "input_length": 512 * len(ids), "hash_ids": ids}) + "\n"
            for i, ids in enumerate(records)
        ),
        encoding="utf-8",
    )
    by_columns, what = reading.read_as_arrays(str(path))
    by_records, loaded = reading.read_as_arrays(str(path), per_record=True)
    assert what.instance is None and loaded.instance is not None
    assert what.format.key == loaded.format.key
    assert reading.content_sha256(by_columns) == reading.content_sha256(by_records)
    assert reading.distinct_blocks(by_columns) == 5


def test_the_cache_runs_are_simulates(lab):
    from pyverify.api import caches

    chains = lab.to_instance().chains
    run = caches.run_caches(chains, None, "pooled", capacity=2)
    assert run.hits == api.simulate(lab, capacity=2).hits == sum(run.hit_blocks)
    cache_of = caches.caches_read("pooled", None, len(chains))
    hits, unscheduled = caches.engine_cache_hits(chains, cache_of, 64, "sglang", block_size=16)
    assert len(hits) == len(chains) and not unscheduled


def test_bad_input_is_a_user_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hash_ids": [1, 2]}\n{"hash_ids": [3, -1]}\n', encoding="utf-8")
    with pytest.raises(UserError):
        api.load_trace(bad)


def shared_prefix_trace(path: Path) -> Path:
    """A Mooncake JSONL trace of 60 timed requests over 4 shared prefixes: enough reuse and
    overlap that routers, tiers and capacities give different runs."""
    lines = []
    for request in range(60):
        family = request % 4
        chain = [family * 100 + block for block in range(3 + request % 5)]
        record = {
            "timestamp": request * 40,
            "input_length": 512 * len(chain),
            "output_length": 1 + request % 7,
            "hash_ids": chain,
        }
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "flags, arguments",
    [
        (
            ["--capacity", "6", "--router", "round-robin,kv-aware,dynamo"],
            {"capacity": 6, "routers": ["round-robin", "kv-aware", "dynamo"]},
        ),
        (
            ["--capacity", "4", "--host-capacity", "8", "--pool-capacity", "inf", "--compare"],
            {"capacity": 4, "host_capacity": 8, "pool_capacity": None, "compare": True},
        ),
        (
            ["--capacity", "12", "--eviction", "vllm", "--fleet", "3", "--router", "sglang"],
            {"capacity": 12, "eviction": "vllm", "fleet_size": 3, "routers": ["sglang"]},
        ),
        (["--no-timing", "--capacity", "5"], {"capacity": 5, "timed": False}),
    ],
    ids=["routers", "compare-tiers", "vllm", "untimed"],
)
def test_replay_fleet_gives_the_commands_json(capsys, tmp_path, flags, arguments):
    from pyverify.api import reading, replay

    from .helpers import run_cli

    path = shared_prefix_trace(tmp_path / "trace.jsonl")
    status, out, err = run_cli(capsys, "replay", str(path), *flags, "--json")
    assert status == 0, err
    report = replay.replay_fleet(reading.read_trace_file(path), **arguments)
    assert report.to_dict() == json.loads(out)


def test_replay_fleet_gives_the_commands_per_request_records(capsys, tmp_path):
    from pyverify.api import reading, replay

    from .helpers import run_cli

    path = shared_prefix_trace(tmp_path / "trace.jsonl")
    records = tmp_path / "requests.jsonl"
    flags = ["--capacity", "4", "--pool-capacity", "10", "--router", "round-robin,random"]
    status, _, err = run_cli(capsys, "replay", str(path), *flags, "--per-request", str(records))
    assert status == 0, err
    report = replay.replay_fleet(
        reading.read_trace_file(path),
        capacity=4,
        pool_capacity=10,
        routers=["round-robin", "random"],
        per_request=True,
    )
    written = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    assert len(written) == 2 * 60 and report.per_request == written


def test_the_replay_service_model_and_refusals_are_the_commands(capsys, tmp_path):
    from pyverify.api import replay

    from .helpers import run_cli

    service = replay.service_model(kv_bytes_per_token=1000.0, service=replay.STREAMS)
    assert service.prefill_tokens_per_s == replay.prefill_rate().tokens_per_s
    assert service.kv_bytes_per_token == 1000.0 and service.service == replay.STREAMS
    assert replay.prefill_rate(123.0).to_json()["tokens_per_s"] == 123.0
    reason = replay.compiled_refusal(
        ["kv-aware"], capacity_given=False, eviction="sglang", timed=False
    )
    path = shared_prefix_trace(tmp_path / "trace.jsonl")
    flags = ["--backend", "compiled", "--eviction", "sglang", "--no-timing", "--router", "kv-aware"]
    status, _, err = run_cli(capsys, "replay", str(path), *flags)
    assert status == 2 and reason is not None and reason in err
