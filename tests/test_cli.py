"""The CLI as a new user meets it: real output, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import LAB_INSTANCE
from .helpers import assert_one_line_error, run_cli


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD = {
    "format": "pyverify.instance/1",
    "name": "t",
    "hosts": 2,
    "requests": [
        {"blocks": [1, 2], "host": 0},
        {"blocks": [1, 3], "host": 1},
        {"blocks": [1, 2], "host": 0},
    ],
}


def test_validate_ok(capsys, tmp_path):
    path = write(tmp_path, "i.json", json.dumps(GOOD))
    status, out, _ = run_cli(capsys, "validate", path, "--json")
    assert status == 0
    summary = json.loads(out)
    assert summary["valid"] and summary["block_references"] == 6 and summary["distinct_blocks"] == 3


def test_simulate_json_with_witness(capsys, tmp_path):
    path = write(tmp_path, "i.json", json.dumps(GOOD))
    status, out, _ = run_cli(capsys, "simulate", path, "--model", "per-host", "--json", "--witness")
    assert status == 0
    result = json.loads(out)
    assert (result["hits"], result["misses"]) == (2, 4)
    assert result["witness"] == {"cache_of": [0, 1, 0], "hit_blocks": [0, 0, 2]}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{not json", "malformed JSON at line 1"),
        (json.dumps({**GOOD, "hosts": "two"}), "hosts: 'two' is not of type 'integer'"),
        (
            json.dumps({**GOOD, "requests": [{"blocks": [1], "host": 5}]}),
            "requests[0].host: host 5 out of range",
        ),
        (
            json.dumps({**GOOD, "requests": [{"blocks": [], "host": 0}]}),
            "requests[0].blocks: [] should be non-empty",
        ),
        (
            json.dumps(
                {**GOOD, "requests": [{"blocks": [1, 2], "host": 0}, {"blocks": [3, 2], "host": 0}]}
            ),
            "requests[1].blocks[1]: not prefix-closed",
        ),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "name"}),
            "'name' is a required property",
        ),
    ],
)
@pytest.mark.parametrize("command", [["validate"], ["simulate", "--model", "pooled"], ["sweep"]])
def test_bad_instances_one_line_exit_2(capsys, tmp_path, text, expected, command):
    path = write(tmp_path, "bad.json", text)
    assert_one_line_error(*run_cli(capsys, command[0], path, *command[1:]), path, expected)


def test_missing_file_and_bad_flags(capsys, tmp_path):
    status, _, err = run_cli(capsys, "validate", str(tmp_path / "nope.json"))
    assert status == 2 and "nope.json: no such file" in err
    status, _, err = run_cli(capsys, "sweep", str(LAB_INSTANCE), "--fleets", "2,0")
    assert (
        status == 2
        and "--fleets: expected a positive integer, got '0'" in err
        and len(err.strip().splitlines()) == 1
    )
    status, _, err = run_cli(capsys, "simulate", str(LAB_INSTANCE), "--model", "shared")
    assert status == 2 and "invalid choice: 'shared'" in err
    status, _, err = run_cli(capsys, "sweep", str(LAB_INSTANCE), "--fleets", "32")
    assert status == 2 and "fleet size 32 must be between 1 and 16" in err


def test_unrouted_input_defaults_to_round_robin_in_every_command(capsys, tmp_path):
    """One default for every command: round-robin for an input without routing, over its own fleet (or 16)."""
    unrouted = {**GOOD, "hosts": 2, "requests": [{"blocks": r["blocks"]} for r in GOOD["requests"]]}
    path = write(tmp_path, "u.json", json.dumps(unrouted))
    status, out, _ = run_cli(capsys, "simulate", path, "--model", "per-host", "--json")
    result = json.loads(out)
    assert status == 0 and (result["routing"], result["fleet_size"]) == ("round-robin", 2)
    status, out, _ = run_cli(
        capsys,
        "simulate",
        path,
        "--model",
        "per-host",
        "--routing",
        "round-robin",
        "--fleet",
        "2",
        "--json",
    )
    assert json.loads(out)["misses"] == result["misses"]
    status, out, err = run_cli(
        capsys, "simulate", path, "--model", "per-host", "--routing", "given"
    )
    assert (
        status == 2
        and err.startswith(f"pyverify simulate: error: {path}: routing: ")
        and "gives none" in err
    )


def test_bad_chart_path_leaves_no_file(capsys, tmp_path):
    target = tmp_path / "chart.pdf"
    status, out, err = run_cli(capsys, "sweep", str(LAB_INSTANCE), "--chart", str(target))
    assert status == 2 and "unsupported file type '.pdf'" in err
    assert list(tmp_path.iterdir()) == []


def test_real_entry_point_has_no_traceback(tmp_path):
    path = write(tmp_path, "bad.json", "[1, 2")
    result = subprocess.run(
        [sys.executable, "-m", "pyverify.cli", "validate", path], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_atomic_files_get_ordinary_permissions(tmp_path):
    import os

    from pyverify.fileio import write_text_atomic

    target = tmp_path / "out.txt"
    write_text_atomic(target, "x")
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_help_imports_no_heavy_package():
    """`pyverify --help` (and every command's --help) builds the parser without numpy, solvers or plotting:
    each command imports what it computes with only when it runs (start-up went from ~0.8 s to ~0.25 s)."""
    import subprocess
    import sys

    heavy = {
        "numpy",
        "jsonschema",
        "networkx",
        "matplotlib",
        "ortools",
        "z3",
        "pyarrow",
        "duckdb",
        "dask",
        "numba",
        "tqdm",
    }
    script = (
        "import sys; from pyverify.cli import build_parser; build_parser(); "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(heavy)!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_validate_pluralises_hosts_and_says_where_the_count_comes_from(capsys, tmp_path):
    trace = write(
        tmp_path,
        "t.jsonl",
        json.dumps({"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [1]})
        + "\n",
    )
    status, out, err = run_cli(capsys, "validate", trace)
    assert status == 0, err
    assert (
        "1 host (none named: commands route it to 16 hosts unless --fleet)" in out
        and "1 hosts" not in out
    )
    status, out, _ = run_cli(capsys, "validate", trace, "--json")
    assert json.loads(out)["hosts"] == 1 and json.loads(out)["hosts_source"].startswith(
        "none named"
    )
    status, out, _ = run_cli(capsys, "validate", str(LAB_INSTANCE))
    assert "16 hosts (given by its routing)" in out


def test_audit_says_hosts_the_same_way(capsys, tmp_path):
    from .conftest import REPO

    trace = write(
        tmp_path,
        "t.jsonl",
        "".join(
            json.dumps(
                {"timestamp": i, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2 + i]}
            )
            + "\n"
            for i in range(2)
        ),
    )
    status, out, err = run_cli(
        capsys,
        "audit",
        trace,
        "-o",
        str(tmp_path / "report"),
        "--registry",
        str(REPO / "lean" / "theorems.json"),
    )
    assert status == 0, err
    said = "1 host (none named: commands route it to 16 hosts unless --fleet)"
    assert said in out and "1 hosts" not in out
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"4 block references, {said}." in report and "1 hosts" not in report


def test_simulate_defaults_to_one_pooled_cache(capsys):
    """``simulate T --eviction E --capacity C`` (no --model) is the pooled run, the one cache an engine keeps."""
    status, implicit, _ = run_cli(
        capsys, "simulate", str(LAB_INSTANCE), "--capacity", "8", "--json"
    )
    assert status == 0
    status, pooled, _ = run_cli(
        capsys, "simulate", str(LAB_INSTANCE), "--model", "pooled", "--capacity", "8", "--json"
    )
    assert status == 0 and json.loads(implicit) == json.loads(pooled)
    status, per_host, _ = run_cli(
        capsys, "simulate", str(LAB_INSTANCE), "--model", "per-host", "--capacity", "8", "--json"
    )
    assert json.loads(per_host) != json.loads(
        implicit
    )  # the default is a real choice, not a run that ignores --model


@pytest.mark.parametrize(
    "argv, command",
    [
        (["simulate", "/nonexistent/trace.jsonl"], "pyverify simulate"),
        (
            ["trace", "import", "/nonexistent/trace.jsonl", "-o", "/tmp/never.json"],
            "pyverify trace import",
        ),
        (["verify", "/nonexistent/c.json", "/nonexistent/i.json"], "pyverify verify"),
    ],
)
def test_an_error_after_parsing_names_its_command(capsys, argv, command):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"{command}: error: /nonexistent/"), err
