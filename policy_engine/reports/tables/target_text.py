"""Targets as a rich table for the text reports (``simulate``; ``compare`` and ``diff`` say them per design)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from policy_engine.reports.kit.safe_text import rich_text
from policy_engine.reports.tables.target_tables import HEADER, rows, summary_line
from policy_engine.simulation.results.targets import TargetResult


def targets_table(results: Sequence[TargetResult], title: str = "Targets") -> Table:
    table = Table(title=f"{title} ({summary_line(results)})")
    for header in HEADER:
        table.add_column(header, overflow="fold")
    for row in rows(results):
        table.add_row(*(rich_text(value, "bold red" if value == "MISSED" else "") for value in row))
    return table


def print_targets(results: Sequence[TargetResult], console: Console) -> None:
    console.print(targets_table(results))
