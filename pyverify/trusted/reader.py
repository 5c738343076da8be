"""The trusted checker's own reader: short, strict, stdlib ``json`` and NumPy only.

``verify`` reads the instance a certificate names with this module, never with
:mod:`pyverify.inputs` (eleven formats, fast byte parsers, pyarrow): a fault in a fast parser that
misreads an id must not be read the same way by ``certify`` and by ``verify``. It reads two forms:

* a ``pyverify.instance/1`` document, checked field by field by the rules of
  ``pyverify/schemas/instance.schema.json`` and of :func:`pyverify.inputs.model.instance_from_json`
  (routing all or none, hosts in range, prefix closure);
* a Mooncake JSONL trace (``hash_ids``; optional ``timestamp``, ``input_length``,
  ``output_length``, ``block_size``, ``block_tokens``), as :mod:`pyverify.inputs.mooncake` reads it.

Any other input reaches the checker as the canonical instance ``certify`` writes beside the
certificate. JSON is parsed strictly: duplicate keys, ``NaN``, ``Infinity``, lone surrogates and
nesting too deep are refused, each as one :class:`~pyverify.errors.UserError` naming the file, the
field and the reason. ``tests/robustness/test_trusted_reader.py`` holds what it reads equal to
:mod:`pyverify.inputs`' reading of each form.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import os
import stat
import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from pyverify.errors import UserError, located

INSTANCE_FORMAT = "pyverify.instance/1"
MAX_ID, MAX_HOSTS, MAX_BLOCK_SIZE, MAX_TOKEN_COUNT = 2**63 - 1, 65536, 1_048_576, 2**53
MOONCAKE_BLOCK_TOKENS = 512
#: Bounds on what is read (the environment variable every reader of pyverify obeys).
MAX_INPUT_ENV = "PYVERIFY_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES, MAX_LINE_BYTES = 4 << 30, 64 << 20
#: Fields of a format that shares ``hash_ids`` with Mooncake but reads otherwise (Qwen-Bailian).
NOT_MOONCAKE = frozenset(("chat_id", "parent_chat_id", "turn"))
REQUEST_FIELDS = (
    "route_key",
    "arrival_ms",
    "input_tokens",
    "output_tokens",
    "block_tokens",
    "labels",
)
#: How the checker says what it reads itself.
OWN_FORMATS = (
    f"the trusted checker reads only {INSTANCE_FORMAT} files and Mooncake JSONL traces "
    "itself; certify writes any other input's canonical instance beside the certificate "
    "(and 'pyverify trace import' converts one)"
)


@dataclass
class Instance:
    """What the checker reads of an instance: the fields of a ``pyverify.instance/1``, the chains
    as flat arrays (request ``t`` is ``ids[offsets[t]:offsets[t + 1]]``), and the columns the
    content digest covers (:mod:`pyverify.trusted.digest`)."""

    name: str
    fleet_size: int
    ids: np.ndarray
    offsets: np.ndarray
    routes: np.ndarray | None = None  # the host each request is routed to, if the instance says
    description: str = ""
    source: str = ""
    block_size_tokens: int | None = None
    extra: list[dict[str, Any]] = field(default_factory=list, repr=False)  # per request

    def __post_init__(self) -> None:
        def column(key: str) -> list[Any] | None:
            values = [item.get(key) for item in self.extra]
            return values if any(v is not None for v in values) else None

        def floats(values: list[Any] | None) -> np.ndarray | None:
            nan = float("nan")
            return None if values is None else np.array([nan if v is None else v for v in values])

        self.timestamps, self.input_tokens, self.output_tokens = (
            floats(column(key)) for key in ("arrival_ms", "input_tokens", "output_tokens")
        )
        self.route_keys, tokens = column("route_key"), column("block_tokens")
        self.block_tokens = None
        if tokens is not None:  # -1 for each block of a request that gives none
            lengths = np.diff(self.offsets).tolist()
            sizes = [[-1] * k if v is None else v for k, v in zip(lengths, tokens)]
            self.block_tokens = np.array(list(itertools.chain.from_iterable(sizes)), np.int64)

    @property
    def n_requests(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def chains(self) -> tuple[tuple[int, ...], ...]:
        flat, bounds = self.ids.tolist(), self.offsets.tolist()
        return tuple(tuple(flat[s:e]) for s, e in zip(bounds[:-1], bounds[1:]))

    @property
    def routing(self) -> tuple[int, ...] | None:  # as pyverify.inputs.model's Instance names it
        return None if self.routes is None else tuple(self.routes.tolist())

    @property
    def hosts(self) -> int:  # the fleet size, as pyverify.inputs.model's Instance names it
        return self.fleet_size

    def to_json(self) -> dict[str, Any]:
        """The ``pyverify.instance/1`` form, key for key as pyverify.inputs.model's."""
        data: dict[str, Any] = {"format": INSTANCE_FORMAT, "name": self.name}
        data.update({"description": self.description} if self.description else {})
        data.update({"source": self.source} if self.source else {})
        data["hosts"] = self.fleet_size
        if self.block_size_tokens is not None:
            data["block_size_tokens"] = self.block_size_tokens
        routing, extra = self.routing, self.extra or [{}] * self.n_requests
        data["requests"] = [
            {"blocks": list(chain), **({} if routing is None else {"host": routing[t]}), **extra[t]}
            for t, chain in enumerate(self.chains)
        ]
        return data


