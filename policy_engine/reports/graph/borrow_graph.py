"""The borrow graph as a picture: DOT built with the ``graphviz`` package, laid out by Graphviz's ``dot``.

One node per share (name, capacity per instance type, strategy), one cluster per job queue,
one edge ``lender -> borrower`` per instance type labelled with the most that can flow
(``BorrowGraph.edge_capacity``). Strategies differ in colour *and* shape so the picture
survives grey-scale printing; RESERVE shares sit in a dashed "isolated" box of their own
because nothing ever flows in or out of them. Shares (and guarantees) a check flagged get
a red border and the rule IDs in their label; findings about a job queue or its service
environment (BQ201, BQ203, AWS limits) colour the queue's cluster border and list their
rule IDs in its label; findings about the whole topology go under the graph's title.
Nothing a check found is left out of the picture. Each training plan a drawn share is known to use
(the plan's ``shares:``, a guarantee's ``during:``: ``analysis.borrow.plan_users``) is a purple node
listing its windows, with a dotted edge to each such share, so it sits beside them.

The DOT source never needs the ``dot`` program; SVG and PNG do, and a missing ``dot`` is
reported as ``RenderError`` with one line the command prints.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import graphviz

from policy_engine.foundation.output_files import open_binary_output, open_output
from policy_engine.reports.graph.view import (
    MAX_DOT_EDGES,
    CheckReport,
    ClusterView,
    EdgeMode,
    EdgeView,
    Flag,
    NodeView,
    PlanUseView,
    RenderError,
    Topology,
    build,
    pool_edges,
)
from policy_engine.reports.kit.safe_text import visible

__all__ = ["FINDING_COLOUR", "MAX_DOT_EDGES", "MAX_DRAWN_EDGES", "STRATEGY_STYLES", "SUPPRESSED_COLOUR", "EdgeMode",
           "Flag", "RenderError", "build_dot", "pool_edges", "write_dot", "write_png", "write_svg"]

#: Above this many edges Graphviz takes minutes and the picture is unreadable: ask for fewer queues instead.
MAX_DRAWN_EDGES = 1500


@dataclass(frozen=True)
class StrategyStyle:
    shape: str
    fill: str
    style: str
    caption: str


STRATEGY_STYLES = {
    "LEND_AND_BORROW": StrategyStyle("box", "#cfe2ff", "rounded,filled", "lends and borrows"),
    "LEND": StrategyStyle("box", "#d1f2d1", "filled", "lends idle capacity"),
    "RESERVE": StrategyStyle("box", "#e6e6e6", "filled,dashed", "isolated: never lends or borrows"),
}
FINDING_COLOUR = {Flag.ERROR: "#d62728", Flag.WARNING: "#ff7f0e", Flag.INFO: "#1f77b4"}
#: Findings a ``suppress`` entry accepted: still flagged, without the alarm colour.
SUPPRESSED_COLOUR = "#7f7f7f"
EDGE_COLOUR, BLOCKED_EDGE_COLOUR = "#1f4e9c", "#9e9e9e"


def _colour(flag: Flag) -> str:
    """Red for an unsuppressed error, orange for an unsuppressed warning, grey when the others are suppressed, blue
    for notes (info) alone."""
    return SUPPRESSED_COLOUR if flag is Flag.SUPPRESSED else FINDING_COLOUR[flag]


_PLAIN_ID = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./ -]*")


def _id(name: str) -> str:
    """A DOT node ID for a share: its name when DOT reads it back literally, else a stable stand-in (a ``:``
    would be read as a port, ``<...>`` as HTML, a backslash as an escape); the label shows the real name."""
    if _PLAIN_ID.fullmatch(name):
        return name
    return "share_" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _label(*lines: str) -> graphviz.quoting.NoHtml:
    """Label text shown literally: backslashes escaped (``\\N`` would print the node ID), never an HTML label."""
    return graphviz.nohtml("\n".join(visible(line).replace("\\", "\\\\").replace('"', '\\"') for line in lines))


def build_dot(topology: Topology, report: CheckReport | None = None, queues: tuple[str, ...] = (),
              edge_mode: EdgeMode = EdgeMode.PAIRWISE, instance_types: tuple[str, ...] = ()) -> graphviz.Digraph:
    """The DOT graph (``.source`` is the text); ``queues`` limits it to some job queues (all when empty),
    ``instance_types`` its edges to some types. Node IDs are the ``QUEUE/SHARE`` names themselves: unique,
    and graphviz quotes them; a pool's is ``QUEUE pool TYPE``."""
    view = build(topology, report, queues, edge_mode, instance_types)
    dot = graphviz.Digraph("borrow_graph", graph_attr={
        "rankdir": "LR", "fontname": "Helvetica", "fontsize": "12", "nodesep": "0.4", "ranksep": "1.2",
        "labelloc": "t", "label": _legend_label(view.elsewhere, edge_mode),
    }, node_attr={"fontname": "Helvetica", "fontsize": "11"}, edge_attr={"fontname": "Helvetica", "fontsize": "10"})
    for queue in view.clusters:
        _add_cluster(dot, queue)
    _draw_plans(dot, view.plans)
    if edge_mode is EdgeMode.POOL:
        _draw_pools(dot, view.edges)
        return dot
    for edge in view.edges:
        most = edge.most
        colour = EDGE_COLOUR if most > 0 else BLOCKED_EDGE_COLOUR
        dot.edge(_id(edge.source), _id(edge.target), label=_label(f"{edge.instance_type} ≤ {most}"), color=colour,
                 fontcolor=colour, style="solid" if most > 0 else "dashed", penwidth=f"{1 + min(most, 8) * 0.4:g}")
    return dot


