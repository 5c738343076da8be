"""The content digest (``pyverify.content/1``): one trace, one digest, whatever the file format.

* the numpy digest from the arrays (:mod:`pyverify.inputs.columnar.digest`)
  equals the trusted checker's plain-Python one (:mod:`pyverify.trusted.digest`)
  on Hypothesis instances with every optional field;
* names, descriptions and sources are outside it; any change of content is inside it;
* the same trace as Mooncake JSONL, Parquet and ``pyverify.instance/1`` gets one
  digest, and ``certify X.parquet; verify c.json X.jsonl`` verifies (it failed
  "for another instance" before);
* Parquet keeps integers integers: JSONL -> Parquet -> JSON validates, field for field.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.inputs.columnar import ColumnarTrace
from pyverify.inputs.columnar.digest import content_sha256 as arrays_digest
from pyverify.inputs.load import load_input
from pyverify.inputs.columnar.digest import content_sha256
from pyverify.inputs.model import Instance, instance_from_json
from pyverify.trusted.digest import content_sha256 as trusted_content
from pyverify.trusted.reader import instance_from_document

from .helpers import run_cli
from .strategies import prefix_closed_chains


def trusted_digest(instance: Instance) -> str:
    """The trusted checker's digest of an instance, read as it reads one: its instance JSON."""
    document = json.loads(json.dumps(instance.to_json()))
    return trusted_content(instance_from_document(document, "instance.json"))


pytest.importorskip("pyarrow")

optional_fields = st.fixed_dictionaries(
    {},
    optional={
        "arrival_ms": st.one_of(st.integers(0, 10**12), st.floats(0, 1e12, allow_nan=False)),
        "input_tokens": st.integers(0, 2**53),
        "output_tokens": st.integers(0, 2**53),
        "route_key": st.text(max_size=8),
    },
)


@st.composite
def instances(draw) -> Instance:
    chains = draw(prefix_closed_chains())
    routed = draw(st.booleans())
    hosts = draw(st.integers(1, 6))
    routing = (
        tuple(draw(st.lists(st.integers(0, hosts - 1), min_size=len(chains), max_size=len(chains))))
        if routed
        else None
    )
    extra = draw(st.lists(optional_fields, min_size=len(chains), max_size=len(chains)))
    if draw(st.booleans()):  # tokens per block (RAGPulse's chunks), on some requests
        extra = [
            dict(
                item,
                block_tokens=draw(
                    st.lists(st.integers(1, 4096), min_size=len(chain), max_size=len(chain))
                ),
            )
            if draw(st.booleans())
            else item
            for item, chain in zip(extra, chains)
        ]
    extra = tuple(extra)
    return Instance(
        name="h",
        fleet_size=hosts,
        chains=tuple(chains),
        routing=routing,
        block_size_tokens=draw(st.sampled_from([None, 16, 512])),
        extra=extra if any(extra) else (),
    )


@settings(max_examples=200, deadline=None)
@given(instance=instances())
def test_the_numpy_digest_equals_the_trusted_one(instance):
    assert (
        arrays_digest(ColumnarTrace.from_instance(instance))
        == trusted_digest(instance)
        == content_sha256(instance)
    )
    # ... and survives the instance JSON (what 'trace import -o x.json' writes) read back
    again = instance_from_json(json.loads(json.dumps(instance.to_json())))
    assert trusted_digest(again) == trusted_digest(instance)


