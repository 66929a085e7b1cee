"""The report page's bill section: the period and the bill, then the same tables as text and Markdown, in HTML."""

from __future__ import annotations

import html

from policy_engine.reports.kit.safe_text import visible
from policy_engine.reports.tables.cost_tables import cost_tables, summary_lines
from policy_engine.simulation.results.costs import CostReport


def _escape(text: object) -> str:
    return html.escape(visible(text))


def section(report: CostReport) -> list[str]:
    """HTML fragments: a heading, the totals, then one table per ``cost_tables`` entry with its note."""
    parts = ['<h2 id="costs">The bill, who pays, waste</h2>']
    parts += [f'<p class="muted">{_escape(line)}</p>' for line in summary_lines(report)]
    for spec in cost_tables(report):
        head = "".join(f"<th{' data-num' if i >= spec.numeric_from else ''}>{_escape(h)}</th>"
                       for i, h in enumerate(spec.header))
        body = "".join("<tr>" + "".join(f'<td class="num">{_escape(v)}</td>' if i >= spec.numeric_from
                                        else f"<td>{_escape(v)}</td>" for i, v in enumerate(row)) + "</tr>"
                       for row in spec.rows)
        parts.append(f"<h3>{_escape(spec.title)}</h3>")
        parts.append(f'<table id="{spec.key}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
        if spec.note:
            parts.append(f'<p class="muted">{_escape(spec.note)}</p>')
    return parts
