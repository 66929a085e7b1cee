"""The public entry point: ``check_topology(topology) -> CheckReport``.

Every rule runs over one shared borrow graph; the report orders findings (errors first,
then by rule, then by object) and carries the per-share summary and that graph, so
``explain`` and ``graph`` never build it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.rules import Context, run_rules
from policy_engine.analysis.rules.objects import locate
from policy_engine.analysis.summary import ShareSummary, summarize_all
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.foundation.model import Suppression, Topology

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found: sorted findings and the per-share summary keyed by ``QUEUE/SHARE``."""

    findings: list[Finding]
    summaries: dict[str, ShareSummary] = field(default_factory=dict)
    #: The borrow graph the rules ran over (``None`` for a report built by hand).
    graph: BorrowGraph | None = field(default=None, compare=False, repr=False)

    @property
    def errors(self) -> list[Finding]:
        """Errors not suppressed: each fails ``check`` and ``cdk synth``."""
        return [f for f in self.findings if f.severity is Severity.ERROR and f.suppressed is None]

    @property
    def warnings(self) -> list[Finding]:
        """Warnings not suppressed: each fails ``check --strict``."""
        return [f for f in self.findings if f.severity is Severity.WARNING and f.suppressed is None]

    @property
    def notes(self) -> list[Finding]:
        """Notes (``info``) not suppressed: shown, never failing, not even with ``--strict``."""
        return [f for f in self.findings if f.severity is Severity.INFO and f.suppressed is None]

    @property
    def suppressed(self) -> list[Finding]:
        """Findings accepted by a suppression, with its reason (shown, never failing)."""
        return [f for f in self.findings if f.suppressed is not None]

    @property
    def ok(self) -> bool:
        """True when no rule found an unsuppressed error (warnings allowed)."""
        return not self.errors

    def passes(self, strict: bool = False) -> bool:
        """``ok``; with ``strict`` also no unsuppressed warning (``check --strict``)."""
        return self.ok and not (strict and self.warnings)

    def guarantees_proven(self, declared: int) -> tuple[int, int]:
        """``(proven, declared)``: of the topology's ``declared`` guarantees, those no guarantee rule (BQ401-BQ404)
        names (each rule names the guarantee it refutes)."""
        refuted = {str(f.object) for f in self.findings if f.rule in GUARANTEE_RULES}
        return max(0, declared - len(refuted)), declared


#: The rules that refute a declared guarantee.
GUARANTEE_RULES = frozenset({"BQ401", "BQ402", "BQ403", "BQ404"})


def borrow_graph(topology: Topology, report: CheckReport | None) -> BorrowGraph:
    """The report's borrow graph when it was checked from ``topology``; a new one otherwise."""
    if report is not None and report.graph is not None and report.graph.topology is topology:
        return report.graph
    return BorrowGraph(topology)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (_SEVERITY_ORDER[f.severity], f.rule, str(f.object), f.message))


def check_topology(topology: Topology, *, suppress: Iterable[Suppression] = ()) -> CheckReport:
    """Run every rule and derive the summaries; never raises on a well-typed topology.

    ``suppress`` adds suppressions to the topology's own ``suppress`` entries (for a topology built elsewhere).
    """
    context = Context(topology, extra_suppressions=tuple(suppress))
    findings = marked_named_at_deploy(topology, sort_findings(run_rules(topology, context)))
    return CheckReport(findings=findings, summaries=summarize_all(context.graph), graph=context.graph)


def marked_named_at_deploy(topology: Topology, findings: list[Finding]) -> list[Finding]:
    """Findings about an object named at deploy (``Topology.named_at_deploy``) say so in their message, so every
    output that shows a finding shows that its names are a template's logical IDs."""
    if not topology.named_at_deploy:
        return findings
    named = set(topology.named_at_deploy)
    out = []
    for finding in findings:
        where = locate(topology, finding.object)
        about = [label for label in (
            f"service_environments[{where.environment}]" if where.environment is not None else None,
            f"job_queues[{where.queue}]" if where.queue is not None else None,
            where.share_id) if label in named]
        out.append(replace(finding, message=f"{finding.message} [named at deploy: {', '.join(about)}]",
                           plain_message=finding.message) if about else finding)
    return out
