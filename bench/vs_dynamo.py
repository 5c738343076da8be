"""Peer benchmark: the same trace through NVIDIA Dynamo's offline replay and ``pyverify replay``.

Needs the ``dynamo`` extra (``pip install 'pyverify[dynamo]'``: ai-dynamo-runtime 1.6.1, whose mocker
engines run a vLLM-style block pool and scheduler, and its KV router, on CPU). Never part of CI.

    python bench/vs_dynamo.py [TRACE | --generate BLOCK_REFERENCES] [--workers 10] [--capacity 500]
        [--runs 5] [--per-request PATH] [--round-robin-only]

Settings matched on both sides: block size 512 tokens; capacity per worker (unlimited, and
--capacity blocks), "unlimited" being 200,000 blocks per worker (more than the trace references);
both run their vLLM block pool and scheduler (pyverify's ``--eviction vllm`` under its ``steps``
service model); 8 requests running per worker (``max_num_seqs``), 8192 tokens a step
(``max_num_batched_tokens``) with chunked prefill; arrivals as the trace gives them; and the same
timing: Dynamo's mocker runs its default performance model, pyverify ``--step-timing dynamo``, the
same model (pyverify.fleet.service: a step's prefill by its chunks, its decode by the KV its
decodes hold over the worker's capacity).

Printed:
* round-robin at each capacity: requests on the same worker, requests whose hit blocks are equal
  (Dynamo's reused input tokens // block size against pyverify's GPU hit blocks; decode KV cached on
  both sides), hit blocks on each side, and the TTFT difference (pyverify - Dynamo) per request:
  median, p90 and largest of its absolute value, and the share within 1% of Dynamo's TTFT;
* the KV router's choices: Dynamo's run replayed into pyverify's ``dynamo`` books (its workers,
  overlaps, first tokens and ends), and pyverify's cost of each chosen worker against the logit
  Dynamo logged for it;
* the KV router at each capacity, Dynamo's ``kv_router`` over --runs runs (its ties are random)
  against pyverify's ``dynamo`` router: hit rate (hit blocks / block references), share of requests
  sent to a worker holding the longest cached prefix of the request's hashed blocks, and requests
  per worker (fewest..most).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_TRACE = "/work/shared/data/mooncake/synthetic_trace.jsonl"
BLOCK = 512
MAX_NUM_SEQS = 8
MAX_NUM_BATCHED_TOKENS = 8192
UNLIMITED_BLOCKS = 200_000  # more blocks per worker than the trace references: nothing is evicted


def dynamo_run(trace: str, workers: int, capacity: int | None, router_mode: str):
    """Dynamo's per-request records and its log (the KV router logs each choice at INFO)."""
    from dynamo._core import run_mocker_trace_replay

    engine = {
        "block_size": BLOCK,
        "num_gpu_blocks": capacity or UNLIMITED_BLOCKS,
        "max_num_seqs": MAX_NUM_SEQS,
        "max_num_batched_tokens": MAX_NUM_BATCHED_TOKENS,
        "enable_prefix_caching": True,
        "enable_chunked_prefill": True,
    }
    log = tempfile.TemporaryFile()
    saved = os.dup(2)  # the Rust side logs to file descriptor 2
    os.dup2(log.fileno(), 2)
    try:
        result = run_mocker_trace_replay(
            [trace],
            extra_engine_args={"engine": engine, "num_gpu_blocks_is_explicit": True},
            num_workers=workers,
            router_mode=router_mode,
            trace_block_size=BLOCK,
            capture_per_request=True,
        )
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    log.seek(0)
    return result.per_request, log.read().decode(errors="replace")


SELECTED = re.compile(
    r'request_id="([^"]+)" worker_id=(\d+).*?logit=([-\d.e+]+) effective_cached_blocks=([\d.]+)'
)


