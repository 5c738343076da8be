"""DuckDB's ``simulate`` report is every simulate's report: the measured window and the token figures, out of core.

The out-of-core engine counts in SQL (pyverify/engines/duckdb.py, ``_measure``);
the per-record simulator (``--backend python``) replays the same trace request
by request. Both must print the same JSON, field for field, but the content
digest, which an engine that never holds the trace does not compute.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from tests.helpers import assert_one_line_error, run_cli  # noqa: E402
from tests.test_columnar import random_chains  # noqa: E402

BLOCK = 16


def prompt_lengths(chains, rng: random.Random, missing: float) -> list[int | None]:
    """A valid prompt length for most requests: the last block partial or full, sometimes tokens past it."""
    lengths = []
    for chain in chains:
        k = len(chain)
        lengths.append(
            None if rng.random() < missing else rng.randint(BLOCK * (k - 1) + 1, BLOCK * (k + 1))
        )
    return lengths


def write_parquet(path, chains, lengths, block_size: int | None = BLOCK) -> None:
    columns = {"hash_ids": pa.array(chains, type=pa.list_(pa.int64()))}
    if lengths is not None:
        columns["input_length"] = pa.array(lengths, type=pa.int64())
    table = pa.table(columns)
    meta = {
        b"pyverify.format": b"pyverify.trace/1",
        b"pyverify.block_size_tokens": str(block_size).encode() if block_size else b"none",
    }
    pq.write_table(table.replace_schema_metadata(meta), str(path), row_group_size=37)


def report(capsys, path, *argv) -> dict:
    status, out, err = run_cli(capsys, "simulate", str(path), "--json", *argv)
    assert status == 0, err
    found = json.loads(out)
    found.pop("sha256")
    found.pop("backend", None)
    return found


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # capsys is read out per call
@given(
    seed=st.integers(0, 10**6),
    missing=st.sampled_from([0.0, 0.3, 1.0]),
    warmup=st.sampled_from([0.0, 0.25, 0.999]),
    fleet=st.integers(1, 5),
    model=st.sampled_from(["pooled", "per-host"]),
    routing=st.sampled_from(["round-robin", "random", "prefix-hash"]),
)
def test_duckdb_reports_what_the_simulator_does(
    tmp_path_factory, capsys, seed, missing, warmup, fleet, model, routing
):
    rng = random.Random(seed)
    chains = random_chains(seed, requests=rng.randint(1, 60))
    lengths = prompt_lengths(chains, rng, missing)
    path = tmp_path_factory.mktemp("measured") / "t.parquet"
    write_parquet(path, chains, lengths)
    argv = [
        "--model",
        model,
        "--warmup-fraction",
        str(warmup),
        "--fleet",
        str(fleet),
        "--routing",
        routing,
    ]
    duckdb = report(capsys, path, *argv, "--backend", "duckdb")
    assert duckdb == report(capsys, path, *argv, "--backend", "python")
    assert duckdb["measured"]["tokens"] is not None


def test_without_a_block_size_it_counts_blocks_only(tmp_path, capsys):
    path = tmp_path / "t.parquet"
    write_parquet(path, random_chains(3, 40), None, block_size=None)
    duckdb = report(
        capsys, path, "--model", "pooled", "--warmup-fraction", "0.5", "--backend", "duckdb"
    )
    assert duckdb == report(
        capsys, path, "--model", "pooled", "--warmup-fraction", "0.5", "--backend", "python"
    )
    assert duckdb["measured"]["tokens"] is None and duckdb["token_weights"] is None


def test_a_prompt_too_short_for_its_blocks_is_refused_in_the_simulators_words(tmp_path, capsys):
    chains = [[0, 1], [0, 1, 2], [0, 1, 2, 3]]
    path = tmp_path / "t.parquet"
    write_parquet(
        path, chains, [20, 2 * BLOCK, 60]
    )  # the second: 32 tokens cannot fill 3 blocks of 16
    outputs = []
    for engine in ("duckdb", "python"):
        status, out, err = run_cli(
            capsys, "simulate", str(path), "--model", "pooled", "--backend", engine
        )
        assert_one_line_error(
            status,
            out,
            err,
            path,
            "row 2.input_length: 32 tokens cannot fill 3 blocks of 16 tokens",
        )
        outputs.append(err)
    assert outputs[0] == outputs[1]


def test_duckdb_still_refuses_a_capacity(tmp_path, capsys):
    path = tmp_path / "t.parquet"
    write_parquet(path, random_chains(1, 10), None)
    status, out, err = run_cli(
        capsys, "simulate", str(path), "--model", "pooled", "--backend", "duckdb", "--capacity", "4"
    )
    assert status == 2 and out == "" and "drop --capacity*/--witness" in err
