"""The replay's speed: the Python event loop (replay_python) against the compiled replay, on a synthetic trace.

    python bench/replay_speed.py [--requests N] [--python-requests M] [--fleet F] [--capacity C] [--timed-only]

Measured: the time of one ``replay(...)`` call (``backend="python"`` on the first M requests, extrapolated
to N by the ratio N / M and printed as an extrapolation; ``backend="compiled"`` on all N, split into the
kernel alone and the whole call, which adds the dense ids and per-host stats). The trace:
bench/synthetic.py, cut to N requests; round-robin over F hosts, LRU GPU caches of C blocks, untimed.

Then the timed replay (``--timed-python-requests`` for its Python subset): the same requests 1 ms apart
(``--arrival-scale`` 10: 100 requests/s; the ``streams`` service model), each prompt 512 tokens per block and 1 output token (as
bench/trace_files.py writes them), kv-aware over F hosts with LRU GPU caches of C blocks, a host-DRAM tier
of ``--host-capacity`` blocks per host and a pool of ``--pool-capacity`` blocks: the compiled call, the
Python call on the subset (extrapolated, labelled), and the whole command ``pyverify replay FILE ...
--backend compiled --json`` on the same requests written as JSONL (reading the file and the bounds
printed beside the run included).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402
from synthetic import synthetic_trace  # noqa: E402

from pyverify.fleet.replay import replay  # noqa: E402
from pyverify.fleet.routers import Router  # noqa: E402
from pyverify.fleet.run import ReplaySettings  # noqa: E402
from pyverify.fleet.service import STREAMS, ServiceModel  # noqa: E402
from pyverify.inputs.columnar import ColumnarTrace  # noqa: E402
from pyverify.cache.lru_kernel import link_array, replay as lru_kernel, requests_by_cache  # noqa: E402


def trace_of(requests: int) -> ColumnarTrace:
    ids, lengths = synthetic_trace(
        40 * requests
    )  # ~27 references per request on average: enough for N requests
    if lengths.size < requests:
        raise SystemExit(f"the generator gave {lengths.size} requests, fewer than {requests}")
    return first_requests(ids, lengths[:requests], requests)


def first_requests(ids: np.ndarray, lengths: np.ndarray, requests: int, **columns) -> ColumnarTrace:
    """The first ``requests`` requests of the trace ``ids``/``lengths``, with per-request ``columns``."""
    lengths = np.asarray(lengths[:requests], dtype=np.int64)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cut = {
        name: np.asarray(values[:requests], dtype=np.float64) for name, values in columns.items()
    }
    return ColumnarTrace(
        "synthetic", np.asarray(ids[: int(offsets[-1])], dtype=np.int64), offsets, **cut
    )


def seconds(call) -> tuple[float, object]:
    begin = time.perf_counter()
    result = call()
    return time.perf_counter() - begin, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--python-requests", type=int, default=50_000)
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument("--capacity", type=int, default=2_000)
    parser.add_argument("--timed-python-requests", type=int, default=20_000)
    parser.add_argument("--host-capacity", type=int, default=8_000)
    parser.add_argument("--pool-capacity", type=int, default=200_000)
    parser.add_argument("--timed-only", action="store_true", help="skip the untimed comparison")
    args = parser.parse_args()
    trace = trace_of(args.requests)
    references = trace.n_references
    print(
        f"machine: {platform.node()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average at start {os.getloadavg()[0]:.2f}"
    )
    if not args.timed_only:
        untimed(args, trace, references)
    timed(args, trace, references)
    print(
        f"load average at the end: {os.getloadavg()[0]:.2f} (1 min), {os.getloadavg()[1]:.2f} (5 min)"
    )


def timed(args, trace, references) -> None:
    n = trace.n_requests
    arrival_ms = np.arange(n)
    inputs = 512 * trace.lengths
    outputs = np.ones(n)
    service = ServiceModel(service=STREAMS)  # what the compiled event loop runs
    settings = ReplaySettings(
        capacity=args.capacity,
        host_capacity=args.host_capacity,
        pool_capacity=args.pool_capacity,
        arrival_scale=10.0,
    )
    cuts = {}

    def call(requests, backend):
        if requests not in cuts:
            cuts[requests] = first_requests(
                trace.ids,
                trace.lengths,
                requests,
                timestamps=arrival_ms,
                input_tokens=inputs,
                output_tokens=outputs,
            )
        return replay(
            cuts[requests], Router("kv-aware", args.fleet), settings, service, backend=backend
        )

    print(
        f"timed: kv-aware over {args.fleet} hosts, LRU {args.capacity} blocks/host, host DRAM {args.host_capacity} "
        f"blocks/host, pool {args.pool_capacity} blocks, arrivals 1 ms apart x arrival scale 10, 1 output token"
    )
    call(100, "compiled")  # load the kernel
    subset = args.timed_python_requests
    python_s, python_run = seconds(lambda: call(subset, "python"))
    assert call(subset, "compiled") == python_run, "compiled and Python timed runs differ"
    call_s, run = seconds(lambda: call(n, "compiled"))
    extrapolated = python_s * n / subset
    print(
        f"python event loop, timed: {python_s:.2f} s on {subset:,} requests; extrapolated to {n:,} "
        f"(x {n / subset:g}, an extrapolation, not a run): {extrapolated:.1f} s"
    )
    print(
        f"compiled, timed: whole replay() call {call_s:.2f} s on {n:,} requests ({references:,} references)"
    )
    print(
        f"ratio (extrapolated python / compiled call): {extrapolated / call_s:.0f}x; equal runs checked on the "
        f"{subset:,}-request subset; hits GPU {run.gpu_hit_blocks / references:.4f}, DRAM "
        f"{run.host_hit_blocks / references:.4f}, pool {run.pool_hit_blocks / references:.4f}; "
        f"mean TTFT {sum(f - a for f, a in zip(run.first_token, run.arrival)) / n:.3f} s"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(
                f'{{"timestamp": {index}, "input_length": {inputs[index]}, "output_length": 1, '
                f'"hash_ids": [{", ".join(map(str, chain))}]}}\n'
                for index, chain in enumerate(trace.chains())
            )
        command = [
            sys.executable,
            "-m",
            "pyverify",
            "replay",
            str(path),
            "--fleet",
            str(args.fleet),
            "--capacity",
            str(args.capacity),
            "--host-capacity",
            str(args.host_capacity),
            "--pool-capacity",
            str(args.pool_capacity),
            "--router",
            "kv-aware",
            "--arrival-scale",
            "10",
            "--service",
            "streams",
            "--backend",
            "compiled",
            "--json",
        ]
        command_s, done = seconds(
            lambda: subprocess.run(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
        )
        assert done.returncode == 0, done.stderr
    print(
        f"whole command, timed: pyverify replay FILE --fleet {args.fleet} --capacity {args.capacity} --host-capacity "
        f"{args.host_capacity} --pool-capacity {args.pool_capacity} --router kv-aware --arrival-scale 10 --service streams --backend compiled "
        f"--json: {command_s:.1f} s wall (reading the JSONL and the bounds included)"
    )


def untimed(args, trace, references) -> None:
    n = trace.n_requests
    print(
        f"trace: bench/synthetic.py, {n:,} requests, {references:,} references; "
        f"round-robin over {args.fleet} hosts, LRU {args.capacity} blocks/host, untimed"
    )
    settings = ReplaySettings(capacity=args.capacity, timed=False)

    def call(requests, backend):
        cut = first_requests(trace.ids, trace.lengths, requests)
        return replay(cut, Router("round-robin", args.fleet), settings, backend=backend)

    call(100, "compiled")  # load the kernel
    subset = min(args.python_requests, n)
    python_s, python_run = seconds(lambda: call(subset, "python"))
    assert call(subset, "compiled") == python_run, "compiled and Python runs differ"
    call_s, run = seconds(
        lambda: replay(trace, Router("round-robin", args.fleet), settings, backend="compiled")
    )
    ids, universe, starts, order, bounds = requests_by_cache(
        trace.ids, trace.offsets, np.arange(n) % args.fleet
    )
    kernel_s, _ = seconds(
        lambda: lru_kernel(ids, starts, order, bounds, link_array(universe), args.capacity, True)
    )
    extrapolated = python_s * n / subset
    print(
        f"python event loop: {python_s:.2f} s on {subset:,} requests; extrapolated to {n:,} "
        f"(x {n / subset:g}, an extrapolation, not a run): {extrapolated:.1f} s"
    )
    print(
        f"compiled: whole replay() call {call_s:.2f} s, kernel alone {kernel_s:.2f} s, on {n:,} requests"
    )
    print(
        f"ratio (extrapolated python / compiled call): {extrapolated / call_s:.0f}x; "
        f"equal runs checked on the {subset:,}-request subset; hit rate {run.hit_blocks / run.references:.4f}"
    )


if __name__ == "__main__":
    main()
