"""Chat JSONL (OpenAI messages) becomes prefix-closed chains; counts worked out by hand.

Expected token ids are written out here from the documented template
(``<|ROLE|>\\n`` + text + ``\\n`` per message, then ``<|assistant|>\\n``), and
expected block ids from the documented hash (tests/test_token_import.py)."""

from __future__ import annotations

import json
import sys

import pytest

from pyverify.inputs.load import load_described
from pyverify.inputs.model import first_prefix_violation
from pyverify.inputs.records import ImportOptions

from .helpers import assert_one_line_error, run_cli
from .test_token_import import documented_id, jsonl


def documented_chain(tokens: list[int], block_size: int) -> tuple[int, ...]:
    ids, parent = [], -1
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = documented_id(parent, tokens[start : start + block_size])
        ids.append(parent)
    return tuple(ids)


SYSTEM = {"role": "system", "content": "Be brief."}
TURN_1 = [SYSTEM, {"role": "user", "content": "Hi"}]
TURN_2 = TURN_1 + [
    {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]},
    {"role": "user", "content": "Bye"},
]
OTHER = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}]
CHAT = jsonl(
    {"messages": TURN_1, "model": "m"}, {"messages": TURN_2, "user": "u1"}, {"messages": OTHER}
)


def test_chat_with_the_byte_fallback_imports_into_hand_computed_chains(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(CHAT)
    loaded = load_described(path)  # default tokenizer: bytes; default block size: 16
    assert loaded.format.key == "chat-jsonl"
    texts = [
        "<|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\n",
        "<|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\nHello!\n<|user|>\nBye\n<|assistant|>\n",
        "<|system|>\nBe kind.\n<|user|>\nHi\n<|assistant|>\n",
    ]
    # By hand, in bytes: header+text+newline per message, then the 14-byte assistant header.
    # (11+9+1) + (9+2+1) + 14 = 47;  (11+9+1) + (9+2+1) + (14+6+1) + (9+3+1) + 14 = 81;  (11+8+1) + (9+2+1) + 14 = 46.
    assert [len(text.encode()) for text in texts] == [47, 81, 46]
    chains = loaded.instance.chains
    assert [len(chain) for chain in chains] == [2, 5, 2]  # 47 // 16, 81 // 16, 46 // 16
    assert chains == tuple(documented_chain(list(text.encode()), 16) for text in texts)
    assert chains[1][:2] == chains[0]  # the next turn extends the previous one's blocks
    assert (
        chains[2][0] != chains[0][0]
    )  # "<|system|>\nBe kind" differs from "<|system|>\nBe brief" in byte 14
    assert len({b for chain in chains for b in chain}) == 7 and loaded.instance.n_references == 9
    assert first_prefix_violation(chains) is None
    assert [item["input_tokens"] for item in loaded.instance.extra] == [47, 81, 46]
    assert loaded.instance.extra[1]["route_key"] == "u1"


def write_word_tokenizer(path) -> dict[str, int]:
    tokenizers = pytest.importorskip(
        "tokenizers"
    )  # in the dev extra; skipped only where it is not installed
    vocab = {
        "[UNK]": 0,
        "<|": 1,
        "|>": 2,
        "user": 3,
        "assistant": 4,
        "hello": 5,
        "world": 6,
        "hi": 7,
        "there": 8,
        "bye": 9,
    }
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.save(str(path))
    return vocab


def test_chat_with_a_tokenizer_json(capsys, tmp_path):
    tokenizer = tmp_path / "tokenizer.json"
    write_word_tokenizer(tokenizer)
    path = tmp_path / "chat.jsonl"
    first = [{"role": "user", "content": "hello world"}]
    second = first + [
        {"role": "assistant", "content": "hi there"},
        {"role": "user", "content": "bye"},
    ]
    path.write_text(jsonl({"messages": first}, {"messages": second}))
    # Words and punctuation runs are tokens; newlines are white space (no token):
    # <| user |> hello world <| assistant |>
    tokens_1 = [1, 3, 2, 5, 6, 1, 4, 2]
    # <| user |> hello world <| assistant |> hi there <| user |> bye <| assistant |>
    tokens_2 = [1, 3, 2, 5, 6, 1, 4, 2, 7, 8, 1, 3, 2, 9, 1, 4, 2]
    loaded = load_described(path, ImportOptions(block_size=4, tokenizer=str(tokenizer)))
    assert loaded.instance.chains == (documented_chain(tokens_1, 4), documented_chain(tokens_2, 4))
    assert [len(chain) for chain in loaded.instance.chains] == [
        2,
        4,
    ]  # 8 // 4, 17 // 4 (a 1-token tail)
    assert loaded.instance.chains[1][:2] == loaded.instance.chains[0]
    assert [item["input_tokens"] for item in loaded.instance.extra] == [8, 17]
    out = tmp_path / "chat.json"
    status, stdout, _ = run_cli(
        capsys,
        "trace",
        "import",
        str(path),
        "-o",
        str(out),
        "--block-size",
        "4",
        "--tokenizer",
        str(tokenizer),
        "--json",
    )
    assert status == 0 and json.loads(stdout)["distinct_blocks"] == 4


def test_a_missing_tokenizers_package_is_one_line_naming_the_extra(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import fails as if not installed
    path = tmp_path / "chat.jsonl"
    path.write_text(CHAT)
    status, stdout, err = run_cli(
        capsys,
        "trace",
        "import",
        str(path),
        "-o",
        str(tmp_path / "o.json"),
        "--tokenizer",
        str(tmp_path / "tokenizer.json"),
    )
    assert status == 2 and stdout == ""
    assert err.strip() == (
        f"pyverify trace import: error: --tokenizer: reading {tmp_path / 'tokenizer.json'} needs the 'tokenizers' "
        "package: pip install 'pyverify[tokenizers]' (or use --tokenizer bytes, which needs nothing)"
    )


def test_a_bad_tokenizer_file_is_one_line(capsys, tmp_path):
    pytest.importorskip("tokenizers")
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "nothing"}}')
    path = tmp_path / "chat.jsonl"
    path.write_text(CHAT)
    status, stdout, err = run_cli(
        capsys,
        "trace",
        "import",
        str(path),
        "-o",
        str(tmp_path / "o.json"),
        "--tokenizer",
        str(bad),
    )
    assert status == 2 and stdout == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"pyverify trace import: error: --tokenizer: {bad}: not a tokenizer")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.jsonl", "tokenizer.json"]


