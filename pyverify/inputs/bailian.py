"""Alibaba's Qwen-Bailian usage traces ("KVCache in the Wild", USENIX ATC'25), JSONL, into the instance model.

The released traces (``alibaba-edu/qwen-bailian-usagetraces-anon`` on GitHub:
``qwen_traceA_blksz_16.jsonl``, ``qwen_traceB_blksz_16.jsonl``,
``qwen_coder_blksz_16.jsonl``, ``qwen_thinking_blksz_16.jsonl``) are one JSON
object per line, as NVIDIA's AIPerf documents them
(https://docs.nvidia.com/aiperf/tutorials/datasets-inputs/profile-with-bailian-traces)::

    {"chat_id": 160, "parent_chat_id": 159, "timestamp": 62.5, "input_length": 400,
     "output_length": 80, "type": "text", "turn": 2, "hash_ids": [...]}

* ``hash_ids``: salted SipHash block ids, one per **16-token** block, each
  naming its whole prefix (as Mooncake's do); checked exactly as Mooncake's
  (:func:`~pyverify.inputs.mooncake.check_hash_ids`), prefix closure included;
* ``timestamp``: arrival in **seconds** from the trace's start; stored as
  ``arrival_ms`` (times 1000), so times read as Mooncake's do; time order is
  checked as for every trace;
* ``chat_id`` (an integer), ``parent_chat_id`` (the previous turn's chat_id,
  -1 for a conversation's first), ``turn`` (1 for a first turn), ``type``
  (``text``, ``search``, ``image``, ``file``): kept per request in
  ``labels``, for grouping and conversation structure. The conversation (the
  root chat_id, following parent_chat_id back) is also the request's
  ``route_key`` (``conversation-<root chat_id>``), so ``--routing route-key``
  sends each conversation to one host. A parent not seen earlier in the file
  (the trace cut off before it) roots its conversation at itself;
* ``input_length``/``output_length``: non-negative integers, as Mooncake's.

The block size is 16 tokens unless ``--source-block-size`` says otherwise
(or the records give ``block_size``; :class:`~pyverify.inputs.mooncake.BlockSizeRule`).
"""

from __future__ import annotations

from typing import Any

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.model import Instance, check_block_size_tokens
from pyverify.inputs.mooncake import BlockSizeRule, check_hash_ids
from pyverify.inputs.records import (
    ImportOptions,
    TraceBuilder,
    is_int,
    optional_count,
    optional_text,
    optional_timestamp,
)
from pyverify.inputs.stream import Input

#: Tokens per block of the released traces (their file names say ``blksz_16``).
BAILIAN_BLOCK_TOKENS = 16

#: The fields that say a hash-id record is a Qwen-Bailian request.
BAILIAN_FIELDS = ("chat_id", "parent_chat_id", "turn")

#: Largest chat id accepted (ids are kept as JSON integers in labels).
MAX_CHAT_ID = 2**63 - 1

#: Longest ``type`` label kept.
MAX_TYPE_CHARS = 256


def _chat_id(data: dict[str, Any], key: str, shown: str, where: str, lowest: int) -> int | None:
    value = data.get(key)
    if value is not None and not (is_int(value) and lowest <= value <= MAX_CHAT_ID):
        raise located(
            shown, f"{where}.{key}", f"expected an integer from {lowest} to 2**63-1, got {value!r}"
        )
    return value


def seconds_to_ms(seconds: float | int) -> float | int:
    """Seconds as milliseconds, exact for whole results (61.114 s is 61114 ms, not 61113.999...)."""
    ms = round(seconds * 1000, 6)
    return int(ms) if float(ms).is_integer() else ms


def read_bailian(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    """Read an opened Qwen-Bailian JSONL trace (module docstring); a one-line error at the first bad line."""
    shown = source.display
    builder = TraceBuilder(shown, options.allow_unsorted, options.warn, options.progress)
    sizes = BlockSizeRule(shown, options.source_block_size, BAILIAN_BLOCK_TOKENS)
    root_of: dict[int, int] = {}
    orphans = 0
    for line, where, data in iter_objects(source.handle, shown):
        chain = tuple(check_hash_ids(data, shown, where))
        seconds = optional_timestamp(data, shown, where, ms_per_unit=1000)  # bounded as ms
        input_length = optional_count(data, "input_length", shown, where)
        output_length = optional_count(data, "output_length", shown, where)
        chat = _chat_id(data, "chat_id", shown, where, 0)
        parent = _chat_id(data, "parent_chat_id", shown, where, -1)
        turn = data.get("turn")
        if turn is not None and not (is_int(turn) and 1 <= turn <= MAX_CHAT_ID):
            raise located(shown, f"{where}.turn", f"expected a positive integer, got {turn!r}")
        kind = optional_text(data, "type", shown, where)
        if kind is not None and len(kind) > MAX_TYPE_CHARS:
            raise located(shown, f"{where}.type", f"longer than {MAX_TYPE_CHARS} characters")
        if data.get("block_size") is not None:
            sizes.see(
                line, check_block_size_tokens(data["block_size"], shown, f"{where}.block_size")
            )
        violation = builder.prefix_violation(chain)
        if violation is not None:
            raise located(shown, f"{where}.hash_ids[{violation[0]}]", violation[1])
        route_key = None
        if chat is not None:
            if parent is None or parent == -1:
                root = chat
            elif parent in root_of:
                root = root_of[parent]
            else:
                root, orphans = parent, orphans + 1
            root_of[chat] = root
            route_key = f"conversation-{root}"
        labels = {
            key: value
            for key, value in (
                ("chat_id", chat),
                ("parent_chat_id", parent),
                ("type", kind),
                ("turn", turn),
            )
            if value is not None
        }
        builder.add(
            line,
            chain,
            None if seconds is None else seconds_to_ms(seconds),
            input_length,
            output_length,
            route_key=route_key,
            labels=labels,
        )
    instance = builder.instance(
        name=options.name or source.stem,
        fleet_size=1 if options.hosts is None else options.hosts,
        description=f"Imported from the Qwen-Bailian JSONL trace {source.label} ({len(builder.chains)} requests, "
        f"blocks of {sizes.size} tokens, timestamps in seconds stored as arrival_ms).",
        source=f"qwen-bailian-jsonl:{source.label}",
        block_size_tokens=sizes.size,
    )
    notes = [
        f"timestamps are seconds (Qwen-Bailian's unit), kept as arrival_ms; blocks of {sizes.size} tokens; "
        "chat_id, parent_chat_id, type and turn kept as labels, each conversation its route_key"
    ]
    if orphans:
        notes.append(
            f"{orphans} requests name a parent_chat_id not seen earlier in the file: their conversations start at that parent"
        )
    return instance, notes


__all__ = ["BAILIAN_BLOCK_TOKENS", "BAILIAN_FIELDS", "read_bailian", "seconds_to_ms"]
