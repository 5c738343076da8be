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

Time (parameters in :data:`PARAMETERS`, defaults with sources below)
------------------------------------------------------------------

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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # for annotations only: numpy is imported where it computes, so --help stays fast
    import numpy as np

from pyverify.errors import UserError
from pyverify.inputs.kv_models import CATALOG

# --- parameters ---------------------------------------------------------------


@dataclass(frozen=True)
class Parameter:
    """One named model parameter: what it means, its unit, and where its default comes from."""

    name: str
    unit: str
    meaning: str
    source: str
    positive: bool = True  # a rate: must be > 0 (else: must be >= 0)
    integer: bool = False


# Defaults and their sources. Where a figure could not be pinned to a
# published source it is labelled an assumption; sweep it (--sweep) before
# trusting any conclusion that depends on it.

#: KV cache bytes per token of LLaMA3-70B in 16-bit precision: 320 KiB.
#: Source: the Mooncake paper (Qin et al., "Mooncake: A KVCache-centric
#: Disaggregated Architecture for LLM Serving", arXiv 2407.00079) gives 320 KB
#: per token for LLaMA3-70B; the Mooncake README states the same as "40 GB
#: ... the KVCache generated by 128k tokens in the LLaMA3-70B model"
#: (40 GiB / 128 Ki tokens = 320 KiB). It is also the arithmetic of the
#: model's published configuration: 2 (K and V) x 80 layers x 8 KV heads x
#: 128 head dim x 2 bytes = 327,680 bytes: the ``llama-3.3-70b`` entry of the
#: KV catalog (:mod:`pyverify.inputs.kv_models`), so ``--capacity-gib`` and the
#: transfer time use one number. ``pyverify cost --kv-model NAME`` picks another.
DEFAULT_KV_MODEL = "llama-3.3-70b"
DEFAULT_KV_BYTES_PER_TOKEN = CATALOG[DEFAULT_KV_MODEL].bytes_per_token("bf16")

#: Prefill tokens per second per GPU: about 6,146.
#: Source: NVIDIA NIM LLM benchmarking docs, "Performance", Llama-3.3-70b-instruct
#: (same architecture as LLaMA3-70B), NIM 1.8.0 on 2 x H100 80GB, fp8, TP2,
#: 5000 input tokens, concurrency 1: TTFT 406.77 ms
#: (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance).
#: 5000 tokens / 0.40677 s / 2 GPUs. TTFT includes more than prefill, so this
#: understates the prefill rate a little; the measurement ran fp8 weights while
#: the KV figure above is for 16-bit KV. Both are labelled, neither is tuned.
DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU = 5000 / 0.40677 / 2

#: GPUs serving one host (one model instance). Source: the configuration of the
#: NIM measurement above (TP2), so that the default host prefill rate
#: R = 2 x 6,146 = 12,292 tokens/s is the measured one. Assumption: the rate
#: scales linearly with this count when it is changed.
DEFAULT_GPUS_PER_HOST = 2

#: Pool read bandwidth per fetch, GB/s (1e9 bytes/s).
#: Source: Mooncake Transfer Engine README (kvcache-ai/Mooncake), moving 40 GB
#: (the KV cache of 128k LLaMA3-70B tokens): "up to 87 GB/s and 190 GB/s of
#: bandwidth in 4x200 Gbps and 8x400 Gbps RoCE networks". We take the lower.
DEFAULT_POOL_BANDWIDTH_GB_S = 87.0

#: Fixed latency per request that fetches from the pool, ms.
#: ASSUMPTION, no published source: 1 ms stands for a pool index look-up plus
#: setting up the transfer. Per-block or per-NIC latencies are not modelled.
DEFAULT_FETCH_LATENCY_MS = 1.0

#: Tokens per block when the input does not say (the lab instance does not).
#: ASSUMPTION: 512, the block size of Mooncake's traces (their README: "one per
#: 512-token block"), so lab and trace estimates are on one scale. Inputs that
#: carry block_size_tokens (Mooncake traces) use their own value.
DEFAULT_BLOCK_TOKENS = 512


@dataclass(frozen=True)
class Params:
    """The model's parameters (see :data:`PARAMETERS` for units and sources)."""

    kv_bytes_per_token: float = DEFAULT_KV_BYTES_PER_TOKEN
    prefill_tokens_per_s_per_gpu: float = DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU
    gpus_per_host: int = DEFAULT_GPUS_PER_HOST
    pool_bandwidth_gb_s: float = DEFAULT_POOL_BANDWIDTH_GB_S
    fetch_latency_ms: float = DEFAULT_FETCH_LATENCY_MS
    block_tokens: int = DEFAULT_BLOCK_TOKENS

    @property
    def prefill_rate(self) -> float:
        """``R``: prefill tokens per second of one host."""
        return self.prefill_tokens_per_s_per_gpu * self.gpus_per_host

    @property
    def bytes_per_s(self) -> float:
        return self.pool_bandwidth_gb_s * 1e9

    @property
    def fetch_latency_s(self) -> float:
        return self.fetch_latency_ms / 1000.0

    def with_value(self, name: str, value: float) -> "Params":
        """A copy with one parameter changed (validated like ``--param``)."""
        return replace(self, **{name: check_value(name, value)})

    def to_json(self) -> dict[str, float]:
        return asdict(self)


