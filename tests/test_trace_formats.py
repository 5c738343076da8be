"""The traces people have (issue 23): each format on small files written from its public documentation.

Every format must validate (naming the format), simulate and convert, and every
error is one line naming the file and the line or field.
"""

from __future__ import annotations

import json

import pytest

from pyverify.inputs.load import load_described
from pyverify.inputs.model import first_prefix_violation, load_instance
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
KVSIM = lines(
    {"block_size": 64, "hash_ids": [2001, 2002], "input_length": 128},
    {"block_size": 64, "hash_ids": [2001, 2003], "input_length": 100},
)


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
    path = write(
        tmp_path,
        lines(
            {"hash_ids": [1, 2], "input_length": 100},
            {"block_size": 64, "hash_ids": [1, 3], "input_length": 70},
        ),
    )
    assert load_described(path).instance.block_size_tokens == 64


def test_mixed_block_sizes_are_refused_naming_the_line(capsys, tmp_path):
    path = write(
        tmp_path,
        lines(
            {"block_size": 64, "hash_ids": [1], "input_length": 10},
            {"block_size": 32, "hash_ids": [1, 2], "input_length": 40},
        ),
    )
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(
        status,
        out,
        err,
        path,
        "line 2.block_size: 32 tokens, but line 1 says 64: a trace has one block size",
    )


@pytest.mark.parametrize("value", [0, -1, 1.5, "64", True, 2**40])
def test_a_bad_block_size_is_one_line(capsys, tmp_path, value):
    path = write(tmp_path, lines({"block_size": value, "hash_ids": [1], "input_length": 10}))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(
        status, out, err, path, "line 1.block_size: expected a whole number of tokens"
    )


def test_source_block_size_for_files_that_do_not_say(capsys, tmp_path):
    path = write(tmp_path, lines({"hash_ids": [1, 2], "input_length": 128}))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, "128 tokens cannot fill 2 blocks of 512 tokens")
    status, out, err = run_cli(
        capsys, "simulate", str(path), "--model", "pooled", "--source-block-size", "64", "--json"
    )
    assert status == 0 and json.loads(out)["misses"] == 2, err
    assert (
        load_described(path, ImportOptions(source_block_size=64)).instance.block_size_tokens == 64
    )
    assert load_described(path).instance.block_size_tokens == 512


def test_source_block_size_must_agree_with_the_file(capsys, tmp_path):
    path = write(tmp_path, KVSIM)
    status, out, err = run_cli(capsys, "validate", str(path), "--source-block-size", "32")
    assert_one_line_error(
        status, out, err, path, "line 1.block_size: 64 tokens, but --source-block-size says 32"
    )


def test_source_block_size_is_only_for_hash_id_traces(capsys, tmp_path):
    path = write(tmp_path, lines({"prompt_token_ids": list(range(40))}))
    status, out, err = run_cli(capsys, "validate", str(path), "--source-block-size", "32")
    assert (
        status == 2
        and out == ""
        and err.startswith("pyverify validate: error: --source-block-size: only for hash-id traces")
    )


def test_mooncake_descriptions_are_unchanged_at_the_default_size(tmp_path):
    path = write(tmp_path, lines({"timestamp": 0, "input_length": 1000, "hash_ids": [1, 2]}))
    instance = load_described(path).instance
    assert (
        instance.description == f"Imported from the Mooncake JSONL trace {path.name} (1 requests)."
    )


# --- 2. Qwen-Bailian (Alibaba, "KVCache in the Wild", ATC'25) ----------------------

#: The two example lines of AIPerf's Bailian page (hash_ids added: the released files carry them), and a second conversation.
BAILIAN = lines(
    {
        "chat_id": 159,
        "parent_chat_id": -1,
        "timestamp": 61.114,
        "input_length": 40,
        "output_length": 132,
        "type": "text",
        "turn": 1,
        "hash_ids": [1, 2, 3],
    },
    {
        "chat_id": 160,
        "parent_chat_id": 159,
        "timestamp": 62.5,
        "input_length": 70,
        "output_length": 80,
        "type": "text",
        "turn": 2,
        "hash_ids": [1, 2, 3, 4, 5],
    },
    {
        "chat_id": 161,
        "parent_chat_id": -1,
        "timestamp": 63,
        "input_length": 20,
        "output_length": 5,
        "type": "search",
        "turn": 1,
        "hash_ids": [1, 9],
    },
    {
        "chat_id": 162,
        "parent_chat_id": 160,
        "timestamp": 64,
        "input_length": 90,
        "output_length": 5,
        "type": "text",
        "turn": 3,
        "hash_ids": [1, 2, 3, 4, 5, 6],
    },
)


