"""Output directories pyverify owns: built aside, switched into place, never someone else's.

``pyverify audit -o DIR`` writes a whole directory. The rules, so that no
run can ever delete what the user made:

1. **Only replace what pyverify made.** Every directory pyverify writes holds
   a marker file, :data:`MARKER`. An existing ``DIR`` is replaced only when it
   is empty or holds that marker; anything else (``instances/``, ``.``, the
   checkout itself, a file, a symbolic link) is refused in one line before
   any work, and nothing is deleted.
2. **Build aside.** The new directory is built as a sibling
   ``.DIR.pyverify-staging.PID.XXXX`` and only switched into place when
   complete. A failure, Ctrl-C or SIGTERM removes it; a SIGKILL leaves it,
   and the next run that writes ``DIR`` removes staging folders whose process
   is gone.
3. **Switch atomically.** On Linux the switch is one ``renameat2`` call with
   ``RENAME_EXCHANGE``: at every instant ``DIR`` is either the complete old
   report or the complete new one. Elsewhere it is two renames (old aside,
   new in); a kill between them leaves ``DIR`` missing with both halves
   beside it, and the next run that writes ``DIR`` finishes the switch (or
   restores the old one) and says so on stderr.
4. **Concurrent runs** into one ``DIR`` each build their own staging folder;
   the last to switch wins, and every switch leaves a complete report.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

from pyverify.errors import located
from pyverify.fileio import process_alive

#: The marker file that makes a directory pyverify's to replace.
MARKER = ".pyverify-output.json"
STAGING = "pyverify-staging"
OLD = "pyverify-old"


def _marker_data(directory: Path) -> dict | None:
    marker = directory / MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("tool") == "pyverify" else None


#: What an audit directory written before markers existed (pyverify 0.1) holds.
LEGACY_AUDIT_ENTRIES = {"report.md", "report.html", "summary.json", "sweep.png", "sweep.svg", "certificates"}


def _legacy_audit(directory: Path) -> bool:
    """An audit report written by pyverify 0.1: only its files, and its summary says so."""
    names = {entry.name for entry in directory.iterdir()}
    if not names or not names <= LEGACY_AUDIT_ENTRIES or "summary.json" not in names:
        return False
    try:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and summary.get("format") == "pyverify.audit/1"


def owned_by_pyverify(directory: Path) -> bool:
    """Whether ``directory`` is a real directory (not a link) that pyverify made (its marker, or a 0.1 audit)."""
    if not directory.is_dir() or directory.is_symlink():
        return False
    return _marker_data(directory) is not None or _legacy_audit(directory)


def check_output_dir(target: str | os.PathLike[str]) -> Path:
    """Refuse, before any work, an output directory pyverify may not write or replace."""
    target = Path(target)
    if target.name in ("", ".", "..") or target.resolve() == Path(target.resolve().anchor):
        raise located(target, None, "names the current, parent or root folder: name a new directory")
    if target.is_symlink():
        raise located(target, None, "is a symbolic link; name the directory itself")
    if target.exists():
        if not target.is_dir():
            raise located(target, None, "exists and is not a directory")
        if any(target.iterdir()) and not owned_by_pyverify(target):
            raise located(target, None, f"exists and was not made by pyverify (no {MARKER} in it): "
                                        "refusing to replace it; name a new directory, or remove this one yourself")
        here = Path.cwd().resolve()
        if here == target.resolve() or target.resolve() in here.parents:
            raise located(target, None, "contains the current folder: run from elsewhere or name another directory")
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
            pid = path.name[len(prefix):].split(".", 1)[0]
            if pid.isdigit() and owned_by_pyverify(path):
                found.append((path, int(pid)))
    return found


def recover(target: Path, say: Callable[[str], None]) -> None:
    """Finish or undo a switch a killed run left half done; remove dead runs' staging folders."""
    if not target.exists():
        for old, pid in _siblings(target, OLD):
            if process_alive(pid):
                continue
            complete = [s for s, p in _siblings(target, STAGING) if p == pid and (_marker_data(s) or {}).get("complete")]
            if complete:
                os.rename(complete[0], target)
                shutil.rmtree(old, ignore_errors=True)
                say(f"pyverify: {target}: finished switching in the report of an interrupted run (process {pid})")
            else:
                os.rename(old, target)
                say(f"pyverify: {target}: restored the previous report, left aside by an interrupted run (process {pid})")
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

    def __init__(self, target: str | os.PathLike[str], kind: str, say: Callable[[str], None] | None = None) -> None:
        self.target = check_output_dir(target)
        self.kind = kind
        self.say = say or (lambda line: print(line, file=sys.stderr))
        self.path: Path | None = None

    def __enter__(self) -> "StagedDirectory":
        recover(self.target, self.say)
        folder = self.target.parent if str(self.target.parent) else Path(".")
        try:
            self.path = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.{STAGING}.{os.getpid()}.", dir=folder))
            os.chmod(self.path, 0o777 & ~_umask())  # mkdtemp makes 0700; a report is for reading
            self._write_marker(complete=False)
        except OSError as error:
            self._discard()
            raise located(self.target, None, f"cannot write: {error.strerror or error}") from None
        return self

    def _write_marker(self, complete: bool) -> None:
        data = {"tool": "pyverify", "kind": self.kind, "complete": complete,
                "note": "made by pyverify; a later run may replace this whole directory"}
        (self.path / MARKER).write_text(json.dumps(data) + "\n", encoding="utf-8")

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
            if not owned_by_pyverify(self.target):  # changed since the check: never replace it
                raise located(self.target, None, "was replaced by something pyverify did not make while the report was built; left as it is")
            try:
                if _exchange(self.path, self.target):
                    return  # self.path now holds the previous report; __exit__ removes it
            except FileNotFoundError:
                continue  # another run moved it away meanwhile: try again
            old = self.path.parent / f".{self.target.name}.{OLD}.{os.getpid()}.{secrets.token_hex(4)}"
            try:
                os.rename(self.target, old)
            except FileNotFoundError:
                continue
            # Between these two renames the target is absent; recover() finishes the switch after a kill here.
            os.rename(self.path, self.target)
            self.path = None
            shutil.rmtree(old, ignore_errors=True)
            return
        raise located(self.target, None, "kept changing while switching the report into place (another run?); try again")

    def _discard(self) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None

    def __exit__(self, *exc) -> None:
        self._discard()


def fresh_owned_dir(target: str | os.PathLike[str], kind: str) -> Path:
    """An empty directory at ``target`` that pyverify owns (a build folder, not switched atomically).

    The same rules as :func:`check_output_dir`: an existing ``target`` is
    emptied only when pyverify made it (or it is empty already); anything
    else is refused in one line and left as it is.
    """
    target = check_output_dir(target)
    if target.exists():
        shutil.rmtree(target)  # ours (marker) or empty: check_output_dir said so
    target.mkdir()
    (target / MARKER).write_text(json.dumps({"tool": "pyverify", "kind": kind, "complete": True}) + "\n", encoding="utf-8")
    return target


def sweep_dead_temporaries(prefix: str) -> None:
    """Remove ``$TMPDIR/PREFIX-PID-*`` folders whose process is gone (left by a SIGKILL)."""
    folder = Path(tempfile.gettempdir())
    for path in folder.glob(f"{prefix}-*-*"):
        pid = path.name[len(prefix) + 1:].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


__all__ = ["MARKER", "StagedDirectory", "check_output_dir", "fresh_owned_dir", "owned_by_pyverify", "recover",
           "sweep_dead_temporaries"]
