"""Flags that cannot go together are refused as the command line is parsed: before the input is read, one
line under the command's own name ('pyverify simulate: error: ...'), as argparse reports a bad flag."""

from __future__ import annotations

import pytest

from .helpers import run_cli

#: A path that does not exist: a refusal that names the flags, not the file, came before the input was read.
MISSING = "/nonexistent/trace.jsonl"


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["simulate", MISSING, "--capacity-gib", "1"],
            "--capacity-gib: needs --kv-model NAME, --kv-model-config PATH or --kv-bytes-per-token",
        ),
        (
            ["sweep", MISSING, "--capacity-gib", "1"],
            "--capacity-gib: needs --kv-model NAME, --kv-model-config PATH",
        ),
        (
            ["replay", MISSING, "--capacity-gib", "1"],
            "--capacity-gib: needs --kv-model NAME, --kv-model-config PATH",
        ),
        (["simulate", MISSING, "--eviction", "vllm"], "--eviction vllm: needs a capacity"),
        (["replay", MISSING, "--eviction", "vllm"], "--eviction vllm: needs a capacity"),
        (
            ["simulate", MISSING, "--eviction", "vllm", "--capacity", "3", "--optimum"],
            "--optimum: not with --eviction vllm",
        ),
        (["simulate", MISSING, "--page-size", "16"], "--page-size: only with --eviction sglang"),
        (["replay", MISSING, "--compare", "--no-timing"], "drop --no-timing"),
        (
            ["replay", MISSING, "--eviction", "sglang", "--capacity", "3"],
            "--eviction sglang: only with --no-timing",
        ),
    ],
)
def test_flag_combinations_are_refused_before_the_input_is_read(capsys, argv, words):
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith(f"pyverify {argv[0]}: error: ") and len(err.strip().splitlines()) == 1, (
        err
    )
    assert words in err and MISSING not in err


def test_a_missing_input_says_that_dash_reads_standard_input(capsys):
    """'pyverify simulate --model pooled < trace.jsonl' said only 'required: instance'."""
    status, out, err = run_cli(capsys, "simulate", "--model", "pooled")
    assert (status, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert err.strip() == (
        "pyverify simulate: error: the following arguments are required: instance "
        "(a file, or - to read standard input)"
    )


def test_no_arguments_prints_the_help_as_a_usage_error(capsys):
    status, out, err = run_cli(capsys)
    assert (status, out) == (2, "")
    assert err.startswith("usage: pyverify") and "simulate" in err and "replay" in err
