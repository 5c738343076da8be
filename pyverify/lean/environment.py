"""What Lean says about the built development.

The kernel replay (:mod:`pyverify.lean.kernel_replay`) has re-checked every
declaration and refused the kinds the development may not use, names the
kernel treats specially included. Then small generated files that import the
library (probes) ask Lean:

1. each registered name is a ``theorem`` (not an ``unsafe def``, an ``axiom``
   or an ``opaque``): ``#print NAME``;
2. its statement as ``#check @NAME`` prints it (for readers) and its axioms
   (``#print axioms NAME``);
3. a theorem with hypotheses is instantiated on a concrete input by its
   ``applies`` example, a theorem of the examples module with no axioms whose
   statement is closed (no ``∀``, no ``→``) and whose proof is the registered
   theorem applied to arguments: all its hypotheses hold together of
   something, so it is not vacuous.

Each theorem's elaborated type and every declaration it reaches are read
from the replayed environment (:func:`pin_statements`), not from text.
"""

from __future__ import annotations

import re
from pathlib import Path

from pyverify.errors import CheckFailed
from pyverify.lean import catalog, kernel_replay, trust
from pyverify.lean.kernel_replay import Replayed
from pyverify.lean.results import Message, TheoremResult, parse_json_messages

EXAMPLES_MODULE = "Examples"


class Probe:
    """Runs generated Lean files that import the built library, in a scratch folder."""

    def __init__(self, engine, project: Path, library: str, scratch: Path):
        self.engine, self.project, self.library, self.scratch = engine, project, library, scratch
        self.count = 0

    def ask(
        self, commands: list[str], options: tuple[str, ...] = ()
    ) -> tuple[dict[int, int], list[Message]]:
        """Run ``commands`` (one a line); return (line in the file -> index in
        ``commands``, Lean's messages)."""
        self.count += 1
        lines = ["prelude", f"import {self.library}"] + [f"set_option {o}" for o in options]
        at: dict[int, int] = {}
        for index, command in enumerate(commands):
            lines.append(command)
            at[len(lines)] = index
        path = self.scratch / f"PyverifyProbe{self.count}.lean"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        proc = self.engine.run_file(self.project, path)
        messages = parse_json_messages(proc.stdout, str(path))
        if proc.returncode != 0 and not any(m.severity == "error" for m in messages):
            raise CheckFailed(
                f"probe: lean exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}"
            )
        stray = [m for m in messages if m.line not in at]
        if stray:
            raise CheckFailed(f"probe: {stray[0].severity}: {stray[0].first_line()}")
        return at, messages

    def print_each(self, names: list[str]) -> dict[str, Message]:
        """``#print NAME`` for each name with the trusted print options: name -> Lean's answer."""
        at, messages = self.ask([f"#print {name}" for name in names], trust.PRINT_OPTIONS)
        answers: dict[str, Message] = {}
        for message in messages:
            answers.setdefault(names[at[message.line]], message)
        missing = [name for name in names if name not in answers]
        if missing:
            raise CheckFailed(f"probe: #print {missing[0]}: Lean printed nothing")
        return answers


def is_unknown(message: Message) -> bool:
    return message.severity == "error" and message.text.startswith("Unknown constant")


# --------------------------------------------------------------------------
# 1-3. Registered theorems, their statements, axioms and examples


