"""Where input bytes come from: a file or standard input, either one possibly gzip-compressed.

Every input pyverify reads (instances, traces, certificates) is opened here,
so each command takes the same things:

* a path to a regular file, a pipe or a socket (directories and device files
  are refused with one line: ``/dev/zero`` would never end);
* ``-``, meaning standard input (refused when it is a terminal, where a read
  would wait for typing). Errors name it ``<stdin>``; an instance read from it
  is named ``stdin`` (the name is part of the instance's canonical SHA-256, so
  ``cat t.jsonl | pyverify validate -`` and ``pyverify validate t.jsonl`` name
  different instances; give ``trace import --name`` to choose);
* either of those gzip-compressed, recognised by the gzip magic bytes
  ``1f 8b`` (RFC 1952, section 2.3.1), never by the file's name. The size
  bounds of :mod:`pyverify.inputs.jsonread` count decompressed bytes, so a
  small compressed file cannot expand past them.

Pipes cannot be rewound, so looking at the start of an input (the magic
bytes here; the first record in :mod:`pyverify.inputs.detect`) keeps the bytes
looked at and replays them in front of the rest (:class:`_Joined`).
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from pyverify.errors import located

#: The path that means standard input.
STDIN = "-"
#: How errors name standard input.
STDIN_DISPLAY = "<stdin>"
#: The instance name given to an input read from standard input.
STDIN_NAME = "stdin"
#: The first two bytes of every gzip member (RFC 1952).
GZIP_MAGIC = b"\x1f\x8b"


def is_stdin(path: object) -> bool:
    """Whether ``path`` means standard input: only the string ``-`` as typed on a command line.

    A :class:`~pathlib.Path` named ``-`` (one found in a folder, or recorded in
    a certificate) is a file, never standard input.
    """
    return isinstance(path, str) and path == STDIN


def display_name(path: object) -> str:
    """How errors name ``path``: the path as given, or ``<stdin>``."""
    return STDIN_DISPLAY if is_stdin(path) else str(path)


def stem_of(path: object) -> str:
    """The default instance name for ``path``: ``t`` for ``t.jsonl`` and ``t.jsonl.gz``; ``stdin`` for ``-``.

    Made to obey the instance schema's rule for names (:data:`NAME_LENGTH`
    characters at most, no ``/``, ``\\`` or control character, not ``.`` or
    ``..``): each character it forbids becomes ``_``, so a trace named
    ``a\\b.jsonl`` imports as an instance pyverify reads back.
    """
    if is_stdin(path):
        return STDIN_NAME
    name = Path(str(path)).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem = Path(name).stem or name
    stem = "".join(
        "_" if char in "/\\" or ord(char) < 0x20 or not char.isprintable() else char
        for char in stem
    )[:NAME_LENGTH]
    return stem if stem and stem not in (".", "..") else "input"


#: The longest instance name (the instance schema's ``maxLength`` of ``name``).
NAME_LENGTH = 200


class _Joined(io.RawIOBase):
    """Bytes already read (``head``), then the rest of a stream.

    Read errors of a gzip stream (truncated data, a bad CRC, bytes that are
    not deflate) become :class:`OSError`, which the bounded readers of
    :mod:`pyverify.inputs.jsonread` report as one line naming the file.
    """

    def __init__(
        self, head: bytes, rest: BinaryIO, closers: tuple[Callable[[], None], ...] = ()
    ) -> None:
        super().__init__()
        self._head = head
        self._rest = rest
        self._closers = closers

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        try:
            data = (
                self._rest.read1(len(buffer))
                if hasattr(self._rest, "read1")
                else self._rest.read(len(buffer))
            )
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            raise OSError(f"corrupt gzip data ({error})") from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            for close in self._closers:
                close()
        super().close()


@dataclass
class Input:
    """An opened input: its decompressed bytes (``handle``), and how to name it."""

    path: str | Path
    handle: BinaryIO
    compression: str | None  # "gzip" or None

    @property
    def display(self) -> str:
        return display_name(self.path)

    @property
    def stem(self) -> str:
        return stem_of(self.path)

    @property
    def label(self) -> str:
        """How an instance's description names where it came from: the file's name, or ``standard input``."""
        return "standard input" if is_stdin(self.path) else Path(self.path).name

    def replay(self, head: bytes) -> None:
        """Put ``head`` (bytes just read from ``handle``) back in front of the rest."""
        self.handle = io.BufferedReader(_Joined(head, self.handle, (self.handle.close,)))

    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> "Input":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_raw(path: str | Path) -> tuple[BinaryIO, tuple[Callable[[], None], ...]]:
    """The file's (or stdin's) byte stream and what closes it; files and stdin checked."""
    shown = display_name(path)
    if is_stdin(path):
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise located(shown, None, "standard input is closed")
        _refuse_devices(stream, shown)
        return stream, ()  # standard input stays open: it is not ours to close
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise located(shown, None, "no such file") from None
    except OSError as error:
        raise located(shown, None, f"cannot read: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise located(shown, None, "is a directory, expected a file")
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        raise located(shown, None, "is a device, not a file")
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise located(shown, None, f"cannot read: {error.strerror or error}") from None
    return handle, (handle.close,)


def _refuse_devices(stream: BinaryIO, shown: str) -> None:
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return  # an in-memory stream (tests): nothing to check
    if os.isatty(descriptor):
        raise located(
            shown,
            None,
            "is a terminal: pipe or redirect the input, e.g. 'cat TRACE.jsonl | pyverify validate -'",
        )
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise located(shown, None, "is a device, not a file")


def _read_up_to(stream: BinaryIO, count: int, shown: str) -> bytes:
    data = b""
    try:
        while len(data) < count:
            more = stream.read(count - len(data))
            if not more:
                break
            data += more
    except OSError as error:
        raise located(shown, None, f"cannot read: {error.strerror or error}") from None
    return data


def _rewound(path: str | Path, raw: BinaryIO) -> bool:
    """Whether ``raw``, a regular file named by ``path`` (not standard input), is back at its start after the
    magic bytes were read: then it is handed on as it is, not wrapped to put them back, and a reader can take
    the whole file in one read of its size (wrapped, a 170 MiB trace was read in steps and joined: 0.3 s)."""
    if is_stdin(path) or type(raw) is not io.BufferedReader or not isinstance(raw.raw, io.FileIO):
        return False
    try:
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            return False
        raw.seek(0)
    except OSError:
        return False
    return True


def open_source(path: str | Path) -> Input:
    """Open ``path`` (or ``-`` for standard input), decompressing gzip by its magic bytes."""
    raw, closers = _open_raw(path)
    magic = _read_up_to(raw, len(GZIP_MAGIC), display_name(path))
    if magic != GZIP_MAGIC and _rewound(path, raw):
        return Input(
            path, raw, None
        )  # the file itself: read whole in one buffer (jsonread.read_bounded)
    joined = io.BufferedReader(_Joined(magic, raw, closers))
    if magic != GZIP_MAGIC:
        return Input(path, joined, None)
    unpacked = gzip.GzipFile(fileobj=joined, mode="rb")
    handle = io.BufferedReader(_Joined(b"", unpacked, (unpacked.close, joined.close)))
    return Input(path, handle, "gzip")


__all__ = [
    "GZIP_MAGIC",
    "Input",
    "STDIN",
    "STDIN_DISPLAY",
    "STDIN_NAME",
    "display_name",
    "is_stdin",
    "open_source",
    "stem_of",
]