def test_bailian_is_read_with_16_token_blocks_seconds_and_conversations(capsys, tmp_path):
    path = write(tmp_path, BAILIAN)
    loaded = load_described(path)
    assert loaded.format.key == "qwen-bailian-jsonl"
    instance = loaded.instance
    assert instance.block_size_tokens == 16
    assert [item["arrival_ms"] for item in instance.extra] == [61114, 62500, 63000, 64000]
    assert [item["route_key"] for item in instance.extra] == [
        "conversation-159",
        "conversation-159",
        "conversation-161",
        "conversation-159",
    ]
    assert instance.extra[1]["labels"] == {
        "chat_id": 160,
        "parent_chat_id": 159,
        "type": "text",
        "turn": 2,
    }
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(f"{path}: Qwen-Bailian JSONL trace, 4 requests"), err
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0, err
    assert (json.loads(out)["hits"], json.loads(out)["misses"]) == (9, 7)
    copy = import_round_trip(capsys, tmp_path, path)
    assert (
        copy.extra == instance.extra
        and copy.chains == instance.chains
        and copy.block_size_tokens == 16
    )


def test_bailian_to_parquet_keeps_its_labels_notes_and_format(capsys, tmp_path):
    """The Parquet form holds what the instance form holds (the labels as label.KEY columns, read back), and
    trace import says the same about either: the format and the reader's notes."""
    pytest.importorskip("pyarrow")
    path = write(tmp_path, BAILIAN)
    parquet = tmp_path / "bailian.parquet"
    status, out, err = run_cli(capsys, "trace", "import", str(path), "-o", str(parquet))
    assert status == 0, err
    assert "valid Qwen-Bailian JSONL trace" in out and "note: timestamps are seconds" in out
    status, out, err = run_cli(
        capsys, "trace", "import", str(path), "-o", str(tmp_path / "again.parquet"), "--json"
    )
    summary = json.loads(out)
    assert summary["format"] == "qwen-bailian-jsonl" and any(
        "labels" in note for note in summary["notes"]
    )
    back = load_described(parquet).instance
    assert (
        back.extra == load_described(path).instance.extra
    )  # labels, route keys, times and lengths


def test_a_token_log_to_parquet_says_what_it_left_out(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    path = write(
        tmp_path, lines({"prompt_token_ids": list(range(40))}, {"prompt_token_ids": [1, 2, 3]})
    )
    status, out, err = run_cli(
        capsys, "trace", "import", str(path), "-o", str(tmp_path / "t.parquet")
    )
    assert status == 0, err
    assert "valid token-id JSONL log" in out and "note: left out 1 request(s)" in out


def test_bailian_conversations_route_to_one_host(capsys, tmp_path):
    path = write(tmp_path, BAILIAN)
    status, out, err = run_cli(
        capsys,
        "simulate",
        str(path),
        "--model",
        "per-host",
        "--routing",
        "route-key",
        "--fleet",
        "4",
        "--json",
    )
    assert status == 0, err
    # Conversation 159 on one host keeps its 3 + 5 hits; request 3 (another conversation) hits block 1 only if it lands there too.
    assert json.loads(out)["hits"] in (8, 9)


def test_bailian_source_block_size_overrides_16(tmp_path):
    path = write(tmp_path, BAILIAN)
    assert (
        load_described(path, ImportOptions(source_block_size=32)).instance.block_size_tokens == 32
    )


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
    # bounded in seconds as the milliseconds they become (an instance holds arrival_ms up to 1e18)
    (
        {"timestamp": 1e17},
        "line 2.timestamp: expected a non-negative number of seconds up to 1e+15, got 1e+17",
    ),
]


def test_the_latest_bailian_timestamp_imports_to_an_instance_validate_accepts(capsys, tmp_path):
    first = json.loads(BAILIAN.splitlines()[0])
    path = write(tmp_path, lines(dict(first, timestamp=1e15)))
    out = tmp_path / "copy.json"
    assert run_cli(capsys, "trace", "import", str(path), "-o", str(out))[0] == 0
    status, _, err = run_cli(capsys, "validate", str(out))
    assert status == 0, err


@pytest.mark.parametrize("change, expected", BAILIAN_BAD)
def test_bailian_errors_are_one_line(capsys, tmp_path, change, expected):
    first, second = (json.loads(text) for text in BAILIAN.splitlines()[:2])
    path = write(tmp_path, lines(first, dict(second, **change)))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, expected)


def test_a_bailian_line_without_hash_ids_says_so(capsys, tmp_path):
    path = write(
        tmp_path,
        lines(
            {
                "chat_id": 159,
                "parent_chat_id": -1,
                "timestamp": 61.114,
                "input_length": 521,
                "turn": 1,
            }
        ),
    )
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, "line 1: missing field 'hash_ids'")


# --- 3. RAGPulse (flashserve/RAGPulse) ------------------------------------------------

