"""The trusted checker reads with its own reader (pyverify/trusted/reader.py), not pyverify.inputs.

A fault in a fast parser that misreads an id must not be read the same way by
``certify`` and by ``verify``; an input the checker does not read itself reaches
it as the canonical instance certify writes beside the certificate, named by
the content digest it certified.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from pyverify.certify.certificate import certify, dumps

from ..helpers import run_cli

CHAINS = [
    (1, 2, 3),
    (1, 2),
    (4,),
    (1, 2, 3, 5),
    (4, 6),
    (7,),
    (1, 8),
    (4, 6, 9),
    (1, 2, 3),
    (7, 10),
] * 3


def write_trace(path, chains=CHAINS):
    with open(path, "w", encoding="utf-8") as out:
        for t, chain in enumerate(chains):
            out.write(
                json.dumps(
                    {
                        "timestamp": t,
                        "input_length": 512 * len(chain),
                        "output_length": 1,
                        "hash_ids": list(chain),
                    }
                )
                + "\n"
            )
    return path


def certify_reblocked(capsys, tmp_path: Path) -> tuple[Path, Path]:
    """A trace certified with --block-size, which the checker's reader does not apply: certify
    writes the canonical instance beside the certificate (c.instance.json)."""
    trace, cert = write_trace(tmp_path / "t.jsonl"), tmp_path / "c.json"
    status, _, err = run_cli(
        capsys,
        "certify",
        str(trace),
        "--model",
        "pooled",
        "--capacity",
        "2",
        "--block-size",
        "1024",
        "-o",
        str(cert),
    )
    assert status == 0, err
    return trace, cert


def test_a_forged_canonical_instance_with_a_consistent_certificate_is_refused(capsys, tmp_path):
    trace, cert = certify_reblocked(capsys, tmp_path)
    canonical = tmp_path / "c.instance.json"
    assert json.loads(cert.read_text())["instance"]["canonical_file"] == canonical.name
    # The forger swaps the canonical instance for another trace and makes the certificate agree with
    # that file everywhere but the content digest certified (instance.sha256 of the new file).
    from pyverify.trusted.reader import canonical_sha256, instance_from_document

    data = json.loads(canonical.read_text())
    data["requests"][-1]["blocks"] = [10**12]
    canonical.write_text(json.dumps(data))
    forged = json.loads(cert.read_text())
    forged["instance"]["sha256"] = canonical_sha256(instance_from_document(data, str(canonical)))
    cert.write_text(json.dumps(forged))
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 1, out + err
    assert "FAILED: instance.content_sha256" in out and "another instance" in out
    assert f"instance {canonical}: the canonical instance certify wrote" in out


def test_verify_names_the_canonical_file_it_read_not_the_original(capsys, tmp_path):
    trace, cert = certify_reblocked(capsys, tmp_path)
    trace.write_text("not read any more\n")  # verify never reads the original input
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 0, out + err
    assert (
        f"instance {trace}: not read; the checker read the canonical instance written by certify"
        in out
    )
    (tmp_path / "c.instance.json").unlink()
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 2 and "instance.canonical_file" in err


def misreading(read):
    """``read`` with request 5's last id misread as another (still prefix-closed)."""

    def misread(*args, **kwargs):
        instance = read(*args, **kwargs)
        chains = list(instance.chains)
        chains[5] = chains[5][:-1] + (10**9,)
        return dataclasses.replace(instance, chains=tuple(chains))

    return misread


def test_a_misread_id_in_the_input_parser_is_not_read_the_same_by_verify(
    capsys, tmp_path, monkeypatch
):
    import pyverify.inputs.load as load

    trace, cert = write_trace(tmp_path / "t.jsonl"), tmp_path / "c.json"
    monkeypatch.setattr(load, "read_mooncake", misreading(load.read_mooncake))
    misread = load.load_input(str(trace))
    assert misread.chains[5] != CHAINS[5]
    # certify's own check before writing now reads with the trusted reader and refuses the pair
    status, out, err = run_cli(
        capsys, "certify", str(trace), "--model", "pooled", "--capacity", "2", "-o", str(cert)
    )
    assert status == 2 and "the checker rejected the certificate" in err and not cert.exists()
    # a certificate built from the misread trace, written without that check, is refused by verify
    # (the parser's fault still there: verify reads the file with its own reader)
    done = certify(misread, "pooled", 2, None, None, use_z3=False, instance_path=str(trace))
    cert.write_text(dumps(done.certificate))
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 1 and "FAILED: instance.content_sha256" in out, out + err


