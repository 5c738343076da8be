"""The container: a trace as flat arrays, with no Python object per block.

:class:`ColumnarTrace` holds a trace the way the counting kernels and the
engines want it: ``ids`` (every block id, in file order, int64) and
``offsets`` (request i is ``ids[offsets[i]:offsets[i+1]]``), plus the optional
per-request columns a trace may carry (``routing``, ``route_keys``,
``timestamps``, ``input_tokens``, ``output_tokens``). No Python object is made
per block.

The readers (:mod:`~pyverify.inputs.columnar.jsonl`,
:mod:`~pyverify.inputs.columnar.tables`) build one from a file; an
:class:`~pyverify.inputs.model.Instance` converts both ways
(:meth:`ColumnarTrace.from_instance`, :meth:`ColumnarTrace.to_instance`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from pyverify.inputs.model import Instance

#: Mooncake's block size, the default for traces that do not say.
DEFAULT_BLOCK_TOKENS = 512


@dataclass(frozen=True, eq=False)
class ColumnarTrace:
    """A validated, prefix-closed trace as flat arrays (see the module docstring)."""

    name: str
    ids: np.ndarray
    offsets: np.ndarray
    source: str = ""
    routing: np.ndarray | None = None
    route_keys: list[str] | None = None
    timestamps: np.ndarray | None = None
    input_tokens: np.ndarray | None = None
    output_tokens: np.ndarray | None = None
    block_size_tokens: int | None = DEFAULT_BLOCK_TOKENS
    #: Tokens of every block reference when blocks differ in size (RAGPulse's chunks), -1 where its request gives none.
    block_tokens: np.ndarray | None = None
    #: The fleet size the input names (an instance's ``hosts``); ``None``: its largest host id + 1, or 1.
    fleet_size: int | None = None
    #: Each request's ``labels`` (Qwen-Bailian's chat_id, parent_chat_id, type, turn; ``None``:
    #: none), kept for grouping as the instance keeps them; no count reads them, and the content
    #: digest leaves them out.
    labels: list[dict[str, Any] | None] | None = None

    @property
    def n_requests(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_references(self) -> int:
        return int(self.ids.size)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def chains(self) -> Iterator[tuple[int, ...]]:
        flat = self.ids.tolist()
        bounds = self.offsets.tolist()
        for start, end in zip(bounds[:-1], bounds[1:]):
            yield tuple(flat[start:end])

    def to_instance(self) -> Instance:
        """The same trace as an :class:`Instance` (per-block Python objects: small traces)."""
        extra: list[dict[str, Any]] = []
        columns = (
            ("arrival_ms", self.timestamps),
            ("input_tokens", self.input_tokens),
            ("output_tokens", self.output_tokens),
        )
        # The columns are float64 (NaN: not given); token counts are integers, and so is a whole-number
        # arrival time, so an instance written from a Parquet file validates and reads as its JSONL source.
        present = [
            (
                key,
                [
                    None if v != v else (int(v) if key != "arrival_ms" or v.is_integer() else v)
                    for v in values.tolist()
                ],
            )
            for key, values in columns
            if values is not None
        ]
        keys = self.route_keys
        weights = None if self.block_tokens is None else self.block_tokens.tolist()
        bounds = self.offsets.tolist()
        for index in range(self.n_requests):
            item = {key: values[index] for key, values in present if values[index] is not None}
            if keys is not None and keys[index] is not None:
                item["route_key"] = keys[index]
            if (
                weights is not None
                and bounds[index] < bounds[index + 1]
                and weights[bounds[index]] >= 0
            ):
                item["block_tokens"] = weights[bounds[index] : bounds[index + 1]]
            if self.labels is not None and self.labels[index]:
                item["labels"] = dict(self.labels[index])
            extra.append(item)
        routing = None if self.routing is None else tuple(self.routing.tolist())
        fleet = (
            self.fleet_size
            if self.fleet_size is not None
            else (int(self.routing.max()) + 1 if routing else 1)
        )
        return Instance(
            name=self.name,
            fleet_size=fleet,
            chains=tuple(self.chains()),
            routing=routing,
            description=f"Imported from {self.source or self.name} ({self.n_requests} requests).",
            source=self.source,
            block_size_tokens=self.block_size_tokens,
            extra=tuple(extra) if any(extra) else (),
        )

    @classmethod
    def from_instance(cls, instance: Instance) -> "ColumnarTrace":
        lengths = np.fromiter(
            (len(c) for c in instance.chains), dtype=np.int64, count=instance.n_requests
        )
        offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.fromiter(
            (b for c in instance.chains for b in c), dtype=np.int64, count=int(offsets[-1])
        )

        def column(key: str, dtype) -> np.ndarray | None:
            if not instance.extra or not any(key in item for item in instance.extra):
                return None
            return np.array([item.get(key, np.nan) for item in instance.extra], dtype=dtype)

        keys = [item.get("route_key") for item in instance.extra] if instance.extra else None
        labels = [item.get("labels") for item in instance.extra] if instance.extra else None
        weights = None
        if instance.extra and any("block_tokens" in item for item in instance.extra):
            weights = np.fromiter(
                (
                    w
                    for item, chain in zip(instance.extra, instance.chains)
                    for w in item.get("block_tokens", [-1] * len(chain))
                ),
                dtype=np.int64,
                count=int(offsets[-1]),
            )
        return cls(
            name=instance.name,
            ids=ids,
            offsets=offsets,
            source=instance.source,
            routing=None
            if instance.routing is None
            else np.asarray(instance.routing, dtype=np.int64),
            route_keys=keys if keys and any(k is not None for k in keys) else None,
            timestamps=column("arrival_ms", np.float64),
            input_tokens=column("input_tokens", np.float64),
            output_tokens=column("output_tokens", np.float64),
            block_size_tokens=instance.block_size_tokens,
            block_tokens=weights,
            fleet_size=instance.fleet_size,
            labels=labels if labels and any(labels) else None,
        )
