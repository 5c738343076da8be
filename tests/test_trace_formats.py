"""The traces people have (issue 23): each format on small files written from its public documentation.

Every format must validate (naming the format), simulate and convert, and every
error is one line naming the file and the line or field.
"""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.load import load_described
from pyverify.inputs.model import load_instance
from pyverify.inputs.records import ImportOptions

from .helpers import assert_one_line_error, run_cli


def lines(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def write(tmp_path, text: str, name: str = "trace.jsonl"):
    path = tmp_path / name
    path.write_text(text)
    return path


def import_round_trip(capsys, tmp_path, path, *flags):
    """``trace import`` writes an instance that reads back as the same chains and block size."""
    out = tmp_path / "x.json"
    status, stdout, err = run_cli(capsys, "trace", "import", str(path), "-o", str(out), *flags)
    assert status == 0, err
    loaded = load_instance(out)
    return loaded


# --- 1. per-record block_size (kvcache-simulator's own input format) -------------

#: kvcache-simulator's README example line, and one more request sharing its first block.
KVSIM = lines({"block_size": 64, "hash_ids": [2001, 2002], "input_length": 128},
              {"block_size": 64, "hash_ids": [2001, 2003], "input_length": 100})


def test_kvcache_simulator_block_size_is_read_per_record(capsys, tmp_path):
    path = write(tmp_path, KVSIM)
    loaded = load_described(path)
    assert loaded.format.key == "kvcache-simulator-jsonl"
    assert loaded.instance.block_size_tokens == 64
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(f"{path}: kvcache-simulator JSONL trace, 2 requests"), err
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["hits"] == 1 and result["misses"] == 3
    assert import_round_trip(capsys, tmp_path, path).block_size_tokens == 64


def test_records_without_block_size_share_the_traces(tmp_path):
    path = write(tmp_path, lines({"hash_ids": [1, 2], "input_length": 100}, {"block_size": 64, "hash_ids": [1, 3], "input_length": 70}))
    assert load_described(path).instance.block_size_tokens == 64


def test_mixed_block_sizes_are_refused_naming_the_line(capsys, tmp_path):
    path = write(tmp_path, lines({"block_size": 64, "hash_ids": [1], "input_length": 10}, {"block_size": 32, "hash_ids": [1, 2], "input_length": 40}))
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, "line 2.block_size: 32 tokens, but line 1 says 64: a trace has one block size")


@pytest.mark.parametrize("value", [0, -1, 1.5, "64", True, 2**40])
def test_a_bad_block_size_is_one_line(capsys, tmp_path, value):
    path = write(tmp_path, lines({"block_size": value, "hash_ids": [1], "input_length": 10}))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, "line 1.block_size: expected a whole number of tokens")


def test_source_block_size_for_files_that_do_not_say(capsys, tmp_path):
    path = write(tmp_path, lines({"hash_ids": [1, 2], "input_length": 128}))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, "128 tokens cannot fill 2 blocks of 512 tokens")
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--source-block-size", "64", "--json")
    assert status == 0 and json.loads(out)["misses"] == 2, err
    assert load_described(path, ImportOptions(source_block_size=64)).instance.block_size_tokens == 64
    assert load_described(path).instance.block_size_tokens == 512


def test_source_block_size_must_agree_with_the_file(capsys, tmp_path):
    path = write(tmp_path, KVSIM)
    status, out, err = run_cli(capsys, "validate", str(path), "--source-block-size", "32")
    assert_one_line_error(status, out, err, path, "line 1.block_size: 64 tokens, but --source-block-size says 32")


def test_source_block_size_is_only_for_hash_id_traces(capsys, tmp_path):
    path = write(tmp_path, lines({"prompt_token_ids": list(range(40))}))
    status, out, err = run_cli(capsys, "validate", str(path), "--source-block-size", "32")
    assert status == 2 and out == "" and err.startswith("pyverify: error: --source-block-size: only for hash-id traces")


def test_mooncake_descriptions_are_unchanged_at_the_default_size(tmp_path):
    path = write(tmp_path, lines({"timestamp": 0, "input_length": 1000, "hash_ids": [1, 2]}))
    instance = load_described(path).instance
    assert instance.description == f"Imported from the Mooncake JSONL trace {path.name} (1 requests)."
