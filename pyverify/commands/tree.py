"""``pyverify tree``: the prefix (radix) tree of an instance, summarised or drawn."""

from __future__ import annotations

import json

import networkx as nx

from pyverify.commands.argtypes import chart_path
from pyverify.reports.charts import save_figure
from pyverify.errors import UserError
from pyverify.inputs.load import load_input
from pyverify.inputs.model import ROOT, prefix_tree

ORDER = 15

#: Drawing more nodes than this gives an unreadable picture, not a useful one.
MAX_DRAWN_NODES = 200


def register(subparsers) -> None:
    parser = subparsers.add_parser("tree", help="the prefix tree of an instance: size, depth, branching; draw small ones")
    parser.add_argument("instance", help="instance JSON file")
    parser.add_argument("--draw", type=chart_path, metavar="PATH", help=f"draw the tree (.png, .svg, or a stem for both; at most {MAX_DRAWN_NODES} blocks)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run_tree)


def tree_summary(tree: nx.DiGraph) -> dict:
    """Blocks, leaves, depth and the widest branching of a prefix tree."""
    depth = nx.single_source_shortest_path_length(tree, ROOT)
    blocks = tree.number_of_nodes() - 1
    return {
        "blocks": blocks,
        "first_blocks": tree.out_degree(ROOT),
        "leaves": sum(1 for node in tree if node != ROOT and tree.out_degree(node) == 0),
        "max_depth": max(depth.values()),
        "max_children": max((tree.out_degree(node) for node in tree if node != ROOT), default=0),
        "shared_blocks": sum(1 for node in tree if node != ROOT and tree.nodes[node]["requests"] > 1),
    }


def tree_layout(tree: nx.DiGraph, depth: dict) -> dict:
    """Leaves side by side in depth-first order; a parent centred over its children."""
    x: dict = {}
    leaves_placed = 0
    for node in nx.dfs_postorder_nodes(tree, ROOT):
        children = list(tree.successors(node))
        if children:
            x[node] = sum(x[child] for child in children) / len(children)
        else:
            x[node] = leaves_placed
            leaves_placed += 1
    return {node: (x[node], -depth[node]) for node in tree}


def draw_tree(tree: nx.DiGraph, path: str, title: str) -> list:
    """Layered drawing: depth downwards, node size by how many requests pass through."""
    if tree.number_of_nodes() - 1 > MAX_DRAWN_NODES:
        raise UserError(f"{path}: --draw: the tree has {tree.number_of_nodes() - 1} blocks; drawing is for at most {MAX_DRAWN_NODES}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depth = nx.single_source_shortest_path_length(tree, ROOT)
    positions = tree_layout(tree, depth)
    figure, axes = plt.subplots(figsize=(8, 1.2 + 1.0 * max(depth.values())))
    sizes = [60 + 20 * tree.nodes[node]["requests"] ** 0.5 for node in tree]
    labels = {node: ("root" if node == ROOT else str(node)) for node in tree}
    nx.draw_networkx(tree, positions, ax=axes, node_size=sizes, labels=labels, font_size=6,
                     node_color="#dbe6f3", edgecolors="#1f4e79", arrows=False)
    axes.set_title(title, fontsize=9)
    axes.axis("off")
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


def run_tree(args) -> int:
    instance = load_input(args.instance)
    tree = prefix_tree(instance)
    summary = tree_summary(tree)
    drawn = draw_tree(tree, args.draw, f"{instance.name}: prefix tree") if args.draw else []
    if args.json:
        print(json.dumps({"instance": instance.name, **summary, "drawings": [str(p) for p in drawn]}, indent=2))
    else:
        print(f"{instance.name}: prefix tree")
        for key, value in summary.items():
            print(f"  {key:13} {value}")
        for drawing in drawn:
            print(f"drawing: {drawing}")
    return 0
