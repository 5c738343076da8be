"""``certify --witness-form packed`` (pyverify.certificate/2) and the forgeries the checker must refuse in it.

Each forgery keeps the file self-consistent (the arrays decode, their lengths
agree), so only the replay, the recount or the decoding can catch it: a
malformed array is refused as a malformed file (exit 2, one line naming the
field), a wrong run as a failed check (exit 1, the line naming the field).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from pyverify.certify.accelerate import accelerated
from pyverify.trusted.packed import unpack

from .helpers import assert_one_line_error, run_cli


def write_trace(path, chains):
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


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("packed")
    trace, other = folder / "trace.jsonl", folder / "other.jsonl"
    write_trace(trace, CHAINS)
    write_trace(
        other, CHAINS[1:] + CHAINS[:1]
    )  # another run's trace: same requests, shifted by one
    certs = {}
    for name, source, extra in (
        ("bypass", trace, []),
        ("forced", trace, ["--admission", "forced"]),
        ("other", other, []),
    ):
        target = folder / f"{name}.json"
        from pyverify.cli import main

        assert (
            main(
                [
                    "certify",
                    str(source),
                    "--model",
                    "pooled",
                    "--capacity",
                    "3",
                    "--witness-form",
                    "packed",
                    "-o",
                    str(target),
                ]
                + extra
            )
            == 0
        )
        certs[name] = json.loads(target.read_text())
    return trace, certs


def arrays_of(cert):
    return {key: value.copy() for key, value in unpack(cert["witness"], "cert", "witness").items()}


def packed_back(cert, arrays, dtype="<i8"):
    for key, values in arrays.items():
        cert["witness"][key] = {
            "dtype": dtype,
            "length": int(values.size),
            "base64": base64.b64encode(np.asarray(values, dtype=dtype).tobytes()).decode("ascii"),
        }
    return cert


def verify(capsys, tmp_path, cert, trace):
    """``pyverify verify`` on ``cert``, which says word for word what certify's own check says
    with the compiled loops it lends (:mod:`pyverify.certify.accelerate`)."""
    target = tmp_path / "forged.json"
    target.write_text(json.dumps(cert))
    said = run_cli(capsys, "verify", str(target), str(trace))
    with accelerated():
        assert run_cli(capsys, "verify", str(target), str(trace)) == said
    return (target, *said)


def test_the_packed_certificate_verifies_and_says_how(capsys, tmp_path, made):
    trace, certs = made
    for name in ("bypass", "forced"):
        assert certs[name]["format"] == "pyverify.certificate/2"
        _, status, out, _ = verify(capsys, tmp_path, certs[name], trace)
        assert status == 0, out
        assert "VERIFIED OPTIMAL" in out and "recounted here by pyverify/trusted/recount.py" in out


OLD_PACKED_RECOUNT = (
    "recounted here on arrays by pyverify/trusted/array_recount.py (held equal to "
    "pyverify/trusted/recount.py by tests, not proved)"
)


def test_a_packed_certificate_with_the_basis_of_the_old_array_checker_still_verifies(
    capsys, tmp_path, made
):
    """Packed certificates written while verify had a second, array path name that recount in
    their basis; they verify as before (and a basis that states something else is refused)."""
    trace, certs = made
    for name in ("bypass", "forced"):
        cert = json.loads(json.dumps(certs[name]))
        recount = "recounted here by pyverify/trusted/recount.py"
        assert any(recount in line for line in cert["basis"])
        cert["basis"] = [line.replace(recount, OLD_PACKED_RECOUNT) for line in cert["basis"]]
        _, status, out, _ = verify(capsys, tmp_path, cert, trace)
        assert status == 0 and "VERIFIED OPTIMAL" in out, out
        cert["basis"] = [line.replace("Belady 1966", "Belady 1967") for line in cert["basis"]]
        _, status, out, _ = verify(capsys, tmp_path, cert, trace)
        assert status == 1 and "FAILED: basis does not state" in out, out


def test_its_witness_is_the_list_form_run(made):
    """The packed witness is the run the list-form route writes (MIN's), packed."""
    from pyverify.optimal.belady import min_run

    trace, certs = made
    run = min_run(CHAINS, None, 3).as_witness()
    arrays = arrays_of(certs["bypass"])
    assert arrays["hit_blocks"].tolist() == run["hit_blocks"]
    o, b = arrays["dropped_offsets"], arrays["dropped_blocks"]
    assert [b[o[t] : o[t + 1]].tolist() for t in range(len(CHAINS))] == run["dropped"]


def first_with(arrays, condition):
    return next(t for t in range(arrays["hit_blocks"].size) if condition(t))


def drop_never_held(cert):
    """A block the cache never held, added to a request's dropped blocks (offsets moved to match)."""
    a = arrays_of(cert)
    a["dropped_blocks"] = np.insert(a["dropped_blocks"], a["dropped_offsets"][1], 999)
    a["dropped_offsets"][1:] += 1
    return a, "witness.dropped[0]: cache 0 drops block 999, which it neither held nor fetched"


def hit_one_too_long(cert):
    a = arrays_of(cert)
    t = first_with(
        a,
        lambda t: (
            a["hit_blocks"][t] < len(CHAINS[t]) and a["hit_blocks"][t] > 0 or t == len(CHAINS) - 1
        ),
    )
    a["hit_blocks"][t] += 1
    return a, f"witness.hit_blocks[{t}]"


def over_capacity_at_one_step(cert):
    """The first request that drops something keeps it instead (and the run stays consistent otherwise)."""
    a = arrays_of(cert)
    o = a["dropped_offsets"]
    t = first_with(
        a, lambda t: o[t + 1] > o[t] and CHAINS[t][-1] not in a["dropped_blocks"][o[t] : o[t + 1]]
    )
    a["dropped_blocks"] = np.delete(a["dropped_blocks"], o[t])
    o[t + 1 :] -= 1
    return a, "witness.dropped["


def shifted_by_one_request(cert):
    a = arrays_of(cert)
    counts = np.diff(a["dropped_offsets"])
    a["hit_blocks"] = np.roll(a["hit_blocks"], 1)
    a["dropped_offsets"] = np.concatenate(([0], np.cumsum(np.roll(counts, 1))))
    a["dropped_blocks"] = np.roll(a["dropped_blocks"], int(counts[-1]))
    return a, "witness."


@pytest.mark.parametrize(
    "forge", [drop_never_held, hit_one_too_long, over_capacity_at_one_step, shifted_by_one_request]
)
def test_consistent_forged_runs_are_refused_exit_1(capsys, tmp_path, made, forge):
    trace, certs = made
    cert = json.loads(json.dumps(certs["bypass"]))
    arrays, field = forge(cert)
    target, status, out, err = verify(capsys, tmp_path, packed_back(cert, arrays), trace)
    assert status == 1
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and field in failed[0], out
    assert err.strip().splitlines() == [f"pyverify verify: refused: {target}: {failed[0]}"]


def test_forced_certificate_refuses_dropping_a_pinned_block(capsys, tmp_path, made):
    trace, certs = made
    cert = json.loads(json.dumps(certs["forced"]))
    a = arrays_of(cert)
    a["dropped_blocks"] = np.insert(a["dropped_blocks"], a["dropped_offsets"][1], CHAINS[0][0])
    a["dropped_offsets"][1:] += 1
    _, status, out, _ = verify(capsys, tmp_path, packed_back(cert, a), trace)
    assert (
        status == 1
        and "witness.dropped[0]: cache 0 drops block 1, which request 0 fetched: forced admission"
        in out
    )


def test_another_runs_witness_with_its_own_numbers_is_refused(capsys, tmp_path, made):
    """The other trace's whole witness and counts (self-consistent, objective and MIN record included)."""
    trace, certs = made
    cert = json.loads(json.dumps(certs["bypass"]))
    other = certs["other"]
    cert["witness"] = other["witness"]
    _, status, out, _ = verify(capsys, tmp_path, cert, trace)
    assert status == 1 and "FAILED: witness." in out


@pytest.mark.parametrize(
    "change, field, message",
    [
        (
            lambda w: w["hit_blocks"].update(base64=w["hit_blocks"]["base64"][:-4]),
            "witness.hit_blocks.base64",
            "decodes to",
        ),
        (
            lambda w: w["hit_blocks"].update(base64=w["hit_blocks"]["base64"][:-1]),
            "witness.hit_blocks.base64",
            "not valid base64",
        ),
        (
            lambda w: w["dropped_blocks"].update(
                dtype="<i8" if w["dropped_blocks"]["dtype"] == "<i4" else "<i4"
            ),
            "witness.dropped_blocks.base64",
            "decodes to",
        ),
        (lambda w: w["cache_of"].update(dtype=">i4"), "witness.cache_of.dtype", "not one of"),
        (
            lambda w: w["dropped_blocks"].update(
                base64=base64.b64encode(
                    np.array(
                        [-1] * w["dropped_blocks"]["length"], dtype=w["dropped_blocks"]["dtype"]
                    ).tobytes()
                ).decode()
            ),
            "witness.dropped_blocks[0]",
            "not a non-negative integer",
        ),
        (
            lambda w: w["dropped_offsets"].update(
                length=w["dropped_offsets"]["length"] - 1,
                base64=base64.b64encode(
                    base64.b64decode(w["dropped_offsets"]["base64"])[
                        : -int(w["dropped_offsets"]["dtype"][-1])
                    ]
                ).decode(),
            ),
            "witness.dropped_offsets",
            "entries, not one more",
        ),
        (lambda w: w.update(encoding="pyverify.packed/9"), "witness", "pyverify.packed"),
    ],
)
def test_malformed_arrays_are_one_line_exit_2(capsys, tmp_path, made, change, field, message):
    trace, certs = made
    cert = json.loads(json.dumps(certs["bypass"]))
    change(cert["witness"])
    target, status, out, err = verify(capsys, tmp_path, cert, trace)
    assert_one_line_error(status, out, err, str(target), message)
    assert field in err


def test_packed_witness_needs_the_packed_format(capsys, tmp_path, made):
    trace, certs = made
    cert = json.loads(json.dumps(certs["bypass"]))
    cert["format"] = "pyverify.certificate/1"
    target, status, out, err = verify(capsys, tmp_path, cert, trace)
    assert_one_line_error(status, out, err, str(target), "witness.encoding")


def test_packed_route_refuses_what_it_cannot_do(capsys, tmp_path, made):
    trace, _ = made
    status, out, err = run_cli(
        capsys, "certify", str(trace), "--model", "pooled", "--witness-form", "packed"
    )
    assert status == 2 and "--witness-form packed: needs --capacity" in err
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
        "--greedy",
        "lru",
    )
    assert status == 2 and "records no greedy runs" in err