def canonical_sha256(instance: Instance) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8): ``instance.sha256``."""
    text = json.dumps(instance.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def flat(chains: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, offsets)`` of chains of block ids."""
    offsets = np.zeros(len(chains) + 1, dtype=np.int64)
    np.cumsum([len(chain) for chain in chains], out=offsets[1:])
    return np.fromiter(itertools.chain.from_iterable(chains), np.int64, int(offsets[-1])), offsets


# --- bytes and strict JSON ---------------------------------------------------------------------


def shown_path(path: str) -> str:
    return "<stdin>" if path == "-" else path


def max_input_bytes() -> int:
    raw = os.environ.get(MAX_INPUT_ENV, str(DEFAULT_MAX_INPUT_BYTES))
    if not raw.isdigit() or int(raw) < 1:
        raise UserError(f"{MAX_INPUT_ENV}: expected a positive whole number of bytes, got {raw!r}")
    return int(raw)


def opener(path: str) -> Callable[[], io.BufferedIOBase]:
    """A function that opens ``path`` for reading from its start, gzip decompressed by its magic
    bytes. Standard input (``-``) or a pipe is read once, bounded, so it can be opened twice."""
    if path != "-":
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise located(path, None, "no such file") from None
        except OSError as error:
            raise located(path, None, f"cannot read: {error.strerror or error}") from None
        if stat.S_ISDIR(mode):
            raise located(path, None, "is a directory, expected a file")
        if not stat.S_ISREG(mode) and not stat.S_ISFIFO(mode):
            raise located(path, None, "is a device, not a file")
    if path == "-" or stat.S_ISFIFO(mode):  # a stream is read once, so that it can be opened twice
        with nullcontext(sys.stdin.buffer) if path == "-" else open(path, "rb") as stream:
            data = bounded(stream, path)

        def raw() -> io.BufferedIOBase:
            return io.BufferedReader(io.BytesIO(data))
    else:

        def raw() -> io.BufferedIOBase:
            return open(path, "rb")

    def opened() -> io.BufferedIOBase:
        handle = raw()
        if handle.peek(2)[:2] == b"\x1f\x8b":
            return io.BufferedReader(gzip.GzipFile(fileobj=handle))  # type: ignore[arg-type]
        return handle

    return opened


def bounded(handle, path: str, limit: int | None = None) -> bytes:
    """All of ``handle``, or one line of error past ``limit`` bytes (decompressed)."""
    limit = max_input_bytes() if limit is None else limit
    try:
        data = handle.read(limit + 1)
    except (OSError, EOFError) as error:
        raise located(shown_path(path), None, f"cannot read: {error}") from None
    if len(data) > limit:
        raise located(
            shown_path(path),
            None,
            f"larger than the input limit of {limit} bytes (set {MAX_INPUT_ENV} to change it)",
        )
    return data


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) < len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {twice!r} in one object")
    return result


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _real(literal: str) -> float:
    if float(literal) in (float("inf"), float("-inf")):
        raise ValueError(f"number {literal[:40]} is too large for a double")
    return float(literal)


DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_real)


