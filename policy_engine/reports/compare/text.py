"""``compare`` for people: the runs, the whole run, the bill, utilisation per instance type, per share
and type, and the targets, each as before/after cells (``reports.share_comparison``)."""

from __future__ import annotations

from typing import TextIO

from policy_engine.reports.compare.view import (
    WHOLE_RUN,
    CompareOutput,
    costs_head,
    costs_legend,
    costs_rows,
    costs_title,
    legend,
    samples_lines,
    verdict,
)
from policy_engine.reports.kit import terminal
from policy_engine.reports.tables import share_comparison as sc


def write(output: CompareOutput, stream: TextIO) -> None:
    console = terminal.for_stream(stream)
    console.print(f"batch-quota compare {output.scenario}: {len(output.runs)} designs on {output.jobs:,} job(s), "
                  f"each {output.span}" + (f" ({output.executor})" if output.executor else ""), markup=False,
                  highlight=False)
    for line in samples_lines(output):
        console.print(line, markup=False, highlight=False)
    for line in output.check_lines():
        console.print(line, markup=False, highlight=False)
    console.print(sc.runs_line(output.shares, output.marked_sources), markup=False, highlight=False)
    console.print(sc.rich_table("The whole run", sc.share_header(output.overall)[2:],
                                [row[2:] for row in sc.share_rows(output.overall, compact=True)], names=0,
                                caption=WHOLE_RUN))
    if output.costs.rows:
        console.print(sc.rich_table(costs_title(output), costs_head(output), costs_rows(output),
                                    caption=costs_legend(output), names=1))
    console.print(sc.rich_table("Per instance type (never summed across types)",
                                ("instance type", *sc.share_header(output.types)[2:]),
                                [row[1:] for row in sc.share_rows(output.types, compact=True)], names=1))
    console.print(sc.rich_table("Per share and instance type", sc.share_header(output.shares),
                                sc.share_rows(output.shares, compact=True), caption=legend(output)))
    if output.targets.rows:
        console.print(sc.rich_table(f"Targets ({sc.targets_met_line(output.targets)})",
                                    sc.target_header(output.targets), sc.target_rows(output.targets)))
    for line in verdict(output):
        console.print(line, markup=False, highlight=False)
