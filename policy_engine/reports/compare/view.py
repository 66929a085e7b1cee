"""``compare``'s view: what every format of it says, computed once from ``CompareOutput``: the bill table's
title, columns, rows and legend, and the verdict lines (per later design against the first)."""

from __future__ import annotations

from policy_engine.comparison.subjects import ALL_TYPES, PLAN_IDLE_COST, PREEMPTED_COST, TOTAL_COST, CompareOutput
from policy_engine.reports.tables import share_comparison as sc
from policy_engine.simulation.results.side_by_side import WAIT_P95, ShareRow


def costs_title(output: CompareOutput) -> str:
    """``The bill (USD)``; per instance type without prices."""
    return (f"The bill ({output.cost_unit}" + (")" if output.priced else
                                              "; per instance type, never added up across types)"))


def costs_legend(output: CompareOutput) -> str:
    """What the bill table's columns mean, said once under it."""
    from policy_engine.reports.tables.cost_tables import period_text

    return (f"over {period_text(output.period)}; on-demand: every attempt's RUNNING time x rate (capacity nobody "
            "used costs nothing); plan fees: each training plan's upfront fee; waste, beside the bill: on-demand "
            "work lost to preemption, plan hours paid and not used (or cut at a window's end); in parentheses each "
            "later design minus the first (negative: cheaper)"
            + ("" if output.priced else "; in instance-hours: give --prices FILE for the bill"))


def costs_head(output: CompareOutput) -> tuple[str, ...]:
    return ("instance type", *sc.share_header(output.costs)[2:])


def costs_rows(output: CompareOutput) -> list[tuple[str, ...]]:
    return [row[1:] for row in sc.share_rows(output.costs)]


def _cost_verdict(output: CompareOutput, run: int) -> str:
    """``b against a: bill +1,302.95 USD, waste -12.00 USD``; per instance type without prices."""
    against = f"{output.runs[run].label} against {output.runs[0].label}: "

    def waste(row: ShareRow) -> float:
        return row.difference(run, PREEMPTED_COST) + row.difference(run, PLAN_IDLE_COST)

    if output.priced:
        row = next(row for row in output.costs.rows if row.instance_type == ALL_TYPES)
        return (against + f"bill {sc.difference_text(TOTAL_COST, row.difference(run, TOTAL_COST))} "
                f"{output.cost_unit}, waste {sc.difference_text(TOTAL_COST, waste(row))} {output.cost_unit}")
    return against + "; ".join(
        f"{row.instance_type} billed {sc.difference_text(TOTAL_COST, row.difference(run, TOTAL_COST))}, wasted "
        f"{sc.difference_text(TOTAL_COST, waste(row))}" for row in output.costs.rows) + " instance-hours"


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
