"""``pyverify tree``: the prefix (radix) tree of an instance, summarised or drawn."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only; networkx is imported where the tree is built
    import networkx as nx


from pyverify.commands.argtypes import chart_path, input_file
from pyverify.commands.basic import INPUT_HELP
from pyverify.reports.charts import save_figure
from pyverify.commands.input_options import add_input_options, load_with
from pyverify.errors import shown
from pyverify.api.reading import ROOT, prefix_tree

ORDER = 15

#: Drawing more nodes than this gives an unreadable picture, not a useful one.
MAX_DRAWN_NODES = 200


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tree",
        help="the prefix tree of an input (an instance or a trace): size, depth, branching; draw small ones",
    )
    parser.add_argument("instance", type=input_file, help=INPUT_HELP)
    parser.add_argument(
        "--draw",
        type=chart_path,
        metavar="PATH",
        help=f"draw the tree (.png, .svg, or a stem for both); a tree of more than {MAX_DRAWN_NODES} blocks is not "
        "drawn (the statistics are printed, and a line says the drawing was skipped)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_input_options(parser)
    parser.set_defaults(func=run_tree)


#: What each figure of :func:`tree_summary` means, printed beside it.
SUMMARY_MEANING = {
    "blocks": "distinct block ids (nodes below the root)",
    "first_blocks": "distinct first blocks: the prompt openings (children of the root)",
    "leaves": "blocks no request extends",
    "max_depth": "the longest chain, in blocks",
    "max_children": "the widest branching at any node, the root included",
    "shared_blocks": "blocks that more than one request reads: the reusable prefixes",
}


def tree_summary(tree: nx.DiGraph) -> dict:
    """Blocks, openings, leaves, depth, the widest branching and the shared blocks of a prefix tree."""
    import networkx as nx  # here, not at the top: --help stays fast

    depth = nx.single_source_shortest_path_length(tree, ROOT)
    blocks = tree.number_of_nodes() - 1
    return {
        "blocks": blocks,
        "first_blocks": tree.out_degree(ROOT),
        "leaves": sum(1 for node in tree if node != ROOT and tree.out_degree(node) == 0),
        "max_depth": max(depth.values()),
        "max_children": max(tree.out_degree(node) for node in tree),
        "shared_blocks": sum(
            1 for node in tree if node != ROOT and tree.nodes[node]["requests"] > 1
        ),
    }


def tree_layout(tree: nx.DiGraph, depth: dict) -> dict:
    """Leaves side by side in depth-first order; a parent centred over its children."""
    import networkx as nx  # here, not at the top: --help stays fast

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
    import networkx as nx  # here, not at the top: --help stays fast

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depth = nx.single_source_shortest_path_length(tree, ROOT)
    positions = tree_layout(tree, depth)
    leaves = sum(1 for node in tree if tree.out_degree(node) == 0)
    width = min(16.0, max(6.0, 0.32 * leaves))
    figure, axes = plt.subplots(figsize=(width, 1.6 + 0.9 * max(depth.values())))
    # One node size that fits the longest label; colour (with its scale) says how
    # many requests pass through a block, so size never has to.
    longest = max(len(str(node)) for node in tree if node != ROOT)
    font = 6 if longest <= 3 else 5
    node_size = 140 + 55 * max(longest, 4)
    nodes = [node for node in tree if node != ROOT]
    counts = [tree.nodes[node]["requests"] for node in nodes]
    nx.draw_networkx_edges(tree, positions, ax=axes, arrows=False, edge_color="#7f8fa6", width=0.8)
    drawn = nx.draw_networkx_nodes(
        tree,
        positions,
        nodelist=nodes,
        ax=axes,
        node_size=node_size,
        node_color=counts,
        cmap="Blues",
        vmin=0,
        vmax=max(counts) * 1.15,
        edgecolors="#1f4e79",
        linewidths=0.6,
    )
    nx.draw_networkx_nodes(
        tree,
        positions,
        nodelist=[ROOT],
        ax=axes,
        node_size=node_size,
        node_color="white",
        edgecolors="#1f4e79",
        node_shape="s",
    )
    dark = {
        node for node, count in zip(nodes, counts) if count > 0.55 * max(counts)
    }  # white text on dark fill
    for group, colour in ((set(tree) - dark, "black"), (dark, "white")):
        nx.draw_networkx_labels(
            tree,
            positions,
            labels={node: ("root" if node == ROOT else str(node)) for node in group},
            ax=axes,
            font_size=font,
            font_color=colour,
        )
    colorbar = figure.colorbar(drawn, ax=axes, fraction=0.025, pad=0.01)
    colorbar.set_label("requests through the block", fontsize=8)
    colorbar.ax.tick_params(labelsize=7)
    axes.set_title(title, fontsize=9)
    axes.axis("off")
    try:
        return save_figure(figure, path)
    finally:
        plt.close(figure)


def run_tree(args) -> int:
    instance = load_with(args, args.instance)
    tree = prefix_tree(instance)
    summary = tree_summary(tree)
    # A big tree draws as an unreadable blot: skip the drawing, keep the statistics.
    skipped = None
    if args.draw and summary["blocks"] > MAX_DRAWN_NODES:
        skipped = f"the tree has {summary['blocks']} blocks; --draw draws at most {MAX_DRAWN_NODES}, so {args.draw} was not written"
    drawn = (
        draw_tree(tree, args.draw, f"{instance.name}: prefix tree")
        if args.draw and skipped is None
        else []
    )
    if args.json:
        print(
            json.dumps(
                {
                    "instance": instance.name,
                    **summary,
                    "drawings": [str(p) for p in drawn],
                    **({"drawing_skipped": skipped} if skipped else {}),
                },
                indent=2,
            )
        )
    else:
        print(f"{instance.name}: prefix tree")
        for key, value in summary.items():
            print(f"  {key:13} {value:>8}  {SUMMARY_MEANING[key]}")
        for drawing in drawn:
            print(f"drawing: {shown(drawing)}")
        if skipped:
            print(f"drawing skipped: {skipped}")
    return 0
