"""The bill, who pays, waste and the capacity flows for people (``simulate --prices``/``--costs``), as rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from policy_engine.reports.kit.safe_text import rich_text
from policy_engine.reports.tables.cost_tables import cost_tables, summary_lines
from policy_engine.simulation.results.costs import CostReport


def print_costs(report: CostReport, console: Console) -> None:
    for line in summary_lines(report):
        console.print(line, markup=False, highlight=False)
    for spec in cost_tables(report):
        table = Table(title=spec.title, caption=spec.note or None)
        for index, header in enumerate(spec.header):
            table.add_column(header, overflow="fold", justify="right" if index >= spec.numeric_from else "left")
        for row in spec.rows:
            table.add_row(*map(rich_text, row))
        console.print(table)
