"""Write lean/PrefixPool/Generated.lean: kernel-checked examples whose values
come from the Python mirrors.

A seeded random generator draws small inputs (openings, routed openings,
demand-cache runs of a real LRU cache, block chains; from a second seed,
requests for flat FIFO and per-host flat LRU), and the concrete inputs of the
counterexamples are written out as the mirror holds them; and the flat counts
are written for every input up to a stated size (:func:`exhaustive_examples`),
so on those a drift cannot hide between samples. For each, the Python
mirror in ``pyverify/sim/simulate.py`` computes a value, and the script writes
``example : Eq (lean_definition input) value := rfl``. The Lean kernel then
evaluates the Lean definition on the same input; if a Lean definition and its
Python mirror ever drift apart, the module stops building and
``pyverify lean check`` fails. The output is deterministic, and ``pyverify
lean check`` requires the project's file to be exactly what :func:`render`
writes: an emptied or edited ``Generated.lean`` is refused, so the pinning
cannot be switched off.

Write it with ``python scripts/gen_lean_examples.py [--check]``.
"""

from __future__ import annotations

import random
import sys
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]

from pyverify.errors import CheckFailed
from pyverify.lean import mirror as lean_mirror
from pyverify.sim.mrc import lru_curve
from pyverify.optimal.curve import optimal_curve
from pyverify.sim import simulate as mirror
from pyverify.trusted import recount
from pyverify.trusted.recount import flat_min_misses

OUTPUT = ROOT / "lean" / "PrefixPool" / "Generated.lean"
SEED = 20261130
ROUNDS = 6  # examples of each kind


# --- Lean terms for Python values ---------------------------------------------


def nat(n: int) -> str:
    """A natural number as a Lean term (`gen_n3` is defined below as 3)."""
    return f"gen_n{n}"


def lean_list(items: list[str]) -> str:
    term = "List.nil"
    for item in reversed(items):
        term = f"(List.cons {item} {term})"
    return term


def nats(values) -> str:
    return lean_list([nat(v) for v in values])


def pair(a: str, b: str) -> str:
    return f"(Prod.mk {a} {b})"


# --- inputs ---------------------------------------------------------------------


def lru_run(openings: list[int], capacity: int) -> list[tuple[int, list[int]]]:
    """A real LRU cache of `capacity` openings: (opening, held just before) per request."""
    cache: OrderedDict[int, None] = OrderedDict()
    run = []
    for opening in openings:
        run.append((opening, list(reversed(cache))))  # most recent first
        if opening in cache:
            cache.move_to_end(opening)
        else:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[opening] = None
    return run


def chains_of(rng: random.Random) -> list[list[int]]:
    return [[rng.randrange(7) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(0, 5))]


# --- examples ---------------------------------------------------------------------


