"""The cost model and the cache sizes share one KV bytes-per-token figure."""

from __future__ import annotations

import json

from .helpers import run_cli
from .test_kv_models import write_instance


def test_cost_capacity_gib_uses_the_transfer_bytes_per_token(capsys, tmp_path):
    path = write_instance(tmp_path)
    # 2**27 bytes/token x 4-token blocks: 1 GiB = 2 blocks per host
    status, out, err = run_cli(
        capsys,
        "cost",
        str(path),
        "--capacity-gib",
        "1",
        "--kv-bytes-per-token",
        str(2**27),
        "--fleet",
        "2",
        "--routing",
        "round-robin",
        "--json",
    )
    assert status == 0, err
    cost = json.loads(out)
    assert cost["capacity"] == 2
    assert cost["params"]["kv_bytes_per_token"]["value"] == 2**27
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(path),
        "--model",
        "per-host",
        "--routing",
        "round-robin",
        "--fleet",
        "2",
        "--capacity",
        "2",
        "--json",
    )
    assert cost["token_hit_rate"]["per_host"] == json.loads(out)["measured"]["token_hit_rate"]


def test_cost_refuses_two_sources_for_bytes_per_token(capsys, tmp_path):
    status, out, err = run_cli(
        capsys,
        "cost",
        str(write_instance(tmp_path)),
        "--kv-model",
        "qwen3-8b",
        "--param",
        "kv_bytes_per_token=5",
    )
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
