"""What pyverify may replace or empty: only folders holding nothing but what it wrote (pyverify/outdir.py).

Fast tests on the rules themselves; the commands that rely on them (``audit
-o``, ``lean check --build-dir``) are run end to end in
``tests/robustness/test_faults.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyverify.errors import UserError
from pyverify.outdir import (
    MARKER,
    StagedDirectory,
    check_output_dir,
    fresh_owned_dir,
    record_written_files,
    why_not_replaceable,
    written_files,
)

OLEAN_BYTES = b"olean\x02\x014.35.0" + bytes(16)


def staged_report(target: Path, files: dict[str, str], kind: str = "audit") -> Path:
    """A folder written the way ``audit`` writes one: built aside, committed with its file list."""
    with StagedDirectory(target, kind) as stage:
        for name, text in files.items():
            (stage.path / name).parent.mkdir(parents=True, exist_ok=True)
            (stage.path / name).write_text(text)
        stage.commit()
    return target


REPORT = {"report.md": "# report", "summary.json": "{}", "certificates/lab.pooled.json": "{}"}


def test_the_marker_lists_every_file_written_with_its_sha256(tmp_path):
    import hashlib

    target = staged_report(tmp_path / "out", REPORT)
    marker = json.loads((target / MARKER).read_text())
    assert marker["kind"] == "audit"
    assert marker["files"] == {
        name: hashlib.sha256(text.encode()).hexdigest() for name, text in REPORT.items()
    }


def test_an_unchanged_report_is_replaced(tmp_path):
    target = staged_report(tmp_path / "out", REPORT)
    assert why_not_replaceable(target, "audit") is None
    staged_report(target, {"report.md": "# second"})
    assert (target / "report.md").read_text() == "# second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_report_missing_a_file_pyverify_wrote_is_replaced(tmp_path):
    """Deleting one of pyverify's files loses nothing of the user's."""
    target = staged_report(tmp_path / "out", REPORT)
    (target / "certificates" / "lab.pooled.json").unlink()
    assert why_not_replaceable(target, "audit") is None


@pytest.mark.parametrize(
    "change, named",
    [
        (lambda d: (d / "NOTES.md").write_text("mine"), "NOTES.md (pyverify did not write it)"),
        (
            lambda d: (d / "certificates" / "my-instance.json").write_text("{}"),
            "certificates/my-instance.json (pyverify did not write it)",
        ),
        (
            lambda d: (d / "report.md").write_text("# edited by me"),
            "report.md (changed since pyverify wrote it)",
        ),
        (lambda d: (d / "drafts").mkdir(), "drafts/ (a folder pyverify did not write)"),
        (lambda d: (d / "link").symlink_to(d / "report.md"), "link (a symbolic link"),
    ],
    ids=[
        "file added",
        "file added in a subfolder",
        "file edited",
        "empty folder added",
        "link added",
    ],
)
def test_a_report_holding_anything_else_is_refused_naming_it(tmp_path, change, named):
    target = staged_report(tmp_path / "out", REPORT)
    change(target)
    assert named in why_not_replaceable(target, "audit")
    with pytest.raises(UserError) as refused:
        check_output_dir(target, "audit")
    assert str(refused.value).startswith(f"{target}: exists and holds {named}")


def test_the_check_at_the_switch_refuses_a_file_added_while_the_report_was_built(tmp_path):
    target = staged_report(tmp_path / "out", REPORT)
    with StagedDirectory(target, "audit") as stage:
        (stage.path / "report.md").write_text("# new")
        (target / "NOTES.md").write_text("written by the user during the run")
        with pytest.raises(
            UserError, match="changed while the report was built: it holds NOTES.md"
        ):
            stage.commit()
    assert (target / "NOTES.md").read_text() == "written by the user during the run"
    assert (target / "report.md").read_text() == "# report"


def swap_during_the_next_read(monkeypatch, target: Path, other: Path) -> list[int]:
    """Make the next hash of a file inside ``target`` first switch ``other`` into its place, as a concurrent
    run switching its own report in does; returns a list that counts the switches."""
    import pyverify.outdir as outdir

    original, swaps = outdir.file_sha256, []

    def hash_after_a_switch(path):
        if not swaps and Path(path).is_relative_to(target):
            aside = target.with_name(target.name + ".aside")
            target.rename(aside)
            other.rename(target)
            aside.rename(other)
            swaps.append(1)
        return original(path)

    monkeypatch.setattr(outdir, "file_sha256", hash_after_a_switch)
    return swaps


@pytest.mark.parametrize("when", ["before the work", "at the switch"])
def test_a_report_switched_in_by_another_run_while_it_is_read_is_read_again(
    tmp_path, monkeypatch, when
):
    # Two reports pyverify wrote, with the same file names and other contents: read across a switch (the
    # marker of one, the files of the other) each file looked changed, and a run into the same folder as
    # another was refused (seen in the concurrent-audits campaign).
    target = staged_report(tmp_path / "out", REPORT)
    other = staged_report(
        tmp_path / "other", {name: text + " (another run)" for name, text in REPORT.items()}
    )
    if when == "before the work":
        swaps = swap_during_the_next_read(monkeypatch, target, other)
        assert check_output_dir(target, "audit") == target
    else:
        with StagedDirectory(target, "audit") as stage:
            (stage.path / "report.md").write_text("# new")
            swaps = swap_during_the_next_read(monkeypatch, target, other)
            stage.commit()
        assert (target / "report.md").read_text() == "# new"
    assert swaps == [1]


def test_a_report_edited_by_the_user_is_refused_even_when_it_was_read_twice(tmp_path, monkeypatch):
    # The second reading is no way around rule 1: the report switched in holds a file of the user's.
    target = staged_report(tmp_path / "out", REPORT)
    other = staged_report(tmp_path / "other", REPORT)
    (other / "report.md").write_text("# edited by me")
    swap_during_the_next_read(monkeypatch, target, other)
    with pytest.raises(UserError, match="holds report.md \\(changed since pyverify wrote it\\)"):
        check_output_dir(target, "audit")


@pytest.mark.parametrize("where", ["inside", "is", "contains", "link inside"])
def test_a_folder_holding_an_input_of_the_command_is_never_replaced(tmp_path, where):
    target = staged_report(tmp_path / "out", REPORT)
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    if where == "link inside":
        (target / "input.json").symlink_to(outside)
    given = {
        "inside": target / "summary.json",
        "is": target,
        "contains": tmp_path,
        "link inside": target / "input.json",
    }[where]
    with pytest.raises(UserError, match="an input of this command"):
        check_output_dir(target, "audit", inputs=[str(given)])


def test_inputs_elsewhere_and_standard_input_do_not_stop_a_replacement(tmp_path):
    target = staged_report(tmp_path / "out", REPORT)
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    assert check_output_dir(target, "audit", inputs=["-", str(outside)]) == target


def test_an_input_reached_through_a_linked_folder_counts(tmp_path):
    target = staged_report(tmp_path / "out", REPORT)
    (tmp_path / "alias").symlink_to(target)
    with pytest.raises(UserError, match="an input of this command"):
        check_output_dir(target, "audit", inputs=[str(tmp_path / "alias" / "summary.json")])


# --- kinds: an audit report is not a Lean build folder ------------------------------------


def test_fresh_owned_dir_refuses_a_folder_of_another_kind(tmp_path):
    report = staged_report(tmp_path / "rep", REPORT)
    with pytest.raises(
        UserError, match="is an audit report made by pyverify, not a Lean build folder"
    ):
        fresh_owned_dir(report, "lean-build")
    assert written_files(report).keys() == REPORT.keys()


def test_fresh_owned_dir_empties_its_own_kind_and_marks_it(tmp_path):
    build = fresh_owned_dir(tmp_path / "build", "lean-build")
    (build / "PrefixPool").mkdir()
    (build / "PrefixPool" / "Core.olean").write_bytes(OLEAN_BYTES)
    build = fresh_owned_dir(build, "lean-build")
    assert [p.name for p in build.iterdir()] == [MARKER]
    assert json.loads((build / MARKER).read_text())["kind"] == "lean-build"


@pytest.mark.parametrize(
    "name, data, named",
    [
        ("mine.txt", b"mine", "mine.txt (not a Lean build product)"),
        ("PrefixPool/notes.json", b"{}", "PrefixPool/notes.json (not a Lean build product)"),
        (
            "PrefixPool/Mine.olean",
            b"my text",
            "PrefixPool/Mine.olean (named .olean, but not a Lean .olean file)",
        ),
    ],
)
def test_a_build_folder_without_a_file_list_holds_only_lean_build_products(
    tmp_path, name, data, named
):
    """A build stopped before its files were recorded: only .olean (with Lean's magic) and .ilean files."""
    build = fresh_owned_dir(tmp_path / "build", "lean-build")
    (build / "PrefixPool").mkdir()
    (build / "PrefixPool.olean").write_bytes(OLEAN_BYTES)
    (build / "PrefixPool" / "Core.ilean").write_text("{}")
    assert why_not_replaceable(build, "lean-build") is None
    (build / name).write_bytes(data)
    assert why_not_replaceable(build, "lean-build") == f"holds {named}"


def test_a_recorded_build_folder_is_checked_by_its_hashes(tmp_path):
    build = fresh_owned_dir(tmp_path / "build", "lean-build")
    (build / "PrefixPool.olean").write_bytes(OLEAN_BYTES)
    record_written_files(build)
    assert json.loads((build / MARKER).read_text())["files"].keys() == {"PrefixPool.olean"}
    assert why_not_replaceable(build, "lean-build") is None
    (build / "PrefixPool.olean").write_bytes(OLEAN_BYTES + b"changed")
    assert (
        why_not_replaceable(build, "lean-build")
        == "holds PrefixPool.olean (changed since pyverify wrote it)"
    )


# --- reports written before markers listed their files ------------------------------------


def old_report(target: Path, marker: bool) -> Path:
    """An audit report as pyverify 0.1 (no marker) or 0.2 (a marker without a file list) wrote it."""
    (target / "certificates").mkdir(parents=True)
    summary = {
        "format": "pyverify.audit/1",
        "certificates": {"pooled": {"file": "certificates/lab.pooled.json"}},
    }
    (target / "summary.json").write_text(json.dumps(summary))
    (target / "report.md").write_text("# old report")
    (target / "certificates" / "lab.pooled.json").write_text("{}")
    if marker:
        (target / MARKER).write_text(
            json.dumps({"tool": "pyverify", "kind": "audit", "complete": True})
        )
    return target


@pytest.mark.parametrize(
    "marker", [False, True], ids=["0.1, no marker", "marker without a file list"]
)
def test_an_old_report_is_replaced_only_if_it_holds_only_an_audits_files(tmp_path, marker):
    report = old_report(tmp_path / "old", marker)
    assert why_not_replaceable(report, "audit") is None
    (report / "certificates" / "my-instance.json").write_text("{}")
    assert (
        why_not_replaceable(report, "audit")
        == "holds certificates/my-instance.json (an audit does not write it)"
    )
    (report / "certificates" / "my-instance.json").unlink()
    (report / "NOTES.md").write_text("mine")
    assert why_not_replaceable(report, "audit") == "holds NOTES.md (an audit does not write it)"


def test_a_folder_with_a_summary_that_is_no_audit_summary_is_not_pyverifys(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "summary.json").write_text('{"format": "my-own"}')
    assert "was not made by pyverify" in why_not_replaceable(folder, "audit")
