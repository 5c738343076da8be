"""Chat-style JSONL (OpenAI ``messages``), tokenized, then hashed as token-id logs are.

The input is JSONL, one request per line, in the shape of an OpenAI chat
completion request body::

    {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}

``content`` is a string, ``null`` (an assistant turn that only called tools),
or a list of parts of which only ``{"type": "text", "text": ...}`` parts are
accepted (an image part would need the model's image processor; it is refused
with one line rather than silently dropped). Optional fields are those of
token-id logs (``timestamp``, ``output_tokens``, ``route_key``,
``cache_salt``; see :mod:`pyverify.inputs.tokens_import`), and OpenAI's
``user`` stands for ``route_key`` when that is absent. Other fields (``model``,
``max_tokens``...) are ignored. A line of an OpenAI Batch API input file
(``{"custom_id": ..., "body": {"messages": ...}}``) is read through its
``body``.

How a request becomes tokens: each message is rendered as a role header
``<|ROLE|>`` and a newline, its text, and a newline; the prompt ends with the
header of the assistant's reply (the "generation prompt"). Header, text and
newline are tokenized **separately** and concatenated, so a conversation's
next turn (the same messages and more) gives a token sequence that extends the
previous turn's exactly, and shares its blocks, as in a served model whose
chat template puts special tokens between messages. This fixed template is
pyverify's, not the model's own chat template (which lives in the model's
``tokenizer_config.json``): block boundaries fall a few tokens away from a
served model's, while what shares a prefix with what stays the same.

Tokenizers (``--tokenizer``):

* ``bytes`` (the default): one token per UTF-8 byte (ids 0-255). It needs no
  download and no package, and gives the same ids on every machine; prompts
  are about four times longer than with a real tokenizer.
* a path to a ``tokenizer.json`` (the Hugging Face ``tokenizers`` format
  shipped beside most open models), read with the ``tokenizers`` package
  (``pip install 'pyverify[tokenizers]'``); text is encoded without added
  special tokens.

The token ids are then cut into blocks and hashed exactly as a token-id log's
(:class:`~pyverify.inputs.tokens_import.HashedTrace`); ``input_tokens`` records
each rendered prompt's length.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pyverify.errors import UserError, located
from pyverify.inputs.jsonread import iter_objects, parse_json, read_bounded
from pyverify.inputs.model import Instance
from pyverify.inputs.records import ImportOptions, optional_text, required_list
from pyverify.inputs.stream import Input, open_source
from pyverify.inputs.tokens_import import HashedTrace

#: The ``--tokenizer`` value of the byte-level fallback.
BYTES = "bytes"

#: The extra that installs the ``tokenizers`` package.
TOKENIZERS_EXTRA = "pip install 'pyverify[tokenizers]'"

MESSAGE_END = "\n"
GENERATION_ROLE = "assistant"


def role_header(role: str) -> str:
    return f"<|{role}|>\n"


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...


class ByteTokenizer:
    """One token per UTF-8 byte: deterministic, and needs nothing installed."""

    name = "bytes (one token per UTF-8 byte)"

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


class FileTokenizer:
    """A Hugging Face ``tokenizer.json``, through the ``tokenizers`` package."""

    def __init__(self, path: str) -> None:
        try:
            import tokenizers
        except ImportError:
            raise UserError(
                f"--tokenizer: reading {path} needs the 'tokenizers' package: {TOKENIZERS_EXTRA} "
                f"(or use --tokenizer {BYTES}, which needs nothing)"
            ) from None
        with open_source(path) as source:
            raw = read_bounded(source.handle, f"--tokenizer: {source.display}")
        parse_json(raw, f"--tokenizer: {path}")  # the project's strict JSON rules first
        try:
            self._tokenizer = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
        except Exception as error:  # the Rust side raises plain Exception with a message
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise UserError(
                f"--tokenizer: {path}: not a tokenizer the 'tokenizers' package can read: {reason}"
            ) from None
        self.name = f"tokenizer.json from {Path(path).name}"

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, add_special_tokens=False).ids


def load_tokenizer(spec: str | None) -> Tokenizer:
    """``bytes`` (or None) for the byte-level fallback, else a ``tokenizer.json`` path."""
    if spec is None or spec == BYTES:
        return ByteTokenizer()
    return FileTokenizer(spec)


class ChatRenderer:
    """Messages to prompt token ids (see the module docstring), with headers tokenized once per role."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._headers: dict[str, list[int]] = {}
        self._end = tokenizer.encode(MESSAGE_END)

    def header(self, role: str) -> list[int]:
        if role not in self._headers:
            self._headers[role] = self.tokenizer.encode(role_header(role))
        return self._headers[role]

    def prompt(self, messages: list[tuple[str, str]]) -> list[int]:
        tokens: list[int] = []
        for role, text in messages:
            tokens += self.header(role)
            tokens += self.tokenizer.encode(text)
            tokens += self._end
        return tokens + self.header(GENERATION_ROLE)


def message_texts(data: dict[str, Any], shown: str, where: str) -> list[tuple[str, str]]:
    """The record's messages as (role, text), validated, or a one-line error naming the field."""
    messages = required_list(
        data, "messages", shown, where, "messages", "a chat request has at least one message"
    )
    result = []
    for index, message in enumerate(messages):
        here = f"{where}.messages[{index}]"
        if not isinstance(message, dict):
            raise located(
                shown,
                here,
                f"expected an object with 'role' and 'content', got {type(message).__name__}",
            )
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise located(shown, f"{here}.role", f"expected a non-empty string, got {role!r}")
        result.append((role, _content_text(message.get("content"), shown, f"{here}.content")))
    return result


def _content_text(content: Any, shown: str, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise located(
            shown,
            where,
            f"expected a string, null or a list of text parts, got {type(content).__name__}",
        )
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise located(
                shown, f"{where}[{index}]", f"only text parts are tokenized, got {kind!r}"
            )
        if not isinstance(part.get("text"), str):
            raise located(
                shown,
                f"{where}[{index}].text",
                f"expected a string, got {type(part.get('text')).__name__}",
            )
        texts.append(part["text"])
    return "".join(texts)


def is_chat_record(record: dict[str, Any] | None) -> bool:
    """A chat request body (``messages``), or a Batch API line whose ``body`` is one."""
    if record is None:
        return False
    body = record.get("body")
    return "messages" in record or (isinstance(body, dict) and "messages" in body)


def read_chat(
    source: Input, options: ImportOptions = ImportOptions()
) -> tuple[Instance, list[str]]:
    """Read an opened chat JSONL file as an instance (see the module docstring); also return notes."""
    tokenizer = load_tokenizer(options.tokenizer)
    renderer = ChatRenderer(tokenizer)
    trace = HashedTrace(source, options)
    shown = source.display
    for line, where, data in iter_objects(source.handle, shown):
        if "messages" not in data and isinstance(data.get("body"), dict):
            data, where = data["body"], f"{where}.body"  # an OpenAI Batch API input line
        messages = message_texts(data, shown, where)
        user = optional_text(data, "user", shown, where)
        if user is not None and "route_key" not in data:
            data = {**data, "route_key": user}
        trace.add(line, "messages", renderer.prompt(messages), data, where)
    return trace.instance(
        f"chat JSONL file (tokenizer: {tokenizer.name})", "chat-jsonl"
    ), trace.notes()


__all__ = [
    "BYTES",
    "ByteTokenizer",
    "ChatRenderer",
    "FileTokenizer",
    "is_chat_record",
    "load_tokenizer",
    "message_texts",
    "read_chat",
]