def test_a_misread_id_in_the_array_parser_is_refused_by_verify(capsys, tmp_path, monkeypatch):
    import pyverify.commands.certs  # noqa: F401 (the packed route imports load_arrays from here)
    import pyverify.inputs.arrays_load as arrays_load

    trace, cert = write_trace(tmp_path / "t.jsonl"), tmp_path / "c.json"
    real = arrays_load.load_arrays

    def misread(*args, **kwargs):
        columns = real(*args, **kwargs)
        ids = columns.ids.copy()
        ids[int(columns.offsets[6]) - 1] = 10**9  # request 5's last block
        return dataclasses.replace(columns, ids=ids)

    monkeypatch.setattr(arrays_load, "load_arrays", misread)
    status, out, err = run_cli(
        capsys,
        "certify",
        str(trace),
        "--model",
        "pooled",
        "--capacity",
        "2",
        "--witness-form",
        "packed",
        "-o",
        str(cert),
    )
    assert status == 0, out + err  # certify checked the witness on its own (misread) arrays
    # the parser's fault is still there: verify reads the file with its own reader
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 1 and "FAILED: instance.content_sha256" in out, out + err


# --- the checker's reader reads what pyverify.inputs reads --------------------------------------

SYNTHETIC = "/work/shared/data/mooncake/synthetic_trace.jsonl"

MOONCAKE_CASES = {
    "plain": [
        {"timestamp": t, "input_length": 700, "output_length": 3, "hash_ids": list(c)}
        for t, c in enumerate(CHAINS)
    ],
    "bare ids": [{"hash_ids": list(c)} for c in CHAINS],
    "simulator sizes": [
        {"block_size": 64, "hash_ids": list(c), "block_tokens": [64] * len(c)} for c in CHAINS[:5]
    ]
    + [{"hash_ids": [1, 2]}],
    "equal and float times": [
        {"timestamp": 1.5, "hash_ids": [1]},
        {"timestamp": 1.5, "hash_ids": [1, 2]},
        {"timestamp": 2, "hash_ids": [3]},
    ],
}

INSTANCE_CASES = {
    "routed": {
        "format": "pyverify.instance/1",
        "name": "r",
        "hosts": 3,
        "block_size_tokens": 16,
        "description": "d",
        "source": "s",
        "requests": [
            {"blocks": [1, 2], "host": 0, "route_key": "k", "arrival_ms": 0.5},
            {
                "blocks": [3],
                "host": 2,
                "input_tokens": 9,
                "output_tokens": 1,
                "labels": {"a": "b", "n": -1},
            },
            {"blocks": [1, 2, 4], "host": 1, "block_tokens": [16, 16, 3]},
        ],
    },
    "plain": {
        "format": "pyverify.instance/1",
        "name": "p",
        "hosts": 1,
        "requests": [{"blocks": list(c)} for c in CHAINS],
    },
}


def both_digests(path, **flags):
    from pyverify.inputs.load import load_described
    from pyverify.inputs.model import instance_sha256
    from pyverify.inputs.columnar.digest import content_sha256
    from pyverify.inputs.records import ImportOptions
    from pyverify.trusted.digest import content_sha256 as trusted_content
    from pyverify.trusted.reader import canonical_sha256, read_instance

    theirs = load_described(str(path), ImportOptions(**flags)).instance
    ours, _ = read_instance(str(path), **flags)
    return (
        (content_sha256(theirs), instance_sha256(theirs)),
        (trusted_content(ours), canonical_sha256(ours)),
    )


@pytest.mark.parametrize("case", sorted(MOONCAKE_CASES))
def test_the_checker_reads_a_mooncake_trace_as_the_inputs_reader_does(tmp_path, case):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in MOONCAKE_CASES[case]) + "\n")
    theirs, ours = both_digests(path)
    assert theirs == ours


def test_the_checker_reads_gzip_unsorted_and_source_sized_traces_alike(tmp_path):
    import gzip

    records = [{"timestamp": 5, "hash_ids": [1, 2]}, {"timestamp": 3, "hash_ids": [1]}]
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    theirs, ours = both_digests(path, allow_unsorted=True, source_block_size=64)
    assert theirs == ours