def examples(rng: random.Random) -> list[tuple[str, str, int]]:
    """(comment naming the Python mirror, Lean left-hand side, value) triples."""
    out: list[tuple[str, str, int]] = []
    for _ in range(ROUNDS):
        openings = [rng.randrange(6) for _ in range(rng.randint(0, 8))]
        as_chains = [[o] for o in openings]
        out.append(
            (
                f"distinct_count({as_chains})",
                f"distinct_count {nats(openings)}",
                mirror.distinct_count(as_chains),
            )
        )
        out.append(
            (
                f"pooled_misses({as_chains})",
                f"pooled_misses {nats(openings)}",
                mirror.pooled_misses(as_chains),
            )
        )
    for _ in range(ROUNDS):
        routed = [(rng.randrange(3), rng.randrange(5)) for _ in range(rng.randint(0, 8))]
        term = lean_list([pair(nat(h), nat(o)) for h, o in routed])
        chains, hosts = [[o] for _, o in routed], [h for h, _ in routed]
        out.append(
            (
                f"per_host_misses({chains}, {hosts})",
                f"per_host_misses {term}",
                mirror.per_host_misses(chains, hosts),
            )
        )
        out.append(
            (f"distinct_pairs({routed})", f"distinct_pairs {term}", mirror.distinct_pairs(routed))
        )
        out.append(
            (
                f"sum(distinct_count of openings_of(host, {routed}) for host in range(3))",
                f"sum_below {nat(3)} (fun host => distinct_count (openings_of host {term}))",
                sum(
                    mirror.distinct_count([[o] for o in mirror.openings_of(h, routed)])
                    for h in range(3)
                ),
            )
        )
    for _ in range(ROUNDS):
        openings = [rng.randrange(5) for _ in range(rng.randint(1, 8))]
        run = lru_run(openings, rng.randint(1, 3))
        term = lean_list([pair(nat(o), nats(held)) for o, held in run])
        out.append((f"demand_misses({run})", f"demand_misses {term}", mirror.demand_misses(run)))
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        term = lean_list([nats(c) for c in chains])
        out.append(
            (
                f"pooled_misses({chains})",
                f"pooled_block_misses {term}",
                mirror.pooled_misses(chains),
            )
        )
        out.append(
            (f"distinct_count({chains})", f"distinct_blocks {term}", mirror.distinct_count(chains))
        )
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        hosts = [rng.randrange(3) for _ in chains]
        term = lean_list([pair(nat(h), nats(c)) for h, c in zip(hosts, chains)])
        out.append(
            (
                f"per_host_misses({chains}, {hosts})",
                f"per_host_block_misses {term}",
                mirror.per_host_misses(chains, hosts),
            )
        )
        out.append(
            (
                f"distinct_host_blocks({chains}, {hosts})",
                f"distinct_host_blocks {term}",
                mirror.distinct_host_blocks(chains, hosts),
            )
        )
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        capacity = rng.randint(1, 4)
        run = lean_mirror.lru_prefix_run(chains, capacity)
        term = lean_list(
            [lean_list([pair(nat(b), nats(held)) for b, held in steps]) for steps in run]
        )
        out.append(
            (
                f"lean.mirror.prefix_misses(lru_prefix_run({chains}, {capacity}))",
                f"prefix_misses {term}",
                lean_mirror.prefix_misses(run),
            )
        )
        out.append(
            (
                f"demand_misses(lean.mirror.flatten(lru_prefix_run({chains}, {capacity})))",
                f"demand_misses (List.flatten {term})",
                mirror.demand_misses(lean_mirror.flatten(run)),
            )
        )
    for _ in range(ROUNDS):
        requests = [rng.randrange(6) for _ in range(rng.randint(0, 10))]
        capacity = rng.randint(0, 4)
        out.append(
            (
                f"lean.mirror.lru_hits({requests}, {capacity})",
                f"lru_hits {nat(capacity)} {nats(requests)}",
                lean_mirror.lru_hits(requests, capacity),
            )
        )
        out.append(
            (
                f"len(lean.mirror.lru_cache({requests}, {capacity}))",
                f"List.length (lru_cache {nat(capacity)} {nats(requests)})",
                len(lean_mirror.lru_cache(requests, capacity)),
            )
        )
    for _ in range(ROUNDS):
        requests = [rng.randrange(5) for _ in range(rng.randint(0, 10))]
        r = rng.randrange(5)
        out.append(
            (
                f"len(set(lean.mirror.since({r}, {requests})))",
                f"distinct_count (since {nat(r)} {nats(requests)})",
                len(set(lean_mirror.since(r, requests))),
            )
        )
    for _ in range(ROUNDS):
        blocks = [rng.randrange(6) for _ in range(rng.randint(0, 10))]
        capacity = rng.randint(0, 3)
        out.append(
            (
                f"pyverify.lean.bridge.flat_min_misses({blocks}, {capacity})",
                f"min_misses {nat(capacity)} {nats(blocks)}",
                flat_min_misses(blocks, capacity),
            )
        )
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        hosts = [rng.randrange(3) for _ in chains]
        capacity = rng.randint(1, 3)
        term = lean_list([pair(nat(h), nats(c)) for h, c in zip(hosts, chains)])
        out.append(
            (
                f"pyverify.trusted.recount.min_misses({chains}, {hosts}, {capacity})",
                f"per_host_min {nat(capacity)} {nat(3)} {term}",
                recount.min_misses(chains, hosts, capacity),
            )
        )
    return out


def counterexample_examples(rng: random.Random) -> list[tuple[str, str, int]]:
    """Like :func:`examples`, for the definitions of lean/PrefixPool/Counterexamples.lean
    (flat FIFO, per-host flat LRU). They draw from their own generator, so adding
    them left every earlier example as it was; at most 11 requests, so every
    value has its `gen_n` name already."""
    out: list[tuple[str, str, int]] = []
    for _ in range(ROUNDS):
        requests = [rng.randrange(6) for _ in range(rng.randint(0, 11))]
        capacity = rng.randint(0, 4)
        out.append(
            (
                f"lean.mirror.fifo_misses({requests}, {capacity})",
                f"fifo_misses {nat(capacity)} {nats(requests)}",
                lean_mirror.fifo_misses(requests, capacity),
            )
        )
    for _ in range(ROUNDS):
        routed = [(rng.randrange(3), rng.randrange(5)) for _ in range(rng.randint(0, 11))]
        capacity = rng.randint(0, 3)
        term = lean_list([pair(nat(h), nat(b)) for h, b in routed])
        out.append(
            (
                f"lean.mirror.per_host_lru_misses({routed}, {capacity}, 3)",
                f"per_host_lru_misses {nat(capacity)} {nat(3)} {term}",
                lean_mirror.per_host_lru_misses(routed, capacity, 3),
            )
        )
    return out


