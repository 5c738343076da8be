"""Token-id request logs become prefix-closed chains of vLLM-style chained block hashes.

The expected ids are recomputed here from the encoding the module docstring
documents, independently of pyverify's code; the counts are worked out by hand."""

from __future__ import annotations

import hashlib
import json

import pytest

from pyverify.inputs.load import load_described
from pyverify.inputs.model import first_prefix_violation, load_instance
from pyverify.inputs.records import ImportOptions

from .helpers import assert_one_line_error, run_cli


def documented_id(parent: int, tokens: list[int], salt: bytes = b"") -> int:
    """SHA-256 of tag, parent (signed 64-bit), salt length and bytes, token count, tokens (unsigned 64-bit); 63 bits."""
    data = b"pyverify.chained-block-hash/1\x00" + parent.to_bytes(8, "big", signed=True)
    data += len(salt).to_bytes(4, "big") + salt + len(tokens).to_bytes(4, "big")
    data += b"".join(token.to_bytes(8, "big") for token in tokens)
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big") % 2**63


def jsonl(*records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


# Block size 4. Request 1 has 2 full blocks and a 2-token tail; request 2
# extends it by a third block; request 3 shares only the first block; request 4
# is shorter than a block (left out); request 5 repeats request 1's second
# block's tokens at the root (a different prefix, so a different id); request 6
# repeats the first block under a cache salt; request 7 uses the 'token_ids' name.
LOG = jsonl(
    {"prompt_token_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "timestamp": 0, "output_tokens": 5},
    {
        "prompt_token_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        "timestamp": 10,
        "route_key": "alice",
    },
    {"prompt_token_ids": [1, 2, 3, 4, 99, 98, 97, 96, 1], "timestamp": 10},
    {"prompt_token_ids": [1, 2, 3], "timestamp": 20},
    {"prompt_token_ids": [5, 6, 7, 8], "timestamp": 30},
    {"prompt_token_ids": [1, 2, 3, 4], "cache_salt": "tenant-b", "timestamp": 40},
    {"token_ids": [1, 2, 3, 4, 5, 6, 7, 8], "timestamp": 50, "output_length": 2},
)

B1 = documented_id(-1, [1, 2, 3, 4])
B2 = documented_id(B1, [5, 6, 7, 8])
B3 = documented_id(B2, [9, 10, 11, 12])
C2 = documented_id(B1, [99, 98, 97, 96])
D1 = documented_id(-1, [5, 6, 7, 8])
E1 = documented_id(-1, [1, 2, 3, 4], b"tenant-b")


def test_a_token_log_imports_into_the_hand_computed_chains(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text(LOG)
    loaded = load_described(path, ImportOptions(block_size=4))
    instance = loaded.instance
    assert loaded.format.key == "token-ids-jsonl"
    assert instance.chains == ((B1, B2), (B1, B2, B3), (B1, C2), (D1,), (E1,), (B1, B2))
    assert len({B1, B2, B3, C2, D1, E1}) == 6 and all(
        0 <= i < 2**63 for i in (B1, B2, B3, C2, D1, E1)
    )
    assert first_prefix_violation(instance.chains) is None
    assert instance.n_references == 11 and instance.block_size_tokens == 4
    assert [item["input_tokens"] for item in instance.extra] == [10, 12, 9, 4, 4, 8]
    # The uncached tails (input_tokens - 4 * full blocks) are what token accounting counts as misses.
    assert [
        item["input_tokens"] - 4 * len(chain)
        for item, chain in zip(instance.extra, instance.chains)
    ] == [2, 0, 1, 0, 0, 0]
    assert instance.extra[0]["output_tokens"] == 5 and instance.extra[5]["output_tokens"] == 2
    assert instance.extra[1]["route_key"] == "alice" and instance.extra[4]["arrival_ms"] == 40
    assert loaded.notes == (
        "left out 1 request(s) shorter than one block of 4 tokens (3 tokens in all): "
        "vLLM caches no block of them, so they neither hit nor are hit, but each takes a "
        "block while it runs and can evict one (not in --eviction vllm|sglang replays)",
    )


def test_the_imported_log_simulates_as_counted_by_hand(capsys, tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text(LOG)
    out = tmp_path / "requests.json"
    status, stdout, _ = run_cli(
        capsys, "trace", "import", str(path), "-o", str(out), "--block-size", "4", "--json"
    )
    assert status == 0
    summary = json.loads(stdout)
    assert (
        summary["format"],
        summary["requests"],
        summary["block_references"],
        summary["distinct_blocks"],
    ) == ("token-ids-jsonl", 6, 11, 6)
    assert load_instance(out).chains[1] == (B1, B2, B3)
    # one pooled uncapacitated cache misses each distinct block once: 6 misses, 5 hits
    status, stdout, _ = run_cli(capsys, "simulate", str(out), "--model", "pooled", "--json")
    assert status == 0 and (json.loads(stdout)["misses"], json.loads(stdout)["hits"]) == (6, 5)


def test_the_default_block_size_is_vllms_16(tmp_path):
    path = tmp_path / "r.jsonl"
    tokens = list(range(40))  # 2 full blocks of 16, tail of 8
    path.write_text(jsonl({"prompt_token_ids": tokens}))
    instance = load_described(path).instance
    first = documented_id(-1, tokens[:16])
    assert instance.chains == ((first, documented_id(first, tokens[16:32])),)
    assert instance.block_size_tokens == 16 and instance.name == "r"


BAD = [
    (
        jsonl({"prompt_token_ids": [1, 2, 3, 4]}, {"prompt_token_ids": [1, "2"]}),
        "line 2.prompt_token_ids[1]: token id '2' is not an integer",
    ),
    (
        jsonl({"prompt_token_ids": [1, 2, 3, 4]}, {"prompt_token_ids": [1, True]}),
        "line 2.prompt_token_ids[1]: token id True",
    ),
    (
        jsonl({"prompt_token_ids": [1, 2, 3, 4]}, {"prompt_token_ids": [1, -2]}),
        "line 2.prompt_token_ids[1]: token id -2",
    ),
    (jsonl({"token_ids": [1, 2, 3, 4]}, {"token_ids": []}), "line 2.token_ids: empty"),
    (
        jsonl({"token_ids": [1, 2, 3, 4]}, {"token_ids": "1 2 3"}),
        "line 2.token_ids: expected a list of token ids, got str",
    ),
    (
        jsonl({"token_ids": [1, 2, 3, 4], "prompt_token_ids": [1, 2, 3, 4]}),
        "line 1: both 'prompt_token_ids' and 'token_ids'",
    ),
    (
        jsonl({"token_ids": [1, 2, 3, 4]}, {"messages": []}),
        "line 2: missing field 'prompt_token_ids' (or 'token_ids')",
    ),
    (jsonl({"token_ids": [1, 2, 3, 4], "cache_salt": 7}), "line 1.cache_salt: expected a string"),
    (
        jsonl({"token_ids": [1, 2, 3, 4], "timestamp": 9}, {"token_ids": [1], "timestamp": 3}),
        "line 2.timestamp: timestamp 3 is earlier than 9 on line 1",
    ),
    (
        jsonl({"token_ids": [1, 2, 3, 4], "output_tokens": -1}),
        "line 1.output_tokens: expected a non-negative integer",
    ),
    (jsonl({"token_ids": [1, 2]}, {"token_ids": [1]}), "no request has a full block of 4 tokens"),
]


@pytest.mark.parametrize("text, expected", BAD)
def test_bad_token_logs_are_one_line_exit_2_nothing_written(capsys, tmp_path, text, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    out = tmp_path / "out.json"
    assert_one_line_error(
        *run_cli(capsys, "trace", "import", str(path), "-o", str(out), "--block-size", "4"),
        path,
        expected,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_block_size_must_be_a_multiple_for_inputs_of_ids(capsys, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(jsonl({"hash_ids": [1, 2]}))
    out = tmp_path / "o.json"
    status, stdout, err = run_cli(
        capsys, "trace", "import", str(path), "-o", str(out), "--block-size", "300"
    )
    assert status == 2 and stdout == ""
    assert err.startswith(
        "pyverify trace import: error: --block-size: 300 is not a whole multiple of the input's 512-token blocks"
    )
    assert not out.exists()


def test_block_token_counts_follow_each_formats_convention(tmp_path):
    from pyverify.inputs.blocktokens import block_token_counts

    # Mooncake: 3 ids for 1400 tokens of 512-token blocks, the last one partial.
    assert block_token_counts(3, 512, 1400) == ([512, 512, 376], 0)
    # Token import: request 1 of LOG, 2 full blocks of 4 and a 2-token uncached tail.
    path = tmp_path / "requests.jsonl"
    path.write_text(LOG)
    instance = load_described(path, ImportOptions(block_size=4)).instance
    counts = [
        block_token_counts(len(chain), 4, item["input_tokens"])
        for chain, item in zip(instance.chains, instance.extra)
    ]
    assert counts[0] == ([4, 4], 2) and counts[2] == ([4, 4], 1)
    assert all(
        sum(weights) + tail == item["input_tokens"]
        for (weights, tail), item in zip(counts, instance.extra)
    )
    assert block_token_counts(2, 16, None) == ([16, 16], 0)


def test_ids_are_stable_across_releases():
    """The ids are part of every imported instance's SHA-256: changing the hash is a format change."""
    from pyverify.inputs.tokens_import import block_id

    assert block_id(-1, [1, 2, 3, 4]) == documented_id(-1, [1, 2, 3, 4]) == 5757458078033860323
    assert block_id(-1, [1, 2, 3, 4], b"tenant-b") == 4867431407042637397
