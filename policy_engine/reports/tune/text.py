"""``tune --format text``: the recommendation, its evidence against the current topology, the Pareto front."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from policy_engine.reports.kit import terminal
from policy_engine.reports.tune.view import (
    answer_lines,
    detail_lines,
    evidence_column,
    evidence_rows,
    evidence_title,
    figure,
    front_rows,
)
from policy_engine.simulation.results.billable import period_text
from policy_engine.sweep.grammar import values_text, vary_text
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import feasible


def write(output: TuneOutput, stream: TextIO) -> None:
    result = output.result
    console = (terminal.console(file=stream, width=terminal.FILE_WIDTH) if not stream.isatty()
               else terminal.console(file=stream))
    if output.costs is not None and (output.costs.priced or not output.costs.pricing.period.whole):
        # what every run's bill covers, first, as simulate says it (--period, docs/costs.md)
        console.print(f"Bill for {period_text(output.costs.pricing.period)}.", markup=False, highlight=False)
    ok = sum(1 for r in result.runs if r.status == RunStatus.OK)
    good = sum(1 for r in result.runs if feasible(r, output.constraints))
    console.print(f"{len(result.runs)} candidate(s) simulated or checked: {ok} ok, {good} meeting every constraint")
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
    from policy_engine.reports.tables.promise_lines import promise_line

    result, promises, policy = output.result, output.promises, output.policy
    first = output.objectives[0]
    for line in detail_lines(output):
        console.print(line, highlight=False, soft_wrap=True)
    if promises:
        named = policy.value if policy else "keep"
        console.print(f"promise changes made by --guarantee-policy {named} (diff fails on them until reviewed):",
                      highlight=False)
        for change in promises:
            console.print(f"  {promise_line(change)}", highlight=False, soft_wrap=True)
    if result.sensitivity:
        table = Table(title=f"Assumption sensitivity: {first.label} under each assumption (never written into "
                            f"the topology)")
        for column in ("assumption", "current", "recommended" if result.chosen else "best candidate",
                       "best under it", "best candidate's values"):
            table.add_column(column, justify="left" if column in ("assumption", "best candidate's values")
                             else "right", overflow="fold")
        for row in result.sensitivity:
            def shown(record: RunRecord | None) -> str:
                if record is None or record.status != RunStatus.OK:
                    return "-"
                return figure(first.expression(record), first.expression.unit)

            table.add_row(values_text(row.assumption),
                          shown(row.current), shown(row.recommended), shown(row.best),
                          ", ".join(f"{k}={vary_text(v)}" for k, v in row.best.values.items()
                                    if k in result.current.values) if row.best else "-")
        console.print(table)
