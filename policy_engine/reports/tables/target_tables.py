"""Targets met or missed, with the margin, as every report shows them (text, markdown, HTML rows; JSON keeps
numbers). Durations through ``units.duration_text``; a margin reads ``14m 50s to spare`` or ``missed by 12m 00s``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from policy_engine.foundation.units import Unit, duration_text, points_text
from policy_engine.simulation.results.targets import Criterion, TargetResult

HEADER = ("target", "share", "criterion", "goal", "actual", "met", "margin")


def value_text(criterion: Criterion, value: float) -> str:
    """A figure of ``criterion`` as people read it: a duration, a count or a percentage."""
    if criterion.unit is Unit.SECONDS:
        return duration_text(value)
    if criterion.unit is Unit.FRACTION:
        return f"{value:.1%}"
    return f"{value:,.0f}"


def goal_text(result: TargetResult) -> str:
    return ("≥ " if result.criterion.at_least else "≤ ") + value_text(result.criterion, result.goal)


def margin_text(result: TargetResult) -> str:
    """How far from the goal: headroom when met, the shortfall when missed (in the criterion's unit)."""
    amount = value_text(result.criterion, abs(result.margin))
    if result.criterion.unit is Unit.FRACTION:
        amount = points_text(abs(result.margin))
    if not result.met:
        return f"missed by {amount}"
    return "exactly at the goal" if result.margin == 0 else f"{amount} to spare"


def verdict(result: TargetResult) -> str:
    return "met" if result.met else "MISSED"


def rows(results: Sequence[TargetResult]) -> list[tuple[str, ...]]:
    """One row per criterion, in ``HEADER``'s order."""
    return [(f"targets[{r.index}]", r.subject, r.criterion.label, goal_text(r), value_text(r.criterion, r.actual),
             verdict(r), margin_text(r)) for r in results]


def summary_line(results: Sequence[TargetResult]) -> str:
    """``targets: 5 of 6 met; missed: training/A wait p95 by 12m 00s``."""
    missed = [r for r in results if not r.met]
    line = f"targets: {len(results) - len(missed)} of {len(results)} met"
    if missed:
        line += "; missed: " + "; ".join(f"{r.subject} {r.criterion.label} {margin_text(r)}" for r in missed)
    return line


def to_json(results: Sequence[TargetResult]) -> list[dict[str, Any]]:
    return [result.to_json() for result in results]


def markdown_lines(results: Sequence[TargetResult], title: str = "Targets") -> list[str]:
    """A heading line with the count met, then the GFM table."""
    from policy_engine.reports.kit.markdown import table

    line = summary_line(results).removeprefix("targets: ")  # the title says it
    return [f"**{title}**: {line}", "", *table(HEADER, rows(results), align="llllrll"), ""]


def html_table(results: Sequence[TargetResult]) -> str:
    """The rows as an HTML table (a missed row marked ``missed``), for the report pages."""
    from policy_engine.reports.kit.safe_text import html_text as escape

    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    missed = ' class="missed"'
    body = "".join(f"<tr{missed if row[5] != 'met' else ''}>" + "".join(f"<td>{escape(v)}</td>" for v in row)
                   + "</tr>" for row in rows(results))
    return f'<table id="targets"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
