"""How every command reads its input: ``--allow-unsorted``, ``--block-size`` and ``--tokenizer``.

The readers' messages suggest these flags ("sort it, or pass --allow-unsorted",
"choose a smaller --block-size"), and any command that reads a trace can
print them, so every such command takes them, with one meaning: the input is
read exactly as ``pyverify trace import`` would read it with the same flags.

A trace file held as arrays (the engines, the compiled kernels) honours
``--allow-unsorted``; re-blocking (``--block-size``) and tokenizing
(``--tokenizer``) are done by the instance readers, so with either flag the
commands read the input as an instance (:func:`needs_instance_reader`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from pyverify.api.reading import (
    content_sha256,
    instance_sha256,
    read_input,
    read_trace_file,
    reading_options,
    richer_than_mooncake,
)
from pyverify.commands.argtypes import input_file, positive_int

if TYPE_CHECKING:  # annotations only: --help imports no numpy
    from pyverify.api.reading import ColumnarTrace, ImportOptions, Instance, Loaded


def add_input_options(parser, recorded: bool = False) -> None:
    """The reading flags, in their own group of ``--help``.

    ``recorded``: for ``verify``, where a certificate records the flags it was
    made with and these override them."""
    title = (
        "reading the input (default: as the certificate records it was read; a flag given here overrides)"
        if recorded
        else "reading the input (as 'pyverify trace import' reads it)"
    )
    group = parser.add_argument_group(title)
    group.add_argument(
        "--allow-unsorted",
        action="store_true",
        help="accept decreasing timestamps with a warning, replaying the file order",
    )
    group.add_argument(
        "--block-size",
        type=positive_int,
        metavar="TOKENS",
        help="tokens per block: for a token-id log or chat JSONL, the size of the hashed blocks (default: 16, "
        "vLLM's); for chains of ids (Mooncake, an instance), a whole multiple of their block size to "
        "re-block to (every Kth id; see README 'Input formats')",
    )
    group.add_argument(
        "--source-block-size",
        type=positive_int,
        metavar="TOKENS",
        help="tokens per block of a hash-id trace that does not say (default: the format's: 512 for Mooncake, "
        "16 for Qwen-Bailian; an LMCache log without chunk_size needs it); a file whose records give "
        "block_size (chunk_size) must agree",
    )
    group.add_argument(
        "--rag-order",
        metavar="A,B,...",
        help="RAGPulse only: the order of a request's components in its prompt (default: "
        "sys_prompt,passages_ids,history,web_search,user_input)",
    )
    group.add_argument(
        "--rag-lengths",
        action="append",
        type=input_file,
        metavar="FILE",
        help="RAGPulse only: a side file of chunk token lengths (1_sys_prompt.jsonl ... 5_web_search.jsonl; "
        "repeat the flag for each), so blocks weigh their chunks' tokens",
    )
    group.add_argument(
        "--tokenizer",
        type=input_file,
        metavar="PATH|bytes",
        help="chat JSONL only: a tokenizer.json (needs the 'tokenizers' package: pip install 'pyverify[tokenizers]'), "
        "or 'bytes' (default: one token per UTF-8 byte, needs nothing)",
    )


def import_options(args, progress: Callable[[int], None] | None = None, **more) -> "ImportOptions":
    """The reading flags of ``args`` as :class:`~pyverify.inputs.records.ImportOptions`."""
    return reading_options(
        allow_unsorted=getattr(args, "allow_unsorted", False),
        block_size=getattr(args, "block_size", None),
        tokenizer=getattr(args, "tokenizer", None),
        progress=progress,
        source_block_size=getattr(args, "source_block_size", None),
        rag_order=_rag_order(args),
        rag_lengths=tuple(getattr(args, "rag_lengths", None) or ()),
        **more,
    )


def _rag_order(args) -> tuple[str, ...] | None:
    text = getattr(args, "rag_order", None)
    return None if text is None else tuple(part.strip() for part in text.split(","))


def load_described_with(args, path: str) -> "Loaded":
    """``path`` read with the command's reading flags, and what it was."""
    return read_input(path, import_options(args))


def load_with(args, path: str) -> "Instance":
    """``path`` read as an instance with the command's reading flags."""
    return load_described_with(args, path).instance


def identity_of(loaded: "Loaded") -> dict[str, str]:
    """How a report names the instance it read: ``sha256``, its content digest (``pyverify.content/1``, the
    same in every format and on either path, as ``simulate`` names it), and for a ``pyverify.instance/1``
    file also ``instance_sha256``, the SHA-256 of its canonical JSON (what ``validate`` prints as
    ``instance_sha256`` and certificates name it by)."""
    identity = {"sha256": content_sha256(loaded.instance)}
    if loaded.format.key == INSTANCE_FILE:
        identity["instance_sha256"] = instance_sha256(loaded.instance)
    return identity


def described_block_size(size: int | None, loaded: "Loaded") -> str:
    """How a text report shows an input's ``block_size_tokens`` (``size``; ``loaded``: what the
    input was): the number, or what is true when there is none (the JSON reports keep ``null``)."""
    if size is not None:
        return str(size)
    hint = "; --rag-lengths gives the chunks' token lengths" if loaded.format.uses_rag_order else ""
    return f"not given in the file (blocks are counted, not weighed in tokens{hint})"


#: The format key of a ``pyverify.instance/1`` file (:mod:`pyverify.inputs.load`).
INSTANCE_FILE = "pyverify-instance"


def read_trace_with(args, path: str) -> "ColumnarTrace":
    """A trace file (Parquet, CSV, Mooncake JSONL) as arrays, with ``--allow-unsorted`` if given."""
    return read_trace_file(path, allow_unsorted=getattr(args, "allow_unsorted", False))


def needs_instance_reader(args) -> bool:
    """Whether the flags ask for what only the instance readers do (re-blocking, tokenizing, a source block size),
    or the input is a hash-id JSONL that says more than Mooncake's fields
    (:data:`pyverify.api.reading.RICHER_THAN_MOONCAKE`), which
    the array readers would read as Mooncake's 512-token blocks."""
    if any(
        getattr(args, flag, None) is not None
        for flag in ("block_size", "tokenizer", "source_block_size", "rag_order", "rag_lengths")
    ):
        return True
    path = next(
        (
            getattr(args, name)
            for name in ("instance", "input", "trace")
            if isinstance(getattr(args, name, None), str)
        ),
        None,
    )
    return path is not None and richer_than_mooncake(path)


__all__ = [
    "INSTANCE_FILE",
    "add_input_options",
    "described_block_size",
    "identity_of",
    "import_options",
    "load_described_with",
    "load_with",
    "needs_instance_reader",
    "read_trace_with",
]