def counterexample_inputs() -> list[tuple[str, str, str]]:
    """(comment, Lean name, Lean term): the concrete inputs of the theorems of
    lean/PrefixPool/Counterexamples.lean are the lists the Python tests use."""
    min_split = lean_list(
        [pair(nat(h), nats(chain)) for h, chain in lean_mirror.MIN_SPLIT_REQUESTS]
    )
    lru_split = lean_list([pair(nat(h), nat(b)) for h, b in lean_mirror.LRU_SPLIT_REQUESTS])
    return [
        (
            f"lean.mirror.MIN_SPLIT_REQUESTS == {lean_mirror.MIN_SPLIT_REQUESTS}",
            "min_split_requests",
            min_split,
        ),
        (
            f"lean.mirror.LRU_SPLIT_REQUESTS == {lean_mirror.LRU_SPLIT_REQUESTS}",
            "lru_split_requests",
            lru_split,
        ),
        (
            f"lean.mirror.ANOMALY_REQUESTS == {lean_mirror.ANOMALY_REQUESTS}",
            "anomaly_requests",
            nats(lean_mirror.ANOMALY_REQUESTS),
        ),
    ]


def lru_prefix_examples(rng: random.Random) -> list[tuple[str, str, int]]:
    """(comment, Lean left-hand side, value) triples for lean/PrefixPool/LruPrefix.lean:
    flat LRU misses and far references (the mirror, the trusted recount) and
    pyverify's longest-prefix LRU (the simulator), pooled and per host. Drawn
    from a generator of its own, so the examples above keep their inputs."""
    out: list[tuple[str, str, int]] = []
    for _ in range(ROUNDS):
        requests = [rng.randrange(5) for _ in range(rng.randint(0, 9))]
        capacity = rng.randint(0, 3)
        out.append(
            (
                f"pyverify.trusted.recount.lru_misses([{requests}], [0], {capacity})",
                f"lru_misses {nat(capacity)} {nats(requests)}",
                recount.lru_misses([requests], [0], capacity),
            )
        )
        out.append(
            (
                f"lean.mirror.far_references({requests}, {capacity})",
                f"far_references {nat(capacity)} {nats(requests)}",
                lean_mirror.far_references(requests, capacity),
            )
        )
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        capacity = rng.randint(1, 3)
        term = lean_list([nats(c) for c in chains])
        out.append(
            (
                f"simulate({chains}, None, 'pooled', capacity={capacity}).misses",
                f"prefix_lru_misses {nat(capacity)} {term}",
                mirror.simulate(chains, None, mirror.POOLED, capacity=capacity).misses,
            )
        )
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        hosts = [rng.randrange(3) for _ in chains]
        capacity = rng.randint(1, 3)
        term = lean_list([pair(nat(h), nats(c)) for h, c in zip(hosts, chains)])
        out.append(
            (
                f"simulate({chains}, {hosts}, 'per-host', capacity={capacity}).misses",
                f"per_host_prefix_lru {nat(capacity)} {nat(3)} {term}",
                mirror.simulate(chains, hosts, mirror.PER_HOST, capacity=capacity).misses,
            )
        )
        out.append(
            (
                f"pyverify.trusted.recount.lru_misses({chains}, {hosts}, {capacity})",
                f"per_host_lru {nat(capacity)} {nat(3)} {term}",
                recount.lru_misses(chains, hosts, capacity),
            )
        )
    return out


def memory_examples(rng: random.Random) -> list[tuple[str, str, int]]:
    """`Natural.times` and MIN on one pool of fleet x capacity blocks (PooledMemory.lean),
    with their own seeded generator so that the examples above keep their inputs."""
    out: list[tuple[str, str, int]] = []
    for fleet in range(4):  # every product of 0..3 (a grid, not random: each case once)
        for capacity in range(4):
            out.append(
                (
                    f"lean.mirror.times({fleet}, {capacity})",
                    f"Natural.times {nat(fleet)} {nat(capacity)}",
                    lean_mirror.times(fleet, capacity),
                )
            )
    for _ in range(ROUNDS):
        chains = chains_of(rng)
        fleet, capacity = rng.randint(1, 3), rng.randint(0, 2)
        flat = [b for c in chains for b in c]
        term = lean_list([nats(c) for c in chains])
        out.append(
            (
                f"pyverify.trusted.recount.flat_min_misses({flat}, lean.mirror.times({fleet}, {capacity}))",
                f"min_misses (Natural.times {nat(fleet)} {nat(capacity)}) (List.flatten {term})",
                recount.flat_min_misses(flat, lean_mirror.times(fleet, capacity)),
            )
        )
    return out


def forced_examples(rng: random.Random) -> list[tuple[str, str, int]]:
    """Forced MIN (BeladyForced.lean), with its own seeded generator."""
    out: list[tuple[str, str, int]] = []
    for _ in range(ROUNDS):
        blocks = [rng.randrange(6) for _ in range(rng.randint(0, 10))]
        capacity = rng.randint(1, 3)  # with 0 blocks no cache admits anything
        out.append(
            (
                f"lean.mirror.forced_min_misses({blocks}, {capacity})",
                f"forced_min_misses {nat(capacity)} {nats(blocks)}",
                lean_mirror.forced_min_misses(blocks, capacity),
            )
        )
    return out


