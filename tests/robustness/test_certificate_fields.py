"""Every field of a certificate is checked by ``pyverify verify`` or printed as not checked.

A certificate made by ``certify`` today (it names its instance by content digest and by the
canonical JSON's SHA-256) is edited one field at a time: an edit of a field the verdict reads is
refused (exit 1, or 2 when it breaks the schema); every other field is printed by ``verify`` as a
label or as the certifier's word, never carried silently. Integers past 64 bits and recorded
reading flags that name what is not a plain file are refused in one line.
"""

from __future__ import annotations

import copy
import json

import pytest

from pyverify.cli import main
from pyverify.trusted.check import verify_quiet

from ..test_check_proofs import informational, leaves, mutated_certificates
from .conftest import record

TINY = {
    "format": "pyverify.instance/1",
    "name": "tiny",
    "hosts": 2,
    "requests": [
        {"blocks": [1, 2], "host": 0},
        {"blocks": [3], "host": 1},
        {"blocks": [1, 2, 4], "host": 0},
        {"blocks": [3], "host": 1},
        {"blocks": [1], "host": 0},
    ],
}


def run(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def certify(source, target, *flags):
    argv = ["certify", str(source), "--model", "pooled", "--capacity", "2", "-o", str(target)]
    assert main(argv + list(flags)) == 0


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    """A capacitated certificate of a small instance file (CP-SAT, Z3, MIN and greedy records)."""
    folder = tmp_path_factory.mktemp("fields")
    instance, cert = folder / "tiny.json", folder / "tiny.cert.json"
    instance.write_text(json.dumps(TINY))
    certify(instance, cert)
    data = json.loads(cert.read_text())
    assert {"sha256", "content_sha256", "path"} <= data["instance"].keys() and data["greedy"]
    return cert, instance


def test_a_zeroed_file_hash_is_refused(certified, capsys, tmp_path):
    cert, instance = certified
    data = json.loads(cert.read_text())
    data["instance"]["sha256"] = "0" * 64
    forged = tmp_path / "zeroed.json"
    forged.write_text(json.dumps(data))
    status, out, err = run(capsys, "verify", str(forged), str(instance))
    assert status == 1 and "VERIFIED" not in out and "refused" in err
    assert f"FAILED: instance.sha256 is {'0' * 64}, but {instance} hashes to" in out


def test_the_file_hash_is_said_to_match_or_not_to_be_checked(certified, capsys, tmp_path):
    cert, instance = certified
    status, out, _ = run(capsys, "verify", str(cert), str(instance))
    recorded = json.loads(cert.read_text())["instance"]["sha256"]
    assert status == 0
    assert f"instance.sha256 {recorded} matches (the canonical JSON of {instance})" in out
    # The same content as a Parquet trace: the trusted checker reads no Parquet (its own reader
    # reads instance files and Mooncake JSONL only), and says so in one line.
    trace = tmp_path / "tiny.parquet"
    assert main(["trace", "import", str(instance), "-o", str(trace)]) == 0
    status, out, err = run(capsys, "verify", str(cert), str(trace))
    assert status == 2 and "VERIFIED" not in out
    assert "the trusted checker reads only pyverify.instance/1 files and Mooncake JSONL" in err


def test_the_file_hash_of_a_trace_is_said_not_to_be_checked(capsys, tmp_path):
    trace, cert = tmp_path / "t.jsonl", tmp_path / "t.cert.json"
    trace.write_text(
        "".join(json.dumps({"hash_ids": chain}) + "\n" for chain in ([1, 2], [3], [1, 2, 4]))
    )
    certify(trace, cert)
    recorded = json.loads(cert.read_text())["instance"]["sha256"]
    status, out, _ = run(capsys, "verify", str(cert), str(trace))
    assert status == 0 and "VERIFIED OPTIMAL" in out
    assert f"instance.sha256 {recorded}: not checked" in out


def test_another_name_inside_the_instance_file_is_another_file(certified, capsys, tmp_path):
    cert, _ = certified
    renamed = tmp_path / "tiny.json"
    renamed.write_text(json.dumps(dict(TINY, name="other")))
    status, out, _ = run(capsys, "verify", str(cert), str(renamed))
    assert status == 1 and "FAILED: instance." in out


#: How ``verify`` names a field it does not check, by the field's path.
NOT_RECHECKED = "reported by the certifier, not re-checked"
UNCHECKED_WORDS = {
    ("instance", "path"): "not checked: instance.path",
    ("created_by",): "not checked: created_by",
    ("solvers", "cp-sat", "parameters"): f"solvers.cp-sat.parameters: {NOT_RECHECKED}",
    ("solvers", "z3", "parameters"): f"solvers.z3.parameters: {NOT_RECHECKED}",
    ("solvers", "cp-sat"): f"solvers.cp-sat: {NOT_RECHECKED}",
    ("solvers", "z3"): f"solvers.z3: {NOT_RECHECKED}",
    ("solvers", "min"): f"solvers.min: {NOT_RECHECKED}",
}


def test_every_field_is_checked_or_labelled(certified, tmp_path):
    cert, instance = certified
    data = json.loads(cert.read_text())
    status, lines = verify_quiet(str(cert), str(instance))
    assert status == 0, lines
    for path, _ in leaves(data):
        if not informational(path):
            continue
        if path[0] == "greedy":
            assert any(f"greedy[{path[1]}]" in line and "not checked" in line for line in lines)
            continue
        words = next(
            text for prefix, text in UNCHECKED_WORDS.items() if path[: len(prefix)] == prefix
        )
        assert any(words in line for line in lines), (path, words)
    target = tmp_path / "mutated.json"
    tried = 0
    for path, old, new, edited in mutated_certificates(cert):
        target.write_text(json.dumps(edited))
        try:
            status, lines = verify_quiet(str(target), str(instance))
        except Exception as error:  # a schema violation: exit 2 on the command line
            assert type(error).__name__ == "UserError", (path, error)
            status = 2
        record("certificate field edit", status in (1, 2))
        field = ".".join(map(str, path))
        assert status in (1, 2), f"edit of {field}: {old!r} -> {new!r} was accepted"
        tried += 1
    assert tried > 40


def test_a_theorem_field_is_printed_as_not_read(certified, tmp_path):
    cert, instance = certified
    data = copy.deepcopy(json.loads(cert.read_text()))
    data["theorem"] = "pooled_misses_eq_distinct"
    target = tmp_path / "with-theorem.json"
    target.write_text(json.dumps(data))
    status, lines = verify_quiet(str(target), str(instance))
    assert status == 0
    said = "not checked: theorem 'pooled_misses_eq_distinct'"
    assert any(line.startswith(said) for line in lines)


# --- integers past 64 bits, and reading flags that name what is not a plain file --------------

MAX_INT64 = 2**63 - 1


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """A packed certificate (pyverify.certificate/2) of a small Mooncake trace, the trace, and a
    certificate of the same trace with its witness as lists (read as an instance, not as arrays).
    Each last block is partial, as in Mooncake's traces (re-blocking then keeps it)."""
    folder = tmp_path_factory.mktemp("packed")
    trace, cert, lists = folder / "t.jsonl", folder / "t.cert.json", folder / "t.lists.json"
    chains = [[1, 2], [3], [1, 2, 4], [3], [1], [5, 6]]
    trace.write_text(
        "".join(
            json.dumps({"timestamp": t, "input_length": 512 * len(chain) - 100, "hash_ids": chain})
            + "\n"
            for t, chain in enumerate(chains)
        )
    )
    certify(trace, cert, "--witness-form", "packed")
    certify(trace, lists, "--witness-form", "lists")
    return cert, trace, lists


def set_capacity(data, value):
    data["cache_model"]["capacity"] = value
    for solver in data["solvers"].values():
        if solver is not None:
            solver["problem"]["capacity"] = value


def set_read_with(key, value):
    def change(data):
        data["instance"]["read_with"] = {key: value}

    return change


#: (what, edit): each an integer at or past the signed 64-bit bound.
HUGE = [
    ("capacity 2**63", lambda data: set_capacity(data, 2**63)),
    ("capacity 2**63 - 1", lambda data: set_capacity(data, MAX_INT64)),
    ("capacity 2**70", lambda data: set_capacity(data, 2**70)),
    ("objective 2**64", lambda data: data.update(objective=2**64)),
    ("floor 2**63", lambda data: data.update(floor=2**63)),
    ("read_with.block_size 2**70", set_read_with("block_size", 2**70)),
    ("read_with.block_size 2**63 - 512", set_read_with("block_size", MAX_INT64 - 511)),
    ("read_with.source_block_size 2**63", set_read_with("source_block_size", 2**63)),
    ("read_with.source_block_size 2**63 - 1", set_read_with("source_block_size", MAX_INT64)),
    ("packed length 2**63", lambda data: data["witness"]["hit_blocks"].update(length=2**63)),
]


@pytest.mark.parametrize("form", ["instance file", "trace, lists", "trace, packed"])
@pytest.mark.parametrize("what, edit", HUGE, ids=[case[0] for case in HUGE])
def test_huge_integers_are_refused_in_one_line(
    certified, packed, capsys, tmp_path, form, what, edit
):
    """verify exits 1 with FAILED or 2 with one line: never a traceback (numba's type inference
    on a capacity of 2**63, an OverflowError on a block size of 2**70)."""
    if what.startswith("packed") and form != "trace, packed":
        pytest.skip("a packed field")
    packed_cert, trace, lists = packed
    cert, instance = {
        "instance file": certified,
        "trace, lists": (lists, trace),
        "trace, packed": (packed_cert, trace),
    }[form]
    data = json.loads(cert.read_text())
    edit(data)
    forged = tmp_path / "huge.json"
    forged.write_text(json.dumps(data))
    status, out, err = run(capsys, "verify", str(forged), str(instance))
    handled = (status == 1 and out.splitlines()[-1].startswith("FAILED: ")) or (
        status == 2 and err.count("\n") == 1 and err.startswith("pyverify verify: error: ")
    )
    record("huge certificate integer", handled)
    assert handled, (status, out[-500:], err[-2000:])
    assert "Traceback" not in err


@pytest.mark.parametrize("names", [["-"], ["/dev/zero"], ["does-not-exist.jsonl"], []])
def test_recorded_side_files_must_be_plain_files(certified, capsys, tmp_path, names):
    cert, instance = certified
    data = json.loads(cert.read_text())
    data["instance"]["read_with"] = {"rag_lengths": names}
    forged = tmp_path / "sides.json"
    forged.write_text(json.dumps(data))
    status, out, err = run(capsys, "verify", str(forged), str(instance))
    assert status == 2 and err.count("\n") == 1, (out, err)
    assert "instance.read_with.rag_lengths" in err


@pytest.mark.parametrize("value", [[], ["sys_prompt", 3], "sys_prompt", [None]])
def test_a_malformed_recorded_rag_order_is_one_line(certified, capsys, tmp_path, value):
    cert, instance = certified
    data = json.loads(cert.read_text())
    data["instance"]["read_with"] = {"rag_order": value}
    forged = tmp_path / "order.json"
    forged.write_text(json.dumps(data))
    status, _, err = run(capsys, "verify", str(forged), str(instance))
    assert status == 2 and err.count("\n") == 1 and "instance.read_with.rag_order" in err, err


def test_a_witness_that_claims_every_block_as_a_hit_is_refused_in_one_line(
    certified, capsys, tmp_path
):
    """No request fetches and none drops: the replay has no event to look back on, and refuses
    the first claimed hit (exit 1, one line), never a traceback."""
    cert, instance = certified
    data = json.loads(cert.read_text())
    lengths = [len(request["blocks"]) for request in TINY["requests"]]
    data["witness"]["hit_blocks"] = lengths
    data["witness"]["dropped"] = [[] for _ in lengths]
    forged = tmp_path / "all-hits.json"
    forged.write_text(json.dumps(data))
    status, out, err = run(capsys, "verify", str(forged), str(instance))
    assert status == 1 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert out.splitlines()[-1] == (
        "FAILED: witness.hit_blocks[0]: block 1 counted as a hit but not held by cache 0"
    )
