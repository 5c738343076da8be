"""Drive the ``sglang-router`` package's own cache_aware policy, decision by decision, against pyverify's port.

Needs sglang-router 0.3.2 in a separate environment (``python -m venv V && V/bin/pip install
sglang-router==0.3.2``); never part of CI. Everything listens on 127.0.0.1 only.

    python bench/vs_sglang_router.py [TRACE] --router-python V/bin/python [--workers 10]

The router is the package's own binary (``python -m sglang_router.launch_router --policy
cache_aware`` with its defaults), in front of --workers stub workers (HTTP servers here that answer
its health and info probes and every ``/generate`` at once). Each trace request is sent as a
``/generate`` whose text has one character per block id (the router's tree is over characters;
pyverify's port is over block ids, so the two trees hold the same strings). The requests go one at a
time: by default each is answered before the next is sent (every load is 0 at every decision:
this checks the tree, the match rate against cache_threshold and the fallback); with --hold each
stays in flight to the end, so the loads are the counts routed so far and the imbalanced branch
(max - min > 64 and max > 1.5 x min) runs too.

For each request the stub that received it is the router's decision. pyverify's port
(:meth:`pyverify.fleet.routers.Router.sglang_candidates`) computes the set of workers the policy
may pick there: the tenants of the node the match reaches when the match rate passes the threshold (the Rust
code takes the first entry of a hash map, so any of them), else (and when imbalanced) the least
loaded workers; the decision must be in that set. The port then records the router's own decision, so both trees
stay the same string for string. Printed per branch: decisions inside the set, and for the
fallback which workers the router took. --record writes the decisions for tests/peers.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DEFAULT_TRACE = "/work/shared/data/mooncake/synthetic_trace.jsonl"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stub_worker(index: int, received: dict, release: threading.Event, hold: bool):
    """An HTTP server that stands for worker ``index``: records each /generate's rid and answers it,
    at once or (``hold``) when ``release`` is set."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _reply(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.startswith("/get_model_info"):
                self._reply({"model_path": "stub", "is_generation": True})
            elif self.path.startswith("/v1/models"):
                self._reply({"object": "list", "data": [{"id": "stub", "object": "model"}]})
            else:
                self._reply({})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            rid = str(body.get("rid"))
            if self.path.startswith("/generate"):
                received[rid] = index
                if hold:
                    release.wait(600)
            self._reply({"text": "", "meta_info": {"id": body.get("rid"), "finish_reason": None}})

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def post(url: str, body: dict) -> None:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


