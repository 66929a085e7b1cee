"""The bill, who pays, waste and the capacity flows, once, as header and rows of text: text, Markdown and HTML
draw the same. Every figure comes computed from ``outputs.costs.CostReport``; this module only words it.

Amounts are in the prices' currency; without prices, each instance type keeps its own row in instance-hours
(instance-hours of different types are never added up), a plan's fee being its reserved instance-hours. Lending is
capacity, never money: its tables are in instance-hours and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy_engine.foundation.units import instance_hours_text, money_text, percent_text
from policy_engine.simulation.results.billable import period_text
from policy_engine.simulation.results.costs import Convention, CostReport

#: Each convention's view, as the chargeback table's caption says it.
CONVENTIONS = {
    Convention.USAGE: "usage: each share's bill (its jobs' on-demand spend, borrowed use included, and its part "
                      "of the plans' fees)",
    Convention.LIMIT: "limit: the budget view, each share's limit x rate as its maximum spend, its bill over it",
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
    return report.unit


def cost_tables(report: CostReport) -> list[CostTable]:
    """Who pays, per instance type, the plans and their allocation, the budget view (``--chargeback limit``), then
    the capacity flows in instance-hours."""
    return (_priced(report) if report.priced else _unpriced(report)) + _capacity(report)


def _priced(report: CostReport) -> list[CostTable]:
    unit = report.unit
    tables = [CostTable(
        "cost-shares", f"Who pays ({unit})",
        ("share", "on-demand", "plan fees", "bill", "waste: preempted attempts", "waste: plan idle"),
        [(s.share, money_text(s.bill.on_demand), money_text(s.bill.plans), money_text(s.bill.total),
          money_text(s.waste.preempted_attempts), money_text(s.waste.plan_idle)) for s in report.shares],
        1, "on-demand: its jobs' RUNNING time x rate, every attempt (borrowed use included: borrowing moves no "
           "money); plan fees: its part of each plan's fee (used part by use, idle part by the plan's idle_to); "
           f"convention {CONVENTIONS[report.convention]} (--chargeback, docs/costs.md)")]
    tables.append(CostTable(
        "cost-types", f"Per instance type ({unit})",
        ("instance type", "price / instance-hour", "on-demand instance-hours", "on-demand", "plan fees", "bill",
         "waste: preempted attempts", "waste: plan idle"),
        [(kind, money_text(report.rate(kind)), instance_hours_text(hours["on_demand"]), money_text(amounts.on_demand),
          money_text(amounts.plans), money_text(amounts.total), money_text(waste.preempted_attempts),
          money_text(waste.plan_idle)) for kind, (amounts, waste, hours) in report.by_type().items()], 1))
    if report.plans:
        tables.append(CostTable(
            "cost-plans", f"Training plans ({unit})",
            ("plan", "instance type", "upfront fee", "fee in the period", "reserved inst-h", "used inst-h",
             "idle inst-h", "cut at window end inst-h", "waste", "idle to", "unallocated"),
            [(p.hours.plan, p.hours.instance_type, money_text(p.upfront_fee or 0.0), money_text(p.fee),
              instance_hours_text(p.hours.reserved), instance_hours_text(p.hours.used_total),
              instance_hours_text(p.hours.idle), instance_hours_text(sum(p.hours.cut.values())), money_text(p.waste),
              p.idle_to.value, money_text(p.unallocated)) for p in report.plans],
            2, "paid once, upfront, used or not; its jobs are not billed again. Waste: the fee's part for reserved "
               "hours nobody used and for work a window's end cut. A plan nobody used is unallocated under "
               "idle_to: use."))
        tables.append(CostTable(
            "cost-plan-allocation", f"Plan fees allocated ({unit})",
            ("plan", "share", "used part", "idle part", "total"),
            [(p.hours.plan, share, money_text(use), money_text(idle), money_text(use + idle))
             for p in report.plans for share, (use, idle) in p.allocation.items()], 2))
    if report.convention is Convention.LIMIT:
        tables.append(CostTable(
            "cost-budget", f"Budget view ({unit})",
            ("share", "limit x rate over the period", "bill", "budget use"),
            [(s.share, money_text(s.budget or 0.0), money_text(s.bill.total),
              percent_text(s.budget_use) if s.budget_use is not None else "-") for s in report.shares],
            1, "a share's limit x rate is the most its own limit lets it spend on-demand per hour (limits are caps, "
               "not capacity paid for); budget use is its bill over that maximum for the period (above 100 %: it "
               "borrowed, or pays plan fees)"))
    return tables


def _unpriced(report: CostReport) -> list[CostTable]:
    pays = report.per_share_type()
    rows: list[tuple[str, ...]] = []
    for s in report.shares:
        types = dict.fromkeys([*(row.instance_type for row in s.rows),
                               *(p.hours.instance_type for p in report.plans if s.share in p.allocation)])
        on_type = {row.instance_type: row for row in s.rows}
        for kind in types:
            row = on_type.get(kind)
            on_demand = row.on_demand if row is not None else 0.0
            rows.append((s.share, kind, instance_hours_text(on_demand),
                         instance_hours_text(row.borrowing if row is not None else 0.0),
                         instance_hours_text(row.preempted if row is not None else 0.0),
                         instance_hours_text(sum(p.hours.used.get(s.share, 0.0) for p in report.plans
                                                 if p.hours.instance_type == kind)),
                         instance_hours_text(pays.get((s.share, kind), 0.0) - on_demand),
                         instance_hours_text(pays.get((s.share, kind), 0.0))))
    tables = [CostTable(
        "cost-shares", "Who pays (instance-hours)",
        ("share", "instance type", "on-demand", "of which attempts placed borrowing", "preempted work lost",
         "used on training plans", "plan fees (reserved inst-h)", "bill"),
        rows,
        2, "on-demand: RUNNING time of every attempt; plan fees: its part of each plan's reserved instance-hours "
           "(used part by use, idle part by the plan's idle_to), paid used or not; bill = on-demand + plan fees, per "
           "instance type (instance-hours of different types are not added up; give --prices FILE for the bill in "
           "money)")]
    if report.plans:
        tables.append(CostTable(
            "cost-plans", "Training plans (instance-hours)",
            ("plan", "instance type", "fee: reserved", "used", "idle", "cut at window end", "waste", "idle to",
             "unallocated"),
            [(p.hours.plan, p.hours.instance_type, instance_hours_text(p.fee),
              instance_hours_text(p.hours.used_total), instance_hours_text(p.hours.idle),
              instance_hours_text(sum(p.hours.cut.values())), instance_hours_text(p.waste), p.idle_to.value,
              instance_hours_text(p.unallocated)) for p in report.plans],
            2, "a plan's fee in instance-hours is what it reserved (instances x window hours in the period), paid "
               "upfront used or not; its jobs' hours are not billed again. Waste: reserved hours nobody used and "
               "work a window's end cut"))
        tables.append(CostTable(
            "cost-plan-allocation", "Plan fees allocated (reserved instance-hours)",
            ("plan", "share", "used part", "idle part", "total"),
            [(p.hours.plan, share, instance_hours_text(use), instance_hours_text(idle), instance_hours_text(use + idle))
             for p in report.plans for share, (use, idle) in p.allocation.items()], 2))
    if report.convention is Convention.LIMIT:
        tables.append(CostTable(
            "cost-budget", "Budget view (instance-hours)",
            ("share", "instance type", "limit over the period", "bill", "budget use"),
            [(s.share, row.instance_type, instance_hours_text(row.limit),
              instance_hours_text(pays.get((s.share, row.instance_type), 0.0)),
              percent_text(pays.get((s.share, row.instance_type), 0.0) / row.limit) if row.limit > 0 else "-")
             for s in report.shares for row in s.rows],
            2, "a share's limit over the period is the most its own limit lets it run on demand; its bill is its "
               "on-demand instance-hours and its part of the plans' reserved ones (above 100 %: it borrowed, or "
               "pays plan hours)"))
    return tables


def _capacity(report: CostReport) -> list[CostTable]:
    tables = [CostTable(
        "cost-capacity", "Quota held per share (instance-hours: capacity, not money)",
        ("share", "instance type", "strategy", "own use", "borrowed", "lent to others", "own limit", "own limit idle"),
        [(c.share, c.instance_type, c.hours.strategy, instance_hours_text(c.hours.own),
          instance_hours_text(c.hours.borrowed), instance_hours_text(c.lent), instance_hours_text(c.hours.limit),
          instance_hours_text(c.idle)) for c in report.capacity],
        3, "quota held SCHEDULED, STARTING or RUNNING (Batch counts all three against limits), over the whole run "
           "(never cut by --period); a limit nobody used costs nothing: limits are caps, not provisioned capacity")]
    if report.flows is not None:
        tables.append(CostTable(
            "cost-flows", "Lent: whose idle quota borrowers ran on (instance-hours: capacity, not money)",
            ("lender", "borrower", "instance type", "instance-hours"),
            [(f.lender, f.borrower, f.instance_type, instance_hours_text(f.instance_hours))
             for f in sorted(report.flows, key=lambda f: (-f.instance_hours, f.instance_type))],
            3, "borrowing moves no money in an on-demand account: the borrower's jobs are billed to it; attribution: "
               f"{report.attribution} (docs/costs.md)" + ("" if report.flows else "; no share borrowed")))
    return tables


def summary_lines(report: CostReport) -> list[str]:
    """The period first, then the bill and its waste: one sentence with prices, one per type without."""
    lines = [f"Bill for {period_text(report.period)}."]
    if report.priced:
        bill, waste, currency = report.bill, report.waste, report.currency
        unallocated = f"; {money_text(report.unallocated)} of plan fees allocated to no share" \
            if report.unallocated > 0.005 else ""
        source = report.prices.source if report.prices else "the prices file"
        lines.append(f"Bill: {money_text(bill.total)} {currency} = on-demand {money_text(bill.on_demand)} + plan fees "
                     f"{money_text(bill.plans)}; waste beside it: preempted attempts "
                     f"{money_text(waste.preempted_attempts)}, plan idle {money_text(waste.plan_idle)}"
                     f"{unallocated} (rates from {source}).")
        return lines
    for kind, (amounts, _, hours) in report.by_type().items():
        plans = (f" + plan fees {instance_hours_text(hours['plans'])} reserved on training plans "
                 f"({instance_hours_text(hours['plans_used'])} used, {instance_hours_text(hours['plan_idle'])} idle "
                 "or cut)") if hours["plans"] or hours["plans_used"] else ""
        lines.append(f"{kind}: bill {instance_hours_text(amounts.total)} instance-hours = "
                     f"{instance_hours_text(hours['on_demand'])} on-demand instance-hours billed "
                     f"({instance_hours_text(hours['preempted'])} of them work lost to preemption){plans}")
    lines.append("(instance-hours, each type on its own; a plan's fee is its reserved instance-hours, used or not; "
                 "give --prices FILE for the bill in money)")
    return lines