#: The README's example record (one passage dropped for brevity) and a second request sharing its system prompt and first passage.
RAGPULSE = lines(
    {
        "timestamp": "27",
        "input_length": 3861,
        "output_length": 127,
        "hash_ids": {
            "sys_prompt": [8325, 8326, 11575],
            "passages_ids": [6123, 7239, 6124],
            "history": [15215],
            "web_search": [20319, 20320],
            "user_input": [23648],
        },
        "session_id": "1758081660427-xa8rbsd2uco1",
    },
    {
        "timestamp": "31",
        "input_length": 2000,
        "output_length": 50,
        "hash_ids": {
            "sys_prompt": [8325, 8326, 11575],
            "passages_ids": [6123, 1167],
            "history": [],
            "web_search": [],
            "user_input": [23649],
        },
        "session_id": "s2",
    },
)
#: Side files as the repository's data/ holds them: one chunk id and its token_length per line.
SYS_PROMPT = lines(
    {"sys_prompt_id": 8325, "token_length": 512},
    {"sys_prompt_id": 8326, "token_length": 512},
    {"sys_prompt_id": 11575, "token_length": 437},
)
OTHERS = lines(
    {"passages_id": 6123, "token_length": 300},
    {"passages_id": 7239, "token_length": 200},
    {"passages_id": 6124, "token_length": 100},
    {"passages_id": 1167, "token_length": 50},
    {"history_id": 15215, "token_length": 40},
    {"web_search_id": 20319, "token_length": 500},
    {"web_search_id": 20320, "token_length": 5},
    {"user_input_id": 23648, "token_length": 12},
    {"user_input_id": 23649, "token_length": 9},
)


def test_ragpulse_makes_one_prefix_chain_per_request(capsys, tmp_path):
    path = write(tmp_path, RAGPULSE)
    loaded = load_described(path)
    assert loaded.format.key == "ragpulse-jsonl"
    first, second = loaded.instance.chains
    assert len(first) == 10 and len(second) == 6
    assert (
        first[:4] == second[:4] and first[4] != second[4]
    )  # shared: 3 system-prompt chunks and passage 6123
    assert [item["arrival_ms"] for item in loaded.instance.extra] == [27000, 31000]
    assert loaded.instance.extra[1]["route_key"] == "s2"
    assert loaded.instance.block_size_tokens is None
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(f"{path}: RAGPulse trace, 2 requests"), err
    # No block size: the report says so (and how to weigh the chunks), not "None"
    assert (
        "block_size_tokens not given in the file" in " ".join(out.split())
        and "--rag-lengths" in out
    )
    assert "None" not in out
    status, out, err = run_cli(capsys, "trace", "import", str(path), "-o", str(tmp_path / "r.json"))
    assert status == 0 and "block_size_tokens not given in the file" in " ".join(out.split()), err
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0 and (json.loads(out)["hits"], json.loads(out)["misses"]) == (4, 12), err


def test_ragpulse_side_files_weigh_each_block(capsys, tmp_path):
    path = write(tmp_path, RAGPULSE)
    sides = [
        write(tmp_path, SYS_PROMPT, "1_sys_prompt.jsonl"),
        write(tmp_path, OTHERS, "2_others.jsonl"),
    ]
    flags = [arg for side in sides for arg in ("--rag-lengths", str(side))]
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json", *flags)
    assert status == 0, err
    measured = json.loads(out)["measured"]
    assert measured["token_hits"] == 512 + 512 + 437 + 300
    assert measured["tokens"] == (1461 + 600 + 40 + 505 + 12) + (1461 + 350 + 9)
    copy = import_round_trip(capsys, tmp_path, path, *flags)
    assert copy.block_size_tokens == 512 and copy.extra[1]["block_tokens"] == [
        512,
        512,
        437,
        300,
        50,
        9,
    ]


def test_ragpulse_component_order_is_overridable(tmp_path):
    path = write(tmp_path, RAGPULSE)
    order = ("user_input", "web_search", "history", "passages_ids", "sys_prompt")
    first, second = load_described(path, ImportOptions(rag_order=order)).instance.chains
    assert first[0] != second[0]  # user inputs first: nothing shared


RAGPULSE_BAD = [
    (
        {"hash_ids": {"sys_prompt": [1], "extra": [2]}},
        "line 2.hash_ids.extra: a component the order does not name",
    ),
    (
        {"hash_ids": {"sys_prompt": "1"}},
        "line 2.hash_ids.sys_prompt: expected a list of chunk ids, got str",
    ),
    ({"hash_ids": {"sys_prompt": [1, -1]}}, "line 2.hash_ids.sys_prompt[1]: expected a chunk id"),
    ({"hash_ids": {"sys_prompt": []}}, "line 2.hash_ids: no chunk in any component"),
    ({"timestamp": "soon"}, "line 2.timestamp: expected seconds as a number or a string of digits"),
    ({"timestamp": "NaN"}, "line 2.timestamp: expected seconds"),
    ({"timestamp": "20"}, "line 2.timestamp: timestamp 20000 is earlier than 27000"),
    ({"session_id": 5}, "line 2.session_id: expected a string, got int"),
]


