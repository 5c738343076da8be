"""Cache options shared by simulate, sweep and cost: capacity in blocks, tokens or GiB,
the eviction policy, and the measurement window.

``--capacity-gib G`` converts KV memory to whole blocks with the bytes per
token of ``--kv-model`` (catalog in :mod:`pyverify.inputs.kv_models`) or
``--kv-bytes-per-token``: ``floor(G x 2**30 / (bytes per token x block
tokens))``, kvcache-simulator's rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyverify.commands import argtypes
from pyverify.commands.argtypes import input_file
from pyverify.errors import UserError
from pyverify.api.memory import CATALOG, DTYPE_BYTES, KVSize, blocks_for_gib, kv_size
from pyverify.api.names import (
    ENGINE_EVICTIONS,
    EVICTION_HELP,
    EVICTIONS,
    LRU,
    Window,
    warmup_fraction,
)


#: The range of a rate or scale flag (replay's --arrival-scale, token rates, bandwidths): wide
#: enough for any fleet, narrow enough that times in seconds keep their precision (an arrival
#: scaled by 1e300 makes every duration vanish beside it, and sums of such times overflow to NaN).
POSITIVE_NUMBER_RANGE = (1e-9, 1e9)


def positive_number(text: str) -> float:
    """A positive number in :data:`POSITIVE_NUMBER_RANGE`."""
    low, high = POSITIVE_NUMBER_RANGE
    return argtypes.bounded_number(text, low, high, "a positive number", low_open=False)


def add_kv_size_options(parser, required: bool = False) -> None:
    """``--kv-model``, ``--kv-dtype``, ``--kv-bytes-per-token``: KV bytes per token.

    ``required``: the command cannot run without bytes per token, so one of
    ``--kv-model`` and ``--kv-bytes-per-token`` must be given (usage and --help say so).
    """
    either = parser.add_mutually_exclusive_group(required=required)
    needed = " (this, --kv-model-config or --kv-bytes-per-token is required)" if required else ""
    either.add_argument(
        "--kv-model",
        "--model-kv",
        dest="kv_model",
        type=argtypes.kv_model_name,
        metavar="NAME",
        help=f"model whose KV shape sets bytes per token{needed}: {', '.join(CATALOG)}",
    )
    either.add_argument(
        "--kv-model-config",
        type=input_file,
        metavar="PATH",
        help="a Hugging Face config.json whose shape sets bytes per token, instead of --kv-model (layers, KV heads, "
        "head dim, torch_dtype, MLA; only layers that keep a full KV cache count)",
    )
    either.add_argument(
        "--kv-bytes-per-token",
        type=argtypes.kv_bytes_per_token,
        metavar="BYTES",
        help="KV bytes per token, instead of --kv-model",
    )
    parser.add_argument(
        "--kv-dtype",
        choices=sorted(DTYPE_BYTES),
        default=None,
        help="KV element type with --kv-model or --kv-model-config (default: bf16, 2 bytes; "
        "with --kv-model-config the config's torch_dtype)",
    )


#: What --capacity-gib needs, in every message that says so.
GIB_NEEDS = (
    "--kv-model NAME, --kv-model-config PATH or --kv-bytes-per-token BYTES to convert GiB to blocks"
)


def _given(args, *names: str) -> bool:
    return any(getattr(args, name, None) is not None for name in names)


def kv_given(args) -> bool:
    """Whether a flag gives the KV bytes per token."""
    return _given(args, "kv_model", "kv_model_config", "kv_bytes_per_token")


def capacity_flag_problem(args) -> str | None:
    """What the capacity and KV flags cannot do together, in one line, or None (at parse time)."""
    if _given(args, "capacity_gib") and not kv_given(args):
        return f"--capacity-gib: needs {GIB_NEEDS}"
    for flag in (
        "host_capacity",
        "pool_capacity",
    ):  # replay's lower tiers, sized as the GPU tier is
        amount = getattr(args, flag, None)
        if getattr(amount, "unit", None) == "GiB" and not kv_given(args):
            return f"--{flag.replace('_', '-')} {amount}: needs {GIB_NEEDS}"
    eviction = getattr(args, "eviction", None)
    if eviction in ENGINE_EVICTIONS and not _given(
        args, "capacity", "capacity_tokens", "capacity_gib"
    ):
        return (
            f"--eviction {eviction}: needs a capacity (--capacity BLOCKS, --capacity-tokens or "
            "--capacity-gib): the engine's pool size"
        )
    return None


def kv_flag_words(args) -> str:
    """The flag that gave the KV size as the user gave it (``--kv-model llama-3.1-8b``), for notes."""
    config = getattr(args, "kv_model_config", None)
    return (
        f"--kv-model {args.kv_model}"
        if getattr(args, "kv_model", None) is not None
        else f"--kv-model-config {config}"
        if config is not None
        else "--kv-bytes-per-token"
    )


def kv_of(args) -> KVSize | None:
    """The command's KV bytes per token (``--kv-model``, ``--kv-model-config`` or ``--kv-bytes-per-token``), or None."""
    return kv_size(
        getattr(args, "kv_model", None),
        getattr(args, "kv_dtype", None),
        getattr(args, "kv_bytes_per_token", None),
        getattr(args, "kv_model_config", None),
    )


