"""Mooncake JSONL import: good traces load as instances; every kind of bad
line is one error line naming the file, the line and the field, exit 2, and
no output file."""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.load import load_input
from pyverify.inputs.model import load_instance
from pyverify.inputs.mooncake import import_mooncake

from .conftest import REPO
from .helpers import assert_one_line_error, run_cli


def lines(*records):
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


GOOD = lines(
    {"timestamp": 0, "input_length": 1000, "output_length": 7, "hash_ids": [10, 11]},
    {"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [10, 12]},
    "",
    {"timestamp": 40, "input_length": 300, "output_length": 2, "hash_ids": [10]},
    {
        "timestamp": 41,
        "input_length": 1500,
        "output_length": 3,
        "hash_ids": [10, 11, 13],
        "extra_field": "ignored",
    },
)


def test_import_builds_the_instance(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD)
    instance = import_mooncake(path)
    assert instance.chains == ((10, 11), (10, 12), (10,), (10, 11, 13))
    assert (
        instance.routing is None and instance.fleet_size == 1 and instance.block_size_tokens == 512
    )
    assert instance.extra[0] == {"arrival_ms": 0, "input_tokens": 1000, "output_tokens": 7}
    assert instance.name == "t"
    assert load_input(path) == instance  # a .jsonl works wherever an instance does


def test_trace_import_writes_an_instance_that_loads_back(capsys, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD)
    out = tmp_path / "t.json"
    status, stdout, _ = run_cli(
        capsys, "trace", "import", str(path), "-o", str(out), "--hosts", "4", "--json"
    )
    assert status == 0
    summary = json.loads(stdout)
    assert (summary["requests"], summary["block_references"], summary["distinct_blocks"]) == (
        4,
        8,
        4,
    )
    loaded = load_instance(out)
    assert loaded.chains == import_mooncake(path).chains and loaded.fleet_size == 4
    assert loaded.extra[3] == {"arrival_ms": 41, "input_tokens": 1500, "output_tokens": 3}


def test_sweep_and_simulate_accept_a_trace(capsys, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD)
    status, out, _ = run_cli(capsys, "sweep", str(path), "--fleets", "2", "--json")
    assert status == 0
    row = json.loads(out)["rows"][0]
    assert json.loads(out)["routing"] == "round-robin"
    # round-robin: host 0 gets requests 0, 2 -> {10, 11}; host 1 gets 1, 3 -> {10, 12, 11, 13}
    assert (row["pooled_misses"], row["per_host_misses"]) == (4, 6)
    status, out, _ = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0 and json.loads(out)["misses"] == 4


BAD = [
    (lines({"hash_ids": [1]}, '{"hash_ids": [1, 2'), "line 2: malformed JSON"),
    (lines({"hash_ids": [1]}, "[1, 2]"), "line 2: expected a JSON object"),
    (lines({"timestamp": 1}), "line 1: missing field 'hash_ids'"),
    (lines({"hash_ids": []}), "line 1.hash_ids: empty"),
    (lines({"hash_ids": 5}), "line 1.hash_ids: expected a list"),
    (lines({"hash_ids": [1, "2"]}), "line 1.hash_ids[1]: block id '2' is not an integer"),
    (lines({"hash_ids": [1, 2.0]}), "line 1.hash_ids[1]: block id 2.0 is not an integer"),
    (lines({"hash_ids": [True]}), "line 1.hash_ids[0]: block id True is not an integer"),
    (
        lines({"hash_ids": [1]}, {"hash_ids": [1, -3]}),
        "line 2.hash_ids[1]: block id -3 is negative",
    ),
    (lines({"hash_ids": [1], "timestamp": -1}), "line 1.timestamp: expected a non-negative number"),
    (
        lines({"hash_ids": [1], "input_length": 1.5}),
        "line 1.input_length: expected a non-negative integer",
    ),
    (
        lines({"hash_ids": [1, 2]}, {"hash_ids": [1, 3]}, "", {"hash_ids": [4, 5, 3]}),
        "line 4.hash_ids[2]: not prefix-closed: block 3 follows block 5 here but followed block 1 earlier",
    ),
    (
        lines({"hash_ids": [1, 2]}, {"hash_ids": [2]}),
        "line 2.hash_ids[0]: not prefix-closed: block 2 follows the root",
    ),
    (
        lines({"hash_ids": [1], "timestamp": 5}, {"hash_ids": [1], "timestamp": 3}),
        "line 2.timestamp: timestamp 3 is earlier than 5 on line 1",
    ),
    ("\n\n", "empty input: no requests"),
]


@pytest.mark.parametrize("text, expected", BAD)
@pytest.mark.parametrize("command", [["trace", "import"], ["validate"], ["mrc"]])
def test_bad_traces_one_line_exit_2_no_output(capsys, tmp_path, text, expected, command):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    out = tmp_path / "out.json"
    argv = [*command, str(path)] + (["-o", str(out)] if command[0] == "trace" else [])
    assert_one_line_error(*run_cli(capsys, *argv), path, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bad.jsonl"
    ]  # no partial or temporary file


def test_not_utf8_and_missing_file(capsys, tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"hash_ids": [1]}\n{"hash_ids": [1], "x": "\xff"}\n')
    status, _, err = run_cli(capsys, "validate", str(path))
    assert status == 2 and "line 2: not UTF-8" in err
    status, _, err = run_cli(capsys, "validate", str(tmp_path / "none.jsonl"))
    assert status == 2 and "none.jsonl: no such file" in err


def test_unsorted_timestamps_are_a_warning_when_allowed(capsys, tmp_path):
    path = tmp_path / "u.jsonl"
    path.write_text(
        lines(
            {"hash_ids": [1], "timestamp": 5},
            {"hash_ids": [1, 2], "timestamp": 3},
            {"hash_ids": [1], "timestamp": 1},
        )
    )
    out = tmp_path / "u.json"
    status, _, err = run_cli(
        capsys, "trace", "import", str(path), "-o", str(out), "--allow-unsorted"
    )
    assert status == 0
    warnings = err.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith(
        f"pyverify: warning: {path}: line 2.timestamp"
    )
    assert load_instance(out).chains == ((1,), (1, 2), (1,))  # file order kept


def test_output_directory_error_leaves_nothing(capsys, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD)
    status, _, err = run_cli(capsys, "trace", "import", str(path))
    assert status == 2 and "-o/--output" in err


@pytest.mark.parametrize("kind", ["instance", "token-ids"])
def test_every_accepted_input_converts_to_parquet(tmp_path, kind):
    """`trace import tokens.jsonl -o t.parquet` failed with "missing field 'hash_ids'",
    and an instance JSON with "malformed JSON": Parquet output read only Mooncake JSONL."""
    pytest.importorskip("pyarrow")
    from pyverify.cli import main
    from pyverify.inputs.load import load_input

    if kind == "instance":
        source = REPO / "instances" / "lab-512x32x16.json"
    else:
        source = tmp_path / "tokens.jsonl"
        source.write_text(
            "\n".join(json.dumps({"prompt_token_ids": list(range(n))}) for n in (40, 48, 33)) + "\n"
        )
    target = tmp_path / "t.parquet"
    assert main(["trace", "import", str(source), "-o", str(target)]) == 0
    original, converted = load_input(str(source)), load_input(str(target))
    assert [list(c) for c in converted.chains] == [list(c) for c in original.chains]
    assert (
        converted.routing == original.routing
        and converted.block_size_tokens == original.block_size_tokens
    )


def test_route_once_then_curves_and_a_certificate_for_any_policy(tmp_path):
    """mrc and certify refused prefix-affinity (it depends on the cache state as
    requests arrive): `trace import --routing` records the hosts it chose, and the
    routed instance is then certified and drawn per host with its given routing."""
    from pyverify.cli import main
    from pyverify.sim.routing import RoutingOptions, route
    from pyverify.trusted.check import verify_quiet

    source = REPO / "instances" / "lab-512x32x16.json"
    routed = tmp_path / "routed.json"
    assert (
        main(
            [
                "trace",
                "import",
                str(source),
                "-o",
                str(routed),
                "--routing",
                "prefix-affinity",
                "--fleet",
                "4",
            ]
        )
        == 0
    )
    instance = load_input(str(routed))
    original = load_input(str(source))
    assert instance.fleet_size == 4 and instance.chains == original.chains
    assert list(instance.routing) == list(route(original, 4, "prefix-affinity", RoutingOptions()))
    assert (
        main(
            [
                "mrc",
                str(routed),
                "--model",
                "per-host",
                "--routing",
                "given",
                "--capacities",
                "1,2",
                "--json",
            ]
        )
        == 0
    )
    cert = tmp_path / "c.json"
    assert (
        main(
            [
                "certify",
                str(routed),
                "--model",
                "per-host",
                "--capacity",
                "2",
                "--no-z3",
                "-o",
                str(cert),
            ]
        )
        == 0
    )
    status, lines = verify_quiet(str(cert), str(routed))
    assert status == 0 and any(line.startswith("VERIFIED") for line in lines), (
        lines
    )  # OPTIMAL, or FEASIBLE if CP-SAT ran out of time


def test_fleet_without_routing_is_refused(capsys, tmp_path):
    status, out, err = run_cli(
        capsys,
        "trace",
        "import",
        str(REPO / "instances" / "lab-512x32x16.json"),
        "-o",
        str(tmp_path / "x.json"),
        "--fleet",
        "4",
    )
    assert (
        status == 2 and "--fleet: only with --routing" in err and not (tmp_path / "x.json").exists()
    )
