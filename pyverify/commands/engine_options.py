"""``--backend`` and ``--scheduler``: big traces without the Python simulators.

``simulate`` without a capacity asks a set-count question (pooled misses =
distinct blocks; per-host misses under a static routing = distinct (host,
block) pairs), which the engines of :mod:`pyverify.engines` answer on flat
arrays or out of core. With a capacity, a window or a witness it needs a
run, which a trace file held as arrays gets from the compiled kernels
(:mod:`pyverify.commands.array_simulate`). This module holds the flags and
decides: the commands call :func:`counts_apply`, :func:`arrays_apply` and
:func:`run_simulate_counts`.
"""

from __future__ import annotations

from pyverify.engines import ENGINES
from pyverify.commands.argtypes import add_old_spelling
from pyverify.commands.input_options import needs_instance_reader
from pyverify.commands.output import print_json
from pyverify.errors import RequestError, UserError
from pyverify.sim.names import PER_HOST, default_fleet_for, default_policy_for


def add_engine_options(parser) -> None:
    parser.add_argument(
        "--backend",
        choices=ENGINES,
        default="auto",
        help="how the counts are computed (the answer is the same). auto (default): a Parquet, CSV or Mooncake JSONL trace is read as "
        "arrays and run there (compiled replay with a capacity), with the same report as the per-record "
        "simulator; an uncapacitated count of a Parquet file of 1 GiB or more goes to duckdb. python: the "
        "per-record simulator on Python chains (every input; the reference the array path is tested "
        "against). numpy: as auto, in memory, naming the backend in the report (a plain count reports "
        "blocks only). duckdb (out of core, on Parquet) counts uncapacitated caches only, with the same "
        "report (window and tokens, no content digest); dask (on a cluster) counts uncapacitated caches "
        "over the whole trace, in blocks. Instance files, chat logs, --block-size, --tokenizer and prefix-affinity routing use the "
        "simulator",
    )
    add_old_spelling(parser, "--engine", "--backend", "backend", choices=ENGINES)
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --backend dask: the dask.distributed scheduler to use, e.g. tcp://10.0.0.5:8786 "
        "(default: start a local cluster of 2 workers)",
    )


def is_trace_file(path: str) -> bool:
    """A trace file the engines read directly: Parquet, CSV or Mooncake JSONL, told apart by content."""
    from pyverify.inputs.columnar import is_hash_ids_csv, is_hash_ids_jsonl, is_parquet

    return is_parquet(path) or is_hash_ids_csv(path) or is_hash_ids_jsonl(path)


def counts_apply(args) -> bool:
    """Whether ``simulate`` is a plain count on an engine: asked for (and possible), or ``auto`` on a Parquet file
    of :data:`~pyverify.engines.AUTO_DUCKDB_BYTES` or more (out of core, by DuckDB).

    A count answers only the uncapacitated question over the whole trace, in
    blocks. Anything more (a capacity in any unit, a measurement window, a
    witness) needs a run: :func:`arrays_apply` or the simulator.
    """
    needs_a_run = (
        _capacitated(args) or args.witness
    )  # DuckDB also measures a window; Dask counts the whole trace
    if args.scheduler and args.backend != "dask":
        raise UserError("--scheduler: only with --backend dask")
    if args.backend == "python":
        return False
    if args.backend == "auto":
        from pyverify.inputs.columnar import is_parquet

        # Only a big Parquet file goes to DuckDB (engines.select.choose): asked first, so that a JSONL trace is
        # not looked at twice here (arrays_apply looks next) and the engines' module is not imported for it.
        if needs_a_run or args.routing == "prefix-affinity" or not is_parquet(args.instance):
            return False
        if needs_instance_reader(args) or not is_trace_file(args.instance):
            return False
        from pyverify.engines import choose

        return choose("auto", args.instance) == "duckdb"
    if args.backend == "numpy":
        return not (needs_a_run or _windowed(args))
    if needs_a_run or (args.backend == "dask" and _windowed(args)):
        what = (
            "--capacity*/--witness"
            if args.backend == "duckdb"
            else "--capacity*/--warmup-fraction/--witness"
        )
        raise UserError(
            f"--backend {args.backend}: the out-of-core engines count uncapacitated caches "
            f"{'' if args.backend == 'duckdb' else 'over the whole trace '}(distinct blocks); drop {what} to use "
            "them, or use --backend numpy or auto, which replay a capacity on arrays"
        )
    return True


def arrays_apply(args) -> bool:
    """Whether ``simulate`` runs on the trace held as arrays (:mod:`pyverify.commands.array_simulate`).

    For every trace file (Parquet, CSV, Mooncake JSONL, told by content)
    under ``--backend auto`` or ``numpy``, with a static routing, read without
    re-blocking or tokenizing. An uncapacitated run is counted by numpy; a
    capacitated one is replayed by the compiled kernels, so it needs numba
    (without it, the simulator answers, with the same report). Elsewhere
    (``--backend python``, instance files, chat logs) the simulator answers.
    """
    if args.backend not in ("auto", "numpy") or args.routing == "prefix-affinity":
        return False
    if needs_instance_reader(args) or not is_trace_file(args.instance):
        return False
    return not _capacitated(args) or kernels_available()


