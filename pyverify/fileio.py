"""Writing files without ever losing one: checks before the work, atomic writes after it.

Every output (instance, certificate, chart, report) is written to a temporary
file in the destination directory and then renamed over the target, so a
failure part-way (an error, Ctrl-C, SIGTERM, a full disk) leaves no partial
file behind and the previous file, if any, untouched.

Commands check their targets *before* the work (:func:`check_output_file`),
so a target that cannot be written (a directory, a symbolic link, a read-only
folder) is refused in one line at once rather than after minutes of solving.
A target that is one of the command's own inputs (the same path, a hard link
to it, or the file an input's symbolic link leads to) is refused the same way:
writing it would replace what the command was asked to read.
A command that writes several files (a chart as PNG and SVG) writes them as
a set (:func:`atomic_outputs`): all are complete before any is renamed into
place.

Directories (``audit -o``) have their own rules in :mod:`pyverify.outdir`.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from pyverify.errors import UserError, located, shown
from pyverify.inputs.stream import is_stdin


def nearest_existing_folder(path: Path) -> Path:
    """The closest ancestor of ``path`` that exists (where new folders would be made)."""
    folder = path.parent if str(path.parent) else Path(".")
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def same_file(first: str | os.PathLike[str] | int, second: str | os.PathLike[str]) -> bool:
    """Whether two paths lead to one existing file: one name, a hard link, or a link to it.

    ``first`` may be an open file descriptor (0: what standard input was redirected from).
    """
    try:
        # os.stat takes a descriptor too, and follows symbolic links, on both sides
        one, other = os.stat(first), os.stat(second)
    except (OSError, ValueError):  # missing, unreadable, closed, or not a path (a NUL byte)
        return False
    return (one.st_dev, one.st_ino) == (other.st_dev, other.st_ino)


def refuse_inputs(target: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a target that is one of ``inputs``: writing it would replace a file the command reads.

    Files are compared by identity (device and inode), so a hard link or a
    symbolic link to an input is caught as well as its own name; standard
    input (``-``) is compared by what it was redirected from.
    """
    for given in inputs:
        if is_stdin(given):
            if same_file(0, target):  # standard input redirected from the target itself
                raise located(
                    target,
                    None,
                    "is this command's standard input: refusing to write "
                    "over it; name another output file",
                )
            continue
        if not same_file(target, given):
            continue
        same_name = os.path.abspath(given) == os.path.abspath(target)
        how = "" if same_name else f"the same file as {shown(given)}, "
        raise located(
            target,
            None,
            f"is {how}an input of this command: refusing to write over it; "
            "name another output file",
        )


def refuse_folder_name(text: str | os.PathLike[str]) -> None:
    """Refuse an output named as a folder (``new/``, ``x/.``): it would be written as a file.

    A path object has lost a trailing slash already, so this reads the name as typed.
    """
    text = os.fspath(text)
    separators = tuple(sep for sep in (os.sep, os.altsep) if sep)
    if text.endswith(separators) or os.path.basename(text) in (".", ".."):
        raise located(text, None, "names a folder: name the file to write (such as new/out.json)")


