"""The trusted checker's own reader: short, strict, stdlib only.

``verify`` reads the instance a certificate names with this module, not with
:mod:`pyverify.inputs` (eleven formats, fast byte parsers, pyarrow): a fault in
a fast parser that misreads an id must not be read the same way by ``certify``
and by ``verify``. It reads the two forms a certificate can name:

* a ``pyverify.instance/1`` JSON document: the rules of
  ``pyverify/schemas/instance.schema.json``, checked here field by field, and
  those :func:`pyverify.inputs.model.instance_from_json` adds (routing all or
  none, hosts in range, prefix closure);
* a Mooncake JSONL trace (``hash_ids``; optional ``timestamp``,
  ``input_length``, ``output_length``; kvcache-simulator's ``block_size`` and
  ``block_tokens``), read as :mod:`pyverify.inputs.mooncake` reads it: one
  block size per trace, time order unless ``allow_unsorted``, prefix closure.

Every other input (Parquet, CSV, chat logs, re-blocked traces, ...) reaches the
checker as the canonical instance ``certify`` writes beside the certificate, in
the first form. JSON is parsed strictly: duplicate keys, ``NaN`` and
``Infinity``, lone surrogates and nesting too deep for Python are refused.
Every error is one :class:`~pyverify.errors.UserError` naming the file, the
field and the reason. ``tests/robustness/test_trusted_reader.py`` holds the
content digest of what it reads equal to :mod:`pyverify.inputs`' on each form.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from pyverify.errors import UserError, located

INSTANCE_FORMAT = "pyverify.instance/1"
MAX_ID, MAX_HOSTS, MAX_BLOCK_SIZE, MAX_TOKEN_COUNT = 2**63 - 1, 65536, 1_048_576, 2**53
MOONCAKE_BLOCK_TOKENS = 512
#: Bounds on what is read (the environment variable every reader of pyverify obeys).
MAX_INPUT_ENV = "PYVERIFY_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES, MAX_LINE_BYTES = 4 << 30, 64 << 20
#: Fields of a format that shares ``hash_ids`` with Mooncake but reads otherwise (Qwen-Bailian).
NOT_MOONCAKE = ("chat_id", "parent_chat_id", "turn")
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


@dataclass(frozen=True)
class Instance:
    """What the checker needs of an instance: the fields of a ``pyverify.instance/1``."""

    name: str
    hosts: int
    chains: tuple[tuple[int, ...], ...]
    routing: tuple[int, ...] | None = None
    description: str = ""
    source: str = ""
    block_size_tokens: int | None = None
    extra: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def n_requests(self) -> int:
        return len(self.chains)

    def to_json(self) -> dict[str, Any]:
        """The ``pyverify.instance/1`` form, key for key as pyverify.inputs.model's."""
        data: dict[str, Any] = {"format": INSTANCE_FORMAT, "name": self.name}
        data.update({"description": self.description} if self.description else {})
        data.update({"source": self.source} if self.source else {})
        data["hosts"] = self.hosts
        if self.block_size_tokens is not None:
            data["block_size_tokens"] = self.block_size_tokens
        data["requests"] = [
            {
                "blocks": list(chain),
                **({"host": self.routing[t]} if self.routing is not None else {}),
                **(self.extra[t] if self.extra else {}),
            }
            for t, chain in enumerate(self.chains)
        ]
        return data


def canonical_sha256(instance: Instance) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8): ``instance.sha256``."""
    import hashlib

    text = json.dumps(instance.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r} in one object")
        for text in [key, value] + (value if isinstance(value, list) else []):
            if isinstance(text, str):
                text.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, a ValueError
        result[key] = value
    return result


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _real(literal: str) -> float:
    if float(literal) in (float("inf"), float("-inf")):
        raise ValueError(f"number {literal[:40]} is too large for a double")
    return float(literal)


def parse(data: bytes, path: str, where: str | None = None) -> Any:
    """One JSON value, strictly (see the module docstring); errors name ``path`` and ``where``."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_real
        )
        if isinstance(value, str):
            value.encode("utf-8")
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


def first_violation(chains) -> tuple[int, int, str] | None:
    """``(request, position, reason)`` where a block id first gets a second parent."""
    parent_of: dict[int, int] = {}
    for index, chain in enumerate(chains):
        parent = -1
        for position, block in enumerate(chain):
            known = parent_of.setdefault(block, parent)
            if known != parent:
                before = "the root" if known == -1 else f"block {known}"
                now = "the root" if parent == -1 else f"block {parent}"
                return (
                    index,
                    position,
                    (
                        f"not prefix-closed: block {block} follows {now} here but "
                        f"followed {before} earlier"
                    ),
                )
            parent = block
    return None


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


