"""The borrow graph as a picture: DOT built with the ``graphviz`` package, laid out by Graphviz's ``dot``.

One node per share (name, capacity per instance type, strategy), one cluster per job queue,
one edge ``lender -> borrower`` per instance type labelled with the most that can flow
(``BorrowGraph.edge_capacity``). Strategies differ in colour *and* shape so the picture
survives grey-scale printing; RESERVE shares sit in a dashed "isolated" box of their own
because nothing ever flows in or out of them. Shares (and guarantees) a check flagged get
a red border and the rule IDs in their label; findings about a job queue or its service
environment (BQ201, BQ203, AWS limits) colour the queue's cluster border and list their
rule IDs in its label; findings about the whole topology go under the graph's title.
Nothing a check found is left out of the picture.

The DOT source never needs the ``dot`` program; SVG and PNG do, and a missing ``dot`` is
reported as ``RenderError`` with one line the command prints.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import graphviz

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.checks import CheckReport, borrow_graph
from policy_engine.analysis.rules.objects import findings_by_share, locate
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.foundation.model import UNLIMITED_BORROW, Topology, share_id
from policy_engine.foundation.output_files import open_binary_output, open_output
from policy_engine.reports.kit.safe_text import visible

#: Above this many edges Graphviz takes minutes and the picture is unreadable: ask for fewer queues instead.
MAX_DRAWN_EDGES = 1500
#: Most edges even a .dot file gets: twice a topology at AWS's limits (50 queues x 20 shares x 5 types).
MAX_DOT_EDGES = 200_000


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
FINDING_COLOUR = {Severity.ERROR: "#d62728", Severity.WARNING: "#ff7f0e", Severity.INFO: "#1f77b4"}
#: Findings a ``suppress`` entry accepted: still flagged, without the alarm colour.
SUPPRESSED_COLOUR = "#7f7f7f"
EDGE_COLOUR, BLOCKED_EDGE_COLOUR = "#1f4e9c", "#9e9e9e"


class EdgeMode(StrEnum):
    """How borrowing is drawn: what the model is (a pool per queue and type), or every lender -> borrower pair."""

    #: lenders feed a pool per queue and instance type, borrowers draw from it: at most 2 edges per share and type
    POOL = "pool"
    #: one edge per lender, borrower and type: grows with the square of the shares (900 at 20 shares x 5 types)
    PAIRWISE = "pairwise"


class RenderError(Exception):
    """The picture cannot be written; ``str()`` is the one line to show the user."""


def findings_by_queue(topology: Topology, report: CheckReport | None) -> dict[str, list[Finding]]:
    """Findings about a job queue (``job_queues[Q]``) or its environment (``service_environments[E]``, shown
    on every queue that runs on ``E``), by queue name."""
    if report is None:
        return {}
    out: dict[str, list[Finding]] = {}
    for finding in report.findings:
        where = locate(topology, finding.object)
        if where.share is not None:
            continue
        for queue in topology.job_queues:
            if queue.name == where.queue or (where.queue is None and queue.service_environment == where.environment):
                out.setdefault(queue.name, []).append(finding)
    return out


def _findings_by_share(topology: Topology, report: CheckReport | None) -> dict[str, list[Finding]]:
    return findings_by_share(topology, report.findings) if report is not None else {}


def topology_findings(topology: Topology, report: CheckReport | None) -> list[Finding]:
    """Findings no share or queue cluster shows (account-wide limits, an unresolved guarantee, an unused
    environment), so the picture still says they exist."""
    if report is None:
        return []
    placed = {id(f) for found in (*_findings_by_share(topology, report).values(),
                                  *findings_by_queue(topology, report).values()) for f in found}
    return [f for f in report.findings if id(f) not in placed]


def _colour(findings: Sequence[Finding]) -> str:
    """Red for an unsuppressed error, orange for an unsuppressed warning, grey when the others are suppressed, blue
    for notes (info) alone."""
    open_findings = {f.severity for f in findings if f.suppressed is None}
    for severity in (Severity.ERROR, Severity.WARNING):
        if severity in open_findings:
            return FINDING_COLOUR[severity]
    if any(f.suppressed is not None for f in findings):
        return SUPPRESSED_COLOUR
    return FINDING_COLOUR[Severity.INFO]


def _rule_ids(findings: list[Finding]) -> str:
    return ", ".join(dict.fromkeys(f.rule + (" (suppressed)" if f.suppressed is not None else "")
                                   for f in findings))


def _capacity_lines(capacity: dict[str, int]) -> list[str]:
    return [f"{instance_type}: {count}" for instance_type, count in capacity.items()]


def _strategy_line(graph: BorrowGraph, node: str) -> str:
    share = graph.share(node)
    if share.strategy != "LEND_AND_BORROW":
        return share.strategy
    limit = share.effective_borrow_limit
    return f"LEND_AND_BORROW, borrow limit {'unlimited' if limit == UNLIMITED_BORROW else f'{limit}%'}"


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


@dataclass(frozen=True)
class PoolEdge:
    """One edge of the pool view: a lender feeding a pool, or a pool feeding a borrower."""

    source: str
    target: str
    instance_type: str
    most: int


def pool_id(queue: str, instance_type: str) -> str:
    """A pool's node ID: no share ID can be it (share IDs are ``QUEUE/SHARE`` with no space)."""
    return f"{queue} pool {instance_type}"


