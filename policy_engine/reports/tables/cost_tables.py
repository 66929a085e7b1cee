"""The cost and chargeback tables, once, as header and rows of text: text, Markdown and HTML draw the same.

Amounts are in the report's unit (the prices' currency, else instance-hours); the headers say which.
Without prices, each instance type keeps its own row: instance-hours of different types are never
added up (their prices differ).
"""

from __future__ import annotations

from dataclasses import dataclass

from policy_engine.foundation.units import money_text
from policy_engine.simulation.results.costs import INSTANCE_HOURS, Convention, CostReport

#: Each convention's rule, as the chargeback table's caption says it.
CONVENTIONS = {
    Convention.USAGE: "usage: own use + borrowed charged, lent capacity credited",
    Convention.LIMIT: "limit: own limit charged for the whole run, + borrowed, lent capacity credited",
}


@dataclass(frozen=True)
class CostTable:
    key: str  # a stable name (an HTML id)
    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]
    numeric_from: int  # columns from this one on are numbers (right-aligned)
    note: str = ""


def unit_label(report: CostReport) -> str:
    return report.currency if report.currency is not None else INSTANCE_HOURS


def cost_tables(report: CostReport) -> list[CostTable]:
    """Per share, idle capacity, lending flows and the chargeback, then the totals line (``summary_line``)."""
    unit = unit_label(report)
    priced = report.currency is not None
    shares = CostTable(
        "cost-shares", f"Cost per share and instance type ({unit})",
        ("share", "instance type", "strategy", *(("price / instance-hour",) if priced else ()), "own use", "borrowed",
         "lent to others", "own limit", "own limit idle"),
        [(s.share, s.instance_type, s.hours.strategy, *((money_text(s.price or 0.0),) if priced else ()),
          money_text(report.amount(s.hours.own, s.price)), money_text(report.amount(s.hours.borrowed, s.price)),
          money_text(report.amount(s.lent, s.price)), money_text(report.amount(s.hours.limit, s.price)),
          money_text(report.amount(s.idle, s.price))) for s in report.shares],
        3, "own use: within the share's limit; borrowed: above it, on other shares' idle capacity; lent: its idle "
           "capacity other shares used; own limit idle: nobody used it (a RESERVE share's idle reservation).")
    idle = CostTable(
        "cost-idle", f"Idle capacity ({unit})",
        ("environment", "instance type", "capacity", "used", "idle", "RESERVE shares' idle limits",
         "lenders' idle, not borrowed", "in no share's limit"),
        [(e.hours.environment, e.hours.instance_type, money_text(report.amount(e.hours.capacity, e.price)),
          money_text(report.amount(e.hours.used, e.price)), money_text(report.amount(e.hours.idle, e.price)),
          money_text(report.amount(e.reserved_idle, e.price)), money_text(report.amount(e.lendable_idle, e.price)),
          money_text(report.amount(e.outside_shares, e.price))) for e in report.environments],
        2, "idle = RESERVE shares' idle limits + lenders' idle capacity nobody borrowed + capacity in no share's "
           "limit (negative when the limits add up to more than the environment).")
    tables = [shares, idle]
    if report.flows is not None:
        tables.append(CostTable(
            "cost-flows", f"Lent: who subsidises whom ({unit})",
            ("lender", "borrower", "instance type", "instance-hours", *((report.currency or "",) if priced else ())),
            [(f.lender, f.borrower, f.instance_type, money_text(f.instance_hours),
              *((money_text(report.flow_amount(f)),) if priced else ()))
             for f in sorted(report.flows, key=lambda f: (-report.flow_amount(f), f.instance_type))],
            3, "the lender's idle capacity the borrower's jobs ran on, largest first; attribution: "
               f"{report.attribution} (docs/costs.md)" + ("" if report.flows else "; no share borrowed")))
    tables.append(CostTable(
        "cost-chargeback", f"Chargeback ({unit})",
        ("share", "instance type", "charged", "credited", "net"),
        [(share, instance_type, money_text(charged), money_text(credited), money_text(net))
         for share, instance_type, charged, credited, net in report.chargeback()],
        2, f"convention {CONVENTIONS[report.convention]} (--chargeback, docs/costs.md)"
           + ("" if priced else "; without prices each instance type has its own row (instance-hours of different "
                                "types are not added up)")))
    return tables


def summary_lines(report: CostReport) -> list[str]:
    """Cluster total, used, idle, charged to the shares and not charged to any: one sentence with prices, one
    per instance type without (instance-hours of different types are not added up)."""
    if report.currency is not None:
        return [f"Cost over the run: {money_text(report.total)} {report.currency} of capacity, "
                f"{money_text(report.used)} used, {money_text(report.idle)} idle; charged to shares "
                f"{money_text(report.charged_to_shares)}, not charged to any share {money_text(report.not_charged)} "
                f"(rates from "
                f"{report.prices.source if report.prices else 'the prices file'})."]
    return [f"{instance_type} over the run: {money_text(row['total'])} instance-hours of capacity, "
            f"{money_text(row['used'])} used, {money_text(row['idle'])} idle; charged to shares "
            f"{money_text(row['charged_to_shares'])}, not charged to any share {money_text(row['not_charged'])}"
            for instance_type, row in report.by_type().items()] + ["(instance-hours; give --prices FILE to price them)"]
