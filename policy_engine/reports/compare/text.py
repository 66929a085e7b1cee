"""``compare`` for people: the runs, the whole run, the cost of the capacity, utilisation per instance type, per share
and type, and the targets, each as before/after cells (``reports.tables.share_comparison``)."""

from __future__ import annotations

from typing import TextIO

from policy_engine.comparison.subjects import ALL_TYPES, IDLE_COST, TOTAL_COST, CompareOutput
from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit import terminal
from policy_engine.reports.tables import share_comparison as sc
from policy_engine.simulation.results.side_by_side import WAIT_P95


def costs_title(output: CompareOutput) -> str:
    """``Cost of the capacity over the run (USD, usage chargeback)``; per instance type without prices."""
    return (f"Cost of the capacity over the run ({output.cost_unit}, {output.chargeback.value} chargeback"
            + (")" if output.priced else "; per instance type, never added up across types)"))


def costs_legend(output: CompareOutput) -> str:
    """What the cost table's columns mean, said once under it."""
    spans = ", ".join(f"{run.label} {duration_text(run.time)}" for run in output.runs)
    return (f"capacity: the service environments' instances over each design's run, from 0 to its end ({spans}: a "
            "run that ends later holds its capacity longer); used: what jobs ran on; idle: "
            "capacity − used; charged to shares: the shares' bills (the per-share cost, added up); not charged to "
            "any share: capacity − charged to shares (the platform's part); in parentheses each later design minus "
            "the first (negative: cheaper)" + ("" if output.priced else
                                             "; in instance-hours of each type: give --prices FILE for one total"))


def costs_head(output: CompareOutput) -> tuple[str, ...]:
    return ("instance type", *sc.share_header(output.costs)[2:])


def costs_rows(output: CompareOutput) -> list[tuple[str, ...]]:
    return [row[1:] for row in sc.share_rows(output.costs)]


def _length(output: CompareOutput, run: int) -> str:
    """How much longer or shorter the design's run is than the first's: capacity is held until the last job ends,
    so a design that drains later costs more with the same fleet (said beside the cost, not only in a legend)."""
    longer = output.runs[run].time - output.runs[0].time
    if abs(longer) < 1:
        return ""
    return (f" (its run ends {duration_text(abs(longer))} {'later' if longer > 0 else 'sooner'}: capacity is "
            "held until the last job ends)")


def _cost_verdict(output: CompareOutput, run: int) -> str:
    """``b against a: capacity cost +1,302.95 USD, idle +1,507.23 USD``; per instance type without prices."""
    against = f"{output.runs[run].label} against {output.runs[0].label}: "
    if output.priced:
        row = next(row for row in output.costs.rows if row.instance_type == ALL_TYPES)
        return (against + f"capacity cost {sc.difference_text(TOTAL_COST, row.difference(run, TOTAL_COST))} "
                f"{output.cost_unit}, idle {sc.difference_text(IDLE_COST, row.difference(run, IDLE_COST))} "
                f"{output.cost_unit}" + _length(output, run))
    return against + "; ".join(
        f"{row.instance_type} capacity {sc.difference_text(TOTAL_COST, row.difference(run, TOTAL_COST))}, idle "
        f"{sc.difference_text(IDLE_COST, row.difference(run, IDLE_COST))}" for row in output.costs.rows
    ) + " instance-hours" + _length(output, run)


def verdict(output: CompareOutput) -> list[str]:
    """Per later design, on how many shares its wait p95 is lower, higher or equal, and what its capacity costs
    and leaves idle more or less; then the targets met."""
    lines = []
    shares = output.shares
    for run in range(1, len(output.runs)):
        differences = [row.difference(run, WAIT_P95) for row in shares.rows]
        lower = sum(1 for d in differences if d < 0)
        higher = sum(1 for d in differences if d > 0)
        lines.append(f"{output.runs[run].label} against {output.runs[0].label}: wait p95 lower for {lower} of "
                     f"{len(differences)} shares and instance types, higher for {higher}, equal for "
                     f"{len(differences) - lower - higher}")
        if output.costs.rows:
            lines.append(_cost_verdict(output, run))
    lines.append(sc.targets_met_line(output.targets))
    return lines


def write(output: CompareOutput, stream: TextIO) -> None:
    console = (terminal.console(file=stream, width=terminal.FILE_WIDTH) if not stream.isatty()
               else terminal.console(file=stream))
    console.print(f"batch-quota compare {output.scenario}: {len(output.runs)} designs on {output.jobs:,} job(s), "
                  f"each {output.span}" + (f" ({output.executor})" if output.executor else ""), markup=False,
                  highlight=False)
    console.print(sc.runs_line(output.shares, output.sources), markup=False, highlight=False)
    console.print(sc.rich_table("The whole run", sc.share_header(output.overall)[2:],
                                [row[2:] for row in sc.share_rows(output.overall)], names=0))
    if output.costs.rows:
        console.print(sc.rich_table(costs_title(output), costs_head(output), costs_rows(output),
                                    caption=costs_legend(output), names=1))
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
