"""Every command that reads a trace takes the flags the readers' messages suggest.

A reader that says "pass --allow-unsorted" or "choose a smaller --block-size"
can say it inside any command that reads an input, so each such command must
accept the flag (pyverify.commands.input_options), not only 'trace import'.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import pytest

from pyverify.cli import build_parser

from .helpers import run_cli

PACKAGE = Path(__file__).resolve().parent.parent / "pyverify"
INPUTS = PACKAGE / "inputs"
FLAG = re.compile(r"--[a-z][a-z-]*[a-z]")

#: Commands whose parsers belong to other helpers' files (certify and verify: commands/certs.py; audit: commands/audit.py):
#: they read inputs too, but take the reading flags only once those files add them.
NOT_YET: set[str] = set()


def suggested_flags() -> list[tuple[str | None, str, str]]:
    """``(trigger, flag, where)`` for every flag an input reader's error message names.

    A message that starts with a flag (``--tokenizer: ...``) is printed only when that
    flag was given: its trigger. Other messages can be printed by any command.
    """
    called = {
        node.id if isinstance(node, ast.Name) else node.attr
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Name, ast.Attribute))
    }
    found = []
    for path in sorted(INPUTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # messages of functions nothing calls (model.require_routing) are never printed
        live = [
            node
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef) and function.name in called
            for node in ast.walk(function)
        ]
        for node in live:
            if not (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) in ("UserError", "located")
            ):
                continue
            text = "".join(
                part.value
                for arg in node.args
                for part in ast.walk(arg)
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
            )
            flags = FLAG.findall(text)
            trigger = flags[0] if flags and text.startswith(flags[0]) else None
            found += [
                (trigger, flag, f"{path.name}:{node.lineno}") for flag in flags if flag != trigger
            ]
    return found


def input_commands() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command with an input positional, by name (``trace import`` as 'trace import')."""
    commands = {}

    def visit(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    visit(sub, f"{prefix} {name}".strip())
            elif not action.option_strings and action.dest in ("instance", "input", "trace"):
                commands[prefix] = parser

    visit(build_parser(), "")
    return commands


def options_of(parser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def test_the_readers_suggest_flags():
    flags = {flag for _, flag, _ in suggested_flags()}
    assert {"--allow-unsorted", "--block-size"} <= flags


@pytest.mark.parametrize("command", sorted(set(input_commands()) - NOT_YET))
def test_every_reading_command_takes_the_suggested_flags(command):
    options = options_of(input_commands()[command])
    missing = [
        f"{flag} (suggested at {where})"
        for trigger, flag, where in suggested_flags()
        if (trigger is None or trigger in options) and flag not in options
    ]
    assert not missing, f"{command} does not take {missing}"


UNSORTED = [
    {"timestamp": 5, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]},
    {"timestamp": 3, "input_length": 1024, "output_length": 1, "hash_ids": [1, 3]},
]


@pytest.mark.parametrize(
    "command",
    [
        ["validate"],
        ["simulate", "--model", "pooled"],
        ["simulate", "--model", "pooled", "--backend", "numpy"],
        ["sweep"],
        ["mrc"],
        ["mrc", "--sample-rate", "1"],
        ["budgets", "--kv-model", "llama-3.1-8b"],
        ["cost"],
        ["tree"],
    ],
)
def test_unsorted_trace_is_refused_then_read_with_the_flag(capsys, tmp_path, command):
    path = tmp_path / "unsorted.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in UNSORTED))
    status, out, err = run_cli(capsys, command[0], str(path), *command[1:])
    assert (status, out) == (2, "")
    assert "pass --allow-unsorted" in err and len(err.strip().splitlines()) == 1
    status, out, err = run_cli(capsys, command[0], str(path), *command[1:], "--allow-unsorted")
    assert status == 0, err
    assert "warning" in err and "replaying in file order" in err and out


def test_block_size_reblocks_in_any_command(capsys, tmp_path):
    path = tmp_path / "tokens.jsonl"
    path.write_text(json.dumps({"prompt_token_ids": list(range(10))}) + "\n")
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert status == 2 and "choose a smaller --block-size" in err
    status, out, err = run_cli(
        capsys, "simulate", str(path), "--model", "pooled", "--block-size", "4", "--json"
    )
    assert status == 0, err
    assert json.loads(out)["references"] == 2  # 10 tokens: two full blocks of 4


#: Commands that compare one kind of log with a model, and so read that format only (their help says which).
ONE_FORMAT = {"check-events", "trace check-events"}


@pytest.mark.parametrize("command", sorted(set(input_commands()) - NOT_YET - ONE_FORMAT))
def test_input_help_says_every_format_is_read(command):
    """Every command reads every format (pyverify.inputs.load), so no input's help says 'instance JSON file'."""
    [action] = [
        a
        for a in input_commands()[command]._actions
        if not a.option_strings and a.dest in ("instance", "input", "trace")
    ]
    assert "instance JSON file" not in action.help
    assert "Mooncake" in action.help and "-" in action.help


def _unsorted_trace(tmp_path):
    path = tmp_path / "unsorted.jsonl"
    lines = [
        {"timestamp": 5, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]},
        {"timestamp": 3, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 5, 6]},
        {"timestamp": 7, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_certify_records_its_reading_and_verify_reads_the_same_way(capsys, tmp_path):
    trace, cert = _unsorted_trace(tmp_path), tmp_path / "c.json"
    status, out, err = run_cli(
        capsys, "certify", str(trace), "--model", "pooled", "--capacity", "1", "-o", str(cert)
    )
    assert status == 2 and "pass --allow-unsorted" in err and not cert.exists()
    status, out, err = run_cli(
        capsys,
        "certify",
        str(trace),
        "--model",
        "pooled",
        "--capacity",
        "1",
        "--allow-unsorted",
        "--block-size",
        "1024",
        "-o",
        str(cert),
        "--json",
    )
    assert status == 0, err
    assert (
        err.count("replaying in file order") == 1
    )  # read three times (certify, the checker, the summary), warned once
    recorded = json.loads(cert.read_text())["instance"]["read_with"]
    assert recorded == {"allow_unsorted": True, "block_size": 1024}
    # Re-blocked to 1024-token blocks: [1,3] [1,5] [1] -> 3 distinct blocks, 5 references.
    assert json.loads(out)["floor"] == 3
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 0, err
    # Re-blocked: the trusted checker reads the canonical instance certify wrote beside the
    # certificate (its own reader does not re-block), and says so.
    assert "the canonical instance certify wrote beside the certificate" in out
    assert "VERIFIED" in out
    assert "not checked: instance.read_with {'allow_unsorted': True, 'block_size': 1024}" in out
    # A flag given to verify does not change what it reads there, and it says so.
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace), "--block-size", "2048")
    assert status == 0 and "reading flags --block-size 2048: not applied" in out