@pytest.mark.parametrize("change, expected", RAGPULSE_BAD)
def test_ragpulse_errors_are_one_line(capsys, tmp_path, change, expected):
    first, second = (json.loads(text) for text in RAGPULSE.splitlines())
    path = write(tmp_path, lines(first, dict(second, **change)))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, expected)


@pytest.mark.parametrize(
    "side, expected",
    [
        (lines({"passages_id": 6123}), "line 1: missing field 'token_length'"),
        (
            lines({"passages_id": 6123, "token_length": 0}),
            "line 1.token_length: expected a whole number of tokens",
        ),
        (
            lines({"passages_id": "6123", "token_length": 5}),
            "line 1.passages_id: expected a chunk id",
        ),
        (
            lines({"a": 1, "b": 2, "token_length": 5}),
            "line 1: expected one chunk id field beside 'token_length', got 2",
        ),
        (
            lines({"passages_id": 1, "token_length": 5}, {"passages_id": 1, "token_length": 6}),
            "line 2.token_length: chunk 1 has 6 tokens here but 5",
        ),
    ],
)
def test_ragpulse_side_file_errors_name_the_side_file(capsys, tmp_path, side, expected):
    path = write(tmp_path, RAGPULSE)
    lengths = write(tmp_path, side, "side.jsonl")
    status, out, err = run_cli(capsys, "validate", str(path), "--rag-lengths", str(lengths))
    assert_one_line_error(status, out, err, lengths, expected)


def test_a_chunk_missing_from_the_side_files_is_named(capsys, tmp_path):
    path = write(tmp_path, RAGPULSE)
    lengths = write(tmp_path, SYS_PROMPT, "side.jsonl")
    status, out, err = run_cli(capsys, "validate", str(path), "--rag-lengths", str(lengths))
    assert_one_line_error(
        status, out, err, path, "line 1.hash_ids.passages_ids[0]: chunk 6123 has no token_length"
    )


def test_ragpulse_flags_are_refused_elsewhere_and_block_size_here(capsys, tmp_path):
    mooncake = write(tmp_path, lines({"hash_ids": [1]}), "m.jsonl")
    status, out, err = run_cli(capsys, "validate", str(mooncake), "--rag-order", "sys_prompt")
    assert status == 2 and err.startswith(
        "pyverify validate: error: --rag-order: only for RAGPulse traces"
    )
    path = write(tmp_path, RAGPULSE)
    status, out, err = run_cli(capsys, "validate", str(path), "--block-size", "1024")
    assert status == 2 and "cannot be re-blocked" in err
    status, out, err = run_cli(
        capsys, "validate", str(path), "--rag-order", "sys_prompt,sys_prompt"
    )
    assert status == 2 and err.startswith(
        "pyverify validate: error: --rag-order: 'sys_prompt' is named twice"
    )


# --- 4. LMCache lookup-hash logs ---------------------------------------------------

LMCACHE = lines(
    {"chunk_hashes": [-4120913748016316416, 881902136524219392], "chunk_size": 256, "seq_len": 300},
    {"chunk_hashes": [-4120913748016316416, 77, "a3f9"], "chunk_size": 256, "seq_len": 700},
)


def test_lmcache_chunks_are_blocks(capsys, tmp_path):
    path = write(tmp_path, LMCACHE)
    loaded = load_described(path)
    assert loaded.format.key == "lmcache-jsonl"
    assert (
        loaded.instance.chains == ((0, 1), (0, 2, 3)) and loaded.instance.block_size_tokens == 256
    )
    assert [item["input_tokens"] for item in loaded.instance.extra] == [300, 700]
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(f"{path}: LMCache lookup-hash log, 2 requests"), err
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0, err
    result = json.loads(out)
    assert (result["hits"], result["misses"]) == (1, 4) and result["measured"]["token_hits"] == 256
    assert import_round_trip(capsys, tmp_path, path).chains == loaded.instance.chains


