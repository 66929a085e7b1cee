"""What a run did with its training plans, for every format: rows per window and per share, JSON, Markdown, text.

The figures are ``plan_windows.PlanReport``'s; here they become reserved instance-hours paid, used and idle
per window, what each share used of them, what a window's end cut off, and the quota SCHEDULED plan jobs
held while they waited. One module so that text, Markdown, JSON and the HTML page say the same.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from policy_engine.simulation.outputs.numbers import as_number, format_seconds
from policy_engine.simulation.plan_windows import PlanReport
from policy_engine.units import duration_text

_HOUR = 3600.0


class WindowRow(NamedTuple):
    plan: str
    window: int
    instance_type: str
    instances: int
    start: float
    end: float
    paid: float
    used: float
    idle: float
    cut_jobs: int
    cut: float
    peak: int


class ShareRow(NamedTuple):
    plan: str
    window: int
    share: str
    used: float
    cut_jobs: int
    cut: float


class HeldRow(NamedTuple):
    plan: str
    share: str
    held: float


def window_rows(report: PlanReport) -> list[WindowRow]:
    """One row per plan window, in instance-hours."""
    return [WindowRow(plan.name, window.index, plan.instance_type, window.instances, window.start, window.end,
                      window.paid / _HOUR, window.used / _HOUR, window.idle / _HOUR, window.cut_jobs,
                      window.cut_seconds / _HOUR, window.peak)
            for plan in report.plans for window in plan.windows]


def share_rows(report: PlanReport) -> list[ShareRow]:
    """One row per plan window and share that used it, in instance-hours."""
    return [ShareRow(plan.name, window.index, share, use.used / _HOUR, use.cut_jobs, use.cut_seconds / _HOUR)
            for plan in report.plans for window in plan.windows for share, use in window.shares.items()]


def held_rows(report: PlanReport) -> list[HeldRow]:
    """Quota held by SCHEDULED plan jobs waiting for an instance, per plan and share, in instance-hours."""
    return [HeldRow(plan.name, share, seconds / _HOUR) for plan in report.plans
            for share, seconds in plan.held_quota.items()]


def to_json(report: PlanReport) -> list[dict[str, Any]]:
    """``training_plans`` of ``simulate --format json``: times in seconds, figures in instance-hours."""
    out = []
    for plan in report.plans:
        out.append({
            "name": plan.name, "instance_type": plan.instance_type,
            "paid_instance_hours": as_number(plan.paid / _HOUR), "used_instance_hours": as_number(plan.used / _HOUR),
            "idle_instance_hours": as_number(plan.idle / _HOUR),
            "windows": [{
                "index": w.index, "instances": w.instances, "start": as_number(w.start), "end": as_number(w.end),
                "cutoff": as_number(w.cutoff), "peak_instances_in_use": w.peak,
                "paid_instance_hours": as_number(w.paid / _HOUR), "used_instance_hours": as_number(w.used / _HOUR),
                "idle_instance_hours": as_number(w.idle / _HOUR), "cut_jobs": w.cut_jobs,
                "cut_instance_hours": as_number(w.cut_seconds / _HOUR),
                "shares": [{"share": share, "used_instance_hours": as_number(use.used / _HOUR),
                            "cut_jobs": use.cut_jobs, "cut_instance_hours": as_number(use.cut_seconds / _HOUR)}
                           for share, use in w.shares.items()],
            } for w in plan.windows],
            "scheduled_quota_held": [{"share": share, "instance_hours": as_number(seconds / _HOUR)}
                                     for share, seconds in plan.held_quota.items()],
        })
    return out


def hours(value: float) -> str:
    return f"{value:,.2f}"


def window_span(row: WindowRow) -> str:
    """``36000-72000 s (10h 00m)``: the window in simulated seconds, and how long it lasts."""
    return f"{format_seconds(row.start)}-{format_seconds(row.end)} s ({duration_text(row.end - row.start)})"


def idle_share(row: WindowRow) -> str:
    return f"{row.idle / row.paid:.0%}" if row.paid > 0 else "-"


WINDOW_HEADER = ("plan", "window", "instance type", "instances", "when", "paid inst-h", "used inst-h",
                 "idle inst-h", "idle", "peak in use", "cut jobs", "cut inst-h")
SHARE_HEADER = ("plan", "window", "share", "used inst-h", "cut jobs", "cut inst-h")
HELD_HEADER = ("plan", "share", "quota held SCHEDULED inst-h")


def window_cells(row: WindowRow) -> tuple[str, ...]:
    return (row.plan, str(row.window), row.instance_type, str(row.instances), window_span(row), hours(row.paid),
            hours(row.used), hours(row.idle), idle_share(row), str(row.peak), f"{row.cut_jobs:,}", hours(row.cut))


def share_cells(row: ShareRow) -> tuple[str, ...]:
    return (row.plan, str(row.window), row.share, hours(row.used), f"{row.cut_jobs:,}", hours(row.cut))


def held_cells(row: HeldRow) -> tuple[str, ...]:
    return (row.plan, row.share, hours(row.held))


def markdown_lines(report: PlanReport) -> list[str]:
    """The plan tables of ``simulate --format markdown``."""
    from policy_engine.reports.markdown import table

    lines = ["Training plans (reserved instance-hours; cut: attempts a window's end terminated, and the work "
             "they lost):", ""]
    lines += table(WINDOW_HEADER, map(window_cells, window_rows(report)), align="lrlrlrrrrrrr")
    lines.append("")
    shares = share_rows(report)
    if shares:
        lines += table(SHARE_HEADER, map(share_cells, shares), align="lrlrrr")
        lines.append("")
    held = held_rows(report)
    if held:
        lines += ["Quota held by SCHEDULED plan jobs waiting for an instance of their plan:", ""]
        lines += table(HELD_HEADER, map(held_cells, held), align="llr")
        lines.append("")
    return lines


def text_tables(report: PlanReport) -> list[Any]:
    """The plan tables of ``simulate``'s text report (rich ``Table``s)."""
    from rich.table import Table

    from policy_engine.reports.safe_text import rich_text

    tables = []
    for title, header, rows in (
            ("Training plans (reserved instance-hours)", WINDOW_HEADER, map(window_cells, window_rows(report))),
            ("Training plan use per share", SHARE_HEADER, map(share_cells, share_rows(report))),
            ("Quota held by SCHEDULED plan jobs waiting for an instance", HELD_HEADER,
             map(held_cells, held_rows(report)))):
        cells = list(rows)
        if not cells:
            continue
        table = Table(title=title)
        for index, column in enumerate(header):
            numeric = column.endswith(("inst-h", "instances", "jobs", "window", "idle", "in use"))
            table.add_column(column, overflow="fold", justify="right" if numeric and index else "left")
        for row in cells:
            table.add_row(*map(rich_text, row))
        tables.append(table)
    return tables
