"""``pyverify certify``, ``verify`` and ``bounded-check``: instance certificates."""

from __future__ import annotations

import json
import os
import sys

from pyverify.commands.argtypes import input_file, output_file, positive_int, positive_seconds
from pyverify.commands.basic import INPUT_HELP
from pyverify.errors import UserError, shown
from pyverify.commands.input_options import add_input_options, import_options, load_with
from pyverify.certify import SOLVER_LIMIT

ORDER = 20

MODELS = ("pooled", "per-host")
#: From this many block references, ``--witness-form auto`` packs the witness: below it the list form is a few MB and
#: the greedy runs it records take seconds.
PACKED_MIN_REFERENCES = 1_000_000


def register(subparsers) -> None:
    cert = subparsers.add_parser(
        "certify",
        help="find the fewest misses on an instance or trace, write a certificate the checker re-checks",
        description=(
            "Solve the offline placement problem on one instance (pyverify/certify/placement.py): demand caches "
            "that start empty, a static routing, evictions chosen with hindsight. Small instances (at most "
            f"{SOLVER_LIMIT} block references): CP-SAT finds the fewest misses and proves a bound; Z3, on an "
            "independent encoding, confirms a run with that many misses exists and none with one fewer. Larger ones "
            "(whole traces): Belady's MIN on the flat block sequence gives the witness and the optimum, by Belady's "
            "theorem and the flat relaxation (docs/min-flat-relaxation.md). The checker recounts MIN either way. "
            "The certificate speaks about this instance only."
        ),
    )
    cert.add_argument("instance", type=input_file, help=INPUT_HELP)
    cert.add_argument(
        "--model", choices=MODELS, required=True, help="one pooled cache, or one cache per host"
    )
    cert.add_argument(
        "--capacity", type=positive_int, help="blocks each cache holds (default: no limit)"
    )
    cert.add_argument(
        "--admission",
        choices=("bypass", "forced"),
        default="bypass",
        help="bypass (default): the optimum of any cache, which may discard a block it fetched; forced: the "
        "optimum of a cache that admits every block it fetches and keeps the running request's blocks, "
        "as serving engines do (needs --capacity; rests on Belady's theorem, not on a Lean proof)",
    )
    cert.add_argument(
        "--routing",
        choices=("given", "round-robin"),
        default="given",
        help="per-host: the instance's own routing (default), or request i to host i mod --fleet; for any "
        "other policy (prefix-affinity, prefix-hash, random, ...) route once with 'pyverify trace import "
        "T -o routed.json --routing POLICY --fleet N' and certify routed.json",
    )
    cert.add_argument(
        "--fleet",
        "--hosts",
        dest="fleet",
        type=positive_int,
        metavar="N",
        help="fleet size for --routing round-robin (default: 16 for a trace, else the instance's hosts)",
    )
    cert.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=60.0,
        metavar="S",
        help="seconds for reading the input and the search, counted from the command's start (default: 60); "
        "a run it stops is FEASIBLE (or UNKNOWN, with no certificate), never OPTIMAL; on a trace, greedy "
        "runs that would not fit are skipped. With -o the trusted checker then re-checks the certificate "
        "before writing it, to the end (its time is printed apart)",
    )
    cert.add_argument(
        "--greedy",
        metavar="POLICIES",
        help="comma-separated greedy policies to record (lru, most-frequent; default: both when capacitated, none otherwise)",
    )
    cert.add_argument(
        "--no-z3",
        action="store_true",
        help="skip the Z3 confirmation (the certificate then cannot be OPTIMAL)",
    )
    cert.add_argument(
        "--witness-form",
        choices=("auto", "lists", "packed"),
        default="auto",
        help="how the certificate writes the witness run: lists (pyverify.certificate/1, JSON lists per request), "
        "packed (pyverify.certificate/2: flat integer arrays in base64, the trace read and solved as arrays; "
        "needs --capacity, records no greedy runs); auto (default): packed for a trace file of "
        f"{PACKED_MIN_REFERENCES:,} block references or more with --capacity and no --greedy, else lists",
    )
    cert.add_argument(
        "-o",
        "--output",
        type=output_file,
        metavar="PATH",
        help=(
            "write the certificate here (checked by `pyverify verify` first); for an input the "
            "trusted checker does not read itself (any format but a pyverify instance and Mooncake "
            "JSONL, or read with --block-size, --tokenizer or --rag-*), also its canonical "
            "instance beside it (PATH without .json, plus .instance.json)"
        ),
    )
    cert.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_input_options(cert)
    cert.set_defaults(func=run_certify)

    ver = subparsers.add_parser(
        "verify",
        help="check a certificate against its instance with the small trusted checker",
        description=(
            "Re-check a pyverify.certificate/1 (or /2, its witness packed in arrays) without any solver: the instance hash, the witness run replayed "
            "by the model's rules, the compulsory floor, and the consistency of the recorded solver results. "
            "The checker reads the instance with its own short reader (a pyverify instance or "
            "Mooncake JSONL); for any other input it reads the canonical instance certify wrote "
            "beside the certificate, and says so. "
            "Exit 0 if it verifies, 1 with the reason on the first failed check, 2 for a malformed file."
        ),
    )
    ver.add_argument("certificate", help="certificate JSON file, or - for standard input")
    ver.add_argument(
        "instance",
        help=f"the instance or trace it names (not both from standard input); {INPUT_HELP}",
    )
    add_input_options(ver, recorded=True)
    ver.set_defaults(func=run_verify)

    bc = subparsers.add_parser(
        "bounded-check",
        help="Z3: pooled uncapacitated misses = distinct openings, for all request lists up to a bound",
        description=(
            "Prove with Z3, symbolically, that for every list of at most N requests (one block each) over at most "
            "K openings, one pooled uncapacitated demand cache that starts empty misses exactly as many times as "
            "there are distinct openings. A bounded check of the Lean theorem's statement (pooled_misses_eq_distinct) "
            "on all small instances, nothing more."
        ),
    )
    bc.add_argument(
        "--max-length",
        "-n",
        type=positive_int,
        default=6,
        metavar="N",
        help="longest request list (default: 6, well under a second; 8 takes about a minute)",
    )
    bc.add_argument(
        "--openings", "-k", type=positive_int, metavar="K", help="number of openings (default: N)"
    )
    bc.add_argument(
        "--search",
        type=positive_seconds,
        metavar="SECONDS",
        help="instead, raise N (with K = N) from --max-length until a proof does not finish within SECONDS; report the largest proved",
    )
    bc.add_argument("--json", action="store_true", help="machine-readable output")
    bc.set_defaults(func=run_bounded_check)