LMCACHE_BAD = [
    (
        {"chunk_size": 128},
        "line 2.chunk_size: 128 tokens, but line 1 says 256: a log has one chunk size",
    ),
    ({"chunk_size": 0}, "line 2.chunk_size: expected a whole number of tokens"),
    (
        {"seq_len": 512},
        "line 2.seq_len: expected more than 512 tokens for 3 chunks of 256, got 512",
    ),
    ({"seq_len": "700"}, "line 2.seq_len: expected more than 512 tokens"),
    (
        {"chunk_hashes": [1.5]},
        "line 2.chunk_hashes[0]: expected an integer or a string hash, got float",
    ),
    (
        {"chunk_hashes": [2**64]},
        "line 2.chunk_hashes[0]: hash 18446744073709551616 is outside 64 bits",
    ),
    (
        {"chunk_hashes": [""]},
        "line 2.chunk_hashes[0]: expected a hash of 1 to 128 characters, got 0",
    ),
    ({"chunk_hashes": [881902136524219392, 5]}, "line 2.chunk_hashes[0]: not prefix-closed"),
    ({"chunk_hashes": []}, "line 2.chunk_hashes: empty"),
]


@pytest.mark.parametrize("change, expected", LMCACHE_BAD)
def test_lmcache_errors_are_one_line(capsys, tmp_path, change, expected):
    first, second = (json.loads(text) for text in LMCACHE.splitlines())
    path = write(tmp_path, lines(first, dict(second, **change)))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, expected)


def test_lmcache_without_a_chunk_size_asks_for_the_flag(capsys, tmp_path):
    """A chunk size is never guessed: a log that gives none (LMCache's own records none) needs --source-block-size."""
    path = write(tmp_path, lines({"chunk_hashes": [1], "seq_len": 10}))
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(
        status, out, err, path, "line 1: no chunk_size on any line (LMCache's own log"
    )
    assert "--source-block-size" in err
    assert run_cli(capsys, "validate", str(path), "--source-block-size", "256")[0] == 0


def test_lmcache_a_later_chunk_size_checks_the_lines_before_it(capsys, tmp_path):
    path = write(
        tmp_path,
        lines(
            {"chunk_hashes": ["0x1", "0x2", "0x3"], "seq_len": 300},
            {"chunk_hashes": ["0x1"], "chunk_size": 256},
        ),
    )
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(
        status,
        out,
        err,
        path,
        "line 1.seq_len: expected more than 512 tokens for 3 chunks of 256, got 300",
    )


def test_lmcache_seq_len_is_optional(tmp_path):
    path = write(
        tmp_path,
        lines(
            {"chunk_hashes": [1, 2], "chunk_size": 256},
            {"chunk_hashes": [1], "chunk_size": 256, "seq_len": 9},
        ),
    )
    assert load_described(path).instance.extra == ({}, {"input_tokens": 9})


# LMCache's published log (lmcache/v1/lookup_client/record_strategies/file_hash.py): hex hashes of 64 bits, written
# by hex() after taking a negative hash modulo 2**64; time.time() seconds; no chunk size. Written here by hand.
LMCACHE_PUBLISHED = lines(
    {"timestamp": 1733900000.25, "lookup_id": "req-1", "chunk_hashes": ["0x1f", hex(-5 % 2**64)]},
    {
        "timestamp": 1733900001.5,
        "lookup_id": "req-2",
        "chunk_hashes": ["0x1f", hex(-5 % 2**64), "0xabc"],
        "seq_len": 700,
        "chunk_size": 256,
        "shapes": [[32, 2, 256, 8, 128]],
        "dtypes": ["bfloat16"],
    },
    {
        "chunk_hashes": [31, -5, 9],
        "chunk_size": 256,
        "seq_len": 600,
    },  # the older form: the same hashes as integers
)


def test_lmcache_published_form_hex_hashes_and_chunk_bytes(capsys, tmp_path):
    path = write(tmp_path, LMCACHE_PUBLISHED)
    loaded = load_described(path)
    assert loaded.format.key == "lmcache-jsonl" and loaded.instance.block_size_tokens == 256
    assert loaded.instance.chains == (
        (0, 1),
        (0, 1, 2),
        (0, 1, 3),
    )  # 0x1f is 31, and -5 is its 64-bit hex
    assert [item.get("arrival_ms") for item in loaded.instance.extra] == [
        1733900000250,
        1733900001500,
        None,
    ]
    per_chunk = 32 * 2 * 256 * 8 * 128 * 2  # elements of the shape x 2 bytes of bfloat16
    assert any(
        f"a chunk's KV is {per_chunk} bytes" in note
        and f"{per_chunk // 256} bytes per token" in note
        for note in loaded.notes
    )
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0 and (json.loads(out)["hits"], json.loads(out)["misses"]) == (4, 4), err


LMCACHE_SHAPES_BAD = [
    ({"shapes": [[2, 3]]}, "line 1: gives shapes without dtypes"),
    (
        {"shapes": [[2, 3]], "dtypes": ["float99"]},
        "line 1.dtypes[0]: 'float99' is not a dtype pyverify knows",
    ),
    (
        {"shapes": [[2, 0]], "dtypes": "float16"},
        "line 1.shapes[0]: expected 1 to 8 positive dimensions",
    ),
    (
        {"shapes": [[2, 3], [4]], "dtypes": ["float16"]},
        "line 1.dtypes: expected a dtype name, or a list of 2",
    ),
]


