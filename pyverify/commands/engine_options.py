"""``--engine`` and ``--scheduler``: counting big traces without the Python simulators.

``simulate`` without a capacity asks a set-count question (pooled misses =
distinct blocks; per-host misses under a static routing = distinct (host,
block) pairs), which the engines of :mod:`pyverify.engines` answer on flat
arrays or out of core. This module holds the flags and the handler; the
commands call :func:`counts_apply` and :func:`run_simulate_counts`.
"""

from __future__ import annotations

import os
from pathlib import Path

from pyverify.engines import AUTO_ENGINE_BYTES, ENGINES
from pyverify.errors import UserError
from pyverify.sim.routing import DEFAULT_TRACE_FLEET
from pyverify.sim.simulate import PER_HOST


def add_engine_options(parser) -> None:
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="how uncapacitated counts are computed on a trace: numpy (in memory), duckdb (out of core, "
                             "on Parquet), dask (on a cluster); auto: the simulator below 256 MiB, above it numpy, or duckdb for a "
                             "Parquet file of 1 GiB or more. "
                             "Capacitated runs and --witness use the simulator")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="with --engine dask: the dask.distributed scheduler to use, e.g. tcp://10.0.0.5:8786 "
                             "(default: start a local cluster of 2 workers)")


def is_trace_file(path: str) -> bool:
    """A trace file the engines read directly: Parquet, CSV or Mooncake JSONL, told apart by content."""
    from pyverify.inputs.columnar import is_hash_ids_csv, is_hash_ids_jsonl, is_parquet

    return is_parquet(path) or is_hash_ids_csv(path) or is_hash_ids_jsonl(path)


def counts_apply(args) -> bool:
    """Whether ``simulate`` runs on an engine: asked for (and possible), or ``auto`` on a trace file."""
    simple = args.capacity is None and not args.witness and args.routing != "prefix-affinity"
    if args.scheduler and args.engine != "dask":
        raise UserError("--scheduler: only with --engine dask")
    if args.engine == "auto":
        # Small files go through the simulator, which also reports token hit rates and
        # measurement windows; an engine takes over where loading a trace into Python
        # would dominate (pyverify.engines.AUTO_ENGINE_BYTES).
        return simple and is_trace_file(args.instance) and _file_size(args.instance) >= AUTO_ENGINE_BYTES
    if args.capacity is not None or args.witness:
        raise UserError(f"--engine {args.engine}: the engines count uncapacitated caches (distinct blocks); "
                        "drop --capacity/--witness to use them, or drop --engine to simulate")
    return True


def run_simulate_counts(args, print_json) -> int:
    """``simulate`` by an engine: the same figures as the simulator, uncapacitated."""
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.load import load_input

    from pyverify.engines.select import choose, count
    from pyverify.inputs.columnar import MissingExtra

    engine = choose(args.engine, args.instance)
    trace = None
    if not is_trace_file(args.instance):
        trace = ColumnarTrace.from_instance(load_input(args.instance))
    policy = None
    fleet = args.fleet
    if args.model == PER_HOST or (trace is not None and trace.hosts is not None):
        # A trace file with no hosts has no routing of its own: round-robin, as sweep and mrc default to.
        policy = args.routing or ("round-robin" if trace is None and not _has_hosts(args.instance) else "given")
        if fleet is None:
            fleet = int(trace.hosts.max()) + 1 if trace is not None and trace.hosts is not None else None
        if fleet is None and policy in ("given", "fold"):
            fleet = _own_fleet(args.instance)
        fleet = fleet or DEFAULT_TRACE_FLEET  # an input that names no fleet: 16, as in every command
    try:
        counts = count(args.instance, engine, fleet, policy, args.seed, args.scheduler, trace)
    except MissingExtra:
        raise
    except UserError as error:
        text = str(error)
        plain = text.startswith((str(args.instance), "--"))  # already names its file, or names a flag
        raise UserError(text if plain else f"{args.instance}: routing: {text}") from None
    misses = counts.per_host_misses if args.model == PER_HOST else counts.pooled_misses
    hits = counts.references - misses
    result = {
        "instance": Path(args.instance).stem if trace is None else trace.name,
        "sha256": None,
        "engine": engine,
        "model": args.model,
        "fleet_size": fleet if policy is not None else None,
        "routing": policy,
        "capacity": None,
        "eviction": None,
        "references": counts.references,
        "hits": hits,
        "misses": misses,
        "hit_rate": hits / counts.references if counts.references else 0.0,
    }
    if args.json:
        print_json(result)
    else:
        name = result["instance"]
        if policy is None:
            print(f"{name}: one pooled demand cache, uncapacitated (no routing needed: every host reads the pool); engine {engine}")
        else:
            print(f"{name}: {args.model} demand cache(s), uncapacitated, {fleet} hosts ({policy} routing); engine {engine}")
        print(f"  block references {counts.references}")
        print(f"  hits             {hits}")
        print(f"  misses           {misses}")
        print(f"  hit rate         {result['hit_rate']:.4f}")
    return 0


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _has_hosts(path: str) -> bool:
    """Whether a trace file has a host column (Parquet or CSV); JSONL traces never do."""
    from pyverify.inputs.columnar import is_hash_ids_csv, is_parquet

    if is_parquet(path):
        from pyverify.inputs.columnar import require

        return "host" in require("pyarrow.parquet").read_schema(str(path)).names
    if is_hash_ids_csv(path):
        with open(path, "rb") as handle:
            header = handle.readline().decode("utf-8", "replace")
        return "host" in [name.strip().strip('"') for name in header.split(",")]
    return False


def _own_fleet(path: str) -> int | None:
    from pyverify.inputs.columnar import read_columnar

    trace = read_columnar(path)
    return None if trace.hosts is None else int(trace.hosts.max()) + 1


__all__ = ["add_engine_options", "counts_apply", "run_simulate_counts"]
