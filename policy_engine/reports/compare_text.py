"""``compare`` for people: the runs, the whole run, utilisation per instance type, per share and type, and the
targets, each as before/after cells (``reports.share_comparison``)."""

from __future__ import annotations

from typing import TextIO

from policy_engine.comparison.subjects import CompareOutput
from policy_engine.comparison.table import WAIT_P95
from policy_engine.reports import share_comparison as sc
from policy_engine.reports import terminal


def verdict(output: CompareOutput) -> list[str]:
    """Per later design, on how many shares its wait p95 is lower, higher or equal; then the targets met."""
    lines = []
    shares = output.shares
    for run in range(1, len(output.runs)):
        differences = [row.difference(run, WAIT_P95) for row in shares.rows]
        lower = sum(1 for d in differences if d < 0)
        higher = sum(1 for d in differences if d > 0)
        lines.append(f"{output.runs[run].label} against {output.runs[0].label}: wait p95 lower for {lower} of "
                     f"{len(differences)} shares and instance types, higher for {higher}, equal for "
                     f"{len(differences) - lower - higher}")
    lines.append(sc.targets_met_line(output.targets))
    return lines


def write(output: CompareOutput, stream: TextIO) -> None:
    console = terminal.console(file=stream, width=200) if not stream.isatty() else terminal.console(file=stream)
    console.print(f"batch-quota compare {output.scenario}: {len(output.runs)} designs on {output.jobs:,} job(s), "
                  f"each from time 0" + (f" ({output.executor})" if output.executor else ""), markup=False,
                  highlight=False)
    console.print(sc.runs_line(output.shares, output.sources), markup=False, highlight=False)
    console.print(sc.rich_table("The whole run", sc.share_header(output.overall)[2:],
                                [row[2:] for row in sc.share_rows(output.overall)], names=0))
    console.print(sc.rich_table("Per instance type (never summed across types)",
                                ("instance type", *sc.share_header(output.types)[2:]),
                                [row[1:] for row in sc.share_rows(output.types)], names=1))
    console.print(sc.rich_table("Per share and instance type", sc.share_header(output.shares),
                                sc.share_rows(output.shares), caption=sc.LEGEND))
    if output.targets.rows:
        console.print(sc.rich_table(f"Targets ({sc.targets_met_line(output.targets)})",
                                    sc.target_header(output.targets), sc.target_rows(output.targets)))
    for line in verdict(output):
        console.print(line, markup=False, highlight=False)