@pytest.mark.parametrize("change, expected", LMCACHE_SHAPES_BAD)
def test_lmcache_bad_shapes_and_dtypes_are_one_line(capsys, tmp_path, change, expected):
    path = write(tmp_path, lines(dict({"chunk_hashes": ["0x1"], "chunk_size": 16}, **change)))
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, expected)


def test_lmcache_chunks_of_two_sizes_in_bytes_are_refused(capsys, tmp_path):
    first = {"chunk_hashes": ["0x1"], "chunk_size": 16, "shapes": [[4]], "dtypes": "float16"}
    path = write(tmp_path, lines(first, dict(first, chunk_hashes=["0x1", "0x2"], dtypes="float32")))
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(
        status, out, err, path, "line 2.shapes: 16 bytes per chunk, but line 1 gives 8"
    )


# --- 5. vLLM KV events (vllm/distributed/kv_events.py), recorded to JSONL --------------


def stored(hashes, parent, block_size=4, medium="GPU"):
    return {
        "type": "BlockStored",
        "block_hashes": hashes,
        "parent_block_hash": parent,
        "token_ids": list(range(block_size * len(hashes))),
        "block_size": block_size,
        "lora_id": None,
        "medium": medium,
    }


KV_EVENTS = lines(
    {"ts": 1718000000.5, "events": [stored([101, 102], None)], "data_parallel_rank": 0},
    {
        "ts": 1718000001.0,
        "events": [
            stored([103], 102),
            {"type": "BlockRemoved", "block_hashes": [101], "medium": "GPU"},
        ],
        "data_parallel_rank": 0,
    },
    {
        "ts": 1718000002.0,
        "events": [stored([104, 105], 102), stored([9], None, medium="CPU")],
        "data_parallel_rank": 1,
    },
)


def test_kv_events_are_read_as_an_engine_log(capsys, tmp_path):
    path = write(tmp_path, KV_EVENTS)
    loaded = load_described(path)
    assert loaded.format.key == "vllm-kv-events"
    instance = loaded.instance
    assert instance.chains == ((0, 1), (0, 1, 2), (0, 1, 3, 4))  # each stored run after its prefix
    assert (
        instance.routing == (0, 0, 1)
        and instance.fleet_size == 2
        and instance.block_size_tokens == 4
    )
    assert [item["arrival_ms"] for item in instance.extra] == [
        1718000000500,
        1718000001000,
        1718000002000,
    ]
    assert any(
        "held at most 3 blocks at once on one rank" in note for note in loaded.notes
    )  # rank 0: 101,102 +103 (-101)
    assert any("1 BlockStored events of another medium" in note for note in loaded.notes)
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 0 and out.startswith(f"{path}: vLLM KV-event log, 3 requests"), err
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0, err
    assert (json.loads(out)["hits"], json.loads(out)["misses"]) == (
        4,
        5,
    )  # the prefixes hit; the stored blocks miss
    assert import_round_trip(capsys, tmp_path, path).routing == (0, 0, 1)


def test_bare_events_one_per_line(tmp_path):
    path = write(
        tmp_path,
        lines(
            stored([1, 2], None), stored([3], 2), {"type": "AllBlocksCleared"}, stored([1], None)
        ),
    )
    loaded = load_described(path)
    assert loaded.format.key == "vllm-kv-events" and loaded.instance.chains == (
        (0, 1),
        (0, 1, 2),
        (0,),
    )
    assert loaded.instance.routing is None


def test_a_parent_before_the_log_began_starts_the_chain(tmp_path):
    path = write(tmp_path, lines(stored([5, 6], 999), stored([7], 6)))
    loaded = load_described(path)
    # id 0 is hash 999, never stored; id 1 stands for the unseen prefix ending at it, the chains' root
    assert loaded.instance.chains == ((1, 2, 3), (1, 2, 3, 4))
    assert any(
        "1 events store blocks under a parent not stored earlier" in note for note in loaded.notes
    )


