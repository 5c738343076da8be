"""RAGPulse traces (a university RAG Q&A service; github.com/flashserve/RAGPulse, arXiv:2511.12979), JSONL.

The trace (``data/0_trace.jsonl``) is one JSON object per line, as the
repository's README shows::

    {"timestamp": "27", "input_length": 3861, "output_length": 127,
     "hash_ids": {"sys_prompt": [8325, 8326, 11575], "passages_ids": [6123, 7239],
                  "history": [15215], "web_search": [20319, 20320], "user_input": [23648]},
     "session_id": "1758081660427-xa8rbsd2uco1"}

Unlike Mooncake's, these ids name **content chunks**, not prefixes: id 6123 is
one retrieved passage chunk wherever it appears, and the side files give each
chunk's token length. A prefix cache reuses a block only when everything
before it is equal too, so pyverify makes **one chain per request**: the
request's chunks in component order, each block naming the whole sequence of
chunks up to it (block ids are assigned 0, 1, 2, ... to distinct prefixes in
order of first appearance). Two requests share a block exactly when they share
the chunks before it and the chunk itself.

* The component order is ``sys_prompt, passages_ids, history, web_search,
  user_input`` (the order the README lists them in ``input_length``), or
  ``--rag-order A,B,...``. A component the record does not give, or gives
  empty, contributes nothing; a component the order does not name is an error
  (name it in ``--rag-order`` to keep it).
* ``timestamp``: seconds from the trace's start (12:00:00), written as a JSON
  string of digits in the released file (``"27"``) or as a number; stored as
  ``arrival_ms`` (times 1000).
* ``session_id`` (a string): the request's ``route_key`` (``--routing
  route-key`` keeps a conversation on one host).
* Token lengths: the side files ``1_sys_prompt.jsonl``, ``2_passages.jsonl``,
  ``3_history.jsonl``, ``4_user_input.jsonl``, ``5_web_search.jsonl`` hold one
  object per line, a chunk id and its ``token_length``
  (``{"sys_prompt_id": 8302, "token_length": 512}``; the repository's
  ``preprocess_data.py`` reads the first value as the id and the second as the
  length). Give them with ``--rag-lengths FILE`` (repeatable): every block then
  weighs its chunk's tokens (``block_tokens``), and ``block_size_tokens`` is
  the largest chunk's length (a chunk is one cache slot; the GiB conversions
  count each slot at that size). Without them, blocks are counted but not
  weighed (no ``block_size_tokens``: no token figures).
"""

from __future__ import annotations

from typing import Any

from pyverify.errors import UserError, located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.model import MAX_BLOCK_SIZE_TOKENS, Instance
from pyverify.inputs.records import (
    MAX_BLOCK_ID,
    ImportOptions,
    TraceBuilder,
    is_int,
    is_number,
    optional_count,
    optional_text,
)
from pyverify.inputs.stream import Input, open_source

#: The components of a request, in the default order.
RAG_COMPONENTS = ("sys_prompt", "passages_ids", "history", "web_search", "user_input")

#: Longest session id kept as a route key.
MAX_SESSION_CHARS = 256


def check_order(order: tuple[str, ...] | None) -> tuple[str, ...]:
    """``--rag-order`` as a tuple of distinct, non-empty component names (default :data:`RAG_COMPONENTS`)."""
    if order is None:
        return RAG_COMPONENTS
    if not order or any(not name for name in order):
        raise UserError(
            "--rag-order: expected component names separated by commas, e.g. "
            + ",".join(RAG_COMPONENTS)
        )
    repeated = sorted({name for name in order if order.count(name) > 1})
    if repeated:
        raise UserError(f"--rag-order: {repeated[0]!r} is named twice")
    return order


def read_lengths(paths: tuple[str, ...]) -> dict[int, int]:
    """The chunk token lengths of RAGPulse side files (module docstring), one line of error at the first bad line."""
    lengths: dict[int, int] = {}
    where_from: dict[int, str] = {}
    for path in paths:
        with open_source(path) as source:
            shown = source.display
            for line, where, data in iter_objects(source.handle, shown):
                if "token_length" not in data:
                    raise located(
                        shown,
                        where,
                        "missing field 'token_length' (a RAGPulse side file: a chunk id and its token_length)",
                    )
                others = [key for key in data if key != "token_length"]
                if len(others) != 1:
                    raise located(
                        shown,
                        where,
                        f"expected one chunk id field beside 'token_length', got {len(others)}",
                    )
                key = others[0]
                chunk, tokens = data[key], data["token_length"]
                if not (is_int(chunk) and 0 <= chunk <= MAX_BLOCK_ID):
                    raise located(
                        shown,
                        f"{where}.{key}",
                        f"expected a chunk id from 0 to 2**63-1, got {chunk!r}",
                    )
                if not (is_int(tokens) and 1 <= tokens <= MAX_BLOCK_SIZE_TOKENS):
                    raise located(
                        shown,
                        f"{where}.token_length",
                        f"expected a whole number of tokens from 1 to {MAX_BLOCK_SIZE_TOKENS}, got {tokens!r}",
                    )
                known = lengths.setdefault(chunk, tokens)
                if known != tokens:
                    raise located(
                        shown,
                        f"{where}.token_length",
                        f"chunk {chunk} has {tokens} tokens here but {known} in {where_from[chunk]}",
                    )
                where_from.setdefault(chunk, f"{shown} {where}")
    return lengths


