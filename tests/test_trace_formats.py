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


# --- 2. Qwen-Bailian (Alibaba, "KVCache in the Wild", ATC'25) ----------------------

#: The two example lines of AIPerf's Bailian page (hash_ids added: the released files carry them), and a second conversation.
BAILIAN = lines(
    {"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 40, "output_length": 132, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]},
    {"chat_id": 160, "parent_chat_id": 159, "timestamp": 62.5, "input_length": 70, "output_length": 80, "type": "text", "turn": 2, "hash_ids": [1, 2, 3, 4, 5]},
    {"chat_id": 161, "parent_chat_id": -1, "timestamp": 63, "input_length": 20, "output_length": 5, "type": "search", "turn": 1, "hash_ids": [1, 9]},
    {"chat_id": 162, "parent_chat_id": 160, "timestamp": 64, "input_length": 90, "output_length": 5, "type": "text", "turn": 3, "hash_ids": [1, 2, 3, 4, 5, 6]},
)


def test_bailian_is_read_with_16_token_blocks_seconds_and_conversations(capsys, tmp_path):
    path = write(tmp_path, BAILIAN)
    loaded = load_described(path)
    assert loaded.format.key == "qwen-bailian-jsonl"
    instance = loaded.instance
    assert instance.block_size_tokens == 16
    assert [item["arrival_ms"] for item in instance.extra] == [61114, 62500, 63000, 64000]
    assert [item["route_key"] for item in instance.extra] == ["conversation-159", "conversation-159", "conversation-161", "conversation-159"]
    assert instance.extra[1]["labels"] == {"chat_id": 160, "parent_chat_id": 159, "type": "text", "turn": 2}
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(f"{path}: Qwen-Bailian JSONL trace, 4 requests"), err
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0, err
    assert (json.loads(out)["hits"], json.loads(out)["misses"]) == (9, 7)
    copy = import_round_trip(capsys, tmp_path, path)
    assert copy.extra == instance.extra and copy.chains == instance.chains and copy.block_size_tokens == 16


def test_bailian_conversations_route_to_one_host(capsys, tmp_path):
    path = write(tmp_path, BAILIAN)
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "per-host", "--routing", "route-key", "--fleet", "4", "--json")
    assert status == 0, err
    # Conversation 159 on one host keeps its 3 + 5 hits; request 3 (another conversation) hits block 1 only if it lands there too.
    assert json.loads(out)["hits"] in (8, 9)

def test_bailian_source_block_size_overrides_16(tmp_path):
    path = write(tmp_path, BAILIAN)
    assert load_described(path, ImportOptions(source_block_size=32)).instance.block_size_tokens == 32


BAILIAN_BAD = [
    ({"turn": "2"}, "line 2.turn: expected a positive integer, got '2'"),
    ({"turn": 0}, "line 2.turn: expected a positive integer"),
    ({"chat_id": 1.5}, "line 2.chat_id: expected an integer from 0 to 2**63-1, got 1.5"),
    ({"parent_chat_id": -2}, "line 2.parent_chat_id: expected an integer from -1"),
    ({"type": 5}, "line 2.type: expected a string, got int"),
    ({"timestamp": "62.5"}, "line 2.timestamp: expected a non-negative number"),
    ({"hash_ids": [1, -2]}, "line 2.hash_ids[1]: block id -2 is negative"),
    ({"hash_ids": [7, 2]}, "line 2.hash_ids[1]: not prefix-closed"),
    ({"timestamp": 1}, "line 2.timestamp: timestamp 1000 is earlier than 61114"),
]


@pytest.mark.parametrize("change, expected", BAILIAN_BAD)
def test_bailian_errors_are_one_line(capsys, tmp_path, change, expected):
    first, second = (json.loads(text) for text in BAILIAN.splitlines()[:2])
    path = write(tmp_path, lines(first, dict(second, **change)))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, expected)


def test_a_bailian_line_without_hash_ids_says_so(capsys, tmp_path):
    path = write(tmp_path, lines({"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 521, "turn": 1}))
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, "line 1: missing field 'hash_ids'")
