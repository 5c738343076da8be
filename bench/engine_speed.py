"""SGLang's own radix cache against pyverify's compiled models of it, at page size 1, on the same prompts.

    ~/venv-sglang/bin/python bench/engine_speed.py [--tokens 4000000] [--pool-fraction 0.25] [--rounds 3]

The prompts are the Mooncake synthetic trace's first requests expanded to
token ids (``bench/engine_parity.py``'s ``mooncake_prompts``: block id h
becomes tokens h*512+1..h*512+512, cut to ``input_length``) until
``--tokens`` tokens; at page size 1 every token is a block, so that many
block references. The pool holds ``--pool-fraction`` of the distinct tokens.
Timed, each the best of ``--rounds`` in this process (prompts, chains and
numba's kernels ready beforehand, not timed):

* SGLang 0.5.23's ``RadixCache`` and token allocator, driven request by
  request as its scheduler does (``engine_parity.sglang_engine_hits``);
* ``--eviction sglang``'s compiled kernel (``pyverify.cache.sglang_kernel``)
  on the prompts' chains, its hits checked equal to SGLang's request by request;
* ``--eviction leaf-lru``'s compiled tree replay (``pyverify.cache.tree_kernel``),
  the idealised policy (kvcache-simulator's LRU): printed for scale, its hits
  differ from an engine's where the engine's scheduling does (a request's
  own blocks are locked while it runs, the last token is never matched).

Needs SGLang (see ``bench/engine_parity.py`` for its venv); without it, says so
and exits 0. Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import engine_parity  # noqa: E402

from pyverify.inputs.tokens_import import chain_of_tokens  # noqa: E402
from pyverify.cache.sglang_kernel import sglang_kernel_hits  # noqa: E402
from pyverify.cache.tree_kernel import tree_hits  # noqa: E402


def best_of(rounds: int, function):
    """``(seconds, result)``: the fastest of ``rounds`` calls."""
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def prompts_of(tokens: int) -> list[list[int]]:
    """The Mooncake synthetic trace's first requests as token ids, until ``tokens`` tokens."""
    traces = Path(
        os.environ.get("PYVERIFY_MOONCAKE_TRACES", HERE.parents[1] / "shared" / "data" / "mooncake")
    )
    prompts, total = [], 0
    for prompt in engine_parity.mooncake_prompts(traces / "synthetic_trace.jsonl", None):
        if total >= tokens:
            break
        prompts.append(prompt)
        total += len(prompt)
    return prompts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=4_000_000)
    parser.add_argument("--pool-fraction", type=float, default=0.25)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        import sglang
    except ImportError:
        print(
            "SGLang is not installed here (see bench/engine_parity.py for its venv): nothing to compare"
        )
        return 0
    prompts = prompts_of(args.tokens)
    chains = [chain_of_tokens(prompt, 1) for prompt in prompts]
    references = sum(map(len, chains))
    distinct = len({block for chain in chains for block in chain})
    pool = max(1, int(distinct * args.pool_fraction))
    lengths, hosts = [len(prompt) for prompt in prompts], [0] * len(prompts)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, sglang {sglang.__version__}"
    )
    print(
        f"{len(prompts):,} Mooncake prompts, {references:,} tokens = block references at page size 1, "
        f"{distinct:,} distinct; pool {pool:,} tokens ({args.pool_fraction:.0%} of the distinct)"
    )
    sglang_kernel_hits(
        chains[:2], lengths[:2], hosts[:2], pool, 1, 1
    )  # compile, or load from numba's cache
    tree_hits(chains[:2], hosts[:2], pool, "leaf-lru")
    t_engine, (engine_hits, engine_unscheduled) = best_of(
        args.rounds, lambda: engine_parity.sglang_engine_hits(prompts, pool, 1)
    )
    t_kernel, (kernel_hits, kernel_unscheduled) = best_of(
        args.rounds, lambda: sglang_kernel_hits(chains, lengths, hosts, pool, 1, 1)
    )
    t_leaf, leaf_hits = best_of(args.rounds, lambda: tree_hits(chains, hosts, pool, "leaf-lru"))
    differ = sum(a != b for a, b in zip(engine_hits, kernel_hits)) + (
        engine_unscheduled != kernel_unscheduled
    )
    print(
        f"  SGLang RadixCache (its own code)         {t_engine:7.2f} s  {references / t_engine / 1e6:6.1f}M refs/s  "
        f"hit tokens {sum(engine_hits):,}"
    )
    print(
        f"  pyverify --eviction sglang, compiled     {t_kernel:7.2f} s  {references / t_kernel / 1e6:6.1f}M refs/s  "
        f"hit tokens {sum(kernel_hits):,}; requests that differ from SGLang: {differ}"
    )
    print(
        f"  pyverify --eviction leaf-lru, compiled   {t_leaf:7.2f} s  {references / t_leaf / 1e6:6.1f}M refs/s  "
        f"hit tokens {sum(leaf_hits):,} (the idealised policy, for scale)"
    )
    print(
        f"ratio pyverify sglang kernel / SGLang: {t_kernel / t_engine:.3f}x; leaf-lru kernel / SGLang: {t_leaf / t_engine:.3f}x"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
