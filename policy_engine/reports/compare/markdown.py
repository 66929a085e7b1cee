"""``compare --format markdown``: for a pull request, GFM tables of before/after cells (``share_comparison``)."""

from __future__ import annotations

from typing import TextIO

import click

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
from policy_engine.reports.kit.markdown import cell, code
from policy_engine.reports.tables import share_comparison as sc


def render(output: CompareOutput) -> str:
    labels = " vs ".join(code(label) for label in output.labels)
    lines = [f"### batch-quota compare: {labels} on {code(output.scenario)}", "",
             f"{output.jobs:,} job(s), each design run {output.span}. "
             f"{cell(sc.runs_line(output.shares, output.marked_sources))}",
             "", *[f"- {cell(line)}" for line in samples_lines(output)],
             *[f"- ❌ {cell(line)}" for line in output.check_lines()],
             *[f"- {cell(line)}" for line in verdict(output)], "",
             "**The whole run**", "",
             *sc.markdown_table(sc.share_header(output.overall)[2:], _whole_run(output),
                                names=0),
             "", f"_{cell(WHOLE_RUN[0].upper() + WHOLE_RUN[1:])}_", "", *_costs(output),
             "**Per instance type** (never summed across types)", "",
             *sc.markdown_table(("instance type", *sc.share_header(output.types)[2:]),
                                [r[1:] for r in sc.share_rows(output.types, compact=True)], names=1),
             "", *_per_share(output), f"_{cell(legend(output))}_", ""]
    if output.targets.rows:
        lines += [f"**Targets** ({cell(sc.targets_met_line(output.targets))})", "",
                  *sc.markdown_table(sc.target_header(output.targets), sc.target_rows(output.targets), names=3), ""]
    return "\n".join(lines)


def _per_share(output: CompareOutput) -> list[str]:
    """One table per instance type, split where a row would wrap in a pull request (``sc.markdown_parts``)."""
    lines = []
    for title, head, rows in sc.markdown_parts(output.shares):
        lines += [f"**Per share on {cell(title)}**", "", *sc.markdown_table(head, rows, names=1), ""]
    return lines


def _costs(output: CompareOutput) -> list[str]:
    if not output.costs.rows:
        return []
    return [f"**{cell(costs_title(output))}**", "",
            *sc.markdown_table(costs_head(output), costs_rows(output), names=1), "",
            f"_{cell(costs_legend(output))}_", ""]


def write(output: CompareOutput, stream: TextIO) -> None:
    click.echo(render(output), file=stream, nl=False)


def _whole_run(output: CompareOutput) -> list[tuple[str, ...]]:
    """The whole run's one row, its figures alike in every run said once."""
    return [row[2:] for row in sc.share_rows(output.overall, compact=True)]