def run_certify(args) -> int:
    import time

    from pyverify.stdin_once import stdin_read_once

    args.started = (
        time.perf_counter()
    )  # --time-limit counts from here: reading the input is part of the command

    # With -o the trusted checker reads the instance again before the certificate is written;
    # without it the instance is read once, straight from the pipe.
    with stdin_read_once([args.instance] if args.output else []):
        return _certify(args)


def _certify(args) -> int:
    import time

    from pyverify.certify.certificate import Stopped, certify, write_certificate
    from pyverify.inputs.records import reading_record

    if args.routing == "given" and args.fleet:
        raise UserError(
            "--fleet: only with --routing round-robin (given routing uses the instance's own hosts)"
        )
    if args.routing == "round-robin" and args.model != "per-host":
        raise UserError(
            "--routing round-robin: only for --model per-host (a pooled cache does not depend on routing)"
        )
    if args.output and os.path.isdir(args.output):
        raise UserError(f"{args.output}: is a directory; -o names the certificate file to write")
    from pyverify.sim.routing import default_fleet, default_fleet_for

    trace = _packed_input(args)
    instance = None if trace is not None else load_with(args, args.instance)
    hosts = None
    if args.routing == "round-robin":
        if trace is None:
            hosts = args.fleet or default_fleet(instance)
        else:  # as default_fleet: the trace's own fleet when it routes or names one
            own = trace.fleet_size or (
                int(trace.routing.max()) + 1
                if trace.routing is not None and trace.routing.size
                else 1
            )
            hosts = args.fleet or default_fleet_for(
                own if (trace.routing is not None or own > 1) else None
            )
    policies = (
        [p.strip() for p in args.greedy.split(",") if p.strip()]
        if args.greedy is not None
        else None
    )
    try:
        if trace is not None:
            from types import SimpleNamespace

            from pyverify.certify.certificate import Certified
            from pyverify.certify.packed_certificate import certify_packed, write_packed_certificate

            cert, packed, seconds = certify_packed(
                trace,
                args.model,
                args.capacity,
                args.time_limit,
                args.instance,
                args.routing,
                hosts,
                args.admission,
                reading_record(import_options(args)),
                args.started,
            )
            done = Certified(cert, None, None, seconds)
            instance = SimpleNamespace(
                name=trace.name, n_requests=trace.n_requests, n_references=trace.n_references
            )
        else:
            done = certify(
                instance,
                args.model,
                args.capacity,
                args.time_limit,
                policies,
                use_z3=not args.no_z3,
                instance_path=args.instance,
                routing=args.routing,
                hosts=hosts,
                admission=args.admission,
                read_with=reading_record(import_options(args)),
                started=args.started,
            )
    except Stopped as stopped:
        print(f"pyverify: {stopped}", file=sys.stderr)
        return 1
    cert = done.certificate
    check_s = canonical = None
    if args.output:
        check_started = time.perf_counter()
        if cert["witness"] is None:
            canonical = write_packed_certificate(cert, packed, args.output, args.instance, trace)
        else:
            canonical = write_certificate(cert, args.output, args.instance, instance)
        check_s = time.perf_counter() - check_started
    cp, z3, recorded_min = (
        cert["solvers"]["cp-sat"],
        cert["solvers"]["z3"],
        cert["solvers"].get("min"),
    )
    summary = {
        "instance": instance.name,
        "sha256": cert["instance"].get("sha256", cert["instance"]["content_sha256"]),
        "model": args.model,
        "capacity": args.capacity,
        "admission": args.admission,
        "status": cert["status"],
        "objective": cert["objective"],
        "bound": cert["bound"],
        "floor": cert["floor"],
        "routing": args.routing if args.model == "per-host" else None,
        "fleet": hosts,
        "basis": cert["basis"],
        "min": None
        if recorded_min is None
        else {"misses": recorded_min["objective"], "wall_time_s": recorded_min["wall_time_s"]},
        "cp_sat": None
        if cp is None
        else {
            "status": cp["status"],
            "objective": cp["objective"],
            "bound": cp["bound"],
            "wall_time_s": cp["wall_time_s"],
        },
        "z3": None
        if z3 is None
        else {
            "at_objective": z3["at_objective"],
            "below_objective": z3["below_objective"],
            "wall_time_s": z3["wall_time_s"],
        },
        "greedy": [{"policy": g["policy"], "misses": g["misses"]} for g in cert.get("greedy", [])],
        "greedy_skipped": list(done.skipped),
        "wall_time_s": round(done.wall_time_s, 3),
        "check_time_s": None if check_s is None else round(check_s, 3),
        "total_time_s": round(time.perf_counter() - args.started, 3),
        "certificate": args.output,
        "canonical_instance": None if canonical is None else str(canonical),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    size = (
        "uncapacitated" if args.capacity is None else f"capacity {args.capacity} blocks per cache"
    )
    where = f", {hosts} hosts, round-robin routing" if hosts else ""
    admits = ", forced admission" if args.admission == "forced" else ""
    print(
        f"{instance.name}: {args.model}{where}, {size}{admits}, {instance.n_requests} requests, {instance.n_references} block references"
    )
    print(f"  status        {cert['status']}")
    print(f"  misses        {cert['objective']}   (witness run)")
    rule = "Belady's rule, forced admission" if args.admission == "forced" else "Belady's MIN"
    source = (
        "CP-SAT, proven"
        if cp is not None
        else (rule if args.capacity is not None else "compulsory floor")
    )
    print(f"  bound         {cert['bound']}   ({source})")
    print(f"  floor         {cert['floor']}   (compulsory misses)")
    if recorded_min is not None:
        form = (
            "running request pinned, forced admission"
            if args.admission == "forced"
            else "flat sequence, bypass form"
        )
        print(
            f"  MIN           {recorded_min['objective']} misses, {recorded_min['wall_time_s']:.3f} s ({form})"
        )
    if cp is None and cert["witness"] is None:  # the packed route
        print(
            f"  CP-SAT, Z3    not run: packed witness ({cert['format']}), solved on arrays by {rule}"
        )
    elif cp is None:
        print(
            f"  CP-SAT, Z3    not run: {instance.n_references} block references is above the solver limit"
        )
    else:
        print(
            f"  CP-SAT        {cp['status']}, objective {cp['objective']}, bound {cp['bound']}, {cp['wall_time_s']:.3f} s"
        )
    if cp is None:
        pass
    elif z3 is None:
        print("  Z3            not run")
    else:
        confirmed = (
            "confirmed"
            if z3["at_objective"] == "sat" and z3["below_objective"] == "unsat"
            else "NOT confirmed"
        )
        print(
            f"  Z3            {confirmed}: {z3['at_objective']} at {cert['objective']} misses, {z3['below_objective']} at {cert['objective'] - 1}, {z3['wall_time_s']:.3f} s"
        )
    for g in cert.get("greedy", []):
        print(
            f"  greedy        {g['policy']}: {g['misses']} misses ({g['misses'] - cert['objective']:+d} against the witness)"
        )
    for policy in done.skipped:
        print(
            f"  greedy        {policy}: skipped, less of --time-limit {args.time_limit:g} s was left than MIN took"
        )
    total = time.perf_counter() - args.started
    if check_s is None:
        print(
            f"  total time    {total:.3f} s (reading and search; --time-limit {args.time_limit:g} s)"
        )
    else:
        print(
            f"  total time    {total:.3f} s: reading and search {done.wall_time_s:.3f} s (--time-limit {args.time_limit:g} s), "
            f"then the checker's re-check {check_s:.3f} s"
        )
    print(f"  claim         {cert['claim']['statement']}")
    for line in cert["basis"]:
        print(f"  relies on     {line}")
    if args.output:
        print(f"certificate written to {args.output} (verified by the checker)")
    if canonical is not None:
        print(
            f"canonical instance written to {canonical} (what 'pyverify verify' reads: the "
            "checker's own reader reads no other format)"
        )
    return 0


def _packed_input(args):
    """The trace as arrays if this run takes the packed route (``--witness-form``), else None (read as an instance)."""
    form = args.witness_form
    if form == "packed" and args.capacity is None:
        raise UserError(
            "--witness-form packed: needs --capacity (the packed route runs MIN with a capacity)"
        )
    if form == "packed" and args.greedy is not None:
        raise UserError(
            "--witness-form packed: records no greedy runs; drop --greedy or use --witness-form lists"
        )
    if form == "lists" or (form == "auto" and (args.capacity is None or args.greedy is not None)):
        return None
    from pyverify.inputs.arrays_load import load_arrays, reads_as_arrays

    options = import_options(args)
    if form == "auto" and not reads_as_arrays(args.instance, options):
        return None
    trace = load_arrays(args.instance, options)
    if form == "auto" and trace.n_references < PACKED_MIN_REFERENCES:
        return None  # a small trace: the list form, read again as an instance (a second or less)
    return trace


def run_verify(args) -> int:
    from pyverify.inputs.stream import is_stdin
    from pyverify.trusted.check import verify

    if is_stdin(args.certificate) and is_stdin(args.instance):
        raise UserError(
            "verify: the certificate and the instance cannot both be read from standard input ('-'): name one of them as a file"
        )
    failures: list[str] = []

    def say(line: str) -> None:
        # Each verdict line names the files; a file name with a newline must not add a line.
        print(shown(line, None), flush=True)
        if line.startswith("FAILED"):
            failures.append(line)

    given = import_options(args)  # each reading flag given here overrides the certificate's record
    status = verify(
        args.certificate,
        args.instance,
        say,
        allow_unsorted=given.allow_unsorted,
        block_size=given.block_size,
        tokenizer=given.tokenizer,
        source_block_size=given.source_block_size,
        rag_order=given.rag_order,
        rag_lengths=given.rag_lengths,
    )
    if status != 0 and failures:  # the verdict also on stderr, where scripts look for it
        command = getattr(args, "command_prog", "pyverify verify")
        print(f"{command}: refused: {args.certificate}: {failures[-1]}", file=sys.stderr)
    return status


def run_bounded_check(args) -> int:
    from pyverify.certify.bounded import prove, search

    if args.search:
        results = search(
            args.max_length,
            args.search,
            progress=sys.stderr if (sys.stderr.isatty() and not args.json) else None,
        )
    else:
        results = [prove(args.max_length, args.openings or args.max_length)]
    failed = [r for r in results if r.result != "unsat"]
    proved = [r for r in results if r.result == "unsat"]
    if args.json:
        # Each result carries its own statement with N and K filled in; the top level names the theorem checked.
        print(
            json.dumps(
                {"theorem": "pooled_misses_eq_distinct", "results": [r.to_json() for r in results]},
                indent=2,
            )
        )
    else:
        for r in results:
            print(r.describe())
        if len(proved) > 1:  # a search over several bounds: name the largest
            best = max(proved, key=lambda r: (r.max_length, r.openings))
            print(
                f"largest bound proved: N = {best.max_length}, K = {best.openings} ({best.wall_time_s:.2f} s)"
            )
            print(
                "This is a bounded check of the statement of the Lean theorem pooled_misses_eq_distinct on all such lists, nothing more."
            )
    if failed and any(r.result == "sat" for r in failed):
        return 1
    if not proved:
        raise UserError("bounded-check proved nothing within the limits given")
    return 0
