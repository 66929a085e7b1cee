"""What a run did with its training plans, for every format: rows per window and per share, JSON, Markdown, text.

The figures are ``plan_windows.PlanReport``'s; here they become reserved instance-hours paid, used and idle
per window, what each share used of them, what a window's end cut off, and the quota SCHEDULED plan jobs
held while they waited. One module so that text, Markdown, JSON and the HTML page say the same.

With ``--prices`` each window and share also gets its cost in the prices' currency (the plan's type's rate per
instance-hour): paid, used and idle, the idle one being the reserved capacity paid for and never used. Without
prices those columns are not drawn (the instance-hour ones say the same), never shown as zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from policy_engine.foundation.units import duration_text, money_text, number_text
from policy_engine.simulation.plan_windows import PlanReport
from policy_engine.simulation.results.numbers import as_number

if TYPE_CHECKING:
    from policy_engine.inputs.prices import Prices

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
    #: the plan's type's rate per instance-hour; ``None`` without ``--prices``
    price: float | None = None


class ShareRow(NamedTuple):
    plan: str
    window: int
    share: str
    used: float
    cut_jobs: int
    cut: float
    price: float | None = None


class HeldRow(NamedTuple):
    plan: str
    share: str
    held: float


def _rate(prices: Prices | None, instance_type: str) -> float | None:
    return prices.of(instance_type) if prices is not None else None


def window_rows(report: PlanReport, prices: Prices | None = None) -> list[WindowRow]:
    """One row per plan window, in instance-hours (and its type's rate, when priced)."""
    return [WindowRow(plan.name, window.index, plan.instance_type, window.instances, window.start, window.end,
                      window.paid / _HOUR, window.used / _HOUR, window.idle / _HOUR, window.cut_jobs,
                      window.cut_seconds / _HOUR, window.peak, _rate(prices, plan.instance_type))
            for plan in report.plans for window in plan.windows]


def share_rows(report: PlanReport, prices: Prices | None = None) -> list[ShareRow]:
    """One row per plan window and share that used it, in instance-hours (and its type's rate, when priced)."""
    return [ShareRow(plan.name, window.index, share, use.used / _HOUR, use.cut_jobs, use.cut_seconds / _HOUR,
                     _rate(prices, plan.instance_type))
            for plan in report.plans for window in plan.windows for share, use in window.shares.items()]


def held_rows(report: PlanReport) -> list[HeldRow]:
    """Quota held by SCHEDULED plan jobs waiting for an instance, per plan and share, in instance-hours."""
    return [HeldRow(plan.name, share, seconds / _HOUR) for plan in report.plans
            for share, seconds in plan.held_quota.items()]


def _cost(seconds: float, price: float | None) -> float | int | None:
    return None if price is None else as_number(round(seconds / _HOUR * price, 6))


def _costs(paid: float, used: float, idle: float, price: float | None) -> dict[str, Any] | None:
    """Paid, used and idle instance-seconds priced; ``None`` without prices (never a zero)."""
    if price is None:
        return None
    return {"paid": _cost(paid, price), "used": _cost(used, price), "idle": _cost(idle, price)}


def to_json(report: PlanReport, prices: Prices | None = None) -> list[dict[str, Any]]:
    """``training_plans`` of ``simulate --format json``: times in seconds, figures in instance-hours; with
    ``prices``, ``cost`` (paid, used, idle) per plan and window and ``used_cost`` per share, in ``currency``."""
    out = []
    for plan in report.plans:
        price = _rate(prices, plan.instance_type)
        out.append({
            "name": plan.name, "instance_type": plan.instance_type,
            "currency": prices.currency if prices is not None else None, "price_per_instance_hour": price,
            "paid_instance_hours": as_number(plan.paid / _HOUR), "used_instance_hours": as_number(plan.used / _HOUR),
            "idle_instance_hours": as_number(plan.idle / _HOUR),
            "cost": _costs(plan.paid, plan.used, plan.idle, price),
            "windows": [{
                "index": w.index, "instances": w.instances, "start": as_number(w.start), "end": as_number(w.end),
                "cutoff": as_number(w.cutoff), "peak_instances_in_use": w.peak,
                "paid_instance_hours": as_number(w.paid / _HOUR), "used_instance_hours": as_number(w.used / _HOUR),
                "idle_instance_hours": as_number(w.idle / _HOUR), "cut_jobs": w.cut_jobs,
                "cut_instance_hours": as_number(w.cut_seconds / _HOUR),
                "cost": _costs(w.paid, w.used, w.idle, price),
                "shares": [{"share": share, "used_instance_hours": as_number(use.used / _HOUR),
                            "used_cost": _cost(use.used, price),
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
    return f"{number_text(row.start)}-{number_text(row.end)} s ({duration_text(row.end - row.start)})"


def idle_share(row: WindowRow) -> str:
    return f"{row.idle / row.paid:.0%}" if row.paid > 0 else "-"


WINDOW_HEADER = ("plan", "window", "instance type", "instances", "when", "paid inst-h", "used inst-h",
                 "idle inst-h", "idle", "peak in use", "cut jobs", "cut inst-h")
SHARE_HEADER = ("plan", "window", "share", "used inst-h", "cut jobs", "cut inst-h")
HELD_HEADER = ("plan", "share", "quota held SCHEDULED inst-h")


def window_header(prices: Prices | None = None) -> tuple[str, ...]:
    """``WINDOW_HEADER``, and the paid, used and idle cost in the prices' currency when priced."""
    if prices is None:
        return WINDOW_HEADER
    return (*WINDOW_HEADER, *(f"{figure} {prices.currency}" for figure in ("paid", "used", "idle")))


def share_header(prices: Prices | None = None) -> tuple[str, ...]:
    return SHARE_HEADER if prices is None else (*SHARE_HEADER, f"used {prices.currency}")


def window_cells(row: WindowRow) -> tuple[str, ...]:
    cells = (row.plan, str(row.window), row.instance_type, str(row.instances), window_span(row), hours(row.paid),
             hours(row.used), hours(row.idle), idle_share(row), str(row.peak), f"{row.cut_jobs:,}", hours(row.cut))
    price = row.price
    return cells if price is None else (*cells, money_text(row.paid * price), money_text(row.used * price),
                                        money_text(row.idle * price))


def share_cells(row: ShareRow) -> tuple[str, ...]:
    cells = (row.plan, str(row.window), row.share, hours(row.used), f"{row.cut_jobs:,}", hours(row.cut))
    return cells if row.price is None else (*cells, money_text(row.used * row.price))


def held_cells(row: HeldRow) -> tuple[str, ...]:
    return (row.plan, row.share, hours(row.held))


def _priced_note(prices: Prices | None) -> str:
    return "" if prices is None else f"; {prices.currency}: at the plan's type's rate from {prices.source}"


def markdown_lines(report: PlanReport, prices: Prices | None = None) -> list[str]:
    """The plan tables of ``simulate --format markdown`` (with cost columns when ``prices`` are given)."""
    from policy_engine.reports.kit.markdown import table

    lines = ["Training plans (reserved instance-hours; cut: attempts a window's end terminated, and the work "
             f"they lost{_priced_note(prices)}):", ""]
    priced = "" if prices is None else "rrr"
    lines += table(window_header(prices), map(window_cells, window_rows(report, prices)),
                   align="lrlrlrrrrrrr" + priced)
    lines.append("")
    shares = share_rows(report, prices)
    if shares:
        lines += table(share_header(prices), map(share_cells, shares), align="lrlrrr" + priced[:1])
        lines.append("")
    held = held_rows(report)
    if held:
        lines += ["Quota held by SCHEDULED plan jobs waiting for an instance of their plan:", ""]
        lines += table(HELD_HEADER, map(held_cells, held), align="llr")
        lines.append("")
    return lines


def text_tables(report: PlanReport, prices: Prices | None = None) -> list[Any]:
    """The plan tables of ``simulate``'s text report (rich ``Table``s; cost columns when ``prices`` are given)."""
    from rich.table import Table

    from policy_engine.reports.kit.safe_text import rich_text

    tables = []
    money_suffix = () if prices is None else (prices.currency,)
    for title, header, rows in (
            (f"Training plans (reserved instance-hours{_priced_note(prices)})", window_header(prices),
             map(window_cells, window_rows(report, prices))),
            ("Training plan use per share", share_header(prices), map(share_cells, share_rows(report, prices))),
            ("Quota held by SCHEDULED plan jobs waiting for an instance", HELD_HEADER,
             map(held_cells, held_rows(report)))):
        cells = list(rows)
        if not cells:
            continue
        table = Table(title=title)
        for index, column in enumerate(header):
            numeric = column.endswith(("inst-h", "instances", "jobs", "window", "idle", "in use", *money_suffix))
            table.add_column(column, overflow="fold", justify="right" if numeric and index else "left")
        for row in cells:
            table.add_row(*map(rich_text, row))
        tables.append(table)
    return tables