def kernels_available() -> bool:
    """Whether the compiled kernels can run here (imports numba: call only when a run is due)."""
    from pyverify.sim.kernels import available

    return available()


#: A trace file of this many bytes is read after numba is loaded when the command will run the compiled kernels
#: anyway: the reader then takes its compiled passes too (:func:`pyverify.inputs.columnar.compiled.worth_it`),
#: whose start-up the kernels pay already. Either size is about 1M references (the curve's break-even,
#: :data:`pyverify.sim.kernels.CURVE_BREAK_EVEN`): Mooncake JSONL or CSV takes about 9 bytes a reference,
#: Parquet about 1.3 (bench/trace_files.py). A smaller trace is read by numpy first.
KERNELS_BEFORE_READING_BYTES = 8 << 20
KERNELS_BEFORE_READING_PARQUET_BYTES = 1 << 20


def load_kernels_before_reading(path: str) -> None:
    """Load numba before reading ``path`` when it is big enough that the kernels will run on it (results are the
    same either way; on a 5M-reference JSONL ``mrc`` reads by the compiled byte parser instead of pyarrow).

    Mooncake JSONL is read while numba loads on a second thread (:func:`pyverify.inputs.columnar.compiled.load_beside`):
    its reader imports nothing meanwhile. For Parquet and CSV, whose readers import pyarrow (which shares
    modules with numba's import), numba is loaded first, on this thread."""
    import os

    from pyverify.inputs.columnar import is_hash_ids_jsonl, is_parquet

    try:
        size = os.stat(path).st_size
        if (
            size < KERNELS_BEFORE_READING_PARQUET_BYTES
        ):  # the smaller size: no file's head need be read
            return
        parquet = is_parquet(path)
        if size < (
            KERNELS_BEFORE_READING_PARQUET_BYTES if parquet else KERNELS_BEFORE_READING_BYTES
        ):
            return
        jsonl = not parquet and is_hash_ids_jsonl(path)
    except OSError:
        return  # the reader names the file
    if not jsonl:
        kernels_available()
        return
    from pyverify.inputs.columnar.compiled import load_beside, numba_loaded

    if not numba_loaded():
        load_beside()


def _capacitated(args) -> bool:
    return any(
        getattr(args, name, None) is not None
        for name in ("capacity", "capacity_tokens", "capacity_gib")
    )


def _windowed(args) -> bool:
    return bool(getattr(args, "warmup_fraction", 0.0))


def add_trace_engine_option(parser) -> None:
    """``--backend`` for the commands that replay a trace on arrays as ``simulate`` does (``mrc``, ``budgets``)."""
    parser.add_argument(
        "--backend",
        choices=TRACE_ENGINES,
        default="auto",
        help="how a trace file is read and replayed (the answer is the same). auto (default): a "
        "Parquet, CSV or Mooncake JSONL trace is read as arrays, at any size, and replayed by the "
        "compiled kernels, with the same report as the per-record path. numpy: the same, naming the "
        "backend in the report. python: the per-record path on Python chains (every input; the "
        "reference the array path is tested against). Instance files, chat logs, --block-size and "
        "--tokenizer are read per record; without numba, so is every input",
    )
    add_old_spelling(parser, "--engine", "--backend", "backend", choices=TRACE_ENGINES)


#: The ``--backend`` choices of :func:`add_trace_engine_option`.
TRACE_ENGINES = ("auto", "numpy", "python")


def trace_on_arrays(args, needs_kernels: bool = True) -> bool:
    """Whether ``mrc`` or ``budgets`` reads its input as arrays: a trace file (by content, at any size) under
    ``--backend auto`` or ``numpy``, read without re-blocking or tokenizing, and (``needs_kernels``: for a replay)
    with numba installed. That is asked without importing numba: loading it (and its cached kernels) costs a
    second or more, which a small trace would pay in its reader too, for nothing."""
    if args.backend == "python" or not is_trace_file(args.instance) or needs_instance_reader(args):
        return False
    if not needs_kernels:
        return True
    from importlib.util import find_spec

    return find_spec("numba") is not None


