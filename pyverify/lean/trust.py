"""What a reviewer of the Lean half must trust, made checkable.

Three things can hollow out a kernel-checked theorem without touching its
statement or its proof, so the runner checks each of them:

* **options** that skip or weaken checking (``set_option debug.skipKernelTC
  true`` in a source file, or ``-D`` options and extra ``lean`` arguments in
  the lakefile): :func:`option_problems` and :func:`lakefile_problems` refuse
  every option that is not on a short allowlist of harmless ones;
* **definitions** a statement uses: a theorem about ``distinct_count`` says
  nothing if ``distinct_count`` is redefined. They are read from the
  environment the kernel replay rebuilt, not from text
  (:mod:`pyverify.lean.kernel_replay`); the registry records each one with
  its SHA-256, so a changed definition is a registry difference;
* **hypotheses** that cannot hold: a theorem with an unsatisfiable hypothesis
  is vacuous. Which binders are hypotheses is decided on the environment's
  expressions too; :func:`premises` only names them, as Lean prints them, in
  messages.

Nothing here decides whether a proof is right; that is the kernel's job.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pyverify.lean import sources

# --------------------------------------------------------------------------
# Options

#: Options a source file may set: they change what Lean generates for an
#: inductive type (auxiliary constructions this development does not use),
#: how it prints, or how much work it may do; none changes what the kernel
#: checks. Everything else is refused, `debug.*` first of all
#: (`debug.skipKernelTC` skips the kernel).
ALLOWED_OPTIONS = frozenset(
    {
        "genCtorIdx",
        "genInjectivity",
        "genSizeOf",
        "genSizeOfSpec",
        "maxRecDepth",
        "maxHeartbeats",
    }
)
ALLOWED_OPTION_PREFIXES = ("pp.",)


def option_refusal(option: str) -> str | None:
    """Why ``option`` may not be set, or None if it is harmless."""
    if option.startswith("debug."):
        return f"`{option}` is a debug option (debug options can skip the kernel's checks)"
    if option in ALLOWED_OPTIONS or option.startswith(ALLOWED_OPTION_PREFIXES):
        return None
    return f"`{option}` is not on the allowlist of options that cannot weaken checking"


_SET_OPTION = re.compile(r"\bset_option\s+([^\s]+)")


def option_problems(text: str) -> list[tuple[int, str]]:
    """(line, reason) for every refused ``set_option`` in a Lean source."""
    code, _ = sources.blank_comments(text)
    found = []
    for match in _SET_OPTION.finditer(code):
        reason = option_refusal(match.group(1))
        if reason:
            found.append((code.count("\n", 0, match.start()) + 1, reason))
    return found


#: Lakefile keys that pass arguments or native code to `lean`: any value is refused
#: (`--load-dynlib`, `--plugin` or `-D debug...` would run or weaken anything).
ARGUMENT_KEYS = (
    "moreLeanArgs",
    "weakLeanArgs",
    "moreServerArgs",
    "moreGlobalServerArgs",
    "moreLinkArgs",
    "plugins",
    "dynlibs",
    "precompileModules",
)
#: Lakefile keys that set options: each option must pass :func:`option_refusal`.
OPTION_KEYS = ("leanOptions", "moreServerOptions")


def _table_problems(table: dict, where: str) -> list[str]:
    problems = []
    for key in ARGUMENT_KEYS:
        value = table.get(key)
        if value not in (None, [], False):
            problems.append(
                f"{where}{key} = {value!r}: extra arguments or native code for lean are refused"
            )
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
        problems.append(
            "lakefile.lean: refused: lake would run it (Lean code); configure in lakefile.toml only"
        )
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
    problems += _unknown_keys(config, LAKEFILE_KEYS, "lakefile.toml: ")
    libs = config.get("lean_lib")
    for index, table in enumerate(libs if isinstance(libs, list) else []):
        if isinstance(table, dict):
            problems += _table_problems(table, f"lakefile.toml: lean_lib[{index}].")
            problems += _unknown_keys(table, LEAN_LIB_KEYS, f"lakefile.toml: lean_lib[{index}].")
    return problems


#: The only lakefile keys accepted. Anything else could make `lake build`
#: build or load another tree than the one scanned and checked (`srcDir`,
#: `roots`, `globs`, `[[require]]`, `lean_exe`, ...).
LAKEFILE_KEYS = frozenset(
    {"name", "version", "description", "defaultTargets", "lean_lib", "leanOptions"}
)
LEAN_LIB_KEYS = frozenset({"name", "leanOptions"})


def _unknown_keys(table: dict, allowed: frozenset[str], where: str) -> list[str]:
    return [
        f"{where}{key}: refused: not on the allowlist of keys ({', '.join(sorted(allowed))}); "
        "it could make lake build another tree than the one checked"
        for key in sorted(set(table) - allowed)
    ]


# --------------------------------------------------------------------------
# Definitions a statement depends on

#: Printing options for `#print`: everything explicit (implicit arguments,
#: universe levels, binder types, proofs, deep terms), no notation (a notation
#: would print a constant as a symbol), full names, and private names as
#: `_private...` (refused), so the printed form pins the kernel term, names
#: every constant it uses, and a changed definition prints differently.
PRINT_OPTIONS = (
    "pp.fieldNotation false",
    "pp.notation false",
    "pp.fullNames true",
    "pp.privateNames true",
    "pp.explicit true",
    "pp.universes true",
    "pp.funBinderTypes true",
    "pp.proofs true",
    "pp.deepTerms true",
    "pp.maxSteps 100000000",
)

_KIND = re.compile(
    r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable|unsafe|partial|nonrec)\s+)*(\w+)"
)


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
