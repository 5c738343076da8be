"""replay names the KV model and the prefill rate's source, and says when the two come from different models."""

from __future__ import annotations

import json

import pytest

from .helpers import run_cli, write_timed_trace


@pytest.fixture
def trace(tmp_path):
    return write_timed_trace(tmp_path)


def replay_json(capsys, trace, *flags):
    status, out, err = run_cli(capsys, "replay", trace, "--capacity", "8", "--json", *flags)
    assert status == 0, err
    return json.loads(out)


def test_a_kv_model_without_a_measured_rate_gets_costs_note(capsys, trace):
    status, out, err = run_cli(
        capsys, "replay", trace, "--capacity", "8", "--kv-model", "llama-3.1-8b"
    )
    assert status == 0, err
    header = out.splitlines()[0]
    assert (
        "KV llama-3.1-8b, 131072 bytes/token" in header
        and "prefill 12292 tok/s (measured on llama-3.3-70b)" in header
    )
    assert (
        "NOTE: the prefill rate is not tied to --kv-model llama-3.1-8b: it was measured on llama-3.3-70b (NVIDIA NIM)"
        in out
    )
    rate = replay_json(capsys, trace, "--kv-model", "llama-3.1-8b")["prefill_rate"]
    assert "not tied to --kv-model llama-3.1-8b" in rate["note"] and rate["source"].startswith(
        "NVIDIA NIM"
    )


def test_the_model_the_rate_was_measured_on_takes_it_without_a_note(capsys, trace):
    result = replay_json(capsys, trace, "--kv-model", "llama-3.3-70b")
    assert result["prefill_rate"]["note"] is None and result["prefill_rate"]["source"].startswith(
        "measured on llama-3.3-70b"
    )
    assert result["kv"] == {"model": "llama-3.3-70b", "bytes_per_token": 327680}


def test_a_given_rate_is_named_as_given(capsys, trace):
    result = replay_json(
        capsys, trace, "--kv-model", "llama-3.1-8b", "--prefill-tokens-per-s", "40000"
    )
    assert result["prefill_rate"] == {
        "tokens_per_s": 40000.0,
        "source": "--prefill-tokens-per-s",
        "note": None,
    }
    status, out, _ = run_cli(capsys, "replay", trace, "--capacity", "8")
    assert (
        "KV llama-3.3-70b (default), 327680 bytes/token" in out.splitlines()[0]
        and "NOTE" not in out
    )


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_the_peak_load_is_exact(capsys, monkeypatch, trace, engine):
    """'longest queue 16; load over time peaks at 15 requests': the peak came from 50 samples. It is now counted
    from every arrival and end, so sampling the load densely finds the same peak, and it is never below the queue."""
    import pyverify.fleet.run

    flags = ("--fleet", "2", "--max-num-seqs", "1", "--arrival-scale", "0.05", "--backend", engine)
    flags += ("--service", "streams") if engine == "compiled" else ()
    coarse = replay_json(capsys, trace, *flags)["runs"][0]
    monkeypatch.setattr(pyverify.fleet.run, "LOAD_SAMPLES", 100_000)
    dense = replay_json(capsys, trace, *flags)["runs"][0]
    sampled = max(max(row) for row in dense["load_over_time"]["requests_per_host"])
    assert dense["peak_load"] == coarse["peak_load"] and coarse["peak_load"]["requests"] == sampled
    assert coarse["peak_load"]["requests"] >= coarse["load"]["max_queue"] + 1
    status, out, err = run_cli(capsys, "replay", trace, "--capacity", "8", *flags)
    assert (
        f"load peaks at {sampled} requests (running + queued; host {coarse['peak_load']['host']}"
        in out
    )