def test_a_log_recorded_mid_run_gives_prefix_closed_chains_every_command_reads(capsys, tmp_path):
    """Block 10 is first stored under parent 5, which the log has not stored (the recording began mid-run);
    then 5 is stored, and 10 again under it. Block 10 keeps one parent (the unseen prefix), so the chains are
    prefix-closed: validate says so truthfully, the imported instance validates, and certify runs."""
    path = write(tmp_path, lines(stored([10, 11], 5), stored([5], None), stored([10], 5)))
    loaded = load_described(path)
    chains = loaded.instance.chains
    assert chains[2] == chains[0][:2]  # block 10 again: the first request's chain up to it
    assert first_prefix_violation(chains) is None
    copy = tmp_path / "copy.json"
    status, out, err = run_cli(capsys, "trace", "import", str(path), "-o", str(copy))
    assert status == 0, err
    assert run_cli(capsys, "validate", str(copy))[0] == 0
    status, out, err = run_cli(capsys, "certify", str(path), "--capacity", "2", "--model", "pooled")
    assert status == 0 and "Traceback" not in err, err


KV_EVENTS_BAD = [
    (
        stored([103], 101, block_size=8),
        "line 2.block_size: 8 tokens, but line 1 says 4: a log has one block size",
    ),
    (
        dict(stored([103], 102), token_ids=[1, 2]),
        "line 2.token_ids: 2 token ids for 1 blocks of 4 tokens",
    ),
    (
        stored([102], None),
        "line 2.block_hashes[0]: this block was stored under another parent earlier",
    ),
    (stored([], 102), "line 2.block_hashes: empty"),
    (stored([1.5], 102), "line 2.block_hashes[0]: expected an integer or a string hash, got float"),
    (
        {"type": "BlockEvicted", "block_hashes": [1]},
        "line 2.type: expected one of BlockStored, BlockRemoved, AllBlocksCleared",
    ),
    ({"type": "BlockRemoved"}, "line 2: missing field 'block_hashes'"),
    (
        {k: v for k, v in stored([103], 102).items() if k != "block_size"},
        "line 2: missing field 'block_size'",
    ),
]


@pytest.mark.parametrize("event, expected", KV_EVENTS_BAD)
def test_kv_event_errors_are_one_line(capsys, tmp_path, event, expected):
    path = write(tmp_path, lines(stored([101, 102], None), event))
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, expected)


@pytest.mark.parametrize(
    "batch, expected",
    [
        ({"ts": "soon", "events": []}, "line 2.ts: expected a non-negative number of seconds"),
        ({"events": []}, "line 2: missing field 'ts'"),
        ({"ts": 1718000003, "events": {}}, "line 2.events: expected a list of events, got dict"),
        (
            {"ts": 1718000003, "events": [[1, 2]], "data_parallel_rank": 0},
            "line 2.events[0]: expected an event object, got list (the array form is not read)",
        ),
        (
            {"ts": 1718000003, "events": [], "data_parallel_rank": 70000},
            "line 2.data_parallel_rank: host 70000 out of range",
        ),
        ({"ts": 1718000003, "events": []}, "line 2: gives no data_parallel_rank but line 1 does"),
        (
            {"ts": 1, "events": [], "data_parallel_rank": 0},
            "line 2.ts: 1 is earlier than 1718000000.5 on line 1: the file is not in time order",
        ),
    ],
)
def test_kv_event_batch_errors_are_one_line(capsys, tmp_path, batch, expected):
    path = write(
        tmp_path,
        lines(
            {"ts": 1718000000.5, "events": [stored([101, 102], None)], "data_parallel_rank": 0},
            batch,
        ),
    )
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, expected)


def removed(hashes):
    return {"type": "BlockRemoved", "block_hashes": hashes, "medium": "GPU"}


#: What vLLM's pool of 2 blocks does, request by request (pyverify.cache.vllm's rules): the tail of a freed
#: request is evicted first, so storing block 3 evicts block 2, and re-storing 2 after a hit on 1 evicts 3.
ENGINE_RUN = [
    {"ts": 1.0, "events": [stored([1, 2], None)]},
    {"ts": 2.0, "events": [removed([2]), stored([3], None)]},
    {"ts": 3.0, "events": [removed([3]), stored([2], 1)]},
]


