"""vLLM KV-cache events recorded to JSONL, read as an engine log.

vLLM publishes what its prefix cache does for KV-aware routers
(``vllm/distributed/kv_events.py``; ``--kv-events-config``): batches of
``BlockStored``, ``BlockRemoved`` and ``AllBlocksCleared`` events, msgspec
structs tagged by class name. pyverify reads them recorded one JSON value per
line, in the shape ``msgspec.json.encode`` gives them:

* a batch: ``{"ts": 1718000000.5, "events": [EVENT, ...], "data_parallel_rank": 0}``
  (``ts`` in seconds, time.time(); ``data_parallel_rank`` optional), or
* a bare event: ``EVENT``;

where EVENT is one of::

    {"type": "BlockStored", "block_hashes": [H, ...], "parent_block_hash": H | null,
     "token_ids": [...], "block_size": 16, "lora_id": null, "medium": "GPU"}
    {"type": "BlockRemoved", "block_hashes": [H, ...], "medium": "GPU"}
    {"type": "AllBlocksCleared"}

A hash ``H`` is an integer (vLLM's ``ExternalBlockHash``) or a string (bytes
hashes, base64 in JSON). The array form (``array_like`` structs) is not read:
re-encode such a log with msgspec's default struct encoding.

What the log becomes. Every block hash names its whole prefix (vLLM's chained
hashes), and a ``BlockStored`` event is the engine computing those blocks
after the prefix ending at ``parent_block_hash``. So each such event is one
request whose chain is that prefix followed by the stored blocks: the blocks
the engine computed are this trace's misses when a demand cache replays it,
and the prefix its hits. Block ids are the hashes numbered 0, 1, 2, ... in
order of first appearance. Checks: one ``block_size`` for the log; a block
keeps the parent it was first stored under (a hash stored under two parents
is one line of error); ``token_ids``, when given, hold ``block_size`` tokens
per stored block.

A log recorded from a running engine may store blocks under a parent it never
stored (the recording began later). Their chains start at one block id that
stands for that unseen prefix (its own id, told apart from the parent's, which
the log may store later under a prefix of its own), and a note counts such
events. A block stored again later keeps the chain it was first stored in, so
every block keeps one parent: the chains are prefix-closed, and the reader
checks it (an instance file written from them reads back the same).
Events whose ``medium`` is neither ``GPU`` nor null (a CPU or disk tier) are
left out and counted. ``data_parallel_rank`` is each request's host (then
every batch must give it). ``BlockRemoved`` and ``AllBlocksCleared`` produce
no requests; the notes give the most blocks the engine held at once (stored
minus removed), the capacity to give ``--capacity`` to compare a replay with
the engine.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from pyverify.errors import located
from pyverify.inputs.jsonread import iter_objects
from pyverify.inputs.lmcache import hash_key
from pyverify.inputs.model import ROOT, Instance, check_block_size_tokens, check_host_id
from pyverify.inputs.records import ImportOptions, TraceBuilder, is_int, is_number
from pyverify.inputs.stream import Input

#: The event types vLLM publishes.
EVENT_TYPES = ("BlockStored", "BlockRemoved", "AllBlocksCleared")

#: Media whose events are the GPU prefix cache (null: vLLM versions before the field).
GPU_MEDIA = ("GPU", None)


def is_kv_event_record(value: Any) -> bool:
    """Whether a JSON object is a vLLM KV event or an event batch (for format detection)."""
    if not isinstance(value, dict):
        return False
    if value.get("type") in EVENT_TYPES:
        return True
    events = value.get("events")
    return (
        isinstance(events, list)
        and "ts" in value
        and (not events or isinstance(events[0], dict) and events[0].get("type") in EVENT_TYPES)
    )


def _hashes(event: dict[str, Any], shown: str, where: str, allow_empty: bool) -> list[Any]:
    if "block_hashes" not in event:
        raise located(shown, where, "missing field 'block_hashes'")
    values = event["block_hashes"]
    if not isinstance(values, list):
        raise located(
            shown,
            f"{where}.block_hashes",
            f"expected a list of block hashes, got {type(values).__name__}",
        )
    if not values and not allow_empty:
        raise located(shown, f"{where}.block_hashes", "empty: a stored run has at least one block")
    return [
        hash_key(value, shown, f"{where}.block_hashes[{position}]")
        for position, value in enumerate(values)
    ]


class _Log:
    """The engine's blocks as the events tell them."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.ids: dict[Any, int] = {}
        self.declared: dict[
            int, int | None
        ] = {}  # block -> the parent hash's id it was first stored under (None: unknown)
        self.chain_parent: dict[int, int] = {}  # block -> its parent in the chains pyverify builds
        self.unseen: set[int] = set()  # ids standing for prefixes the log never stored (never held)
        self.block_size: int | None = None
        self.size_line = 0
        self.held_by: dict[
            int | None, set[int]
        ] = {}  # per data-parallel rank (None: the log gives none)
        self.peak = 0
        self.orphans = self.removed = self.clears = self.other_media = 0

    def held(self, rank: int | None) -> set[int]:
        return self.held_by.setdefault(rank, set())

    def store(
        self, line: int, where: str, event: dict[str, Any], rank: int | None = None
    ) -> tuple[int, ...] | None:
        shown = self.shown
        medium = event.get("medium")
        if medium is not None and not isinstance(medium, str):
            raise located(
                shown, f"{where}.medium", f"expected a string or null, got {type(medium).__name__}"
            )
        hashes = _hashes(event, shown, where, allow_empty=False)
        if "block_size" not in event:
            raise located(shown, where, "missing field 'block_size'")
        size = check_block_size_tokens(event["block_size"], shown, f"{where}.block_size")
        tokens = event.get("token_ids")
        if tokens is not None:
            if not isinstance(tokens, list):
                raise located(
                    shown,
                    f"{where}.token_ids",
                    f"expected a list of token ids, got {type(tokens).__name__}",
                )
            if len(tokens) != size * len(hashes):
                raise located(
                    shown,
                    f"{where}.token_ids",
                    f"{len(tokens)} token ids for {len(hashes)} blocks of {size} tokens "
                    f"(vLLM stores full blocks: expected {size * len(hashes)})",
                )
        parent_value = event.get("parent_block_hash")
        parent = (
            None
            if parent_value is None
            else self.ids.setdefault(
                hash_key(parent_value, shown, f"{where}.parent_block_hash"), len(self.ids)
            )
        )
        if medium not in GPU_MEDIA:
            self.other_media += 1
            return None
        if self.block_size is None:
            self.block_size, self.size_line = size, line
        elif size != self.block_size:
            raise located(
                shown,
                f"{where}.block_size",
                f"{size} tokens, but line {self.size_line} says {self.block_size}: a log has one block size",
            )
        start = parent
        if parent is not None and parent not in self.chain_parent:
            self.orphans += 1
            start = self.unseen_prefix(parent)
        chain = self.path_to(start)
        before = parent
        for position, value in enumerate(hashes):
            block = self.ids.setdefault(value, len(self.ids))
            known = self.declared.setdefault(block, before)
            if known != before:
                raise located(
                    shown,
                    f"{where}.block_hashes[{position}]",
                    "this block was stored under another parent earlier: the log's hashes do not name prefixes",
                )
            after = chain[-1] if chain else ROOT
            if self.chain_parent.setdefault(block, after) != after:
                # First stored under the unseen prefix standing for its parent, which the log stored
                # since: the block keeps its first chain (one parent per block), and so does this request.
                chain = self.path_to(self.chain_parent[block])
            chain.append(block)
            self.held(rank).add(block)
            before = block
        self.peak = max(self.peak, len(self.held(rank)))
        return tuple(chain)

    def path_to(self, block: int | None) -> list[int]:
        """The chain ending at ``block`` (empty for the root or ``None``), root first."""
        chain: list[int] = []
        while block is not None and block != ROOT:
            chain.append(block)
            block = self.chain_parent[block]
        chain.reverse()
        return chain

    def unseen_prefix(self, parent: int) -> int:
        """The block id standing for the prefix ending at ``parent``, a block the log never stored
        (a chain's root)."""
        block = self.ids.setdefault(("unseen prefix", parent), len(self.ids))  # no hash equals it
        self.chain_parent.setdefault(block, ROOT)
        self.unseen.add(block)
        return block

    def remove(self, where: str, event: dict[str, Any], rank: int | None = None) -> None:
        medium = event.get("medium")
        if medium not in GPU_MEDIA:
            return
        for value in _hashes(event, self.shown, where, allow_empty=True):
            block = self.ids.get(value)
            if block is not None and block in self.held(rank):
                self.held(rank).discard(block)
                self.removed += 1

    def clear(self, rank: int | None = None) -> None:
        self.held(rank).clear()
        self.clears += 1


