"""Load whatever the user names as input, telling its format by content.

Every command calls :func:`load_input` (``validate`` and ``trace import`` call
:func:`load_described`, which also says what the file was), so every command
accepts the same inputs with the same one-line errors:

* a path, or ``-`` for standard input; gzip-compressed or not, told by the
  magic bytes (:mod:`pyverify.inputs.stream`);
* in any of the formats of :data:`FORMATS`, told apart by the start of the
  content (:mod:`pyverify.inputs.detect`), never by the file name.

:data:`FORMATS` is a small registry: one :class:`InputFormat` per format, with
a detector that looks at the :class:`~pyverify.inputs.detect.Head` and a reader
that turns the opened input into an instance. Adding a format is adding one
entry (a binary one, such as Parquet, detects its magic bytes in
``head.first_bytes``; a reader that needs random access reads the input with
:func:`~pyverify.inputs.jsonread.read_bounded`, since a pipe cannot seek).
Parquet (magic bytes ``PAR1``) and CSV (a header naming ``hash_ids``) traces
are read by :mod:`pyverify.inputs.columnar` (needs pyarrow, the ``scale``
extra), from a file: they need random access. Detectors run in order; a format's ``weak`` detector (fields that suggest it
without naming it) runs only when no detector matched, so that a Mooncake line
missing ``hash_ids`` is reported as exactly that.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pyverify.errors import UserError, located
from pyverify.inputs.bailian import BAILIAN_FIELDS, read_bailian
from pyverify.inputs.chat_import import is_chat_record, read_chat
from pyverify.inputs.detect import Head, read_head
from pyverify.inputs.jsonread import MAX_LINE_BYTES, parse_json, read_bounded
from pyverify.inputs.model import INSTANCE_FORMAT, Instance, check_instance_name, instance_from_json
from pyverify.inputs.kv_events import is_kv_event_record, read_kv_events
from pyverify.inputs.lmcache import LMCACHE_FIELDS, read_lmcache
from pyverify.inputs.mooncake import MOONCAKE_FIELDS, read_mooncake
from pyverify.inputs.ragpulse import read_ragpulse
from pyverify.inputs.reblock import reblock_to_size
from pyverify.inputs.records import recording, remember, ImportOptions
from pyverify.inputs.stream import Input, is_stdin, open_source
from pyverify.inputs.tokens_import import TOKEN_FIELDS, read_token_log

Reader = Callable[[Input, ImportOptions], tuple[Instance, list[str]]]


@dataclass(frozen=True)
class InputFormat:
    """One input format: how to recognise it, and how to read it."""

    key: str  # stable name in --json output, e.g. "mooncake-jsonl"
    title: str  # what validate calls it, e.g. "Mooncake JSONL trace"
    signature: str  # how it is recognised, for the list of accepted formats
    detect: Callable[[Head], bool]
    read: Reader
    weak: Callable[[Head], bool] | None = None
    hashes_tokens: bool = (
        False  # --block-size is its hashing size (else: a coarser size to re-block to)
    )
    uses_tokenizer: bool = False  # --tokenizer applies
    source_sized: bool = (
        False  # --source-block-size applies (a hash-id trace whose blocks may be of any size)
    )
    uses_rag_order: bool = False  # --rag-order and --rag-lengths apply
    reblocks: bool = (
        True  # --block-size may ask for coarser blocks (not for blocks of varying size)
    )
    #: How the format writes the instance model's per-request fields (``input_tokens``:
    #: ``input_length``; ``None``: it has none), so that errors found after reading name them as
    #: the file does (pyverify.inputs.locate); ``None`` for a format that writes them as the model
    #: does (an instance file).
    fields_as_written: dict[str, str | None] | None = None


@dataclass(frozen=True)
class Loaded:
    """An input read as an instance, and what it was."""

    instance: Instance
    format: InputFormat
    compression: str | None
    notes: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """``Mooncake JSONL trace``, or ``gzip-compressed Mooncake JSONL trace``."""
        return (
            f"{self.compression}-compressed {self.format.title}"
            if self.compression
            else self.format.title
        )


# --- the formats ------------------------------------------------------------


def _read_mooncake(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    return read_mooncake(source, options), []


def _read_instance(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    data = parse_json(read_bounded(source.handle, source.display), source.display)
    if not isinstance(data, dict) or "format" not in data:
        raise located(
            source.display,
            None,
            f"a JSON document that is not a pyverify instance (no 'format' field); {accepted_formats()}",
        )
    instance = instance_from_json(data, source.display)
    if options.name is not None:
        instance = dataclasses.replace(instance, name=options.name)
    if options.hosts is not None:
        used = max(instance.routing) + 1 if instance.routing is not None else 1
        if options.hosts < used:
            raise UserError(
                f"--hosts: {options.hosts} is fewer than the {used} hosts the instance's routing uses"
            )
        instance = dataclasses.replace(instance, fleet_size=options.hosts)
    return instance, []


def _instance_like(head: Head) -> bool:
    # One line with "format" (trace import writes one line), or a document
    # whose first line is not a whole JSON value (a pretty-printed object).
    if head.first_object is not None:
        return "format" in head.first_object
    if _cut_off(
        head
    ):  # an instance on one line can be that long; trace import writes "format" first
        return head.first_line.lstrip().startswith(b'{"format"')
    return head.first_line is not None and head.first_line.lstrip().startswith(b"{")


def _cut_off(head: Head) -> bool:
    """Whether the first line is longer than a line of a trace may be (the head holds only its start)."""
    return head.first_line is not None and len(head.first_line) > MAX_LINE_BYTES


#: The names Mooncake's records (and the formats built on them, and the Parquet and CSV traces'
#: columns) give the instance model's per-request fields.
LENGTHS_WRITE = {"input_tokens": "input_length", "output_tokens": "output_length"}
MOONCAKE_WRITES = {**LENGTHS_WRITE, "block_tokens": "block_tokens"}

MOONCAKE = InputFormat(
    key="mooncake-jsonl",
    title="Mooncake JSONL trace",
    signature="Mooncake JSONL (one request per line with 'hash_ids')",
    detect=lambda head: head.has_any("hash_ids"),
    weak=lambda head: head.has_any(*MOONCAKE_FIELDS, "timestamp"),
    read=_read_mooncake,
    source_sized=True,
    fields_as_written=MOONCAKE_WRITES,
)

RAGPULSE = InputFormat(
    key="ragpulse-jsonl",
    title="RAGPulse trace",
    signature="RAGPulse JSONL ('hash_ids' an object of components: sys_prompt, passages_ids, history, web_search, user_input)",
    detect=lambda head: (
        head.has_any("hash_ids") and isinstance(head.first_object["hash_ids"], dict)
    ),
    read=read_ragpulse,
    uses_rag_order=True,
    reblocks=False,
    fields_as_written=LENGTHS_WRITE,
)

BAILIAN = InputFormat(
    key="qwen-bailian-jsonl",
    title="Qwen-Bailian JSONL trace",
    signature="Qwen-Bailian JSONL (Alibaba's usage traces: 'hash_ids' of 16-token blocks with 'chat_id', 'parent_chat_id', 'turn')",
    detect=lambda head: head.has_any("hash_ids") and head.has_any(*BAILIAN_FIELDS),
    weak=lambda head: head.has_any(*BAILIAN_FIELDS),
    read=read_bailian,
    source_sized=True,
    fields_as_written=LENGTHS_WRITE,
)

KVCACHE_SIMULATOR = InputFormat(
    key="kvcache-simulator-jsonl",
    title="kvcache-simulator JSONL trace",
    signature="kvcache-simulator JSONL (Mooncake's fields plus a per-record 'block_size' or 'block_tokens')",
    detect=lambda head: (
        head.has_any("hash_ids")
        and head.has_any("block_size", "block_tokens")
        and isinstance(head.first_object["hash_ids"], list)
    ),
    read=_read_mooncake,
    source_sized=True,
    fields_as_written=MOONCAKE_WRITES,
)

INSTANCE = InputFormat(
    key="pyverify-instance",
    title=f"pyverify instance ({INSTANCE_FORMAT})",
    signature=f"pyverify instance JSON ('format': '{INSTANCE_FORMAT}')",
    detect=_instance_like,
    weak=lambda head: head.has_any("requests", "hosts"),  # an instance missing "format": say so
    read=_read_instance,
)

TOKEN_LOG = InputFormat(
    key="token-ids-jsonl",
    title="token-id JSONL log",
    signature="token-id JSONL ('prompt_token_ids' or 'token_ids', hashed into vLLM-style chained blocks)",
    detect=lambda head: head.has_any(*TOKEN_FIELDS),
    read=read_token_log,
    hashes_tokens=True,
    fields_as_written={"input_tokens": "prompt_token_ids"},
)

CHAT = InputFormat(
    key="chat-jsonl",
    title="chat JSONL file",
    signature="chat JSONL (OpenAI 'messages', or a Batch API 'body' with them; tokenized by --tokenizer, default bytes, then hashed as token ids)",
    detect=lambda head: is_chat_record(head.first_object),
    read=read_chat,
    hashes_tokens=True,
    uses_tokenizer=True,
    fields_as_written={"input_tokens": "messages", "timestamp": None},
)

KV_EVENTS = InputFormat(
    key="vllm-kv-events",
    title="vLLM KV-event log",
    signature="vLLM KV events JSONL (event batches {'ts', 'events'} or bare BlockStored/BlockRemoved/AllBlocksCleared events), read as an engine log",
    detect=lambda head: is_kv_event_record(head.first_object),
    weak=lambda head: head.has_any("events") and head.has_any("ts"),
    read=read_kv_events,
    fields_as_written={"timestamp": "ts", "input_tokens": None},
)

LMCACHE = InputFormat(
    key="lmcache-jsonl",
    title="LMCache lookup-hash log",
    signature="LMCache lookup-hash JSONL ('chunk_hashes', hex or integers; 'chunk_size' or --source-block-size as block size)",
    detect=lambda head: head.has_any("chunk_hashes"),
    weak=lambda head: head.has_any(*LMCACHE_FIELDS),
    read=read_lmcache,
    source_sized=True,
    fields_as_written={"input_tokens": "seq_len"},
)


def _read_columnar(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    if is_stdin(source.path) or source.compression:
        raise located(
            source.display,
            None,
            "Parquet and CSV traces are read from an uncompressed file (they need random access), "
            "not from standard input or gzip",
        )
    from pyverify.inputs.columnar import read_columnar

    instance = read_columnar(source.path, allow_unsorted=options.allow_unsorted).to_instance()
    if options.name is not None:
        instance = dataclasses.replace(instance, name=options.name)
    if options.hosts is not None:
        instance = dataclasses.replace(instance, fleet_size=max(options.hosts, instance.fleet_size))
    return instance, []


def _csv_header(head: Head) -> bool:
    from pyverify.inputs.columnar.formats import is_csv_header  # no pyarrow: a look at bytes

    return head.line_number == 1 and is_csv_header(head.first_line or b"")


PARQUET = InputFormat(
    key="parquet",
    title="Parquet trace",
    signature="Parquet (a 'hash_ids' list column; needs pyverify[scale])",
    detect=lambda head: head.first_bytes.startswith(b"PAR1"),
    read=_read_columnar,
    fields_as_written=LENGTHS_WRITE,
)

CSV = InputFormat(
    key="csv",
    title="CSV trace",
    signature="CSV with a header naming a 'hash_ids' column (needs pyverify[scale])",
    detect=_csv_header,
    read=_read_columnar,
    fields_as_written=LENGTHS_WRITE,
)

#: Every format pyverify reads, in detection order (binary Parquet first: its bytes are no JSON).
FORMATS: list[InputFormat] = [
    PARQUET,
    INSTANCE,
    RAGPULSE,
    BAILIAN,
    KVCACHE_SIMULATOR,
    MOONCAKE,
    KV_EVENTS,
    TOKEN_LOG,
    CHAT,
    LMCACHE,
    CSV,
]


def accepted_formats() -> str:
    """Where the accepted formats are listed, for every 'unknown format' error (one short line: the
    list itself is printed by ``pyverify trace formats``)."""
    return "see 'pyverify trace formats'"


#: The most keys an 'unknown format' error names, and the most characters of each.
SHOWN_KEYS, SHOWN_KEY_CHARS = 3, 16


def shown_keys(record: dict) -> str:
    """A record's first keys, each cut short, for a one-line error."""
    keys = [
        repr(key if len(key) <= SHOWN_KEY_CHARS else key[: SHOWN_KEY_CHARS - 3] + "...")
        for key in list(record)[:SHOWN_KEYS]
    ]
    more = len(record) - SHOWN_KEYS
    return ", ".join(keys) + (f" and {more} more" if more > 0 else "") if keys else "none"