def test_check_events_agrees_with_a_run_of_vllms_pool(capsys, tmp_path):
    path = write(tmp_path, lines(*ENGINE_RUN))
    status, out, err = run_cli(capsys, "trace", "check-events", str(path), "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["capacity_blocks_per_rank"] == 2
    assert (
        report["lines"],
        report["lines_where_held_blocks_agree"],
        report["first_difference"],
    ) == (3, 3, None)
    assert report["engine_hit_blocks"] == report["model_hit_blocks"] == 1
    status, out, err = run_cli(capsys, "trace", "check-events", str(path))
    assert status == 0 and "held blocks agree      after 3 of 3 lines" in out


def test_check_events_names_the_first_difference(capsys, tmp_path):
    run = [ENGINE_RUN[0], {"ts": 2.0, "events": [removed([1]), stored([3], None)]}, ENGINE_RUN[2]]
    path = write(tmp_path, lines(*run))
    status, out, err = run_cli(capsys, "trace", "check-events", str(path), "--json")
    assert status == 1, err  # the check ran and failed
    difference = json.loads(out)["first_difference"]
    assert difference == {
        "line": 2,
        "rank": None,
        "engine_held": 2,
        "model_held": 2,
        "only_engine": 1,
        "only_model": 1,
    }
    status, out, err = run_cli(capsys, "trace", "check-events", str(path))
    assert status == 1 and "first difference       line 2" in out, err


def test_check_events_reads_only_event_logs(capsys, tmp_path):
    path = write(tmp_path, BAILIAN)
    status, out, err = run_cli(capsys, "trace", "check-events", str(path))
    assert_one_line_error(
        status,
        out,
        err,
        path,
        "trace check-events reads a vLLM KV-event log; this is a Qwen-Bailian JSONL trace",
    )


# --- the array paths read these formats through their own readers ---------------------


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_the_array_engines_leave_richer_hash_id_formats_to_their_readers(capsys, tmp_path, engine):
    """The array readers know Mooncake's fields only; a file that says more (block_size, conversations,
    components) is read by its own reader, so its rules hold on every path."""
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    path = write(
        tmp_path,
        lines(
            {"block_size": 64, "hash_ids": [1], "input_length": 10},
            {"block_size": 32, "hash_ids": [1, 2], "input_length": 40},
        ),
    )
    status, out, err = run_cli(
        capsys, "simulate", str(path), "--model", "pooled", "--backend", engine
    )
    assert_one_line_error(
        status, out, err, path, "line 2.block_size: 32 tokens, but line 1 says 64"
    )
    for text in (BAILIAN, RAGPULSE):
        path = write(tmp_path, text)
        status, out, err = run_cli(
            capsys, "simulate", str(path), "--model", "pooled", "--backend", engine, "--json"
        )
        assert status == 0, err
        assert json.loads(out)["references"] == load_described(path).instance.n_references


def test_parquet_cannot_hold_blocks_of_varying_size(capsys, tmp_path):
    path = write(tmp_path, RAGPULSE)
    sides = [
        write(tmp_path, SYS_PROMPT, "1_sys_prompt.jsonl"),
        write(tmp_path, OTHERS, "2_others.jsonl"),
    ]
    out_file = tmp_path / "r.parquet"
    status, out, err = run_cli(
        capsys,
        "trace",
        "import",
        str(path),
        "-o",
        str(out_file),
        *[arg for side in sides for arg in ("--rag-lengths", str(side))],
    )
    assert_one_line_error(
        status,
        out,
        err,
        path,
        "its blocks differ in size (block_tokens), which a Parquet trace cannot hold",
    )
    assert not out_file.exists()


def test_kvcache_simulator_block_tokens_weigh_the_blocks(capsys, tmp_path):
    """kvcache-simulator's optional per-record block_tokens: one count per block, used as the weights."""
    path = write(
        tmp_path,
        lines(
            {"block_size": 64, "hash_ids": [1, 2], "input_length": 100, "block_tokens": [64, 36]},
            {"block_size": 64, "hash_ids": [1, 3], "input_length": 70, "block_tokens": [50, 20]},
        ),
    )
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")
    assert status == 0, err
    measured = json.loads(out)["measured"]
    assert (measured["tokens"], measured["token_hits"]) == (170, 50)
    status, out, err = run_cli(capsys, "validate", str(path), "--block-size", "128")
    assert status == 2 and "cannot be re-blocked" in err


@pytest.mark.parametrize(
    "value, expected",
    [
        ([64], "line 1.block_tokens: expected a list of 2 token counts, one per block"),
        ("64,36", "line 1.block_tokens: expected a list of 2 token counts"),
        ([64, 0], "line 1.block_tokens[1]: expected a whole number of tokens"),
    ],
)
def test_bad_block_tokens_are_one_line(capsys, tmp_path, value, expected):
    path = write(
        tmp_path,
        lines({"block_size": 64, "hash_ids": [1, 2], "input_length": 100, "block_tokens": value}),
    )
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, expected)


def test_check_events_on_a_log_recorded_mid_run_compares_only_stored_blocks(capsys, tmp_path):
    """The block standing for an unseen prefix is no block the engine held: the pool replays without it."""
    run = [
        {"ts": 1.0, "events": [stored([1, 2], 99)]},
        {"ts": 2.0, "events": [removed([2]), stored([3], 1)]},
    ]
    path = write(tmp_path, lines(*run))
    status, out, err = run_cli(capsys, "trace", "check-events", str(path), "--json")
    assert status == 0, err
    report = json.loads(out)
    assert (
        report["lines"],
        report["lines_where_held_blocks_agree"],
        report["first_difference"],
    ) == (2, 2, None)
    assert report["engine_hit_blocks"] == report["model_hit_blocks"] == 1