#: Every flat request list over blocks 0 .. EXHAUSTIVE_BLOCKS - 1 of length at most
#: EXHAUSTIVE_LENGTH, at every capacity up to EXHAUSTIVE_CAPACITY: the inputs on which
#: the flat counts are pinned to their twins exhaustively, not by a sample.
EXHAUSTIVE_BLOCKS = 3
EXHAUSTIVE_LENGTH = 3
EXHAUSTIVE_CAPACITY = 2


def every_flat_list() -> list[list[int]]:
    """Every list over blocks 0 .. EXHAUSTIVE_BLOCKS - 1 of length 0 .. EXHAUSTIVE_LENGTH, shortest first."""
    lists: list[list[int]] = [[]]
    frontier: list[list[int]] = [[]]
    for _ in range(EXHAUSTIVE_LENGTH):
        frontier = [xs + [b] for xs in frontier for b in range(EXHAUSTIVE_BLOCKS)]
        lists += frontier
    return lists


def exhaustive_examples() -> list[tuple[str, str, int]]:
    """The flat counts (distinct blocks, LRU and its far references, bypass and forced MIN,
    FIFO) on every input of :func:`every_flat_list`, at every capacity up to
    EXHAUSTIVE_CAPACITY (forced MIN and FIFO from 1 block: with none nothing is admitted)."""
    out: list[tuple[str, str, int]] = []
    for requests in every_flat_list():
        term = nats(requests)
        out.append(
            (
                f"distinct_count({[[r] for r in requests]})",
                f"distinct_count {term}",
                mirror.distinct_count([[r] for r in requests]),
            )
        )
        for capacity in range(EXHAUSTIVE_CAPACITY + 1):
            cap = nat(capacity)
            out.append(
                (
                    f"pyverify.trusted.recount.lru_misses([{requests}], [0], {capacity})",
                    f"lru_misses {cap} {term}",
                    recount.lru_misses([requests], [0], capacity),
                )
            )
            out.append(
                (
                    f"lean.mirror.far_references({requests}, {capacity})",
                    f"far_references {cap} {term}",
                    lean_mirror.far_references(requests, capacity),
                )
            )
            out.append(
                (
                    f"pyverify.lean.bridge.flat_min_misses({requests}, {capacity})",
                    f"min_misses {cap} {term}",
                    flat_min_misses(requests, capacity),
                )
            )
            if capacity >= 1:
                out.append(
                    (
                        f"lean.mirror.forced_min_misses({requests}, {capacity})",
                        f"forced_min_misses {cap} {term}",
                        lean_mirror.forced_min_misses(requests, capacity),
                    )
                )
                out.append(
                    (
                        f"lean.mirror.fifo_misses({requests}, {capacity})",
                        f"fifo_misses {cap} {term}",
                        lean_mirror.fifo_misses(requests, capacity),
                    )
                )
    return out


# --- every input up to a stated size, for every mirrored function ------------------
#
# Each section below names a Lean function of one input whose value is the list of every
# mirrored definition's value on it (`gen_flat_counts requests`, ...), and writes, for every
# input up to the section's size, `example : Eq (gen_flat_counts input) values := rfl` with the
# values the Python twins compute. One example per input keeps the module small (about 2 s
# of `lean check`); the comment above each names the input and the twins' values in order.

#: Chains over blocks 0 .. EXHAUSTIVE_CHAIN_BLOCKS - 1, each of 1 to EXHAUSTIVE_CHAIN_LENGTH
#: distinct blocks (a request reads at least one block; a block repeated within a chain is
#: never prefix-closed); lists of at most EXHAUSTIVE_CHAINS of them (pooled), or of at
#: most EXHAUSTIVE_ROUTED requests, each on one of hosts 0 .. EXHAUSTIVE_HOSTS - 1 (per host).
EXHAUSTIVE_CHAIN_BLOCKS = 2
EXHAUSTIVE_CHAIN_LENGTH = 2
EXHAUSTIVE_CHAINS = 3
EXHAUSTIVE_HOSTS = 2
EXHAUSTIVE_ROUTED = 2
#: Flat demand-cache runs: at most EXHAUSTIVE_RUN_STEPS steps, each a block 0 or 1 and a held
#: list of EXHAUSTIVE_HELD.
EXHAUSTIVE_RUN_STEPS = 2
EXHAUSTIVE_HELD = ([], [0], [1], [0, 1], [1, 0])


def lists_up_to(items: list, length: int) -> list[list]:
    """Every list of at most ``length`` elements of ``items``, shortest first."""
    lists: list[list] = [[]]
    frontier: list[list] = [[]]
    for _ in range(length):
        frontier = [xs + [item] for xs in frontier for item in items]
        lists += frontier
    return lists


def every_chain() -> list[list[int]]:
    every = lists_up_to(list(range(EXHAUSTIVE_CHAIN_BLOCKS)), EXHAUSTIVE_CHAIN_LENGTH)
    return [chain for chain in every if chain and len(set(chain)) == len(chain)]


def every_chain_list() -> list[list[list[int]]]:
    return lists_up_to(every_chain(), EXHAUSTIVE_CHAINS)


