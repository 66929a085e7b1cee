"""Before/after tables (``results.side_by_side``) in every format: ``compare``'s per-share and targets tables and
``diff --scenario``'s impact per share use these same cells, so a figure reads the same in both.

A cell holds each run's value in order and each later run's difference from the first: ``1h 05m → 45m 00s
(−20m 00s)``. Durations through ``units.duration_text``; JSON keeps numbers (``ShareComparison.to_json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from policy_engine.foundation.units import (
    Unit,
    duration_text,
    instance_hours_text,
    money_text,
    percent_text,
    points_text,
)
from policy_engine.reports.tables.target_tables import goal_text, margin_text, value_text
from policy_engine.simulation.results.side_by_side import (
    Figure,
    ShareComparison,
    ShareRow,
    TargetComparison,
    TargetRow,
)

if TYPE_CHECKING:
    from rich.table import Table

ARROW = " → "
MINUS = "−"

#: How a cell reads, in every before/after table (``compare``'s and ``diff --scenario``'s).
CELLS = ("each cell: the runs' values in order, then in parentheses each later run minus the first (for waits, "
         "preemptions and instance-hours lost a negative difference is better; for utilisation a positive one)")
#: What the cells mean, said once under each table.
LEGEND = (f"{CELLS}; wait: time RUNNABLE (submission to placement, plus every requeue to the next); cost: the "
          "share's net chargeback, below zero when lending "
          "earned it more credit than it was charged; –: the run has no such share")


def figure_text(figure: Figure, value: float) -> str:
    if figure.unit is Unit.SECONDS:
        return duration_text(value)
    if figure.unit is Unit.FRACTION:
        return percent_text(value)
    if figure.unit is Unit.INSTANCE_HOURS:
        return instance_hours_text(value + 0.0)
    if figure.unit is Unit.COST:
        return money_text(value)
    return f"{value:,.0f}"


def difference_text(figure: Figure, difference: float) -> str:
    """Signed: ``+5m 00s``, ``−2``, ``+3.1 points``; ``±0`` when equal."""
    if difference == 0:
        return "±0"
    sign = "+" if difference > 0 else MINUS
    shown = points_text(abs(difference)) if figure.unit is Unit.FRACTION else \
        figure_text(figure, abs(difference))
    return _signed(sign, shown)


def _signed(sign: str, shown: str) -> str:
    """``+1m 05s``; ``≈0`` when the difference rounds to nothing as shown (no digit but zeros)."""
    return sign + shown if any(digit in shown for digit in "123456789") else "≈0"


def header(figure: Figure) -> str:
    """The column header with its unit where the cells do not say it."""
    if figure.unit is Unit.FRACTION:
        return f"{figure.label} (%)"
    if figure.unit is Unit.INSTANCE_HOURS and "instance-hours" not in figure.label:
        return f"{figure.label} (instance-hours)"
    return figure.label  # durations read with their units (``3h 05m``), counts are counts


def cell(comparison: ShareComparison, row: ShareRow, figure: Figure) -> str:
    values = ARROW.join(figure_text(figure, row.value(run, figure)) if present else "–"
                        for run, present in enumerate(row.present))
    if len(comparison.runs) < 2:
        return values
    differences = ", ".join(difference_text(figure, row.difference(run, figure))
                            for run in range(1, len(comparison.runs)))
    return f"{values} ({differences})"


def share_label(comparison: ShareComparison, row: ShareRow) -> str:
    """The share as the first run names it, with its later names after a rename."""
    if not row.names:
        return row.share
    later = [f"{label}: {name}" for label, name in zip(comparison.runs[1:], row.names[1:], strict=True)
             if name != row.share]
    return f"{row.share} ({'; '.join(later)})"


def share_header(comparison: ShareComparison) -> tuple[str, ...]:
    return ("share", "instance type", *(header(f) for f in comparison.figures))


def share_rows(comparison: ShareComparison, only_changed: bool = False) -> list[tuple[str, ...]]:
    return [(share_label(comparison, row), row.instance_type, *(cell(comparison, row, f) for f in comparison.figures))
            for row in comparison.rows if not only_changed or comparison.changed(row)]


def runs_line(comparison: ShareComparison | TargetComparison, sources: Sequence[str] = ()) -> str:
    """``runs: A (a.yaml) → B (b.yaml)``: the order every cell follows."""
    named = [f"{label} ({source})" if source else label
             for label, source in zip(comparison.runs, [*sources, *[""] * len(comparison.runs)], strict=False)]
    return "runs, in the order of every cell: " + ARROW.join(named)


def target_header(comparison: TargetComparison) -> tuple[str, ...]:
    return ("share", "criterion", "goal", *comparison.runs,
            *(f"{label} − {comparison.runs[0]}" for label in comparison.runs[1:]))


def _judged(row: TargetRow, run: int) -> str:
    result = row.results[run]
    if result is None:
        return "– (not declared)"
    verdict = "met" if result.met else "MISSED"
    return f"{value_text(result.criterion, result.actual)}: {verdict}, {margin_text(result)}"


def _target_difference(row: TargetRow, run: int) -> str:
    difference = row.difference(run)
    if difference is None:
        return "–"
    if difference == 0:
        return "±0"
    sign = "+" if difference > 0 else MINUS
    shown = points_text(abs(difference)) if row.criterion.unit is Unit.FRACTION else \
        value_text(row.criterion, abs(difference))
    return _signed(sign, shown)


def target_rows(comparison: TargetComparison) -> list[tuple[str, ...]]:
    out = []
    for row in comparison.rows:
        first = next(r for r in row.results if r is not None)
        goals = {goal_text(r) for r in row.results if r is not None}
        out.append((row.share + (f" {row.instance_type}" if row.instance_type else ""), row.criterion.label,
                    goal_text(first) if len(goals) == 1 else " / ".join(goal_text(r) if r else "–"
                                                                         for r in row.results),
                    *(_judged(row, run) for run in range(len(comparison.runs))),
                    *(_target_difference(row, run) for run in range(1, len(comparison.runs)))))
    return out


def targets_met_line(comparison: TargetComparison) -> str:
    """``targets met: A 4 of 6, B 6 of 6``."""
    parts = []
    for run, label in enumerate(comparison.runs):
        met, judged = comparison.met(run)
        parts.append(f"{label} {met} of {judged}" if judged else f"{label} none declared")
    return "targets met: " + ", ".join(parts)


def rich_table(title: str, head: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "",
               names: int = 2) -> Table:
    """A rich ``Table`` of rendered cells, the first ``names`` columns left-aligned (names fold; nothing is cut)."""
    from rich.table import Table

    from policy_engine.reports.kit.safe_text import rich_text

    table = Table(title=title, caption=caption or None, caption_justify="left")
    for index, column in enumerate(head):
        table.add_column(column, overflow="fold", justify="left" if index < names else "right")
    for row in rows:
        table.add_row(*(rich_text(value, "bold red" if "MISSED" in value else "") for value in row))
    return table


def text_table(title: str, head: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "",
               names: int = 2, width: int | None = None) -> str:
    """``rich_table`` rendered to plain text (no escape codes), for a report built as a string: as wide as its
    cells up to ``terminal.FILE_WIDTH``, so no value is folded mid-way."""
    import io

    from rich.console import Console

    from policy_engine.reports.kit.terminal import FILE_WIDTH

    width = width or FILE_WIDTH
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False, highlight=False).print(
        rich_table(title, head, rows, caption, names))
    return buffer.getvalue()


def align(head: Sequence[str], names: int = 2) -> str:
    """The GFM alignment of a before/after table: its names left, its figures right."""
    return "l" * names + "r" * (len(head) - names)


def markdown_table(head: Sequence[str], rows: Sequence[Sequence[str]], names: int = 2) -> list[str]:
    """A GFM table, the first ``names`` columns left-aligned and the figures right-aligned."""
    from policy_engine.reports.kit.markdown import table

    return table(head, rows, align=align(head, names))


def html_table(head: Sequence[str], rows: Sequence[Sequence[str]], attrs: str = "", names: int = 2) -> str:
    """A table of rendered cells in its own horizontally scrolling box (``table-scroll``, ``report_script.STYLE``):
    a wide table scrolls inside it, and the page never scrolls sideways (cells do not wrap: a figure's arrow and
    difference stay on one line). The box takes the keyboard focus, so it scrolls without a mouse too."""
    from policy_engine.reports.kit.safe_text import html_text as escape

    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    numeric = ' class="num"'
    body = "".join("<tr>" + "".join(f"<td{numeric if i >= names else ''}>{escape(v)}</td>" for i, v in enumerate(row))
                   + "</tr>" for row in rows)
    return (f'<div class="table-scroll" tabindex="0"><table{attrs}><thead><tr>{cells}</tr></thead><tbody>{body}</tbody>'
            "</table></div>")