def check_output_file(
    target: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()
) -> Path:
    """Refuse, before any work, an output file that cannot be written safely.

    Refused: a name that ends as a folder's does (``new/``), one of the
    command's ``inputs`` (:func:`refuse_inputs`), a directory, a symbolic link
    (replacing it would silently turn the user's link into a file), a device,
    and a target whose folder (or nearest existing ancestor) is not a writable
    directory.
    """
    refuse_folder_name(target)
    refuse_inputs(target, inputs)
    target = Path(target)
    if target.is_symlink():
        raise located(target, None, "is a symbolic link; name the file itself")
    if target.exists():
        if target.is_dir():
            raise located(target, None, "is a directory, expected a file name to write")
        if not target.is_file():
            raise located(target, None, "exists and is not a regular file")
    folder = nearest_existing_folder(target)
    if not folder.is_dir():
        raise located(target, None, f"cannot be written: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise located(target, None, f"cannot be written: the folder {folder} is read-only")
    return target


#: Temporaries are named ``.NAME.PID.INODE.part``: the writer's process id, so a later run
#: can remove those whose writer was killed (SIGKILL cannot be caught), and the temporary's
#: own inode number, which a user's file of a similar name does not carry, so that a later
#: run removes only what pyverify made. Before it gets that name a temporary is
#: ``.NAME.PID.XXXXXXXX.new.part``, which no run removes.
PART_SUFFIX = ".part"
NEW_SUFFIX = ".new" + PART_SUFFIX


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none, or an id too large for any process
        return False
    except PermissionError:
        return True
    return True


def new_temporary(target: Path) -> Path:
    """A new empty temporary beside ``target``, named as :data:`PART_SUFFIX` says."""
    folder = target.parent if str(target.parent) else Path(".")
    prefix = f".{target.name}.{os.getpid()}."
    # mkstemp opens with O_EXCL: the file is new, never someone's
    fd, made = tempfile.mkstemp(prefix=prefix, suffix=NEW_SUFFIX, dir=folder)
    try:
        inode = os.fstat(fd).st_ino
    finally:
        os.close(fd)
    named = folder / f"{prefix}{inode}{PART_SUFFIX}"
    try:
        os.link(made, named)  # unlike a rename, fails rather than replace a file of that name
    except OSError:
        return Path(made)  # name taken, or no hard links here: never swept if the writer is killed
    os.unlink(made)
    return named


def is_stale_temporary(path: Path, target: Path) -> bool:
    """Whether ``path`` is a temporary of ``target`` that pyverify made and whose writer is gone.

    The name must be ``.NAME.PID.INODE.part`` with INODE the file's own inode
    number (a regular file, not a link): a user's ``.NAME.123.mine.part`` or a
    copy of a temporary does not qualify, whatever process ids are alive.
    """
    prefix = f".{target.name}."
    if not (path.name.startswith(prefix) and path.name.endswith(PART_SUFFIX)):
        return False
    numbers = re.fullmatch(r"([0-9]+)\.([0-9]+)", path.name[len(prefix) : -len(PART_SUFFIX)])
    if numbers is None:
        return False
    try:
        status = os.lstat(path)
    except OSError:
        return False
    pid, inode = int(numbers[1]), int(numbers[2])
    return stat.S_ISREG(status.st_mode) and status.st_ino == inode and not process_alive(pid)


def sweep_stale_temporaries(target: Path) -> None:
    """Remove the temporaries of ``target`` that killed runs left (:func:`is_stale_temporary`)."""
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        return
    for leftover in folder.glob(f".{glob_escape(target.name)}.*{PART_SUFFIX}"):
        if is_stale_temporary(leftover, target):
            leftover.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters escaped."""
    import glob

    return glob.escape(name)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def make_missing_folders(folder: Path, made: list[Path]) -> None:
    """Create ``folder`` and its missing parents, adding each one made to ``made`` as it is made.

    A write that fails removes them again (:func:`remove_made_folders`), so
    ``-o new/sub/x.json`` leaves no ``new/sub`` behind when it says nothing
    was written (even when making ``sub`` is what failed).
    """
    missing = []
    while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):  # outermost first
        try:
            path.mkdir()
        except FileExistsError:
            continue  # another process made it meanwhile: it is not ours to remove
        made.append(path)


def remove_made_folders(made: Sequence[Path]) -> None:
    """Remove folders :func:`make_missing_folders` made, deepest first, while they are empty."""
    for path in sorted(made, key=lambda p: len(p.parts), reverse=True):
        try:
            path.rmdir()
        except OSError:
            pass  # something was put there meanwhile (another run's file): keep it and its parents


def write_error(target: Path, error: OSError) -> UserError:
    """The one line for a write of ``target`` that failed with ``error`` (a full disk, a read-only folder)."""
    if error.errno == errno.ENOSPC:
        return located(target, None, "cannot write: no space left on device (nothing was written)")
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return located(target, None, "cannot write: permission denied (nothing was written)")
    return located(target, None, f"cannot write: {error.strerror or error} (nothing was written)")


@contextmanager
def atomic_outputs(targets: Sequence[str | os.PathLike[str]]) -> Iterator[list[Path]]:
    """Yield one temporary path per target; rename them all into place on success.

    The temporaries sit beside their targets (same file system, so the rename
    is atomic) and carry the target's suffix, for tools that infer a format
    from the name (matplotlib). On any exception, every temporary is removed
    and every target is untouched. An OSError (full disk, read-only folder)
    becomes one line naming the target.
    """
    paths = [Path(target) for target in targets]
    temporaries: list[Path] = []
    made_folders: list[
        Path
    ] = []  # missing folders of the targets, made for this write and removed if it fails
    try:
        for target in paths:
            check_output_file(target)
            make_missing_folders(target.parent if str(target.parent) else Path("."), made_folders)
            sweep_stale_temporaries(target)
            temporaries.append(new_temporary(target))
        yield list(temporaries)
        mode = 0o666 & ~_umask()  # mkstemp makes 0600; give the mode a plain open() would
        for tmp in temporaries:
            os.chmod(tmp, mode)
        for tmp, target in zip(temporaries, paths):
            os.replace(tmp, target)
    except OSError as error:
        _discard(temporaries, made_folders)
        failed = Path(error.filename) if getattr(error, "filename", None) else paths[0]
        target = next((t for tmp, t in zip(temporaries, paths) if tmp == failed), failed)
        raise write_error(target, error) from None
    except BaseException:
        _discard(temporaries, made_folders)
        raise


def _discard(temporaries: Sequence[Path], made_folders: Sequence[Path]) -> None:
    """Undo a write that failed: its temporaries, then the folders it made for them."""
    for tmp in temporaries:
        tmp.unlink(missing_ok=True)
    remove_made_folders(made_folders)


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """One-target form of :func:`atomic_outputs`."""
    with atomic_outputs([target]) as (tmp,):
        yield tmp


def write_text_atomic(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(target: str | os.PathLike[str], data: object) -> None:
    """Write ``data`` as indented JSON (trailing newline) to ``target`` atomically."""
    write_text_atomic(target, json.dumps(data, indent=2, sort_keys=False) + "\n")