def every_routed_chain_list() -> list[list[tuple[int, list[int]]]]:
    routed = [(host, chain) for host in range(EXHAUSTIVE_HOSTS) for chain in every_chain()]
    return lists_up_to(routed, EXHAUSTIVE_ROUTED)


def every_routed_opening_list() -> list[list[tuple[int, int]]]:
    """(host, opening) lists: hosts 0 .. EXHAUSTIVE_HOSTS - 1, openings 0 .. EXHAUSTIVE_CHAIN_BLOCKS - 1,
    at most EXHAUSTIVE_LENGTH requests."""
    pairs = [(host, b) for host in range(EXHAUSTIVE_HOSTS) for b in range(EXHAUSTIVE_CHAIN_BLOCKS)]
    return lists_up_to(pairs, EXHAUSTIVE_LENGTH)


def every_run() -> list[list[tuple[int, list[int]]]]:
    steps = [(block, list(held)) for block in range(2) for held in EXHAUSTIVE_HELD]
    return lists_up_to(steps, EXHAUSTIVE_RUN_STEPS)


def routed_chains_term(requests) -> str:
    return lean_list([pair(nat(h), nats(c)) for h, c in requests])


def step_term(step) -> str:
    block, held = step
    return pair(nat(block), nats(held))


def run_term(run) -> str:
    return lean_list([step_term(s) for s in run])


@dataclass(frozen=True)
class Section:
    """The mirrored definitions on every input of one kind up to a stated size.

    ``lean_def`` names a function of one argument ``binder`` (of Lean type ``lean_type``)
    returning the list (``value_type``) of the Lean terms ``twins[i][0]``; ``twins[i][1]``
    names the Python twin in the comment and ``twins[i][2]`` computes it."""

    lean_def: str
    binder: str
    lean_type: str
    value_type: str
    inputs: Callable[[], list]
    input_term: Callable[[object], str]
    value_term: Callable[[object], str]
    twins: tuple[tuple[str, str, Callable[[object], object]], ...]
    bound: str

    def definition(self) -> str:
        body = lean_list([f"({lean})" for lean, _, _ in self.twins])
        return (
            f"noncomputable def {self.lean_def} ({self.binder} : {self.lean_type}) : "
            f"{self.value_type} :=\n  {body}"
        )

    def examples(self) -> list[tuple[str, str, list]]:
        """(input, Lean input term, the twins' values) for every input."""
        out = []
        for item in self.inputs():
            values = [compute(item) for _, _, compute in self.twins]
            out.append((item, self.input_term(item), values))
        return out


def singletons(requests: list[int]) -> list[list[int]]:
    return [[r] for r in requests]


def _flat_sections() -> list[Section]:
    caps = range(EXHAUSTIVE_CAPACITY + 1)
    blocks = range(EXHAUSTIVE_BLOCKS)
    flat_bound = (
        f"every request list over blocks 0 .. {EXHAUSTIVE_BLOCKS - 1} of length at most "
        f"{EXHAUSTIVE_LENGTH} ({len(every_flat_list())} lists)"
    )
    return [
        Section(
            "gen_flat_counts",
            "requests",
            "List Natural",
            "List Natural",
            every_flat_list,
            nats,
            nat,
            (
                (
                    "pooled_misses requests",
                    "pooled_misses(singletons)",
                    lambda xs: mirror.pooled_misses(singletons(xs)),
                ),
                *(
                    (
                        f"lru_hits {nat(c)} requests",
                        f"lean.mirror.lru_hits(requests, {c})",
                        lambda xs, c=c: lean_mirror.lru_hits(xs, c),
                    )
                    for c in caps
                ),
            ),
            flat_bound,
        ),
        Section(
            "gen_flat_lists",
            "requests",
            "List Natural",
            "List (List Natural)",
            every_flat_list,
            nats,
            nats,
            (
                ("mtf_stack requests", "lean.mirror.mtf_stack", lean_mirror.mtf_stack),
                *(
                    (
                        f"lru_cache {nat(c)} requests",
                        f"lean.mirror.lru_cache(requests, {c})",
                        lambda xs, c=c: lean_mirror.lru_cache(xs, c),
                    )
                    for c in caps
                ),
                *(
                    (
                        f"since {nat(r)} requests",
                        f"lean.mirror.since({r}, requests)",
                        lambda xs, r=r: lean_mirror.since(r, xs),
                    )
                    for r in blocks
                ),
            ),
            flat_bound,
        ),
        Section(
            "gen_flat_runs",
            "requests",
            "List Natural",
            "List (List (Prod Natural (List Natural)))",
            every_flat_list,
            nats,
            run_term,
            (
                *(
                    (
                        f"min_run {nat(c)} List.nil requests",
                        f"lean.mirror.min_run(requests, {c})",
                        lambda xs, c=c: lean_mirror.min_run(xs, c),
                    )
                    for c in caps
                ),
                *(
                    (
                        f"forced_min_run {nat(c)} List.nil requests",
                        f"lean.mirror.forced_min_run(requests, {c})",
                        lambda xs, c=c: lean_mirror.forced_min_run(xs, c),
                    )
                    for c in caps
                    if c >= 1
                ),
            ),
            flat_bound,
        ),
    ]


