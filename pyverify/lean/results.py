"""What a Lean check found: messages, per-module and per-theorem results, and
how Lean's output is read (``lean --json`` and ``lake build`` lines)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pyverify.lean import runtime, trust

if TYPE_CHECKING:
    from pyverify.lean.kernel_replay import Replayed


@dataclass
class Message:
    """One message from Lean."""

    file: str
    line: int | None
    severity: str
    text: str

    def first_line(self) -> str:
        """The message on one line (whitespace collapsed), at most 300 characters."""
        text = " ".join(self.text.split())
        return text if len(text) <= 300 else text[:297] + "..."


@dataclass
class ModuleResult:
    name: str
    path: Path
    seconds: float | None
    messages: list[Message] = field(default_factory=list)

    @property
    def problems(self) -> list[Message]:
        return [m for m in self.messages if m.severity in ("error", "warning")]


@dataclass
class TheoremResult:
    name: str
    module: str
    statement: str
    axioms: list[str]
    axioms_line: str
    definitions: list[str] = field(default_factory=list)  # trusted: what the statement depends on
    #: the theorem of the examples module that instantiates this theorem on a concrete
    #: input, discharging all its hypotheses together (None: it has no hypotheses)
    applies: str | None = None
    #: the elaborated type, as the canonical text of the kernel's expression
    type: str = ""


@dataclass
class CheckResult:
    backend: str
    identity: runtime.Identity
    modules: list[ModuleResult] = field(default_factory=list)
    theorems: list[TheoremResult] = field(default_factory=list)
    definitions: dict[str, trust.Printed] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    registry_path: Path | None = None
    registry_written: bool = False
    seconds: float = 0.0
    #: what the kernel replay re-checked (None: the check stopped before it)
    replayed: Replayed | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "backend": self.backend,
            "lean_version": self.identity.version,
            "githash": self.identity.githash,
            "modules": [
                {"name": m.name, "seconds": None if m.seconds is None else round(m.seconds, 3)}
                for m in self.modules
            ],
            "kernel_replay": None
            if self.replayed is None
            else {m.name: m.checked for m in self.replayed.modules},
            "theorems": [
                {
                    "name": t.name,
                    "module": t.module,
                    "statement": t.statement,
                    "type": t.type,
                    "axioms": t.axioms,
                    "definitions": t.definitions,
                    "applies": t.applies,
                }
                for t in self.theorems
            ],
            "definitions": {name: p.sha256 for name, p in sorted(self.definitions.items())},
            "failures": list(self.failures),
            "registry": None if self.registry_path is None else str(self.registry_path),
            "registry_written": self.registry_written,
            "seconds": round(self.seconds, 3),
        }


# --------------------------------------------------------------------------
# Lean output


def parse_json_messages(stdout: str, default_file: str) -> list[Message]:
    """Messages from ``lean --json`` (one JSON object a line); other lines become errors."""
    messages: list[Message] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "severity" in data:
            pos = data.get("pos") or {}
            messages.append(
                Message(
                    file=str(data.get("fileName", default_file)),
                    line=pos.get("line"),
                    severity=str(data["severity"]),
                    text=str(data.get("data", "")),
                )
            )
        else:
            messages.append(Message(default_file, None, "error", line))
    return messages


_LAKE_MESSAGE = re.compile(
    r"^(?P<severity>error|warning|info): (?P<file>[^\s:]+\.lean):(?P<line>\d+):(?P<col>\d+): (?P<text>.*)$"
)


def parse_lake_messages(output: str) -> list[Message]:
    messages: list[Message] = []
    for raw in output.splitlines():
        match = _LAKE_MESSAGE.match(raw.strip().lstrip("✖⚠ ").strip())
        if match:
            messages.append(
                Message(
                    file=match.group("file"),
                    line=int(match.group("line")),
                    severity=match.group("severity"),
                    text=match.group("text"),
                )
            )
    return messages


def describe_problem(module: str, path: str, message: Message, source: str | None = None) -> str:
    where = f"line {message.line}" if message.line is not None else "no line"
    text = message.first_line()
    if source is not None and message.line is not None and text.startswith("internal exception"):
        # Without Lean's library there is no `sorryAx`, so `sorry` cannot even
        # elaborate and Lean only says "internal exception". Say why.
        lines = source.splitlines()[message.line - 1 :]
        declaration = "\n".join(
            lines[: next((i for i, l in enumerate(lines) if i and not l.strip()), len(lines))]
        )
        if re.search(r"\bsorry\b", declaration):
            text += " (this declaration uses `sorry`, which cannot elaborate here: there is no `sorryAx`)"
    return f"module {module} ({path}), {where}: {message.severity}: {text}"


def relative_to_project(path: Path, project: Path) -> str:
    """``path`` as a reader of the project sees it (relative to the project's parent)."""
    try:
        return str(path.relative_to(project.parent))
    except ValueError:
        return str(path)
