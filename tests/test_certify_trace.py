"""Certificates at trace scale: MIN's witness on the Mooncake trace, re-checked by the trusted checker.

The issue's "done when": certify and verify on the 3,993-request trace, pooled
and per host (16 hosts, round-robin), OPTIMAL with the reliance stated. The
optimum is compared with the checker's own recount and with CP-SAT on a
prefix of the trace small enough for the solvers.
"""

from __future__ import annotations

import json

import pytest

from pyverify.certify.certificate import Stopped, certify
from pyverify.inputs.model import Instance
from pyverify.trusted import recount
from pyverify.trusted.check import verify_quiet

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .helpers import run_cli

TRACE = MOONCAKE_SYNTHETIC
needs_trace = pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)


@needs_trace
@pytest.mark.parametrize(
    "argv, caches",
    [
        (["--model", "pooled"], lambda n: [0] * n),
        (
            ["--model", "per-host", "--routing", "round-robin", "--fleet", "16"],
            lambda n: [t % 16 for t in range(n)],
        ),
    ],
)
def test_certify_and_verify_the_trace(capsys, tmp_path, argv, caches):
    out = tmp_path / "c.json"
    status, stdout, stderr = run_cli(
        capsys,
        "certify",
        str(TRACE),
        *argv,
        "--capacity",
        "4096",
        "--greedy",
        "lru",
        "-o",
        str(out),
    )
    assert status == 0, stderr
    assert "relies on     flat relaxation" in stdout and "CP-SAT, Z3    not run" in stdout
    cert = json.loads(out.read_text())
    assert cert["status"] == "OPTIMAL" and cert["solvers"]["cp-sat"] is None
    from pyverify.inputs.load import load_input

    instance = load_input(TRACE)
    assert cert["objective"] == recount.min_misses(
        instance.chains, caches(instance.n_requests), 4096
    )
    assert cert["objective"] < cert["greedy"][0]["misses"]  # LRU misses more
    assert out.stat().st_size < 4_000_000  # the witness stays practical (about 1-2 MB)
    status, stdout, stderr = run_cli(capsys, "verify", str(out), str(TRACE))
    assert status == 0, stdout + stderr
    assert "VERIFIED OPTIMAL" in stdout and "relied on: lower bound: Belady's MIN" in stdout


@needs_trace
def test_min_route_agrees_with_the_solvers_on_a_prefix_of_the_trace(tmp_path):
    """The first 40 requests: CP-SAT + Z3 (solver route) and MIN (forced) certify the same optimum."""
    from pyverify.inputs.load import load_input

    full = load_input(TRACE)
    small = Instance(name="prefix40", fleet_size=1, chains=full.chains[:40], routing=(0,) * 40)
    path = tmp_path / "prefix40.json"
    path.write_text(json.dumps(small.to_json()))
    capacity = 64
    solved = certify(
        small, "pooled", capacity, 120, [], instance_path=str(path), solver_limit=10**9
    ).certificate
    by_min = certify(
        small, "pooled", capacity, 120, [], instance_path=str(path), solver_limit=0
    ).certificate
    assert solved["solvers"]["cp-sat"]["status"] == "OPTIMAL"
    assert solved["objective"] == by_min["objective"] == solved["solvers"]["min"]["objective"]
    for cert in (solved, by_min):
        target = tmp_path / "c.json"
        target.write_text(json.dumps(cert))
        assert verify_quiet(str(target), str(path))[0] == 0


def test_time_limit_stops_the_min_route_without_a_certificate(capsys, tmp_path):
    chains = tuple((t % 50, 1000 + t % 50) for t in range(3000))
    instance = Instance(name="big", fleet_size=1, chains=chains, routing=(0,) * len(chains))
    with pytest.raises(Stopped, match="status UNKNOWN"):
        certify(instance, "pooled", 10, time_limit=1e-9, greedy_policies=[], solver_limit=0)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(instance.to_json()))
    out = tmp_path / "c.json"
    status, stdout, stderr = run_cli(
        capsys,
        "certify",
        str(path),
        "--model",
        "pooled",
        "--capacity",
        "10",
        "--time-limit",
        "0.000001",
        "-o",
        str(out),
    )
    assert status == 1 and "status UNKNOWN" in stderr and len(stderr.strip().splitlines()) == 1
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]


def tiny_trace(tmp_path):
    lines = [
        {"timestamp": t, "input_length": 512 * len(ids), "output_length": 1, "hash_ids": ids}
        for t, ids in enumerate([[1, 2, 3], [1, 2], [4], [1, 2, 3], [4, 5], [1], [4, 5]])
    ]
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    "argv",
    [["--model", "pooled"], ["--model", "per-host", "--routing", "round-robin", "--fleet", "2"]],
)
def test_certify_and_verify_a_jsonl_trace_on_the_solver_route(capsys, tmp_path, argv):
    """A JSONL trace works for certify and verify like an instance (small: CP-SAT and Z3, and the MIN recount)."""
    trace, out = tiny_trace(tmp_path), tmp_path / "c.json"
    status, stdout, stderr = run_cli(
        capsys, "certify", str(trace), *argv, "--capacity", "2", "-o", str(out)
    )
    assert status == 0, stderr
    cert = json.loads(out.read_text())
    assert cert["status"] == "OPTIMAL" and cert["solvers"]["cp-sat"]["status"] == "OPTIMAL"
    from pyverify.inputs.load import load_input

    chains = load_input(trace).chains
    caches = cert["witness"]["cache_of"]
    assert (
        cert["objective"]
        == recount.min_misses(chains, caches, 2)
        == cert["solvers"]["min"]["objective"]
    )
    status, stdout, stderr = run_cli(capsys, "verify", str(out), str(trace))
    assert (
        status == 0
        and "VERIFIED OPTIMAL" in stdout
        and "not relied on: solvers.cp-sat: reported by the certifier, not re-checked" in stdout
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "pooled", "--routing", "round-robin"], "only for --model per-host"),
        (["--model", "per-host", "--fleet", "4"], "only with --routing round-robin"),
        (["--model", "per-host"], "--routing round-robin --fleet N"),
    ],
)
def test_routing_flags_one_line(capsys, tmp_path, argv, message):
    status, out, err = run_cli(capsys, "certify", str(tiny_trace(tmp_path)), *argv)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err
