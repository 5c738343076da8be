"""User-facing errors.

Anything a user can cause (a bad file, a bad flag, an unknown id) is raised as
:class:`UserError`. The CLI turns it into one line on stderr and exit status 2,
never a traceback. Messages name the file, the field and the reason, in the
form ``FILE: FIELD: REASON`` (use :func:`located` to build one).
"""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input: reported as one line, exit status 2."""


def located(path: object, field: str | None, reason: str) -> UserError:
    """Build a UserError whose message reads ``path: field: reason``."""
    parts = [str(path)]
    if field:
        parts.append(field)
    parts.append(reason)
    return UserError(": ".join(parts))


class CheckFailed(Exception):
    """A check ran and the thing checked is wrong (a tampered certificate, a
    registry that does not match, an overclaiming scope): reported as one line,
    exit status 1, so scripts can tell it from bad input (status 2)."""
