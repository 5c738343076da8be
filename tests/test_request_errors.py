"""Problems found in a request after its input was read (a prompt too short for its blocks, a timestamp a timed
replay needs) are named as the input file names the request and the field: its line (or row) and its own field
name, not the instance model's ``requests[i].input_tokens`` (which only an instance file writes)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import assert_one_line_error, run_cli

SHORT = "100 tokens cannot fill 72 blocks of 512 tokens"


def short_prompt_file(tmp_path):
    """A Mooncake file whose second request (on line 3: a blank line first) claims 100 tokens for 72 blocks."""
    path = tmp_path / "bad_len.jsonl"
    lines = [
        {"hash_ids": [1], "input_length": 600},
        {"hash_ids": list(range(1, 73)), "input_length": 100},
    ]
    path.write_text(json.dumps(lines[0]) + "\n\n" + json.dumps(lines[1]) + "\n")
    return path


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_a_short_prompt_is_named_by_its_line_and_field(tmp_path, capsys, engine):
    path = short_prompt_file(tmp_path)
    status, out, err = run_cli(
        capsys, "simulate", str(path), "--capacity-tokens", "4096", "--backend", engine
    )
    assert_one_line_error(status, out, err, str(path), f"line 3.input_length: {SHORT}")
    assert "requests[" not in err


def test_a_parquet_trace_names_the_row_and_column(tmp_path, capsys):
    path = short_prompt_file(tmp_path)
    parquet = tmp_path / "bad_len.parquet"
    assert run_cli(capsys, "trace", "import", str(path), "-o", str(parquet))[0] == 0
    status, out, err = run_cli(capsys, "simulate", str(parquet), "--capacity-tokens", "4096")
    assert_one_line_error(status, out, err, str(parquet), f"row 2.input_length: {SHORT}")


def test_an_instance_file_keeps_its_own_words(tmp_path, capsys):
    path = short_prompt_file(tmp_path)
    instance = tmp_path / "bad_len.json"
    assert run_cli(capsys, "trace", "import", str(path), "-o", str(instance))[0] == 0
    status, out, err = run_cli(capsys, "simulate", str(instance), "--capacity-tokens", "4096")
    assert_one_line_error(status, out, err, str(instance), f"requests[1].input_tokens: {SHORT}")


def test_a_timed_replay_of_a_log_without_times_names_the_line(tmp_path, capsys):
    path = tmp_path / "lmcache.jsonl"
    path.write_text('\n{"chunk_hashes": [1, 2], "chunk_size": 256, "seq_len": 300}\n')
    status, out, err = run_cli(capsys, "replay", str(path))
    assert_one_line_error(
        status, out, err, str(path), "line 2.timestamp: a timed replay needs a timestamp"
    )
    assert "requests[" not in err


def test_a_field_the_format_lacks_is_said_so(tmp_path, capsys):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "' + "hello " * 10 + '"}]}\n')
    status, out, err = run_cli(capsys, "replay", str(path))
    assert_one_line_error(status, out, err, str(path), "line 1: a timed replay needs a timestamp")
    assert (
        "this chat JSONL file gives no timestamp pyverify reads" in err and "requests[" not in err
    )


def test_an_engine_cache_names_a_prompt_beyond_its_chain_by_line(tmp_path, capsys):
    path = tmp_path / "long.jsonl"
    path.write_text(
        '{"hash_ids": [1], "input_length": 500}\n\n{"hash_ids": [1, 2], "input_length": 2000}\n'
    )
    status, out, err = run_cli(
        capsys, "simulate", str(path), "--eviction", "vllm", "--capacity", "4"
    )
    assert_one_line_error(
        status, out, err, str(path), "line 3.input_length: 2000 tokens make 3 full blocks of 512"
    )
    assert "requests[" not in err
