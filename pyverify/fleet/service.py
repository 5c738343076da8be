"""The service model of ``pyverify replay``: how long a request keeps a host busy.

Two models; ``steps`` is the default of a timed replay, ``streams`` the earlier one, kept by name.

``steps`` -- an engine's iterations, as vLLM v1's scheduler runs them (and NVIDIA Dynamo's mocker, which
mirrors it). A host runs one step (forward pass) at a time. A step takes, in order:

1. the running requests, in the order they were admitted: one still in prefill gets its next chunk of
   at most the budget left, one in decode gets 1 token; a request the budget cannot serve waits for the
   next step (vLLM's ``token_budget``);
2. then the head of the host's FIFO queue, while the budget is not spent, fewer than ``max_running``
   (vLLM's ``max_num_seqs``) run and its blocks fit (:mod:`pyverify.fleet.replay`): it is admitted
   (served through the tiers, its blocks pinned) and gets a chunk of at most the budget left.

The budget is ``max_num_batched_tokens`` tokens per step (chunked prefill). The step lasts
:meth:`ServiceModel.step_seconds` of its prefill tokens and decodes, plus the load time of the host-DRAM
and pool hits of the requests it admits (a KV connector loads inside the forward pass that first
schedules the request, as vLLM's ``wait_for_layer_load`` does). A request's first token comes at the end
of the step that computes its last prefill chunk (one that needs no computing gets it at the end of the
step that admits it); ``output_length - 1`` decode steps follow, and the request ends, freeing its slot
and unpinning its blocks, at the end of the last one. Requests are never preempted, but under
``--eviction vllm``, whose scheduler the event loop follows there (:mod:`pyverify.fleet.replay`).

Step timing (``step_timing``, ``replay --step-timing``): ``linear`` (the default) or ``dynamo``.
The linear timing is from the cost model's sourced rates: a step's prefill part is its prefill
tokens / ``prefill_tokens_per_s`` (so one request alone keeps today's TTFT, tokens / rate), and its decode
part, with ``d`` decodes in the step, is ``(1 + decode_growth * (d - 1)) / decode_tokens_per_s``: 18.58 ms
for one decode and 38.75 ms for 25, the two ends of NVIDIA NIM's inter-token latencies (21.94 ms at 5
against 21.83 measured). A :class:`StepTable` (``replay --step-table``) replaces both parts by the user's
interpolation table, as Dynamo's and Vidur's profiles time a batch.

The ``dynamo`` timing is the default performance model of NVIDIA Dynamo 1.6.1's mocker (its
``Polynomial`` model: ai-dynamo/dynamo lib/mocker/src/common/perf_model.rs, compiled into
ai-dynamo-runtime 1.6.1 from aisimulate-core 0.13.0's engine/common/perf_model.rs), so that a replay can
be set beside Dynamo's request by request (``bench/vs_dynamo.py``). A step lasts, in milliseconds, its
prefill part plus, when it carries decodes, its decode part:

* prefill: with ``n`` prefill chunks in the step, chunk ``i`` starting after ``p_i`` tokens of its
  request already computed or cached and computing ``c_i``, Dynamo times the batch by its means, each
  rounded down: ``T = n x (floor(sum(p_i + c_i) / n) - floor(sum(p_i) / n))`` tokens, and
  ``4.209989e-07 T^2 + 1.518344e-02 T + 16.50142`` ms (0 when ``T`` is 0);
* decode: ``f`` = the decodes' context lengths summed (each request's prompt and the tokens it has
  sampled, the one this step computes included) over the host's KV capacity in tokens, at most 1 (0 when
  the capacity is unlimited), and ``max(1, -25.74 f^2 + 54.01 f + 5.74)`` ms.

The shape cannot be a :class:`StepTable`: the decode part follows the KV the decodes hold, not their
number, and the prefill part the rounding of the batch's means. bench/vs_dynamo.py checked it against
the package on single requests, chunked prompts, batches with cached prefixes and mixed steps.

Decode KV: after each decode step the request holds ``input_length + k`` tokens of KV (``k`` decode steps
done); every block they fill past the prompt's full blocks (``input_length // block_tokens``) is a new
block of the chain, cached on the host's GPU and pinned until the request ends, as vLLM, SGLang and
Dynamo cache full blocks of generated tokens. Its id, ``(request, position)``, is one no trace names:
a trace's ``hash_ids`` (Mooncake's) hash the prompt only, so a later turn that carries the answer names
its blocks with ids of its own and does not hit these; they take room and evict as any block does.
Lower tiers do not receive them.

``streams`` -- independent streams: up to ``max_running`` requests run at once, each at the full rates
below whatever else runs beside it (no batching slowdown):

* prefill time = tokens the host must compute / ``prefill_tokens_per_s``,
  plus, when some blocks come from the host tier, ``host_fetch_latency_ms`` +
  their bytes / ``host_bandwidth_gb_s``, and when some come from the pool,
  ``fetch_latency_ms`` + their bytes / ``pool_bandwidth_gb_s``; the first
  token appears when prefill ends (writes to lower tiers are not waited on);
* decode time = (``output_length`` - 1) / ``decode_tokens_per_s``: the first
  token comes out of prefill's last forward pass, as in vLLM, SGLang and
  Dynamo's mocker, and each later token is one decode step; the request ends
  (and frees its slot and its pinned blocks) when decode ends. Decode KV is neither cached nor
  counted against any capacity.

Tokens to compute (both models): the request's ``input_length`` less the tokens of its hit
blocks (any tier), at least 0; a request without ``input_length`` counts
``block_tokens`` per block.

Every default is the cost model's (:mod:`pyverify.cost.params`, where each
number's source or its ASSUMPTION label is written out); none is repeated here.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import asdict, dataclass

from pyverify.cost.params import (
    DEFAULT_BLOCK_TOKENS,
    DEFAULT_DECODE_ITL_MS,
    DEFAULT_DECODE_ITL_MS_AT_25,
    DEFAULT_FETCH_LATENCY_MS,
    DEFAULT_GPUS_PER_HOST,
    DEFAULT_HOST_BANDWIDTH_GB_S,
    DEFAULT_HOST_FETCH_LATENCY_MS,
    DEFAULT_KV_BYTES_PER_TOKEN,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    DEFAULT_MAX_RUNNING,
    DEFAULT_POOL_BANDWIDTH_GB_S,
    DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU,
)

#: Prefill tokens per second of one host: the cost model's R, about 12,292.
DEFAULT_PREFILL_TOKENS_PER_S = DEFAULT_PREFILL_TOKENS_PER_S_PER_GPU * DEFAULT_GPUS_PER_HOST

#: Decode tokens per second of one running request: 1000 / the cost model's inter-token latency, about 53.8.
DEFAULT_DECODE_TOKENS_PER_S = 1000.0 / DEFAULT_DECODE_ITL_MS

#: The service models: an engine's batched steps (the default of a timed replay), or independent streams.
STEPS, STREAMS = "steps", "streams"
SERVICE_MODELS = (STEPS, STREAMS)

#: Step timings of the ``steps`` model: the linear one from the sourced rates (or --step-table), and
#: Dynamo 1.6.1's mocker's default performance model.
LINEAR_TIMING, DYNAMO_TIMING = "linear", "dynamo"
STEP_TIMINGS = (LINEAR_TIMING, DYNAMO_TIMING)

#: How much longer a decode step gets per further decode in it, as a fraction of one decode alone:
#: NIM's inter-token latency at 25 running over that at 1, less 1, spread over the 24 further decodes.
DEFAULT_DECODE_GROWTH = (DEFAULT_DECODE_ITL_MS_AT_25 / DEFAULT_DECODE_ITL_MS - 1) / 24

#: Where each default comes from, for --help and the JSON output.
SOURCES = {
    "prefill_tokens_per_s": "NVIDIA NIM benchmark, Llama-3.3-70B on 2 x H100 TP2: 5000 tokens, TTFT 406.77 ms "
    "(docs.nvidia.com/nim/benchmarking/llm; pyverify.cost.params)",
    "decode_tokens_per_s": "the same NIM benchmark: inter-token latency 18.58 ms at concurrency 1 "
    "(21.83 ms at 5, 38.75 ms at 25: the step model's decode growth; streams model no batching slowdown)",
    "max_running": "ASSUMPTION: a small batch, no published source (vLLM's max_num_seqs; 8 as bench/vs_dynamo.py "
    "runs Dynamo's mocker)",
    "max_num_batched_tokens": "vLLM's default for its OpenAI-compatible server with chunked prefill "
    "(vllm/engine/arg_utils.py; pyverify.cost.params)",
    "decode_growth": "the NIM benchmark's inter-token latency, 18.58 ms at concurrency 1 and 38.75 ms at 25: "
    "a step of d decodes takes (1 + growth x (d - 1)) / decode rate",
    "step_timing": "linear: the rates above; dynamo: NVIDIA Dynamo 1.6.1 mocker's default performance model "
    "(ai-dynamo/dynamo lib/mocker/src/common/perf_model.rs, PerfModel::Polynomial)",
    "kv_bytes_per_token": "LLaMA3-70B, 16-bit KV, 320 KiB per token (Mooncake paper; pyverify.cost.params)",
    "pool_bandwidth_gb_s": "Mooncake Transfer Engine README, 87 GB/s on 4 x 200 Gbps RoCE",
    "fetch_latency_ms": "ASSUMPTION: 1 ms per pool fetch, no published source",
    "host_bandwidth_gb_s": "PCIe Gen5 x16 one way, 64 GB/s (NVIDIA H100 product page: 128 GB/s both ways)",
    "host_fetch_latency_ms": "ASSUMPTION: 0 ms per host-DRAM load (only bytes / bandwidth), no published source",
}


def dynamo_prefill_ms(chunks) -> float:
    """Dynamo 1.6.1's prefill time of one step's ``chunks``, ``(tokens already computed or cached,
    tokens computed now)`` per chunk: the batch timed by its means, rounded down as Dynamo rounds them."""
    chunks = [chunk for chunk in chunks if chunk[1] > 0]
    if not chunks:
        return 0.0
    n = len(chunks)
    prefix = sum(before for before, _ in chunks)
    through = prefix + sum(computed for _, computed in chunks)
    tokens = n * max(0, through // n - prefix // n)
    if not tokens:
        return 0.0
    return 4.209989e-07 * tokens**2 + 1.518344e-02 * tokens + 1.650142e01


def dynamo_decode_ms(context_tokens: int, capacity_tokens: int | None) -> float:
    """Dynamo 1.6.1's decode time of one step whose decodes hold ``context_tokens`` tokens between them,
    on a host of ``capacity_tokens`` tokens of KV (``None``: unlimited, never fuller)."""
    full = min(context_tokens / capacity_tokens, 1.0) if capacity_tokens else 0.0
    return max(-25.74 * full**2 + 54.01 * full + 5.74, 1.0)


@dataclass(frozen=True)
class StepTable:
    """A user's timing of a step: seconds of its prefill part by the step's prefill tokens, and of its
    decode part by its decodes, each read off ``(x, seconds)`` rows by linear interpolation (past the last
    row, along the line of the last two; below the first, towards 0 seconds at 0). No prefill tokens, or
    no decodes: that part takes no time."""

    prefill: tuple[tuple[float, float], ...]
    decode: tuple[tuple[float, float], ...]

    @staticmethod
    def _read(rows: tuple[tuple[float, float], ...], x: float) -> float:
        if x <= 0:
            return 0.0
        points = ((0.0, 0.0), *rows) if rows[0][0] > 0 else rows
        xs = [point[0] for point in points]
        at = min(max(bisect.bisect_right(xs, x), 1), len(points) - 1)
        (x0, y0), (x1, y1) = points[at - 1], points[at]
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    def prefill_seconds(self, tokens: int) -> float:
        return self._read(self.prefill, tokens)

    def decode_seconds(self, decodes: int) -> float:
        return self._read(self.decode, decodes)

    def to_json(self) -> dict:
        return {
            "prefill": [list(row) for row in self.prefill],
            "decode": [list(row) for row in self.decode],
        }


#: The most seconds a table row may give one part of a step: rows are whole counts apart, so a step
#: extrapolated past the last row stays finite however large the budget, and so do the sums of steps.
MAX_TABLE_SECONDS = 1e6


def read_step_table(path) -> StepTable:
    """``replay --step-table PATH``: JSON ``{"prefill": [[tokens, seconds], ...], "decode": [[decodes,
    seconds], ...]}``, each list of at least one row, ``x`` a whole number >= 1 and increasing, seconds
    from 0 to :data:`MAX_TABLE_SECONDS` and never falling (a bigger batch never takes less time).
    A bad file raises :class:`pyverify.errors.UserError` naming the file and the field."""
    import math

    from pyverify.errors import located

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise located(path, None, f"cannot read: {error.strerror or error}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise located(path, None, f"not JSON: {error}") from None
    if not isinstance(data, dict):
        raise located(path, None, 'expected an object {"prefill": [...], "decode": [...]}')
    unknown = sorted(set(data) - {"prefill", "decode"})
    if unknown:
        raise located(path, unknown[0], "unknown field (expected prefill and decode)")
    parts = {}
    for name in ("prefill", "decode"):
        rows = data.get(name)
        if not isinstance(rows, list) or not rows:
            raise located(path, name, "expected a non-empty list of [x, seconds] rows")
        checked = []
        for position, row in enumerate(rows):
            where = f"{name}[{position}]"
            if (
                not isinstance(row, list)
                or len(row) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)
            ):
                raise located(path, where, "expected [x, seconds], two numbers")
            if not isinstance(row[0], int) or row[0] < 1:
                raise located(path, where, f"x must be a whole number >= 1, got {row[0]!r}")
            x, seconds = float(row[0]), float(row[1])
            if not (math.isfinite(seconds) and 0 <= seconds <= MAX_TABLE_SECONDS):
                raise located(
                    path,
                    where,
                    f"seconds must be a number from 0 to {MAX_TABLE_SECONDS:g}, got {row[1]!r}",
                )
            if checked and x <= checked[-1][0]:
                raise located(path, where, "x must increase from row to row")
            if checked and seconds < checked[-1][1]:
                raise located(path, where, "seconds must not fall as x grows")
            checked.append((x, seconds))
        parts[name] = tuple(checked)
    return StepTable(parts["prefill"], parts["decode"])


@dataclass(frozen=True)
class ServiceModel:
    """Rates and limits of one host (every host is alike)."""

    prefill_tokens_per_s: float = DEFAULT_PREFILL_TOKENS_PER_S
    decode_tokens_per_s: float = DEFAULT_DECODE_TOKENS_PER_S
    max_running: int = DEFAULT_MAX_RUNNING
    block_tokens: int = DEFAULT_BLOCK_TOKENS
    kv_bytes_per_token: float = DEFAULT_KV_BYTES_PER_TOKEN
    pool_bandwidth_gb_s: float = DEFAULT_POOL_BANDWIDTH_GB_S
    fetch_latency_ms: float = DEFAULT_FETCH_LATENCY_MS
    host_bandwidth_gb_s: float = DEFAULT_HOST_BANDWIDTH_GB_S
    host_fetch_latency_ms: float = DEFAULT_HOST_FETCH_LATENCY_MS
    #: :data:`STEPS` or :data:`STREAMS` (what a timed replay runs; an untimed one runs neither).
    service: str = STEPS
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS
    decode_growth: float = DEFAULT_DECODE_GROWTH
    step_table: StepTable | None = None
    step_timing: str = LINEAR_TIMING

    def __post_init__(self) -> None:
        if self.service not in SERVICE_MODELS:
            raise ValueError(
                f"unknown service model {self.service!r}; expected one of {SERVICE_MODELS}"
            )
        if self.step_timing not in STEP_TIMINGS:
            raise ValueError(
                f"unknown step timing {self.step_timing!r}; expected one of {STEP_TIMINGS}"
            )
        if self.step_timing == DYNAMO_TIMING and self.step_table is not None:
            raise ValueError("a step table and the dynamo step timing exclude each other")

    @property
    def block_bytes(self) -> float:
        return self.block_tokens * self.kv_bytes_per_token

    def fetch_seconds(self, pool_blocks: int, host_blocks: int) -> float:
        """Loading ``host_blocks`` from host DRAM and ``pool_blocks`` from the pool."""
        seconds = 0.0
        if host_blocks:
            seconds += self.host_fetch_latency_ms / 1000.0 + host_blocks * self.block_bytes / (
                self.host_bandwidth_gb_s * 1e9
            )
        if pool_blocks:
            seconds += self.fetch_latency_ms / 1000.0 + pool_blocks * self.block_bytes / (
                self.pool_bandwidth_gb_s * 1e9
            )
        return seconds

    def prefill_seconds(
        self, input_tokens: int, hit_blocks: int, pool_blocks: int, host_blocks: int = 0
    ) -> float:
        """Prefill of a request with ``input_tokens``, ``hit_blocks`` of them cached in any tier
        (``host_blocks`` of those loaded from host DRAM, ``pool_blocks`` from the pool), alone on its host."""
        compute = max(0, input_tokens - hit_blocks * self.block_tokens)
        seconds = compute / self.prefill_tokens_per_s
        # Added term by term, in the order the compiled event loop adds them (its floats are equal).
        if host_blocks:
            seconds += self.host_fetch_latency_ms / 1000.0 + host_blocks * self.block_bytes / (
                self.host_bandwidth_gb_s * 1e9
            )
        if pool_blocks:
            seconds += self.fetch_latency_ms / 1000.0 + pool_blocks * self.block_bytes / (
                self.pool_bandwidth_gb_s * 1e9
            )
        return seconds

    def decode_seconds(self, output_tokens: int) -> float:
        """Decode after the first token: ``output_tokens - 1`` steps (prefill gives the first), alone."""
        return max(output_tokens - 1, 0) / self.decode_tokens_per_s

    def step_seconds(
        self,
        prefill_tokens: int,
        decodes: int,
        chunks=(),
        decode_context_tokens: int = 0,
        capacity_tokens: int | None = None,
    ) -> float:
        """One step of the ``steps`` model carrying ``prefill_tokens`` prefill tokens and ``decodes``
        decodes (loads not included). The ``dynamo`` timing also reads the step's prefill ``chunks``
        (``(tokens before, tokens computed)`` each), the context tokens its decodes hold, and the host's
        KV capacity in tokens (``None``: unlimited)."""
        if self.step_timing == DYNAMO_TIMING:
            milliseconds = dynamo_prefill_ms(chunks)
            if decodes:
                milliseconds += dynamo_decode_ms(decode_context_tokens, capacity_tokens)
            return milliseconds / 1000.0
        if self.step_table is not None:
            table = self.step_table
            return table.prefill_seconds(prefill_tokens) + table.decode_seconds(decodes)
        seconds = prefill_tokens / self.prefill_tokens_per_s
        if decodes:
            seconds += (1.0 + self.decode_growth * (decodes - 1)) / self.decode_tokens_per_s
        return seconds

    def to_json(self) -> dict:
        data = asdict(self)
        data["step_table"] = None if self.step_table is None else self.step_table.to_json()
        return {**data, "sources": SOURCES}
