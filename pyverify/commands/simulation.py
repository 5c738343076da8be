"""What ``pyverify simulate`` reports, however the run was computed.

The simulator (Python chains, every input and option) and the array path
(:mod:`pyverify.commands.array_simulate`, big trace files) both produce a
:class:`Simulation`; one function prints it (:func:`report_simulation`),
so the two cannot drift apart in what they say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from pyverify.commands.output import print_json
from pyverify.sim.names import LRU, LRU_NOTE, VLLM, eviction_name

if TYPE_CHECKING:  # annotations only: the CLI's start-up loads no numpy
    from pyverify.commands.cache_options import CacheSize
    from pyverify.sim.accounting import Tally
    from pyverify.sim.window import Window


#: Plain words for the two optima wherever a capacitated hit rate is printed beside them.
OPTIMUM_WORDS = {
    "forced": (
        "the best block hit rate any cache of this size could reach if it admits every block it fetches and keeps "
        "the running request's blocks until it ends (forced admission, as vLLM and SGLang)"
    ),
    "bypass": "the best block hit rate any cache of this size could reach (bypass: it may discard a block it fetched)",
}


@dataclass(frozen=True)
class Simulation:
    name: str
    sha256: str  # the content digest of the instance (pyverify.inputs.columnar.digest), however it was read
    engine: str | None  # None: the simulator
    model: str
    fleet: int | None  # None when no routing was needed
    routing: str | None
    size: "CacheSize"
    eviction: str | None
    references: int
    hits: int
    n_requests: int
    window: "Window"
    weights_source: str | None
    measured: "Tally"
    witness: (
        Callable[[], dict[str, Any]] | None
    )  # asked for with --witness; built only when printed
    optima: dict[str, "Tally"] | None = (
        None  # --optimum: the forced and bypass optima, counted over the same requests
    )
    unscheduled: tuple[int, ...] | None = (
        None  # --eviction vllm|sglang: requests the engine would never schedule
    )
    instance_sha256: str | None = (
        None  # a pyverify.instance/1 file's canonical-JSON SHA-256 (input_options.identity_of)
    )


def optima_tallies(
    args, ids, lengths, offsets, cache_of, capacity, weights, window
) -> dict[str, "Tally"] | None:
    """``simulate --optimum``: the two optima at this capacity, tallied like the run (None unless asked)."""
    if not getattr(args, "optimum", False):
        return None
    from pyverify.errors import UserError
    from pyverify.sim.accounting import tally_offsets
    from pyverify.optimal.forced import optimum_hits

    if capacity is None:
        raise UserError(
            "--optimum: needs a capacity (uncapacitated, every run that keeps what it fetched is optimal)"
        )
    return {
        name: tally_offsets(offsets, hits, weights, window)
        for name, hits in optimum_hits(ids, lengths, cache_of, capacity).items()
    }


__all__ = ["OPTIMUM_WORDS", "Simulation", "optima_tallies"]


def report_simulation(args, simulation: Simulation) -> int:
    """Print what ``simulate`` found, in words or as JSON (the same fields however it was computed)."""
    sim, measured = simulation, simulation.measured
    result = {
        "instance": sim.name,
        "sha256": sim.sha256,
        **({"instance_sha256": sim.instance_sha256} if sim.instance_sha256 else {}),
        **({"backend": sim.engine} if sim.engine else {}),
        "model": sim.model,
        "fleet_size": sim.fleet,
        "routing": sim.routing,
        "capacity": sim.size.blocks,
        "cache_size": sim.size.to_json(),
        "eviction": sim.eviction,
        # the whole run, in blocks (what the witness replays)
        "references": sim.references,
        "hits": sim.hits,
        "misses": sim.references - sim.hits,
        "hit_rate": sim.hits / sim.references if sim.references else 0.0,
        # the measured requests, in blocks and in tokens
        "window": {
            "warmup_fraction": sim.window.warmup_fraction,
            "requests": sim.window.describe(sim.n_requests),
        },
        "token_weights": sim.weights_source,
        "measured": measured.to_json(),
    }
    if sim.unscheduled is not None:
        result["unscheduled_requests"] = list(sim.unscheduled)
    if sim.optima is not None:
        result["optimum"] = {
            name: {**tally.to_json(), "meaning": OPTIMUM_WORDS[name]}
            for name, tally in sim.optima.items()
        }
    if args.json:
        if sim.witness is not None:
            result["witness"] = sim.witness()
        print_json(result)
        return 0
    capacity = (
        "uncapacitated"
        if sim.size.blocks is None
        else f"capacity {sim.size.words}, {eviction_name(sim.eviction)}"
    )
    engine = f"; backend {sim.engine}" if sim.engine else ""
    if sim.routing is None:
        print(
            f"{sim.name}: one pooled demand cache, {capacity} (no routing needed: every host reads the pool){engine}"
        )
    else:
        print(
            f"{sim.name}: {sim.model} demand cache(s), {capacity}, {sim.fleet} hosts ({sim.routing} routing){engine}"
        )
    if sim.size.blocks is not None and sim.eviction == LRU:
        print(f"  {LRU_NOTE}")
    print(f"  measured          {sim.window.describe(sim.n_requests)}")
    print(f"  block references  {measured.block_references}")
    print(f"  block hits        {measured.block_hits}")
    print(f"  block misses      {measured.block_references - measured.block_hits}")
    print(f"  block hit rate    {measured.block_hit_rate:.4f}")
    if measured.tokens is not None:
        print(f"  prompt tokens     {measured.tokens}  ({sim.weights_source})")
        print(f"  token hits        {measured.token_hits}")
        print(f"  token hit rate    {measured.token_hit_rate:.4f}")
    else:
        print("  token hit rate    n/a (the input gives no block size)")
    if sim.unscheduled:
        shown = ", ".join(map(str, sim.unscheduled[:10])) + (
            ", ..." if len(sim.unscheduled) > 10 else ""
        )
        why = (
            "longer than the pool"
            if sim.eviction == VLLM
            else "with prompts of pool tokens - 6 or more (SGLang refuses them)"
        )
        print(
            f"  never scheduled   {len(sim.unscheduled)} request(s) {why} (counted as misses): {shown}"
        )
    if sim.optima is not None:
        whole = sim.window.warmup_fraction == 0
        print(
            "  optimum at this capacity, over the same requests"
            + ("" if whole else " (the whole run's optimum, counted in the measured requests)")
        )
        for name, label in (("forced", "admitting every block"), ("bypass", "any cache")):
            tally = sim.optima[name]
            token = (
                f" (that run's token hit rate {tally.token_hit_rate:.4f})"
                if tally.token_hit_rate is not None
                else ""
            )
            print(
                f"    {label:22} block hit rate {tally.block_hit_rate:.4f}{token}: {OPTIMUM_WORDS[name]}"
            )
    return 0
