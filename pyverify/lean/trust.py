"""What a reviewer of the Lean half must trust, made checkable.

Three things can hollow out a kernel-checked theorem without touching its
statement or its proof, so the runner checks each of them:

* **options** that skip or weaken checking (``set_option debug.skipKernelTC
  true`` in a source file, or ``-D`` options and extra ``lean`` arguments in
  the lakefile): :func:`option_problems` and :func:`lakefile_problems` refuse
  every option that is not on a short allowlist of harmless ones;
* **definitions** a statement uses: a theorem about ``distinct_count`` says
  nothing if ``distinct_count`` is redefined. :func:`definitions_probe` asks
  Lean to print every constant, and :func:`dependencies` /
  :func:`closure` find, for each registered theorem, every definition its
  statement depends on, transitively down to the core. The registry records
  each one's printed form and SHA-256, so a changed definition is a registry
  difference;
* **hypotheses** that cannot hold: a theorem with an unsatisfiable hypothesis
  is vacuous. :func:`premises` lists a statement's hypotheses, and the catalog
  names, for each, a theorem of the examples module that proves it on a
  concrete input.

Nothing here decides whether a proof is right; that is the kernel's job.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

# --------------------------------------------------------------------------
# Options

#: Options a source file may set: they change what Lean generates for an
#: inductive type (auxiliary constructions this development does not use),
#: how it prints, or how much work it may do; none changes what the kernel
#: checks. Everything else is refused, `debug.*` first of all
#: (`debug.skipKernelTC` skips the kernel).
ALLOWED_OPTIONS = frozenset({
    "genCtorIdx", "genInjectivity", "genSizeOf", "genSizeOfSpec", "maxRecDepth", "maxHeartbeats",
})
ALLOWED_OPTION_PREFIXES = ("pp.",)


def option_refusal(option: str) -> str | None:
    """Why ``option`` may not be set, or None if it is harmless."""
    if option.startswith("debug."):
        return f"`{option}` is a debug option (debug options can skip the kernel's checks)"
    if option in ALLOWED_OPTIONS or option.startswith(ALLOWED_OPTION_PREFIXES):
        return None
    return f"`{option}` is not on the allowlist of options that cannot weaken checking"


def blank_comments_and_strings(text: str) -> str:
    """``text`` with comments and string literals replaced by spaces (newlines kept,
    so line numbers still hold): a `set_option` mentioned in a comment is not one."""
    out = list(text)
    i, n = 0, len(text)

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
            blank(i, j)
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


_SET_OPTION = re.compile(r"\bset_option\s+([^\s]+)")


def option_problems(text: str) -> list[tuple[int, str]]:
    """(line, reason) for every refused ``set_option`` in a Lean source."""
    code = blank_comments_and_strings(text)
    found = []
    for match in _SET_OPTION.finditer(code):
        reason = option_refusal(match.group(1))
        if reason:
            found.append((code.count("\n", 0, match.start()) + 1, reason))
    return found


#: Lakefile keys that pass arguments or native code to `lean`: any value is refused
#: (`--load-dynlib`, `--plugin` or `-D debug...` would run or weaken anything).
ARGUMENT_KEYS = ("moreLeanArgs", "weakLeanArgs", "moreServerArgs", "moreGlobalServerArgs",
                 "moreLinkArgs", "plugins", "dynlibs", "precompileModules")
#: Lakefile keys that set options: each option must pass :func:`option_refusal`.
OPTION_KEYS = ("leanOptions", "moreServerOptions")


def _table_problems(table: dict, where: str) -> list[str]:
    problems = []
    for key in ARGUMENT_KEYS:
        value = table.get(key)
        if value not in (None, [], False):
            problems.append(f"{where}{key} = {value!r}: extra arguments or native code for lean are refused")
    for key in OPTION_KEYS:
        options = table.get(key)
        if options is None:
            continue
        if not isinstance(options, dict):
            problems.append(f"{where}{key}: expected a table of options")
            continue
        for option in sorted(_flatten_options(options)):
            reason = option_refusal(option)
            if reason:
                problems.append(f"{where}{key}: {reason}")
    return problems


def _flatten_options(options: dict, prefix: str = "") -> list[str]:
    names = []
    for key, value in options.items():
        name = f"{prefix}{key}"
        names.extend(_flatten_options(value, name + ".") if isinstance(value, dict) else [name])
    return names


def lakefile_problems(project: Path, expected_toolchain: str) -> list[str]:
    """Reasons to refuse the project's build configuration (each one line)."""
    problems = []
    if (project / "lakefile.lean").exists():
        problems.append("lakefile.lean: refused: lake would run it (Lean code); configure in lakefile.toml only")
    toolchain = project / "lean-toolchain"
    found = toolchain.read_text(encoding="utf-8").strip() if toolchain.is_file() else "(missing)"
    if found != expected_toolchain:
        problems.append(f"lean-toolchain: {found!r}, need {expected_toolchain!r}")
    lakefile = project / "lakefile.toml"
    try:
        config = tomllib.loads(lakefile.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        return problems + [f"lakefile.toml: cannot read: {error}"]
    problems += _table_problems(config, "lakefile.toml: ")
    for section in ("lean_lib", "lean_exe"):
        for index, table in enumerate(config.get(section) or []):
            if isinstance(table, dict):
                problems += _table_problems(table, f"lakefile.toml: {section}[{index}].")
    return problems


# --------------------------------------------------------------------------
# Definitions a statement depends on

#: Printing options for `#print`: everything explicit (implicit arguments,
#: universe levels, binder types, proofs, deep terms), so the printed form
#: pins the kernel term and a changed definition prints differently.
PRINT_OPTIONS = (
    "pp.fieldNotation false",
    "pp.explicit true",
    "pp.universes true",
    "pp.funBinderTypes true",
    "pp.proofs true",
    "pp.deepTerms true",
    "pp.maxSteps 100000000",
)

_DECLARATION = re.compile(
    r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable|unsafe|partial|nonrec)\s+)*"
    r"(?:def|abbrev|opaque|inductive|structure|class|instance)\s+([^\s(:{\[]+)",
    re.M,
)
_UNIVERSES = re.compile(r"\.\{[^{}]*\}")
_TOKEN = re.compile(r"[^\W\d][\w'.!?]*")
_KIND = re.compile(
    r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable|unsafe|partial|nonrec)\s+)*(\w+)"
)
#: Words of Lean's syntax (not constants) that appear in printed terms.
KEYWORDS = frozenset({
    "fun", "let", "have", "show", "from", "in", "at", "by", "do", "then", "else", "if", "match", "with",
    "Type", "Sort", "Prop", "forall", "exists", "where", "def", "theorem", "inductive", "constructor",
    "recursor", "opaque", "axiom", "abbrev", "structure", "class", "instance", "unsafe", "private",
    "protected", "noncomputable", "partial", "nonrec", "end", "open", "namespace", "section",
    "universe", "variable", "import", "prelude", "example", "mutual", "deriving", "calc", "return",
})