def theorem_modules(modules) -> dict[str, str]:
    """Map each theorem name the sources declare to its module (for reports;
    that each is a theorem is asked of Lean)."""
    found: dict[str, str] = {}
    pattern = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?(?:protected\s+)?theorem\s+([^\s(:{\[]+)", re.M)
    for module in modules:
        for match in pattern.finditer(module.path.read_text(encoding="utf-8")):
            found.setdefault(match.group(1), module.name)
    return found


_NO_AXIOMS = re.compile(r"^'(?P<name>[^']+)' does not depend on any axioms$")
_AXIOMS = re.compile(r"^'(?P<name>[^']+)' depends on axioms: \[(?P<list>.*)\]$", re.S)


def parse_axioms(text: str) -> list[str] | None:
    """Axioms named by a ``#print axioms`` message, or None if it is not one."""
    text = " ".join(text.split())
    if _NO_AXIOMS.match(text):
        return []
    match = _AXIOMS.match(text)
    if match:
        return [a.strip() for a in match.group("list").split(",") if a.strip()]
    return None


def normalize_statement(name: str, text: str) -> str:
    """``name : STATEMENT`` as printed by ``#check @name``, on one line."""
    flat = " ".join(text.split())
    prefix = f"{name} : "
    return flat[len(prefix) :] if flat.startswith(prefix) else flat


def statements_and_axioms(probe: Probe, names: list[str]) -> dict[str, tuple[str, list[str], str]]:
    """For each name: (statement as `#check @name` prints it, axioms, the `#print axioms` line)."""
    commands = []
    for name in names:
        commands += [f"#check @{name}", f"#print axioms {name}"]
    at, messages = probe.ask(commands, ("pp.fieldNotation false",))
    answers: dict[int, Message] = {}
    for message in messages:
        index = at[message.line]
        if message.severity == "error":
            raise CheckFailed(f"theorem {names[index // 2]}: {message.first_line()}")
        answers.setdefault(index, message)
    found = {}
    for i, name in enumerate(names):
        statement_msg, axioms_msg = answers.get(2 * i), answers.get(2 * i + 1)
        if statement_msg is None or axioms_msg is None:
            raise CheckFailed(f"theorem {name}: Lean printed no statement or axioms")
        axioms = parse_axioms(axioms_msg.text)
        if axioms is None:
            raise CheckFailed(
                f"theorem {name}: unexpected #print axioms output: {axioms_msg.first_line()}"
            )
        found[name] = (
            normalize_statement(name, statement_msg.text),
            axioms,
            " ".join(axioms_msg.text.split()),
        )
    return found


def check_is_theorem(name: str, message: Message, what: str) -> None:
    """``#print`` of ``name`` must show an ordinary theorem."""
    if message.severity == "error":
        raise CheckFailed(f"{what} {name}: {message.first_line()}")
    printed = trust.reduce_printed(name, message.text)
    header = message.text.split(":", 1)[0]
    if printed.kind != "theorem" or re.search(r"\b(unsafe|partial)\b", header):
        raise CheckFailed(
            f"{what} {name}: Lean says it is `{header.split(name)[0].strip() or printed.kind}`, not a theorem "
            "(only a theorem is checked by the kernel as a proof)"
        )


def check_applies(
    theorem: TheoremResult,
    spec: catalog.TheoremSpec,
    declared: dict[str, str],
    library: str,
    answers: dict[str, tuple[str, list[str], str]],
    printed: dict[str, Message],
    replayed: Replayed,
) -> str | None:
    """The registered theorem's hypotheses hold together of a concrete input.

    Returns the name of its ``applies`` example, or None when the theorem has
    no hypotheses. Decided on the replayed environment's expressions, not on
    text: a theorem has hypotheses when a leading binder of its type is a
    proposition (:func:`pyverify.lean.kernel_replay.premises`: behind a
    definition, written as a dependent ``∀``, or headed by a bound variable
    such as ``h : P x`` too); its example's proof must be the theorem
    applied to as many arguments as its type has binders (so
    each hypothesis, instantiated, got a proof the kernel checked), and its
    type must have no binder (it is about a concrete input). One example per
    premise kind is not enough: an unsatisfiable extra premise such as
    ``Eq zero (succ zero)`` would be "covered" by any other equation's
    example; an instantiation of the theorem itself is not."""
    hypotheses = kernel_replay.premises(replayed, theorem.name)
    written = trust.premises(theorem.statement)
    where = f"registered theorem {theorem.name}"
    module = f"{library}.{EXAMPLES_MODULE}"
    if spec.applies is None:
        if hypotheses:
            first = (
                f"`{written[0]}`"
                if written
                else f"number {hypotheses[0] + 1} (a binder of its type)"
            )
            raise CheckFailed(
                f"{where}: its hypothesis {first} (and every other) needs an example that instantiates the "
                f"theorem on a concrete input: name a theorem of {module} as `applies` in the catalog"
            )
        return None
    example = spec.applies
    if declared.get(example) != module:
        raise CheckFailed(f"{where}: its example {example} is not a theorem of {module}")
    check_is_theorem(example, printed[example], f"{where}: its example")
    found = replayed.constants.get(example)
    if found is None or found["kind"] != "theorem":
        raise CheckFailed(
            f"{where}: its example {example} is not a theorem of the replayed environment"
        )
    statement, axioms, _ = answers[example]
    if found["arity"]:
        raise CheckFailed(
            f"{where}: its example {example} proves `{statement}`, which is not about a concrete input "
            f"(its type has {found['arity']} binder(s): ∀ or →)"
        )
    if axioms:
        raise CheckFailed(f"{where}: its example {example} depends on axioms: {', '.join(axioms)}")
    arity = replayed.constants[theorem.name]["arity"]
    if found["proof_head"] != theorem.name:
        raise CheckFailed(
            f"{where}: its example {example} is not proved by applying {theorem.name} "
            f"(its proof starts with `{found['proof_head'] or 'no constant'}`), so it does not show the hypotheses hold together"
        )
    if found["proof_arguments"] != arity:
        raise CheckFailed(
            f"{where}: its example {example} is not proved by applying {theorem.name} to all its "
            f"{arity} arguments (it gives {found['proof_arguments']}), so it does not show the hypotheses hold together"
        )
    return example


def collect_theorems(probe: Probe, modules, emit, replayed: Replayed) -> list[TheoremResult]:
    declared = theorem_modules(modules)
    names = [spec.name for spec in catalog.THEOREMS]
    missing = [name for name in names if name not in declared]
    if missing:
        raise CheckFailed(
            f"registered theorem {missing[0]}: not declared in any module of {probe.library}"
        )
    # Only examples the examples module declares are asked about; check_applies names a missing one.
    examples_module = f"{probe.library}.{EXAMPLES_MODULE}"
    examples = sorted(
        {
            spec.applies
            for spec in catalog.THEOREMS
            if spec.applies and declared.get(spec.applies) == examples_module
        }
    )
    printed = probe.print_each(names + [e for e in examples if e not in names])
    for name in names:
        check_is_theorem(name, printed[name], "registered theorem")
    answers = statements_and_axioms(probe, names + [e for e in examples if e not in names])
    results = []
    emit("axioms:")
    for name in names:
        statement, axioms, line = answers[name]
        emit(f"  {line}")
        results.append(TheoremResult(name, declared[name], statement, axioms, line))
    bad = [t for t in results if t.axioms]
    if bad:
        raise CheckFailed(
            f"registered theorem {bad[0].name} (module {bad[0].module}) depends on axioms: "
            + ", ".join(bad[0].axioms)
        )
    specs = catalog.by_name()
    for theorem in results:
        theorem.applies = check_applies(
            theorem, specs[theorem.name], declared, probe.library, answers, printed, replayed
        )
    return results


# --------------------------------------------------------------------------
# 5. Statements and trusted definitions, from the replayed environment


def pin_statements(replayed: Replayed, theorems: list[TheoremResult]) -> dict[str, trust.Printed]:
    """Pin each registered theorem by its elaborated type and what that type reaches.

    Both come from the environment the kernel replay rebuilt from the
    ``.olean`` files, not from printed text: ``theorem.type`` is the canonical
    text of the type's expression, ``theorem.definitions`` every declaration
    it reaches (:func:`pyverify.lean.kernel_replay.dependencies`), each pinned
    by the canonical text of its declaration."""
    trusted: dict[str, trust.Printed] = {}
    for theorem in theorems:
        info = replayed.constants.get(theorem.name)
        if info is None or info["kind"] != "theorem":
            kind = "absent" if info is None else f"a {info['kind']}"
            raise CheckFailed(
                f"registered theorem {theorem.name}: the replayed environment holds it as {kind}, "
                "not a theorem"
            )
        theorem.type = kernel_replay.statement(replayed, theorem.name)
        theorem.definitions = kernel_replay.dependencies(replayed, theorem.name)
        for name in theorem.definitions:
            trusted[name] = trust.Printed(
                name,
                replayed.constants[name]["kind"],
                kernel_replay.declaration_text(replayed, name),
            )
    return dict(sorted(trusted.items()))
