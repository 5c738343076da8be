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

from pyverify.commands.argtypes import positive_int

if TYPE_CHECKING:  # annotations only: --help imports no numpy
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.load import Loaded
    from pyverify.inputs.model import Instance
    from pyverify.inputs.records import ImportOptions


def add_input_options(parser, recorded: bool = False) -> None:
    """The reading flags, in their own group of ``--help``.

    ``recorded``: for ``verify``, where a certificate records the flags it was
    made with and these override them."""
    title = ("reading the input (default: as the certificate records it was read; a flag given here overrides)" if recorded
             else "reading the input (as 'pyverify trace import' reads it)")
    group = parser.add_argument_group(title)
    group.add_argument("--allow-unsorted", action="store_true",
                       help="accept decreasing timestamps with a warning, replaying the file order")
    group.add_argument("--block-size", type=positive_int, metavar="TOKENS",
                       help="tokens per block: for a token-id log or chat JSONL, the size of the hashed blocks (default: 16, "
                            "vLLM's); for chains of ids (Mooncake, an instance), a whole multiple of their block size to "
                            "re-block to (every Kth id; see README 'Input formats')")
    group.add_argument("--tokenizer", metavar="PATH|bytes",
                       help="chat JSONL only: a tokenizer.json (needs the 'tokenizers' package: pip install 'pyverify[tokenizers]'), "
                            "or 'bytes' (default: one token per UTF-8 byte, needs nothing)")


def import_options(args, progress: Callable[[int], None] | None = None, **more) -> "ImportOptions":
    """The reading flags of ``args`` as :class:`~pyverify.inputs.records.ImportOptions`."""
    from pyverify.inputs.records import ImportOptions

    return ImportOptions(allow_unsorted=getattr(args, "allow_unsorted", False), block_size=getattr(args, "block_size", None),
                         tokenizer=getattr(args, "tokenizer", None), progress=progress, **more)


def load_described_with(args, path: str) -> "Loaded":
    """``path`` read with the command's reading flags, and what it was."""
    from pyverify.inputs.load import load_described

    return load_described(path, import_options(args))


def load_with(args, path: str) -> "Instance":
    """``path`` read as an instance with the command's reading flags."""
    return load_described_with(args, path).instance


def read_trace_with(args, path: str) -> "ColumnarTrace":
    """A trace file (Parquet, CSV, Mooncake JSONL) as arrays, with ``--allow-unsorted`` if given."""
    from pyverify.inputs.columnar import read_columnar

    return read_columnar(path, allow_unsorted=getattr(args, "allow_unsorted", False))


def needs_instance_reader(args) -> bool:
    """Whether the flags ask for what only the instance readers do (re-blocking, tokenizing)."""
    return getattr(args, "block_size", None) is not None or getattr(args, "tokenizer", None) is not None


__all__ = ["add_input_options", "import_options", "load_described_with", "load_with", "needs_instance_reader", "read_trace_with"]