def _add_cluster(dot: graphviz.Digraph, queue: ClusterView) -> None:
    with dot.subgraph(name=f"cluster_{_id(queue.queue)}") as cluster:
        label = "\n".join(queue.lines)
        attrs = {"style": "rounded", "color": "#555555", "fontsize": "12"}
        if found := queue.flagged:
            colour = _colour(found.flag)
            label += f"\n⚠ {found.rules}"
            attrs.update(color=colour, fontcolor=colour, penwidth="3",
                         tooltip=_label(f"job queue {queue.queue}", *found.lines))
        cluster.attr(label=_label(*label.split("\n")), **attrs)
        for node in queue.shares:
            _add_node(cluster, node)
        if queue.reserved:
            with cluster.subgraph(name=f"cluster_{_id(queue.queue)}__reserved") as isolated:
                isolated.attr(label="RESERVE: isolated, no lending or borrowing", style="dashed",
                              color="#777777", fontsize="10")
                for node in queue.reserved:
                    _add_node(isolated, node)


POOL_FILL = "#fff4cc"
#: The training plans' colour: the HTML report draws plan windows in purple too.
PLAN_FILL, PLAN_COLOUR = "#eadcf8", "#6a3d9a"


def plan_id(name: str) -> str:
    """A plan's node ID: no share ID (``QUEUE/SHARE``, no space) nor pool ID (``Q pool T``) can be it."""
    return _id(f"training plan {name}")


def _draw_plans(dot: graphviz.Digraph, users: Sequence[PlanUseView]) -> None:
    """Each plan once, then a dotted edge to each of the drawn shares that use it."""
    drawn: set[str] = set()
    for user in users:
        node = plan_id(user.plan)
        if node not in drawn:
            drawn.add(node)
            dot.node(node, label=_label(f"training plan {user.plan}", *user.windows),
                     shape="note", style="filled", fillcolor=PLAN_FILL, color=PLAN_COLOUR, fontcolor=PLAN_COLOUR,
                     tooltip=_label(f"training plan {user.plan}"))
        dot.edge(node, _id(user.share), label=_label(f"plan jobs ({user.declared})"), color=PLAN_COLOUR,
                 fontcolor=PLAN_COLOUR, style="dotted", arrowhead="none")


def _draw_pools(dot: graphviz.Digraph, pooled: Sequence[EdgeView]) -> None:
    """The pool nodes (inside their queue's cluster) and their edges, labelled with what can flow."""
    pools = {edge.target: edge.instance_type for edge in pooled if " pool " in edge.target}
    pools.update({edge.source: edge.instance_type for edge in pooled if " pool " in edge.source})
    for pool, instance_type in pools.items():
        queue = pool.split(" pool ", 1)[0]
        with dot.subgraph(name=f"cluster_{_id(queue)}") as cluster:
            cluster.node(_id(pool), label=_label(f"{instance_type} pool", "idle capacity lent in the queue"),
                         shape="ellipse", style="filled", fillcolor=POOL_FILL, tooltip=_label(pool))
    for edge in pooled:
        colour = EDGE_COLOUR if edge.most > 0 else BLOCKED_EDGE_COLOUR
        into_pool = " pool " in edge.target
        text = f"lends ≤ {edge.most}" if into_pool else f"borrows ≤ {edge.most}"
        dot.edge(_id(edge.source), _id(edge.target), label=_label(text), color=colour, fontcolor=colour,
                 style="solid" if edge.most > 0 else "dashed", penwidth=f"{1 + min(edge.most, 8) * 0.4:g}")