@settings(max_examples=100, deadline=None)
@given(instance=instances(), data=st.data())
def test_names_are_outside_the_digest_and_content_inside(instance, data):
    renamed = dataclasses.replace(
        instance, name="other", description="described", source="elsewhere"
    )
    assert trusted_digest(renamed) == trusted_digest(instance)
    chains = list(instance.chains)
    index = data.draw(st.integers(0, len(chains) - 1))
    changes = [
        dataclasses.replace(instance, fleet_size=instance.fleet_size + 1),
        dataclasses.replace(instance, block_size_tokens=(instance.block_size_tokens or 8) * 2),
        dataclasses.replace(
            instance,
            chains=tuple(chains[:index] + chains[index + 1 :]),
            routing=None
            if instance.routing is None
            else instance.routing[:index] + instance.routing[index + 1 :],
            extra=instance.extra[:index] + instance.extra[index + 1 :] if instance.extra else (),
        )
        if len(chains) > 1
        else None,
        dataclasses.replace(
            instance,
            chains=tuple(chains[: index + 1] + chains[index:]),
            routing=None
            if instance.routing is None
            else instance.routing[: index + 1] + instance.routing[index:],
            extra=instance.extra[: index + 1] + instance.extra[index:] if instance.extra else (),
        ),
    ]
    if instance.routing is not None and instance.fleet_size > 1:
        routing = list(instance.routing)
        routing[index] = (routing[index] + 1) % instance.fleet_size
        changes.append(dataclasses.replace(instance, routing=tuple(routing)))
    extra = [dict(item) for item in instance.extra] or [{} for _ in chains]
    tokens = extra[index].get("output_tokens", 0)
    extra[index]["output_tokens"] = (
        tokens + 1 if tokens < 2**53 else tokens - 1
    )  # exact in float64, as the arrays hold it
    changes.append(dataclasses.replace(instance, extra=tuple(extra)))
    for changed in filter(None, changes):
        assert trusted_digest(changed) != trusted_digest(instance)
        assert arrays_digest(ColumnarTrace.from_instance(changed)) == trusted_digest(changed)


JSONL = [
    {"timestamp": 0, "input_length": 1000, "output_length": 7, "hash_ids": [0, 1]},
    {"timestamp": 5, "input_length": 1500, "output_length": 0, "hash_ids": [0, 1, 2]},
    {"timestamp": 5, "input_length": 400, "output_length": 31, "hash_ids": [0]},
    {"timestamp": 12, "input_length": 2100, "output_length": 2, "hash_ids": [3, 4, 5, 6, 7]},
]


def write_jsonl(path, records=JSONL):
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_one_trace_in_three_formats_has_one_digest(tmp_path, capsys):
    jsonl = write_jsonl(tmp_path / "conv.jsonl")
    parquet, instance = tmp_path / "conv.parquet", tmp_path / "conv.json"
    for source, target in ((jsonl, parquet), (parquet, instance)):
        status, _, err = run_cli(capsys, "trace", "import", str(source), "-o", str(target))
        assert status == 0, err
    digests = {trusted_digest(load_input(str(path))) for path in (jsonl, parquet, instance)}
    reports = {
        json.loads(run_cli(capsys, "simulate", str(path), "--model", "pooled", "--json")[1])[
            "sha256"
        ]
        for path in (jsonl, parquet, instance)
    }
    assert len(digests) == 1 and reports == digests


def test_a_certificate_of_the_parquet_file_verifies_on_the_jsonl_file(tmp_path, capsys):
    jsonl = write_jsonl(tmp_path / "conv.jsonl")
    parquet, cert = tmp_path / "conv.parquet", tmp_path / "c.json"
    assert run_cli(capsys, "trace", "import", str(jsonl), "-o", str(parquet))[0] == 0
    status, _, err = run_cli(
        capsys, "certify", str(parquet), "--model", "pooled", "--capacity", "3", "-o", str(cert)
    )
    assert status == 0, err
    recorded = json.loads(cert.read_text())["instance"]
    assert recorded["content_sha256"] == trusted_digest(load_input(str(jsonl)))
    status, out, _ = run_cli(capsys, "verify", str(cert), str(jsonl))
    assert status == 0 and "content sha256" in out and "VERIFIED" in out
    # The checker reads no Parquet: it read the canonical instance certify wrote beside the
    # certificate, and says that the file named here was not read.
    assert "the canonical instance certify wrote beside the certificate" in out
    assert f"instance {jsonl}: not read" in out
    # A certificate of the JSONL: the same trace under another file name is the same instance;
    # verify says whose name differs.
    assert (
        run_cli(
            capsys, "certify", str(jsonl), "--model", "pooled", "--capacity", "3", "-o", str(cert)
        )[0]
        == 0
    )
    renamed = tmp_path / "saved-elsewhere.jsonl"
    renamed.write_text(jsonl.read_text())
    status, out, _ = run_cli(capsys, "verify", str(cert), str(renamed))
    assert status == 0 and "named 'saved-elsewhere' here, 'conv' in the certificate" in out
    assert "VERIFIED" in out
    # Other content is another instance.
    changed = write_jsonl(tmp_path / "conv2.jsonl", JSONL[:-1] + [dict(JSONL[-1], output_length=3)])
    (tmp_path / "conv.jsonl").write_text(changed.read_text())
    status, out, _ = run_cli(capsys, "verify", str(cert), str(jsonl))
    assert status == 1 and "FAILED: instance.content_sha256" in out and "another instance" in out


