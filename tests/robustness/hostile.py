"""Hostile inputs, as a user (or an attacker) might hand them to pyverify.

Each case is a :class:`Case`: a name, the bytes of a file, and the file's
suffix (``.json`` for instance files, ``.jsonl`` for the JSON-lines formats,
``.csv`` and ``.parquet`` for the columnar ones). The same kinds of damage
(duplicate keys or columns, out-of-range values, truncated records, deep
nesting, ...) are tried on every format where they apply. Every case here is
invalid: the contract is that each command refuses it with one
line naming the file, exit status 2, no traceback and no output written.

``cases(scale)`` grows with ``scale`` (the CI run uses 1; a local run with
``PYVERIFY_CAMPAIGN_SCALE=5`` tries five times as many random mutations).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Iterator

GOOD_INSTANCE = {
    "format": "pyverify.instance/1",
    "name": "tiny",
    "hosts": 2,
    "requests": [
        {"blocks": [1, 2], "host": 0},
        {"blocks": [1, 3], "host": 1},
        {"blocks": [1, 2, 4], "host": 0},
    ],
}
GOOD_LINES = [
    {"timestamp": 0, "input_length": 1024, "output_length": 3, "hash_ids": [1, 2]},
    {"timestamp": 5, "input_length": 1500, "output_length": 3, "hash_ids": [1, 2, 3]},
]


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    suffix: str


def _instance(**changes) -> dict:
    data = json.loads(json.dumps(GOOD_INSTANCE))
    data.update(changes)
    return data


def _request_change(index: int, **changes) -> dict:
    data = _instance()
    data["requests"][index].update(changes)
    return data


def _dump(value) -> bytes:
    return json.dumps(value).encode()


def instance_cases() -> Iterator[Case]:
    good = json.dumps(GOOD_INSTANCE)
    raw = {
        "empty": b"",
        "whitespace": b"   \n\t ",
        "truncated": good[: len(good) // 2].encode(),
        "a list": b"[]",
        "a string": b'"pyverify"',
        "a number": b"42",
        "null": b"null",
        "invalid UTF-8": b'{"format": "pyverify.instance/1", "name": "\xff\xfe"}',
        "UTF-16": good.encode("utf-16"),
        "deep list nesting": b"[" * 100_000 + b"]" * 100_000,
        "deep object nesting": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "deep nesting in a whole document": good[:-1].encode()
        + b', "x": '
        + b"[" * 20_000
        + b"]" * 20_000
        + b"}",
        "NaN host arrival": good.replace('"host": 0}', '"host": 0, "arrival_ms": NaN}', 1).encode(),
        "Infinity arrival": good.replace(
            '"host": 0}', '"host": 0, "arrival_ms": Infinity}', 1
        ).encode(),
        "-Infinity arrival": good.replace(
            '"host": 0}', '"host": 0, "arrival_ms": -Infinity}', 1
        ).encode(),
        "1e400 arrival": good.replace('"host": 0}', '"host": 0, "arrival_ms": 1e400}', 1).encode(),
        "duplicate hosts key": good.replace('"hosts": 2', '"hosts": 2, "hosts": 3').encode(),
        "duplicate blocks key": good.replace(
            '"blocks": [1, 3]', '"blocks": [1, 3], "blocks": [1, 2]'
        ).encode(),
        "duplicate format key": good.replace(
            '"format": "pyverify.instance/1"', '"format": "x", "format": "pyverify.instance/1"'
        ).encode(),
        "lone surrogate in name": good.replace('"name": "tiny"', '"name": "\\ud800"').encode(),
        "lone surrogate in route key": good.replace(
            '"host": 0}', '"host": 0, "route_key": "\\udfff"}', 1
        ).encode(),
        "5000-digit integer": good.replace('"hosts": 2', '"hosts": ' + "9" * 5000).encode(),
        "trailing garbage": (good + " }").encode(),
        "two documents": (good + "\n" + good).encode(),
    }
    for name, data in raw.items():
        yield Case(name, data, ".json")
    structured = {
        "hosts as string": _instance(hosts="2"),
        "hosts true": _instance(hosts=True),
        "hosts 2.0": _instance(hosts=2.0),
        "hosts 1e20": _instance(hosts=1e20),
        "hosts 0": _instance(hosts=0),
        "hosts -1": _instance(hosts=-1),
        "hosts 2**63": _instance(hosts=2**63),
        "hosts a billion": _instance(hosts=1_000_000_000),
        "requests an object": _instance(requests={}),
        "requests empty": _instance(requests=[]),
        "blocks a string": _request_change(0, blocks="1"),
        "blocks empty": _request_change(0, blocks=[]),
        "block 1.0": _request_change(2, blocks=[1, 2, 4.0]),
        "block true": _request_change(0, blocks=[True, 2]),
        "block -1": _request_change(0, blocks=[-1]),
        "block 2**63": _request_change(0, blocks=[2**63]),
        "block 2**70": _request_change(0, blocks=[2**70]),
        "host 1.0": _request_change(0, host=1.0),
        "host out of range": _request_change(0, host=2),
        "host missing on one": _instance(requests=[{"blocks": [1]}, {"blocks": [1], "host": 0}]),
        "not prefix-closed": _instance(
            requests=[{"blocks": [1, 2], "host": 0}, {"blocks": [3, 2], "host": 1}]
        ),
        "name with slash": _instance(name="../../x/pwned"),
        "absolute name": _instance(name="/abs/path/evil"),
        "name dot-dot": _instance(name=".."),
        "name with newline": _instance(name="a\nb"),
        "name empty": _instance(name=""),
        "unknown format": _instance(format="pyverify.instance/2"),
        "extra top-level field": _instance(colour="blue"),
        "input_tokens 2**64": _request_change(0, input_tokens=2**64),
        "arrival negative": _request_change(0, arrival_ms=-1),
    }
    for name, data in structured.items():
        yield Case(name, _dump(data), ".json")


def _lines(records) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def trace_cases() -> Iterator[Case]:
    a, b = GOOD_LINES
    raw = {
        "empty trace": b"",
        "only blank lines": b"\n\n  \n",
        "line not an object": _lines([a, "[1, 2]"]),
        "hash_ids missing": _lines([a, {"timestamp": 6}]),
        "hash_ids not a list": _lines([a, dict(b, hash_ids="1,2")]),
        "hash_ids empty": _lines([a, dict(b, hash_ids=[])]),
        "hash_id 1.0": _lines([a, dict(b, hash_ids=[1, 2.0])]),
        "hash_id true": _lines([a, dict(b, hash_ids=[True])]),
        "hash_id -1": _lines([a, dict(b, hash_ids=[-1])]),
        "hash_id 2**63": _lines([a, dict(b, hash_ids=[2**63])]),
        "timestamp NaN": _lines([a, json.dumps(b).replace('"timestamp": 5', '"timestamp": NaN')]),
        "timestamp Infinity": _lines(
            [a, json.dumps(b).replace('"timestamp": 5', '"timestamp": Infinity')]
        ),
        "timestamp negative": _lines([a, dict(b, timestamp=-1)]),
        "timestamp a string": _lines([a, dict(b, timestamp="5")]),
        "input_length 1.5": _lines([a, dict(b, input_length=1.5)]),
        "duplicate hash_ids key": _lines(
            [a, json.dumps(b).replace('"hash_ids"', '"hash_ids": [9], "hash_ids"')]
        ),
        "deep nesting in a line": _lines([a]) + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        # A whole, well-formed line: pyarrow's JSON reader (the fast path) crashed the process on it.
        "deep nesting in a whole line": _lines([a])
        + b'{"hash_ids": [1], "x": '
        + b"[" * 20_000
        + b"]" * 20_000
        + b"}\n",
        "deep nesting in the first line": b'{"hash_ids":[0],"x":'
        + b"[" * 20_000
        + b"]" * 20_000
        + b"}\n"
        + _lines([a]),
        "deep objects in a whole line": _lines([a])
        + b'{"hash_ids": [1], "x": '
        + b'{"y":' * 20_000
        + b"1"
        + b"}" * 20_001
        + b"\n",
        "invalid UTF-8 line": _lines([a]) + b'{"hash_ids": [1], "x": "\xff"}\n',
        "decreasing timestamps": _lines([b, a]),
        "not prefix-closed": _lines([a, dict(b, hash_ids=[7, 2])]),
        "truncated last line": _lines([a]) + json.dumps(b)[:20].encode(),
        "lone surrogate": _lines([a, json.dumps(b)[:-1] + ', "note": "\\ud800"}']),
    }
    for name, data in raw.items():
        yield Case(name, data, ".jsonl")


GOOD_TOKENS = [
    {"prompt_token_ids": list(range(40)), "timestamp": 0, "route_key": "u1"},
    {"prompt_token_ids": list(range(40)) + [7] * 20, "timestamp": 5},
]
GOOD_CHAT = [
    {
        "messages": [{"role": "user", "content": "Summarise the attached report, please."}],
        "timestamp": 0,
    },
    {
        "messages": [
            {"role": "user", "content": "Summarise the attached report, please."},
            {"role": "assistant", "content": "It says the pool helps."},
            {"role": "user", "content": "Why?"},
        ],
        "timestamp": 5,
    },
]


def _deep_line(key: str, value) -> bytes:
    """A whole, well-formed record nested 20,000 deep in a field no reader knows."""
    return (
        json.dumps({key: value})[:-1].encode() + b', "x": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n"
    )


def token_cases() -> Iterator[Case]:
    """Token-id JSONL logs (hashed into blocks): the same kinds of damage as the Mooncake traces."""
    a, b = GOOD_TOKENS
    raw = {
        "duplicate prompt_token_ids key": _lines(
            [
                a,
                json.dumps(b).replace(
                    '"prompt_token_ids"', '"prompt_token_ids": [1], "prompt_token_ids"'
                ),
            ]
        ),
        "token id -1": _lines([a, dict(b, prompt_token_ids=[-1] * 40)]),
        "token id 2**64": _lines([a, dict(b, prompt_token_ids=[2**64] * 40)]),
        "token id 1.0": _lines([a, dict(b, prompt_token_ids=[1.0] * 40)]),
        "prompt_token_ids a string": _lines([a, dict(b, prompt_token_ids="1 2 3")]),
        "timestamp NaN": _lines([a, json.dumps(b).replace('"timestamp": 5', '"timestamp": NaN')]),
        "timestamp a string": _lines([a, dict(b, timestamp="5")]),
        "route_key a number": _lines([dict(a, route_key=5), b]),
        "deep nesting in a whole line": _lines([a])
        + _deep_line("prompt_token_ids", list(range(40))),
        "truncated last line": _lines([a]) + json.dumps(b)[:30].encode(),
        "lone surrogate in route_key": _lines([json.dumps(a).replace('"u1"', '"\\ud800"'), b]),
        "invalid UTF-8 line": _lines([a]) + b'{"prompt_token_ids": [1], "route_key": "\xff"}\n',
        "decreasing timestamps": _lines([b, a]),
    }
    for name, data in raw.items():
        yield Case(f"token log {name}", data, ".jsonl")


def chat_cases() -> Iterator[Case]:
    """Chat JSONL (OpenAI messages), tokenized then hashed."""
    a, b = GOOD_CHAT
    raw = {
        "duplicate messages key": _lines(
            [a, json.dumps(b).replace('"messages"', '"messages": [], "messages"', 1)]
        ),
        "messages empty": _lines([a, dict(b, messages=[])]),
        "messages a string": _lines([a, dict(b, messages="hello")]),
        "content a number": _lines([a, dict(b, messages=[{"role": "user", "content": 5}])]),
        "image part": _lines(
            [
                a,
                dict(
                    b,
                    messages=[
                        {
                            "role": "user",
                            "content": [{"type": "image_url", "image_url": {"url": "x"}}],
                        }
                    ],
                ),
            ]
        ),
        "timestamp NaN": _lines([a, json.dumps(b).replace('"timestamp": 5', '"timestamp": NaN')]),
        "timestamp negative": _lines([a, dict(b, timestamp=-1)]),
        "deep nesting in a whole line": _lines([a]) + _deep_line("messages", a["messages"]),
        "deep nesting in the content": _lines([a])
        + b'{"messages": [{"role": "user", "content": '
        + b"[" * 20_000
        + b"]" * 20_000
        + b"}]}\n",
        "truncated last line": _lines([a]) + json.dumps(b)[:40].encode(),
        "lone surrogate in content": _lines([a, json.dumps(b).replace("Why?", "\\udfff")]),
        "decreasing timestamps": _lines([b, a]),
    }
    for name, data in raw.items():
        yield Case(f"chat {name}", data, ".jsonl")


GOOD_CSV = 'hash_ids,timestamp,input_length,host\n"0 1",0,1024,0\n"0 2",5,1500,1\n'


def csv_cases() -> Iterator[Case]:
    header, first, second = GOOD_CSV.splitlines()
    raw = {
        "host 10**12": 'hash_ids,host\n"0 1",1000000000000\n"0 2",0\n',
        "host -1": GOOD_CSV.replace(",1024,0", ",1024,-1"),
        "host 65536": GOOD_CSV.replace(",1500,1", ",1500,65536"),
        "duplicate hash_ids column": 'hash_ids,hash_ids\n"0 1","0 1"\n',
        "duplicate host column": 'hash_ids,host,host\n"0 1",0,1\n',
        "unterminated quote in the last row": f'{header}\n{first}\n"0 2,5,1500,1\n',
        "unterminated quote at the end of the file": f'{header}\n{first}\n"0 2',
        "unterminated quote in a middle row": f'{header}\n"0 1,0,1024,0\n{second}\n{second}\n',
        "truncated last row": f'{header}\n{first}\n"0 2",5',
        "timestamp NaN": GOOD_CSV.replace(",5,", ",NaN,"),
        "timestamp inf": GOOD_CSV.replace(",5,", ",inf,"),
        "timestamp 1e400": GOOD_CSV.replace(",5,", ",1e400,"),
        "input_length 1.5": GOOD_CSV.replace(",1500,", ",1.5,"),
        "input_length -1": GOOD_CSV.replace(",1500,", ",-1,"),
        "block id -1": GOOD_CSV.replace('"0 2"', '"0 -1"'),
        "block id 2**63": GOOD_CSV.replace('"0 2"', f'"0 {2**63}"'),
        "empty hash_ids cell": GOOD_CSV.replace('"0 2"', '""'),
        "not prefix-closed": GOOD_CSV.replace('"0 2"', '"3 1"'),
        "decreasing timestamps": GOOD_CSV.replace(",5,", ",-0,").replace(",0,1024", ",9,1024"),
        "header only": f"{header}\n",
        "blank lines before the header": f"\n \n\n{GOOD_CSV}",
        "header HASH_IDS": GOOD_CSV.replace("hash_ids", "HASH_IDS", 1),
        "header with a space before hash_ids": GOOD_CSV.replace("hash_ids", " hash_ids", 1),
        "nested brackets in a cell": GOOD_CSV.replace('"0 2"', '"[[0, 2]]"'),
        "deep nesting in a cell": GOOD_CSV.replace(
            '"0 2"', '"' + "[" * 20_000 + "0" + "]" * 20_000 + '"'
        ),
        "invalid UTF-8": GOOD_CSV.replace("hash_ids,", "hash_ids,\udcff", 1),
    }
    for name, text in raw.items():
        yield Case(f"CSV {name}", text.encode("utf-8", "surrogateescape"), ".csv")


def _parquet_bytes(
    columns: dict, metadata: dict | None = None, names: list[str] | None = None
) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = [
        value if isinstance(value, pa.Array) else pa.array(value) for value in columns.values()
    ]
    table = pa.Table.from_arrays(arrays, names=names or list(columns))
    if metadata is not None:
        table = table.replace_schema_metadata(metadata)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _nested(depth: int):
    """Two rows of a list column nested ``depth`` deep."""
    import pyarrow as pa

    kind, value = pa.list_(pa.int64()), [1]
    for _ in range(depth):
        kind, value = pa.list_(kind), [value]
    return pa.array([value, value], type=kind)


def parquet_cases() -> Iterator[Case]:
    """Damaged Parquet traces (needs pyarrow: without it, none)."""
    try:
        import pyarrow as pa
    except ImportError:
        return
    ids = pa.array([[0, 1], [0, 2]], pa.list_(pa.int64()))
    good = _parquet_bytes({"hash_ids": ids})
    footer_length = int.from_bytes(good[-8:-4], "little")
    raw = {
        "footer cut": good[:-10],
        "magic replaced": good[:-4] + b"XXXX",
        "footer length past the file": good[:-8] + (10**6).to_bytes(4, "little") + b"PAR1",
        "footer length zero": good[:-8] + (0).to_bytes(4, "little") + b"PAR1",
        "footer scrambled": good[: -8 - footer_length] + bytes(footer_length) + good[-8:],
        "only the magic": b"PAR1",
        "block size 99999999999999999999": _parquet_bytes(
            {"hash_ids": ids}, {b"pyverify.block_size_tokens": b"99999999999999999999"}
        ),
        "block size 0": _parquet_bytes({"hash_ids": ids}, {b"pyverify.block_size_tokens": b"0"}),
        "block size -5": _parquet_bytes({"hash_ids": ids}, {b"pyverify.block_size_tokens": b"-5"}),
        "block size 2.5": _parquet_bytes(
            {"hash_ids": ids}, {b"pyverify.block_size_tokens": b"2.5"}
        ),
        "timestamp NaN": _parquet_bytes({"hash_ids": ids, "timestamp": [0.0, float("nan")]}),
        "timestamp inf": _parquet_bytes({"hash_ids": ids, "timestamp": [0.0, float("inf")]}),
        "input_length 1.5": _parquet_bytes({"hash_ids": ids, "input_length": [1024.0, 1.5]}),
        "host 10**12": _parquet_bytes({"hash_ids": ids, "host": [0, 10**12]}),
        "host 2**64-1 unsigned": _parquet_bytes(
            {"hash_ids": ids, "host": pa.array([0, 2**64 - 1], pa.uint64())}
        ),
        "host -1": _parquet_bytes({"hash_ids": ids, "host": [0, -1]}),
        "duplicate hash_ids column": _parquet_bytes(
            {"a": ids, "b": ids}, names=["hash_ids", "hash_ids"]
        ),
        "duplicate host column": _parquet_bytes(
            {"hash_ids": ids, "a": [0, 1], "b": [1, 0]}, names=["hash_ids", "host", "host"]
        ),
        "block id null": _parquet_bytes(
            {"hash_ids": pa.array([[0, 1], [0, None]], pa.list_(pa.int64()))}
        ),
        "block id -1": _parquet_bytes(
            {"hash_ids": pa.array([[0, 1], [0, -1]], pa.list_(pa.int64()))}
        ),
        "block id 2**64-1 unsigned": _parquet_bytes(
            {"hash_ids": pa.array([[0, 1], [0, 2**64 - 1]], pa.list_(pa.uint64()))}
        ),
        "empty hash_ids": _parquet_bytes(
            {"hash_ids": pa.array([[0, 1], []], pa.list_(pa.int64()))}
        ),
        "hash_ids strings": _parquet_bytes({"hash_ids": pa.array([["0"], ["1"]])}),
        "not prefix-closed": _parquet_bytes(
            {"hash_ids": pa.array([[0, 1], [2, 1]], pa.list_(pa.int64()))}
        ),
        "no rows": _parquet_bytes({"hash_ids": pa.array([], pa.list_(pa.int64()))}),
        "deep nesting in a column": _parquet_bytes({"hash_ids": ids, "x": _nested(200)}),
    }
    for name, data in raw.items():
        yield Case(f"Parquet {name}", data, ".parquet")


def mutated_cases(count: int, seed: int = 2026) -> Iterator[Case]:
    """Random byte-level damage to a good instance: each mutant must still be refused or accepted cleanly.

    Unlike the cases above, a random mutant may happen to be valid; the
    campaign only requires "no traceback, exit 0 or 2, nothing partial".
    """
    rng = random.Random(seed)
    good = json.dumps(GOOD_INSTANCE).encode()
    for index in range(count):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(data))
            action = rng.choice(("flip", "delete", "insert", "truncate"))
            if action == "flip":
                data[position] = rng.randrange(256)
            elif action == "delete":
                del data[position]
            elif action == "insert":
                data.insert(position, rng.choice(b'{}[],:"0123456789-.eE\\ntu\xff'))
            else:
                del data[position:]
                break
        yield Case(f"random mutant {index}", bytes(data), ".json")


#: Cases also tried gzip-compressed (every text format may arrive so; the bounds count decompressed bytes).
GZIP_KINDS = (
    "deep nesting in a whole document",
    "deep nesting in a whole line",
    "token log deep nesting in a whole line",
    "chat deep nesting in a whole line",
    "duplicate hash_ids key",
    "truncated last line",
    "invalid UTF-8 line",
    "timestamp NaN",
)


def gzip_cases(cases: list[Case]) -> Iterator[Case]:
    import gzip

    for case in cases:
        if case.name in GZIP_KINDS:
            yield Case(
                f"gzip-compressed {case.name}",
                gzip.compress(case.data, mtime=0),
                case.suffix + ".gz",
            )


GOOD_KVSIM = [
    {"block_size": 64, "hash_ids": [2001, 2002], "input_length": 128},
    {"block_size": 64, "hash_ids": [2001, 2003], "input_length": 100},
]


def kvsim_cases() -> Iterator[Case]:
    """kvcache-simulator JSONL (a per-record block_size): damage every reader refuses."""
    a, b = GOOD_KVSIM
    raw = {
        "block_size a string": _lines([dict(a, block_size="64"), b]),
        "hash_ids not a list": _lines([a, dict(b, hash_ids={"a": 1})]),
        "truncated last line": _lines([a]) + json.dumps(b)[:30].encode(),
        "invalid UTF-8 line": _lines([a]) + b'{"block_size": 64, "hash_ids": [1], "x": "\xff"}\n',
    }
    for name, data in raw.items():
        yield Case(f"kvcache-simulator {name}", data, ".jsonl")


GOOD_BAILIAN = [
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
]


def bailian_cases() -> Iterator[Case]:
    """Qwen-Bailian JSONL: damage every reader refuses."""
    a, b = GOOD_BAILIAN
    raw = {
        "hash_ids missing": _lines([a, {k: v for k, v in b.items() if k != "hash_ids"}]),
        "hash_ids a string": _lines([a, dict(b, hash_ids="1 2 3")]),
        "hash_id 2**64": _lines([a, dict(b, hash_ids=[2**64])]),
        "timestamp a string": _lines([a, dict(b, timestamp="62.5")]),
        "timestamp NaN": _lines(
            [a, json.dumps(b).replace('"timestamp": 62.5', '"timestamp": NaN')]
        ),
        "decreasing timestamps": _lines([b, a]),
        "not prefix-closed": _lines([a, dict(b, hash_ids=[7, 2])]),
        "truncated last line": _lines([a]) + json.dumps(b)[:50].encode(),
        "invalid UTF-8 line": _lines([a]) + json.dumps(b)[:-1].encode() + b', "x": "\xff"}\n',
        "deep nesting in a whole line": _lines([a]) + _deep_line("hash_ids", [1, 2]),
    }
    for name, data in raw.items():
        yield Case(f"Qwen-Bailian {name}", data, ".jsonl")


GOOD_RAGPULSE = [
    {
        "timestamp": "27",
        "input_length": 3861,
        "output_length": 127,
        "session_id": "s1",
        "hash_ids": {
            "sys_prompt": [8325, 8326],
            "passages_ids": [6123],
            "history": [],
            "web_search": [20319],
            "user_input": [23648],
        },
    },
    {
        "timestamp": "31",
        "input_length": 2000,
        "output_length": 50,
        "session_id": "s2",
        "hash_ids": {"sys_prompt": [8325, 8326], "passages_ids": [1167], "user_input": [23649]},
    },
]


def ragpulse_cases() -> Iterator[Case]:
    """RAGPulse JSONL (hash_ids an object of components)."""
    a, b = GOOD_RAGPULSE
    raw = {
        "unknown component": _lines([a, dict(b, hash_ids={"sys_prompt": [1], "video": [2]})]),
        "component a string": _lines([a, dict(b, hash_ids={"sys_prompt": "1 2"})]),
        "chunk id 1.0": _lines([a, dict(b, hash_ids={"sys_prompt": [1.0]})]),
        "chunk id 2**64": _lines([a, dict(b, hash_ids={"sys_prompt": [2**64]})]),
        "chunk id true": _lines([a, dict(b, hash_ids={"sys_prompt": [True]})]),
        "no chunks": _lines([a, dict(b, hash_ids={"sys_prompt": [], "user_input": []})]),
        "timestamp not digits": _lines([a, dict(b, timestamp="12:00:31")]),
        "timestamp 1e400 string": _lines([a, dict(b, timestamp="1e400")]),
        "timestamp a list": _lines([a, dict(b, timestamp=[31])]),
        "decreasing timestamps": _lines([b, a]),
        "session_id a number": _lines([a, dict(b, session_id=2)]),
        "session_id of a million characters": _lines([a, dict(b, session_id="s" * 1_000_000)]),
        "deep nesting in a component": _lines([a])
        + b'{"hash_ids": {"sys_prompt": '
        + b"[" * 20_000
        + b"]" * 20_000
        + b"}}\n",
        "truncated last line": _lines([a]) + json.dumps(b)[:60].encode(),
        "invalid UTF-8 line": _lines([a]) + json.dumps(b)[:-1].encode() + b', "x": "\xff"}\n',
        "lone surrogate in session_id": _lines([a, json.dumps(b).replace('"s2"', '"\\ud800"')]),
    }
    for name, data in raw.items():
        yield Case(f"RAGPulse {name}", data, ".jsonl")


GOOD_LMCACHE = [
    {"chunk_hashes": [-4120913748016316416, 881902136524219392], "chunk_size": 256, "seq_len": 300},
    {"chunk_hashes": [-4120913748016316416, 77, "a3f9"], "chunk_size": 256, "seq_len": 700},
]


def lmcache_cases() -> Iterator[Case]:
    """LMCache lookup-hash logs."""
    a, b = GOOD_LMCACHE
    raw = {
        "chunk_hashes missing": _lines([a, {"chunk_size": 256, "seq_len": 700}]),
        "chunk_hashes an object": _lines([a, dict(b, chunk_hashes={"0": 1})]),
        "chunk hash 2**64": _lines([a, dict(b, chunk_hashes=[2**64])]),
        "chunk hash 5000 digits": _lines([a])
        + b'{"chunk_hashes": ['
        + b"9" * 5000
        + b'], "chunk_size": 256, "seq_len": 9}\n',
        "chunk hash a float": _lines([a, dict(b, chunk_hashes=[1.0])]),
        "chunk hash of a million characters": _lines([a, dict(b, chunk_hashes=["f" * 1_000_000])]),
        "chunk_size on no line": _lines(
            [{"chunk_hashes": [1], "seq_len": 9}, {"chunk_hashes": [1, 2]}]
        ),
        "chunk_size 2**64": _lines([a, dict(b, chunk_size=2**64)]),
        "mixed chunk sizes": _lines([a, dict(b, chunk_size=128)]),
        "seq_len too short": _lines([a, dict(b, seq_len=3)]),
        "seq_len negative": _lines([dict(a, seq_len=-1), b]),
        "seq_len too short for a later chunk_size": _lines(
            [{"chunk_hashes": [1, 2, 3], "seq_len": 9}, a]
        ),
        "shapes without dtypes": _lines([a, dict(b, shapes=[[2, 256, 8, 128]])]),
        "shapes of 2**62 bytes": _lines([a, dict(b, shapes=[[2**30, 2**30, 4]], dtypes="float32")]),
        "hex hash over 64 bits as an integer": _lines(
            [a, dict(b, chunk_hashes=[int("f" * 17, 16)])]
        ),
        "not prefix-closed": _lines([a, dict(b, chunk_hashes=[881902136524219392])]),
        "truncated last line": _lines([a]) + json.dumps(b)[:40].encode(),
        "invalid UTF-8 line": _lines([a])
        + b'{"chunk_hashes": ["\xff"], "chunk_size": 256, "seq_len": 9}\n',
        "deep nesting in a whole line": _lines([a]) + _deep_line("chunk_hashes", [1]),
    }
    for name, data in raw.items():
        yield Case(f"LMCache {name}", data, ".jsonl")


def _stored(hashes, parent, **changes) -> dict:
    event = {
        "type": "BlockStored",
        "block_hashes": hashes,
        "parent_block_hash": parent,
        "token_ids": list(range(4 * len(hashes))),
        "block_size": 4,
        "lora_id": None,
        "medium": "GPU",
    }
    event.update(changes)
    return event


GOOD_KV_EVENTS = [
    {"ts": 1718000000.5, "events": [_stored([101, 102], None)], "data_parallel_rank": 0},
    {
        "ts": 1718000001.0,
        "events": [
            _stored([103], 102),
            {"type": "BlockRemoved", "block_hashes": [101], "medium": "GPU"},
        ],
        "data_parallel_rank": 1,
    },
]


def kv_event_cases() -> Iterator[Case]:
    """vLLM KV events recorded to JSONL (batches and bare events)."""
    a, b = GOOD_KV_EVENTS
    raw = {
        "events not a list": _lines([a, dict(b, events="BlockStored")]),
        "event not an object": _lines([a, dict(b, events=[["BlockStored", [1], None]])]),
        "unknown event type": _lines(
            [a, dict(b, events=[{"type": "BlockMoved", "block_hashes": [1]}])]
        ),
        "type a number": _lines([a, dict(b, events=[{"type": 5}])]),
        "block_hashes missing": _lines(
            [a, dict(b, events=[{"type": "BlockStored", "block_size": 4}])]
        ),
        "block_hashes a string": _lines([a, dict(b, events=[_stored("101", 102)])]),
        "block hash 2**64": _lines([a, dict(b, events=[_stored([2**64], 102)])]),
        "block hash a float": _lines([a, dict(b, events=[_stored([1.5], 102)])]),
        "block hash 5000 digits": _lines([a])
        + json.dumps(b).replace("103", "9" * 5000).encode()
        + b"\n",
        "parent hash an object": _lines([a, dict(b, events=[_stored([103], {"h": 1})])]),
        "block_size 0": _lines([a, dict(b, events=[_stored([103], 102, block_size=0)])]),
        "mixed block sizes": _lines(
            [a, dict(b, events=[_stored([103], 102, block_size=8, token_ids=list(range(8)))])]
        ),
        "token_ids of the wrong length": _lines(
            [a, dict(b, events=[_stored([103], 102, token_ids=[1])])]
        ),
        "block stored under two parents": _lines([a, dict(b, events=[_stored([102], None)])]),
        "ts missing": _lines([a, {"events": [], "data_parallel_rank": 0}]),
        "ts NaN": _lines([a, json.dumps(b).replace('"ts": 1718000001.0', '"ts": NaN')]),
        "ts a string": _lines([a, dict(b, ts="1718000001")]),
        "decreasing ts": _lines([b, a]),
        "rank 1.0": _lines([a, dict(b, data_parallel_rank=1.0)]),
        "rank out of range": _lines([a, dict(b, data_parallel_rank=2**40)]),
        "rank on some batches only": _lines(
            [a, {k: v for k, v in b.items() if k != "data_parallel_rank"}]
        ),
        "no stored events": _lines([{"ts": 1.0, "events": [{"type": "AllBlocksCleared"}]}]),
        "only another medium": _lines([{"ts": 1.0, "events": [_stored([1], None, medium="CPU")]}]),
        "truncated last line": _lines([a]) + json.dumps(b)[:70].encode(),
        "invalid UTF-8 line": _lines([a]) + json.dumps(b)[:-1].encode() + b', "x": "\xff"}\n',
        "deep nesting in an event": _lines([a])
        + b'{"ts": 2, "events": [{"type": "BlockStored", "block_hashes": '
        + b"[" * 20_000
        + b"]" * 20_000
        + b"}]}\n",
    }
    for name, data in raw.items():
        yield Case(f"vLLM KV events {name}", data, ".jsonl")


def instance_reader_cases() -> Iterator[Case]:
    """Damage only the instance readers see (the array readers of trace files, pyverify.inputs.columnar, read hash_ids,
    timestamps and lengths, not these fields): every command must still refuse it, since a hash-id file that says more
    than Mooncake's fields is read by the instance readers (pyverify.commands.input_options.needs_instance_reader)."""
    a, b = GOOD_KVSIM
    raw = {
        "block_size 0": _lines([a, dict(b, block_size=0)]),
        "block_size 2**64": _lines([a, dict(b, block_size=2**64)]),
        "mixed block sizes": _lines([a, dict(b, block_size=32)]),
        "block_tokens too short": _lines([a, dict(b, block_tokens=[64])]),
        "block_tokens 0": _lines([a, dict(b, block_tokens=[64, 0])]),
        "block_tokens a string": _lines([dict(a, block_tokens="64,64"), b]),
    }
    for name, data in raw.items():
        yield Case(f"kvcache-simulator {name}", data, ".jsonl")
    a, b = GOOD_BAILIAN
    raw = {
        "turn a string": _lines([a, dict(b, turn="2")]),
        "turn 0": _lines([a, dict(b, turn=0)]),
        "chat_id 1.5": _lines([a, dict(b, chat_id=1.5)]),
        "chat_id 2**64": _lines([a, dict(b, chat_id=2**64)]),
        "parent_chat_id -2": _lines([a, dict(b, parent_chat_id=-2)]),
        "type a number": _lines([a, dict(b, type=5)]),
        "type of a million characters": _lines([a, dict(b, type="x" * 1_000_000)]),
    }
    for name, data in raw.items():
        yield Case(f"Qwen-Bailian {name}", data, ".jsonl")


