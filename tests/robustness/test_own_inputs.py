"""No command writes over one of its own inputs (issue 49, items 1, 18 and 27).

``trace import same.json -o same.json`` used to replace the instance it read,
``certify in.jsonl -o in.jsonl`` the trace, and ``sweep c.png --chart c`` (an
input is told apart by content, so a trace may be named ``c.png``) the trace
with a PNG. Every command that writes a file is run here with its output
naming its input in each way a path can: the same name, a hard link, the file
a symbolic link leads to, a folder reached through a link, and a chart's
derived name (``--chart c`` writes ``c.png`` and ``c.svg``). Each must refuse
in one line naming the file and the reason, exit 2, and leave every file as
it was, links included, with nothing new beside them (not even a temporary).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..helpers import run_cli
from .conftest import record
from .hostile import GOOD_LINES

TRACE = "".join(json.dumps(line) + "\n" for line in GOOD_LINES).encode()

#: Every command that writes a file: the words before its output, its output flag, and the
#: suffix of a file it writes (a chart path without one names both a .png and a .svg).
WRITERS = {
    "trace import": (["trace", "import", "INPUT"], "-o", ".json"),
    "trace import (parquet)": (["trace", "import", "INPUT"], "-o", ".parquet"),
    "certify": (["certify", "INPUT", "--model", "pooled"], "-o", ".json"),
    "sweep --chart": (["sweep", "INPUT"], "--chart", ".png"),
    "mrc --chart": (["mrc", "INPUT"], "--chart", ".svg"),
    "cost --chart": (["cost", "INPUT"], "--chart", ".png"),
    "replay --chart": (["replay", "INPUT"], "--chart", ".png"),
    "replay --per-request": (["replay", "INPUT"], "--per-request", ".jsonl"),
    "tree --draw": (["tree", "INPUT"], "--draw", ".svg"),
}
CHARTS = [name for name, (_, flag, _) in WRITERS.items() if flag in ("--chart", "--draw")]


def same_name(folder: Path, victim: str) -> tuple[str, str]:
    (folder / victim).write_bytes(TRACE)
    return victim, victim


def hard_link(folder: Path, victim: str) -> tuple[str, str]:
    (folder / "trace.jsonl").write_bytes(TRACE)
    os.link(folder / "trace.jsonl", folder / victim)
    return "trace.jsonl", victim


def symbolic_link_to_it(folder: Path, victim: str) -> tuple[str, str]:
    (folder / victim).write_bytes(TRACE)
    (folder / "trace.jsonl").symlink_to(victim)
    return "trace.jsonl", victim


def through_a_linked_folder(folder: Path, victim: str) -> tuple[str, str]:
    (folder / victim).write_bytes(TRACE)
    (folder / "alias").symlink_to(".")
    return f"alias/{victim}", victim


def derived_chart_name(folder: Path, victim: str) -> tuple[str, str]:
    (folder / victim).write_bytes(TRACE)
    return victim, str(Path(victim).with_suffix(""))  # --chart c writes c.png and c.svg


WAYS = [same_name, hard_link, symbolic_link_to_it, through_a_linked_folder]


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder``: a file's bytes and inode (a hard link stays one), a link's."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            entries[path.name] = ("link", os.readlink(path))
        elif path.is_file():
            entries[str(path.relative_to(folder))] = ("file", path.read_bytes(), path.stat().st_ino)
        else:
            entries[str(path.relative_to(folder))] = ("folder",)
    return entries


def refuses_to_write_over_its_input(capsys, folder: Path, command: str, make) -> None:
    words, flag, suffix = WRITERS[command]
    given, output = make(folder, f"victim{suffix}")
    before = snapshot(folder)
    argv = [given if word == "INPUT" else word for word in words]
    status, out, err = run_cli(capsys, *argv, flag, output)
    lines = err.strip().splitlines()
    ok = (
        status == 2
        and len(lines) == 1
        and "Traceback" not in err
        and f"victim{suffix}: is " in lines[0]
        and "an input of this command" in lines[0]
        and snapshot(folder) == before
    )
    record("output over an input", ok)
    assert ok, (command, make.__name__, status, err, out[-300:], sorted(snapshot(folder)))


@pytest.mark.parametrize("make", WAYS, ids=lambda make: make.__name__)
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_no_command_writes_over_its_input(capsys, tmp_path, monkeypatch, command, make):
    monkeypatch.chdir(tmp_path)
    refuses_to_write_over_its_input(capsys, tmp_path, command, make)


@pytest.mark.parametrize("command", sorted(CHARTS))
def test_no_chart_stem_names_an_input(capsys, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    refuses_to_write_over_its_input(capsys, tmp_path, command, derived_chart_name)


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_an_output_named_as_a_new_folder_is_refused(capsys, tmp_path, monkeypatch, command):
    """``-o newdir/`` wrote a file ``newdir`` (and ``--chart newdir/`` newdir.png and .svg)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.jsonl").write_bytes(TRACE)
    words, flag, _ = WRITERS[command]
    before = snapshot(tmp_path)
    argv = ["trace.jsonl" if word == "INPUT" else word for word in words]
    status, _, err = run_cli(capsys, *argv, flag, "newdir/")
    lines = err.strip().splitlines()
    ok = (
        status == 2
        and len(lines) == 1
        and "newdir/: names a folder" in lines[0]
        and snapshot(tmp_path) == before
    )
    record("output named as a folder", ok)
    assert ok, (command, status, err, sorted(snapshot(tmp_path)))


@pytest.mark.parametrize("given", ["report/victim.json", "alias/victim.json"])
def test_audit_still_refuses_a_report_folder_holding_its_input(
    capsys, tmp_path, monkeypatch, given
):
    """``audit -o DIR`` had this rule before the files did (pyverify/outdir.py, rule 2): kept."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "victim.json").write_bytes(TRACE)
    (tmp_path / "alias").symlink_to("report")
    before = snapshot(tmp_path)
    status, _, err = run_cli(capsys, "audit", given, "-o", "report")
    lines = err.strip().splitlines()
    ok = (
        status == 2
        and len(lines) == 1
        and "an input of this command" in lines[0]
        and snapshot(tmp_path) == before
    )
    record("output over an input", ok)
    assert ok, (status, err, sorted(snapshot(tmp_path)))


@pytest.mark.parametrize("command", ["trace import", "certify", "sweep --chart"])
def test_no_command_writes_over_the_file_its_standard_input_comes_from(tmp_path, command):
    """``pyverify trace import - -o f.json < f.json``: standard input is that file, so it is an input."""
    import subprocess
    import sys

    words, flag, suffix = WRITERS[command]
    victim = tmp_path / f"victim{suffix}"
    victim.write_bytes(TRACE)
    before = snapshot(tmp_path)
    argv = ["-" if word == "INPUT" else word for word in words]
    with victim.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "pyverify", *argv, flag, victim.name],
            stdin=stdin,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    lines = result.stderr.strip().splitlines()
    ok = (
        result.returncode == 2
        and len(lines) == 1
        and "standard input" in lines[0]
        and snapshot(tmp_path) == before
    )
    record("output over an input", ok)
    assert ok, (command, result.returncode, result.stderr)
