"""``graph``'s view: the borrow graph as values to draw, read once from the topology, the check's report and the
borrow graph: one cluster per job queue (its label lines, the findings about it), one node per share (its lines:
name, capacity per type, strategy, flags), the edges (pairwise, or through a pool per queue and type), the
findings no share or queue shows, and each training plan a drawn share is known to use (its windows as lines).
``reports.graph.borrow_graph`` lays them out as DOT; how they look (colours, shapes) is decided there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.plan_users import plan_users
from policy_engine.analysis.checks import CheckReport, borrow_graph
from policy_engine.analysis.rules.objects import findings_by_share, locate
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.foundation.model import UNLIMITED_BORROW, Topology, TrainingPlan, plan_time_text, share_id
from policy_engine.foundation.units import duration_text

__all__ = ["MAX_DOT_EDGES", "CheckReport", "ClusterView", "EdgeMode", "EdgeView", "Flag", "Flagged", "GraphView",
           "NodeView", "PlanUseView", "PoolEdge", "RenderError", "Topology", "build", "findings_by_queue", "pool_edges",
           "pool_id", "topology_findings", "window_lines"]

#: Most edges even a .dot file gets: twice a topology at AWS's limits (50 queues x 20 shares x 5 types).
MAX_DOT_EDGES = 200_000


class EdgeMode(StrEnum):
    """How borrowing is drawn: what the model is (a pool per queue and type), or every lender -> borrower pair."""

    #: lenders feed a pool per queue and instance type, borrowers draw from it: at most 2 edges per share and type
    POOL = "pool"
    #: one edge per lender, borrower and type: grows with the square of the shares (900 at 20 shares x 5 types)
    PAIRWISE = "pairwise"


class RenderError(Exception):
    """The picture cannot be written; ``str()`` is the one line to show the user."""


class Flag(StrEnum):
    """The worst of what a check found on an object: an unsuppressed error, else an unsuppressed warning, else
    findings a ``suppress`` entry accepted (still shown, without the alarm), else notes (info) alone."""

    ERROR = Severity.ERROR.value
    WARNING = Severity.WARNING.value
    SUPPRESSED = "suppressed"
    INFO = Severity.INFO.value


@dataclass(frozen=True)
class Flagged:
    """The findings about one object: its flag, the rule IDs (``BQ402 (suppressed)``) and one line per finding."""

    flag: Flag
    rules: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class NodeView:
    node: str  # ``QUEUE/SHARE``
    strategy: str
    lines: tuple[str, ...]  # name, capacity per type, strategy (and borrow limit), in-share preemption, DISABLED
    flagged: Flagged | None


@dataclass(frozen=True)
class ClusterView:
    queue: str
    lines: tuple[str, ...]  # ``job queue Q``, ``service environment E (capacity)``, each marked when named at deploy
    flagged: Flagged | None
    shares: tuple[NodeView, ...]  # those that lend or borrow
    reserved: tuple[NodeView, ...]  # RESERVE: isolated, drawn in a box of their own


@dataclass(frozen=True)
class EdgeView:
    """``source -> target`` with ``most``: the most that can flow (pairwise: of ``instance_type``; pool: lent into
    or borrowed from the pool)."""

    source: str
    target: str
    instance_type: str
    most: int


@dataclass(frozen=True)
class PoolEdge:
    """One edge of the pool view: a lender feeding a pool, or a pool feeding a borrower."""

    source: str
    target: str
    instance_type: str
    most: int


@dataclass(frozen=True)
class PlanUseView:
    """A drawn share known to use a training plan (``analysis.borrow.plan_users``): the plan, its windows (one line
    per reserved capacity), the share (``QUEUE/SHARE``) and how the use is declared (``shares``, ``during``)."""

    plan: str
    windows: tuple[str, ...]
    share: str
    declared: str


@dataclass(frozen=True)
class GraphView:
    mode: EdgeMode
    clusters: tuple[ClusterView, ...]
    edges: tuple[EdgeView, ...]  # pairwise: lender -> borrower; pool: lender -> pool and pool -> borrower
    #: findings about the whole topology (``RULE OBJECT: message``) and their flag; ``None`` when there are none
    elsewhere: tuple[Flag, tuple[str, ...]] | None
    plans: tuple[PlanUseView, ...] = ()  # in ``plan_users`` order: a plan's node goes before its first edge


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


def _flag(findings: Sequence[Finding]) -> Flag:
    open_findings = {f.severity for f in findings if f.suppressed is None}
    if Severity.ERROR in open_findings:
        return Flag.ERROR
    if Severity.WARNING in open_findings:
        return Flag.WARNING
    if any(f.suppressed is not None for f in findings):
        return Flag.SUPPRESSED
    return Flag.INFO


def _flagged(findings: Sequence[Finding]) -> Flagged | None:
    if not findings:
        return None
    rules = ", ".join(dict.fromkeys(f.rule + (" (suppressed)" if f.suppressed is not None else "") for f in findings))
    return Flagged(_flag(findings), rules, tuple(f.line() for f in findings))


def _capacity_lines(capacity: dict[str, int]) -> list[str]:
    return [f"{instance_type}: {count}" for instance_type, count in capacity.items()]


def _strategy_line(graph: BorrowGraph, node: str) -> str:
    share = graph.share(node)
    if share.strategy != "LEND_AND_BORROW":
        return share.strategy
    limit = share.effective_borrow_limit
    return f"LEND_AND_BORROW, borrow limit {'unlimited' if limit == UNLIMITED_BORROW else f'{limit}%'}"


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


def window_lines(plan: TrainingPlan) -> tuple[str, ...]:
    """One line per reserved capacity: its instances and when (ISO 8601, or seconds from the scenario start)."""
    lines = []
    for index, window in enumerate(plan.reserved_capacities):
        start, end = plan_time_text(window.start), plan_time_text(window.end)
        if isinstance(window.start, datetime) and isinstance(window.end, datetime):
            when = f"{start} → {end} ({duration_text((window.end - window.start).total_seconds())})"
        else:
            when = f"t={start} s → {end} s"
        lines.append(f"window {index}: {window.instances} x {plan.instance_type}, {when}")
    return tuple(lines)


def _node(graph: BorrowGraph, node: str, flagged: dict[str, list[Finding]]) -> NodeView:
    share = graph.share(node)
    lines = [share.name, *_capacity_lines(dict(share.capacity)), _strategy_line(graph, node)]
    if share.in_share_preemption:
        lines.append("in-share preemption on")
    if share.state == "DISABLED":
        lines.append("DISABLED")
    return NodeView(node, share.strategy, tuple(lines), _flagged(flagged.get(node, [])))


def build(topology: Topology, report: CheckReport | None = None, queues: tuple[str, ...] = (),
          edge_mode: EdgeMode = EdgeMode.PAIRWISE, instance_types: tuple[str, ...] = ()) -> GraphView:
    """The picture's values; ``queues`` limits it to some job queues (all when empty), ``instance_types`` its edges
    to some types. ``RenderError`` above ``MAX_DOT_EDGES`` edges."""
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
    named = set(topology.named_at_deploy)
    clusters = []
    for queue in topology.job_queues:
        if queues and queue.name not in queues:
            continue
        environment = topology.environment(queue.service_environment)
        env_text = ", ".join(_capacity_lines(dict(environment.capacity))) if environment else "missing"
        lines = (f"job queue {queue.name}" + (" (named at deploy)" if f"job_queues[{queue.name}]" in named else ""),
                 f"service environment {queue.service_environment} ({env_text})"
                 + (" (named at deploy)" if f"service_environments[{queue.service_environment}]" in named else ""))
        clusters.append(ClusterView(
            queue.name, lines, _flagged(by_queue.get(queue.name, [])),
            tuple(_node(graph, share_id(queue, s), flagged) for s in queue.shares if s.strategy != "RESERVE"),
            tuple(_node(graph, share_id(queue, s), flagged) for s in queue.shares if s.strategy == "RESERVE")))
    if edge_mode is EdgeMode.POOL:
        drawn = tuple(EdgeView(e.source, e.target, e.instance_type, e.most) for e in pooled)
    else:
        drawn = tuple(EdgeView(lender, borrower, instance_type, data["capacity"])
                      for lender, borrower, instance_type, data in graph.graph.edges(keys=True, data=True)
                      if not ((queues and graph.queue(lender).name not in queues)
                              or (instance_types and instance_type not in instance_types)))
    found = topology_findings(topology, report)
    elsewhere = (_flag(found), tuple(f"{f.rule} {f.object}: {f.message}" for f in found)) if found else None
    plans = tuple(PlanUseView(user.plan.name, window_lines(user.plan), user.share_id, user.declared.value)
                  for user in plan_users(topology) if not queues or user.queue.name in queues)
    return GraphView(edge_mode, tuple(clusters), drawn, elsewhere, plans)