def _run_section() -> Section:
    return Section(
        "gen_run_counts",
        "run",
        "List (Prod Natural (List Natural))",
        "List Natural",
        every_run,
        run_term,
        nat,
        (
            ("demand_misses run", "demand_misses(run)", mirror.demand_misses),
            (
                "prefix_misses (List.cons run List.nil)",
                "lean.mirror.prefix_misses([run])",
                lambda run: lean_mirror.prefix_misses([run]),
            ),
            (
                "prefix_misses (List.map (fun step => List.cons step List.nil) run)",
                "lean.mirror.prefix_misses([[step] for step in run])",
                lambda run: lean_mirror.prefix_misses([[step] for step in run]),
            ),
        ),
        f"every run of at most {EXHAUSTIVE_RUN_STEPS} steps, each a block 0 or 1 and a held list "
        f"of {', '.join(str(h) for h in EXHAUSTIVE_HELD)} ({len(every_run())} runs)",
    )


def _chain_sections() -> list[Section]:
    caps = range(1, EXHAUSTIVE_CAPACITY + 1)  # the simulator's caches hold at least one block
    chain_bound = f"chains over blocks 0 .. {EXHAUSTIVE_CHAIN_BLOCKS - 1} of 1 to {EXHAUSTIVE_CHAIN_LENGTH} distinct blocks"
    hosts = nat(EXHAUSTIVE_HOSTS)
    return [
        Section(
            "gen_chain_counts",
            "chains",
            "List (List Natural)",
            "List Natural",
            every_chain_list,
            lambda chains: lean_list([nats(c) for c in chains]),
            nat,
            (
                ("pooled_block_misses chains", "pooled_misses(chains)", mirror.pooled_misses),
                ("distinct_blocks chains", "distinct_count(chains)", mirror.distinct_count),
                *(
                    (
                        f"prefix_lru_misses {nat(c)} chains",
                        f"simulate(chains, None, 'pooled', capacity={c}).misses",
                        lambda chains, c=c: (
                            mirror.simulate(chains, None, mirror.POOLED, capacity=c).misses
                        ),
                    )
                    for c in caps
                ),
                *(
                    (
                        f"lru_misses {nat(c)} (List.flatten chains)",
                        f"pyverify.trusted.recount.lru_misses(chains, [0, ...], {c}) and the LRU "
                        f"curve: lru_curve(chains).misses({c})",
                        lambda chains, c=c: agreed(
                            chains,
                            recount.lru_misses(chains, [0] * len(chains), c),
                            lru_curve(chains).misses(c),
                        ),
                    )
                    for c in caps
                ),
                *(
                    (
                        f"min_misses {nat(c)} (List.flatten chains)",
                        f"pyverify.trusted.recount.min_misses(chains, [0, ...], {c}) and "
                        f"the optimal curve: optimal_curve(chains).misses({c})",
                        lambda chains, c=c: agreed(
                            chains,
                            recount.min_misses(chains, [0] * len(chains), c),
                            optimal_curve(chains).misses(c),
                        ),
                    )
                    for c in caps
                ),
            ),
            f"every list of at most {EXHAUSTIVE_CHAINS} {chain_bound} ({len(every_chain_list())} lists)",
        ),
        Section(
            "gen_routed_counts",
            "requests",
            "List (Prod Natural (List Natural))",
            "List Natural",
            every_routed_chain_list,
            routed_chains_term,
            nat,
            (
                (
                    "per_host_block_misses requests",
                    "per_host_misses(chains, hosts)",
                    lambda rs: mirror.per_host_misses(*unzip_routed(rs)),
                ),
                (
                    "distinct_host_blocks requests",
                    "distinct_host_blocks(chains, hosts)",
                    lambda rs: mirror.distinct_host_blocks(*unzip_routed(rs)),
                ),
                *(
                    (
                        f"per_host_prefix_lru {nat(c)} {hosts} requests",
                        f"simulate(chains, hosts, 'per-host', capacity={c}).misses",
                        lambda rs, c=c: (
                            mirror.simulate(*unzip_routed(rs), mirror.PER_HOST, capacity=c).misses
                        ),
                    )
                    for c in caps
                ),
                *(
                    (
                        f"per_host_lru {nat(c)} {hosts} requests",
                        f"pyverify.trusted.recount.lru_misses(chains, hosts, {c}) and the LRU "
                        f"curve: lru_curve(chains, hosts, {EXHAUSTIVE_HOSTS}).misses({c})",
                        lambda rs, c=c: agreed(
                            rs,
                            recount.lru_misses(*unzip_routed(rs), c),
                            lru_curve(*unzip_routed(rs), EXHAUSTIVE_HOSTS).misses(c),
                        ),
                    )
                    for c in caps
                ),
                *(
                    (
                        f"per_host_min {nat(c)} {hosts} requests",
                        f"pyverify.trusted.recount.min_misses(chains, hosts, {c}) and the "
                        f"optimal curve: optimal_curve(chains, hosts, {EXHAUSTIVE_HOSTS}).misses({c})",
                        lambda rs, c=c: agreed(
                            rs,
                            recount.min_misses(*unzip_routed(rs), c),
                            optimal_curve(*unzip_routed(rs), EXHAUSTIVE_HOSTS).misses(c),
                        ),
                    )
                    for c in caps
                ),
            ),
            f"every list of at most {EXHAUSTIVE_ROUTED} requests, each one of the {chain_bound} "
            f"on one of hosts 0 .. {EXHAUSTIVE_HOSTS - 1} ({len(every_routed_chain_list())} lists)",
        ),
        Section(
            "gen_routed_openings",
            "requests",
            "List (Prod Natural Natural)",
            "List Natural",
            every_routed_opening_list,
            lambda rs: lean_list([pair(nat(h), nat(o)) for h, o in rs]),
            nat,
            (
                (
                    "per_host_misses requests",
                    "per_host_misses(openings, hosts)",
                    lambda rs: mirror.per_host_misses([[o] for _, o in rs], [h for h, _ in rs]),
                ),
                ("distinct_pairs requests", "distinct_pairs(requests)", mirror.distinct_pairs),
                (
                    f"sum_below {hosts} (fun host => distinct_count (openings_of host requests))",
                    "sum(distinct_count of openings_of(host, requests) for each host)",
                    lambda rs: sum(
                        mirror.distinct_count(singletons(mirror.openings_of(h, rs)))
                        for h in range(EXHAUSTIVE_HOSTS)
                    ),
                ),
                *(
                    (
                        f"per_host_lru_misses {nat(c)} {hosts} requests",
                        f"lean.mirror.per_host_lru_misses(requests, {c}, {EXHAUSTIVE_HOSTS})",
                        lambda rs, c=c: lean_mirror.per_host_lru_misses(rs, c, EXHAUSTIVE_HOSTS),
                    )
                    for c in range(EXHAUSTIVE_CAPACITY + 1)
                ),
            ),
            f"every list of at most {EXHAUSTIVE_LENGTH} (host, opening) requests, hosts 0 .. "
            f"{EXHAUSTIVE_HOSTS - 1}, openings 0 .. {EXHAUSTIVE_CHAIN_BLOCKS - 1} "
            f"({len(every_routed_opening_list())} lists)",
        ),
    ]


