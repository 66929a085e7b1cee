"""What a run costs, as AWS bills it, and who pays: the billable ledger priced, waste, allocation, budget view.

- **Bill** = on-demand spend + plan fees (docs/costs.md). On-demand: every attempt of a job not on a training
  plan, from its RUNNING start to its end, instances x its type's rate (``outputs.billable``). Plan fees: each
  plan's upfront fee once (prorated by its reserved instance-hours inside an explicit ``--period``). Capacity
  limits nobody used cost nothing: limits are caps, not provisioned capacity.
- **Without prices** the same bill is in instance-hours: an on-demand instance-hour counts 1, and a plan's fee is
  its reserved instance-hours (instances x window hours, prorated by the period as the money is), used or not,
  so the bill is on-demand RUNNING hours + reserved plan hours and idle reserved hours are in it.
- **Waste**, beside the bill: ``preempted_attempts`` (on-demand spend on work lost to preemption) and
  ``plan_idle`` (the fee's part for reserved hours nobody used, and for work a window's end cut).
- **Who pays**: a share pays its own jobs' on-demand spend (borrowed use included: borrowing moves no money in an
  on-demand account) and its part of each plan's fee: the used part in proportion to use, the idle part as the
  plan's ``idle_to`` says (an ``IdlePolicy``). A fee nobody is allocated is ``unallocated``, so the books
  balance: total = the shares' bills + unallocated.
- **Budget view** (``--chargeback limit``): a share's limit x rate is its maximum spend rate; its budget use is
  its bill over that maximum for the period.

Lending stays what it is, capacity: the per-share quota held and the lender -> borrower flows, in
instance-hours, never priced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from policy_engine.foundation.model import Topology, TrainingPlan, share_id
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.billable import Billable, Period, PlanBillable, ShareBillable, billable
from policy_engine.simulation.results.capacity_hours import CapacityHours, ShareHours, mean_hours
from policy_engine.simulation.results.lending import ATTRIBUTIONS, DEFAULT_ATTRIBUTION, Flow, lending_flows
from policy_engine.simulation.results.records import SimulationResult
from policy_engine.simulation.results.spread import Spread, spread

INSTANCE_HOURS = "instance-hours"


class Convention(StrEnum):
    """Which per-share view the chargeback shows (``--chargeback``): the bill, or the budget view."""

    USAGE = "usage"
    LIMIT = "limit"


class IdleTo(StrEnum):
    """Who pays a training plan's idle reserved hours (the plan's ``idle_to``)."""

    USE = "use"  # the shares that used it, in proportion to use; nobody used it: unallocated
    OWNERS = "owners"  # the plan's ``shares``, equally
    EQUAL = "equal"  # every share with a limit of the plan's instance type, equally


#: An idle policy: (the plan's use per share, its owners, the shares that could use its type) -> weight per share.
IdlePolicy = Callable[[dict[str, float], Sequence[str], Sequence[str]], dict[str, float]]


def _by_use(used: dict[str, float], owners: Sequence[str], eligible: Sequence[str]) -> dict[str, float]:
    return {share: hours for share, hours in used.items() if hours > 0}


def _equally(shares: Sequence[str]) -> dict[str, float]:
    return dict.fromkeys(shares, 1.0)


IDLE_POLICIES: dict[IdleTo, IdlePolicy] = {
    IdleTo.USE: _by_use,
    IdleTo.OWNERS: lambda used, owners, eligible: _equally(owners),
    IdleTo.EQUAL: lambda used, owners, eligible: _equally(eligible),
}


def _split(amount: float, weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {share: amount * weight / total for share, weight in weights.items()} if total > 0 else {}


@dataclass(frozen=True)
class Amounts:
    """A bill: on-demand spend and plan fees (the report's unit)."""

    on_demand: float = 0.0
    plans: float = 0.0

    @property
    def total(self) -> float:
        return self.on_demand + self.plans

    def to_json(self, priced: bool = True) -> dict[str, float | None]:
        values = {"on_demand": self.on_demand, "plans": self.plans, "total": self.total}
        return {key: (round(value, 6) + 0.0 if priced else None) for key, value in values.items()}


@dataclass(frozen=True)
class Waste:
    """Spend that bought nothing: on-demand work lost to preemption, and plan hours paid and not used (or cut)."""

    preempted_attempts: float = 0.0
    plan_idle: float = 0.0

    @property
    def total(self) -> float:
        return self.preempted_attempts + self.plan_idle

    def to_json(self, priced: bool = True) -> dict[str, float | None]:
        values = {"preempted_attempts": self.preempted_attempts, "plan_idle": self.plan_idle}
        return {key: (round(value, 6) + 0.0 if priced else None) for key, value in values.items()}


@dataclass(frozen=True)
class PlanCost:
    """One training plan's fee over the period and who pays it."""

    hours: PlanBillable
    #: the whole fee: money with prices, else its reserved instance-hours (what it paid for, in the report's unit);
    #: ``None`` when it has no fee (a plan the topology does not know)
    upfront_fee: float | None
    idle_to: IdleTo
    owners: tuple[str, ...]
    #: share -> (its use part, its idle part) of the fee in the period
    allocation: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """The fee per reserved instance-hour (1 in instance-hours; 0 when it reserves nothing or has no fee)."""
        if self.upfront_fee is None or self.hours.reserved_total <= 0:
            return 0.0
        return self.upfront_fee / self.hours.reserved_total

    @property
    def fee(self) -> float:
        """The fee in the period: whole for the whole workload, else prorated by its reserved hours inside it."""
        return self.rate * self.hours.reserved

    @property
    def waste(self) -> float:
        return self.rate * (self.hours.idle + sum(self.hours.cut.values()))

    @property
    def unallocated(self) -> float:
        return self.fee - sum(use + idle for use, idle in self.allocation.values())


@dataclass(frozen=True)
class ShareBill:
    """One share's bill over its instance types, its waste, and its rows of instance-hours."""

    share: str
    rows: tuple[ShareBillable, ...]
    bill: Amounts
    waste: Waste
    #: the most its limits could spend on-demand in the period (limit x rate); ``None`` without prices
    budget: float | None

    @property
    def budget_use(self) -> float | None:
        return self.bill.total / self.budget if self.budget else None


@dataclass(frozen=True)
class ShareCapacity:
    """Capacity, not money: one share's quota held on one type (SCHEDULED, STARTING, RUNNING) and what it lent."""

    hours: ShareHours
    lent: float  # instance-hours credited: the flows from it when attributed pair by pair, else the engine's

    @property
    def share(self) -> str:
        return self.hours.share

    @property
    def instance_type(self) -> str:
        return self.hours.instance_type

    @property
    def idle(self) -> float:
        return self.hours.limit - self.hours.own - self.lent


@dataclass(frozen=True)
class CostReport:
    """The bill of a run over a period, who pays it, what was wasted, and the capacity flows."""

    convention: Convention
    attribution: str
    currency: str | None  # None: every amount is instance-hours, and no amount is added across types
    ledger: Billable
    shares: tuple[ShareBill, ...]
    plans: tuple[PlanCost, ...]
    capacity: tuple[ShareCapacity, ...]
    #: Lender -> borrower instance-hours; None when the run kept no usage log (sweeps, ``diff``).
    flows: tuple[Flow, ...] | None
    prices: Prices | None = None

    @property
    def priced(self) -> bool:
        return self.currency is not None

    @property
    def unit(self) -> str:
        return self.currency or INSTANCE_HOURS

    @property
    def period(self) -> Period:
        return self.ledger.period

    def rate(self, instance_type: str) -> float:
        """The report's unit per on-demand instance-hour: the type's price, or 1 in instance-hours."""
        return self.prices.of(instance_type) if self.prices is not None else 1.0

    @property
    def bill(self) -> Amounts:
        return Amounts(sum(s.bill.on_demand for s in self.shares), sum(p.fee for p in self.plans))

    @property
    def waste(self) -> Waste:
        return Waste(sum(s.waste.preempted_attempts for s in self.shares), sum(p.waste for p in self.plans))

    @property
    def unallocated(self) -> float:
        return sum(p.unallocated for p in self.plans)

    def share_bill(self, share: str) -> float:
        """One share's bill over all its types (the sweep metric ``share(X).bill``); 0 for a share not in the run."""
        return next((s.bill.total for s in self.shares if s.share == share), 0.0)

    def by_type(self) -> dict[str, tuple[Amounts, Waste, dict[str, float]]]:
        """Per instance type: its bill, its waste and its instance-hours (on-demand, borrowing, ``plans``: reserved
        on its plans, the fee in instance-hours; ``plans_used``: of which used, preempted, ``plan_idle``: reserved
        and not used or cut at a window's end). Without prices its bill is these instance-hours."""
        out: dict[str, tuple[Amounts, Waste, dict[str, float]]] = {}
        keys = ("on_demand", "borrowing", "plans", "plans_used", "preempted", "plan_idle")
        for row in self.ledger.shares:
            amounts, waste, hours = out.get(row.instance_type, (Amounts(), Waste(), dict.fromkeys(keys, 0.0)))
            rate = self.rate(row.instance_type)
            hours = {**hours, "on_demand": hours["on_demand"] + row.on_demand,
                     "borrowing": hours["borrowing"] + row.borrowing, "preempted": hours["preempted"] + row.preempted}
            out[row.instance_type] = (Amounts(amounts.on_demand + row.on_demand * rate, amounts.plans),
                                      Waste(waste.preempted_attempts + row.preempted * rate, waste.plan_idle), hours)
        for plan in self.plans:
            kind = plan.hours.instance_type
            amounts, waste, hours = out.get(kind, (Amounts(), Waste(), dict.fromkeys(keys, 0.0)))
            out[kind] = (Amounts(amounts.on_demand, amounts.plans + plan.fee),
                         Waste(waste.preempted_attempts, waste.plan_idle + plan.waste),
                         {**hours, "plans": hours["plans"] + plan.hours.reserved,
                          "plans_used": hours["plans_used"] + plan.hours.used_total,
                          "plan_idle": hours["plan_idle"] + plan.hours.idle + sum(plan.hours.cut.values())})
        return out

    def per_share_type(self) -> dict[tuple[str, str], float]:
        """``(share, instance type)`` -> what the share pays on that type (its on-demand spend and its part of the
        fees of plans of that type); without prices in instance-hours (on-demand, and its part of the plans'
        reserved instance-hours, allocated as the fees are)."""
        out: dict[tuple[str, str], float] = {}
        for row in self.ledger.shares:
            key = (row.share, row.instance_type)
            out[key] = out.get(key, 0.0) + row.on_demand * self.rate(row.instance_type)
        for plan in self.plans:
            for share, (use, idle) in plan.allocation.items():
                key = (share, plan.hours.instance_type)
                out[key] = out.get(key, 0.0) + use + idle
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``costs`` object of ``simulate --format json`` (docs/costs.md)."""
        priced = self.priced

        def ih(values: dict[str, float]) -> dict[str, float]:
            return {key: round(value, 6) + 0.0 for key, value in values.items()}

        shares = []
        for s in self.shares:
            shares.append({
                "share": s.share, "bill": s.bill.to_json(priced), "waste": s.waste.to_json(priced),
                "budget": ({"max_spend": round(s.budget, 6), "use": round(s.budget_use, 6)
                            if s.budget_use is not None else None} if s.budget is not None else None),
                "instance_types": [{"instance_type": row.instance_type,
                                    "price_per_instance_hour": self.rate(row.instance_type) if priced else None,
                                    "instance_hours": ih({"on_demand": row.on_demand, "borrowing": row.borrowing,
                                                          "preempted": row.preempted, "limit": row.limit})}
                                   for row in s.rows]})
        # one type's bill, and one plan's fee, are in instance-hours without prices: nothing of two types is added
        types = [{"instance_type": kind, "price_per_instance_hour": self.rate(kind) if priced else None,
                  "bill": amounts.to_json(), "waste": waste.to_json(), "instance_hours": ih(hours)}
                 for kind, (amounts, waste, hours) in self.by_type().items()]
        plans = [{"plan": p.hours.plan, "instance_type": p.hours.instance_type,
                  "upfront_fee": p.upfront_fee if priced else None,
                  "fee": _rounded(p.fee), "waste": _rounded(p.waste),
                  "idle_to": p.idle_to.value, "owners": list(p.owners),
                  "instance_hours": ih({"reserved": p.hours.reserved, "used": p.hours.used_total,
                                        "idle": p.hours.idle, "cut": sum(p.hours.cut.values())}),
                  "used_by": ih(p.hours.used),
                  "allocation": [{"share": share, "use": round(use, 6), "idle": round(idle, 6),
                                  "total": round(use + idle, 6)} for share, (use, idle) in p.allocation.items()],
                  "unallocated": _rounded(p.unallocated)} for p in self.plans]
        flows = None if self.flows is None else [
            {"lender": f.lender, "borrower": f.borrower, "instance_type": f.instance_type,
             "instance_hours": round(f.instance_hours, 6)} for f in self.flows]
        capacity = [{"share": c.share, "instance_type": c.instance_type, "strategy": c.hours.strategy,
                     "instance_hours": ih({"own_use": c.hours.own, "borrowed": c.hours.borrowed, "lent": c.lent,
                                           "limit": c.hours.limit, "idle": c.idle})} for c in self.capacity]
        return {"unit": self.unit, "currency": self.currency, "chargeback": self.convention.value,
                "attribution": self.attribution, "period": self.period.to_json(),
                "bill": self.bill.to_json(priced), "waste": self.waste.to_json(priced),
                "unallocated": round(self.unallocated, 6) + 0.0 if priced else None,
                "shares": shares, "instance_types": types, "plans": plans,
                "capacity": {"unit": INSTANCE_HOURS, "shares": capacity, "flows": flows}}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6) + 0.0


def cost_report(ledger: Billable, hours: CapacityHours, topology: Topology, prices: Prices | None = None,
                convention: Convention = Convention.USAGE, flows: Sequence[Flow] | None = None,
                attribution: str = DEFAULT_ATTRIBUTION) -> CostReport:
    """Price ``ledger`` (a run of ``topology``); ``hours`` and ``flows`` (``lending.lending_flows``) are the capacity
    tables (what lenders lent, in instance-hours)."""
    priced = prices is not None

    def rate(instance_type: str) -> float:  # without prices an on-demand instance-hour counts 1
        return prices.of(instance_type) if prices is not None else 1.0

    plan_costs = tuple(_plan_cost(plan, topology, prices) for plan in ledger.plans)
    shares = []
    grouped: dict[str, list[ShareBillable]] = {}
    for row in ledger.shares:
        grouped.setdefault(row.share, []).append(row)
    for plan_cost in plan_costs:  # every share a fee is allocated to has a bill
        for share in (*plan_cost.hours.used, *plan_cost.allocation):
            grouped.setdefault(share, [])
    for share, rows in grouped.items():
        on_demand = sum(row.on_demand * rate(row.instance_type) for row in rows)
        plans = sum(sum(p.allocation.get(share, (0.0, 0.0))) for p in plan_costs)
        lost = sum(row.preempted * rate(row.instance_type) for row in rows)
        plan_waste = sum(p.allocation.get(share, (0.0, 0.0))[1] + p.rate * p.hours.cut.get(share, 0.0)
                         for p in plan_costs)
        budget = (sum(row.limit * rate(row.instance_type) for row in rows)
                  if priced and convention is Convention.LIMIT else None)
        shares.append(ShareBill(share, tuple(rows), Amounts(on_demand, plans), Waste(lost, plan_waste), budget))
    lent: dict[tuple[str, str], float] | None = None
    if flows is not None:
        lent = {}
        for flow in flows:
            key = (flow.lender, flow.instance_type)
            lent[key] = lent.get(key, 0.0) + flow.instance_hours
    capacity = tuple(ShareCapacity(row, row.lent if lent is None else lent.get((row.share, row.instance_type), 0.0))
                     for row in hours.shares)
    return CostReport(convention, attribution, prices.currency if prices else None, ledger, tuple(shares), plan_costs,
                      capacity, tuple(flows) if flows is not None else None, prices)


def _plan_cost(plan: PlanBillable, topology: Topology, prices: Prices | None) -> PlanCost:
    model = next((p for p in topology.training_plans if p.name == plan.plan), None)
    idle_to = IdleTo(model.idle_to) if model is not None else IdleTo.USE
    owners = _owners(model, topology)
    if model is None:
        return PlanCost(plan, None, idle_to, owners)
    # without prices the fee is what the plan paid for, in instance-hours: its reserved instances x window hours
    cost = PlanCost(plan, prices.plan_fee(model) if prices is not None else plan.reserved_total, idle_to, owners)
    use_part = _split(cost.rate * plan.used_total, plan.used)
    eligible = [share_id(q, s) for q, s in topology.shares() if plan.instance_type in s.capacity]
    idle_part = _split(cost.rate * plan.idle, IDLE_POLICIES[idle_to](plan.used, owners, eligible))
    allocation = {share: (use_part.get(share, 0.0), idle_part.get(share, 0.0))
                  for share in dict.fromkeys([*use_part, *idle_part])}
    return PlanCost(plan, cost.upfront_fee, idle_to, owners, allocation)


def _owners(plan: TrainingPlan | None, topology: Topology) -> tuple[str, ...]:
    if plan is None:
        return ()
    return tuple(str(match.share_id) for ref in plan.shares if (match := topology.find_share(ref)).share_id)


def run_costs(result: SimulationResult, topology: Topology, prices: Prices | None = None,
              convention: Convention = Convention.USAGE, attribution: str = DEFAULT_ATTRIBUTION,
              period: Period | None = None) -> CostReport:
    """The cost report of a run over ``period``; lender -> borrower flows when it kept a usage log."""
    if result.hours is None:
        raise ValueError("the result has no capacity ledger (built by build_result)")
    flows = None
    if result.usage is not None:
        borrowers = {(s.share, s.instance_type): s.strategy == "LEND_AND_BORROW" for s in result.hours.shares}
        flows = lending_flows(result.usage, result.time, borrowers, ATTRIBUTIONS[attribution])
    return cost_report(billable(result, period or Period()), result.hours, topology, prices, convention, flows,
                       attribution)


def ledgers(result: SimulationResult, period: Period | None = None) -> dict[str, Any]:
    """What a sweep or compare run record keeps to price later: the billable ledger and the capacity ledger."""
    if result.hours is None:
        return {}
    return {"billable": billable(result, period or Period()).to_json(), "capacity": result.hours.to_json()}


def mean_ledgers(kept: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The mean of the ledgers of one topology run on several workloads (``tune --workload-samples``)."""
    if not kept:
        return {}
    ledgers_ = [Billable.from_json(k["billable"]) for k in kept]
    n = len(ledgers_)
    shares = tuple(ShareBillable(rows[0].share, rows[0].instance_type,
                                 *(sum(getattr(r, name) for r in rows) / n for name in ShareBillable._fields[2:]))
                   for rows in zip(*(ledger.shares for ledger in ledgers_), strict=True))
    plans = []
    for same in zip(*(ledger.plans for ledger in ledgers_), strict=True):
        first = same[0]
        used = {share: sum(p.used.get(share, 0.0) for p in same) / n for p in same for share in p.used}
        cut = {share: sum(p.cut.get(share, 0.0) for p in same) / n for p in same for share in p.cut}
        plans.append(PlanBillable(first.plan, first.instance_type, sum(p.reserved for p in same) / n,
                                  first.reserved_total, used, cut))
    mean = Billable(ledgers_[0].period, sum(ledger.run_end for ledger in ledgers_) / n, shares, tuple(plans))
    return {"billable": mean.to_json(),
            "capacity": mean_hours([CapacityHours.from_json(k["capacity"]) for k in kept]).to_json()}


def report_from_ledgers(data: dict[str, Any], topology: Topology, prices: Prices | None,
                        convention: Convention = Convention.USAGE) -> CostReport:
    """A run record's ``ledgers`` priced (``ValueError`` for a record written before the bill existed)."""
    if "billable" not in data:
        raise ValueError("the run record holds no billable ledger (a dataset written before the bill replaced the "
                         "capacity cost: run it again without --resume)")
    return cost_report(Billable.from_json(data["billable"]), CapacityHours.from_json(data["capacity"]), topology,
                       prices, convention)


#: The bill's and the waste's figures a spread across workload samples is given for (``bill_spreads``).
BILL_FIGURES = ("on_demand", "plans", "total", "preempted_attempts", "plan_idle", "waste")


def bill_spreads(reports: Sequence[CostReport]) -> dict[str, Spread]:
    """``simulate --samples N --prices``: each bill and waste figure's p10, p50 and p90 over the samples' reports
    (one per sample, in sample order); ``waste`` is their sum, spread as a sum (not the sum of two spreads)."""
    values = [{"on_demand": r.bill.on_demand, "plans": r.bill.plans, "total": r.bill.total,
               "preempted_attempts": r.waste.preempted_attempts, "plan_idle": r.waste.plan_idle,
               "waste": r.waste.preempted_attempts + r.waste.plan_idle} for r in reports]
    return {key: spread([found[key] for found in values]) for key in BILL_FIGURES}