def check_dynamo_choices(trace, instance, workers, capacity):
    """pyverify's dynamo cost of the worker Dynamo chose, against the cost Dynamo logged for it.

    pyverify's books are fed Dynamo's own run: each request is recorded on Dynamo's worker with the
    overlap Dynamo saw, its prefill ends at Dynamo's first token and its blocks leave at Dynamo's end.
    Equal costs on every request mean the same cost function and the same books."""
    from pyverify.fleet.routers import PeerDecision, RouterOptions, dynamo_costs_of_decisions

    records, log = dynamo_run(trace, workers, capacity, "kv_router")
    logged = {}
    for line in log.splitlines():
        match = SELECTED.search(re.sub(r"\x1b\[[0-9;]*m", "", line))
        if match:
            logged[match.group(1)] = (
                int(match.group(2)),
                float(match.group(3)),
                float(match.group(4)),
            )
    ordered = in_trace_order(records, instance)
    decisions = []
    for record in ordered:
        worker, _, cached = logged[record["uuid"]]
        decisions.append(
            PeerDecision(
                worker,
                int(cached),
                record["input_length"],
                record["arrival_time_ms"],
                record["first_token_ms"],
                record["terminal_time_ms"],
            )
        )
    ours = dynamo_costs_of_decisions(
        workers, instance.chains, decisions, RouterOptions(block_tokens=BLOCK)
    )
    equal, first_unequal = 0, None
    for index, (record, cost) in enumerate(zip(ordered, ours)):
        logit = logged[record["uuid"]][1]
        if abs(cost - logit) <= 1e-6 * max(1.0, abs(logit)):
            equal += 1
        elif first_unequal is None:
            first_unequal = (index, decisions[index].host, logit, cost)
    label = "unlimited" if capacity is None else f"{capacity} blocks/worker"
    print(
        f"KV router, {label}: pyverify's dynamo cost of Dynamo's chosen worker equals the logit "
        f"Dynamo logged on {equal}/{len(records)} requests"
    )
    if first_unequal is not None:
        print("  first unequal (request, worker, Dynamo, pyverify):", first_unequal)


def in_trace_order(records, instance):
    """Dynamo's records put back in trace order, matched on (arrival ms, input and output length)."""
    waiting: dict[tuple, list] = {}
    for record in sorted(records, key=lambda record: record["arrival_time_ms"]):
        key = (round(record["arrival_time_ms"]), record["input_length"], record["output_length"])
        waiting.setdefault(key, []).append(record)
    ordered = []
    for extra in instance.extra:
        key = (round(extra["arrival_ms"]), extra["input_tokens"], extra["output_tokens"])
        ordered.append(waiting[key].pop(0))
    return ordered


