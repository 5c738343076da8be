"""pyverify.fileio: the checks before a write, and the temporaries a killed writer leaves."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from pyverify.commands.argtypes import chart_path, input_file, output_file, refuse_writing_inputs
from pyverify.errors import UserError
from pyverify.fileio import check_output_file, refuse_folder_name, same_file


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
        refuse_writing_inputs(argparse.Namespace(instance=input_file("c.svg"),
                                                 chart=chart_path("c")))
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
