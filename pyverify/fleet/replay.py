"""The event loop of ``pyverify replay``: arrivals, FIFO queues per host, up to three cache tiers.

Each request arrives at ``timestamp_ms / 1000 * arrival_scale`` seconds
(``arrival_scale`` < 1 compresses the trace: more load), is routed at once
(:mod:`pyverify.fleet.routers`) and joins its host's queue. Timed, the service model
(:mod:`pyverify.fleet.service`) is ``steps`` (:func:`_run_steps`: each host runs an engine's batched
steps, admitting its queue's head at a step's start on the rule below, under a token budget) or
``streams``, where a host starts the
request at the head of its queue when fewer than ``max_running`` run there
*and* the blocks pinned by its running requests plus this chain's blocks fit
in the GPU capacity (a host with nothing running always starts its head, as
simulate serves a chain longer than the cache). Starting serves the chain
through the tiers (:mod:`pyverify.fleet.tiers`) and pins its cached blocks;
the first token comes after prefill, and the request ends after decode
(:mod:`pyverify.fleet.service`). At equal times, requests end before others
arrive, and arrivals keep file order.

Without timing (``timed=False``) every request starts on arrival and ends at
once, in file order: the one-at-a-time model of ``simulate --model per-host``.

The engine-exact evictions (``vllm``, ``sglang``, ``sglang-fifo``;
:mod:`pyverify.cache.vllm`, :mod:`pyverify.cache.sglang`) run GPU tier only: each host's cache is
the engine's reference model, fed each prompt's length in tokens, so an
untimed run equals ``simulate --model per-host --eviction vllm|sglang``.
``vllm`` also runs timed, requests overlapping as vLLM's scheduler lets them:
the head of a host's queue starts when fewer than ``max_running`` run and the
pool's ``allocate_slots`` accepts it (its hit blocks and new blocks fit in the
free queue); refused while others run, it waits at the head until a finish
frees blocks; refused with nothing running, it never will be scheduled: it is
listed in ``unscheduled``, gets no hits and ends at once (start = first token
= that instant). Under ``steps``, ``vllm`` follows vLLM's scheduler closer: blocks allocated chunk by
chunk, decode KV filed as it fills, preemption of the last admitted request when a running one cannot
grow, and a prompt longer than the pool never scheduled. SGLang's model serves one request at a time:
no timing.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Callable, NamedTuple

from pyverify.fleet import REPLAY_ENGINES
from pyverify.fleet import run as run_records
from pyverify.fleet.routers import Router
from pyverify.fleet.run import HostStats, ReplayRun, ReplaySettings
from pyverify.fleet.trace_views import views_of
from pyverify.fleet.service import STEPS, ServiceModel
from pyverify.fleet.tiers import LocalTiers, LowerTier, gpu_cache
from pyverify.cache.prompts import full_blocks
from pyverify.inputs.columnar import ColumnarTrace
from pyverify.sim.simulate import ENGINE_EVICTIONS, VLLM


def replay(
    trace: ColumnarTrace,
    router: Router,
    settings: ReplaySettings = ReplaySettings(),
    service: ServiceModel = ServiceModel(),
    *,
    progress: Callable[..., None] = lambda n=1: None,
    backend: str = "auto",
) -> ReplayRun:
    """:func:`replay_python`'s run, field for field; ``backend`` picks who computes it (:mod:`pyverify.fleet.compiled_replay`).

    Compiled: timed or untimed, ``lru``, ``fifo`` or no capacity, with or without host-DRAM and pool tiers,
    under every router; untimed with the GPU tier alone, also ``leaf-lru`` and the engines' evictions under
    round-robin or random. ``auto`` runs compiled when the configuration is supported, else Python;
    ``compiled`` raises ``ValueError`` naming the reason when it is not."""
    from pyverify.fleet.compiled_replay import replay_compiled, unsupported

    if backend not in REPLAY_ENGINES:
        raise ValueError(f"unknown replay backend {backend!r}; expected one of {REPLAY_ENGINES}")
    if backend != "python":
        reason = unsupported(router, settings, service.service)
        if reason is None:
            # A copy of the router: should the compiled run give up, the Python loop draws the same picks.
            run = replay_compiled(
                trace,
                Router(router.name, router.fleet, router.options),
                settings,
                service,
                progress,
                frugal=backend == "auto",
            )
            if isinstance(run, ReplayRun):
                return run
            reason = run
        if backend == "compiled":
            raise ValueError(reason)
    return replay_python(trace, router, settings, service, progress=progress)


def replay_python(
    trace: ColumnarTrace,
    router: Router,
    settings: ReplaySettings = ReplaySettings(),
    service: ServiceModel = ServiceModel(),
    *,
    progress: Callable[..., None] = lambda n=1: None,
    step_log: list | None = None,
) -> ReplayRun:
    """Replay ``trace`` on ``router.fleet`` hosts under ``settings`` (:class:`ReplaySettings`).

    A timed run needs every request's timestamp. Engine evictions (:data:`ENGINE_EVICTIONS`) need no
    lower tier and a capacity, and (but ``vllm``) an untimed run; they read each prompt's length in
    tokens (:attr:`pyverify.fleet.trace_views.TraceViews.prompt_tokens`), in units of the trace's block
    size, and SGLang's ``settings.page_size``.

    ``step_log``: with the ``steps`` service model, one :class:`Step` is appended per step run.
    """
    hosts = _Hosts(trace, router, settings, service)
    if not settings.timed:
        return _run_untimed(hosts, progress)
    if service.service == STEPS:
        return _run_steps(hosts, progress, step_log)
    return _run_streams(hosts, progress)


class _Hosts:
    """One run's fleet: each host's caches and queue, the counts, and each request's hits and times;
    what the untimed, streams and steps loops share, set up from the run's trace and settings."""

    def __init__(
        self,
        trace: ColumnarTrace,
        router: Router,
        settings: ReplaySettings,
        service: ServiceModel,
    ) -> None:
        views = views_of(trace)
        self.chains = chains = views.chains
        self.router, self.settings, self.service = router, settings, service
        self.input_tokens, self.output_tokens = views.input_tokens, views.output_tokens
        fleet, n = router.fleet, len(chains)
        capacity, eviction = settings.capacity, settings.eviction
        pool_capacity, host_capacity = settings.pool_capacity, settings.host_capacity
        self.engine = eviction in ENGINE_EVICTIONS
        if self.engine:
            if settings.timed and eviction != VLLM:
                raise ValueError(
                    f"eviction {eviction} runs one request at a time per host: it needs timed=False"
                )
            if pool_capacity is not False or host_capacity is not False:
                raise ValueError(f"eviction {eviction} is offered for the GPU tier alone")
        size = trace.block_size_tokens or 1
        caches = [gpu_cache(capacity, eviction, size, settings.page_size) for _ in range(fleet)]
        self.prompt_tokens = views.prompt_tokens  # what an engine's cache reads; others read none
        self.caches = caches
        self.unscheduled: list[int] = []
        self.pool = None if pool_capacity is False else LowerTier(pool_capacity)
        drams = None if host_capacity is False else [LowerTier(host_capacity) for _ in range(fleet)]
        self.drams = drams
        self.local = (
            caches
            if drams is None
            else [LocalTiers(cache, dram) for cache, dram in zip(caches, drams)]
        )
        self.stats = [HostStats() for _ in range(fleet)]
        self.load = [0] * fleet
        self.routed = [0] * fleet
        self.host_of = [0] * n
        self.gpu_hits = [0] * n
        self.host_hits = [0] * n
        self.pool_hits = [0] * n
        self.references = views.references
        # Per request, what the timing counts (looked up once per step and request): its prompt's tokens,
        # as given or whole blocks of the service model's size, and its output tokens (0 if none).
        given = views.input_tokens or [None] * n
        self.tokens_in = [
            tokens if tokens is not None else len(chain) * service.block_tokens
            for tokens, chain in zip(given, chains)
        ]
        self.output_of = [tokens or 0 for tokens in views.output_tokens or [None] * n]
        if settings.timed:
            if views.arrival_ms is None or None in views.arrival_ms:
                raise ValueError("a timed replay needs arrival times")
            self.arrival = [ms / 1000.0 * settings.arrival_scale for ms in views.arrival_ms]
            self.start = [0.0] * n
            self.first_token = [0.0] * n
            self.queues = [deque() for _ in range(fleet)]

    def served(self, index: int, host: int, g: int | None, h: int = 0, p: int = 0) -> None:
        """Record request ``index``'s hits: ``g`` GPU, ``h`` host-DRAM and ``p`` pool blocks (``g`` None:
        never scheduled, no hits)."""
        if g is None:
            self.unscheduled.append(index)
            g = 0
        self.gpu_hits[index], self.host_hits[index], self.pool_hits[index] = g, h, p
        host_stats = self.stats[host]
        host_stats.gpu_hit_blocks += g
        host_stats.host_hit_blocks += h
        host_stats.pool_hit_blocks += p
        host_stats.recomputed_blocks += len(self.chains[index]) - g - h - p

    def start_request(self, index: int, host: int):
        """Start request ``index`` on its host's GPU cache (:mod:`pyverify.cache.protocol`) and read the
        tiers below it: ``(GPU hit blocks, the handle to finish it with)``, or ``None`` when the GPU
        cache cannot start it now (nothing recorded, nothing changed)."""
        chain, drams, pool = self.chains[index], self.drams, self.pool
        started = self.caches[host].start(index, chain, self.prompt_tokens[index])
        if started is None:
            return None
        g = started[0]
        h = drams[host].read_and_write(chain[g:]) if drams is not None else 0
        p = pool.read_and_write(chain[g + h :]) if pool is not None else 0
        self.served(index, host, g, h, p)
        return started

    def given_tokens(self, index: int) -> int | None:
        return self.input_tokens[index] if self.input_tokens is not None else None

    def route(self, index: int, chain, now: float) -> int:
        """Route request ``index`` arriving at ``now``: the router sees the arrival instant (Dynamo's
        books drop a request's prefill tokens at its first token) and the prompt's length (Dynamo
        hashes its full blocks only)."""
        host = self.router.pick(
            index, chain, self.local, self.load, self.routed, now, self.given_tokens(index)
        )
        self.routed[host] += 1
        self.host_of[index] = host
        self.stats[host].requests += 1
        return host

    def run(self, sample_s=(), load_samples=(), finish=None) -> ReplayRun:
        """What the run did (times only when timed)."""
        timed = self.settings.timed
        return ReplayRun(
            self.router.name,
            self.host_of,
            self.gpu_hits,
            self.host_hits,
            self.pool_hits,
            self.references,
            self.arrival if timed else None,
            self.start if timed else None,
            self.first_token if timed else None,
            self.stats,
            self.drams is not None,
            self.pool is not None,
            list(sample_s),
            list(load_samples),
            sorted(self.unscheduled) if timed else self.unscheduled,
            finish,
        )