def _add_node(parent: graphviz.Digraph, node: NodeView) -> None:
    style = STRATEGY_STYLES[node.strategy]
    lines = list(node.lines)
    attrs = {"shape": style.shape, "style": style.style, "fillcolor": style.fill, "tooltip": _label(node.node)}
    if found := node.flagged:
        colour = _colour(found.flag)
        lines.append(f"⚠ {found.rules}")
        attrs.update(color=colour, penwidth="3", fontcolor=colour, tooltip=_label(node.node, *found.lines))
    if node.strategy == "RESERVE":
        attrs["peripheries"] = "2"
    parent.node(_id(node.node), label=_label(*lines), **attrs)


def _legend_label(elsewhere: tuple[Flag, tuple[str, ...]] | None = None,
                  edge_mode: EdgeMode = EdgeMode.PAIRWISE) -> str:
    """Title and key as the graph's own HTML-like label, so the key never disturbs the layout; findings
    about the whole topology (``elsewhere``) get a row of their own."""
    cells = ""
    for strategy, style in STRATEGY_STYLES.items():
        border = ' BORDER="2" STYLE="dashed"' if strategy == "RESERVE" else ' BORDER="1"'
        if "rounded" in style.style:
            border += ' STYLE="rounded"'
        cells += f'<TD BGCOLOR="{style.fill}"{border}>{strategy}<BR/>{style.caption}</TD>'
    red = FINDING_COLOUR[Flag.ERROR]
    flagged = (f'<TD BORDER="3" COLOR="{red}"><FONT COLOR="{red}">'
               "flagged by check (⚠ rule IDs)<BR/>red: error, orange: warning, grey: suppressed</FONT></TD>")
    meaning = ("lender → pool: its limit of the type<BR/>pool → borrower: most it can borrow"
               if edge_mode is EdgeMode.POOL else "lender → borrower<BR/>type ≤ most that can flow")
    edge = f'<TD BORDER="0"><FONT COLOR="{EDGE_COLOUR}">{meaning}</FONT></TD>'
    rows = f"<TR>{cells}{flagged}{edge}</TR>"
    if elsewhere:
        flag, lines = elsewhere
        colour = _colour(flag)
        listed = "<BR/>".join(html.escape(f"⚠ {line}") for line in lines)
        rows += f'<TR><TD COLSPAN="5" ALIGN="LEFT"><FONT COLOR="{colour}">{listed}</FONT></TD></TR>'
    return (f'<<TABLE BORDER="0" CELLSPACING="6" CELLPADDING="4"><TR><TD COLSPAN="5"><B>Borrow graph</B></TD></TR>'
            f"{rows}</TABLE>>")


def write_dot(dot: graphviz.Digraph, path: Path) -> None:
    """The DOT source: needs no Graphviz, and has no edge limit below ``MAX_DOT_EDGES``."""
    with open_output(path, buffering=-1) as handle:  # a device or FIFO in place, never replaced or waited on
        handle.write(dot.source)


def write_svg(dot: graphviz.Digraph, path: Path) -> None:
    _draw(dot, path, "svg")


def write_png(dot: graphviz.Digraph, path: Path) -> None:
    _draw(dot, path, "png")


def _draw(dot: graphviz.Digraph, path: Path, kind: str) -> None:
    """The picture drawn by Graphviz's ``dot`` program; ``RenderError`` when it is missing or the graph too big."""
    edges = dot.source.count(" -> ")
    if edges > MAX_DRAWN_EDGES:
        raise RenderError(f"{path}: the borrow graph has {edges} edges, too many for a readable .{kind} "
                          f"(limit {MAX_DRAWN_EDGES}); draw some job queues with --queue NAME, or write a .dot file")
    try:
        data = dot.pipe(format=kind)
    except graphviz.ExecutableNotFound:
        raise RenderError(f"{path}: writing .{kind} needs Graphviz's 'dot' program, which is not on PATH "
                          "(install the 'graphviz' system package, e.g. apt-get install graphviz); "
                          "a .dot file needs nothing") from None
    except graphviz.CalledProcessError as error:
        raise RenderError(f"{path}: Graphviz failed: {error.stderr.decode(errors='replace').strip()}") from None
    with open_binary_output(path) as handle:
        handle.write(data)
