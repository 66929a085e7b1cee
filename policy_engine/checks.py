"""The public entry point: ``check_topology(topology) -> CheckReport``.

Every rule runs over one shared borrow graph; the report orders findings (errors first,
then by rule, then by object) and carries the per-share summary and that graph, so
``explain`` and ``graph`` never build it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from policy_engine.findings import Finding, Severity
from policy_engine.graph import BorrowGraph
from policy_engine.model import Topology
from policy_engine.rules import Context, run_rules
from policy_engine.summary import ShareSummary, summarize_all

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1}


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found: sorted findings and the per-share summary keyed by ``QUEUE/SHARE``."""

    findings: list[Finding]
    summaries: dict[str, ShareSummary] = field(default_factory=dict)
    #: The borrow graph the rules ran over (``None`` for a report built by hand).
    graph: BorrowGraph | None = field(default=None, compare=False, repr=False)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        """True when no rule found an error (warnings allowed)."""
        return not self.errors


def borrow_graph(topology: Topology, report: CheckReport | None) -> BorrowGraph:
    """The report's borrow graph when it was checked from ``topology``; a new one otherwise."""
    if report is not None and report.graph is not None and report.graph.topology is topology:
        return report.graph
    return BorrowGraph(topology)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (_SEVERITY_ORDER[f.severity], f.rule, f.object, f.message))


def check_topology(topology: Topology) -> CheckReport:
    """Run every rule and derive the summaries; never raises on a well-typed topology."""
    context = Context(topology)
    findings = sort_findings(run_rules(topology, context))
    return CheckReport(findings=findings, summaries=summarize_all(context.graph), graph=context.graph)