def wait_ready(url: str, router: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if router.poll() is not None:
            raise RuntimeError(f"the router exited with {router.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("the router did not become ready")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=DEFAULT_TRACE)
    parser.add_argument("--router-python", required=True, help="python of the sglang-router venv")
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--limit", type=int, help="first N requests only")
    parser.add_argument("--debug", action="store_true", help="show the router's debug log")
    parser.add_argument(
        "--record", metavar="PATH", help="write the decisions (blocks, loads, worker) as JSON"
    )
    parser.add_argument(
        "--hold",
        action="store_true",
        help="keep every request in flight to the end, so loads grow and the imbalanced branch runs",
    )
    args = parser.parse_args(argv)

    from pyverify.fleet.routers import Router
    from pyverify.inputs.load import load_described

    chains = load_described(args.trace).instance.chains[: args.limit]
    dense: dict[int, int] = {}
    for chain in chains:
        for block in chain:
            dense.setdefault(block, len(dense))
    # One character per block: from U+10000 on, past the surrogates, every one a Rust char.
    texts = ["".join(chr(0x10000 + dense[block]) for block in chain) for chain in chains]

    received: dict[str, int] = {}
    release = threading.Event()
    workers = [stub_worker(index, received, release, args.hold) for index in range(args.workers)]
    urls = [f"http://127.0.0.1:{server.server_address[1]}" for server in workers]
    port, metrics = free_port(), free_port()
    router = subprocess.Popen(
        [
            args.router_python,
            "-m",
            "sglang_router.launch_router",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--prometheus-host",
            "127.0.0.1",
            "--prometheus-port",
            str(metrics),
            "--policy",
            "cache_aware",
            "--log-level",
            "debug" if args.debug else "warn",
            "--worker-urls",
            *urls,
        ],
        stdout=sys.stderr if args.debug else subprocess.DEVNULL,
        stderr=sys.stderr if args.debug else subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, router)
        started = time.perf_counter()
        for index, text in enumerate(texts):
            body = {"text": text, "rid": str(index), "stream": False}
            if not args.hold:
                post(base + "/generate", body)
                continue
            # Held: the request stays in flight; wait until a worker has it (the router counted it).
            threading.Thread(target=post, args=(base + "/generate", body), daemon=True).start()
            deadline = time.time() + 30
            while str(index) not in received and time.time() < deadline:
                time.sleep(0.001)
        seconds = time.perf_counter() - started
    finally:
        release.set()
        router.terminate()
        router.wait(timeout=30)
        for server in workers:
            server.shutdown()

    port = Router("sglang", args.workers)
    inside = {"imbalanced": 0, "match": 0, "fallback": 0}
    count = {"imbalanced": 0, "match": 0, "fallback": 0}
    loads = [0] * args.workers  # the router's in-flight requests per worker at each decision
    fallback_workers: dict[int, int] = {}
    same_as_port = 0
    first_outside = None
    decisions = []
    for index, chain in enumerate(chains):
        chosen = received[str(index)]
        branch, allowed = port.sglang_candidates(chain, loads)
        if branch == "fallback":
            fallback_workers[chosen] = fallback_workers.get(chosen, 0) + 1
        count[branch] += 1
        inside[branch] += chosen in allowed
        same_as_port += chosen == allowed[0]  # the port's own tie rule: the lowest id
        if chosen not in allowed and first_outside is None:
            first_outside = (index, branch, chosen, allowed)
        decisions.append({"hash_ids": list(chain), "loads": list(loads), "worker": chosen})
        port.record_sglang_pick(chain, chosen)
        if args.hold:
            loads[chosen] += 1
    n = len(chains)
    print(
        f"{args.trace}: {n} requests, {args.workers} workers, sglang-router cache_aware "
        f"(its defaults), {'every request held in flight' if args.hold else 'one request at a time'}; "
        f"{seconds:.1f} s through the router"
    )
    print(
        f"  imbalanced branch: {count['imbalanced']} requests, the router's worker among the least "
        f"loaded on {inside['imbalanced']}"
    )
    print(
        f"  match branch (match rate > cache_threshold): {count['match']} requests, the router's "
        f"worker among the matched node's tenants on {inside['match']}"
    )
    print(
        f"  fallback branch: {count['fallback']} requests, the router's worker among the least "
        f"loaded on {inside['fallback']}; workers it chose there: "
        f"{dict(sorted(fallback_workers.items()))}"
    )
    print(f"  the port's own pick (ties to the lowest id) is the router's on {same_as_port}/{n}")
    if first_outside is not None:
        print("  first outside (request, branch, worker, allowed):", first_outside)
    if args.record:
        from pyverify.fileio import write_text_atomic

        source = (
            f"sglang-router 0.3.2 (sgl-model-gateway 0.3.2), --policy cache_aware with its defaults, "
            f"{args.workers} workers, on the first {n} requests of {Path(args.trace).name}, one "
            f"character per block, {'every request held in flight' if args.hold else 'one at a time'}"
            f"; loads are the router's in-flight requests per worker at each decision"
        )
        record = {"source": source, "workers": args.workers, "requests": decisions}
        write_text_atomic(args.record, json.dumps(record, separators=(",", ":")) + "\n")
    inside = sum(inside.values())
    return 0 if inside == n else 1


if __name__ == "__main__":
    sys.exit(main())
