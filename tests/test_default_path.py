"""The default ``simulate`` (a trace file read as arrays) prints exactly what the per-record path prints.

The per-record simulator (``--backend python``: the trace read into Python
chains, :func:`pyverify.commands.basic.simulate_in_python`) is the oracle;
the default never calls it on a trace file (the tests take it away before the
default run). Compared field by field, ``sha256`` (the content digest),
token figures and window included:

* on the Mooncake trace, pooled and per host, with and without a capacity,
  routing, fleet, ``--warmup-fraction`` and ``--witness``;
* on Hypothesis traces written as Mooncake JSONL and as Parquet (with and
  without timestamps and prompt lengths), where both formats must also give
  one report, digest included.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyverify.commands.basic as basic

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE
from .helpers import run_cli
from .strategies import prefix_closed_chains

pytest.importorskip("pyarrow")
needs_trace = pytest.mark.skipif(not MOONCAKE_SYNTHETIC.exists(), reason=NO_MOONCAKE)

VARIANTS = [
    ["--model", "pooled"],
    ["--model", "per-host"],
    ["--model", "per-host", "--routing", "random", "--fleet", "5", "--seed", "3"],
    ["--model", "pooled", "--warmup-fraction", "0.4", "--witness"],
    ["--model", "per-host", "--fleet", "4", "--witness"],
    ["--model", "pooled", "--capacity", "300"],
    [
        "--model",
        "per-host",
        "--capacity",
        "40",
        "--eviction",
        "fifo",
        "--warmup-fraction",
        "0.5",
        "--witness",
    ],
    [
        "--model",
        "per-host",
        "--routing",
        "prefix-hash",
        "--fleet",
        "3",
        "--capacity-tokens",
        "51200",
        "--eviction",
        "leaf-lru",
    ],
    [
        "--model",
        "pooled",
        "--capacity",
        "77",
        "--eviction",
        "tail-first",
        "--warmup-fraction",
        "0.25",
    ],
]


def report(capsys, *argv) -> dict:
    status, out, err = run_cli(capsys, "simulate", *argv, "--json")
    assert status == 0, err
    return json.loads(out)


def default_and_oracle(capsys, monkeypatch, *argv) -> tuple[dict, dict]:
    """``simulate ARGV --json`` by the per-record path, then by the default with the per-record path taken away."""
    oracle = report(capsys, *argv, "--backend", "python")
    with monkeypatch.context() as patch:
        patch.setattr(basic, "simulate_in_python", None)
        default = report(capsys, *argv)
    return default, oracle


def needs_kernels(argv) -> None:
    if any(flag.startswith("--capacity") for flag in argv):
        pytest.importorskip("numba")


@needs_trace
@pytest.mark.parametrize("argv", VARIANTS, ids=" ".join)
def test_the_default_equals_the_per_record_path_on_the_mooncake_trace(capsys, monkeypatch, argv):
    needs_kernels(argv)
    default, oracle = default_and_oracle(capsys, monkeypatch, str(MOONCAKE_SYNTHETIC), *argv)
    assert default == oracle
    assert (
        len(default["sha256"]) == 64
        and default["measured"]["tokens"] is not None
        and "backend" not in default
    )


@needs_trace
@pytest.mark.parametrize("argv", [VARIANTS[0], VARIANTS[1], VARIANTS[3]], ids=" ".join)
def test_the_digest_taken_beside_the_count_is_the_same(capsys, monkeypatch, argv):
    """From BACKGROUND_DIGEST_MIN references the digest is taken on a thread while the count runs: forced on
    here (the Mooncake trace is below it), the report is the per-record path's, digest included."""
    import pyverify.inputs.columnar.digest as digest

    monkeypatch.setattr(digest, "BACKGROUND_DIGEST_MIN", 0)
    default, oracle = default_and_oracle(capsys, monkeypatch, str(MOONCAKE_SYNTHETIC), *argv)
    assert default == oracle


