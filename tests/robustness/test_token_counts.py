"""Token counts past 2**53: the arrays hold them as float64, where 2**53 + 1 reads as 2**53, so two
traces shared one content digest (a certificate of one verified against the other) and a count past
2**63 broke the Parquet writer. Every reader refuses a count above 2**53 in one line
(pyverify.inputs.model.MAX_TOKEN_COUNT)."""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.columnar.byte_parse import read_mooncake_bytes
from pyverify.inputs.columnar.plain_parse import read_plain_mooncake

from ..helpers import assert_one_line_error, run_cli
from .conftest import record

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402


def mooncake(count: int, key: str = "input_length") -> str:
    record = {"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}
    return json.dumps(dict(record, **{key: count})) + "\n"


def write_as(tmp_path, form: str, count: int, key: str = "input_length"):
    """One request with ``count`` tokens, as a file of ``form``."""
    path = tmp_path / f"t-{count}.{form}"
    if form == "jsonl":
        path.write_text(mooncake(count, key))
    elif form == "parquet":
        pq.write_table(pa.table({"hash_ids": [[1, 2]], key: pa.array([count], pa.int64())}), path)
    elif form == "csv":
        path.write_text(f'hash_ids,{key}\n"[1, 2]",{count}\n')
    else:
        field = "input_tokens" if key == "input_length" else "output_tokens"
        path.write_text(
            json.dumps(
                {
                    "format": "pyverify.instance/1",
                    "name": "t",
                    "hosts": 1,
                    "requests": [{"blocks": [1, 2], field: count}],
                }
            )
        )
    return path


#: The documented bound: every integer up to it is exact in float64.
MAX_TOKEN_COUNT = 2**53
FORMATS = ["jsonl", "parquet", "csv", "json"]
PAST = [MAX_TOKEN_COUNT + 1, 2**63 - 1]


@pytest.mark.parametrize("key", ["input_length", "output_length"])
@pytest.mark.parametrize("form", FORMATS)
def test_the_bound_is_read_and_one_past_it_refused(capsys, tmp_path, form, key):
    at_bound = write_as(tmp_path, form, MAX_TOKEN_COUNT, key)
    status, out, err = run_cli(capsys, "simulate", str(at_bound), "--model", "pooled", "--json")
    assert status == 0, err
    for count in PAST:
        path = write_as(tmp_path, form, count, key)
        status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
        record("token count past 2**53", status == 2 and "Traceback" not in err)
        assert_one_line_error(status, out, err, path, str(count))


def test_two_traces_never_share_a_digest(capsys, tmp_path):
    """9007199254740992 and 9007199254740993 tokens: the second is refused, so no certificate of
    the first (list or packed) verifies against it, and certify never refuses its own
    certificate."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(mooncake(MAX_TOKEN_COUNT) * 3)
    second.write_text(mooncake(MAX_TOKEN_COUNT + 1) * 3)
    for form in ("lists", "packed"):
        cert = tmp_path / f"{form}.json"
        status, _, err = run_cli(
            capsys,
            "certify",
            str(first),
            "--model",
            "pooled",
            "--capacity",
            "1",
            "--witness-form",
            form,
            "-o",
            str(cert),
        )
        assert status == 0, err
        assert run_cli(capsys, "verify", str(cert), str(first))[0] == 0
        status, out, err = run_cli(capsys, "verify", str(cert), str(second))
        assert status == 2 and "VERIFIED" not in out and "more than 2**53" in err
    status, out, err = run_cli(
        capsys, "certify", str(second), "--model", "pooled", "-o", str(tmp_path / "b.cert.json")
    )
    assert_one_line_error(status, out, err, second, "more than 2**53")


def test_importing_2_63_minus_1_tokens_to_parquet_is_one_line(capsys, tmp_path):
    source = write_as(tmp_path, "jsonl", 2**63 - 1)
    target = tmp_path / "t.parquet"
    status, out, err = run_cli(capsys, "trace", "import", str(source), "-o", str(target))
    assert_one_line_error(status, out, err, source, "more than 2**53")
    assert not target.exists()


@pytest.mark.parametrize("count", PAST + [10**17 + 1])
def test_the_fast_parsers_leave_counts_past_the_bound_to_the_strict_reader(count):
    data = mooncake(count).encode()
    assert read_plain_mooncake(data, 10**6) is None
    assert read_mooncake_bytes(data, 10**6) is None  # None as well without numba


def test_the_bound_is_the_instance_schemas():
    from pyverify.inputs.model import MAX_TOKEN_COUNT as bound, instance_schema

    fields = instance_schema()["properties"]["requests"]["items"]["properties"]
    assert bound == MAX_TOKEN_COUNT == fields["input_tokens"]["maximum"]
    assert bound == fields["output_tokens"]["maximum"]