def instance_from_document(data: Any, path: str) -> Instance:
    """A ``pyverify.instance/1`` document as an :class:`Instance`, checked field by field."""

    def need(ok: bool, where: str | None, reason: str) -> None:
        if not ok:
            raise located(shown_path(path), where, reason)

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
            isinstance(blocks, list) and bool(blocks) and all(is_int(b, 0, MAX_ID) for b in blocks),
            f"{at}.blocks",
            f"expected a non-empty list of block ids from 0 to {MAX_ID}",
        )
        chains.append(tuple(blocks))
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
    violation = first_violation(chains)
    if violation is not None:
        need(False, f"requests[{violation[0]}].blocks[{violation[1]}]", violation[2])
    return Instance(
        name,
        hosts,
        tuple(chains),
        tuple(routing) if routing else None,
        data.get("description", ""),
        data.get("source", ""),
        size,
        tuple(extra) if any(extra) else (),
    )


def read_mooncake(
    open_input: Callable[[], io.BufferedIOBase],
    path: str,
    allow_unsorted: bool = False,
    source_block_size: int | None = None,
) -> Instance:
    """A Mooncake JSONL trace, as :func:`pyverify.inputs.mooncake.read_mooncake` reads it."""
    shown = shown_path(path)
    chains, extra, lines = [], [], []
    given, given_line, last_time, last_line = None, 0, None, 0
    for number, data in records(open_input, path):
        at = f"line {number}"
        if any(key in data for key in NOT_MOONCAKE) or not isinstance(data.get("hash_ids"), list):
            raise located(
                shown,
                at,
                "not a Mooncake JSONL request (a list 'hash_ids', no chat_id, "
                f"parent_chat_id or turn): {OWN_FORMATS}",
            )
        hash_ids = data["hash_ids"]
        if not hash_ids:
            raise located(shown, f"{at}.hash_ids", "empty: a request has at least one block")
        for position, block in enumerate(hash_ids):
            if not is_int(block, 0, MAX_ID):
                raise located(
                    shown,
                    f"{at}.hash_ids[{position}]",
                    f"block id {block!r} is not an integer from 0 to 2**63-1",
                )
        time = data.get("timestamp")
        if time is not None and not is_number(time, 0, 1e18):
            raise located(shown, f"{at}.timestamp", f"expected a non-negative number, got {time!r}")
        item: dict[str, Any] = {} if time is None else {"arrival_ms": time}
        for key, name in (("input_length", "input_tokens"), ("output_length", "output_tokens")):
            value = data.get(key)
            if value is not None and not is_int(value, 0, float("inf")):
                raise located(
                    shown, f"{at}.{key}", f"expected a non-negative integer, got {value!r}"
                )
            if value is not None and value > MAX_TOKEN_COUNT:
                raise located(
                    shown,
                    f"{at}.{key}",
                    f"{value} tokens is more than 2**53, the most pyverify holds exactly",
                )
            item.update({} if value is None else {name: value})
        size = data.get("block_size")
        if size is not None:
            if not is_int(size, 1, MAX_BLOCK_SIZE):
                raise located(shown, f"{at}.block_size", f"{size!r} is not a block size")
            if given is None and source_block_size is not None and size != source_block_size:
                raise located(
                    shown,
                    f"{at}.block_size",
                    f"{size} tokens, but --source-block-size says {source_block_size}",
                )
            if given is not None and size != given:
                raise located(
                    shown,
                    f"{at}.block_size",
                    f"{size} tokens, but line {given_line} says {given}: a trace has "
                    "one block size",
                )
            given, given_line = (size, number) if given is None else (given, given_line)
        tokens = data.get("block_tokens")
        if tokens is not None:
            if not (
                isinstance(tokens, list)
                and len(tokens) == len(hash_ids)
                and all(is_int(t, 1, MAX_BLOCK_SIZE) for t in tokens)
            ):
                raise located(
                    shown,
                    f"{at}.block_tokens",
                    f"expected {len(hash_ids)} block sizes, one per block",
                )
            item["block_tokens"] = list(tokens)
        if time is not None:
            if last_time is not None and time < last_time and not allow_unsorted:
                raise located(
                    shown,
                    f"{at}.timestamp",
                    f"timestamp {time} is earlier than {last_time} on line {last_line}: "
                    "the file is not in time order (or pass --allow-unsorted)",
                )
            last_time, last_line = time, number
        chains.append(tuple(hash_ids))
        extra.append(item)
        lines.append(number)
    if not chains:
        raise located(shown, None, "empty input: no requests")
    violation = first_violation(chains)
    if violation is not None:
        raise located(shown, f"line {lines[violation[0]]}.hash_ids[{violation[1]}]", violation[2])
    label = "standard input" if path == "-" else Path(path).name
    note = (
        ""
        if given is None and not source_block_size
        else f", blocks of {given} tokens (the records' block_size)"
        if given is not None
        else f", blocks of {source_block_size} tokens (--source-block-size)"
    )
    size = given if given is not None else source_block_size or MOONCAKE_BLOCK_TOKENS
    return Instance(
        stem_of(path),
        1,
        tuple(chains),
        None,
        f"Imported from the Mooncake JSONL trace {label} ({len(chains)} requests{note}).",
        f"mooncake-jsonl:{label}",
        size,
        tuple(extra) if any(extra) else (),
    )


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


__all__ = [
    "INSTANCE_FORMAT",
    "Instance",
    "canonical_sha256",
    "instance_from_document",
    "parse",
    "read_document",
    "read_instance",
    "read_mooncake",
]
