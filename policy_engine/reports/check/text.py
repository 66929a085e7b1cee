"""Human output of ``batch-quota check``: findings grouped by severity, then the per-share summary.

Rendered with rich; colour only on a terminal without ``NO_COLOR`` (``use_color``), so piped
output and CI logs stay plain.
"""

from __future__ import annotations

import io
import os
from typing import TextIO

import click
from rich import box
from rich.table import Table

from policy_engine.reports.check.view import CheckOutput, CheckReport, CheckView, FindingRow, report_view
from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.safe_text import rich_text, visible
from policy_engine.reports.kit.terminal import console as terminal_console

#: Per severity (its word, as ``FindingRow.severity``): the style of its findings and the title over them.
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_TITLE = {"error": "Errors", "warning": "Warnings", "info": "Notes"}


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


def _findings_table(severity: str | None, findings: tuple[FindingRow, ...]) -> Table:
    """One severity's findings; ``None``: the suppressed ones, with their severity and the suppression's reason."""
    table = Table()
    columns = ("rule", "object", "problem", "fix") if severity else ("rule", "severity", "object", "problem",
                                                                      "suppressed because")
    for column in columns:
        table.add_column(column, overflow="fold")
    for finding in findings:
        cells = ((finding.rule, finding.object, finding.message, finding.hint) if severity else
                 (finding.rule, finding.severity, finding.object, finding.message, finding.suppressed or ""))
        table.add_row(*(rich_text(cell) for cell in cells), style=_STYLE[severity] if severity else "dim")
    return table


_SUMMARY_COLUMNS = ("share", "strategy", "instance type", "limit", "guaranteed", "max burst", "may be preempted by",
                   "may preempt")


def _summary_rows(view: CheckView, shown: int | None) -> dict[str, list[tuple[str, ...]]]:
    """Per job queue, one row of cells per share and instance type."""
    by_queue: dict[str, list[tuple[str, ...]]] = {}
    for queue, shares in view.queues:
        rows = by_queue.setdefault(queue, [])
        for summary in shares:
            for instance_type, limit in summary.limit.items():
                rows.append((visible(summary.name), summary.strategy, visible(instance_type), str(limit),
                             str(summary.guaranteed[instance_type]), str(summary.max_burst[instance_type]),
                             _shares(summary.preempted_by_type.get(instance_type, summary.preempted_by), queue, shown),
                             _shares(summary.may_preempt_type.get(instance_type, summary.may_preempt), queue, shown)))
    return by_queue


#: The summary's columns of figures (right-aligned).
_NUMERIC = {3, 4, 5}


def _summary_tables(view: CheckView, shown: int | None) -> list[tuple[str, list[str]]]:
    """Per job queue, one aligned line per share and instance type (kubectl-style, grep-friendly): the queue
    is named once, in the table's title, and the share columns name shares within it.

    Plain columns rather than a rich table: at 1,000 shares x 5 types rich needs seconds to lay out
    40,000 cells, longer than the check itself.
    """
    tables = []
    for queue, cells in _summary_rows(view, shown).items():
        rows = [_SUMMARY_COLUMNS, *cells]
        widths = [max(len(row[i]) for row in rows) for i in range(len(_SUMMARY_COLUMNS))]
        tables.append((queue, ["  ".join(cell.rjust(widths[i]) if i in _NUMERIC else cell.ljust(widths[i])
                                         for i, cell in enumerate(row)).rstrip() for row in rows]))
    return tables


#: Up to this many rows a summary wider than the terminal is drawn as a fitted table; beyond, rich's layout
#: would take longer than the check (see ``_summary_tables``) and the aligned lines are kept.
_FITTED_ROWS = 2_000


def _summary_table(view: CheckView, queue: str) -> Table:
    """One queue's summary as a table a terminal can fit (names left, figures right), its lists cut as on a
    terminal."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for index, column in enumerate(_SUMMARY_COLUMNS):
        table.add_column(column, justify="right" if index in _NUMERIC else "left")
    for row in _summary_rows(view, 2)[queue]:
        table.add_row(*(rich_text(cell) for cell in row))
    return table


def render(report: CheckReport, *, source: str = "", color: bool = False, width: int = 200,
           strict: bool = False, declared_guarantees: int = 0, terminal: bool = False) -> str:
    """The report as text; ``color`` adds ANSI styles, ``width`` is the table width in characters;
    ``strict``: the verdict fails on unsuppressed warnings too (``check --strict``); ``declared_guarantees``:
    how many the topology declares (the verdict says how many were proven); ``terminal``: cut long share
    lists to fit a screen (never in a pipe or a file)."""
    view = report_view(report, source=source, strict=strict, declared_guarantees=declared_guarantees)
    buffer = io.StringIO()
    console = terminal_console(fit=terminal, file=buffer, force_terminal=color, no_color=not color, width=width,
                               highlight=False, soft_wrap=False)
    if source:
        console.print(f"batch-quota check {visible(source)}", markup=False)
    for severity, findings in (("error", view.errors), ("warning", view.warnings), ("info", view.notes)):
        if findings:
            console.print(f"{_TITLE[severity]} ({len(findings)})", style=_STYLE[severity])
            console.print(_findings_table(severity, findings))
    if view.suppressed:
        console.print(f"Suppressed ({len(view.suppressed)})", style="bold")
        console.print(_findings_table(None, view.suppressed))
    for queue, (header, *lines) in _summary_tables(view, 2 if terminal else None):
        console.print(f"Quota shares of job queue {visible(queue)}", style="bold", markup=False)
        if terminal and max(map(len, (header, *lines))) > width and len(lines) <= _FITTED_ROWS:
            console.print(_summary_table(view, queue))  # fitted to the terminal (``reports.kit.fitting``)
            continue
        # Like the rows, the header is never wrapped by rich: a pager cuts both alike.
        console.print(header, style="bold", markup=False, soft_wrap=True)
        console.file.write("\n".join(lines) + "\n")
    passed = view.passed
    verdict = "passed" if passed else "FAILED"
    strictly = " (--strict: warnings fail)" if strict and view.warnings else ""
    suppressed = f", {len(view.suppressed)} suppressed" if view.suppressed else ""
    suppressed = (f", {len(view.notes)} note(s)" if view.notes else "") + suppressed
    promises = f", {view.proven} of {view.declared} declared guarantee(s) proven" if view.declared else ""
    console.print(f"{verdict}{strictly}: {len(view.errors)} error(s), {len(view.warnings)} warning(s){suppressed}, "
                  f"{view.shares} quota share(s){promises}", style="bold green" if passed else "bold red")
    return buffer.getvalue()


def use_color(stream: TextIO) -> bool:
    """Colour for a terminal, unless ``NO_COLOR`` is set."""
    return stream.isatty() and "NO_COLOR" not in os.environ


def write(output: CheckOutput, stream: TextIO) -> None:
    """As wide as the terminal; 200 columns when piped, so CI logs do not wrap findings."""
    width = terminal.width(200) if stream.isatty() else 200
    click.echo(render(output.report, source=output.source, color=use_color(stream), width=width,
                      strict=output.strict, declared_guarantees=len(output.topology.guarantees),
                      terminal=stream.isatty()), file=stream, nl=False)