def parse(data: bytes, path: str, where: str | None = None) -> Any:
    """One JSON value, strictly (see the module docstring); errors name ``path`` and ``where``."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        value = DECODER.decode(text)
        if "\\u" in text:  # only an escape makes a lone surrogate: encoding it raises
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text: {error.reason} at byte {error.start}"
    except UnicodeEncodeError:
        reason = "a string holds a lone UTF-16 surrogate, which is not text"
    except json.JSONDecodeError as error:
        reason = f"malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"
    except RecursionError:
        reason = "JSON nested too deeply to read"
    except ValueError as error:
        reason = f"cannot read a JSON value: {error}"
    raise located(shown_path(path), where, reason)


def read_document(path: str) -> Any:
    """The one JSON document in ``path``, read with the input bound."""
    with opener(path)() as handle:
        return parse(bounded(handle, path), path)


def records(open_input: Callable[[], io.BufferedIOBase], path: str) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of JSON lines, each line bounded."""
    total, limit = 0, max_input_bytes()
    with open_input() as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            total += len(raw)
            if len(raw) > MAX_LINE_BYTES or total > limit:
                raise located(
                    shown_path(path),
                    f"line {number}",
                    f"longer than {MAX_LINE_BYTES} "
                    f"bytes, or the input past its limit of {limit} bytes",
                )
            if raw.strip():
                data = parse(raw, path, f"line {number}")
                if not isinstance(data, dict):
                    raise located(
                        shown_path(path),
                        f"line {number}",
                        f"expected a JSON object, got {type(data).__name__}",
                    )
                yield number, data


# --- the two forms -------------------------------------------------------------------------------


