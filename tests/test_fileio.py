"""pyverify.fileio: the checks before a write, and the temporaries a killed writer leaves."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyverify.commands.argtypes import chart_path, input_file, output_file, refuse_writing_inputs
from pyverify.errors import UserError
from pyverify.fileio import (
    check_output_file,
    new_temporary,
    refuse_folder_name,
    same_file,
    sweep_stale_temporaries,
    write_text_atomic,
)


def dead_pid() -> int:
    return int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
        ).stdout
    )


# --- an output that is an input -----------------------------------------------------------


@pytest.fixture
def files(tmp_path) -> Path:
    (tmp_path / "in.json").write_text("input")
    (tmp_path / "twin.json").write_text("input")  # the same bytes, another file
    os.link(tmp_path / "in.json", tmp_path / "hard.json")
    (tmp_path / "soft.json").symlink_to("in.json")
    return tmp_path


def test_same_file_is_identity_not_name_or_content(files):
    assert same_file(files / "in.json", files / "in.json")
    assert same_file(files / "in.json", files / "hard.json")
    assert same_file(files / "soft.json", files / "in.json")
    assert not same_file(files / "in.json", files / "twin.json")
    assert not same_file(files / "in.json", files / "missing.json")
    assert not same_file(files / "missing.json", files / "missing.json")


@pytest.mark.parametrize("given", ["in.json", "hard.json", "soft.json"])
def test_an_output_that_is_an_input_is_refused(files, given):
    with pytest.raises(UserError, match=r"in\.json: is .*an input of this command: refusing"):
        check_output_file(files / "in.json", inputs=[files / given])


def test_an_output_that_is_not_an_input_passes(files):
    twin = files / "twin.json"
    assert check_output_file(twin, inputs=[files / "in.json", "-"]) == twin
    assert check_output_file(files / "new.json", inputs=[files / "in.json"]) == files / "new.json"


def test_standard_input_is_not_a_file_to_protect(files, monkeypatch):
    monkeypatch.chdir(files)
    (files / "-").write_text("a file named -")
    check_output_file("-", inputs=["-"])  # '-' as an input means the pipe, not this file


def test_the_command_line_declares_outputs_and_inputs(files, monkeypatch):
    monkeypatch.chdir(files)
    inputs = [input_file("twin.json"), input_file("hard.json")]  # a list, as --rag-lengths
    with pytest.raises(UserError, match="in.json: is the same file as hard.json"):
        refuse_writing_inputs(argparse.Namespace(output=output_file("in.json"), rag_lengths=inputs))
    (files / "c.svg").write_text("a trace named c.svg")
    with pytest.raises(UserError, match="c.svg: is an input"):
        refuse_writing_inputs(
            argparse.Namespace(instance=input_file("c.svg"), chart=chart_path("c"))
        )
    # a value not declared an input (an instance name, say) is not one
    refuse_writing_inputs(argparse.Namespace(output=output_file("in.json"), name="in.json"))


@pytest.mark.parametrize("text", ["newdir/", "newdir/.", "newdir/..", ".", "a/b/"])
def test_an_output_named_as_a_folder_is_refused(text):
    with pytest.raises(UserError, match="names a folder"):
        refuse_folder_name(text)
    with pytest.raises(UserError, match="names a folder"):
        check_output_file(text)


def test_a_file_name_is_not_a_folder_name():
    refuse_folder_name("newdir/out.json")
    refuse_folder_name(".hidden.json")


# --- temporaries left by a killed writer ----------------------------------------------------


def killed_writer(target: Path) -> list[Path]:
    """Run a writer of ``target`` that is killed (SIGKILL) half way; the temporaries it left."""
    script = (
        "import os, signal, sys\nfrom pyverify.fileio import atomic_path\n"
        "with atomic_path(sys.argv[1]) as tmp:\n"
        "    tmp.write_bytes(b'half a file')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(target)], check=False)
    return sorted(p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}."))


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "c.json"
    left = killed_writer(target)
    assert len(left) == 1 and left[0].read_bytes() == b"half a file"
    write_text_atomic(target, "done")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


@pytest.mark.parametrize("middle", ["PID.mine", "PID.12345", "PID.INODE.x", "PID"])
def test_a_users_file_named_like_a_temporary_is_kept(tmp_path, middle):
    """Only a file whose name carries its own inode number, as a pyverify temporary, is removed."""
    target = tmp_path / "c.json"
    mine = tmp_path / f".c.json.{middle.replace('PID', str(dead_pid()))}.part"
    mine.write_text("my notes")
    if "INODE" in middle:
        mine = mine.rename(tmp_path / mine.name.replace("INODE", str(mine.stat().st_ino)))
    write_text_atomic(target, "done")
    assert mine.read_text() == "my notes"


def test_a_copy_of_a_temporary_is_kept(tmp_path):
    """A copy carries the name but not the inode: pyverify did not make it, so it stays."""
    target = tmp_path / "c.json"
    (left,) = killed_writer(target)
    copy = left.with_name(left.name)  # same name, new file: move the original away, copy it back
    moved = left.rename(tmp_path / "kept")
    copy.write_bytes(moved.read_bytes())
    write_text_atomic(target, "done")
    assert copy.read_bytes() == b"half a file"


def test_a_link_named_as_its_own_temporary_is_kept(tmp_path):
    target = tmp_path / "c.json"
    (tmp_path / "real").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to("real")
    named = link.rename(tmp_path / f".c.json.{dead_pid()}.{os.lstat(link).st_ino}.part")
    sweep_stale_temporaries(target)
    assert named.is_symlink() and (tmp_path / "real").read_text() == "mine"


def test_a_running_writers_temporary_is_kept(tmp_path):
    target = tmp_path / "c.json"
    mine = new_temporary(target)  # this process is alive
    sweep_stale_temporaries(target)
    assert mine.exists()


def test_a_name_with_a_process_id_no_process_can_have_is_kept(tmp_path):
    target = tmp_path / "c.json"
    mine = tmp_path / f".c.json.{10**30}.7.part"
    mine.write_text("mine")
    sweep_stale_temporaries(target)
    assert mine.exists()
