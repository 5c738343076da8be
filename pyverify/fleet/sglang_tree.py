"""The approximate radix tree of the SGLang router's ``cache_aware`` policy, over block ids.

A port of ``sgl-router/src/policies/tree.rs`` (github.com/sgl-project/sglang at 4d40eec0):
one radix tree shared by every worker ("tenant"), each node holding a run of symbols and, per
tenant that routed a request through it, the time of its last access. The router never sees an
engine's cache: the tree records what it routed where. Here a symbol is a block id of the trace
(SGLang's router keys its tree on the request's characters), so sizes count blocks, not characters.

Followed line for line (names as in tree.rs): ``insert`` (a new node takes the rest of the text; a
partial match splits the node, the upper part keeping a copy of its tenants; a tenant's
``tenant_char_count`` grows by a node's length the first time the tenant is attached to it),
``prefix_match`` (walk while the node's text matches fully; stop inside a node on a partial match,
counting the matched part; touch the chosen tenant's time from that node up to the root),
``get_smallest_tenant`` and ``evict_tenant_by_size`` (pop the least recently used (tenant, leaf)
pairs while the tenant is over the size; a node left with neither tenants nor children goes; its
parent is queued when it becomes a leaf for that tenant).

Where the Rust code leaves the order to a ``DashMap`` or a ``BinaryHeap`` (which tenant of a node is
"the first", which of equally small tenants is the smallest, which of equal timestamps is evicted
first) the order here is fixed: the lowest host id, and for evictions (timestamp, host, node age).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Sequence


class _Node:
    __slots__ = ("children", "text", "tenants", "parent", "serial")

    def __init__(self, text: tuple, parent: "_Node | None", serial: int) -> None:
        self.children: dict[int, _Node] = {}  # keyed by the first symbol of the child's text
        self.text = text
        self.tenants: dict[int, int] = {}  # host -> last access (ms)
        self.parent = parent
        self.serial = serial  # creation order: the last tie-break of evictions


def _shared_prefix_count(a: Sequence[int], b: Sequence[int]) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


class ApproxTree:
    """tree.rs's ``Tree`` with host ids as tenants and block ids as symbols."""

    def __init__(self) -> None:
        self._serials = itertools.count()
        self.root = _Node((), None, next(self._serials))
        self.tenant_char_count: dict[int, int] = {}

    def insert(self, text: Sequence[int], tenant: int, now_ms: int) -> None:
        text = tuple(text)
        self.root.tenants[tenant] = now_ms
        self.tenant_char_count.setdefault(tenant, 0)
        prev = self.root
        index = 0
        while index < len(text):
            curr = prev
            first = text[index]
            matched = curr.children.get(first)
            if matched is None:  # no child starts here: the rest of the text becomes a new node
                node = _Node(text[index:], curr, next(self._serials))
                self.tenant_char_count[tenant] += len(node.text)
                node.tenants[tenant] = now_ms
                curr.children[first] = node
                return
            rest = text[index:]
            shared = _shared_prefix_count(matched.text, rest)
            if shared < len(matched.text):  # split: [curr] -> [upper] -> [matched, shortened]
                upper = _Node(matched.text[:shared], curr, next(self._serials))
                upper.tenants = dict(matched.tenants)
                matched.text = matched.text[shared:]
                matched.parent = upper
                upper.children[matched.text[0]] = matched
                curr.children[first] = upper
                prev = upper
            else:
                prev = matched
            if tenant not in prev.tenants:
                self.tenant_char_count[tenant] += len(prev.text)
            prev.tenants[tenant] = now_ms
            index += shared

    def match_node(self, text: Sequence[int]) -> tuple[int, _Node]:
        """prefix_match's walk: (symbols matched, the node reached), touching nothing."""
        text = tuple(text)
        prev = self.root
        index = 0
        while index < len(text):
            matched = prev.children.get(text[index])
            if matched is None:
                break
            shared = _shared_prefix_count(matched.text, text[index:])
            index += shared
            prev = matched
            if shared != len(matched.text):
                break
        return index, prev

    def prefix_match(self, text: Sequence[int], now_ms: int) -> tuple[int, int | None]:
        """(symbols matched, the tenant of the node reached: its lowest host id; ``None`` for "empty")."""
        index, prev = self.match_node(text)
        if not prev.tenants:
            return index, None
        tenant = min(prev.tenants)
        node: _Node | None = prev
        while node is not None:
            node.tenants[tenant] = now_ms
            node = node.parent
        return index, tenant

    def get_smallest_tenant(self) -> int | None:
        if not self.tenant_char_count:
            return None
        return min(self.tenant_char_count, key=lambda host: (self.tenant_char_count[host], host))

    @staticmethod
    def _leaf_of(node: _Node) -> list[int]:
        """The tenants for which ``node`` is a leaf: held here and by none of its children."""
        below = set()
        for child in node.children.values():
            below.update(child.tenants)
        return [tenant for tenant in node.tenants if tenant not in below]

    def evict_tenant_by_size(self, max_size: int) -> None:
        heap: list[tuple[int, int, int, _Node]] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            stack.extend(node.children.values())
            for tenant in self._leaf_of(node):
                heap.append((node.tenants[tenant], tenant, node.serial, node))
        heapq.heapify(heap)
        while heap:
            _, tenant, _, node = heapq.heappop(heap)
            if self.tenant_char_count.get(tenant, 0) <= max_size:
                continue
            if tenant in node.tenants:
                self.tenant_char_count[tenant] = max(
                    0, self.tenant_char_count[tenant] - len(node.text)
                )
            node.tenants.pop(tenant, None)
            parent = node.parent
            if not node.children and not node.tenants and parent is not None and node.text:
                parent.children.pop(node.text[0], None)
            if parent is not None and tenant in self._leaf_of(parent):
                heapq.heappush(heap, (parent.tenants[tenant], tenant, parent.serial, parent))

    def used_size_per_tenant(self) -> dict[int, int]:
        """Each tenant's size recomputed from the nodes (tree.rs's ``get_used_size_per_tenant``)."""
        sizes: dict[int, int] = {}
        stack = [self.root]
        while stack:
            node = stack.pop()
            for tenant in node.tenants:
                sizes[tenant] = sizes.get(tenant, 0) + len(node.text)
            stack.extend(node.children.values())
        return sizes
