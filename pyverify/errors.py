"""User-facing errors.

Anything a user can cause (a bad file, a bad flag, an unknown id) is raised as
:class:`UserError`. The CLI turns it into one line on stderr and exit status 2,
never a traceback. Messages name the file, the field and the reason, in the
form ``FILE: FIELD: REASON`` (use :func:`located` to build one).
"""

from __future__ import annotations

#: The most characters of a path or a name that a message echoes; the rest is cut with an ellipsis.
MAX_SHOWN = 200


def shown(text: object, limit: int | None = MAX_SHOWN) -> str:
    """``text`` fit to echo in one line of output: every message and report line that names a path
    or a name passes it through here.

    Characters that are not printable (a newline, a carriage return, an
    escape sequence, a lone surrogate from a file name that is not UTF-8) are
    written as Python writes them in a string literal (``\\n``, ``\\x1b``,
    ``\\udcff``), so a file named ``x\\nVERIFIED OPTIMAL`` cannot add a line
    to the output; more than ``limit`` characters are cut, ending in ``...``.
    """
    text = str(text)
    cut = limit is not None and len(text) > limit
    if cut:
        text = text[:limit]
    if not text.isprintable():
        text = "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
    return text + "..." if cut else text


class UserError(Exception):
    """A problem with the user's input: reported as one line, exit status 2."""


def located(path: object, field: str | None, reason: str) -> UserError:
    """Build a UserError whose message reads ``path: field: reason`` (the path and field :func:`shown`)."""
    parts = [shown(path)]
    if field:
        parts.append(shown(field))
    parts.append(reason)
    return UserError(": ".join(parts))


class RequestError(UserError):
    """A problem with request ``index`` of the input at ``path``, found after the input was read
    (a prompt too short for its blocks, a timestamp a timed replay needs), with ``field`` as the
    instance model names it.

    The message reads ``PATH: requests[INDEX].FIELD: REASON``, which is how an instance file
    writes it; the CLI names it as any other input file writes it (``line 2.input_length`` of a
    Mooncake file, ``row 3`` of a Parquet file) through
    :func:`pyverify.inputs.locate.relocated`."""

    def __init__(self, path: object, index: int, field: str | None, reason: str) -> None:
        self.path, self.index, self.field, self.reason = path, index, field, reason
        where = f"requests[{index}]" + (f".{field}" if field else "")
        super().__init__(str(located(path, where, reason)))


class CheckFailed(Exception):
    """A check ran and the thing checked is wrong (a tampered certificate, a
    registry that does not match, an overclaiming scope): reported as one line,
    exit status 1, so scripts can tell it from bad input (status 2).

    The one failure type of every checker: the trusted certificate checker
    (:mod:`pyverify.trusted.check`), the Lean check (:mod:`pyverify.lean`), the
    bridge and the audit report all raise it."""