PARAMETERS: dict[str, Parameter] = {
    parameter.name: parameter
    for parameter in (
        Parameter("kv_bytes_per_token", "bytes/token", "KV cache bytes one token occupies (all layers, K and V)",
                  "LLaMA3-70B, 16-bit KV: 320 KiB (Mooncake paper, arXiv 2407.00079; 2x80x8x128x2 bytes)", integer=False),
        Parameter("prefill_tokens_per_s_per_gpu", "tokens/s/GPU", "prefill throughput of one GPU",
                  "NVIDIA NIM benchmark: Llama-3.3-70B, 2xH100 fp8 TP2, 5000 input tokens, TTFT 406.77 ms -> 5000/0.40677/2"),
        Parameter("gpus_per_host", "GPUs", "GPUs serving one host (one model instance)",
                  "the NIM measurement's TP2; linear scaling beyond it is an assumption", integer=True),
        Parameter("pool_bandwidth_gb_s", "GB/s (1e9 B/s)", "network bandwidth one fetch from the pool gets",
                  "Mooncake Transfer Engine README: 87 GB/s on 4x200 Gbps RoCE (190 GB/s on 8x400 Gbps)"),
        Parameter("fetch_latency_ms", "ms", "fixed latency per request that fetches anything from the pool",
                  "assumption (no published source): index look-up plus transfer set-up", positive=False),
        Parameter("block_tokens", "tokens/block", "tokens per block, only for inputs that do not give block_size_tokens",
                  "assumption: Mooncake's 512-token blocks", integer=True),
    )
}

assert set(PARAMETERS) == {f.name for f in fields(Params)}


def check_value(name: str, value: float) -> float:
    """Validate one parameter value; UserError (one line) if it is out of range."""
    if name not in PARAMETERS:
        raise UserError(f"unknown parameter {name!r}; known parameters: {', '.join(PARAMETERS)}")
    parameter = PARAMETERS[name]
    if not math.isfinite(value):
        raise UserError(f"{name}: expected a finite number, got {value!r}")
    if parameter.positive and value <= 0:
        raise UserError(f"{name}: must be greater than 0 ({parameter.unit}), got {value:g}")
    if not parameter.positive and value < 0:
        raise UserError(f"{name}: must not be negative ({parameter.unit}), got {value:g}")
    if parameter.integer:
        if value != int(value):
            raise UserError(f"{name}: must be a whole number ({parameter.unit}), got {value:g}")
        return int(value)
    return float(value)


def parse_number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{name}: expected a number, got {text!r}") from None
    return check_value(name, value)


def require_known(name: str, where: str) -> None:
    """Refuse a parameter name that the model does not have, listing the ones it has."""
    if name not in PARAMETERS:
        raise UserError(f"{where}: unknown parameter {name!r}; known parameters: {', '.join(PARAMETERS)}")