def _seconds(data: dict[str, Any], shown: str, where: str) -> float | int | None:
    value = data.get("timestamp")
    if value is None:
        return None
    if isinstance(value, str):  # the released file writes "27"
        text = value.strip()
        try:
            number = float(text) if len(text) <= 32 else None
        except ValueError:
            number = None
        if (
            number is None
            or not text
            or not all(char.isdigit() or char in ".eE+-" for char in text)
        ):
            raise located(
                shown,
                f"{where}.timestamp",
                f"expected seconds as a number or a string of digits, got {value[:40]!r}",
            )
        value = (
            int(number)
            if number.is_integer() and "." not in text and "e" not in text.lower()
            else number
        )
    if not (is_number(value) and 0 <= value <= 1e15):
        raise located(
            shown, f"{where}.timestamp", f"expected a non-negative number of seconds, got {value!r}"
        )
    return value


def read_ragpulse(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    """Read an opened RAGPulse trace (module docstring); a one-line error at the first bad line."""
    from pyverify.inputs.bailian import seconds_to_ms

    shown = source.display
    order = check_order(options.rag_order)
    lengths = read_lengths(options.rag_lengths) if options.rag_lengths else None
    builder = TraceBuilder(shown, options.allow_unsorted, options.warn, options.progress)
    prefix_ids: dict[tuple[int, int], int] = {}
    largest = 0
    for line, where, data in iter_objects(source.handle, shown):
        if "hash_ids" not in data:
            raise located(shown, where, "missing field 'hash_ids'")
        parts = data["hash_ids"]
        if not isinstance(parts, dict):
            raise located(
                shown,
                f"{where}.hash_ids",
                f"expected an object of components ({', '.join(order)}), got {type(parts).__name__}",
            )
        unknown = [key for key in parts if key not in order]
        if unknown:
            raise located(
                shown,
                f"{where}.hash_ids.{unknown[0][:40]}",
                f"a component the order does not name (order: {','.join(order)}); name it in --rag-order to keep it",
            )
        chain: list[int] = []
        weights: list[int] = []
        parent = -1
        for component in order:
            chunks = parts.get(component)
            if chunks is None:
                continue
            if not isinstance(chunks, list):
                raise located(
                    shown,
                    f"{where}.hash_ids.{component}",
                    f"expected a list of chunk ids, got {type(chunks).__name__}",
                )
            for position, chunk in enumerate(chunks):
                field = f"{where}.hash_ids.{component}[{position}]"
                if not (is_int(chunk) and 0 <= chunk <= MAX_BLOCK_ID):
                    raise located(
                        shown, field, f"expected a chunk id from 0 to 2**63-1, got {chunk!r}"
                    )
                if lengths is not None:
                    if chunk not in lengths:
                        raise located(
                            shown,
                            field,
                            f"chunk {chunk} has no token_length in the --rag-lengths files",
                        )
                    weights.append(lengths[chunk])
                parent = prefix_ids.setdefault((parent, chunk), len(prefix_ids))
                chain.append(parent)
        if not chain:
            raise located(
                shown,
                f"{where}.hash_ids",
                "no chunk in any component: a request has at least one block",
            )
        seconds = _seconds(data, shown, where)
        input_length = optional_count(data, "input_length", shown, where)
        output_length = optional_count(data, "output_length", shown, where)
        session = optional_text(data, "session_id", shown, where)
        if session is not None and len(session) > MAX_SESSION_CHARS:
            raise located(
                shown, f"{where}.session_id", f"longer than {MAX_SESSION_CHARS} characters"
            )
        builder.prefix_violation(
            chain
        )  # prefix-closed by construction; kept in the closure like every reader's chains
        builder.add(
            line,
            tuple(chain),
            None if seconds is None else seconds_to_ms(seconds),
            input_length,
            output_length,
            route_key=session,
        )
        if lengths is not None:
            builder.extra[-1]["block_tokens"] = weights
            largest = max(largest, max(weights))
    instance = builder.instance(
        name=options.name or source.stem,
        fleet_size=1 if options.hosts is None else options.hosts,
        description=f"Imported from the RAGPulse trace {source.label} ({len(builder.chains)} requests, "
        f"components in the order {','.join(order)}, each block a chunk and everything before it).",
        source=f"ragpulse-jsonl:{source.label}",
        block_size_tokens=largest if lengths is not None else None,
    )
    notes = [
        f"one chain per request: components in the order {','.join(order)} (--rag-order to change), "
        "each block named by the chunks up to it; timestamps are seconds, kept as arrival_ms"
    ]
    if lengths is None:
        notes.append(
            "no --rag-lengths side files: blocks are counted, not weighed in tokens (no block size)"
        )
    else:
        notes.append(
            f"block tokens from {len(options.rag_lengths)} side file(s); block size {largest} tokens (the largest chunk)"
        )
    return instance, notes


__all__ = ["RAG_COMPONENTS", "check_order", "read_lengths", "read_ragpulse"]
