"""The wording guard: reports never state an instance result in general terms.

The lab's own limit: the solver certificate is about ONE instance and the
Lean theorem is the general statement; they must not be merged into a claim
of optimality at every scale. So in anything pyverify generates for people:

* no sentence says "at any scale", "at every scale", "in general" or
  "provably optimal";
* every sentence that says "optimal" or "optimum" also says "on this
  instance" (or "this instance only").

General facts are worded without those words ("no demand cache misses fewer
times than ..."), so the rule needs no exceptions in pyverify's own text.

Quotations are not pyverify's claims: a Markdown blockquote line (``> ...``)
reproduces the user's own words (an instance file's description) and is left
out of the check. Reports put nothing but such quotations in blockquotes.
"""

from __future__ import annotations

import re

FORBIDDEN = ("at any scale", "at every scale", "in general", "provably optimal", "at all scales")
OPTIMAL_WORDS = re.compile(r"\boptim(?:al|um|ality)\b", re.IGNORECASE)
SCOPED = re.compile(r"\bon this instance\b|\bthis instance only\b", re.IGNORECASE)
# A sentence ends at . ! ? followed by space or end, or at a line break.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, leaving out quoted (``>``) lines."""
    own = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(">"))
    return [part.strip() for part in SENTENCE_END.split(own) if part.strip()]


def overclaims(text: str) -> list[str]:
    """The sentences of ``text`` that break the rule above (empty when clean)."""
    bad = []
    for sentence in sentences(text):
        lowered = sentence.lower()
        if any(phrase in lowered for phrase in FORBIDDEN):
            bad.append(sentence)
        elif OPTIMAL_WORDS.search(sentence) and not SCOPED.search(sentence):
            bad.append(sentence)
    return bad