BAD = [
    (
        jsonl({"messages": TURN_1}, {"messages": "hi"}),
        "line 2.messages: expected a list of messages, got str",
    ),
    (jsonl({"messages": []}), "line 1.messages: empty"),
    (
        jsonl({"messages": TURN_1}, {"messages": [{"content": "x"}]}),
        "line 2.messages[0].role: expected a non-empty string",
    ),
    (
        jsonl({"messages": [{"role": "user", "content": 5}]}),
        "line 1.messages[0].content: expected a string, null or a list",
    ),
    (
        jsonl(
            {
                "messages": [
                    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
                ]
            }
        ),
        "line 1.messages[0].content[0]: only text parts are tokenized, got 'image_url'",
    ),
    (
        jsonl({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}),
        "line 1.messages[0].content[0].text: expected a string",
    ),
    (jsonl({"messages": TURN_1}, ["x"]), "line 2: expected a JSON object, got list"),
    (jsonl({"messages": TURN_1}, {"prompt": "x"}), "line 2: missing field 'messages'"),
    (jsonl({"messages": TURN_1, "user": 3}), "line 1.user: expected a string"),
]


@pytest.mark.parametrize("text, expected", BAD)
def test_bad_chat_lines_are_one_line_exit_2_nothing_written(capsys, tmp_path, text, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    out = tmp_path / "out.json"
    assert_one_line_error(
        *run_cli(capsys, "trace", "import", str(path), "-o", str(out)), path, expected
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_tokenizer_is_refused_for_other_formats(capsys, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(jsonl({"hash_ids": [1, 2]}))
    status, stdout, err = run_cli(
        capsys, "trace", "import", str(path), "-o", str(tmp_path / "o.json"), "--tokenizer", "bytes"
    )
    assert (
        status == 2
        and stdout == ""
        and err.startswith("pyverify trace import: error: --tokenizer: only for chat JSONL input")
    )


def test_openai_batch_lines_are_read_through_their_body(capsys, tmp_path):
    plain = tmp_path / "chat.jsonl"
    plain.write_text(CHAT)
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        jsonl(
            *(
                {
                    "custom_id": f"r{i}",
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": body,
                }
                for i, body in enumerate(
                    ({"messages": TURN_1}, {"messages": TURN_2, "user": "u1"}, {"messages": OTHER})
                )
            )
        )
    )
    assert load_described(batch).instance.chains == load_described(plain).instance.chains
    assert load_described(batch).instance.extra[1]["route_key"] == "u1"
    batch.write_text(
        jsonl(
            {"body": {"messages": TURN_1}}, {"body": {"messages": [{"role": "user", "content": 1}]}}
        )
    )
    assert_one_line_error(
        *run_cli(capsys, "validate", str(batch)),
        batch,
        "line 2.body.messages[0].content: expected a string",
    )
