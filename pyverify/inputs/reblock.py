"""Re-blocking: a trace's chains at a coarser block size, computed from the ids alone.

When the ids allow it. A chain's id at position i names the whole prefix of
blocks 0..i (a chained hash, or Mooncake's ``hash_ids``). Take a trace with
blocks of B tokens and a new size of K x B tokens, K a whole number. Coarse
block j of a request is old blocks jK .. jK+K-1, and the old id at position
(j+1)K-1 names the whole prefix up to the end of that coarse block; so the
coarse chain is every K-th id, and two coarse blocks get equal ids exactly
when their prefixes are equal. The result is prefix-closed (an id's coarse
parent is its ancestor K levels up, which prefix closure makes unique) and a
cache of coarse blocks hits on it exactly as it would on the coarse blocks of
the original prompts (a test checks this against token logs imported at
both sizes).

When they do not: a size that is not a whole multiple of B (a coarse block
would end inside an old block, and the ids cannot tell whether two requests
share part of a block), a finer size (no id names half a block), and a trace
that gives no block size (``block_size_tokens``). Re-import the token ids at
the new size instead, when they are at hand.

The last, partial coarse block. A request of k old blocks has k mod K old
blocks left over after its full coarse blocks. Which convention the trace
follows decides what they become:

* a trace whose last blocks may be partial (some request has
  ``input_tokens < k x B``, as in Mooncake's traces, whose last id names a
  partial 512-token block) keeps them as one partial coarse block, named by
  the request's last id (which names its whole prompt);
* a trace whose chains hold full blocks only (vLLM's convention, as pyverify's
  token-id and chat imports write), or that records no token counts, drops
  them: they do not fill a coarse block, and only full blocks are cached.
  ``input_tokens`` is kept, so token accounting counts them as an uncached tail.

A request left with no coarse block is left out (a chain has at least one
block), and the notes say how many.
"""

from __future__ import annotations

import dataclasses

from pyverify.errors import UserError
from pyverify.inputs.model import Chain, Instance


def has_partial_last_blocks(instance: Instance) -> bool:
    """Whether some request's token count ends inside its last block (the trace names partial blocks)."""
    block = instance.block_size_tokens
    if block is None or not instance.extra:
        return False
    return any(
        "input_tokens" in item and item["input_tokens"] < len(chain) * block
        for item, chain in zip(instance.extra, instance.chains)
    )


def coarse_chain(chain: Chain, factor: int, keep_partial: bool) -> Chain:
    """Every ``factor``-th id of ``chain``, and its last id for a partial last coarse block when ``keep_partial``."""
    coarse = chain[factor - 1 :: factor]
    if keep_partial and len(chain) % factor:
        coarse += (chain[-1],)
    return coarse


def reblock(instance: Instance, factor: int) -> tuple[Instance, list[str]]:
    """``instance`` with blocks ``factor`` times as large (see the module docstring); also notes."""
    if factor < 1:
        raise UserError(f"re-blocking factor must be a positive whole number, got {factor}")
    if factor == 1:
        return instance, []
    if instance.block_size_tokens is None:
        raise UserError("re-blocking needs the trace's block size (block_size_tokens)")
    keep_partial = has_partial_last_blocks(instance)
    kept: list[int] = []
    chains: list[Chain] = []
    for index, chain in enumerate(instance.chains):
        coarse = coarse_chain(chain, factor, keep_partial)
        if coarse:
            kept.append(index)
            chains.append(coarse)
    size = instance.block_size_tokens * factor
    if not chains:
        raise UserError(
            f"--block-size: no request has a full block of {size} tokens; choose a smaller --block-size"
        )
    tail = (
        "partial last blocks kept, as the trace names partial blocks"
        if keep_partial
        else "only full blocks kept, as in vLLM"
    )
    notes = [
        f"re-blocked to {size}-token blocks: the last id of every {factor} consecutive blocks ({tail})"
    ]
    if len(kept) < instance.n_requests:
        notes.append(
            f"left out {instance.n_requests - len(kept)} request(s) shorter than one block of {size} tokens"
        )
    result = dataclasses.replace(
        instance,
        chains=tuple(chains),
        routing=tuple(instance.routing[i] for i in kept) if instance.routing is not None else None,
        extra=tuple(instance.extra[i] for i in kept) if instance.extra else (),
        block_size_tokens=size,
        description=(instance.description + " " if instance.description else "")
        + notes[0][0].upper()
        + notes[0][1:]
        + ".",
    )
    return result, notes


def reblock_to_size(
    instance: Instance, block_size: int, display: str
) -> tuple[Instance, list[str]]:
    """Re-block ``instance`` to ``block_size`` tokens per block, or say in one line why the ids do not allow it."""
    old = instance.block_size_tokens
    if old is None:
        raise UserError(
            f"--block-size: {display} gives no block size (block_size_tokens), so it cannot be re-blocked by tokens"
        )
    if block_size % old:
        raise UserError(
            f"--block-size: {block_size} is not a whole multiple of the input's {old}-token blocks: a new block "
            "would end inside an old one, and the ids cannot tell whether two requests share part of a block"
        )
    return reblock(instance, block_size // old)


__all__ = ["coarse_chain", "has_partial_last_blocks", "reblock", "reblock_to_size"]