def pool_edges(graph: BorrowGraph, topology: Topology, queues: tuple[str, ...] = (),
               instance_types: tuple[str, ...] = ()) -> list[PoolEdge]:
    """Per queue and instance type that anyone can borrow: lender -> pool (its limit of the type) and
    pool -> borrower (the most it can borrow, the max-flow the guarantees use)."""
    out: list[PoolEdge] = []
    for queue in topology.job_queues:
        if queues and queue.name not in queues:
            continue
        kinds = sorted({t for share in queue.shares for t in share.capacity})
        for instance_type in kinds:
            if instance_types and instance_type not in instance_types:
                continue
            borrowers = [share_id(queue, s) for s in queue.shares if s.borrows and instance_type in s.capacity
                         and graph.lenders(share_id(queue, s), instance_type)]
            lenders = sorted({lender for b in borrowers for lender in graph.lenders(b, instance_type)},
                             key=lambda node: [share_id(queue, s) for s in queue.shares].index(node))
            if not borrowers:
                continue
            pool = pool_id(queue.name, instance_type)
            out += [PoolEdge(lender, pool, instance_type, graph.limit(lender, instance_type)) for lender in lenders]
            out += [PoolEdge(pool, b, instance_type, graph.max_borrowed(b, instance_type)) for b in borrowers]
    return out


def build_dot(topology: Topology, report: CheckReport | None = None, queues: tuple[str, ...] = (),
              edge_mode: EdgeMode = EdgeMode.PAIRWISE, instance_types: tuple[str, ...] = ()) -> graphviz.Digraph:
    """The DOT graph (``.source`` is the text); ``queues`` limits it to some job queues (all when empty),
    ``instance_types`` its edges to some types. Node IDs are the ``QUEUE/SHARE`` names themselves: unique,
    and graphviz quotes them; a pool's is ``QUEUE pool TYPE``."""
    graph = borrow_graph(topology, report)
    pooled = pool_edges(graph, topology, queues, instance_types) if edge_mode is EdgeMode.POOL else []
    edges = len(pooled) if edge_mode is EdgeMode.POOL else sum(
        1 for lender, _, kind in graph.graph.edges(keys=True)
        if (not queues or graph.queue(lender).name in queues) and (not instance_types or kind in instance_types))
    if edges > MAX_DOT_EDGES:
        raise RenderError(f"the borrow graph has {edges:,} edges, more than a picture can show (limit "
                          f"{MAX_DOT_EDGES:,}); draw some job queues with --queue NAME")
    flagged = _findings_by_share(topology, report)
    by_queue = findings_by_queue(topology, report)
    dot = graphviz.Digraph("borrow_graph", graph_attr={
        "rankdir": "LR", "fontname": "Helvetica", "fontsize": "12", "nodesep": "0.4", "ranksep": "1.2",
        "labelloc": "t", "label": _legend_label(topology_findings(topology, report), edge_mode),
    }, node_attr={"fontname": "Helvetica", "fontsize": "11"}, edge_attr={"fontname": "Helvetica", "fontsize": "10"})
    for queue in topology.job_queues:
        if queues and queue.name not in queues:
            continue
        environment = topology.environment(queue.service_environment)
        env_text = ", ".join(_capacity_lines(dict(environment.capacity))) if environment else "missing"
        with dot.subgraph(name=f"cluster_{_id(queue.name)}") as cluster:
            named = set(topology.named_at_deploy)
            label = (f"job queue {queue.name}" + (" (named at deploy)" if f"job_queues[{queue.name}]" in named else "")
                     + f"\nservice environment {queue.service_environment} ({env_text})"
                     + (" (named at deploy)" if f"service_environments[{queue.service_environment}]" in named
                        else ""))
            attrs = {"style": "rounded", "color": "#555555", "fontsize": "12"}
            if found := by_queue.get(queue.name):
                colour = _colour(found)
                label += f"\n⚠ {_rule_ids(found)}"
                attrs.update(color=colour, fontcolor=colour, penwidth="3",
                             tooltip=_label(f"job queue {queue.name}", *(f.line() for f in found)))
            cluster.attr(label=_label(*label.split("\n")), **attrs)
            reserved = [s for s in queue.shares if s.strategy == "RESERVE"]
            for share in queue.shares:
                if share.strategy != "RESERVE":
                    _add_node(cluster, graph, share_id(queue, share), flagged)
            if reserved:
                with cluster.subgraph(name=f"cluster_{_id(queue.name)}__reserved") as isolated:
                    isolated.attr(label="RESERVE: isolated, no lending or borrowing", style="dashed",
                                  color="#777777", fontsize="10")
                    for share in reserved:
                        _add_node(isolated, graph, share_id(queue, share), flagged)
    if edge_mode is EdgeMode.POOL:
        _draw_pools(dot, pooled)
        return dot
    for lender, borrower, instance_type, data in graph.graph.edges(keys=True, data=True):
        if (queues and graph.queue(lender).name not in queues) or (instance_types and instance_type not in
                                                                    instance_types):
            continue
        most = data["capacity"]
        colour = EDGE_COLOUR if most > 0 else BLOCKED_EDGE_COLOUR
        dot.edge(_id(lender), _id(borrower), label=_label(f"{instance_type} ≤ {most}"), color=colour,
                 fontcolor=colour, style="solid" if most > 0 else "dashed", penwidth=f"{1 + min(most, 8) * 0.4:g}")
    return dot


