"""Output directories pyverify owns: built aside, switched into place, never someone else's.

``pyverify audit -o DIR`` writes a whole directory, and ``pyverify lean check
--build-dir DIR`` empties one before building into it. The rules, so that no
run can ever delete what the user made:

1. **Replace only what pyverify wrote.** Every directory pyverify writes holds
   a marker file, :data:`MARKER`, naming its kind (``audit``, ``lean-build``)
   and listing every file pyverify wrote there with its SHA-256. An existing
   ``DIR`` is replaced only when it is empty, or when its marker is of the
   same kind and the directory holds those files with those hashes and
   nothing else (a file that pyverify wrote and the user deleted is no loss,
   so a missing file does not count against it). Anything else is refused in
   one line, before any work, naming the first file pyverify did not write
   (or that was changed since): ``instances/``, ``.``, the checkout, a
   report the user added notes to, an audit report named as a Lean build
   folder. Nothing is deleted.
2. **Never the inputs.** A directory that holds an input of the same command
   (or is one, or lies inside one) is refused too, whatever its marker says:
   ``audit DIR/my-instance.json -o DIR`` would otherwise delete its own input.
3. **Markers without a file list** (written before the list existed) are
   trusted only as far as their contents can be told apart from the user's:
   an audit report only if it holds nothing but the files an audit writes
   (:data:`LEGACY_AUDIT_ENTRIES`, the certificates its ``summary.json``
   names), as for a pyverify 0.1 report, which has no marker at all; a Lean
   build folder only if every file in it is a Lean build product
   (``.olean`` files that start with Lean's ``olean`` magic bytes, ``.ilean``
   files), which is all the wheel backend writes there (``lean -o``).
4. **Build aside.** The new directory is built as a sibling
   ``.DIR.pyverify-staging.PID.XXXX`` and only switched into place when
   complete. A failure, Ctrl-C or SIGTERM removes it; a SIGKILL leaves it,
   and the next run that writes ``DIR`` removes staging folders whose process
   is gone.
5. **Switch atomically.** On Linux the switch is one ``renameat2`` call with
   ``RENAME_EXCHANGE``: at every instant ``DIR`` is either the complete old
   report or the complete new one. Elsewhere it is two renames (old aside,
   new in); a kill between them leaves ``DIR`` missing with both halves
   beside it, and the next run that writes ``DIR`` finishes the switch (or
   restores the old one) and says so on stderr.
6. **Concurrent runs** into one ``DIR`` each build their own staging folder;
   the last to switch wins, and every switch leaves a complete report. A
   check that was reading ``DIR`` while another run switched its report in
   (the old report's marker, the new report's files) reads it again.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

from pyverify.errors import located
from pyverify.fileio import process_alive
from pyverify.inputs.stream import is_stdin

#: The marker file that makes a directory pyverify's to replace.
MARKER = ".pyverify-output.json"
#: What the marker says to a person who opens it.
MARKER_NOTE = (
    "made by pyverify; a later run may replace this directory if it holds only the files listed here, "
    "unchanged; add a file of your own and pyverify will refuse to replace it"
)
STAGING = "pyverify-staging"
OLD = "pyverify-old"

#: The kinds of directory pyverify writes, as the marker names them, and how messages call them.
KIND_NAMES = {"audit": "an audit report", "lean-build": "a Lean build folder"}

#: What an audit directory written before file lists existed (pyverify 0.1, no marker) holds.
LEGACY_AUDIT_ENTRIES = {
    "report.md",
    "report.html",
    "summary.json",
    "sweep.png",
    "sweep.svg",
    "certificates",
}

#: Lean build products a build folder may hold when its marker lists no files, and the
#: bytes an ``.olean`` starts with (Lean 4 writes ``olean`` then a version byte).
LEAN_BUILD_SUFFIXES = (".olean", ".ilean")
OLEAN_MAGIC = b"olean"


def _kind_name(kind: object) -> str:
    return (
        KIND_NAMES.get(kind, f"a pyverify {kind!r} folder")
        if isinstance(kind, str)
        else "a pyverify folder of no kind"
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _walk(directory: Path) -> Iterator[tuple[str, Path]]:
    """Every entry under ``directory`` (sorted, links not followed) as (relative POSIX path, path), the marker left out."""
    for folder, subfolders, files in os.walk(directory, followlinks=False):
        subfolders.sort()  # walked in this order too, so "the first foreign file" is the same every run
        files.sort()
        here = Path(folder)
        for name in subfolders + files:
            path = here / name
            relative = path.relative_to(directory).as_posix()
            if relative != MARKER:
                yield relative, path


def written_files(directory: Path) -> dict[str, str]:
    """Every regular file under ``directory`` (the marker left out) with its SHA-256: what a marker lists."""
    return {
        relative: file_sha256(path)
        for relative, path in _walk(directory)
        if path.is_file() and not path.is_symlink()
    }


def _marker_data(directory: Path) -> dict | None:
    marker = directory / MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("tool") == "pyverify" else None


def _write_marker(directory: Path, data: dict) -> None:
    """Write the marker through a temporary and a rename, so no reader sees half of it."""
    temporary = directory / f"{MARKER}.{os.getpid()}.part"
    temporary.write_text(json.dumps(data) + "\n", encoding="utf-8")
    os.replace(temporary, directory / MARKER)


def record_written_files(directory: str | os.PathLike[str]) -> None:
    """List every file now in ``directory`` in its marker, with its SHA-256 (call when done writing).

    A later run replaces the directory only if it still holds exactly these
    files (rule 1 of the module docstring).
    """
    directory = Path(directory)
    data = _marker_data(directory)
    if data is None:
        raise located(directory, None, f"has no pyverify marker ({MARKER}) to record its files in")
    data["files"] = written_files(directory)
    _write_marker(directory, data)


def _foreign_in_listed(directory: Path, listed: dict) -> str | None:
    """The first entry that is not one of ``listed`` (relative path -> SHA-256) with its hash; None if none."""
    folders = {
        parent.as_posix() for name in listed for parent in Path(name).parents if parent != Path(".")
    }
    for relative, path in _walk(directory):
        if path.is_symlink():
            return f"{relative} (a symbolic link, which pyverify did not write)"
        if path.is_dir():
            if relative not in folders:
                return f"{relative}/ (a folder pyverify did not write)"
        elif relative not in listed or not path.is_file():
            return f"{relative} (pyverify did not write it)"
        elif file_sha256(path) != listed[relative]:
            return f"{relative} (changed since pyverify wrote it)"
    return None


def _foreign_in_lean_build(directory: Path) -> str | None:
    """The first entry that is not a Lean build product (rule 3), for a build folder whose marker lists no files."""
    for relative, path in _walk(directory):
        if path.is_symlink():
            return f"{relative} (a symbolic link, which pyverify did not write)"
        if path.is_dir():
            continue  # module folders (PrefixPool/); an empty one holds nothing of anyone's
        if not path.is_file() or not relative.endswith(LEAN_BUILD_SUFFIXES):
            return f"{relative} (not a Lean build product)"
        if relative.endswith(".olean"):
            with open(path, "rb") as handle:
                if handle.read(len(OLEAN_MAGIC)) != OLEAN_MAGIC:
                    return f"{relative} (named .olean, but not a Lean .olean file)"
    return None


def _audit_summary(directory: Path) -> dict | None:
    try:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (
        summary
        if isinstance(summary, dict) and summary.get("format") == "pyverify.audit/1"
        else None
    )


def _foreign_in_legacy_audit(directory: Path) -> str | None:
    """The first entry an audit does not write (rule 3): the report's files and the certificates its summary names."""
    summary = _audit_summary(directory)
    if summary is None:
        return "summary.json (missing, or not an audit summary)"
    certificates = summary.get("certificates")
    named = (
        {entry.get("file") for entry in certificates.values() if isinstance(entry, dict)}
        if isinstance(certificates, dict)
        else set()
    )
    for relative, path in _walk(directory):
        if path.is_symlink():
            return f"{relative} (a symbolic link, which pyverify did not write)"
        if relative == "certificates" and path.is_dir():
            continue
        top_level_report_file = "/" not in relative and relative in LEGACY_AUDIT_ENTRIES - {
            "certificates"
        }
        if not path.is_file() or not (top_level_report_file or relative in named):
            return f"{relative}{'/' if path.is_dir() else ''} (an audit does not write it)"
    return None