def declared_names(text: str) -> list[str]:
    """Names of the definitions and types a Lean source declares (not its theorems)."""
    return _DECLARATION.findall(blank_comments_and_strings(text))


@dataclass(frozen=True)
class Printed:
    """What ``#print NAME`` showed, reduced to what a statement relies on."""

    name: str
    kind: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def reduce_printed(name: str, message: str) -> Printed:
    """The part of a ``#print`` message that is trusted: a definition or type in
    full; for a theorem, only its statement (its proof is checked by the kernel)."""
    text = message.strip()
    match = _KIND.match(text)
    kind = match.group(1) if match else "?"
    if kind == "theorem":
        text = text.split(" :=\n", 1)[0].split(":=\n", 1)[0].rstrip()
    return Printed(name, kind, text)


def owner(printed: Printed) -> str | None:
    """A constructor or recursor is part of its inductive type: trust that instead."""
    if printed.kind in ("constructor", "recursor") and "." in printed.name:
        return printed.name.rsplit(".", 1)[0]
    return None


def candidate_names(printed: Printed) -> set[str]:
    """Every identifier in a printed form that could be a constant (bound
    variables among them; the caller asks Lean which are constants)."""
    text = printed.text
    if printed.kind in ("inductive", "structure", "class"):
        # Keep the header and the constructors' types, not the "number of ..." lines.
        lines = text.splitlines()
        keep = lines[:1] + [l for l in lines if re.match(r"^\s*[^\s:]+ : ", l)]
        text = "\n".join(keep)
    text = _UNIVERSES.sub(" ", text)
    text = re.sub(r"@", " ", text)
    # Lean writes a constant shadowed by a bound variable as `_root_.name`.
    names = {token.rstrip(".").removeprefix("_root_.") for token in _TOKEN.findall(text)}
    return {n for n in names if n and n not in KEYWORDS and n != printed.name}


def closure(roots: set[str], edges: dict[str, set[str]]) -> list[str]:
    """Every name reachable from ``roots`` along ``edges`` (roots included), sorted."""
    seen: set[str] = set()
    todo = sorted(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(sorted(edges.get(name, set()) - seen))
    return sorted(seen)


# --------------------------------------------------------------------------
# Hypotheses


def _top_level_split(text: str, separator: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i].strip())
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:].strip())
    return parts


def premises(statement: str) -> list[str]:
    """The hypotheses of a statement as Lean prints it: ``∀ binders, P → Q → C``
    gives ``[P, Q]`` (binders of data are not hypotheses)."""
    found: list[str] = []
    rest = statement.strip()
    while True:
        if rest.startswith("∀"):
            # skip the binders: everything up to the first comma outside brackets
            rest = ",".join(_top_level_split(rest[1:], ",")[1:]).strip()
            continue
        parts = _top_level_split(rest, " → ")
        if len(parts) == 1:
            return found
        found.append(parts[0])
        rest = " → ".join(parts[1:])


def head(term: str) -> str:
    """The first word of a term: the predicate of a hypothesis."""
    return term.strip().lstrip("(").split()[0] if term.strip() else ""
