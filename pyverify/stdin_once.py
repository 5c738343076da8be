"""Standard input, read once: for commands that read their input more than once.

A pipe can be read only once, but some commands read their input at several
steps: ``certify - -o x.json`` loads the instance, solves, then has the
trusted checker load it again to re-check the certificate before writing it;
``audit -`` loads it to validate, to certify, to verify and to bridge. Each
later step found standard input already at its end ("empty input: no
requests").

:func:`stdin_read_once` reads standard input to its end once, into a spool
(memory for a small input, a temporary file for a large one, bounded like
every input by ``PYVERIFY_MAX_INPUT_BYTES``). For the rest of the block, every
reader of ``-`` gets those same bytes from their start, through
``sys.stdin.buffer`` as before, so the readers (and the trusted checker)
are unchanged. A terminal or a device on standard input is left alone: the
first reader refuses it in one line, as without this.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from typing import BinaryIO, Iterable, Iterator

from pyverify.errors import located
from pyverify.inputs.jsonread import MAX_INPUT_ENV, max_input_bytes
from pyverify.inputs.stream import STDIN_DISPLAY, is_stdin

#: Inputs up to this size are kept in memory; larger ones in a temporary file.
IN_MEMORY_BYTES = 64 * 1024**2
CHUNK_BYTES = 1 << 20


class _Replay(io.RawIOBase):
    """One reading of the kept bytes, from the start, with its own position in the spool."""

    def __init__(self, spool: BinaryIO) -> None:
        super().__init__()
        self._spool = spool
        self._offset = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        self._spool.seek(self._offset)
        data = self._spool.read(len(buffer))
        buffer[: len(data)] = data
        self._offset += len(data)
        return len(data)


class _KeptStdin:
    """Stands in for ``sys.stdin``: each use of ``.buffer`` reads the kept bytes from their start."""

    def __init__(self, spool: BinaryIO) -> None:
        self._spool = spool

    @property
    def buffer(self) -> BinaryIO:
        return io.BufferedReader(_Replay(self._spool))

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("standard input was read once and is kept in a spool")


def _worth_keeping(stream: BinaryIO) -> bool:
    """A pipe, socket, file or in-memory stream; not a terminal or device, which the readers refuse."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return True  # an in-memory stream (tests)
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def _spool_of(stream: BinaryIO) -> BinaryIO:
    """All of ``stream`` in a spool, or one line of error past the input bound or on a read or write failure."""
    limit = max_input_bytes()
    spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES)
    total = 0
    try:
        while chunk := stream.read(CHUNK_BYTES):
            total += len(chunk)
            if total > limit:
                raise located(
                    STDIN_DISPLAY,
                    None,
                    f"larger than the input limit of {limit} bytes (set {MAX_INPUT_ENV} to raise it)",
                )
            spool.write(chunk)
    except OSError as error:
        spool.close()
        raise located(
            STDIN_DISPLAY, None, f"cannot read and keep standard input: {error.strerror or error}"
        ) from None
    except BaseException:
        spool.close()
        raise
    return spool


@contextmanager
def stdin_read_once(paths: Iterable[object]) -> Iterator[None]:
    """While the block runs, every reader of ``-`` sees the same bytes (when one of ``paths`` is ``-``)."""
    original = sys.stdin
    stream = getattr(original, "buffer", None)
    if not any(is_stdin(path) for path in paths) or stream is None or not _worth_keeping(stream):
        yield
        return
    spool = _spool_of(stream)
    sys.stdin = _KeptStdin(spool)
    try:
        yield
    finally:
        sys.stdin = original
        spool.close()


__all__ = ["stdin_read_once"]
