"""``tune --format text``: the recommendation, its evidence against the current topology, the Pareto front."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from policy_engine.reports.kit import terminal
from policy_engine.reports.tune.view import (
    TuneOutput,
    answer_lines,
    bill_period,
    counts_line,
    detail_lines,
    evidence_column,
    evidence_rows,
    evidence_title,
    front_rows,
    promise_lines,
    sensitivity_columns,
    sensitivity_rows,
    sensitivity_title,
)


def write(output: TuneOutput, stream: TextIO) -> None:
    result = output.result
    console = terminal.for_stream(stream)
    if (period := bill_period(output)) is not None:
        # what every run's bill covers, first, as simulate says it (--period, docs/costs.md)
        console.print(f"Bill for {period}.", markup=False, highlight=False)
    console.print(counts_line(output))
    for line in answer_lines(output):
        console.print(line, highlight=False, soft_wrap=True)
    if result.best is not None or result.nearest is not None:
        table = Table(title=evidence_title(output))
        for column in ("", "current", evidence_column(output)):
            table.add_column(column, justify="right" if column else "left")
        for row in evidence_rows(output):
            table.add_row(*row)
        console.print(table)
    front_points = front_rows(output)
    if front_points:
        front = Table(title=f"Pareto front ({len(front_points)} point(s); --pick N chooses)")
        front.add_column("#", justify="right")
        for axis in output.axes:
            front.add_column(axis.path, overflow="fold")
        for objective in output.objectives:
            front.add_column(objective.heading, justify="right")
        for point in front_points:
            front.add_row(*point)
        console.print(front)
    _decision(output, console)


def _decision(output: TuneOutput, console: Console) -> None:
    """The answer in words: keep the current topology, or the nearest miss; the promises changed; the
    assumption-sensitivity table."""
    for line in detail_lines(output):
        console.print(line, highlight=False, soft_wrap=True)
    heading, *changed = promise_lines(output) or [""]
    if heading:
        console.print(heading, highlight=False)
        for line in changed:
            console.print(line, highlight=False, soft_wrap=True)
    if output.result.sensitivity:
        table = Table(title=sensitivity_title(output))
        for column in sensitivity_columns(output):
            table.add_column(column, justify="left" if column in ("assumption", "best candidate's values")
                             else "right", overflow="fold")
        for row in sensitivity_rows(output):
            table.add_row(*row)
        console.print(table)
