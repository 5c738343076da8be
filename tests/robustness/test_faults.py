"""Fault injection for every command that writes: kills, full disks, read-only folders, links, folders in the way.

The promise under test (see ``pyverify/fileio.py`` and ``pyverify/outdir.py``):
nothing of the user's is ever lost, nothing partial is left behind, and every
refusal is one line with exit status 2 (130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyverify.outdir import MARKER, StagedDirectory, recover

from ..conftest import LAB_INSTANCE, REPO
from ..helpers import run_cli
from .conftest import SCALE, record

REGISTRY = str(REPO / "lean" / "theorems.json")
SMALL = REPO / "instances" / "greedy-gap-30.json"

# Every command that writes, with OUT standing for the path it writes.
WRITERS = {
    "audit": (["audit", str(LAB_INSTANCE), "-o", "OUT", "--registry", REGISTRY], "dir"),
    "certify": (["certify", str(SMALL), "--model", "pooled", "-o", "OUT"], "file"),
    "certify-packed": (
        [
            "certify",
            "TRACE",
            "--model",
            "pooled",
            "--capacity",
            "2",
            "--witness-form",
            "packed",
            "-o",
            "OUT",
        ],
        "file",
    ),
    "trace-import": (["trace", "import", "TRACE", "-o", "OUT"], "file"),
    "trace-import-parquet": (["trace", "import", "TRACE", "-o", "OUT"], "parquet"),
    "sweep-chart": (["sweep", str(LAB_INSTANCE), "--chart", "OUT"], "chart"),
    "mrc-chart": (["mrc", str(LAB_INSTANCE), "--chart", "OUT"], "chart"),
    "cost-chart": (["cost", str(LAB_INSTANCE), "--chart", "OUT"], "chart"),
    "tree-draw": (["tree", str(SMALL), "--draw", "OUT"], "chart"),
    "replay-chart": (["replay", str(SMALL), "--no-timing", "--chart", "OUT"], "chart"),
    "replay-per-request": (["replay", str(SMALL), "--no-timing", "--per-request", "OUT"], "file"),
}


TINY_TRACE = (
    '{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}\n'
    '{"timestamp": 1, "input_length": 700, "output_length": 1, "hash_ids": [1, 2, 3]}\n'
)


@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("trace") / "tiny.jsonl"
    path.write_text(TINY_TRACE)
    return path


@pytest.fixture(autouse=True)
def _trace_for_argv(tiny_trace, monkeypatch):
    monkeypatch.setitem(globals(), "TRACE_PATH", str(tiny_trace))


TRACE_PATH = ""


def target_name(command: str) -> str:
    """A name for what ``command`` writes: a file name with the suffix that selects its format, else a stem."""
    return {"file": "out.json", "parquet": "out.parquet"}.get(WRITERS[command][1], "out")


def argv_for(command: str, out: Path) -> list[str]:
    args, _ = WRITERS[command]
    return [str(out) if a == "OUT" else TRACE_PATH if a == "TRACE" else a for a in args]


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for folders and links): what must not change."""
    result = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        result[key] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return result


def expect_one_line_refusal(capsys, argv, folder: Path, kind: str) -> None:
    before = snapshot(folder)
    status, out, err = run_cli(capsys, *argv)
    ok = status == 2 and len(err.strip().splitlines()) == 1 and snapshot(folder) == before
    record(kind, ok)
    assert ok, (argv, status, err, out[-300:])


# --- what stands at the target -------------------------------------------------


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_folder_of_the_users_in_the_way(capsys, tmp_path, command):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    out = (
        target if WRITERS[command][1] != "chart" else target
    )  # a chart stem naming a folder: x.png is free
    if WRITERS[command][1] == "chart":
        (tmp_path / "mine.png").mkdir()  # the chart's own file name is taken by a folder
    expect_one_line_refusal(capsys, argv_for(command, out), tmp_path, "folder in the way")


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_symbolic_link_at_the_target(capsys, tmp_path, command):
    real = tmp_path / "real"
    real.mkdir()
    (real / "precious.txt").write_text("keep me")
    kind = WRITERS[command][1]
    link = tmp_path / ("link" if kind != "chart" else "link.png")
    link.symlink_to(real if kind == "dir" else real / "precious.txt")
    expect_one_line_refusal(capsys, argv_for(command, link), tmp_path, "symbolic link")