@pytest.mark.parametrize(
    "read_with, reason",
    [
        ({"block_size": 0}, "minimum"),
        ({"window": 3}, "read_with"),
        ({"allow_unsorted": False}, "read_with"),
        ([], "read_with"),
    ],
)
def test_a_malformed_reading_record_is_one_line(capsys, tmp_path, read_with, reason):
    trace, cert = _unsorted_trace(tmp_path), tmp_path / "c.json"
    assert (
        run_cli(
            capsys, "certify", str(trace), "--model", "pooled", "--allow-unsorted", "-o", str(cert)
        )[0]
        == 0
    )
    data = json.loads(cert.read_text())
    data["instance"]["read_with"] = read_with
    cert.write_text(json.dumps(data))
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert (
        status == 2
        and reason in err
        and len(err.strip().splitlines()) == 1
        and "Traceback" not in err
    )


def test_audit_reads_with_the_flags_and_its_certificates_verify(capsys, tmp_path):
    trace, report = _unsorted_trace(tmp_path), tmp_path / "rep"
    status, out, err = run_cli(
        capsys,
        "audit",
        str(trace),
        "-o",
        str(report),
        "--allow-unsorted",
        "--block-size",
        "1024",
        "--time-limit",
        "10",
    )
    assert status == 0, err
    [cert] = [
        path
        for path in sorted((report / "certificates").glob("*.json"))
        if not path.name.endswith(".instance.json")
    ]  # the canonical instance beside it
    assert json.loads(cert.read_text())["instance"]["read_with"] == {
        "allow_unsorted": True,
        "block_size": 1024,
    }
    status, out, err = run_cli(capsys, "verify", str(cert), str(trace))
    assert status == 0 and "VERIFIED" in out