def why_not_replaceable(directory: Path, kind: str) -> str | None:
    """Why pyverify may not replace the real directory ``directory`` with one of ``kind`` (None: it may).

    The rules are those of the module docstring; the reason names the first
    file that is not pyverify's, and is worded to follow the directory's name.
    """
    if not any(directory.iterdir()):
        return None
    marker = _marker_data(directory)
    if marker is None:
        if (
            kind == "audit"
            and (directory / "summary.json").is_file()
            and _audit_summary(directory) is not None
        ):
            foreign = _foreign_in_legacy_audit(directory)  # a pyverify 0.1 report: no marker yet
            return None if foreign is None else f"holds {foreign}"
        return f"was not made by pyverify (no {MARKER} in it)"
    if marker.get("kind") != kind:
        return f"is {_kind_name(marker.get('kind'))} made by pyverify, not {_kind_name(kind)}"
    listed = marker.get("files")
    if isinstance(listed, dict):
        foreign = _foreign_in_listed(directory, listed)
    elif kind == "lean-build":
        foreign = _foreign_in_lean_build(directory)
    elif kind == "audit":
        foreign = _foreign_in_legacy_audit(directory)
    else:
        foreign = "no list of the files pyverify wrote in its marker"
    return None if foreign is None else f"holds {foreign}"


