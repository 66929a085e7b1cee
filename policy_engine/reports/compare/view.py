"""``compare``'s view: what every format of it says, computed once from ``CompareOutput``: the bill table's
title, columns, rows and legend, and the verdict lines (per later design against the first)."""

from __future__ import annotations

from typing import Any

import numpy as np

from policy_engine.comparison.subjects import ALL_TYPES, PLAN_IDLE_COST, PREEMPTED_COST, TOTAL_COST, CompareOutput
from policy_engine.foundation.units import Unit, figure_text
from policy_engine.reports.tables import share_comparison as sc
from policy_engine.simulation.results import aggregates as agg
from policy_engine.simulation.results.numbers import plain
from policy_engine.simulation.results.side_by_side import PREEMPTIONS, WAIT_P95, Figure, ShareRow
from policy_engine.simulation.results.spread import paired
from policy_engine.simulation.results.worsening import headline

__all__ = ["WHOLE_RUN", "CompareOutput", "costs_head", "costs_legend", "costs_rows", "costs_title", "document",
           "legend", "page_data", "samples_lines", "verdict"]


def samples_lines(output: CompareOutput) -> list[str]:
    """With ``--samples N``: the line saying what the tables are across the samples; else nothing."""
    line = output.samples_line()
    return [line] if line else []


#: Under the whole run's table: its cells read as the per-share table's (whose legend says how).
WHOLE_RUN = f"each cell as in the per-share table (its legend below); {sc.COMPACT[0].lower()}{sc.COMPACT[1:]}"


def legend(output: CompareOutput) -> str:
    """What the before/after cells mean (with samples: medians, p10-p90, paired and significant differences), the
    one window the time-weighted figures are over, and what a single value means (``compact_cell``)."""
    return (sc.LEGEND + (f"; {sc.samples_legend(output.samples)}" if output.samples > 1 else "")
            + f"; {output.window_text()}. {sc.COMPACT}")


def _change_text(figure: Figure, row: ShareRow, run: int, figures: tuple[Figure, ...] = ()) -> str:
    """A difference as a verdict says it (``figures``: their sum); with samples ``no significant change`` unless
    its paired p10-p90 excludes 0."""
    summed = figures or (figure,)
    if not row.samples:
        return sc.difference_text(figure, sum(row.difference(run, f) for f in summed))
    before = [sum(values) for values in zip(*(row.sample_values(0, f) for f in summed), strict=True)]
    after = [sum(values) for values in zip(*(row.sample_values(run, f) for f in summed), strict=True)]
    found = paired(before, after)
    return sc.difference_text(figure, found.value) if found.significant else "no significant change"


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
            + ("" if output.priced else "; in instance-hours, a plan's fee being its reserved instance-hours (used "
               "or not): give --prices FILE for the bill in money"))


def costs_head(output: CompareOutput) -> tuple[str, ...]:
    return ("instance type", *sc.share_header(output.costs)[2:])


def costs_rows(output: CompareOutput) -> list[tuple[str, ...]]:
    return [row[1:] for row in sc.share_rows(output.costs)]


def _cost_verdict(output: CompareOutput, run: int) -> str:
    """``b against a: bill +1,302.95 USD, waste -12.00 USD``; per instance type without prices."""
    against = f"{output.runs[run].label} against {output.runs[0].label}: "

    def waste(row: ShareRow) -> str:
        return _change_text(TOTAL_COST, row, run, (PREEMPTED_COST, PLAN_IDLE_COST))

    if output.priced:
        row = next(row for row in output.costs.rows if row.instance_type == ALL_TYPES)
        return (against + f"bill {_change_text(TOTAL_COST, row, run)} "
                f"{output.cost_unit}, waste {waste(row)} {output.cost_unit}")
    return against + "; ".join(  # "bill +12.00 instance-hours", "bill: no significant change": a unit after a number
        f"{row.instance_type} {_with_unit('bill', _change_text(TOTAL_COST, row, run))}, "
        f"{_with_unit('waste', waste(row))}" for row in output.costs.rows)


def _with_unit(name: str, change: str) -> str:
    """``bill +12.00 instance-hours``; a change that is a verdict, not a number, reads ``bill: no significant
    change`` (no unit after words)."""
    return f"{name} {change} instance-hours" if change[:1] in "+−-±≈" else f"{name}: {change}"