@needs_trace
def test_mrc_takes_the_digest_beside_the_curve(capsys, monkeypatch):
    """``mrc`` on arrays hashes on a thread while the curve is computed (forced on here): the same report as
    the per-record path, digest included."""
    import pyverify.inputs.columnar.digest as digest
    from pyverify.cli import main

    monkeypatch.setattr(digest, "BACKGROUND_DIGEST_MIN", 0)
    reports = []
    for engine in ("auto", "python"):
        assert (
            main(
                [
                    "mrc",
                    str(MOONCAKE_SYNTHETIC),
                    "--capacities",
                    "1,50,5000",
                    "--json",
                    "--backend",
                    engine,
                ]
            )
            == 0
        )
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1] and len(reports[0]["sha256"]) == 64


def test_the_digest_thread_hands_back_its_error(monkeypatch):
    """An error raised while hashing on the thread is raised by the call that waits for the digest."""
    import numpy as np

    import pyverify.inputs.columnar.digest as digest
    from pyverify.inputs.columnar.trace import ColumnarTrace

    trace = ColumnarTrace(
        name="t",
        ids=np.array([0, 1, 0], dtype=np.int64),
        offsets=np.array([0, 2, 3], dtype=np.int64),
    )
    monkeypatch.setattr(digest, "BACKGROUND_DIGEST_MIN", 0)
    assert digest.content_sha256_beside(trace)() == digest.content_sha256(trace)

    def fails(_trace):
        raise MemoryError("no room to hash")

    monkeypatch.setattr(digest, "_digest_of", fails)
    other = ColumnarTrace(name="t", ids=trace.ids.copy(), offsets=trace.offsets.copy())
    waiting = digest.content_sha256_beside(other)
    with pytest.raises(MemoryError, match="no room to hash"):
        waiting()
    with pytest.raises(
        MemoryError, match="no room to hash"
    ):  # and by content_sha256, which waits for the same digest
        digest.content_sha256(other)


def test_a_digest_begun_by_the_reader_is_the_one_used(monkeypatch, tmp_path):
    """A reader begins the digest before its closure check; content_sha256 then waits for that digest (hashed
    once), and it equals the digest taken in line and the trusted checker's own."""
    import numpy as np

    import pyverify.inputs.columnar.digest as digest
    from pyverify.inputs.columnar import read_columnar
    from pyverify.trusted.digest import content_sha256 as trusted_sha256

    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"timestamp": 0, "input_length": 1100, "output_length": 3, "hash_ids": [0, 1, 2]}\n'
        '{"timestamp": 5, "input_length": 600, "output_length": 4, "hash_ids": [0, 3]}\n'
    )
    monkeypatch.setattr(digest, "BACKGROUND_DIGEST_MIN", 0)
    hashed = []
    inner = digest._digest_of
    monkeypatch.setattr(digest, "_digest_of", lambda trace: hashed.append(trace) or inner(trace))
    trace = read_columnar(path)
    assert trace in digest._begun
    first, again = digest.content_sha256(trace), digest.content_sha256_beside(trace)()
    assert first == again == inner(trace) == trusted_sha256(trace)
    assert hashed == [
        trace
    ]  # once, by the reader's thread (inner(trace) above called the original)
    assert np.array_equal(trace.ids, [0, 1, 2, 0, 3])


def test_a_trace_the_closure_check_refuses_is_not_returned(monkeypatch, tmp_path):
    """The digest begun before the closure check changes no verdict: a trace giving block 1 two parents is
    refused with the strict reader's line, digest thread or not."""
    import pyverify.inputs.columnar.digest as digest
    from pyverify.errors import UserError
    from pyverify.inputs.columnar import read_columnar

    path = tmp_path / "t.jsonl"
    path.write_text('{"hash_ids": [0, 1]}\n{"hash_ids": [2, 1]}\n')
    monkeypatch.setattr(digest, "BACKGROUND_DIGEST_MIN", 0)
    with pytest.raises(UserError, match="line 2"):
        read_columnar(path)


