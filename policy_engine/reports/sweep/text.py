"""``sweep --format text``: the best runs by the objective as a table, then every run that did not finish."""

from __future__ import annotations

from typing import TextIO

from rich.table import Table

from policy_engine.reports.kit import terminal
from policy_engine.reports.sweep.view import SweepOutput, build


def write(output: SweepOutput, stream: TextIO) -> None:
    view = build(output)
    console = terminal.for_stream(stream)
    if view.bill_period is not None:  # what every run's bill covers, first, as simulate says it
        console.print(f"Bill for {view.bill_period}.", markup=False, highlight=False)
    table = Table(title=view.title)
    table.add_column("#", justify="right")
    for axis in view.axes:
        table.add_column(axis, overflow="fold")
    for column in (view.heading, *view.columns):
        table.add_column(column, justify="right", overflow="fold", no_wrap=column == view.heading)  # the ranking's
    for row in view.rows:
        table.add_row(*row)
    console.print(table)
    if view.best_targets is not None:
        console.print(f"#1 {view.best_targets}", highlight=False, soft_wrap=True)
    console.print(view.counts)
    if view.window:
        console.print(view.window, markup=False, highlight=False)
    if view.infeasible:
        console.print(f"{view.infeasible:,} ok run(s) miss a target of the topology (infeasible; ranked last)")
    for run in view.failed:
        if run.raised:
            console.print(f"  error  {run.values}: {run.message}", highlight=False)
        else:
            console.print(f"  invalid  {run.values}: {run.message}", highlight=False, soft_wrap=True)