def agreed(item, *values):
    """The one value every Python twin of a Lean definition computes on ``item``.

    Where pyverify has several implementations of one count (the trusted recount,
    the one-pass curves of ``pyverify mrc``), each is pinned to the same Lean value;
    if they disagree there is no value to write, and generation stops naming the input."""
    if len(set(values)) != 1:
        raise CheckFailed(
            f"{OUTPUT.name}: the Python twins disagree on {item}: {', '.join(map(str, values))}"
        )
    return values[0]


def unzip_routed(requests) -> tuple[list[list[int]], list[int]]:
    """``(host, chain)`` requests as the simulator takes them: chains, and each one's host."""
    return [list(c) for _, c in requests], [h for h, _ in requests]


def exhaustive_sections() -> list[Section]:
    return [*_flat_sections(), _run_section(), *_chain_sections()]


def exhaustive_bound() -> str:
    """The stated size of the exhaustive check, one line (``lean check`` prints it)."""
    return (
        f"flat lists over blocks 0 .. {EXHAUSTIVE_BLOCKS - 1} of length <= {EXHAUSTIVE_LENGTH}, "
        f"capacities 0 .. {EXHAUSTIVE_CAPACITY}; demand runs of <= {EXHAUSTIVE_RUN_STEPS} steps; "
        f"<= {EXHAUSTIVE_CHAINS} chains (or <= {EXHAUSTIVE_ROUTED} on hosts 0 .. {EXHAUSTIVE_HOSTS - 1}) "
        f"over blocks 0 .. {EXHAUSTIVE_CHAIN_BLOCKS - 1} of 1 to {EXHAUSTIVE_CHAIN_LENGTH} distinct blocks; "
        f"<= {EXHAUSTIVE_LENGTH} (host, opening) requests, hosts and openings 0 .. "
        f"{EXHAUSTIVE_HOSTS - 1}"
    )


def largest_number(value) -> int:
    """The largest natural number written in a value (a count, a list, a run)."""
    if isinstance(value, int):
        return value
    return max((largest_number(v) for v in value), default=0)


def render_sections(sections: list[tuple[Section, list]]) -> list[str]:
    lines: list[str] = []
    for section, examples in sections:
        lines += ["", f"/-! Exhaustive, {section.lean_def}: {section.bound}; in order:"]
        lines += [f"  `{lean}` (Python: {python})" for lean, python, _ in section.twins]
        lines += ["-/", section.definition()]
        for item, term, values in examples:
            shown = ", ".join(str(v) for v in values)
            lines.append(f"-- Python: {item}: {shown}")
            lines.append(
                f"example : Eq ({section.lean_def} {term}) "
                f"{lean_list([section.value_term(v) for v in values])} := rfl"
            )
    return lines


