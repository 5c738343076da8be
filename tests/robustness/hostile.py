"""Hostile inputs, as a user (or an attacker) might hand them to pyverify.

Each case is a :class:`Case`: a name, the bytes of a file, and the file's
suffix (``.json`` for instance files, ``.jsonl`` for Mooncake traces). Every
case here is invalid: the contract is that each command refuses it with one
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
    "requests": [{"blocks": [1, 2], "host": 0}, {"blocks": [1, 3], "host": 1}, {"blocks": [1, 2, 4], "host": 0}],
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
        "deep nesting in a whole document": good[:-1].encode() + b', "x": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
        "NaN host arrival": good.replace('"host": 0}', '"host": 0, "arrival_ms": NaN}', 1).encode(),
        "Infinity arrival": good.replace('"host": 0}', '"host": 0, "arrival_ms": Infinity}', 1).encode(),
        "-Infinity arrival": good.replace('"host": 0}', '"host": 0, "arrival_ms": -Infinity}', 1).encode(),
        "1e400 arrival": good.replace('"host": 0}', '"host": 0, "arrival_ms": 1e400}', 1).encode(),
        "duplicate hosts key": good.replace('"hosts": 2', '"hosts": 2, "hosts": 3').encode(),
        "duplicate blocks key": good.replace('"blocks": [1, 3]', '"blocks": [1, 3], "blocks": [1, 2]').encode(),
        "duplicate format key": good.replace('"format": "pyverify.instance/1"', '"format": "x", "format": "pyverify.instance/1"').encode(),
        "lone surrogate in name": good.replace('"name": "tiny"', '"name": "\\ud800"').encode(),
        "lone surrogate in route key": good.replace('"host": 0}', '"host": 0, "route_key": "\\udfff"}', 1).encode(),
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
        "not prefix-closed": _instance(requests=[{"blocks": [1, 2], "host": 0}, {"blocks": [3, 2], "host": 1}]),
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
        "timestamp Infinity": _lines([a, json.dumps(b).replace('"timestamp": 5', '"timestamp": Infinity')]),
        "timestamp negative": _lines([a, dict(b, timestamp=-1)]),
        "timestamp a string": _lines([a, dict(b, timestamp="5")]),
        "input_length 1.5": _lines([a, dict(b, input_length=1.5)]),
        "duplicate hash_ids key": _lines([a, json.dumps(b).replace('"hash_ids"', '"hash_ids": [9], "hash_ids"')]),
        "deep nesting in a line": _lines([a]) + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        # A whole, well-formed line: pyarrow's JSON reader (the fast path) crashed the process on it.
        "deep nesting in a whole line": _lines([a]) + b'{"hash_ids": [1], "x": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n",
        "deep nesting in the first line": b'{"hash_ids":[0],"x":' + b"[" * 20_000 + b"]" * 20_000 + b"}\n" + _lines([a]),
        "deep objects in a whole line": _lines([a]) + b'{"hash_ids": [1], "x": ' + b'{"y":' * 20_000 + b"1" + b"}" * 20_001 + b"\n",
        "invalid UTF-8 line": _lines([a]) + b'{"hash_ids": [1], "x": "\xff"}\n',
        "decreasing timestamps": _lines([b, a]),
        "not prefix-closed": _lines([a, dict(b, hash_ids=[7, 2])]),
        "truncated last line": _lines([a]) + json.dumps(b)[:20].encode(),
        "lone surrogate": _lines([a, json.dumps(b)[:-1] + ', "note": "\\ud800"}']),
    }
    for name, data in raw.items():
        yield Case(name, data, ".jsonl")


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


def all_invalid_cases() -> list[Case]:
    return list(instance_cases()) + list(trace_cases())