def test_killed_mid_write_leaves_no_certificate_and_the_next_run_cleans_up(tmp_path):
    """SIGKILL at several moments: the target is absent or whole (it verifies); a rerun leaves no temporary."""
    import signal
    import subprocess
    import sys
    import time

    trace = tmp_path / "big.jsonl"
    write_trace(trace, CHAINS * 2000)
    target = tmp_path / "c.json"
    command = [
        sys.executable,
        "-m",
        "pyverify",
        "certify",
        str(trace),
        "--model",
        "pooled",
        "--capacity",
        "3",
        "--witness-form",
        "packed",
        "-o",
        str(target),
    ]
    for delay in (0.5, 1.5, 3.0):
        target.unlink(missing_ok=True)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=120)
        if target.exists():
            assert (
                subprocess.run(
                    [sys.executable, "-m", "pyverify", "verify", str(target), str(trace)],
                    capture_output=True,
                ).returncode
                == 0
            )
    assert subprocess.run(command, capture_output=True).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl", "c.json"]


def test_per_host_trace_with_ids_near_2_63(capsys, tmp_path):
    """Round-robin per host, block ids near 2**63: the certificate verifies, and its floor is the distinct pairs."""
    big = 2**63 - 50
    chains = [tuple(big + b for b in chain) for chain in CHAINS]
    trace, target = tmp_path / "big-ids.jsonl", tmp_path / "c.json"
    write_trace(trace, chains)
    status, out, err = run_cli(
        capsys,
        "certify",
        str(trace),
        "--model",
        "per-host",
        "--routing",
        "round-robin",
        "--fleet",
        "3",
        "--capacity",
        "2",
        "--witness-form",
        "packed",
        "-o",
        str(target),
    )
    assert status == 0, err
    cert = json.loads(target.read_text())
    assert cert["floor"] == len({(t % 3, b) for t, chain in enumerate(chains) for b in chain})
    status, out, err = run_cli(capsys, "verify", str(target), str(trace))
    assert status == 0 and "VERIFIED OPTIMAL" in out