#: How often :func:`_why_not_steady` reads a directory again that another run switched away while it was read.
STEADY_READS = 10


def _why_not_steady(directory: Path, kind: str) -> str | None:
    """:func:`why_not_replaceable` of one directory, read while no other run switched another into its place.

    A check reads the marker, then walks the files through the path. If another run's report is switched
    in between (rule 6: concurrent runs), the files of the new report were compared with the marker of
    the old one and a report pyverify wrote looked "changed since pyverify wrote it". So the directory's
    identity (device, inode) is taken before and after the reading, and a reading across a switch is
    done again. A directory moved away during the reading (the two-rename switch, or one removed) counts
    as absent (``None``: nothing of anyone's is there to keep); one that keeps being switched is refused.
    """
    for _ in range(STEADY_READS):
        try:
            before = os.stat(directory, follow_symlinks=False)
            why_not = why_not_replaceable(directory, kind)
            after = os.stat(directory, follow_symlinks=False)
        except FileNotFoundError:
            if not os.path.lexists(directory):
                return None
            continue  # a file of it vanished while it was read: another run switched it away; read again
        if (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino):
            return why_not
    return "kept being replaced while it was read (another run writing it?)"


def owned_by_pyverify(directory: Path, kind: str = "audit") -> bool:
    """Whether ``directory`` is a real directory (not a link) that pyverify may replace with one of ``kind``."""
    if not directory.is_dir() or directory.is_symlink():
        return False
    return _why_not_steady(directory, kind) is None