@pytest.mark.parametrize("name", [".", "..", "instances", "CHECKOUT"])
def test_audit_never_replaces_a_folder_it_did_not_make(capsys, tmp_path, monkeypatch, name):
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "instances", checkout / "instances")
    (checkout / ".git").mkdir()
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    monkeypatch.chdir(checkout)
    target = str(checkout) if name == "CHECKOUT" else name
    expect_one_line_refusal(
        capsys,
        ["audit", str(LAB_INSTANCE), "-o", target, "--registry", REGISTRY],
        tmp_path,
        "audit target not pyverify's",
    )
    # refused by the check before any work, not only by the last-moment check at the switch
    status, _, err = run_cli(
        capsys, "audit", str(LAB_INSTANCE), "-o", target, "--registry", REGISTRY
    )
    assert "was not made by pyverify" in err or "current" in err


def test_audit_replaces_its_own_report_and_an_empty_folder(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (
        run_cli(capsys, "audit", str(LAB_INSTANCE), "-o", str(empty), "--registry", REGISTRY)[0]
        == 0
    )
    assert (empty / MARKER).is_file() and (empty / "report.md").is_file()
    assert (
        run_cli(capsys, "audit", str(LAB_INSTANCE), "-o", str(empty), "--registry", REGISTRY)[0]
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]
    assert oct(empty.stat().st_mode & 0o777) != oct(
        0o700
    )  # readable like any folder the user makes


@pytest.fixture(scope="module")
def lab_report(tmp_path_factory) -> Path:
    """One audit report of the lab instance; each test below works on a copy."""
    out = tmp_path_factory.mktemp("lab-report") / "proj"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify",
            "audit",
            str(LAB_INSTANCE),
            "-o",
            str(out),
            "--registry",
            REGISTRY,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    return out


def copy_of(report: Path, where: Path) -> Path:
    shutil.copytree(report, where / "proj", symlinks=True)
    return where / "proj"


# What the user may have put into, or changed in, a report folder: (change, the argv's instance, what the one line names).
USERS_FILES_IN_A_REPORT = {
    "notes added": (lambda d: (d / "NOTES.md").write_text("my notes"), None, "NOTES.md"),
    "the input copied in": (
        lambda d: shutil.copy(LAB_INSTANCE, d / "my-instance.json"),
        "proj/my-instance.json",
        "proj/my-instance.json",
    ),
    "notes and the input": (
        lambda d: (
            (d / "NOTES.md").write_text("my notes"),
            shutil.copy(LAB_INSTANCE, d / "my-instance.json"),
        ),
        "proj/my-instance.json",
        "proj/my-instance.json",
    ),
    "a file beside the certificates": (
        lambda d: shutil.copy(LAB_INSTANCE, d / "certificates" / "mine.json"),
        None,
        "certificates/mine.json",
    ),
    "the report edited": (
        lambda d: (d / "report.md").write_text("# my edits"),
        None,
        "report.md (changed",
    ),
    "an empty folder": (lambda d: (d / "drafts").mkdir(), None, "drafts/"),
    "the input is the folder": (lambda d: None, "proj", "proj, an input"),
}


@pytest.mark.parametrize("case", sorted(USERS_FILES_IN_A_REPORT))
def test_audit_replaces_only_what_it_wrote(capsys, tmp_path, monkeypatch, lab_report, case):
    """`audit -o proj` into a report the user added to: one line naming the file, exit 2, nothing deleted."""
    change, instance, named = USERS_FILES_IN_A_REPORT[case]
    proj = copy_of(lab_report, tmp_path)
    change(proj)
    monkeypatch.chdir(tmp_path)
    argv = ["audit", instance or str(LAB_INSTANCE), "-o", "proj", "--registry", REGISTRY]
    expect_one_line_refusal(capsys, argv, tmp_path, "user's file in a report folder")
    status, out, err = run_cli(capsys, *argv)
    assert named in err and out == ""


def test_audit_replaces_its_own_report_once_the_users_files_are_gone(
    capsys, tmp_path, monkeypatch, lab_report
):
    proj = copy_of(lab_report, tmp_path)
    (
        proj / "sweep.svg"
    ).unlink()  # a file pyverify wrote, deleted: nothing of the user's is lost by replacing
    monkeypatch.chdir(tmp_path)
    status, _, err = run_cli(
        capsys, "audit", str(LAB_INSTANCE), "-o", "proj", "--registry", REGISTRY
    )
    assert status == 0, err
    assert (proj / "sweep.svg").is_file()


def test_lean_build_dir_is_never_an_audit_report(capsys, tmp_path, lab_report):
    """`lean check --build-dir` empties its folder: an audit report (with or without the user's files) is refused."""
    proj = copy_of(lab_report, tmp_path)
    expect_one_line_refusal(
        capsys,
        ["lean", "check", "--build-dir", str(proj)],
        tmp_path,
        "audit report as a lean build dir",
    )
    (proj / "mine.txt").write_text("mine")
    expect_one_line_refusal(
        capsys,
        ["lean", "check", "--build-dir", str(proj)],
        tmp_path,
        "audit report as a lean build dir",
    )


def test_lean_build_dir_with_a_users_file_is_refused(capsys, tmp_path):
    build = tmp_path / "build"
    status, _, err = run_cli(capsys, "lean", "check", "--build-dir", str(build))
    assert status == 0, err
    (build / "mine.txt").write_text("mine")
    expect_one_line_refusal(
        capsys,
        ["lean", "check", "--build-dir", str(build)],
        tmp_path,
        "user's file in a lean build dir",
    )


def test_lean_build_dir_marker_lists_the_files_built(capsys, tmp_path):
    """After a build the marker lists every .olean with its hash, so a later run replaces only those."""
    from pyverify.outdir import written_files

    build = tmp_path / "build"
    status, _, err = run_cli(capsys, "lean", "check", "--build-dir", str(build))
    assert status == 0, err
    listed = json.loads((build / MARKER).read_text()).get("files")
    assert listed == written_files(build) and "PrefixPool.olean" in listed


def test_instance_names_never_steer_where_files_go(capsys, tmp_path):
    """A name like ../../x is refused by the schema; a trace named oddly still writes inside the report."""
    trace = tmp_path / "..evil name!.jsonl"
    trace.write_text('{"hash_ids": [1, 2]}\n{"hash_ids": [1]}\n')
    out = tmp_path / "report"
    status, _, err = run_cli(capsys, "audit", str(trace), "-o", str(out), "--registry", REGISTRY)
    assert status == 0, err
    written = [p for p in tmp_path.rglob("*.json") if out not in p.parents]
    assert written == []
    assert sorted(p.name for p in (out / "certificates").iterdir()) == ["evil_name_.pooled.json"]


# --- read-only and full file systems (real mounts where the machine allows them) ---


def mount_tmpfs(where: Path, options: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True
    )
    return result.returncode == 0


def unmount(where: Path) -> None:
    subprocess.run(["umount", str(where)], capture_output=True)


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_read_only_folder(capsys, tmp_path, command):
    folder = tmp_path / "ro"
    if not mount_tmpfs(folder, "ro,size=64k"):
        pytest.skip("cannot mount a read-only tmpfs here (needs root)")
    try:
        expect_one_line_refusal(
            capsys, argv_for(command, folder / target_name(command)), tmp_path, "read-only folder"
        )
    finally:
        unmount(folder)


def fill(path: Path) -> None:
    """Write until the file system says it is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"x" * 512):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("nested", [False, True], ids=["in the folder", "in new folders"])
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_full_disk(capsys, tmp_path, command, nested):
    """One line naming what could not be written, and nothing left: no temporary, no folder made for it."""
    folder = tmp_path / "full"
    if not mount_tmpfs(folder, "size=8k"):
        pytest.skip("cannot mount a tiny tmpfs here (needs root)")
    try:
        fill(folder / "filler")
        before = snapshot(folder)
        target = (
            folder / "new" / "sub" / target_name(command)
            if nested
            else folder / target_name(command)
        )
        status, out, err = run_cli(capsys, *argv_for(command, target))
        leftovers = set(snapshot(folder)) - set(before)
        ok = (
            status == 2
            and len(err.strip().splitlines()) == 1
            and not leftovers
            and f"error: {target}" in err
        )
        record("full disk, new folders" if nested else "full disk", ok)
        assert ok, (status, err, leftovers)
    finally:
        unmount(folder)


@pytest.mark.parametrize("command", sorted(c for c, (_, kind) in WRITERS.items() if kind != "dir"))
def test_injected_write_failure_at_each_write(capsys, tmp_path, monkeypatch, command):
    """ENOSPC at the first, second, ... write of a command: one line, and no file at all (PNG and SVG as a set),
    nor the missing folders it made for them (``-o new/sub/x`` leaves no ``new/sub``)."""
    import errno

    import pyverify.fileio as fileio

    real_chmod = fileio.os.chmod
    for fail_at in range(1, 3):
        made_here = (
            tmp_path / f"try{fail_at}"
        )  # does not exist: the command makes it, then must remove it
        out = made_here / "new" / "sub" / target_name(command)
        calls = [0]

        def failing_chmod(path, mode, *args, **kwargs):
            calls[0] += 1
            if calls[0] == fail_at:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            return real_chmod(path, mode, *args, **kwargs)

        monkeypatch.setattr(fileio.os, "chmod", failing_chmod)
        status, _, err = run_cli(capsys, *argv_for(command, out))
        monkeypatch.setattr(fileio.os, "chmod", real_chmod)
        if calls[0] < fail_at:
            continue  # the command writes fewer files than that
        leftovers = sorted(str(p) for p in tmp_path.rglob("*")) if made_here.exists() else []
        ok = (
            status == 2
            and "no space left" in err
            and leftovers == []
            and len(err.strip().splitlines()) == 1
        )
        record("injected write failure", ok)
        assert ok, (fail_at, status, err, leftovers)


def test_audit_into_missing_folders_is_refused_and_makes_none(capsys, tmp_path):
    expect_one_line_refusal(
        capsys,
        [
            "audit",
            str(LAB_INSTANCE),
            "-o",
            str(tmp_path / "new" / "sub" / "x"),
            "--registry",
            REGISTRY,
        ],
        tmp_path,
        "missing folders",
    )
    assert list(tmp_path.iterdir()) == []


# --- kills ---------------------------------------------------------------------------


def start_audit(out: Path, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyverify",
            "audit",
            str(LAB_INSTANCE),
            "-o",
            str(out),
            "--registry",
            REGISTRY,
        ],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_it_handles_sigterm(process: subprocess.Popen, timeout: float = 60.0) -> None:
    """Wait until ``process`` has installed its own SIGTERM handler (pyverify's first lines do).

    Before that, the interpreter is still starting and a signal ends it by the default action (status
    -15, nothing printed), which no program can prevent. On a loaded machine start-up takes longer than
    any fixed delay, so the delays below count from this ready point, read from the kernel's caught-signal
    mask in /proc, not from the launch.
    """
    status = Path(f"/proc/{process.pid}/status")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            caught = next(
                line for line in status.read_text().splitlines() if line.startswith("SigCgt:")
            )
        except (OSError, StopIteration):
            break
        if int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.002)


def leftovers_beside(out: Path) -> list[str]:
    return sorted(
        p.name
        for p in out.parent.iterdir()
        if p.name != out.name and p.name.startswith(f".{out.name}.")
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_audit_leaves_nothing_and_keeps_the_old_report(tmp_path, signum):
    out = tmp_path / "report"
    delays = [0.15, 0.4, 0.8, 1.5, 3.0] + [0.1 * k for k in range(1, 5 * (SCALE - 1) + 1)]
    for index, delay in enumerate(delays):
        keep_old = index % 2 == 1
        if keep_old and not out.exists():
            assert (
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pyverify",
                        "audit",
                        str(LAB_INSTANCE),
                        "-o",
                        str(out),
                        "--registry",
                        REGISTRY,
                    ],
                    cwd=tmp_path,
                    capture_output=True,
                ).returncode
                == 0
            )
        old = snapshot(out) if out.exists() else None
        process = start_audit(out, tmp_path)
        wait_until_it_handles_sigterm(process)
        time.sleep(delay)
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
        finished = process.returncode == 0
        expected_status = 130 if signum == signal.SIGINT else 143
        ok = finished or (
            process.returncode == expected_status
            and "Traceback" not in err
            and len(err.strip().splitlines()) == 1
        )
        ok = ok and leftovers_beside(out) == []
        if not finished:
            ok = ok and (
                (old is None and not out.exists()) or (old is not None and snapshot(out) == old)
            )
        record(f"kill ({signal.Signals(signum).name})", ok)
        assert ok, (delay, process.returncode, err, leftovers_beside(out))


def test_sigkill_leaves_staging_that_the_next_run_removes(tmp_path):
    out = tmp_path / "report"
    for delay in [0.5, 2.0][: 2 * SCALE]:
        process = start_audit(out, tmp_path)
        time.sleep(delay)
        process.kill()
        process.communicate(timeout=60)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pyverify",
                "audit",
                str(LAB_INSTANCE),
                "-o",
                str(out),
                "--registry",
                REGISTRY,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        ok = (
            result.returncode == 0 and leftovers_beside(out) == [] and (out / "report.md").is_file()
        )
        record("kill (SIGKILL) then rerun", ok)
        assert ok, (result.stderr, leftovers_beside(out))


def test_killed_chart_writer_leaves_a_temporary_the_next_run_removes(capsys, tmp_path):
    # A writer killed half way (SIGKILL cannot be caught), through the same code every chart is written with.
    script = (
        "import os, signal, sys\nfrom pyverify.fileio import atomic_path\n"
        "with atomic_path(sys.argv[1]) as tmp:\n    tmp.write_bytes(b'half a png')\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "mrc.png")], check=False)
    (stale,) = tmp_path.glob(".mrc.png.*.part")
    status, _, _ = run_cli(capsys, "mrc", str(LAB_INSTANCE), "--chart", str(tmp_path / "mrc.png"))
    assert status == 0 and not stale.exists() and (tmp_path / "mrc.png").is_file()


# --- the switch itself -------------------------------------------------------------------


def dead_pid() -> int:
    return int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
        ).stdout
    )


def fake_report(path: Path, text: str, complete: bool = True) -> None:
    path.mkdir()
    (path / MARKER).write_text(
        json.dumps({"tool": "pyverify", "kind": "audit", "complete": complete})
    )
    (path / "report.md").write_text(text)


def test_switch_interrupted_between_renames_is_finished_by_the_next_run(tmp_path):
    pid = dead_pid()
    fake_report(tmp_path / f".out.pyverify-old.{pid}.aaaa", "old")
    fake_report(tmp_path / f".out.pyverify-staging.{pid}.bbbb", "new", complete=True)
    said = []
    recover(tmp_path / "out", said.append)
    assert (tmp_path / "out" / "report.md").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and "finished" in said[0]


def test_switch_interrupted_before_the_new_report_was_complete_restores_the_old(tmp_path):
    pid = dead_pid()
    fake_report(tmp_path / f".out.pyverify-old.{pid}.aaaa", "old")
    fake_report(tmp_path / f".out.pyverify-staging.{pid}.bbbb", "half", complete=False)
    said = []
    recover(tmp_path / "out", said.append)
    assert (tmp_path / "out" / "report.md").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and "restored" in said[0]


def test_fallback_switch_without_renameat2(tmp_path, monkeypatch):
    import pyverify.outdir as outdir

    monkeypatch.setattr(outdir, "_exchange", lambda a, b: False)
    target = tmp_path / "out"
    for text in ("first", "second"):
        with StagedDirectory(target, "test") as stage:
            (stage.path / "report.md").write_text(text)
            stage.commit()
    assert (target / "report.md").read_text() == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_concurrent_audits_into_one_folder(tmp_path):
    out = tmp_path / "report"
    for _ in range(2 * SCALE):
        processes = [start_audit(out, tmp_path) for _ in range(2)]
        results = [p.communicate(timeout=300) for p in processes]
        statuses = [p.returncode for p in processes]
        ok = (
            all(s == 0 for s in statuses)
            and leftovers_beside(out) == []
            and (out / "summary.json").is_file()
        )
        ok = ok and json.loads((out / "summary.json").read_text())["format"] == "pyverify.audit/1"
        record("concurrent audits", ok)
        assert ok, (statuses, [r[1][-300:] for r in results], leftovers_beside(out))


def test_ctrl_c_during_z3_stops_the_run_instead_of_weakening_the_certificate(tmp_path):
    """Z3 by default catches SIGINT itself and answers 'unknown' (which would turn an OPTIMAL
    certificate into FEASIBLE); pyverify switches that off so Ctrl-C stops the command.
    The signal handling is the command's own (signals_unwind): a Ctrl-C that lands in one
    of Z3's finalizers is raised again once it returns, not lost."""
    script = (
        "import os, signal, threading\n"
        "from pyverify.certify.placement import problem_from_instance\n"
        "from pyverify.certify.z3check import confirm\n"
        "from pyverify.cli import signals_unwind\n"
        "from pyverify.inputs.load import load_input\n"
        f"problem = problem_from_instance(load_input({str(LAB_INSTANCE)!r}), 'pooled', None, 'lab')\n"
        "with signals_unwind():\n"
        "    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "    for _ in range(20):\n"
        "        result = confirm(problem, 32, timeout_s=60)\n"
        "print('FINISHED', result)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert "FINISHED" not in run.stdout and "KeyboardInterrupt" in run.stderr, (
        run.stdout,
        run.stderr[-500:],
    )


def test_lean_build_dir_is_never_a_users_folder(capsys, tmp_path, monkeypatch):
    """`lean check --build-dir DIR` empties DIR first: only a folder pyverify made, or a new one."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "precious.txt").write_text("keep me")
    expect_one_line_refusal(
        capsys, ["lean", "check", "--build-dir", str(mine)], tmp_path, "lean build dir"
    )
    monkeypatch.chdir(mine)
    expect_one_line_refusal(
        capsys, ["lean", "check", "--build-dir", "."], tmp_path, "lean build dir"
    )
    build = tmp_path / "build"
    for _ in range(2):  # a new folder, then the same folder again (pyverify's own now)
        status, _, err = run_cli(capsys, "lean", "check", "--build-dir", str(build))
        assert status == 0, err
    assert (build / MARKER).is_file() and (build / "PrefixPool.olean").is_file()


def test_lean_scratch_of_a_killed_run_is_removed(capsys, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f"pyverify-lean-{dead_pid()}-abcd"
    (stale / "build").mkdir(parents=True)
    status, _, err = run_cli(capsys, "lean", "check")
    assert status == 0, err
    assert not stale.exists() and not list(tmp_path.glob("pyverify-lean-*"))


@pytest.mark.parametrize(
    "signum, raised", [(signal.SIGINT, "KeyboardInterrupt"), (signal.SIGTERM, "Terminated")]
)
def test_a_signal_that_lands_in_a_finalizer_still_stops_the_run(signum, raised):
    """Python drops an exception raised inside ``__del__`` ("Exception ignored"): a Ctrl-C that
    landed in an extension object's finalizer used to be lost and the command ran on."""
    script = (
        "import os, signal, threading, time\n"
        "from pyverify.cli import Terminated, signals_unwind\n"
        "class Slow:\n"
        "    def __del__(self):\n"
        "        time.sleep(0.5)\n"
        "with signals_unwind():\n"
        "    try:\n"
        f"        threading.Timer(0.1, lambda: os.kill(os.getpid(), {int(signum)})).start()\n"
        "        item = Slow()\n"
        "        del item\n"
        "        time.sleep(5)\n"
        "        print('RAN ON')\n"
        "    except (KeyboardInterrupt, Terminated) as stop:\n"
        "        print('STOPPED BY', type(stop).__name__)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    ok = run.stdout.strip() == f"STOPPED BY {raised}"
    record(f"signal in a finalizer ({raised})", ok)
    assert ok, (run.stdout, run.stderr[-500:])


def test_a_signal_that_cuts_a_constructor_short_prints_one_line_only():
    """A Ctrl-C inside an object's ``__init__`` leaves it half built; its ``__del__`` then fails
    (Z3's: "'BoolSortRef' object has no attribute 'ctx'", seen once in an interrupted audit) and
    Python printed that beside the one line saying the run was stopped. Not any more."""
    script = (
        "import os, signal, threading, time\n"
        "from pyverify.cli import signals_unwind\n"
        "class HalfBuilt:\n"
        "    def __init__(self):\n"
        "        time.sleep(0.5)\n"
        "        self.ctx = 1\n"
        "    def __del__(self):\n"
        "        self.ctx\n"
        "with signals_unwind():\n"
        "    try:\n"
        "        threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "        HalfBuilt()\n"
        "    except KeyboardInterrupt:\n"
        "        print('STOPPED')\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    ok = run.stdout.strip() == "STOPPED" and run.stderr == ""
    record("signal in a constructor", ok)
    assert ok, (run.stdout, run.stderr[-500:])


def test_finalizer_errors_are_still_reported_when_no_signal_came():
    script = (
        "from pyverify.cli import signals_unwind\n"
        "class Broken:\n"
        "    def __del__(self):\n"
        "        raise ValueError('reported')\n"
        "with signals_unwind():\n"
        "    Broken()\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "Exception ignored" in run.stderr and "ValueError: reported" in run.stderr