def run_simulate_counts(args) -> int:
    """``simulate`` by an engine: the same figures as the simulator, uncapacitated."""
    from pyverify.commands.input_options import identity_of, load_described_with
    from pyverify.inputs.columnar import ColumnarTrace
    from pyverify.inputs.stream import stem_of

    from pyverify.engines.select import choose, count
    from pyverify.inputs.columnar import MissingExtra
    from pyverify.inputs.columnar.digest import content_sha256

    engine = choose(args.backend, args.instance)
    trace, identity = None, {}
    if is_trace_file(args.instance) and not needs_instance_reader(
        args
    ):  # read by the engine itself
        gives_hosts = _has_hosts(args.instance)
        own_fleet = _own_fleet(args.instance) if gives_hosts else None
    else:
        from pyverify.sim.routing import default_fleet

        loaded = load_described_with(args, args.instance)
        instance = loaded.instance
        identity = identity_of(loaded)  # an instance file's canonical SHA-256 as well
        trace = ColumnarTrace.from_instance(instance)
        gives_hosts, own_fleet = instance.routing is not None, default_fleet(instance)
    policy = None
    fleet = args.fleet
    if args.model == PER_HOST or (trace is not None and gives_hosts):
        # Every command's defaults (pyverify.sim.routing): fold an input's own routing, else round-robin
        # over its own fleet, else over 16 hosts.
        policy = args.routing or default_policy_for(gives_hosts)
        fleet = fleet or default_fleet_for(own_fleet)
    if (
        trace is None and engine == "numpy"
    ):  # in memory anyway: read here, so the report can name its content
        from pyverify.commands.input_options import read_trace_with

        trace = read_trace_with(args, args.instance)
    measure = None
    if (
        engine == "duckdb"
    ):  # the same report as every simulate: the measured window, in blocks and tokens
        from pyverify.commands.cache_options import window_of
        from pyverify.engines.counts import Measure

        measure = Measure(window_of(args), per_host=args.model == PER_HOST)
    try:
        counts = count(
            args.instance,
            engine,
            fleet,
            policy,
            args.seed,
            args.scheduler,
            trace,
            args.allow_unsorted,
            measure,
        )
    except (MissingExtra, RequestError):  # a RequestError names its file and request already
        raise
    except UserError as error:
        text = str(error)
        plain = text.startswith(
            (str(args.instance), "--")
        )  # already names its file, or names a flag
        raise UserError(text if plain else f"{args.instance}: routing: {text}") from None
    misses = counts.per_host_misses if args.model == PER_HOST else counts.pooled_misses
    hits = counts.references - misses
    if counts.measured is not None:
        return _report_measured(
            args,
            counts,
            engine,
            stem_of(args.instance) if trace is None else trace.name,
            content_sha256(trace) if trace is not None else None,
            identity,
            fleet,
            policy,
            hits,
        )
    result = {
        "instance": stem_of(args.instance)
        if trace is None
        else trace.name,  # a name as every reader makes it
        # The content digest (pyverify.content/1), as every simulate report names its instance; the out-of-core
        # engines never hold the whole trace in memory, so they name none.
        "sha256": content_sha256(trace) if trace is not None else None,
        **(
            {"instance_sha256": identity["instance_sha256"]}
            if "instance_sha256" in identity
            else {}
        ),
        "backend": engine,
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
            print(
                f"{name}: one pooled demand cache, uncapacitated (no routing needed: every host reads the pool); backend {engine}"
            )
        else:
            print(
                f"{name}: {args.model} demand cache(s), uncapacitated, {fleet} hosts ({policy} routing); backend {engine}"
            )
        print(f"  block references {counts.references}")
        print(f"  hits             {hits}")
        print(f"  misses           {misses}")
        print(f"  hit rate         {result['hit_rate']:.4f}")
    return 0


def _report_measured(
    args,
    counts,
    engine: str,
    name: str,
    sha256: str | None,
    identity: dict,
    fleet,
    policy,
    hits: int,
) -> int:
    """An engine's counts with their measured tally, printed as every ``simulate`` run is (simulation.report_simulation)."""
    from pyverify.commands.simulation import report_simulation
    from pyverify.commands.cache_options import CacheSize, kv_of, window_of
    from pyverify.commands.simulation import Simulation

    measured = counts.measured
    return report_simulation(
        args,
        Simulation(
            name=name,
            sha256=sha256,
            engine=engine,
            model=args.model,
            fleet=fleet if policy is not None else None,
            routing=policy,
            size=CacheSize(None, "uncapacitated", kv_of(args)),
            eviction=None,
            references=counts.references,
            hits=hits,
            n_requests=measured.first_request + measured.requests,
            window=window_of(args),
            weights_source=counts.weights_source,
            measured=measured,
            witness=None,
            instance_sha256=identity.get("instance_sha256"),
        ),
    )


def _has_hosts(path: str) -> bool:
    """Whether a trace file has a host column (Parquet or CSV); JSONL traces never do."""
    from pyverify.inputs.columnar import is_hash_ids_csv, is_parquet

    if is_parquet(path):
        from pyverify.inputs.columnar import open_parquet

        return "host" in open_parquet(path).schema_arrow.names
    if is_hash_ids_csv(path):
        with open(path, "rb") as handle:
            header = handle.readline().decode("utf-8", "replace")
        return "host" in [name.strip().strip('"') for name in header.split(",")]
    return False


def _own_fleet(path: str) -> int | None:
    from pyverify.inputs.columnar import read_columnar

    trace = read_columnar(path)
    return None if trace.routing is None else int(trace.routing.max()) + 1


__all__ = [
    "add_engine_options",
    "TRACE_ENGINES",
    "add_trace_engine_option",
    "arrays_apply",
    "counts_apply",
    "kernels_available",
    "load_kernels_before_reading",
    "run_simulate_counts",
    "trace_on_arrays",
]
