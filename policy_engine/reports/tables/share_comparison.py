"""Before/after tables (``results.side_by_side``) in every format: ``compare``'s per-share and targets tables and
``diff --scenario``'s impact per share use these same cells, so a figure reads the same in both.

A cell holds each run's value in order and each later run's difference from the first: ``1h 05m → 45m 00s
(−20m 00s)``. Durations through ``units.duration_text``; JSON keeps numbers (``ShareComparison.to_json``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from policy_engine.simulation.results.spread import Spread

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


#: What a cell says with workload samples (``--samples N``), under each table.
NOT_SIGNIFICANT = "n.s."


def samples_legend(samples: int) -> str:
    """How a cell reads across ``samples`` workload samples, said once under each table."""
    return (f"across {samples} samples: each value is the median with its p10-p90 in parentheses (one value: "
            "alike in every sample); each difference "
            "is paired (the same sample under both runs), its median shown only when the p10-p90 of the paired "
            f"differences excludes 0, else {NOT_SIGNIFICANT} (no significant change)")


def spread_text(figure: Figure, spread: Spread) -> str:
    """``12h 00m (8h 00m-19h 00m)``: the median across samples, then its p10-p90."""
    return spread_cell(lambda value: figure_text(figure, value), spread)


def spread_cell(text: Callable[[float], str], spread: Spread) -> str:
    """A spread as a cell, each value written by ``text``: ``median (p10-p90)``; a figure alike in every sample
    (``0s (0s-0s)``) has no spread to show: its one value."""
    low, middle, high = text(spread.p10), text(spread.p50), text(spread.p90)
    return middle if low == high else f"{middle} ({low}-{high})"


def sampled_difference_text(figure: Figure, row: ShareRow, run: int) -> str:
    """A paired difference: its median when significant, else ``n.s.`` (never shown as a change)."""
    if not row.significant(run, figure):
        return NOT_SIGNIFICANT
    return difference_text(figure, row.difference(run, figure))


def cell(comparison: ShareComparison, row: ShareRow, figure: Figure) -> str:
    if row.samples:
        values = ARROW.join(spread_text(figure, found) if (found := row.spread(run, figure)) is not None else "–"
                            for run in range(len(row.values)))
        if len(comparison.runs) < 2:
            return values
        paired = ", ".join(sampled_difference_text(figure, row, run) for run in range(1, len(comparison.runs)))
        return f"{values} ({paired})"
    values = ARROW.join(figure_text(figure, row.value(run, figure)) if present else "–"
                        for run, present in enumerate(row.present))
    if len(comparison.runs) < 2:
        return values
    differences = ", ".join(difference_text(figure, row.difference(run, figure))
                            for run in range(1, len(comparison.runs)))
    return f"{values} ({differences})"


def compact_cell(comparison: ShareComparison, row: ShareRow, figure: Figure) -> str:
    """``cell``, except that a figure every run has alike shows once (``153``, ``0s``): for a pull request,
    where the changed cells should stand out and every cell stay short. A sampled figure shows once (its
    spread) only when every sample has it alike in every run."""
    if not all(row.present):
        return cell(comparison, row, figure)
    if row.samples:  # alike only when alike in every sample: then the one spread, said once
        first = row.sample_values(0, figure)
        if all(row.sample_values(run, figure) == first for run in range(1, len(comparison.runs))) and \
                (found := row.spread(0, figure)) is not None:
            return spread_text(figure, found)
        return cell(comparison, row, figure)
    if all(row.difference(run, figure) == 0 for run in range(1, len(comparison.runs))):
        return figure_text(figure, row.value(0, figure))
    return cell(comparison, row, figure)


#: What a compact table's single values mean (a sentence said under it, after the legend).
COMPACT = "A single value: the same in every run."


def rows_by_type(comparison: ShareComparison) -> dict[str, list[tuple[str, ...]]]:
    """Per instance type (in the rows' order), its shares' compact rows without the type: a pull request's
    tables, one per type, narrower by a column and never mixing types."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for row in comparison.rows:
        out.setdefault(row.instance_type, []).append(
            (share_label(comparison, row), *(compact_cell(comparison, row, f) for f in comparison.figures)))
    return out


def markdown_parts(comparison: ShareComparison) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    """The per-share table for a pull request: per instance type (the most harmed first, as the rows come), its
    compact rows, split by columns where a row would wrap (``markdown.split_columns``): ``(title, header, rows)``,
    the title naming the type and the part (``ml.p4d.24xlarge, part 1 of 2``)."""
    from policy_engine.reports.kit.markdown import split_columns

    head = ("share", *(header(f) for f in comparison.figures))
    out = []
    for instance_type, rows in rows_by_type(comparison).items():
        parts = split_columns(head, rows, names=1)
        for number, (part_head, part_rows) in enumerate(parts, start=1):
            out.append((instance_type + (f", part {number} of {len(parts)}" if len(parts) > 1 else ""),
                        part_head, part_rows))
    return out


def share_label(comparison: ShareComparison, row: ShareRow) -> str:
    """The share as the first run names it, with its later names after a rename."""
    if not row.names:
        return row.share
    later = [f"{label}: {name}" for label, name in zip(comparison.runs[1:], row.names[1:], strict=True)
             if name != row.share]
    return f"{row.share} ({'; '.join(later)})"


def share_header(comparison: ShareComparison) -> tuple[str, ...]:
    return ("share", "instance type", *(header(f) for f in comparison.figures))


def share_rows(comparison: ShareComparison, only_changed: bool = False, compact: bool = False
               ) -> list[tuple[str, ...]]:
    """One row per share and type; ``compact``: a figure alike in every run (and sample) said once
    (``compact_cell``; say ``COMPACT`` beside the table)."""
    write = compact_cell if compact else cell
    return [(share_label(comparison, row), row.instance_type, *(write(comparison, row, f) for f in comparison.figures))
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
    if row.samples and not row.significant(run):  # inside the samples' spread: no change
        return NOT_SIGNIFICANT
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
               names: int = 2, width: int | None = None, fit_width: int | None = None) -> str:
    """``rich_table`` rendered to plain text (no escape codes), for a report built as a string: as wide as its
    cells up to ``terminal.FILE_WIDTH``, so no value is folded mid-way; with ``fit_width`` (a terminal's), fitted
    to it (``reports.kit.fitting``)."""
    import io

    from policy_engine.reports.kit import terminal

    buffer = io.StringIO()
    terminal.console(fit=fit_width is not None, file=buffer, width=fit_width or width or terminal.FILE_WIDTH,
                     color_system=None, force_terminal=False, highlight=False).print(
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
    """A table of rendered cells that fits the page (1400 px): a figure wraps only between its parts (after
    ``→``, before its difference in parentheses; ``reports.kit.breaks``), a name never (``llm-pretrain`` stays
    whole), a header only at spaces (and a long dotted name after its dots). It stays in its own horizontally
    scrolling box (``table-scroll``, ``report_script.STYLE``) for a window narrower than the table's narrowest
    layout; the box takes the keyboard focus, so it scrolls without a mouse too."""
    from policy_engine.reports.kit.breaks import html_figure, html_header
    from policy_engine.reports.kit.safe_text import html_text as escape

    cells = "".join(f"<th>{html_header(h)}</th>" for h in head)
    numeric = ' class="num brk"'
    body = "".join("<tr>" + "".join(f"<td{numeric}>{html_figure(v)}</td>" if i >= names
                                    else f'<td class="nm">{escape(v)}</td>' for i, v in enumerate(row))
                   + "</tr>" for row in rows)
    return (f'<div class="table-scroll" tabindex="0"><table{attrs}><thead><tr>{cells}</tr></thead><tbody>{body}</tbody>'
            "</table></div>")
