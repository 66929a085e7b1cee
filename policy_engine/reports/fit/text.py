"""``fit --format text``: one row per share (what was fitted), then every note, for people."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from policy_engine.reports.fit.view import COLUMNS, NUMERIC, PLAN_COLUMNS, PLAN_NUMERIC, FitOutput, build
from policy_engine.reports.kit import terminal


def write(output: FitOutput, stream: TextIO) -> None:
    view = build(output)
    console: Console = terminal.for_stream(stream, file_width=200)
    table = Table(title=view.title)
    for column in COLUMNS:
        table.add_column(column, justify="right" if column in NUMERIC else "left")
    for row in view.rows:
        table.add_row(*row)
    console.print(table)
    if view.plan_rows:
        plans = Table(title="Plan jobs per share (training_plan column)")
        for column in PLAN_COLUMNS:
            plans.add_column(column, justify="right" if column in PLAN_NUMERIC else "left")
        for row in view.plan_rows:
            plans.add_row(*row)
        console.print(plans)
    console.print(view.legend, markup=False, style="dim")
    for note in view.notes:
        console.print(note, markup=False)
    if view.written:
        console.print(f"wrote {view.written}", markup=False)
