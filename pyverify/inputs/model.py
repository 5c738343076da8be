"""The one model every part of pyverify shares: requests, fleets, instances.

Definitions (docs/explanation/model.md):

* A **request** is a chain of block ids ``(b1, ..., bk)``, ``k >= 1``; each id
  names the whole prefix up to and including its block (vLLM's chained block
  hashes, Mooncake's ``hash_ids``). A prompt *opening* is a chain of length 1.
* An **instance** is a list of requests for a fleet of ``hosts`` hosts, with
  the routing (one host per request) either given for every request or for
  none; in the latter case a named policy derives it (:mod:`pyverify.sim.routing`).
* A trace is **prefix-closed** when equal ids imply equal ids at every earlier
  position: every block id has one parent (the id before it, or the root) and
  one depth. :func:`check_prefix_closed` reports the first violation.

Instances are stored as JSON (``"format": "pyverify.instance/1"``), validated
against ``pyverify/schemas/instance.schema.json`` on load, and named by the
SHA-256 of their canonical JSON (:func:`instance_sha256`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from pyverify.errors import UserError, located, shown
from pyverify.inputs.jsonread import read_json

INSTANCE_FORMAT = "pyverify.instance/1"

Chain = tuple[int, ...]

#: The id of the root of the prefix tree: the parent of every first block.
ROOT = -1

#: The largest fleet any input may describe, whatever its format (the instance
#: schema's bound on ``hosts``; ``pyverify/schemas/instance.schema.json``).
#: Host ids are 0 .. MAX_HOSTS - 1. Per-host work allocates per host, so an
#: unbounded host id (a CSV row naming host 10**12) would ask for terabytes.
MAX_HOSTS = 65536


#: The largest block size, in tokens (the instance schema's bound on ``block_size_tokens``).
MAX_BLOCK_SIZE_TOKENS = 1_048_576

#: The largest token count of a request (``input_tokens``/``output_tokens``, a trace's
#: ``input_length``/``output_length``; the instance schema's bound), in every reader: the arrays
#: hold them as float64, exact up to 2**53, so a larger count would read as another one and two
#: traces would share a content digest.
MAX_TOKEN_COUNT = 2**53


def check_block_size_tokens(value: object, path: object, field: str) -> int:
    """``value`` as a block size of 1 .. MAX_BLOCK_SIZE_TOKENS tokens, or one line of error (every format's rule)."""
    if not (
        isinstance(value, int)
        and not isinstance(value, bool)
        and 1 <= value <= MAX_BLOCK_SIZE_TOKENS
    ):
        shown = (
            value
            if not isinstance(value, str)
            else repr(value[:40] + ("..." if len(value) > 40 else ""))
        )
        raise located(
            path,
            field,
            f"expected a whole number of tokens from 1 to {MAX_BLOCK_SIZE_TOKENS}, got {shown}",
        )
    return value


def check_instance_name(name: str, field: str) -> str:
    """``name`` if the instance schema allows it as a name, else one line of error naming ``field`` (e.g. ``--name``)."""
    import re

    rule = instance_schema()["properties"]["name"]
    if not (
        rule["minLength"] <= len(name) <= rule["maxLength"] and re.search(rule["pattern"], name)
    ):
        raise located(
            field, None, f"{shown(repr(name), 60)} is not an instance name: {rule['description']}"
        )
    return name


def check_host_id(host: int, path: object, field: str) -> None:
    """One line of error when ``host`` is not a host id 0 .. MAX_HOSTS - 1 (every format's rule)."""
    if host < 0:
        raise located(path, field, f"host {host} is negative")
    if host >= MAX_HOSTS:
        raise located(
            path,
            field,
            f"host {host} out of range: a fleet has at most {MAX_HOSTS} hosts (ids 0..{MAX_HOSTS - 1})",
        )


@dataclass(frozen=True)
class Instance:
    """A validated, prefix-closed request trace for a fleet.

    ``chains[i]`` is request i's chain of block ids; ``routing[i]`` is its host
    (``None`` for the whole instance when the file gives no routing).
    ``extra`` holds the optional per-request fields (route_key, arrival_ms,
    input_tokens, output_tokens) exactly as given, for round-tripping.
    """

    name: str
    fleet_size: int
    chains: tuple[Chain, ...]
    routing: tuple[int, ...] | None = None
    description: str = ""
    source: str = ""
    block_size_tokens: int | None = None
    extra: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def n_requests(self) -> int:
        return len(self.chains)

    @property
    def n_references(self) -> int:
        """Block references: the denominator of every hit rate."""
        return sum(len(chain) for chain in self.chains)

    def to_json(self) -> dict[str, Any]:
        """The instance as a JSON object in ``pyverify.instance/1`` form."""
        data: dict[str, Any] = {"format": INSTANCE_FORMAT, "name": self.name}
        if self.description:
            data["description"] = self.description
        if self.source:
            data["source"] = self.source
        data["hosts"] = self.fleet_size
        if self.block_size_tokens is not None:
            data["block_size_tokens"] = self.block_size_tokens
        requests = []
        for index, chain in enumerate(self.chains):
            request: dict[str, Any] = {"blocks": list(chain)}
            if self.routing is not None:
                request["host"] = self.routing[index]
            if self.extra:
                request.update(self.extra[index])
            requests.append(request)
        data["requests"] = requests
        return data


def canonical_json(instance: Instance) -> bytes:
    """The canonical encoding: sorted keys, no insignificant whitespace, UTF-8.

    Two files that differ only in layout or key order have the same canonical
    form and so the same SHA-256.
    """
    return json.dumps(
        instance.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")


def instance_sha256(instance: Instance) -> str:
    """Hex SHA-256 of :func:`canonical_json`: how certificates name a ``pyverify.instance/1`` file.

    It covers the name, description, source and how numbers are written, so
    the same trace in two formats gets two of them; :func:`pyverify.inputs.columnar.digest.content_sha256`
    is the same for both."""
    return hashlib.sha256(canonical_json(instance)).hexdigest()


@cache
def instance_schema() -> dict[str, Any]:
    """The committed JSON Schema for ``pyverify.instance/1``."""
    from importlib import (
        resources,
    )  # here: importlib.resources pulls in tempfile, shutil and the compression modules

    text = (
        resources.files("pyverify.schemas")
        .joinpath("instance.schema.json")
        .read_text(encoding="utf-8")
    )
    return json.loads(text)


def json_path(parts: Iterable[Any]) -> str:
    """Render a jsonschema error path as ``requests[3].blocks[0]``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _is_strict_integer(checker: Any, value: Any) -> bool:
    # JSON Schema counts 1.0 as an integer; pyverify does not: an id or a count
    # written as 1.0 or 1e20 is refused here, as the JSONL importer refuses it.
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def strict_validator():
    """Draft 2020-12 validation with strict integers (built on first use: jsonschema is slow to import)."""
    import jsonschema

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
            "integer", _is_strict_integer
        ),
    )


def validate_schema(data: Any, path: str | Path, schema: dict[str, Any]) -> None:
    """Raise a one-line UserError for the first (most relevant) schema violation.

    Integers are strict: ``1.0`` is not an integer here (see :func:`strict_validator`)."""
    import jsonschema

    validator = strict_validator()(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise located(path, json_path(error.absolute_path), error.message)


def instance_from_json(data: Any, path: str | Path = "<instance>") -> Instance:
    """Validate a decoded JSON object and build the :class:`Instance`.

    Checks, in order: the schema; host ids in range; routing all-or-none;
    prefix closure. Each failure is one UserError naming ``path`` and the field.
    """
    validate_schema(data, path, instance_schema())
    hosts = data["hosts"]
    requests = data["requests"]
    with_host = [index for index, request in enumerate(requests) if "host" in request]
    if with_host and len(with_host) != len(requests):
        missing = next(index for index, request in enumerate(requests) if "host" not in request)
        raise located(
            path,
            f"requests[{missing}].host",
            "missing, but other requests give a host: give every request a host or none",
        )
    for index in with_host:
        if requests[index]["host"] >= hosts:
            raise located(
                path,
                f"requests[{index}].host",
                f"host {requests[index]['host']} out of range: the fleet has hosts 0..{hosts - 1}",
            )
    chains = tuple(tuple(request["blocks"]) for request in requests)
    violation = first_prefix_violation(chains)
    if violation is not None:
        raise located(path, violation.field, violation.reason)
    extra_keys = (
        "route_key",
        "arrival_ms",
        "input_tokens",
        "output_tokens",
        "block_tokens",
        "labels",
    )
    extra = tuple(
        {key: request[key] for key in extra_keys if key in request} for request in requests
    )
    return Instance(
        name=data["name"],
        fleet_size=hosts,
        chains=chains,
        routing=tuple(request["host"] for request in requests) if with_host else None,
        description=data.get("description", ""),
        source=data.get("source", ""),
        block_size_tokens=data.get("block_size_tokens"),
        extra=extra if any(extra) else (),
    )


def load_instance(path: str | Path) -> Instance:
    """Load and validate an instance file (see :func:`instance_from_json`)."""
    return instance_from_json(read_json(path), path)


# --- prefix closure ---------------------------------------------------------


@dataclass(frozen=True)
class PrefixViolation:
    """Where a trace stops being prefix-closed, and why."""

    request: int
    position: int
    reason: str

    @property
    def field(self) -> str:
        return f"requests[{self.request}].blocks[{self.position}]"


class PrefixClosure:
    """Incremental prefix-closure check: feed chains in trace order.

    Block ``chain[j]``'s parent is ``chain[j-1]`` (``ROOT`` for ``j == 0``). The
    trace is prefix-closed exactly when every id keeps one parent throughout;
    since the root has depth 0, one parent per id also fixes one depth per id.
    Streaming readers (:mod:`pyverify.inputs.mooncake`) use this directly so that a
    violation is found without holding the whole trace.
    """

    def __init__(self) -> None:
        self.parent_of: dict[int, int] = {}

    def add(self, chain: Sequence[int]) -> tuple[int, str] | None:
        """Record ``chain``; return ``(position, reason)`` of its first violation, if any."""
        parent = ROOT
        for position, block in enumerate(chain):
            known = self.parent_of.setdefault(block, parent)
            if known != parent:
                before = "the root" if known == ROOT else f"block {known}"
                now = "the root" if parent == ROOT else f"block {parent}"
                return (
                    position,
                    f"not prefix-closed: block {block} follows {now} here but followed {before} earlier",
                )
            parent = block
        return None


def first_prefix_violation(chains: Sequence[Sequence[int]]) -> PrefixViolation | None:
    """The first (request, position) at which a block id gets a second parent (see :class:`PrefixClosure`)."""
    closure = PrefixClosure()
    for request_index, chain in enumerate(chains):
        found = closure.add(chain)
        if found is not None:
            return PrefixViolation(request_index, *found)
    return None


def parent_map(chains: Sequence[Sequence[int]]) -> dict[int, int]:
    """Each block id's parent (``ROOT`` for first blocks) in a prefix-closed trace."""
    parents: dict[int, int] = {}
    for chain in chains:
        parent = ROOT
        for block in chain:
            parents.setdefault(block, parent)
            parent = block
    return parents


def prefix_tree(instance_or_chains: Instance | Sequence[Sequence[int]]):
    """The prefix (radix) tree as a ``networkx.DiGraph`` rooted at :data:`ROOT`.

    Edges go parent -> child; every block id has in-degree exactly 1 because the
    trace is prefix-closed. Node attribute ``requests`` counts how many
    requests' chains pass through the block.
    """
    import networkx as nx

    chains = (
        instance_or_chains.chains
        if isinstance(instance_or_chains, Instance)
        else instance_or_chains
    )
    tree = nx.DiGraph()
    tree.add_node(ROOT, requests=len(chains))
    for block, parent in parent_map(chains).items():
        tree.add_edge(parent, block)
    nx.set_node_attributes(tree, 0, "requests")
    tree.nodes[ROOT]["requests"] = len(chains)
    for chain in chains:
        for block in chain:
            tree.nodes[block]["requests"] += 1
    return tree


def distinct_blocks(chains: Iterable[Sequence[int]]) -> set[int]:
    """All block ids referenced by the chains."""
    return {block for chain in chains for block in chain}


def safe_file_stem(name: str, sha256: str) -> str:
    """A file-name stem made from an instance's name: only ``[A-Za-z0-9._-]``, never hidden, never a path.

    The name comes from a user's file, so it is never used as a path as it is
    (a name like ``../../x`` must not steer where pyverify writes). Falls back
    to the first 12 hex digits of the instance's SHA-256 when nothing is left.
    """
    stem = "".join(
        char if char.isascii() and (char.isalnum() or char in "._-") else "_" for char in name
    )[:80].lstrip(".")
    return stem or sha256[:12]


def require_routing(instance: Instance, path: str | Path = "<instance>") -> tuple[int, ...]:
    """The instance's own routing, or a UserError if it gives none."""
    if instance.routing is None:
        raise located(
            path,
            "requests[*].host",
            "this instance gives no routing: choose a routing policy with --routing",
        )
    return instance.routing


__all__ = [
    "Chain",
    "INSTANCE_FORMAT",
    "Instance",
    "PrefixClosure",
    "PrefixViolation",
    "MAX_BLOCK_SIZE_TOKENS",
    "MAX_HOSTS",
    "ROOT",
    "check_block_size_tokens",
    "check_host_id",
    "check_instance_name",
    "UserError",
    "canonical_json",
    "distinct_blocks",
    "first_prefix_violation",
    "instance_from_json",
    "instance_sha256",
    "load_instance",
    "parent_map",
    "prefix_tree",
    "read_json",
    "require_routing",
    "safe_file_stem",
    "validate_schema",
]