def test_jsonl_parquet_json_round_trip_keeps_every_field(tmp_path, capsys):
    jsonl = write_jsonl(tmp_path / "t.jsonl")
    parquet, instance = tmp_path / "t.parquet", tmp_path / "t.json"
    assert run_cli(capsys, "trace", "import", str(jsonl), "-o", str(parquet))[0] == 0
    import pyarrow.parquet as pq

    types = {field.name: str(field.type) for field in pq.read_schema(parquet)}
    assert types["timestamp"] == types["input_length"] == types["output_length"] == "int64"
    assert run_cli(capsys, "trace", "import", str(parquet), "-o", str(instance))[0] == 0
    status, out, err = run_cli(capsys, "validate", str(instance))
    assert status == 0, err
    requests = json.loads(instance.read_text())["requests"]
    for record, request in zip(JSONL, requests, strict=True):
        assert request["blocks"] == record["hash_ids"]
        for key, field in (
            ("timestamp", "arrival_ms"),
            ("input_length", "input_tokens"),
            ("output_length", "output_tokens"),
        ):
            assert request[field] == record[key] and type(request[field]) is int


def test_parquet_keeps_hosts_keys_and_fractional_times(tmp_path, capsys):
    from pyverify.inputs.columnar import write_parquet

    extra = (
        {"arrival_ms": 0.5, "input_tokens": 20, "route_key": "a"},
        {"arrival_ms": 2, "output_tokens": 9},
        {"arrival_ms": 2.25, "input_tokens": 40, "output_tokens": 1, "route_key": "b"},
    )
    original = Instance(
        name="t",
        fleet_size=3,
        chains=((1, 2), (1,), (5, 6, 7)),
        routing=(2, 0, 2),
        block_size_tokens=16,
        extra=extra,
    )
    parquet, instance = tmp_path / "t.parquet", tmp_path / "t.json"
    write_parquet(ColumnarTrace.from_instance(original), parquet)
    assert run_cli(capsys, "trace", "import", str(parquet), "-o", str(instance))[0] == 0
    assert run_cli(capsys, "validate", str(instance))[0] == 0
    requests = json.loads(instance.read_text())["requests"]
    assert [r["host"] for r in requests] == [2, 0, 2]
    assert [{k: v for k, v in r.items() if k not in ("blocks", "host")} for r in requests] == list(
        extra
    )
    assert type(requests[1]["arrival_ms"]) is int and type(requests[0]["input_tokens"]) is int
    assert trusted_digest(load_input(str(instance))) == trusted_digest(original)


def test_tokens_per_block_are_content():
    chains = ((1, 2), (1, 3))
    weighed = Instance(
        name="w", fleet_size=1, chains=chains, extra=({"block_tokens": [100, 7]}, {})
    )
    heavier = Instance(
        name="w", fleet_size=1, chains=chains, extra=({"block_tokens": [100, 8]}, {})
    )
    plain = Instance(name="w", fleet_size=1, chains=chains)
    digests = {trusted_digest(i) for i in (weighed, heavier, plain)}
    assert len(digests) == 3
    for instance in (weighed, heavier, plain):
        assert arrays_digest(ColumnarTrace.from_instance(instance)) == trusted_digest(instance)
        assert ColumnarTrace.from_instance(instance).to_instance().extra == instance.extra
