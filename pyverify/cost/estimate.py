"""What pooling costs is movement: a transfer-versus-recompute time model.

A miss count says how often a cache had nothing to reuse; it does not say
whether fetching what a pool holds is faster than computing it again. This
module turns two demand-cache runs on the same routing (:mod:`pyverify.sim.simulate`)
into an *estimate* of prefill time, so the two can be weighed.

Two architectures, one routing
------------------------------

* **per-host**: each host reads only its own (local) cache. Request ``i`` hits
  ``L_i`` leading blocks locally (the per-host run's ``hit_blocks``); every
  other block is recomputed.
* **pooled**: the same local caches, plus one shared pool that every host can
  read over the network. Request ``i`` takes its ``L_i`` local blocks as
  before; the pool supplies the blocks it holds beyond those, up to
  ``M_i = max(L_i, P_i)`` leading blocks, where ``P_i`` is the pooled run's
  ``hit_blocks``; the rest is recomputed. Uncapacitated, ``P_i >= L_i``
  always (anything a host ever held reached the pool). With a capacity the
  pool may have evicted a block a local cache still holds, so ``P_i < L_i``
  can happen: the ``max`` says the local copy is used and nothing is fetched.

Local caches evolve identically in both architectures (each request touches
its whole chain on its host either way), so one per-host run gives ``L_i``
for both. The pooled run replays every request's chain against the pool, so
with a capacity its recency order is an approximation of a pool that local
hits never touch.

Tokens (``b`` = block size in tokens, ``T_i`` = prompt tokens)
--------------------------------------------------------------

``T_i`` is the request's ``input_tokens`` when the input gives it (Mooncake
traces do), else ``len(chain_i) * b``. The last block may be partial, so the
tokens in the first ``h`` blocks are ``tok_i(h) = min(h * b, T_i)``; tokens of
a prompt beyond its chain (if ``T_i > len(chain_i) * b``) are never cached.

* local tokens        ``A_i = tok_i(L_i)``
* fetched tokens      ``F_i = tok_i(M_i) - tok_i(L_i)``   (pooled only)
* recomputed, per-host ``T_i - A_i``
* recomputed, pooled  ``T_i - tok_i(M_i)``

Time (parameters and their defaults, with sources, in :mod:`pyverify.cost.params`)
-----------------------------------------------------------------------------------

* prefill rate of one host  ``R = prefill_tokens_per_s_per_gpu * gpus_per_host``  [tokens/s]
* recompute time            ``tokens / R``                                       [s]
* transfer time of request i ``F_i * kv_bytes_per_token / (pool_bandwidth_gb_s * 1e9)
  + fetch_latency_ms / 1000 * [F_i > 0]``                                       [s]
  (one fixed latency per request that fetches anything; GB = 1e9 bytes)
* prefill time saved        ``S_i = F_i / R``                                    [s]
* net effect                ``N_i = S_i - transfer_i``  (positive: the pool is faster)
* estimated TTFT per-host   ``(T_i - A_i) / R``
* estimated TTFT pooled     ``(T_i - tok_i(M_i)) / R + transfer_i``, so
  ``TTFT_per-host - TTFT_pooled = N_i`` exactly.

Local hits cost no time (the blocks are already in the host's memory).

Break-even pool bandwidth
-------------------------

Summed over the trace, with ``F = sum F_i``, ``n`` requests that fetch and
``k = kv_bytes_per_token``::

    net(B) = F / R - n * latency - F * k / (B * 1e9)

is increasing in ``B`` and linear in ``1/B``, so the break-even bandwidth has a
closed form, ``B* = F * k / ((F / R - n * latency) * 1e9)`` GB/s: pooling pays
above it and loses below it. If ``F / R <= n * latency`` the fixed latencies
alone eat the saving and pooling *never pays* at any bandwidth; if ``F = 0``
the pool supplies nothing and the two architectures take the same time. The
closed form is exact up to floating-point rounding; the tests check
``|net(B*)| <= 1e-9 * F / R``. With zero latency ``B* = k * R`` whatever the
trace: the trace decides how much pooling saves, not whether one fetch beats
one recompute.

What the estimate leaves out
----------------------------

:data:`LEAVES_OUT` says it in words, and every report prints it: this is a
model of service time, not a measurement.

Around the model: :mod:`pyverify.cost.params` (the parameters, their sources,
``--param`` and ``--sweep``) and :mod:`pyverify.cost.summary` (percentiles,
the verdict, sweeps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # for annotations only: numpy is imported where it computes, so --help stays fast
    import numpy as np

# Params is the model's input. PARAMETERS, parse_params and parse_sweep are re-exported
# because callers (pyverify.commands.cost, tests) have always imported them from here.
from pyverify.cost.params import PARAMETERS, Params, parse_params, parse_sweep  # noqa: F401

# --- tokens -------------------------------------------------------------------


@dataclass(frozen=True)
class TokenSplit:
    """Per request: where each prompt token comes from (module docstring, "Tokens").

    All arrays are int64 and indexed by request. ``recomputed_per_host ==
    fetched + recomputed_pooled`` and ``total == local + recomputed_per_host``.
    """

    total: np.ndarray
    local: np.ndarray
    fetched: np.ndarray
    recomputed_pooled: np.ndarray
    block_tokens: int

    @property
    def recomputed_per_host(self) -> np.ndarray:
        return self.total - self.local

    @property
    def n_requests(self) -> int:
        return len(self.total)

    def totals(self) -> dict[str, int]:
        return {
            "prompt_tokens": int(self.total.sum()),
            "local_hit_tokens": int(self.local.sum()),
            "fetched_tokens": int(self.fetched.sum()),
            "recomputed_tokens_per_host": int(self.recomputed_per_host.sum()),
            "recomputed_tokens_pooled": int(self.recomputed_pooled.sum()),
            "requests_that_fetch": int((self.fetched > 0).sum()),
        }


def token_split(
    chains: Sequence[Sequence[int]],
    local_hits: Sequence[int],
    pooled_hits: Sequence[int] | None,
    block_tokens: int,
    input_tokens: Sequence[int | None] | None = None,
) -> TokenSplit:
    """Split every prompt into local, fetched and recomputed tokens.

    ``local_hits`` is the per-host run's ``hit_blocks``; ``pooled_hits`` the
    pooled run's (``None``: no pool, nothing fetched). ``input_tokens[i]``, if
    given and not ``None``, is request i's prompt length; else the prompt is
    ``len(chain) * block_tokens`` tokens.
    """
    import numpy as np  # here, not at the top: the CLI imports this module for --help

    if block_tokens < 1:
        raise ValueError("block_tokens must be at least 1")
    n = len(chains)
    if len(local_hits) != n or (pooled_hits is not None and len(pooled_hits) != n):
        raise ValueError("one hit count per request is needed")
    lengths = np.fromiter((len(chain) for chain in chains), dtype=np.int64, count=n)
    total = lengths * block_tokens
    if input_tokens is not None:
        given = np.fromiter((-1 if t is None else t for t in input_tokens), dtype=np.int64, count=n)
        total = np.where(given >= 0, given, total)
    local_blocks = np.asarray(local_hits, dtype=np.int64)
    pooled_blocks = (
        local_blocks
        if pooled_hits is None
        else np.maximum(local_blocks, np.asarray(pooled_hits, dtype=np.int64))
    )
    if np.any(local_blocks > lengths) or np.any(pooled_blocks > lengths):
        raise ValueError("a request cannot hit more blocks than its chain has")
    local = np.minimum(local_blocks * block_tokens, total)
    reachable = np.minimum(pooled_blocks * block_tokens, total)
    return TokenSplit(
        total=total,
        local=local,
        fetched=reachable - local,
        recomputed_pooled=total - reachable,
        block_tokens=block_tokens,
    )


# --- time ---------------------------------------------------------------------


def recompute_seconds(tokens: np.ndarray | float, params: Params):
    """Prefill time of ``tokens`` on one host: ``tokens / R``."""
    import numpy as np

    return np.asarray(tokens, dtype=float) / params.prefill_rate


def transfer_seconds(fetched: np.ndarray | float, params: Params):
    """Pool transfer time: ``fetched * k / (B * 1e9) + latency * [fetched > 0]``."""
    import numpy as np

    fetched = np.asarray(fetched, dtype=float)
    return fetched * params.kv_bytes_per_token / params.bytes_per_s + np.where(
        fetched > 0, params.fetch_latency_s, 0.0
    )


@dataclass(frozen=True)
class Estimate:
    """Per-request time estimates in seconds (module docstring, "Time")."""

    params: Params
    split: TokenSplit
    saved: np.ndarray
    transfer: np.ndarray
    ttft_per_host: np.ndarray
    ttft_pooled: np.ndarray

    @property
    def net(self) -> np.ndarray:
        """Positive where the pool is faster: ``saved - transfer``."""
        return self.saved - self.transfer

    @property
    def net_total(self) -> float:
        return float(self.net.sum())

    @property
    def net_if_fetch_only_when_faster(self) -> float:
        """Net total if each request fetched only when that beat recomputing (an oracle choice)."""
        import numpy as np

        return float(np.maximum(self.net, 0.0).sum())


def estimate(split: TokenSplit, params: Params) -> Estimate:
    """Apply the time formulas to a token split."""
    saved = recompute_seconds(split.fetched, params)
    transfer = transfer_seconds(split.fetched, params)
    return Estimate(
        params=params,
        split=split,
        saved=saved,
        transfer=transfer,
        ttft_per_host=recompute_seconds(split.recomputed_per_host, params),
        ttft_pooled=recompute_seconds(split.recomputed_pooled, params) + transfer,
    )


def net_total_at(split: TokenSplit, params: Params, bandwidth_gb_s: float) -> float:
    """Total net saving (s) of pooled against per-host at a given pool bandwidth."""
    return estimate(split, replace(params, pool_bandwidth_gb_s=bandwidth_gb_s)).net_total


#: Break-even outcomes.
PAYS_ABOVE = "pays above"
NEVER_PAYS = "never pays"
NO_FETCHES = "no fetches"

#: Relative tolerance the break-even is checked to (against the prefill time saved).
BREAK_EVEN_RTOL = 1e-9


@dataclass(frozen=True)
class BreakEven:
    """Where pooling stops paying on this trace, as pool bandwidth varies.

    ``status`` is :data:`PAYS_ABOVE` (``bandwidth_gb_s`` is the break-even),
    :data:`NEVER_PAYS` (the fixed latencies alone exceed the prefill saved, so
    no bandwidth is enough) or :data:`NO_FETCHES` (the pool supplies nothing).
    """

    status: str
    bandwidth_gb_s: float | None
    fetched_tokens: int
    fetching_requests: int
    saved_s: float
    latency_s: float

    def sentence(self, params: Params) -> str:
        if self.status == NO_FETCHES:
            return "the pool supplies no block the local caches lack, so pooling neither gains nor loses time under this model"
        if self.status == NEVER_PAYS:
            return (
                f"pooling never pays at any bandwidth: the fixed per-fetch latency ({self.fetching_requests} fetches x "
                f"{params.fetch_latency_ms:g} ms = {self.latency_s:.3f} s) is at least the prefill time saved ({self.saved_s:.3f} s)"
            )
        assert self.bandwidth_gb_s is not None
        ratio = params.pool_bandwidth_gb_s / self.bandwidth_gb_s
        side = "above" if ratio >= 1 else "below"
        return (
            f"pooling pays above {self.bandwidth_gb_s:.3f} GB/s of pool bandwidth and loses below it; "
            f"the bandwidth assumed ({params.pool_bandwidth_gb_s:g} GB/s) is {ratio:.3g}x the break-even ({side} it)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "bandwidth_gb_s": self.bandwidth_gb_s,
            "method": "closed form: net(B) = F/R - n*latency - F*k/(B*1e9) is linear in 1/B",
            "tolerance": f"|net(B*)| <= {BREAK_EVEN_RTOL:g} x prefill time saved",
            "fetched_tokens": self.fetched_tokens,
            "fetching_requests": self.fetching_requests,
            "prefill_saved_s": self.saved_s,
            "fixed_latency_s": self.latency_s,
        }


def break_even(split: TokenSplit, params: Params) -> BreakEven:
    """The pool bandwidth at which the total net saving is zero (module docstring)."""
    fetched = int(split.fetched.sum())
    fetching = int((split.fetched > 0).sum())
    saved = fetched / params.prefill_rate
    latency = fetching * params.fetch_latency_s
    if fetched == 0:
        return BreakEven(NO_FETCHES, None, 0, 0, 0.0, 0.0)
    margin = saved - latency
    if margin <= 0:
        return BreakEven(NEVER_PAYS, None, fetched, fetching, saved, latency)
    bandwidth = fetched * params.kv_bytes_per_token / (margin * 1e9)
    return BreakEven(PAYS_ABOVE, bandwidth, fetched, fetching, saved, latency)


def zero_latency_break_even_gb_s(params: Params) -> float:
    """``k * R / 1e9``: the break-even of every trace when the per-fetch latency is zero."""
    return params.kv_bytes_per_token * params.prefill_rate / 1e9


# --- what the model leaves out ---------------------------------------------------

LEAVES_OUT = (
    "This is an estimate from a model, not a measurement. It leaves out: "
    "queueing (TTFT here is service time only; requests never wait for a busy host or a busy pool); "
    "contention (every fetch gets the full pool bandwidth, however many hosts fetch at once); "
    "eviction, unless a capacity is given (uncapacitated caches keep everything); "
    "overlap of compute and transfer (layer-wise pipelining could hide transfer behind prefill; here they add up); "
    "the quadratic attention term (prefill cost is linear in tokens, at a rate measured on 5000-token prompts); "
    "the cost of writing blocks to the pool, of loading local hits, and of decoding; "
    "and any scheduler that recomputes when that is faster (the pool is always read when it holds a block; "
    "the 'fetch only when faster' total shows what such a choice could recover)."
)