def list_examples(rng: random.Random) -> list[tuple[str, str, str]]:
    """(comment, Lean left-hand side, Lean list) triples: whole LRU states and stacks."""
    out = []
    for _ in range(ROUNDS):
        requests = [rng.randrange(6) for _ in range(rng.randint(0, 10))]
        capacity = rng.randint(0, 4)
        cache = lean_mirror.lru_cache(requests, capacity)
        out.append(
            (
                f"lean.mirror.lru_cache({requests}, {capacity}) == {cache}",
                f"lru_cache {nat(capacity)} {nats(requests)}",
                nats(cache),
            )
        )
        stack = lean_mirror.mtf_stack(requests)
        out.append(
            (
                f"lean.mirror.mtf_stack({requests}) == {stack}",
                f"mtf_stack {nats(requests)}",
                nats(stack),
            )
        )
    return out


HEADER = """prelude
import PrefixPool.PerHost
import PrefixPool.PerHostBlocks
import PrefixPool.PerHostBlocksEq
import PrefixPool.Flat
import PrefixPool.StackDistance
import PrefixPool.Belady
import PrefixPool.PerHostMin
import PrefixPool.Counterexamples
import PrefixPool.LruPrefix
import PrefixPool.LruPerHost
import PrefixPool.PooledMemory
import PrefixPool.BeladyForced
/-!
# PrefixPool.Generated: the Lean definitions agree with their Python mirrors

GENERATED by `scripts/gen_lean_examples.py` (seed {seed}); do not edit.
Each example's value was computed by the Python function named in the comment
above it (`pyverify/sim/simulate.py`, or `pyverify/lean/mirror.py` where it
says `lean.mirror`, or the trusted checker's recount); the kernel evaluates the Lean
definition on the same input (`rfl`). A Lean definition that drifts from its
Python mirror makes this module fail to build.
-/

"""


def render(seed: int = SEED) -> str:
    rng = random.Random(seed)
    found = examples(rng)
    lru_prefix = lru_prefix_examples(random.Random(seed + 1))
    memory = memory_examples(random.Random(seed + 1)) + forced_examples(random.Random(seed + 2))
    sections = [(section, section.examples()) for section in exhaustive_sections()]
    largest = max(
        max(value for _, _, value in found + lru_prefix + memory),
        max(largest_number(values) for _, examples in sections for _, _, values in examples),
        6,
    )
    lines = [HEADER.format(seed=seed).rstrip("\n"), ""]
    lines.append("noncomputable def gen_n0 : Natural := Natural.zero")
    lines += [
        f"noncomputable def gen_n{k} : Natural := Natural.succ gen_n{k - 1}"
        for k in range(1, largest + 1)
    ]
    lines.append("")
    for comment, lhs, value in found:
        lines.append(f"-- Python: {comment} == {value}")
        lines.append(f"example : Eq ({lhs}) {nat(value)} := rfl")
    for comment, lhs, value in list_examples(rng):
        lines.append(f"-- Python: {comment}")
        lines.append(f"example : Eq ({lhs}) {value} := rfl")
    for comment, lhs, value in counterexample_examples(random.Random(seed + 1)):
        lines.append(f"-- Python: {comment} == {value}")
        lines.append(f"example : Eq ({lhs}) {nat(value)} := rfl")
    for comment, name, value in counterexample_inputs():
        lines.append(f"-- Python: {comment}")
        lines.append(f"example : Eq {name} {value} := rfl")
    for comment, lhs, value in lru_prefix:
        lines.append(f"-- Python: {comment} == {value}")
        lines.append(f"example : Eq ({lhs}) {nat(value)} := rfl")
    for comment, lhs, value in memory:
        lines.append(f"-- Python: {comment} == {value}")
        lines.append(f"example : Eq ({lhs}) {nat(value)} := rfl")
    lines += [
        "",
        f"/-! Exhaustive: every request list over blocks 0 .. {EXHAUSTIVE_BLOCKS - 1} of length at most "
        f"{EXHAUSTIVE_LENGTH},",
        f"at every capacity 0 .. {EXHAUSTIVE_CAPACITY} (forced MIN and FIFO from 1). -/",
    ]
    for comment, lhs, value in exhaustive_examples():
        lines.append(f"-- Python: {comment} == {value}")
        lines.append(f"example : Eq ({lhs}) {nat(value)} := rfl")
    lines += render_sections(sections)
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.is_file() else None
        if current != text:
            print(
                f"{OUTPUT.relative_to(ROOT)}: out of date: run python scripts/gen_lean_examples.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if argv:
        print("usage: python scripts/gen_lean_examples.py [--check]", file=sys.stderr)
        return 2
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
