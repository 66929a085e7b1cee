"""The cost and chargeback tables as GitHub-flavoured Markdown (``simulate --format markdown``)."""

from __future__ import annotations

from policy_engine.reports.kit import safe_text
from policy_engine.reports.kit.markdown import table
from policy_engine.reports.tables.cost_tables import cost_tables, summary_lines
from policy_engine.simulation.results.costs import CostReport


def render(report: CostReport) -> list[str]:
    """Lines: the period and the bill, then each table under a bold title, its note in italics."""
    lines: list[str] = [f"- {safe_text.markdown(line)}" for line in summary_lines(report)] + [""]
    for spec in cost_tables(report):
        lines += [f"**{safe_text.markdown(spec.title)}**", ""]
        align = "l" * spec.numeric_from + "r" * (len(spec.header) - spec.numeric_from)
        lines += table(spec.header, spec.rows, align=align)
        if spec.note:
            lines += ["", f"_{safe_text.markdown(spec.note)}_"]
        lines.append("")
    return lines