def _run_untimed(hosts: _Hosts, progress) -> ReplayRun:
    """Every request starts on arrival and ends at once, in file order: ``simulate --model per-host``."""
    for index, chain in enumerate(hosts.chains):
        host = hosts.route(index, chain, 0.0)
        started = hosts.start_request(index, host)  # and ends at once: one request at a time
        if started is None:  # refused with nothing running: never scheduled
            hosts.served(index, host, None)
        else:
            hosts.caches[host].finish(started[1])
        hosts.router.finished(index)
        progress()
    return hosts.run()


def _run_streams(hosts: _Hosts, progress) -> ReplayRun:
    """The timed loop of the ``streams`` service model: a request starts when its host has a slot and
    room for its blocks, and ends after its prefill and decode at the full rates."""
    chains, router, service = hosts.chains, hosts.router, hosts.service
    caches, queues, stats, load = hosts.caches, hosts.queues, hosts.stats, hosts.load
    gpu_hits, host_hits, pool_hits = hosts.gpu_hits, hosts.host_hits, hosts.pool_hits
    arrival, start, first_token = hosts.arrival, hosts.start, hosts.first_token
    start_request, served = hosts.start_request, hosts.served
    tokens_in, output_of = hosts.tokens_in.__getitem__, hosts.output_of.__getitem__
    running = [0] * router.fleet
    finishing: list[
        tuple[float, int, int, list[int]]
    ] = []  # (end time, request, host, pinned blocks)

    def start_what_fits(host: int, now: float) -> None:
        """Start the head of the host's queue while its GPU cache accepts it (its blocks fit beside
        the running requests' ones); refused with nothing running, it is never scheduled: it ends
        now, with no hits."""
        queue = queues[host]
        while queue and running[host] < service.max_running:
            started = start_request(queue[0], host)
            if started is None and running[host]:
                break  # it waits for a running request to free blocks
            index = queue.popleft()
            if started is None:
                served(index, host, None)
                start[index] = first_token[index] = now
                load[host] -= 1
                router.finished(index)
                continue
            held = started[1]
            hit = gpu_hits[index] + host_hits[index] + pool_hits[index]
            prefill = service.prefill_seconds(
                tokens_in(index), hit, pool_hits[index], host_hits[index]
            )
            decode = service.decode_seconds(output_of(index))
            start[index] = now
            first_token[index] = now + prefill
            router.prefill_done(index, first_token[index])
            stats[host].busy_prefill_s += prefill
            running[host] += 1
            heapq.heappush(finishing, (now + prefill + decode, index, host, held))

    def finish_until(time: float) -> None:
        while finishing and finishing[0][0] <= time:
            end, index, host, held = heapq.heappop(finishing)
            caches[host].finish(held)
            running[host] -= 1
            load[host] -= 1
            router.finished(index)
            start_what_fits(host, end)

    span = max(arrival, default=0.0)
    samples = run_records.LOAD_SAMPLES
    sample_s = [span * k / samples for k in range(samples)]
    load_samples: list[list[int]] = []
    for index, chain in enumerate(chains):
        now = arrival[index]
        while len(load_samples) < samples and sample_s[len(load_samples)] <= now:
            finish_until(
                sample_s[len(load_samples)]
            )  # events in time order either way: the run is unchanged
            load_samples.append(list(load))
        finish_until(now)
        host = hosts.route(index, chain, now)
        load[host] += 1
        queues[host].append(index)
        start_what_fits(host, now)
        stats[host].max_queue = max(
            stats[host].max_queue, len(queues[host])
        )  # requests left waiting
        progress()
    finish_until(float("inf"))
    return hosts.run(sample_s[: len(load_samples)], load_samples)