POOL_FILL = "#fff4cc"


def _draw_pools(dot: graphviz.Digraph, pooled: Sequence[PoolEdge]) -> None:
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


def _add_node(parent: graphviz.Digraph, graph: BorrowGraph, node: str, flagged: dict[str, list[Finding]]) -> None:
    share = graph.share(node)
    style = STRATEGY_STYLES[share.strategy]
    lines = [share.name, *_capacity_lines(dict(share.capacity)), _strategy_line(graph, node)]
    if share.in_share_preemption:
        lines.append("in-share preemption on")
    if share.state == "DISABLED":
        lines.append("DISABLED")
    attrs = {"shape": style.shape, "style": style.style, "fillcolor": style.fill, "tooltip": _label(node)}
    findings = flagged.get(node, [])
    if findings:
        colour = _colour(findings)
        lines.append(f"⚠ {_rule_ids(findings)}")
        attrs.update(color=colour, penwidth="3", fontcolor=colour,
                     tooltip=_label(node, *(f.line() for f in findings)))
    if share.strategy == "RESERVE":
        attrs["peripheries"] = "2"
    parent.node(_id(node), label=_label(*lines), **attrs)


def _legend_label(elsewhere: Sequence[Finding] = (), edge_mode: EdgeMode = EdgeMode.PAIRWISE) -> str:
    """Title and key as the graph's own HTML-like label, so the key never disturbs the layout; findings
    about the whole topology (``elsewhere``) get a row of their own."""
    cells = ""
    for strategy, style in STRATEGY_STYLES.items():
        border = ' BORDER="2" STYLE="dashed"' if strategy == "RESERVE" else ' BORDER="1"'
        if "rounded" in style.style:
            border += ' STYLE="rounded"'
        cells += f'<TD BGCOLOR="{style.fill}"{border}>{strategy}<BR/>{style.caption}</TD>'
    red = FINDING_COLOUR[Severity.ERROR]
    flagged = (f'<TD BORDER="3" COLOR="{red}"><FONT COLOR="{red}">'
               "flagged by check (⚠ rule IDs)<BR/>red: error, orange: warning, grey: suppressed</FONT></TD>")
    meaning = ("lender → pool: its limit of the type<BR/>pool → borrower: most it can borrow"
               if edge_mode is EdgeMode.POOL else "lender → borrower<BR/>type ≤ most that can flow")
    edge = f'<TD BORDER="0"><FONT COLOR="{EDGE_COLOUR}">{meaning}</FONT></TD>'
    rows = f"<TR>{cells}{flagged}{edge}</TR>"
    if elsewhere:
        colour = _colour(elsewhere)
        listed = "<BR/>".join(html.escape(f"⚠ {f.rule} {f.object}: {f.message}") for f in elsewhere)
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