def _refuse_inputs_inside(target: Path, inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a target that holds an input of the command, is one, or lies inside one (rule 2)."""
    real_target = target.resolve()
    for given in inputs:
        if is_stdin(given):
            continue
        # Both the input as named (a link inside the target is the user's) and where it leads.
        for place in {Path(os.path.abspath(given)), Path(given).resolve()}:
            for folder in {Path(os.path.abspath(target)), real_target}:
                if place == folder or folder in place.parents:
                    raise located(
                        target,
                        None,
                        f"holds {given}, an input of this command: refusing to replace it; "
                        "name another directory",
                    )
                if place in folder.parents:
                    raise located(
                        target,
                        None,
                        f"lies inside {given}, an input of this command: name another directory",
                    )


def check_output_dir(
    target: str | os.PathLike[str],
    kind: str = "audit",
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> Path:
    """Refuse, before any work, an output directory pyverify may not write or replace with one of ``kind``.

    ``inputs`` are the paths the command reads (``-`` for standard input is
    skipped): a target that holds one is refused whatever its marker says.
    """
    target = Path(target)
    if target.name in ("", ".", "..") or target.resolve() == Path(target.resolve().anchor):
        raise located(
            target, None, "names the current, parent or root folder: name a new directory"
        )
    if target.is_symlink():
        raise located(target, None, "is a symbolic link; name the directory itself")
    _refuse_inputs_inside(target, inputs)
    if target.exists():
        if not target.is_dir():
            raise located(target, None, "exists and is not a directory")
        why_not = _why_not_steady(target, kind)
        if why_not is not None:
            advice = (
                "name a new directory, or move your files out of this one"
                if why_not.startswith("holds")
                else "name a new directory"
            )
            raise located(target, None, f"exists and {why_not}: refusing to replace it; {advice}")
        here = Path.cwd().resolve()
        if here == target.resolve() or target.resolve() in here.parents:
            raise located(
                target,
                None,
                "contains the current folder: run from elsewhere or name another directory",
            )
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise located(target, None, f"cannot be written: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise located(target, None, f"cannot be written: the folder {folder} is read-only")
    return target


def _siblings(target: Path, kind: str) -> list[tuple[Path, int]]:
    """``.NAME.KIND.PID.XXXX`` siblings of ``target`` with their process ids."""
    folder = target.parent if str(target.parent) else Path(".")
    prefix = f".{target.name}.{kind}."
    found = []
    for path in folder.iterdir():
        if path.name.startswith(prefix) and path.is_dir() and not path.is_symlink():
            pid = path.name[len(prefix) :].split(".", 1)[0]
            if (
                pid.isdigit() and _marker_data(path) is not None
            ):  # our name and our marker: a run's own folder
                found.append((path, int(pid)))
    return found


def recover(target: Path, say: Callable[[str], None]) -> None:
    """Finish or undo a switch a killed run left half done; remove dead runs' staging folders."""
    if not target.exists():
        for old, pid in _siblings(target, OLD):
            if process_alive(pid):
                continue
            complete = [
                s
                for s, p in _siblings(target, STAGING)
                if p == pid and (_marker_data(s) or {}).get("complete")
            ]
            if complete:
                os.rename(complete[0], target)
                shutil.rmtree(old, ignore_errors=True)
                say(
                    f"pyverify: {target}: finished switching in the report of an interrupted run (process {pid})"
                )
            else:
                os.rename(old, target)
                say(
                    f"pyverify: {target}: restored the previous report, left aside by an interrupted run (process {pid})"
                )
            break
    for kind in (STAGING, OLD):
        for leftover, pid in _siblings(target, kind):
            if not process_alive(pid):
                shutil.rmtree(leftover, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directory entries (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    result = renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class StagedDirectory:
    """Build a directory aside and switch it into place (see the module docstring).

    Use as a context manager: ``with StagedDirectory(target, "audit") as stage:``
    write into ``stage.path``, then call ``stage.commit()``. Leaving the block
    without committing (an error, Ctrl-C, SIGTERM) removes the staging folder.
    """

    def __init__(
        self,
        target: str | os.PathLike[str],
        kind: str,
        say: Callable[[str], None] | None = None,
        inputs: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        self.target = check_output_dir(target, kind, inputs)
        self.inputs = list(inputs)
        self.kind = kind
        self.say = say or (lambda line: print(line, file=sys.stderr))
        self.path: Path | None = None

    def __enter__(self) -> "StagedDirectory":
        recover(self.target, self.say)
        folder = self.target.parent if str(self.target.parent) else Path(".")
        try:
            self.path = Path(
                tempfile.mkdtemp(prefix=f".{self.target.name}.{STAGING}.{os.getpid()}.", dir=folder)
            )
            os.chmod(self.path, 0o777 & ~_umask())  # mkdtemp makes 0700; a report is for reading
            self._write_marker(complete=False)
        except OSError as error:
            self._discard()
            raise located(self.target, None, f"cannot write: {error.strerror or error}") from None
        return self

    def _write_marker(self, complete: bool) -> None:
        data = {"tool": "pyverify", "kind": self.kind, "complete": complete, "note": MARKER_NOTE}
        if complete:  # what a later run may replace: these files, unchanged, and nothing else
            data["files"] = written_files(self.path)
        _write_marker(self.path, data)

    def commit(self) -> None:
        """Switch the complete staging folder into place at ``target``."""
        self._write_marker(complete=True)
        for _ in range(10):
            try:
                os.rename(self.path, self.target)  # target absent, or an empty directory
                self.path = None
                return
            except OSError as error:
                if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            why_not = (
                _why_not_steady(self.target, self.kind)
                if self.target.is_dir() and not self.target.is_symlink()
                else "is no longer a directory"
            )
            if why_not is not None:  # changed since the check before the work: never replace it
                raise located(
                    self.target,
                    None,
                    f"changed while the report was built: it {why_not}; left as it is, "
                    "and the new report was not written",
                )
            try:
                if _exchange(self.path, self.target):
                    return  # self.path now holds the previous report; __exit__ removes it
            except FileNotFoundError:
                continue  # another run moved it away meanwhile: try again
            old = (
                self.path.parent / f".{self.target.name}.{OLD}.{os.getpid()}.{secrets.token_hex(4)}"
            )
            try:
                os.rename(self.target, old)
            except FileNotFoundError:
                continue
            # Between these two renames the target is absent; recover() finishes the switch after a kill here.
            os.rename(self.path, self.target)
            self.path = None
            shutil.rmtree(old, ignore_errors=True)
            return
        raise located(
            self.target,
            None,
            "kept changing while switching the report into place (another run?); try again",
        )

    def _discard(self) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None

    def __exit__(self, *exc) -> None:
        self._discard()


def fresh_owned_dir(target: str | os.PathLike[str], kind: str) -> Path:
    """An empty directory at ``target`` that pyverify owns (a build folder, not switched atomically).

    The same rules as :func:`check_output_dir`: an existing ``target`` is
    emptied only when it is empty already, or a folder of the same ``kind``
    holding only what pyverify wrote there; anything else (an audit report
    named as a Lean build folder, a build folder the user added a file to) is
    refused in one line and left as it is.

    The new marker lists no files yet: call :func:`record_written_files` once
    the files are written. Until then (a build stopped half way) the folder
    is replaceable only as far as rule 3 of the module docstring allows.
    """
    target = check_output_dir(target, kind)
    if target.exists():
        shutil.rmtree(target)  # empty, or only pyverify's own files: check_output_dir just said so
    target.mkdir()
    _write_marker(target, {"tool": "pyverify", "kind": kind, "complete": True, "note": MARKER_NOTE})
    return target


def sweep_dead_temporaries(prefix: str) -> None:
    """Remove ``$TMPDIR/PREFIX-PID-*`` folders whose process is gone (left by a SIGKILL)."""
    folder = Path(tempfile.gettempdir())
    for path in folder.glob(f"{prefix}-*-*"):
        pid = path.name[len(prefix) + 1 :].split("-", 1)[0]
        if (
            pid.isdigit()
            and not process_alive(int(pid))
            and path.is_dir()
            and not path.is_symlink()
        ):
            shutil.rmtree(path, ignore_errors=True)


__all__ = [
    "LEGACY_AUDIT_ENTRIES",
    "MARKER",
    "StagedDirectory",
    "check_output_dir",
    "fresh_owned_dir",
    "owned_by_pyverify",
    "record_written_files",
    "recover",
    "sweep_dead_temporaries",
    "why_not_replaceable",
    "written_files",
]