def test_the_checker_reads_crlf_lines_and_a_byte_order_mark_alike(tmp_path):
    path = tmp_path / "t.jsonl"
    text = "".join(json.dumps({"hash_ids": list(c)}) + "\r\n" for c in CHAINS)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    theirs, ours = both_digests(path)
    assert theirs == ours


@pytest.mark.parametrize("case", sorted(INSTANCE_CASES))
def test_the_checker_reads_an_instance_file_as_the_inputs_reader_does(tmp_path, case):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(INSTANCE_CASES[case], indent=1))
    assert both_digests(path)[0] == both_digests(path)[1]
    path.write_text(json.dumps(INSTANCE_CASES[case]))  # on one line, as trace import writes it
    assert both_digests(path)[0] == both_digests(path)[1]


def test_the_checker_reads_the_synthetic_mooncake_trace_as_the_inputs_reader_does():
    import os

    if not os.path.exists(SYNTHETIC):
        pytest.skip(f"{SYNTHETIC} is absent")
    theirs, ours = both_digests(SYNTHETIC)
    assert theirs == ours


BAD_LINES = [
    ('{"hash_ids": [1, 2]}\n{"hash_ids": [3, 2]}\n', "line 2.hash_ids[1]"),
    ('{"hash_ids": [1, true]}\n', "line 1.hash_ids[1]"),
    ('{"hash_ids": [1], "hash_ids": [2]}\n', "duplicate key"),
    ('{"hash_ids": [1], "timestamp": NaN}\n', "NaN"),
    ('{"hash_ids": [1], "timestamp": 5}\n{"hash_ids": [2], "timestamp": 4}\n', "line 2.timestamp"),
    (
        '{"hash_ids": [1], "block_size": 64}\n{"hash_ids": [2], "block_size": 32}\n',
        "line 2.block_size",
    ),
    ('{"hash_ids": [1], "input_length": 1.0}\n', "line 1.input_length"),
    ('{"hash_ids": []}\n', "line 1.hash_ids"),
    ("\n\n", "empty input"),
]


@pytest.mark.parametrize("text, where", BAD_LINES, ids=[where for _, where in BAD_LINES])
def test_the_checker_refuses_what_the_inputs_reader_refuses(tmp_path, text, where):
    from pyverify.errors import UserError
    from pyverify.inputs.load import load_input
    from pyverify.trusted.reader import read_instance

    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(UserError):
        load_input(str(path))
    with pytest.raises(UserError, match=re.escape(where)):
        read_instance(str(path))


def test_verify_runs_the_array_checker_without_numba_by_default(capsys, tmp_path, monkeypatch):
    from pyverify.trusted import recount

    trace, cert = write_trace(tmp_path / "t.jsonl"), tmp_path / "c.json"
    assert (
        run_cli(
            capsys,
            "certify",
            str(trace),
            "--model",
            "pooled",
            "--capacity",
            "2",
            "--witness-form",
            "packed",
            "-o",
            str(cert),
        )[0]
        == 0
    )
    assert recount.lent == {}  # certify lends its numba loops for its own check only
    counted = []
    min_loop = recount.min_loop
    monkeypatch.setattr(recount, "min_loop", lambda *a: counted.append(a) or min_loop(*a))
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 0 and "VERIFIED" in out, out + err
    # verify's recount ran the plain loop: its trusted base holds no compiler (LLVM)
    assert counted and recount.lent == {}


def test_a_packed_certificate_of_parquet_is_checked_on_its_canonical_instance(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    trace, parquet = write_trace(tmp_path / "t.jsonl"), tmp_path / "t.parquet"
    cert = tmp_path / "c.json"
    assert run_cli(capsys, "trace", "import", str(trace), "-o", str(parquet))[0] == 0
    status, out, err = run_cli(
        capsys,
        "certify",
        str(parquet),
        "--model",
        "pooled",
        "--capacity",
        "2",
        "--witness-form",
        "packed",
        "-o",
        str(cert),
    )
    assert status == 0, err
    assert json.loads(cert.read_text())["instance"]["canonical_file"] == "c.instance.json"
    status, out, err = run_cli(capsys, "verify", str(cert), str(parquet))
    assert status == 0 and "VERIFIED OPTIMAL" in out, out + err
    assert f"instance {tmp_path / 'c.instance.json'}: content sha256" in out
