"""Suggesting the name a user meant: one wording for every mistyped name.

Kept apart from :mod:`pyverify.errors` (the error types), which the trusted checker imports:
suggestions are for people typing commands, not part of what a verdict rests on.
"""

from __future__ import annotations

from pyverify.errors import shown


def did_you_mean(word: str, candidates) -> str:
    """`` (did you mean 'X'?)`` for the candidate closest to a mistyped ``word``, or ``''``.

    The one place names are suggested: the parser (subcommands, flags, choices), the list types
    (pyverify.commands.argtypes.choice_list) and every lookup of a name a user types (KV models,
    cost parameters) use it.
    """
    import difflib

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_name(what: str, word: str, candidates) -> str:
    """``unknown WHAT 'word'; choose from: a, b, c`` and the closest: one wording for every lookup."""
    candidates = list(candidates)
    listed = ", ".join(candidates)
    return f"unknown {what} '{shown(word)}'; choose from: {listed}" + did_you_mean(word, candidates)