def new_format_cases() -> Iterator[Case]:
    """The formats of issue 23 (the traces people have)."""
    yield from kvsim_cases()
    yield from bailian_cases()
    yield from ragpulse_cases()
    yield from lmcache_cases()
    yield from kv_event_cases()
    yield from instance_reader_cases()


def all_invalid_cases() -> list[Case]:
    text = (
        list(instance_cases())
        + list(trace_cases())
        + list(token_cases())
        + list(chat_cases())
        + list(new_format_cases())
    )
    return text + list(gzip_cases(text)) + list(csv_cases()) + list(parquet_cases())


BOM = b"\xef\xbb\xbf"


def valid_variants() -> Iterator[Case]:
    """Inputs every command must *accept*: a UTF-8 byte order mark, blank lines, CRLF line ends, in each text format."""
    instance = json.dumps(GOOD_INSTANCE).encode()
    pretty = json.dumps(GOOD_INSTANCE, indent=2).encode()
    texts = {
        "instance": (instance, ".json"),
        "pretty-printed instance": (pretty, ".json"),
        "Mooncake JSONL": (_lines(GOOD_LINES), ".jsonl"),
        "token-id JSONL": (_lines(GOOD_TOKENS), ".jsonl"),
        "chat JSONL": (_lines(GOOD_CHAT), ".jsonl"),
        "CSV": (GOOD_CSV.encode(), ".csv"),
        "kvcache-simulator JSONL": (_lines(GOOD_KVSIM), ".jsonl"),
        "Qwen-Bailian JSONL": (_lines(GOOD_BAILIAN), ".jsonl"),
        "RAGPulse JSONL": (_lines(GOOD_RAGPULSE), ".jsonl"),
        "LMCache JSONL": (_lines(GOOD_LMCACHE), ".jsonl"),
        "vLLM KV events JSONL": (_lines(GOOD_KV_EVENTS), ".jsonl"),
    }
    for label, (data, suffix) in texts.items():
        yield Case(f"{label} with a UTF-8 BOM", BOM + data, suffix)
        yield Case(f"{label} with CRLF line ends", data.replace(b"\n", b"\r\n"), suffix)
        if (
            suffix != ".csv"
        ):  # a CSV header is the first line (csv_cases: "blank lines before the header")
            yield Case(f"{label} after blank lines", b"\n \n\n" + data, suffix)
        if suffix == ".jsonl":
            yield Case(
                f"{label} with blank lines between records",
                data.replace(b"\n", b"\n\n  \n"),
                suffix,
            )
        if suffix == ".csv":
            yield Case(
                f"{label} with empty lines between rows", data.replace(b"\n", b"\n\n"), suffix
            )