def is_int(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def is_number(value: Any, low: float, high: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


def first_violation(ids: np.ndarray, offsets: np.ndarray) -> tuple[int, int, str] | None:
    """``(request, position, reason)`` where a block id first follows another parent than at its
    first reference (the root, -1, at the start of a chain): the first break of prefix closure."""
    parents = np.concatenate(([-1], ids[:-1]))
    parents[offsets[:-1]] = -1
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    expected = parents[first][inverse.ravel()]
    wrong = np.flatnonzero(parents != expected)
    if not wrong.size:
        return None
    p = int(wrong[0])
    t = int(np.searchsorted(offsets, p, side="right")) - 1
    before, now = (
        "the root" if parent == -1 else f"block {parent}" for parent in (expected[p], parents[p])
    )
    reason = f"not prefix-closed: block {ids[p]} follows {now} here but followed {before} earlier"
    return t, p - int(offsets[t]), reason


def ids_ok(blocks: Any) -> bool:
    """A non-empty list of integers from 0 to 2**63 - 1 (at C speed: no loop in Python)."""
    return (
        isinstance(blocks, list)
        and bool(blocks)
        and set(map(type, blocks)) == {int}
        and min(blocks) >= 0
        and max(blocks) <= MAX_ID
    )


def _label_ok(key: Any, value: Any) -> bool:
    text = isinstance(value, str) and len(value) <= 256
    return len(key) <= 64 and (text or is_int(value, -MAX_ID - 1, MAX_ID))


#: Each optional field of a request, and the test its value must pass (the instance schema's rule).
REQUEST_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "route_key": (lambda v: isinstance(v, str), "a string"),
    "arrival_ms": (lambda v: is_number(v, 0, 1e18), "a number from 0 to 1e18"),
    "input_tokens": (lambda v: is_int(v, 0, MAX_TOKEN_COUNT), "a token count from 0 to 2**53"),
    "output_tokens": (lambda v: is_int(v, 0, MAX_TOKEN_COUNT), "a token count from 0 to 2**53"),
    "block_tokens": (
        lambda v: isinstance(v, list) and bool(v) and all(is_int(t, 1, MAX_BLOCK_SIZE) for t in v),
        f"a non-empty list of block sizes from 1 to {MAX_BLOCK_SIZE}",
    ),
    "labels": (
        lambda v: (
            isinstance(v, dict) and len(v) <= 16 and all(_label_ok(k, x) for k, x in v.items())
        ),
        "at most 16 labels, each a short string or an integer",
    ),
}


def needs(path: str) -> Callable[[bool, str | None, str], None]:
    """``need(ok, where, reason)``: one located error about ``path`` unless ``ok``."""

    def need(ok: bool, where: str | None, reason: str) -> None:
        if not ok:
            raise located(shown_path(path), where, reason)

    return need


def instance_from_document(data: Any, path: str) -> Instance:
    """A ``pyverify.instance/1`` document as an :class:`Instance`, checked field by field."""
    need = needs(path)
    need(isinstance(data, dict), None, "not a JSON object")
    need(data.get("format") == INSTANCE_FORMAT, "format", f"expected {INSTANCE_FORMAT!r}")
    unknown = sorted(
        set(data)
        - {"format", "name", "description", "source", "hosts", "block_size_tokens", "requests"}
    )
    need(not unknown, unknown[0] if unknown else None, "not a field of an instance")
    name = data.get("name")
    need(
        isinstance(name, str)
        and 1 <= len(name) <= 200
        and name not in (".", "..")
        and not any(c in "/\\" or ord(c) < 0x20 for c in name),
        "name",
        f"{name!r} is not an instance name",
    )
    for key in ("description", "source"):
        need(isinstance(data.get(key, ""), str), key, "expected a string")
    hosts, size, requests = data.get("hosts"), data.get("block_size_tokens"), data.get("requests")
    need(
        is_int(hosts, 1, MAX_HOSTS),
        "hosts",
        f"expected an integer from 1 to {MAX_HOSTS}, got {hosts!r}",
    )
    need(
        size is None or is_int(size, 1, MAX_BLOCK_SIZE),
        "block_size_tokens",
        f"{size!r} is not a block size",
    )
    need(
        isinstance(requests, list) and bool(requests),
        "requests",
        "expected a non-empty list of requests",
    )
    chains, routing, extra = [], [], []
    for index, request in enumerate(requests):
        at = f"requests[{index}]"
        need(isinstance(request, dict), at, "expected an object")
        unknown = sorted(set(request) - {"blocks", "host", *REQUEST_FIELDS})
        need(not unknown, f"{at}.{unknown[0]}" if unknown else at, "not a field of a request")
        blocks = request.get("blocks")
        need(
            ids_ok(blocks),
            f"{at}.blocks",
            f"expected a non-empty list of block ids from 0 to {MAX_ID}",
        )
        chains.append(blocks)
        if "host" in request:
            need(
                is_int(request["host"], 0, hosts - 1),
                f"{at}.host",
                f"host {request['host']!r} out of range: the fleet has hosts 0..{hosts - 1}",
            )
            routing.append(request["host"])
        for key in REQUEST_FIELDS:
            test, wanted = REQUEST_RULES[key]
            need(key not in request or test(request[key]), f"{at}.{key}", f"expected {wanted}")
        extra.append({key: request[key] for key in REQUEST_FIELDS if key in request})
    need(
        len(routing) in (0, len(requests)),
        "requests[*].host",
        "some requests give a host and others not: give every request a host or none",
    )
    ids, offsets = flat(chains)
    violation = first_violation(ids, offsets)
    if violation is not None:
        need(False, f"requests[{violation[0]}].blocks[{violation[1]}]", violation[2])
    routes = np.array(routing, dtype=np.int64) if routing else None
    description, source = data.get("description", ""), data.get("source", "")
    return Instance(name, hosts, ids, offsets, routes, description, source, size, extra)


def read_mooncake(
    open_input: Callable[[], io.BufferedIOBase],
    path: str,
    allow_unsorted: bool = False,
    source_block_size: int | None = None,
) -> Instance:
    """A Mooncake JSONL trace, as :func:`pyverify.inputs.mooncake.read_mooncake` reads it."""
    need, chains, extra, lines = needs(path), [], [], []
    given, given_line, last_time, last_line = None, 0, None, 0
    for number, data in records(open_input, path):  # the messages are made only on a failure
        at = f"line {number}"
        hash_ids = data.get("hash_ids")
        if not isinstance(hash_ids, list) or not NOT_MOONCAKE.isdisjoint(data):
            need(
                False,
                at,
                f"not a Mooncake JSONL request (a list 'hash_ids', no chat_id, parent_chat_id or turn): {OWN_FORMATS}",
            )
        if not hash_ids:
            need(False, f"{at}.hash_ids", "empty: a request has at least one block")
        if not ids_ok(hash_ids):
            i, block = next((i, b) for i, b in enumerate(hash_ids) if not is_int(b, 0, MAX_ID))
            need(
                False,
                f"{at}.hash_ids[{i}]",
                f"block id {block!r} is not an integer from 0 to 2**63-1",
            )
        time = data.get("timestamp")
        item: dict[str, Any] = {} if time is None else {"arrival_ms": time}
        if time is not None and not is_number(time, 0, 1e18):
            need(False, f"{at}.timestamp", f"expected a non-negative number, got {time!r}")
        for key, name in (("input_length", "input_tokens"), ("output_length", "output_tokens")):
            value = data.get(key)
            if value is not None and not is_int(value, 0, MAX_TOKEN_COUNT):
                need(
                    not is_int(value, 0, float("inf")),
                    f"{at}.{key}",
                    f"{value} tokens is more than 2**53, the most pyverify holds exactly",
                )
                need(False, f"{at}.{key}", f"expected a non-negative integer, got {value!r}")
            item.update({} if value is None else {name: value})
        size = data.get("block_size")
        if size is not None:
            if not is_int(size, 1, MAX_BLOCK_SIZE):
                need(False, f"{at}.block_size", f"{size!r} is not a block size")
            if given is None and source_block_size is not None and size != source_block_size:
                need(
                    False,
                    f"{at}.block_size",
                    f"{size} tokens, but --source-block-size says {source_block_size}",
                )
            if given is not None and size != given:
                need(
                    False,
                    f"{at}.block_size",
                    f"{size} tokens, but line {given_line} says {given}: a trace has one block size",
                )
            given, given_line = (size, number) if given is None else (given, given_line)
        tokens = data.get("block_tokens")
        if tokens is not None:
            if not (
                isinstance(tokens, list)
                and len(tokens) == len(hash_ids)
                and all(is_int(t, 1, MAX_BLOCK_SIZE) for t in tokens)
            ):
                need(
                    False,
                    f"{at}.block_tokens",
                    f"expected {len(hash_ids)} block sizes, one per block",
                )
            item["block_tokens"] = list(tokens)
        if time is not None:
            if last_time is not None and time < last_time and not allow_unsorted:
                need(
                    False,
                    f"{at}.timestamp",
                    f"timestamp {time} is earlier than {last_time} on line {last_line}: "
                    "the file is not in time order (or pass --allow-unsorted)",
                )
            last_time, last_line = time, number
        chains.append(hash_ids)
        extra.append(item)
        lines.append(number)
    need(bool(chains), None, "empty input: no requests")
    ids, offsets = flat(chains)
    del chains  # a list of lists is some ten times the arrays
    violation = first_violation(ids, offsets)
    if violation is not None:
        need(False, f"line {lines[violation[0]]}.hash_ids[{violation[1]}]", violation[2])
    label = "standard input" if path == "-" else Path(path).name
    note = (
        ""
        if given is None and not source_block_size
        else f", blocks of {given} tokens (the records' block_size)"
        if given is not None
        else f", blocks of {source_block_size} tokens (--source-block-size)"
    )
    size = given if given is not None else source_block_size or MOONCAKE_BLOCK_TOKENS
    description = f"Imported from the Mooncake JSONL trace {label} ({len(lines)} requests{note})."
    source = f"mooncake-jsonl:{label}"
    return Instance(stem_of(path), 1, ids, offsets, None, description, source, size, extra)


def stem_of(path: str) -> str:
    """The instance name a trace gets (as ``pyverify.inputs.stream.stem_of`` names it)."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    name = name[:-3] if name.lower().endswith(".gz") else name
    stem = Path(name).stem or name
    stem = "".join("_" if c in "/\\" or not c.isprintable() else c for c in stem)[:200]
    return stem if stem and stem not in (".", "..") else "input"


def is_document(open_input: Callable[[], io.BufferedIOBase], path: str) -> bool:
    """Whether the input starts as a JSON object holding ``"format"`` (or spread over several
    lines): an instance, not JSON lines. Neither JSON nor JSON lines: one line of error."""
    with open_input() as handle:
        chunk = handle.read(1 << 16)
    head = chunk.removeprefix(b"\xef\xbb\xbf").lstrip()  # a UTF-8 byte-order mark is not content
    if head[:1] not in (b"{", b""):
        raise located(shown_path(path), None, f"neither JSON nor JSON lines: {OWN_FORMATS}")
    first, newline, _ = head.partition(b"\n")
    if not newline and len(chunk) == 1 << 16:  # a first line longer than the head
        return first.startswith(b'{"format"')
    try:
        return bool(first) and "format" in json.loads(first)
    except (ValueError, RecursionError):  # an object spread over several lines: a document
        return True


def read_instance(path: str, allow_unsorted: bool = False, source_block_size: int | None = None):
    """``(instance, form)``: ``path`` read as a ``pyverify.instance/1`` or Mooncake JSONL."""
    open_input = opener(path)
    if not is_document(open_input, path):
        return read_mooncake(open_input, path, allow_unsorted, source_block_size), "Mooncake JSONL"
    if source_block_size is not None:
        raise UserError(
            f"--source-block-size: only for hash-id traces; {shown_path(path)} is an instance"
        )
    with open_input() as handle:
        data = parse(bounded(handle, path), path)
    return instance_from_document(data, path), INSTANCE_FORMAT