def add_cache_options(
    parser, *, per: str = "cache", capacity_tokens: bool = True, engines: bool = False
) -> None:
    """Capacity (blocks, tokens or GiB), KV size, eviction and window options.

    ``engines``: also offer the serving engines' exact caches (``vllm``,
    ``sglang``; only ``simulate`` replays them)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--capacity",
        type=argtypes.capacity_blocks,
        metavar="BLOCKS",
        help=f"blocks per {per} (default: no limit)",
    )
    if capacity_tokens:
        group.add_argument(
            "--capacity-tokens",
            type=argtypes.capacity_tokens,
            metavar="TOKENS",
            help=f"tokens per {per}, rounded down to whole blocks of the input's block size",
        )
    group.add_argument(
        "--capacity-gib",
        type=argtypes.capacity_gib,
        metavar="GIB",
        help=f"KV memory per {per} in GiB (2**30 bytes), rounded down to whole blocks; "
        "needs --kv-model, --kv-model-config or --kv-bytes-per-token",
    )
    add_kv_size_options(parser)
    argtypes.add_flag_check(parser, capacity_flag_problem)
    choices = EVICTIONS + ENGINE_EVICTIONS if engines else EVICTIONS
    parser.add_argument(
        "--eviction",
        choices=choices,
        default=LRU,
        help="eviction policy when a capacity is set (default: lru): "
        + "; ".join(f"{name}: {EVICTION_HELP[name]}" for name in choices),
    )
    parser.add_argument(
        "--warmup-fraction",
        type=warmup_fraction,
        default=0.0,
        metavar="W",
        help="count only requests from floor(n x W) on; the earlier ones warm the caches up "
        "(kvcache-simulator measures the last 50%%: W = 0.5; default: 0, count all)",
    )


@dataclass(frozen=True)
class CacheSize:
    """A capacity in blocks (None: unlimited), and how it was derived."""

    blocks: int | None
    words: str
    kv: KVSize | None = None
    gib: float | None = None

    def to_json(self) -> dict:
        return {
            "capacity_blocks": self.blocks,
            "capacity_gib": self.gib,
            "kv_bytes_per_token": self.kv.bytes_per_token if self.kv else None,
            "kv_bytes_source": self.kv.source if self.kv else None,
            "derived": self.words,
        }


def resolve_cache_size(args, instance, path: str) -> CacheSize:
    """The per-cache capacity in blocks from ``--capacity``, ``--capacity-tokens`` or ``--capacity-gib``."""
    kv = kv_of(args)
    block = instance.block_size_tokens
    tokens = getattr(args, "capacity_tokens", None)
    gib = getattr(args, "capacity_gib", None)
    if gib is not None:
        amount = argtypes.CacheAmount(gib, "GiB")
        blocks = blocks_of(amount, "--capacity-gib", block, kv, path, "use --capacity")
        words = f"{gib:g} GiB / ({kv.bytes_per_token:g} bytes/token x {block} tokens/block) = {blocks} blocks"
        return CacheSize(blocks, words, kv, gib)
    if tokens is not None:
        amount = argtypes.CacheAmount(tokens, "tokens")
        blocks = blocks_of(amount, "--capacity-tokens", block, kv, path, "use --capacity")
        return CacheSize(blocks, f"{tokens} tokens / {block} tokens/block = {blocks} blocks", kv)
    if args.capacity is not None:
        return CacheSize(args.capacity, f"{args.capacity} blocks", kv)
    return CacheSize(None, "uncapacitated", kv)


def blocks_of(
    amount: "argtypes.CacheAmount",
    flag: str,
    block: int | None,
    kv: KVSize | None,
    path: str,
    remedy: str,
) -> int:
    """Whole blocks of a cache size in blocks, tokens or GiB (``flag`` gave it): the one conversion of
    every capacity flag. Tokens and GiB need the input's block size, GiB also the KV bytes per
    token; ``remedy`` says what to give instead when the input has no block size."""
    if amount.unit == "blocks":
        return int(amount.value)
    if amount.unit == "GiB" and kv is None:
        raise UserError(f"{flag}: needs {GIB_NEEDS}")
    if block is None:
        raise UserError(
            f"{path}: block_size_tokens: not given, so {flag} cannot be converted to "
            f"blocks; {remedy}"
        )
    if amount.unit == "tokens":
        blocks = int(amount.value) // block
        if blocks < 1:
            raise UserError(
                f"{flag}: {amount.value} tokens is less than one block of {block} tokens"
            )
        return blocks
    blocks = blocks_for_gib(amount.value, kv.bytes_per_token, block)
    if blocks < 1:
        raise UserError(
            f"{flag}: {amount.value:g} GiB is less than one block ({block} tokens x "
            f"{kv.bytes_per_token:g} bytes)"
        )
    return blocks


def gib_of_blocks(blocks: int, block_tokens: int, kv: KVSize) -> float:
    """KV memory of ``blocks`` blocks of ``block_tokens`` tokens, in GiB (2**30 bytes): the inverse of --capacity-gib."""
    return blocks * block_tokens * kv.bytes_per_token / 2**30


def check_page_size(path: str, block: int | None, page: int | None, capacity_blocks: int) -> None:
    """The engine evictions' --page-size rules, one home for simulate and replay: pages are whole blocks and fit the pool."""
    if page is None:
        return
    if block is None:
        raise UserError(
            f"--page-size: {path} gives no block size (block_size_tokens), so pages cannot be matched to blocks"
        )
    if page % block:
        raise UserError(
            f"--page-size: {page} is not a multiple of the input's block size {block} "
            "(a page is named by the id of its last block)"
        )
    if capacity_blocks * block < page:
        raise UserError(
            f"--page-size: a pool of {capacity_blocks} blocks of {block} tokens holds no page of {page} tokens"
        )


def prompt_tokens_of(instance) -> list[int] | None:
    """Each prompt's length in tokens, as the engine evictions read it: its ``input_tokens``, else whole blocks."""
    block = instance.block_size_tokens
    if block is None:
        return None
    extras = list(instance.extra) or [{}] * instance.n_requests
    return [
        item.get("input_tokens") or len(chain) * block
        for chain, item in zip(instance.chains, extras)
    ]


def window_of(args) -> Window:
    return Window(getattr(args, "warmup_fraction", 0.0))


__all__ = [
    "CacheSize",
    "add_cache_options",
    "blocks_of",
    "capacity_flag_problem",
    "kv_flag_words",
    "kv_given",
    "add_kv_size_options",
    "check_page_size",
    "gib_of_blocks",
    "positive_number",
    "prompt_tokens_of",
    "resolve_cache_size",
    "window_of",
]
