"""Human output of ``batch-quota check``: findings grouped by severity, then the per-share summary.

Rendered with rich; colour only when asked for (the command asks when stdout is a terminal
and ``NO_COLOR`` is unset), so piped output and CI logs stay plain.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from policy_engine.checks import CheckReport
from policy_engine.findings import Finding, Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}
_TITLE = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings"}


def _capacity(capacity: dict[str, int]) -> str:
    return ", ".join(f"{t}: {n}" for t, n in capacity.items())


def _findings_table(severity: Severity, findings: list[Finding]) -> Table:
    table = Table()
    for column in ("rule", "object", "problem", "fix"):
        table.add_column(column, overflow="fold")
    for finding in findings:
        table.add_row(*(Text(cell) for cell in (finding.rule, finding.object, finding.message, finding.hint)),
                      style=_STYLE[severity])
    return table


def _summary_table(report: CheckReport) -> Table:
    table = Table()
    for column in ("share", "strategy", "limit", "guaranteed", "max burst", "may be preempted by", "may preempt"):
        table.add_column(column, overflow="fold")
    for summary in report.summaries.values():
        cells = (
            summary.share,
            summary.strategy,
            _capacity(summary.limit),
            _capacity(summary.guaranteed),
            _capacity(summary.max_burst),
            ", ".join(summary.preempted_by) or "nobody",
            ", ".join(summary.may_preempt) or "nobody",
        )
        table.add_row(*(Text(cell) for cell in cells))  # Text: names like env[x] are not rich markup
    return table


def render(report: CheckReport, *, source: str = "", color: bool = False, width: int = 200) -> str:
    """The report as text; ``color`` adds ANSI styles, ``width`` is the table width in characters."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False,
                      soft_wrap=False)
    if source:
        console.print(f"batch-quota check {source}", markup=False)
    for severity in (Severity.ERROR, Severity.WARNING):
        findings = [f for f in report.findings if f.severity is severity]
        if findings:
            console.print(f"{_TITLE[severity]} ({len(findings)})", style=_STYLE[severity])
            console.print(_findings_table(severity, findings))
    if report.summaries:
        console.print("Quota shares", style="bold")
        console.print(_summary_table(report))
    verdict = "FAILED" if not report.ok else "passed"
    console.print(f"{verdict}: {len(report.errors)} error(s), {len(report.warnings)} warning(s), "
                  f"{len(report.summaries)} quota share(s)", style="bold red" if not report.ok else "bold green")
    return buffer.getvalue()