class Step(NamedTuple):
    """One step of the ``steps`` service model, as ``replay_python(step_log=...)`` records it."""

    host: int
    start_s: float
    end_s: float
    prefill_tokens: int
    decodes: int
    running: tuple[int, ...]  # the requests running through it, in admission order


#: Kinds of a step-model event, in the order they run at one instant: a host's step ends (its requests
#: progress, some finish) before the requests arriving then join; the host's next step starts after them.
STEP_ENDS, STEP_STARTS = 0, 1


def _run_steps(hosts: _Hosts, progress, step_log: list | None) -> ReplayRun:
    """The timed loop of the ``steps`` service model (:mod:`pyverify.fleet.service`): each host runs one
    step at a time over its running requests and the head of its queue; hosts meet only at arrivals.

    ``step_log``: one :class:`Step` appended per step run, when given."""
    chains, router, service = hosts.chains, hosts.router, hosts.service
    caches, queues, stats, load = hosts.caches, hosts.queues, hosts.stats, hosts.load
    gpu_hits, host_hits, pool_hits = hosts.gpu_hits, hosts.host_hits, hosts.pool_hits
    arrival, start, first_token = hosts.arrival, hosts.start, hosts.first_token
    engine, start_request, served = hosts.engine, hosts.start_request, hosts.served
    tokens_in, output_of = hosts.tokens_in.__getitem__, hosts.output_of.__getitem__
    prompt_tokens = hosts.prompt_tokens
    capacity = hosts.settings.capacity
    n, fleet = len(chains), router.fleet
    budget_per_step, max_seqs = service.max_num_batched_tokens, service.max_running
    block_tokens = caches[0].block_size if engine else service.block_tokens
    capacity_tokens = (
        None if capacity is None else capacity * block_tokens
    )  # one host's KV (timing)
    finish = [0.0] * n
    to_prefill = [0] * n  # prefill tokens a running request has yet to compute
    to_decode = [0] * n  # decode steps it has yet to run after its first token
    kv_tokens = [0] * n  # tokens of KV it holds once its prompt is computed (prompt + decoded)
    held: list = [None] * n  # its pinned blocks (an engine's: its physical blocks)
    running: list[list[int]] = [[] for _ in range(fleet)]
    batches: list[list[tuple[int, int]]] = [
        [] for _ in range(fleet)
    ]  # (request, prefill chunk or -1)
    stepping = [False] * fleet  # a step is in flight, or due to start
    events: list[tuple[float, int, int]] = []  # (time, STEP_ENDS or STEP_STARTS, host)

    def admit(host: int, index: int) -> bool:
        """Admit the head of the queue when its blocks fit beside the pinned ones (or nothing runs)."""
        started = start_request(index, host)
        if started is None:
            return False
        held[index] = started[1]
        return True

    def start_step(host: int, now: float) -> None:
        queue, batch = queues[host], batches[host]
        budget, prefill_tokens, decodes, loads = budget_per_step, 0, 0, 0.0
        chunks, context = [], 0  # (tokens before, chunk) per prefill chunk; the decodes' KV tokens
        for index in running[host]:  # vLLM: the running requests first, in admission order
            if not budget:
                break
            if to_prefill[index]:
                chunk = min(to_prefill[index], budget)
                batch.append((index, chunk))
                chunks.append((tokens_in(index) - to_prefill[index], chunk))
                budget -= chunk
                prefill_tokens += chunk
            else:
                batch.append((index, -1))
                budget -= 1
                decodes += 1
                context += kv_tokens[index] + 1  # the token this decode computes included
        while queue and budget and len(running[host]) < max_seqs:
            if not admit(host, queue[0]):
                break
            index = queue.popleft()
            hit = gpu_hits[index] + host_hits[index] + pool_hits[index]
            tokens = tokens_in(index)
            to_prefill[index] = max(0, tokens - hit * service.block_tokens)
            to_decode[index] = max(output_of(index) - 1, 0)
            kv_tokens[index] = tokens
            start[index] = now
            running[host].append(index)
            loads += service.fetch_seconds(pool_hits[index], host_hits[index])
            chunk = min(to_prefill[index], budget)
            batch.append((index, chunk))
            chunks.append((tokens - to_prefill[index], chunk))
            budget -= chunk
            prefill_tokens += chunk
        stats[host].max_queue = max(stats[host].max_queue, len(queue))
        if not batch:  # nothing runs nor waits
            stepping[host] = False
            return
        prefill = prefill_tokens / service.prefill_tokens_per_s if prefill_tokens else 0.0
        stats[host].busy_prefill_s += prefill + loads
        seconds = (
            service.step_seconds(prefill_tokens, decodes, chunks, context, capacity_tokens) + loads
        )
        if step_log is not None:
            step_log.append(
                Step(host, now, now + seconds, prefill_tokens, decodes, tuple(running[host]))
            )
        heapq.heappush(events, (now + seconds, STEP_ENDS, host))

    def end_step(host: int, now: float) -> None:
        cache, batch = caches[host], batches[host]
        ended = []
        for index, chunk in batch:
            if chunk >= 0:  # a prefill chunk (0: nothing left to compute)
                to_prefill[index] -= chunk
                if to_prefill[index]:
                    continue
                first_token[index] = now
                router.prefill_done(index, now)
            else:  # one decode: its token's KV joins the request's, maybe filling a block
                to_decode[index] -= 1
                kv_tokens[index] += 1
                if kv_tokens[index] % service.block_tokens == 0:
                    keep_decoded_block(cache, index)
            if not to_decode[index]:
                ended.append(index)
        batch.clear()
        for index in ended:
            finish[index] = now
            running[host].remove(index)
            cache.finish(held[index])
            held[index] = None
            load[host] -= 1
            router.finished(index)
        if running[host] or queues[host]:
            heapq.heappush(events, (now, STEP_STARTS, host))
        else:
            stepping[host] = False

    def keep_decoded_block(cache, index: int) -> None:
        """Decode KV: the block the request's generated tokens just filled joins its chain in the cache."""
        position = kv_tokens[index] // service.block_tokens - 1  # past the prompt's full blocks
        prompt_blocks = tokens_in(index) // service.block_tokens
        chain = chains[index]
        parent = (
            (index, position - 1)
            if position > prompt_blocks
            else (chain[prompt_blocks - 1] if 0 < prompt_blocks <= len(chain) else None)
        )
        if cache.keep_generated((index, position), parent):
            held[index].append((index, position))

    # --eviction vllm: vLLM's own scheduler on its block pool, step by step. A request's blocks are
    # allocated chunk by chunk as it computes (allocate_slots), its full blocks filed under their hashes
    # as they fill (the prompt's from the trace, the generated ones as (request, position)); when a
    # running request's next chunk or decode finds too few free blocks, the last admitted running
    # request is preempted (its blocks freed, its computed tokens lost; it goes back to the front of
    # the queue and is admitted again later, recomputing what the cache no longer holds), and no
    # request is admitted in that step, as vLLM's FCFS scheduler does.
    size = caches[0].block_size if engine else service.block_tokens
    known = [0] * n  # tokens of the request known so far: its prompt, then each sampled token
    computed = [0] * n  # of those, tokens whose KV is computed
    produced = [0] * n  # output tokens sampled
    hashes: list = [None] * n  # its full blocks' hashes, in chain order (None: never admitted)
    filed = [0] * n  # how many of its blocks are filed under their hash

    def vllm_hashes(index: int) -> list:
        chain = hashes[index]
        while len(chain) < known[index] // size:
            chain.append((index, len(chain)))  # a block of generated tokens: an id no trace names
        return chain

    def vllm_file(pool, index: int) -> None:
        stop = min(computed[index] + scheduled[index], known[index]) // size
        if stop > filed[index]:
            pool.cache(held[index], vllm_hashes(index), filed[index], stop)
            filed[index] = stop

    scheduled = [0] * n  # tokens the request computes in the step in flight

    def vllm_preempt(pool, host: int, index: int) -> None:
        pool.finish(held[index])
        held[index], computed[index], filed[index] = [], 0, 0
        queues[host].appendleft(index)

    def vllm_end_now(host: int, index: int, now: float, first_time: bool) -> None:
        """A request the empty pool cannot hold ends now: never admitted, it is listed in ``unscheduled``
        with no hits; preempted, it keeps its hits and the tokens it had sampled."""
        if first_time:
            served(index, host, None)
            start[index] = now
        if not produced[index]:
            first_token[index] = now
            router.prefill_done(index, now)
        finish[index] = now
        load[host] -= 1
        router.finished(index)

    def vllm_start_step(host: int, now: float) -> None:
        pool, queue, batch, run = caches[host].pool, queues[host], batches[host], running[host]
        budget, prefill_tokens, decodes, preempted = budget_per_step, 0, 0, False
        chunks, context = [], 0  # (tokens before, chunk) per prefill chunk; the decodes' KV tokens
        position = 0
        while position < len(run) and budget:  # the running requests, in admission order
            index = run[position]
            chunk = min(known[index] - computed[index], budget)
            while not pool.allocate(held[index], (), computed[index] + chunk):
                victim = run.pop()  # FCFS: the last admitted goes first
                preempted = True
                vllm_preempt(pool, host, victim)
                if victim == index:
                    break
            else:
                scheduled[index] = chunk
                vllm_file(pool, index)
                batch.append((index, chunk))
                budget -= chunk
                if produced[index] and chunk == known[index] - computed[index] == 1:
                    decodes += 1
                    context += known[index]
                else:
                    prefill_tokens += chunk
                    chunks.append((computed[index], chunk))
                position += 1
                continue
            break
        if not run and preempted:  # it was alone and cannot grow: the pool can never hold it
            vllm_end_now(host, queue.popleft(), now, first_time=False)
        while not preempted and queue and budget and len(run) < max_seqs:
            index = queue[0]
            admitted_before = hashes[index] is not None
            if not admitted_before:
                tokens = prompt_tokens[index]
                if -(-tokens // size) > pool.capacity:  # its prompt can never fit: never scheduled
                    queue.popleft()
                    vllm_end_now(host, index, now, first_time=True)
                    continue
                hashes[index] = list(full_blocks(index, chains[index], tokens, size))
                known[index] = tokens
            hit = pool.lookup(vllm_hashes(index), known[index])
            computed[index] = len(hit) * size
            chunk = min(known[index] - computed[index], budget)
            blocks: list[int] = []
            if not pool.allocate(blocks, hit, computed[index] + chunk):
                if run:
                    if not admitted_before:
                        hashes[index] = None
                    break
                queue.popleft()
                vllm_end_now(host, index, now, first_time=not admitted_before)
                continue
            queue.popleft()
            if not admitted_before:
                served(index, host, len(hit))
                start[index] = now
            held[index], filed[index], scheduled[index] = blocks, len(hit), chunk
            vllm_file(pool, index)
            run.append(index)
            batch.append((index, chunk))
            chunks.append((computed[index], chunk))
            budget -= chunk
            prefill_tokens += chunk
        stats[host].max_queue = max(stats[host].max_queue, len(queue))
        if not batch:
            if run or queue:  # everything left was refused or ended now: look again at once
                heapq.heappush(events, (now, STEP_STARTS, host))
            else:
                stepping[host] = False
            return
        prefill = prefill_tokens / service.prefill_tokens_per_s if prefill_tokens else 0.0
        stats[host].busy_prefill_s += prefill
        seconds = service.step_seconds(prefill_tokens, decodes, chunks, context, capacity_tokens)
        if step_log is not None:
            step_log.append(Step(host, now, now + seconds, prefill_tokens, decodes, tuple(run)))
        heapq.heappush(events, (now + seconds, STEP_ENDS, host))

    def vllm_end_step(host: int, now: float) -> None:
        pool, batch = caches[host].pool, batches[host]
        for index, chunk in batch:
            computed[index] += chunk
            if computed[index] < known[index]:
                continue
            produced[index] += 1  # the step computed every known token: the next one is sampled
            if produced[index] == 1:
                first_token[index] = now
                router.prefill_done(index, now)
            if produced[index] < max(output_of(index), 1):
                known[index] += 1
                continue
            finish[index] = now
            running[host].remove(index)
            pool.finish(held[index])
            held[index] = None
            load[host] -= 1
            router.finished(index)
        batch.clear()
        if running[host] or queues[host]:
            heapq.heappush(events, (now, STEP_STARTS, host))
        else:
            stepping[host] = False

    if engine:
        start_step, end_step = vllm_start_step, vllm_end_step

    def advance(until: float) -> None:
        """Run every event before ``until``, and the step ends at it (the steps due then wait for its arrivals)."""
        while events and (events[0][0] < until or events[0][:2] == (until, STEP_ENDS)):
            now, kind, host = heapq.heappop(events)
            if kind == STEP_ENDS:
                end_step(host, now)
            else:
                start_step(host, now)

    for index, chain in enumerate(chains):
        now = arrival[index]
        advance(now)
        host = hosts.route(index, chain, now)
        load[host] += 1
        queues[host].append(index)
        if not stepping[host]:
            stepping[host] = True
            heapq.heappush(events, (now, STEP_STARTS, host))
        progress()
    advance(float("inf"))
    span = max(arrival, default=0.0)
    samples = run_records.LOAD_SAMPLES
    sample_s = [span * k / samples for k in range(samples)]
    # counted from the times once the run is over: a sample cannot change the run
    load_samples = run_records.load_samples_at(sample_s, arrival, finish, hosts.host_of, fleet)
    return hosts.run(sample_s, load_samples, finish)