def pyverify_run(instance, workers: int, capacity: int | None, router_name: str):
    """pyverify's run, and per request whether its host held a longest cached prefix at routing."""
    from dataclasses import replace

    from pyverify.fleet.replay import replay
    from pyverify.fleet.routers import Router, RouterOptions
    from pyverify.fleet.run import ReplaySettings
    from pyverify.fleet.service import DYNAMO_TIMING, ServiceModel
    from pyverify.inputs.columnar import ColumnarTrace

    longest: list[bool] = []

    class Recording(Router):
        def pick(self, index, chain, caches, load, routed, now=0.0, input_tokens=None):
            tokens = len(chain) * BLOCK if input_tokens is None else input_tokens
            hashed = chain[: min(len(chain), tokens // BLOCK)]
            overlaps = [cache.prefix_hits(hashed) for cache in caches]
            host = super().pick(index, chain, caches, load, routed, now, input_tokens)
            longest.append(overlaps[host] == max(overlaps))
            return host

    service = ServiceModel(
        max_running=MAX_NUM_SEQS,
        block_tokens=BLOCK,
        max_num_batched_tokens=MAX_NUM_BATCHED_TOKENS,
        step_timing=DYNAMO_TIMING,
    )
    # The engine reads each prompt's tokens in blocks of BLOCK tokens, as Dynamo's mocker does.
    trace = replace(ColumnarTrace.from_instance(instance), block_size_tokens=BLOCK)
    settings = ReplaySettings(capacity=capacity or UNLIMITED_BLOCKS, eviction="vllm")
    router = Recording(router_name, workers, RouterOptions(block_tokens=BLOCK))
    run = replay(trace, router, settings, service, backend="python")
    return run, longest


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def compare_round_robin(trace, instance, workers, capacity, lines):
    dynamo = in_trace_order(dynamo_run(trace, workers, capacity, "round_robin")[0], instance)
    run, _ = pyverify_run(instance, workers, capacity, "round-robin")
    n = len(instance.chains)
    for index, record in enumerate(dynamo):
        lines.append(
            {
                "request": index,
                "router": "round-robin",
                "capacity": capacity,
                "worker": [run.host_of[index], record["decode_worker_idx"]],
                "hit_blocks": [run.gpu_hits[index], record["reused_input_tokens"] // BLOCK],
                "ttft_ms": [
                    (run.first_token[index] - run.arrival[index]) * 1000.0,
                    record["ttft_ms"],
                ],
            }
        )
    theirs = [record["reused_input_tokens"] // BLOCK for record in dynamo]
    ours = run.gpu_hits
    equal = sum(a == b for a, b in zip(theirs, ours))
    diffs, within = [], 0
    for index, record in enumerate(dynamo):
        ttft = (run.first_token[index] - run.arrival[index]) * 1000.0
        diff = ttft - record["ttft_ms"]
        diffs.append(diff)
        within += abs(diff) <= 0.01 * record["ttft_ms"]
    same_worker = sum(
        run.host_of[index] == record["decode_worker_idx"] for index, record in enumerate(dynamo)
    )
    largest = max(range(n), key=lambda index: abs(diffs[index]))
    label = "unlimited" if capacity is None else f"{capacity} blocks/worker"
    print(f"round-robin, {label}:")
    print(
        f"  same worker on {same_worker}/{n} requests; hit blocks equal on {equal}/{n} requests "
        f"(pyverify {sum(ours)}, Dynamo {sum(theirs)})"
    )
    print(
        f"  TTFT pyverify - Dynamo: median {statistics.median(diffs):+.1f} ms, "
        f"p90 |diff| {percentile([abs(d) for d in diffs], 0.9):.1f} ms, "
        f"largest |diff| {abs(diffs[largest]):.2g} ms (request {largest}, Dynamo's TTFT "
        f"{dynamo[largest]['ttft_ms']:.1f} ms); within 1% on {within}/{n}"
    )


def kv_measures(hosts, hits, references, longest, workers):
    counts = [0] * workers
    for host in hosts:
        counts[host] += 1
    return (
        sum(hits) / references,
        sum(longest) / len(longest),
        min(counts),
        max(counts),
    )


def compare_kv(trace, instance, workers, capacity, runs):
    references = sum(map(len, instance.chains))
    label = "unlimited" if capacity is None else f"{capacity} blocks/worker"
    print(f"KV router, {label}:")
    seen = []
    for attempt in range(runs):
        records = in_trace_order(dynamo_run(trace, workers, capacity, "kv_router")[0], instance)
        hosts = [record["decode_worker_idx"] for record in records]
        hits = [record["reused_input_tokens"] // BLOCK for record in records]
        longest = []
        for record in records:
            route = record["routing_history"][-1]
            longest.append(
                route["selected_overlap_blocks"] == route["best_available_overlap_blocks"]
            )
        rate, share, low, high = kv_measures(hosts, hits, references, longest, workers)
        seen.append((rate, share))
        print(
            f"  Dynamo kv_router run {attempt + 1}: hit rate {rate:.4f}, longest-prefix share "
            f"{share:.3f}, requests per worker {low}..{high}"
        )
    run, longest = pyverify_run(instance, workers, capacity, "dynamo")
    rate, share, low, high = kv_measures(run.host_of, run.gpu_hits, references, longest, workers)
    print(
        f"  pyverify dynamo:          hit rate {rate:.4f}, longest-prefix share {share:.3f}, "
        f"requests per worker {low}..{high}"
    )
    rates, shares = [r for r, _ in seen], [s for _, s in seen]
    inside = [
        f"{name} {'inside' if min(values) <= value <= max(values) else 'outside'} "
        f"[{min(values):.4f}, {max(values):.4f}]"
        for name, value, values in (("hit rate", rate, rates), ("share", share, shares))
    ]
    print(f"  pyverify against the {runs} Dynamo runs: " + "; ".join(inside))


def write_generated_trace(path: Path, block_references: int, workers: int) -> None:
    """bench/synthetic.py's prefix-closed trace of ``block_references`` blocks as Mooncake JSONL (seed 0):
    each request's input fills its blocks but for 0..511 tokens of the last, its output is 1..300
    tokens, and arrivals are Poisson at the Mooncake synthetic trace's load per worker (3,993 requests
    over 1,022 s on 10 workers), at whole and distinct milliseconds."""
    import numpy as np
    from synthetic import synthetic_trace

    ids, lengths = synthetic_trace(block_references, seed=0)
    rng = np.random.default_rng(0)
    n = len(lengths)
    rate_per_s = 3993 / 1022.025 / 10 * workers
    arrivals = np.cumsum(rng.exponential(1000.0 / rate_per_s, n)).astype(np.int64)
    arrivals = (
        arrivals - arrivals[0] + np.arange(n)
    )  # from 0 (as Dynamo counts), distinct, in order
    short = rng.integers(0, BLOCK, n)
    outputs = rng.integers(1, 301, n)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    flat = ids.tolist()
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(n):
            chain = flat[bounds[index] : bounds[index + 1]]
            record = {
                "timestamp": int(arrivals[index]),
                "input_length": len(chain) * BLOCK - int(short[index]),
                "output_length": int(outputs[index]),
                "hash_ids": chain,
            }
            handle.write(json.dumps(record) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=DEFAULT_TRACE)
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--capacity", type=int, default=500, help="blocks per worker (default 500)")
    parser.add_argument("--runs", type=int, default=5, help="Dynamo KV-router runs (default 5)")
    parser.add_argument(
        "--per-request",
        metavar="PATH",
        help="write round-robin's requests side by side, one JSON line each: request, router, "
        "capacity, and [pyverify, Dynamo] pairs of worker, hit_blocks and ttft_ms",
    )
    parser.add_argument(
        "--generate",
        type=int,
        metavar="BLOCK_REFERENCES",
        help="instead of TRACE, a generated trace of this many block references "
        "(bench/synthetic.py, seed 0; see write_generated_trace)",
    )
    parser.add_argument(
        "--round-robin-only",
        action="store_true",
        help="stop after the round-robin comparisons (skip the KV router's)",
    )
    args = parser.parse_args(argv)
    try:
        import dynamo._core  # noqa: F401
    except ImportError:
        print("needs ai-dynamo-runtime 1.6.1: pip install 'pyverify[dynamo]'", file=sys.stderr)
        return 2
    from pyverify.inputs.load import load_described

    started = time.perf_counter()
    if args.generate:
        folder = tempfile.TemporaryDirectory(prefix="vs_dynamo-")  # removed when the run ends
        args.trace = str(Path(folder.name) / f"generated-{args.generate}.jsonl")
        write_generated_trace(Path(args.trace), args.generate, args.workers)
    instance = load_described(args.trace).instance
    print(
        f"{Path(args.trace).name}: {len(instance.chains)} requests, {args.workers} workers, "
        f"block {BLOCK} tokens, max_num_seqs {MAX_NUM_SEQS}, max_num_batched_tokens "
        f"{MAX_NUM_BATCHED_TOKENS}; {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    lines: list[dict] = []
    for capacity in (None, args.capacity):
        compare_round_robin(args.trace, instance, args.workers, capacity, lines)
    if args.per_request:
        from pyverify.fileio import write_text_atomic

        write_text_atomic(args.per_request, "".join(json.dumps(line) + "\n" for line in lines))
    if args.round_robin_only:
        print(f"({time.perf_counter() - started:.0f} s)")
        return 0
    for capacity in (None, args.capacity):
        check_dynamo_choices(args.trace, instance, args.workers, capacity)
    for capacity in (None, args.capacity):
        compare_kv(args.trace, instance, args.workers, capacity, args.runs)
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