@st.composite
def mooncake_records(draw):
    chains = draw(prefix_closed_chains(max_nodes=14, max_requests=30))
    with_times = draw(st.booleans())
    with_lengths = draw(st.booleans())
    records, clock = [], 0
    for chain in chains:
        record: dict = {"hash_ids": list(chain)}
        if with_times:
            clock += draw(st.integers(0, 50))
            record["timestamp"] = clock
        if with_lengths:
            k = len(chain)
            record["input_length"] = draw(st.integers(512 * (k - 1) + 1, 512 * k + 600))
            record["output_length"] = draw(st.integers(0, 900))
        records.append(record)
    return records


HYPOTHESIS_VARIANTS = [
    ["--model", "pooled"],
    ["--model", "per-host", "--fleet", "3"],
    ["--model", "pooled", "--warmup-fraction", "0.5", "--witness"],
    [
        "--model",
        "per-host",
        "--fleet",
        "2",
        "--capacity",
        "3",
        "--eviction",
        "leaf-lru",
        "--witness",
    ],
    ["--model", "pooled", "--capacity", "4", "--eviction", "lru", "--warmup-fraction", "0.3"],
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=mooncake_records(), variant=st.sampled_from(HYPOTHESIS_VARIANTS))
def test_the_default_equals_the_per_record_path_on_hypothesis_traces(
    capsys, monkeypatch, tmp_path_factory, records, variant
):
    needs_kernels(variant)
    folder = tmp_path_factory.mktemp("jsonl")
    jsonl = folder / "trace.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    default, oracle = default_and_oracle(capsys, monkeypatch, str(jsonl), *variant)
    assert default == oracle
    # The same trace as Parquet: the same report, digest included (the digest is the content, not the file).
    parquet = tmp_path_factory.mktemp("parquet") / "trace.parquet"
    status, _, err = run_cli(capsys, "trace", "import", str(jsonl), "-o", str(parquet))
    assert status == 0, err
    from_parquet, parquet_oracle = default_and_oracle(capsys, monkeypatch, str(parquet), *variant)
    assert from_parquet == parquet_oracle == default


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "pooled"],
        ["--model", "per-host", "--fleet", "2", "--witness"],
        ["--model", "pooled", "--capacity", "2", "--warmup-fraction", "0.5"],
    ],
    ids=" ".join,
)
def test_the_default_equals_the_per_record_path_on_a_csv_trace(capsys, monkeypatch, tmp_path, argv):
    needs_kernels(argv)
    path = tmp_path / "t.csv"
    path.write_text(
        'hash_ids,timestamp,input_length,output_length\n"[0,1]",0,700,3\n"[0,1,2]",1,1100,4\n"[5]",2,100,5\n"[0]",2,300,1\n'
    )
    default, oracle = default_and_oracle(capsys, monkeypatch, str(path), *argv)
    assert default == oracle and default["measured"]["tokens"] is not None


