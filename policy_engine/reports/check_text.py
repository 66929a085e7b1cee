"""Human output of ``batch-quota check``: findings grouped by severity, then the per-share summary.

Rendered with rich; colour only on a terminal without ``NO_COLOR`` (``use_color``), so piped
output and CI logs stay plain.
"""

from __future__ import annotations

import io
import os
import shutil
from typing import TextIO

import click
from rich.console import Console
from rich.table import Table

from policy_engine.checks import CheckReport
from policy_engine.findings import Finding, Severity
from policy_engine.reports.safe_text import rich_text, visible
from policy_engine.reports.subjects import CheckOutput

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}
_TITLE = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings"}


def _shares(names: tuple[str, ...], shown: int = 2) -> str:
    """At most ``shown`` names, then a count: at 20 shares a queue, full lists make unreadable rows (JSON has all)."""
    if not names:
        return "nobody"
    more = f", +{len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(map(visible, names[:shown])) + more


def _findings_table(severity: Severity | None, findings: list[Finding]) -> Table:
    """One severity's findings; ``None``: the suppressed ones, with their severity and the suppression's reason."""
    table = Table()
    columns = ("rule", "object", "problem", "fix") if severity else ("rule", "severity", "object", "problem",
                                                                      "suppressed because")
    for column in columns:
        table.add_column(column, overflow="fold")
    for finding in findings:
        cells = ((finding.rule, str(finding.object), finding.message, finding.hint) if severity else
                 (finding.rule, finding.severity.value, str(finding.object), finding.message, finding.suppressed or ""))
        table.add_row(*(rich_text(cell) for cell in cells), style=_STYLE[severity] if severity else "dim")
    return table


_SUMMARY_COLUMNS = ("share", "strategy", "instance type", "limit", "guaranteed", "max burst", "may be preempted by",
                   "may preempt")


def _summary_lines(report: CheckReport) -> list[str]:
    """One aligned line per share and instance type (kubectl-style, grep-friendly).

    Plain columns rather than a rich table: at 1,000 shares x 5 types rich needs seconds to lay out
    40,000 cells, longer than the check itself.
    """
    rows = [_SUMMARY_COLUMNS]
    for summary in report.summaries.values():
        for instance_type, limit in summary.limit.items():
            rows.append((visible(summary.share), summary.strategy, visible(instance_type), str(limit),
                         str(summary.guaranteed[instance_type]), str(summary.max_burst[instance_type]),
                         _shares(summary.preempted_by), _shares(summary.may_preempt)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(_SUMMARY_COLUMNS))]
    numeric = {3, 4, 5}
    return ["  ".join(cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
                      for i, cell in enumerate(row)).rstrip() for row in rows]


def render(report: CheckReport, *, source: str = "", color: bool = False, width: int = 200,
           strict: bool = False) -> str:
    """The report as text; ``color`` adds ANSI styles, ``width`` is the table width in characters;
    ``strict``: the verdict fails on unsuppressed warnings too (``check --strict``)."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False,
                      soft_wrap=False)
    if source:
        console.print(f"batch-quota check {visible(source)}", markup=False)
    for severity, findings in ((Severity.ERROR, report.errors), (Severity.WARNING, report.warnings)):
        if findings:
            console.print(f"{_TITLE[severity]} ({len(findings)})", style=_STYLE[severity])
            console.print(_findings_table(severity, findings))
    if report.suppressed:
        console.print(f"Suppressed ({len(report.suppressed)})", style="bold")
        console.print(_findings_table(None, report.suppressed))
    if report.summaries:
        console.print("Quota shares", style="bold")
        header, *lines = _summary_lines(report)
        # Like the rows, the header is never wrapped by rich: a narrow terminal wraps (or a pager cuts) both alike.
        console.print(header, style="bold", markup=False, soft_wrap=True)
        console.file.write("\n".join(lines) + "\n")
    passed = report.passes(strict)
    verdict = "passed" if passed else "FAILED"
    strictly = " (--strict: warnings fail)" if strict and report.warnings else ""
    suppressed = f", {len(report.suppressed)} suppressed" if report.suppressed else ""
    console.print(f"{verdict}{strictly}: {len(report.errors)} error(s), {len(report.warnings)} warning(s){suppressed}, "
                  f"{len(report.summaries)} quota share(s)", style="bold green" if passed else "bold red")
    return buffer.getvalue()


def use_color(stream: TextIO) -> bool:
    """Colour for a terminal, unless ``NO_COLOR`` is set."""
    return stream.isatty() and "NO_COLOR" not in os.environ


def write(output: CheckOutput, stream: TextIO) -> None:
    """As wide as the terminal; 200 columns when piped, so CI logs do not wrap findings."""
    width = shutil.get_terminal_size((200, 24)).columns if stream.isatty() else 200
    click.echo(render(output.report, source=output.source, color=use_color(stream), width=width,
                      strict=output.strict), file=stream, nl=False)
