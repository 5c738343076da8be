"""Hypothesis strategies for prefix-closed instances.

A prefix-closed trace is a set of root-to-node paths in a tree whose nodes
are block ids. We draw the tree as a parent list (node i's parent is the root
or an earlier node), relabel nodes with distinct random ids, and draw each
request as the path to a random node, routed to a random host.
"""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def prefix_closed_chains(draw, max_nodes: int = 12, max_requests: int = 25):
    n_nodes = draw(st.integers(1, max_nodes))
    parents = [draw(st.integers(-1, i - 1)) for i in range(n_nodes)]
    labels = draw(st.lists(st.integers(0, 10_000), min_size=n_nodes, max_size=n_nodes, unique=True))
    targets = draw(st.lists(st.integers(0, n_nodes - 1), min_size=1, max_size=max_requests))
    chains = []
    for node in targets:
        path = []
        while node != -1:
            path.append(labels[node])
            node = parents[node]
        chains.append(tuple(reversed(path)))
    return chains


@st.composite
def routed_instances(draw, max_hosts: int = 6):
    chains = draw(prefix_closed_chains())
    hosts = draw(st.integers(1, max_hosts))
    routing = draw(st.lists(st.integers(0, hosts - 1), min_size=len(chains), max_size=len(chains)))
    return chains, hosts, routing