def verdict(output: CompareOutput) -> list[str]:
    """Per later design, on how many shares its wait p95 is lower, higher or equal, and what its capacity costs
    and leaves idle more or less; then the targets met."""
    lines = []
    shares = output.shares
    for run in range(1, len(output.runs)):
        # the harm first: the most harmed share by the measure ``diff`` judges a change by, and the preemptions
        lines.append(f"{output.runs[run].label} against {output.runs[0].label}: {headline(shares, run)}")
        lines.append(_preemptions_line(output, run))
        if output.samples > 1:
            lines.append(_sampled_verdict(output, run))
            if output.costs.rows:
                lines.append(_cost_verdict(output, run))
            continue
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


def _preemptions_line(output: CompareOutput, run: int) -> str:
    """``mine against topology: preemptions 139 -> 174 (+26)``, over every share and type; with samples the
    medians and the paired difference, or ``no significant change``."""
    row = output.overall.rows[0]
    before, after = row.value(0, PREEMPTIONS), row.value(run, PREEMPTIONS)
    change = _change_text(PREEMPTIONS, row, run)
    return (f"{output.runs[run].label} against {output.runs[0].label}: preemptions {figure_text(before, Unit.COUNT)} "
            f"-> {figure_text(after, Unit.COUNT)} ({change})")


def _sampled_verdict(output: CompareOutput, run: int) -> str:
    """``b against a, across 5 samples: wait p95 significantly lower for 2 of 9 ..., no significant change for 6``:
    a difference inside the samples' spread is never counted as lower or higher."""
    rows = output.shares.rows
    significant = [row.difference(run, WAIT_P95) for row in rows if row.significant(run, WAIT_P95)]
    lower = sum(1 for d in significant if d < 0)
    higher = sum(1 for d in significant if d > 0)
    return (f"{output.runs[run].label} against {output.runs[0].label}, across {output.samples} samples: wait p95 "
            f"significantly lower for {lower} of {len(rows)} shares and instance types, significantly higher for "
            f"{higher}, no significant change for {len(rows) - lower - higher}")


def document(output: CompareOutput) -> dict[str, Any]:
    """``compare --format json``: every run's figures and each difference as a number."""
    return plain(output.to_json())


# --- the HTML page's data: the charts over time, the wait p95 differences ------------------------------------


def _points(edges: np.ndarray, values: np.ndarray, scale: float, design: str) -> list[dict[str, Any]]:
    """Step rows: each bin's value from its left edge, the last one repeated at the end."""
    times = np.round(edges / scale, 4).tolist()
    numbers = np.round(values.astype(np.float64), 4).tolist()
    return [{"t": t, "value": numbers[min(i, len(numbers) - 1)], "design": design} for i, t in enumerate(times)]


def page_data(output: CompareOutput) -> dict[str, Any]:
    end = max(run.time for run in output.runs)
    scale, unit = agg.time_unit(end)
    types = list(dict.fromkeys(t for run in output.runs for t in run.utilisation))
    charts = []
    for instance_type in types:
        rows: list[dict[str, Any]] = []
        for run in output.runs:
            over = run.over_time
            if over is None or instance_type not in over.used or not over.capacity.get(instance_type):
                continue
            rows += _points(over.edges, over.used[instance_type] / over.capacity[instance_type], scale, run.label)
        charts.append({"title": f"{instance_type}: instances in use over the environments' capacity", "rows": rows})
    waiting = [row for run in output.runs if run.over_time is not None
               for row in _points(run.over_time.edges, run.over_time.waiting, scale, run.label)]
    # with samples, a difference inside the spread is drawn as none and labelled n.s. (never as a change)
    deltas = [{"row": f"{row.share} · {row.instance_type}", "design": output.runs[run].label,
               "hours": round(row.difference(run, WAIT_P95) / 3600, 4) if row.significant(run, WAIT_P95) else 0.0,
               "text": (sc.sampled_difference_text(WAIT_P95, row, run) if row.samples
                        else sc.difference_text(WAIT_P95, row.difference(run, WAIT_P95)))}
              for row in output.shares.rows for run in range(1, len(output.runs))]
    return {"unit": unit, "designs": list(output.labels), "types": charts, "waiting": waiting, "deltas": deltas}
