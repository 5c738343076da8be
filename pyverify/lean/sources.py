"""A conservative scan of the Lean sources: refuse what could hide code from it.

This scan is a first line only. The sound checks ask Lean itself (the
registered names are theorems, the kernel's special names are absent, every
trusted definition prints in plain ASCII names: :mod:`pyverify.lean.runner`).
But some things cannot be seen from Lean's answers at all, above all
``set_option debug.skipKernelTC true``, which makes the kernel skip a
declaration and leaves no trace. For those the scan must not be fooled, so it
does not try to understand Lean's lexer where a hand lexer could go wrong; it
refuses those constructs outright:

* string literals (``"..."``, ``r"..."``, ``r#"..."#``) and character literals
  (``'a'``): the development has no ``String`` or ``Char``, and a quote is how
  code is hidden from a scanner;
* escaped identifiers ``«...»``: inside them ``"``, ``--`` and ``/-`` are just
  characters to Lean;
* ``unsafe`` and ``axiom`` (except the core's two code-generator declarations),
  ``private`` (private names print differently and escape the registry),
  ``opaque``, ``partial``, ``implemented_by``, ``extern``;
* commands that add syntax or run code (``notation``, ``macro``, ``syntax``,
  ``elab``, ``#eval``, ``run_cmd``, ...): a new syntax could spell
  ``set_option`` differently;
* declarations into the namespaces the kernel treats specially
  (:mod:`pyverify.lean.kernel_names`) and declared names that are not plain
  ASCII identifiers.

What remains after comments are blanked (``--`` to the end of the line, and
``/- ... -/`` nested, exactly as Lean nests them) is plain code in which a
word is a word.
"""

from __future__ import annotations

import re

from pyverify.lean.kernel_names import RESERVED_NAMESPACES

#: The only ``unsafe``/``axiom`` declarations allowed: Lean's code generator
#: demands them when it compiles an inductive type with parameters; the kernel
#: refuses any safe declaration that mentions them.
ALLOWED_UNSAFE_LINES = frozenset({"unsafe axiom lcAny : Type", "unsafe axiom lcErased : Type"})

#: word -> why it is refused in code
REFUSED_WORDS: dict[str, str] = {
    "unsafe": "`unsafe` declarations are not checked like ordinary ones",
    "axiom": "a new axiom is refused (only the core's two code-generator declarations are allowed)",
    "private": "private names print as other names and escape the registry of trusted definitions",
    "opaque": "an opaque constant hides its definition from the registry",
    "partial": "a partial definition is an opaque constant with unchecked code behind it",
    "implemented_by": "`implemented_by` replaces a definition's code",
    "extern": "`extern` replaces a definition's code",
    "init_quot": "quotients have their own kernel reduction",
    "notation": "new notation could spell a refused command another way",
    "infix": "new notation could spell a refused command another way",
    "infixl": "new notation could spell a refused command another way",
    "infixr": "new notation could spell a refused command another way",
    "prefix": "new notation could spell a refused command another way",
    "postfix": "new notation could spell a refused command another way",
    "macro": "a macro could spell a refused command another way",
    "macro_rules": "a macro could spell a refused command another way",
    "syntax": "new syntax could spell a refused command another way",
    "elab": "an elaborator runs code at build time",
    "elab_rules": "an elaborator runs code at build time",
    "declare_syntax_cat": "new syntax could spell a refused command another way",
    "#eval": "`#eval` runs code at build time",
    "run_cmd": "`run_cmd` runs code at build time",
    "run_elab": "`run_elab` runs code at build time",
    "run_meta": "`run_meta` runs code at build time",
    "export": "an alias could make a trusted name mean another constant",
    "renaming": "an alias could make a trusted name mean another constant",
    "attribute": "attributes are set only in `@[...]` on a declaration",
}

# Lean's identifier characters beyond ASCII (letter-like symbols, Greek,
# subscripts): any of them may continue a word.
_WORD_CHARS = r"\w'!?"
_WORD = re.compile(rf"#?[^\W\d][{_WORD_CHARS}.]*")
_DECLARATION = re.compile(
    r"\b(?:def|theorem|abbrev|inductive|structure|class|instance|lemma|example)\s+([^\s(:{\[⦃]+)"
)
_NAMESPACE = re.compile(r"\b(?:namespace|open|section)\s+([^\s]+)")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_']*(?:\.[A-Za-z_][A-Za-z0-9_']*)*")


def blank_comments(text: str) -> tuple[str, int | None]:
    """``text`` with comments replaced by spaces (newlines kept, so line numbers
    hold), and the index where an unclosed block comment starts (or None).

    Nothing else is interpreted: quotes are left in place for :func:`problems`
    to refuse."""
    out = list(text)
    i, n = 0, len(text)
    unclosed: int | None = None

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                unclosed = i
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out), unclosed


def _line_of(code: str, index: int) -> int:
    return code.count("\n", 0, index) + 1


def problems(text: str) -> list[tuple[int, str]]:
    """(line, reason) for every construct of a Lean source this scan refuses."""
    code, unclosed = blank_comments(text)
    found: list[tuple[int, str]] = []
    if unclosed is not None:
        found.append((_line_of(text, unclosed), "a block comment is not closed"))
    for index, char in enumerate(code):
        if char == '"':
            found.append(
                (
                    _line_of(code, index),
                    "string literals are refused (there is no String here, and a quote can hide code from the scan)",
                )
            )
        elif char == "`":
            found.append(
                (
                    _line_of(code, index),
                    "name literals (`name) are refused (they can hide code from the scan)",
                )
            )
        elif char in "«»":
            found.append(
                (
                    _line_of(code, index),
                    "escaped identifiers «...» are refused (they can hide code from the scan)",
                )
            )
        elif char == "'" and (index == 0 or not re.match(rf"[{_WORD_CHARS}]", code[index - 1])):
            found.append(
                (
                    _line_of(code, index),
                    "character literals are refused (there is no Char here, and a quote can hide code from the scan)",
                )
            )
    lines = code.splitlines()
    for match in _WORD.finditer(code):
        word = match.group(0)
        reason = REFUSED_WORDS.get(word)
        if reason is None:
            continue
        line = _line_of(code, match.start())
        if word in ("unsafe", "axiom") and lines[line - 1].strip() in ALLOWED_UNSAFE_LINES:
            continue
        found.append((line, f"`{word}`: {reason}"))
    for match in _DECLARATION.finditer(code):
        name = match.group(1)
        line = _line_of(code, match.start(1))
        if not _PLAIN_NAME.fullmatch(name):
            found.append(
                (
                    line,
                    f"declared name {name!r} is not a plain ASCII identifier (trusted names must print as themselves)",
                )
            )
        elif name.split(".")[0] in RESERVED_NAMESPACES:
            found.append(
                (
                    line,
                    f"`{name}`: the Lean kernel treats names in `{name.split('.')[0]}` specially",
                )
            )
    for match in _NAMESPACE.finditer(code):
        name = match.group(1)
        if name.split(".")[0] in RESERVED_NAMESPACES:
            found.append(
                (
                    _line_of(code, match.start(1)),
                    f"namespace `{name}`: the Lean kernel treats names in it specially",
                )
            )
    return sorted(set(found))
