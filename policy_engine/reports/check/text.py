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

from policy_engine.analysis.checks import CheckReport
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.reports.kit.safe_text import rich_text, visible
from policy_engine.reports.kit.subjects import CheckOutput

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_TITLE = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Notes"}


def _shares(names: tuple[str, ...], queue: str, shown: int | None = 2) -> str:
    """The shares' names within ``queue`` (preemption never crosses a queue); on a terminal at most ``shown``,
    then a count (at 20 shares a queue full lists make unreadable rows); everywhere else (``None``) all of them,
    so a log or a pipe never loses a name."""
    if not names:
        return "nobody"
    prefix = f"{queue}/"
    short = [name[len(prefix):] if name.startswith(prefix) else name for name in names]
    if shown is None or len(short) <= shown:
        return ", ".join(map(visible, short))
    return ", ".join(map(visible, short[:shown])) + f", +{len(short) - shown} more"


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


def _summary_tables(report: CheckReport, shown: int | None) -> list[tuple[str, list[str]]]:
    """Per job queue, one aligned line per share and instance type (kubectl-style, grep-friendly): the queue
    is named once, in the table's title, and the share columns name shares within it.

    Plain columns rather than a rich table: at 1,000 shares x 5 types rich needs seconds to lay out
    40,000 cells, longer than the check itself.
    """
    by_queue: dict[str, list[tuple[str, ...]]] = {}
    for summary in report.summaries.values():
        queue, _, name = summary.share.partition("/")
        rows = by_queue.setdefault(queue, [_SUMMARY_COLUMNS])
        for instance_type, limit in summary.limit.items():
            rows.append((visible(name), summary.strategy, visible(instance_type), str(limit),
                         str(summary.guaranteed[instance_type]), str(summary.max_burst[instance_type]),
                         _shares(summary.preempted_by_type.get(instance_type, summary.preempted_by), queue, shown),
                         _shares(summary.may_preempt_type.get(instance_type, summary.may_preempt), queue, shown)))
    tables = []
    numeric = {3, 4, 5}
    for queue, rows in by_queue.items():
        widths = [max(len(row[i]) for row in rows) for i in range(len(_SUMMARY_COLUMNS))]
        tables.append((queue, ["  ".join(cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
                                         for i, cell in enumerate(row)).rstrip() for row in rows]))
    return tables


def render(report: CheckReport, *, source: str = "", color: bool = False, width: int = 200,
           strict: bool = False, declared_guarantees: int = 0, terminal: bool = False) -> str:
    """The report as text; ``color`` adds ANSI styles, ``width`` is the table width in characters;
    ``strict``: the verdict fails on unsuppressed warnings too (``check --strict``); ``declared_guarantees``:
    how many the topology declares (the verdict says how many were proven); ``terminal``: cut long share
    lists to fit a screen (never in a pipe or a file)."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False,
                      soft_wrap=False)
    if source:
        console.print(f"batch-quota check {visible(source)}", markup=False)
    for severity, findings in ((Severity.ERROR, report.errors), (Severity.WARNING, report.warnings),
                               (Severity.INFO, report.notes)):
        if findings:
            console.print(f"{_TITLE[severity]} ({len(findings)})", style=_STYLE[severity])
            console.print(_findings_table(severity, findings))
    if report.suppressed:
        console.print(f"Suppressed ({len(report.suppressed)})", style="bold")
        console.print(_findings_table(None, report.suppressed))
    for queue, (header, *lines) in _summary_tables(report, 2 if terminal else None):
        console.print(f"Quota shares of job queue {visible(queue)}", style="bold", markup=False)
        # Like the rows, the header is never wrapped by rich: a narrow terminal wraps (or a pager cuts) both alike.
        console.print(header, style="bold", markup=False, soft_wrap=True)
        console.file.write("\n".join(lines) + "\n")
    passed = report.passes(strict)
    verdict = "passed" if passed else "FAILED"
    strictly = " (--strict: warnings fail)" if strict and report.warnings else ""
    suppressed = f", {len(report.suppressed)} suppressed" if report.suppressed else ""
    suppressed = (f", {len(report.notes)} note(s)" if report.notes else "") + suppressed
    proven, declared = report.guarantees_proven(declared_guarantees)
    promises = f", {proven} of {declared} declared guarantee(s) proven" if declared else ""
    console.print(f"{verdict}{strictly}: {len(report.errors)} error(s), {len(report.warnings)} warning(s){suppressed}, "
                  f"{len(report.summaries)} quota share(s){promises}", style="bold green" if passed else "bold red")
    return buffer.getvalue()


def use_color(stream: TextIO) -> bool:
    """Colour for a terminal, unless ``NO_COLOR`` is set."""
    return stream.isatty() and "NO_COLOR" not in os.environ


def write(output: CheckOutput, stream: TextIO) -> None:
    """As wide as the terminal; 200 columns when piped, so CI logs do not wrap findings."""
    width = shutil.get_terminal_size((200, 24)).columns if stream.isatty() else 200
    click.echo(render(output.report, source=output.source, color=use_color(stream), width=width,
                      strict=output.strict, declared_guarantees=len(output.topology.guarantees),
                      terminal=stream.isatty()), file=stream, nl=False)