#: Called after each line of a log with the line number, the requests it added ``(chain, blocks stored, rank)``
#: and the log's state (what the engine holds now, per rank: ``log.held(rank)``).
LineHook = Callable[[int, list[tuple[tuple[int, ...], int, "int | None"]], "_Log"], None]


def read_kv_events(source: Input, options: ImportOptions) -> tuple[Instance, list[str]]:
    """Read an opened vLLM KV-event log (module docstring); one line of error at the first bad line."""
    instance, notes, _ = read_engine_log(source, options)
    return instance, notes


def read_engine_log(
    source: Input, options: ImportOptions, on_line: LineHook | None = None
) -> tuple[Instance, list[str], "_Log"]:
    """:func:`read_kv_events`, and the log's state at the end (peak held, block size); ``on_line`` after each line."""
    from pyverify.inputs.bailian import seconds_to_ms

    shown = source.display
    builder = TraceBuilder(shown, options.allow_unsorted, options.warn, options.progress)
    log = _Log(shown)
    ranks: list[int] = []
    ranked_line: int | None = None
    unranked_line: int | None = None
    last_ts: tuple[float, int] | None = None
    for line, where, data in iter_objects(source.handle, shown):
        if "events" in data:
            events = data["events"]
            if not isinstance(events, list):
                raise located(
                    shown,
                    f"{where}.events",
                    f"expected a list of events, got {type(events).__name__}",
                )
            if "ts" not in data:
                raise located(
                    shown, where, "missing field 'ts' (an event batch's time, in seconds)"
                )
            ts = data["ts"]
            if not (is_number(ts) and 0 <= ts <= 1e15):
                raise located(
                    shown, f"{where}.ts", f"expected a non-negative number of seconds, got {ts!r}"
                )
            rank = data.get("data_parallel_rank")
            if rank is not None:
                if not is_int(rank):
                    raise located(
                        shown, f"{where}.data_parallel_rank", f"expected an integer, got {rank!r}"
                    )
                check_host_id(rank, shown, f"{where}.data_parallel_rank")
            prefix, arrival = f"{where}.events", seconds_to_ms(ts)
            if last_ts is not None and ts < last_ts[0] and not options.allow_unsorted:
                raise located(
                    shown,
                    f"{where}.ts",
                    f"{ts} is earlier than {last_ts[0]} on line {last_ts[1]}: the file is not in "
                    "time order (sort it, or pass --allow-unsorted to replay in file order)",
                )
            last_ts = (ts, line)
            builder.check_time(line, arrival)  # with --allow-unsorted: the one warning
        else:
            events, rank, prefix, arrival = [data], None, where, None
        if rank is None and ranked_line is not None:
            raise located(
                shown,
                where,
                f"gives no data_parallel_rank but line {ranked_line} does: give every batch a rank or none",
            )
        if rank is not None and unranked_line is not None:
            raise located(
                shown,
                where,
                f"gives a data_parallel_rank but line {unranked_line} does not: give every batch a rank or none",
            )
        if rank is None:
            unranked_line = unranked_line or line
        else:
            ranked_line = ranked_line or line
        added: list[tuple[tuple[int, ...], int, int | None]] = []
        for index, event in enumerate(events):
            at = f"{prefix}[{index}]" if prefix.endswith(".events") else prefix
            if not isinstance(event, dict):
                raise located(
                    shown,
                    at,
                    f"expected an event object, got {type(event).__name__} (the array form is not read)",
                )
            kind = event.get("type")
            if kind == "BlockStored":
                chain = log.store(line, at, event, rank)
                if chain is not None:
                    violation = builder.prefix_violation(chain)
                    if violation is not None:  # never while the chains are built prefix-closed
                        raise located(
                            shown, f"{at}.block_hashes", f"not prefix-closed: {violation[1]}"
                        )
                    builder.add(line, chain, arrival)
                    added.append((chain, len(event["block_hashes"]), rank))
                    if rank is not None:
                        ranks.append(rank)
            elif kind == "BlockRemoved":
                log.remove(at, event, rank)
            elif kind == "AllBlocksCleared":
                log.clear(rank)
            else:
                shown_kind = repr(kind)[:60]
                raise located(
                    shown,
                    f"{at}.type",
                    f"expected one of {', '.join(EVENT_TYPES)}, got {shown_kind}",
                )
        if on_line is not None:
            on_line(line, added, log)
    if not builder.chains:
        raise located(shown, None, "no BlockStored event of the GPU cache: no requests")
    hosts = max(ranks) + 1 if ranks else 1
    if options.hosts is not None:
        hosts = max(hosts, options.hosts)
    instance = builder.instance(
        name=options.name or source.stem,
        fleet_size=hosts,
        description=f"Imported from the vLLM KV-event log {source.label} ({len(builder.chains)} BlockStored events "
        f"as requests, blocks of {log.block_size} tokens).",
        source=f"vllm-kv-events:{source.label}",
        block_size_tokens=log.block_size,
    )
    if ranks:
        instance = dataclasses.replace(instance, routing=tuple(ranks))
    notes = [
        f"each BlockStored event is a request: the stored blocks after their prefix; the engine held at most "
        f"{log.peak} blocks at once{' on one rank' if ranks else ''} ({log.removed} removed, {log.clears} clears; --capacity {log.peak} replays a cache that size)"
    ]
    if ranks:
        notes.append(f"data_parallel_rank is each request's host ({hosts} hosts)")
    if log.orphans:
        notes.append(
            f"{log.orphans} events store blocks under a parent not stored earlier in the log "
            "(recorded mid-run): their chains start at a block standing for that unseen prefix"
        )
    if log.other_media:
        notes.append(f"{log.other_media} BlockStored events of another medium (not GPU) left out")
    return instance, notes, log


__all__ = ["EVENT_TYPES", "LineHook", "is_kv_event_record", "read_engine_log", "read_kv_events"]