@settings(max_examples=200, deadline=None)
@given(
    chains=prefix_closed_chains(),
    hosts=st.lists(st.integers(0, 3), min_size=30, max_size=30),
    table=st.booleans(),
    compiled=st.booleans(),
    threads=st.booleans(),
    step=st.sampled_from([1, 3, 4096]),
)
def test_uncapacitated_hits_are_the_simulators(chains, hosts, table, compiled, threads, step):
    """The uncapacitated hits the default counts without a replay (a position table, or a sort when the
    keys are too many for a table; per host, the trace laid out host by host unless numba is loaded, its
    hosts marked on one thread or two; misses summed a few requests at a time) equal simulate()'s, pooled and per host."""
    import numpy as np

    from pyverify.engines import numpy_engine
    from pyverify.sim import counting
    from pyverify.sim.simulate import PER_HOST, POOLED, simulate

    ids = np.array([b for chain in chains for b in chain], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(c) for c in chains]))).astype(np.int64)
    cache_of = np.array(hosts[: len(chains)], dtype=np.int64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counting, "REQUEST_STEP", step)
        patch.setattr(
            numpy_engine, "TABLE_STEP", step
        )  # first references marked a few at a time, step after step
        patch.setattr(numpy_engine, "HOST_STEP", step)  # and per host, a few requests at a time
        if (
            not table
        ):  # as if the keys were too many for a table: np.unique finds the first references
            patch.setattr(numpy_engine, "KEY_TABLE_FACTOR", 0)
            patch.setattr(numpy_engine, "KEY_TABLE_MIN", 0)
        if compiled:  # numba loaded: first_references' compiled pass, where it is installed
            pytest.importorskip("numba")
        else:  # numba not loaded: the numpy passes, per host with the trace laid out host by host
            patch.setattr(numpy_engine, "numba_loaded", lambda: False)
            patch.setattr(
                numpy_engine, "THREADED_MIN", 0 if threads else numpy_engine.THREADED_MIN
            )  # hosts on two threads
            patch.setattr(numpy_engine, "compiled_first_references", lambda *args: None)
        pooled = numpy_engine.uncapacitated_hits(ids, offsets)
        per_host = numpy_engine.uncapacitated_hits(ids, offsets, cache_of, 4)
    chains_again = [tuple(int(b) for b in ids[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    assert pooled.tolist() == list(simulate(chains_again, None, POOLED).hit_blocks)
    assert per_host.tolist() == list(simulate(chains_again, cache_of.tolist(), PER_HOST).hit_blocks)


# --- mrc and budgets: the same rule ------------------------------------------------------------------

import pyverify.commands.budgets as budgets  # noqa: E402
import pyverify.commands.traces as traces  # noqa: E402

#: The per-record reader each command calls, taken away from the default run.
PER_RECORD_READER = {
    "mrc": (traces, "load_described_with"),
    "budgets": (budgets, "load_described_with"),
}

COMMAND_VARIANTS = [
    ["mrc", "--policy", "lru,opt", "--capacities", "64,512,4096", "--verify"],
    [
        "mrc",
        "--model",
        "per-host",
        "--fleet",
        "4",
        "--policy",
        "lru",
        "--target-hit-rate",
        "0.3",
        "--kv-model",
        "llama-3.1-8b",
    ],
    [
        "mrc",
        "--model",
        "per-host",
        "--routing",
        "prefix-hash",
        "--fleet",
        "3",
        "--policy",
        "lru,opt-forced",
        "--capacities",
        "100,1000",
    ],
    [
        "budgets",
        "--kv-model",
        "llama-3.3-70b",
        "--budgets-gib",
        "1,4,32",
        "--eviction",
        "lru,fifo,leaf-lru,tail-first",
        "--warmup-fraction",
        "0.5",
    ],
    [
        "budgets",
        "--kv-bytes-per-token",
        "4096",
        "--budgets-gib",
        "2,16",
        "--optimum",
        "--target-hit-rate",
        "0.4",
    ],
]


def command_json(capsys, command, *argv) -> dict:
    status, out, err = run_cli(capsys, command, *argv, "--json")
    assert status == 0, err
    return json.loads(out)


def command_default_and_oracle(capsys, monkeypatch, command, path, *argv) -> tuple[dict, dict]:
    """``COMMAND PATH ARGV --json`` per record (``--backend python``), then by the default with the per-record
    reader taken away: the default reads a trace file as arrays at any size."""
    pytest.importorskip("numba")  # without it both run per record
    oracle = command_json(capsys, command, path, *argv, "--backend", "python")
    module, name = PER_RECORD_READER[command]
    with monkeypatch.context() as patch:
        patch.setattr(module, name, None)
        default = command_json(capsys, command, path, *argv)
    return default, oracle


@needs_trace
@pytest.mark.parametrize("argv", COMMAND_VARIANTS, ids=" ".join)
def test_mrc_and_budgets_by_default_equal_the_per_record_path_on_the_mooncake_trace(
    capsys, monkeypatch, argv
):
    default, oracle = command_default_and_oracle(
        capsys, monkeypatch, argv[0], str(MOONCAKE_SYNTHETIC), *argv[1:]
    )
    assert default == oracle
    assert "backend" not in default and "instance_sha256" not in default
    simulated = report(capsys, str(MOONCAKE_SYNTHETIC), "--model", "pooled")
    assert default["sha256"] == simulated["sha256"]  # one name for the instance in every command


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    records=mooncake_records(),
    variant=st.sampled_from(
        [
            ["mrc", "--policy", "lru,opt", "--verify"],
            ["mrc", "--model", "per-host", "--fleet", "2", "--policy", "lru,opt", "--verify"],
            [
                "budgets",
                "--kv-bytes-per-token",
                "200000",
                "--budgets-gib",
                "0.2,0.5,1",
                "--eviction",
                "lru,fifo,leaf-lru,tail-first",
            ],
        ]
    ),
)
def test_mrc_and_budgets_by_default_equal_the_per_record_path_on_hypothesis_traces(
    capsys, monkeypatch, tmp_path_factory, records, variant
):
    folder = tmp_path_factory.mktemp("jsonl")
    jsonl = folder / "trace.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    default, oracle = command_default_and_oracle(
        capsys, monkeypatch, variant[0], str(jsonl), *variant[1:]
    )
    assert default == oracle
    parquet = tmp_path_factory.mktemp("parquet") / "trace.parquet"
    status, _, err = run_cli(capsys, "trace", "import", str(jsonl), "-o", str(parquet))
    assert status == 0, err
    from_parquet, parquet_oracle = command_default_and_oracle(
        capsys, monkeypatch, variant[0], str(parquet), *variant[1:]
    )
    assert from_parquet == parquet_oracle == default  # the digest is the content, not the file


# --- every command names an instance the same way -----------------------------------------------------

IDENTITY_COMMANDS = [
    ["simulate", "--model", "pooled"],
    ["mrc"],
    ["mrc", "--sample-rate", "0.5"],
    ["budgets", "--kv-model", "llama-3.1-8b", "--budgets-gib", "1"],
    ["sweep", "--fleets", "2"],
    ["cost"],
]


def test_every_command_names_the_instance_by_its_content_digest(capsys, tmp_path):
    """``sha256`` is the content digest in every command's report, validate and trace import included, for a trace
    and for the same trace as a pyverify.instance/1 file; the instance file's reports also carry ``instance_sha256``,
    the SHA-256 of its canonical JSON (as certificates name it), which validate and trace import always report."""
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps(
                {
                    "hash_ids": chain,
                    "timestamp": i,
                    "input_length": 512 * len(chain) - 7,
                    "output_length": 3,
                }
            )
            + "\n"
            for i, chain in enumerate([[0, 1], [0, 1, 2], [5], [0], [5, 6], [0, 1, 2, 3]])
        )
    )
    instance = tmp_path / "t.json"
    status, out, err = run_cli(capsys, "trace", "import", str(jsonl), "-o", str(instance), "--json")
    assert status == 0, err
    imported = json.loads(out)
    for path, is_instance in ((jsonl, False), (instance, True)):
        validated = command_json(capsys, "validate", str(path))
        assert validated["sha256"] == imported["sha256"]
        assert validated["instance_sha256"] == imported["instance_sha256"]
        for command, *argv in IDENTITY_COMMANDS:
            found = command_json(capsys, command, str(path), *argv)
            assert found["sha256"] == validated["sha256"], (command, path)
            if is_instance:
                assert (
                    found["instance_sha256"]
                    == validated["instance_sha256"]
                    == imported["instance_sha256"]
                ), command
            else:
                assert "instance_sha256" not in found, (command, path)


@needs_trace
def test_mrc_on_arrays_needs_no_numba(capsys, monkeypatch):
    """The curves compile only where that repays and --verify falls back to the per-record replay, so
    without numba the default mrc still reads the trace as arrays and prints the per-record path's report."""
    import pyverify.sim.kernels as kernels

    argv = [
        str(MOONCAKE_SYNTHETIC),
        "--model",
        "per-host",
        "--fleet",
        "3",
        "--policy",
        "lru",
        "--capacities",
        "50,900",
        "--verify",
    ]
    oracle = command_json(capsys, "mrc", *argv, "--backend", "python")
    with monkeypatch.context() as patch:
        patch.setattr(kernels, "available", lambda: False)
        patch.setattr(traces, "load_described_with", None)
        default = command_json(capsys, "mrc", *argv)
    assert default == oracle and default["verified"] is True