def detect_format(head: Head, display: str) -> InputFormat:
    """The format whose detector accepts ``head``, or a one-line error listing the accepted ones."""
    if head.blank:
        raise located(display, None, "empty input: no requests")
    for fmt in FORMATS:
        if fmt.detect(head):
            return fmt
    for fmt in FORMATS:
        if fmt.weak is not None and fmt.weak(head):
            return fmt
    if head.first_object is not None:
        keys = shown_keys(head.first_object)
        raise located(
            display,
            f"line {head.line_number}",
            f"the record matches no known format (keys: {keys}); {accepted_formats()}",
        )
    where = f"line {head.line_number}" if head.line_number else None
    if _cut_off(head):
        raise located(
            display,
            where,
            f"longer than {MAX_LINE_BYTES} bytes: not a line of a trace (and not an instance)",
        )
    raise located(display, where, f"not a format pyverify reads; {accepted_formats()}")


# --- entry points -----------------------------------------------------------


def load_described(path: str | Path, options: ImportOptions = ImportOptions()) -> Loaded:
    """Read ``path`` (``-`` for standard input) in whatever format it is, validated."""
    if options.name is not None:
        check_instance_name(
            options.name, "--name"
        )  # before reading: never an instance that pyverify then refuses
    with open_source(path) as source, recording(str(path)) as lines:
        fmt = detect_format(read_head(source), source.display)
        if options.tokenizer is not None and not fmt.uses_tokenizer:
            raise UserError(
                f"--tokenizer: only for chat JSONL input; {source.display} is a {fmt.title}"
            )
        if options.source_block_size is not None and not fmt.source_sized:
            raise UserError(
                f"--source-block-size: only for hash-id traces whose blocks may be of any size; "
                f"{source.display} is a {fmt.title}"
            )
        if (options.rag_order is not None or options.rag_lengths) and not fmt.uses_rag_order:
            flag = "--rag-order" if options.rag_order is not None else "--rag-lengths"
            raise UserError(f"{flag}: only for RAGPulse traces; {source.display} is a {fmt.title}")
        if options.block_size is not None and not fmt.reblocks:
            raise UserError(
                f"--block-size: {source.display} is a {fmt.title}, whose blocks are content chunks of varying "
                "length: they cannot be re-blocked"
            )
        instance, notes = fmt.read(source, options)
        if (
            options.block_size is not None
            and not fmt.hashes_tokens
            and any("block_tokens" in item for item in instance.extra)
        ):
            raise UserError(
                f"--block-size: {source.display} gives block_tokens (blocks of their own sizes): they cannot be re-blocked"
            )
        if options.block_size is not None and not fmt.hashes_tokens:
            # For chains of ids, --block-size asks for coarser blocks (pyverify.inputs.reblock).
            instance, more = reblock_to_size(instance, options.block_size, source.display)
            notes = notes + more
    remember(str(path), fmt.key, lines)
    return Loaded(instance, fmt, source.compression, tuple(notes))


def load_input(path: str | Path) -> Instance:
    """Load an instance file or a trace, in any accepted format (see the module docstring), validated."""
    return load_described(path).instance


__all__ = [
    "FORMATS",
    "InputFormat",
    "Loaded",
    "accepted_formats",
    "detect_format",
    "load_described",
    "load_input",
]
