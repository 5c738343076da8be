"""Atomic file writing: a reader never sees a half-written output file.

Every output (instance, certificate, chart, report) is written to a temporary
file in the destination directory and then renamed over the target, so a
failure part-way leaves no partial file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def atomic_path(target: str | os.PathLike[str], suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    On any exception the temporary file is removed and ``target`` is untouched.
    ``suffix`` lets tools that infer a format from the file name (matplotlib)
    see the right extension.
    """
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or target.suffix, dir=directory)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # mkstemp creates the file 0600; give it the mode a plain open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(target: str | os.PathLike[str], data: object) -> None:
    """Write ``data`` as indented JSON (trailing newline) to ``target`` atomically."""
    write_text_atomic(target, json.dumps(data, indent=2, sort_keys=False) + "\n")