def parse_assignment(text: str) -> tuple[str, float]:
    """Parse ``NAME=VALUE`` (``--param``) into a validated pair."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep:
        raise UserError(f"--param {text!r}: expected NAME=VALUE; known parameters: {', '.join(PARAMETERS)}")
    require_known(name, f"--param {text!r}")
    try:
        return name, parse_number(name, value.strip())
    except UserError as error:
        raise UserError(f"--param {text!r}: {error}") from None


def parse_params(assignments: Sequence[str], base: Params | None = None) -> tuple[Params, list[str]]:
    """Apply ``--param NAME=VALUE`` assignments; return the params and the names set."""
    params = base or Params()
    names: list[str] = []
    for text in assignments:
        name, value = parse_assignment(text)
        if name in names:
            raise UserError(f"--param: {name} given more than once")
        names.append(name)
        params = replace(params, **{name: value})
    return params, names


@dataclass(frozen=True)
class SweepSpec:
    """``--sweep NAME=LO:HI:STEPS``: STEPS evenly spaced values from LO to HI inclusive."""

    name: str
    lo: float
    hi: float
    steps: int

    @property
    def values(self) -> list[float]:
        import numpy as np  # here, not at the top: the CLI imports this module for --help

        raw = np.linspace(self.lo, self.hi, self.steps)
        return [check_value(self.name, float(v)) for v in raw]


def parse_sweep(text: str) -> SweepSpec:
    """Parse and validate ``NAME=LO:HI:STEPS``; every value must be a valid parameter value."""
    prefix = f"--sweep {text!r}"
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep:
        raise UserError(f"{prefix}: expected NAME=LO:HI:STEPS, such as pool_bandwidth_gb_s=1:100:12")
    require_known(name, prefix)
    parts = spec.split(":")
    if len(parts) != 3:
        raise UserError(f"{prefix}: malformed range {spec!r}; expected LO:HI:STEPS, such as 1:100:12")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise UserError(f"{prefix}: LO and HI must be numbers, got {parts[0]!r} and {parts[1]!r}") from None
    try:
        steps = int(parts[2])
    except ValueError:
        raise UserError(f"{prefix}: STEPS must be a whole number, got {parts[2]!r}") from None
    if steps < 2:
        raise UserError(f"{prefix}: STEPS must be at least 2, got {steps}")
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise UserError(f"{prefix}: LO must be less than HI, got {parts[0]} and {parts[1]}")
    sweep = SweepSpec(name, lo, hi, steps)
    try:
        sweep.values
    except UserError as error:
        hint = ""
        if PARAMETERS[name].integer:
            hint = "; choose STEPS so that (HI - LO) / (STEPS - 1) is a whole number"
        raise UserError(f"{prefix}: {error}{hint}") from None
    return sweep


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
    pooled_blocks = local_blocks if pooled_hits is None else np.maximum(local_blocks, np.asarray(pooled_hits, dtype=np.int64))
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
    return fetched * params.kv_bytes_per_token / params.bytes_per_s + np.where(fetched > 0, params.fetch_latency_s, 0.0)


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
            return (f"pooling never pays at any bandwidth: the fixed per-fetch latency ({self.fetching_requests} fetches x "
                    f"{params.fetch_latency_ms:g} ms = {self.latency_s:.3f} s) is at least the prefill time saved ({self.saved_s:.3f} s)")
        assert self.bandwidth_gb_s is not None
        ratio = params.pool_bandwidth_gb_s / self.bandwidth_gb_s
        side = "above" if ratio >= 1 else "below"
        return (f"pooling pays above {self.bandwidth_gb_s:.3f} GB/s of pool bandwidth and loses below it; "
                f"the bandwidth assumed ({params.pool_bandwidth_gb_s:g} GB/s) is {ratio:.3g}x the break-even ({side} it)")

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


# --- distributions --------------------------------------------------------------

PERCENTILES = (50, 90, 99)


def distribution(values_s: np.ndarray) -> dict[str, float]:
    """Median, p90, p99 (numpy.percentile, linear interpolation) in ms, and the total in s."""
    import numpy as np

    values = np.asarray(values_s, dtype=float)
    if values.size == 0:
        return {"median_ms": 0.0, "p90_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0, "total_s": 0.0}
    median, p90, p99 = np.percentile(values, PERCENTILES) * 1000.0
    return {
        "median_ms": float(median),
        "p90_ms": float(p90),
        "p99_ms": float(p99),
        "mean_ms": float(values.mean() * 1000.0),
        "total_s": float(values.sum()),
    }


def distributions(est: Estimate) -> dict[str, dict[str, float]]:
    """The distributions the report prints, over all requests."""
    return {
        "prefill_time_saved": distribution(est.saved),
        "transfer_time_spent": distribution(est.transfer),
        "net_effect": distribution(est.net),
        "ttft_per_host": distribution(est.ttft_per_host),
        "ttft_pooled": distribution(est.ttft_pooled),
    }


# --- sensitivity ----------------------------------------------------------------


def verdict(est: Estimate, be: BreakEven) -> str:
    """One word for the conclusion at these parameters."""
    if be.status == NO_FETCHES:
        return "no difference"
    return "pool pays" if est.net_total > 0 else ("break-even" if est.net_total == 0 else "pool loses")


@dataclass(frozen=True)
class SweepRow:
    name: str
    value: float
    params: Params
    estimate: Estimate
    break_even: BreakEven

    @property
    def verdict(self) -> str:
        return verdict(self.estimate, self.break_even)

    def to_json(self) -> dict[str, Any]:
        dist = distributions(self.estimate)
        return {
            self.name: self.value,
            "prefill_saved_s": dist["prefill_time_saved"]["total_s"],
            "transfer_s": dist["transfer_time_spent"]["total_s"],
            "net_s": self.estimate.net_total,
            "net_median_ms": dist["net_effect"]["median_ms"],
            "ttft_p90_ms": {"per_host": dist["ttft_per_host"]["p90_ms"], "pooled": dist["ttft_pooled"]["p90_ms"]},
            "break_even": self.break_even.to_json(),
            "verdict": self.verdict,
        }


def sweep_rows(split_for, params: Params, spec: SweepSpec) -> list[SweepRow]:
    """Re-estimate with one parameter varied. ``split_for(params)`` gives the token split
    (it changes only when ``block_tokens`` does)."""
    rows = []
    for value in spec.values:
        varied = replace(params, **{spec.name: value})
        split = split_for(varied)
        rows.append(SweepRow(spec.name, value, varied, estimate(split, varied), break_even(split, varied)))
    return rows


def sweep_conclusion(rows: Sequence[SweepRow]) -> str:
    """How the conclusion changes across a sweep, in one sentence."""
    name = rows[0].name
    verdicts = [row.verdict for row in rows]
    if len(set(verdicts)) == 1:
        return f"the conclusion does not change across {name} = {rows[0].value:g} .. {rows[-1].value:g}: {verdicts[0]} at every value"
    flips = [f"between {a.value:g} ({a.verdict}) and {b.value:g} ({b.verdict})" for a, b in zip(rows, rows[1:]) if a.verdict != b.verdict]
    return f"the conclusion changes as {name} varies: " + "; ".join(flips)


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
