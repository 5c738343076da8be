"""A certificate records every reading flag that changes the instance (``instance.read_with``),
so ``verify`` re-reads the same instance: ``--source-block-size``, ``--rag-order`` and
``--rag-lengths`` as well as ``--allow-unsorted``, ``--block-size`` and ``--tokenizer``. A record
that reads another instance is refused."""

from __future__ import annotations

import json

import pytest

from .helpers import run_cli
from .test_trace_formats import OTHERS, RAGPULSE, SYS_PROMPT, lines, write

#: A hash-id trace that does not say its block size: 128 tokens fill two blocks of 64, not of 512.
UNSIZED = lines(
    {"hash_ids": [1, 2], "input_length": 128},
    {"hash_ids": [1, 3], "input_length": 100},
    {"hash_ids": [1, 2], "input_length": 120},
)
ORDER = "user_input,web_search,history,passages_ids,sys_prompt"


def side_files(tmp_path) -> list[str]:
    sides = [
        write(tmp_path, SYS_PROMPT, "1_sys_prompt.jsonl"),
        write(tmp_path, OTHERS, "2_others.jsonl"),
    ]
    return [arg for side in sides for arg in ("--rag-lengths", str(side))]


#: (name, trace text, flags, what certify records): a case per flag certificates could not record.
CASES = [
    (
        "source-block-size",
        UNSIZED,
        lambda tmp: ["--source-block-size", "64"],
        {"source_block_size": 64},
    ),
    ("rag-order", RAGPULSE, lambda tmp: ["--rag-order", ORDER], {"rag_order": ORDER.split(",")}),
    ("rag-lengths", RAGPULSE, side_files, None),
]


@pytest.mark.parametrize("name, text, flags, recorded", CASES, ids=[case[0] for case in CASES])
def test_certify_records_the_flag_and_verify_reads_the_same_instance(
    capsys, tmp_path, name, text, flags, recorded
):
    trace, cert = write(tmp_path, text), tmp_path / "c.json"
    given = flags(tmp_path)
    status, out, err = run_cli(
        capsys,
        "certify",
        str(trace),
        "--model",
        "pooled",
        "--capacity",
        "2",
        "-o",
        str(cert),
        *given,
    )
    assert status == 0, err
    read_with = json.loads(cert.read_text())["instance"]["read_with"]
    if recorded is None:  # the side files, as given
        recorded = {"rag_lengths": given[1::2]}
    assert read_with == recorded
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 0 and "VERIFIED OPTIMAL" in out, out + err
    if name == "source-block-size":  # a Mooncake-style trace: the checker's own reader applies it
        assert f"read with --{name}" in out
    else:  # a RAGPulse trace: the checker reads the canonical instance certify wrote (the digest is the identity)
        assert "the canonical instance certify wrote beside the certificate" in out
        assert "not checked: instance.read_with" in out


def test_a_forged_source_block_size_reads_another_instance(capsys, tmp_path):
    trace, cert = write(tmp_path, UNSIZED), tmp_path / "c.json"
    certified = run_cli(
        capsys,
        "certify",
        str(trace),
        "--model",
        "pooled",
        "-o",
        str(cert),
        "--source-block-size",
        "64",
    )
    assert certified[0] == 0
    data = json.loads(cert.read_text())
    data["instance"]["read_with"]["source_block_size"] = 32
    cert.write_text(json.dumps(data))
    status, out, _ = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 1 and "FAILED: instance.content_sha256" in out and "another instance" in out
    # A flag given to verify overrides the record (and here reads the certified instance again).
    status, out, _ = run_cli(capsys, "verify", str(cert), str(trace), "--source-block-size", "64")
    assert status == 0 and "VERIFIED" in out


def test_a_forged_rag_order_reads_another_instance(capsys, tmp_path):
    trace, cert = write(tmp_path, RAGPULSE), tmp_path / "c.json"
    certified = run_cli(
        capsys, "certify", str(trace), "--model", "pooled", "-o", str(cert), "--rag-order", ORDER
    )
    assert certified[0] == 0
    data = json.loads(cert.read_text())
    data["instance"]["read_with"]["rag_order"] = list(reversed(ORDER.split(",")))
    cert.write_text(json.dumps(data))
    status, out, _ = run_cli(capsys, "verify", str(cert), str(trace))
    # verify reads the canonical instance certify wrote, not the RAGPulse file: the record is a label
    # there (said so), and the instance is the certified one by its content digest.
    assert status == 0 and "not checked: instance.read_with" in out
    assert "content sha256" in out and "matches" in out
