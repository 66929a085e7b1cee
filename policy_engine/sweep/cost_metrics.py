"""``bill``, ``on_demand_cost``, ``plan_cost``, ``waste_cost``, ``share(X).bill`` and ``AGG(bill)``: sweep and tune
metrics priced from a run's ledgers.

A run record carries what AWS would bill in instance-hours (``RunRecord.costs``: the billable ledger over the
billing period and the capacity ledger, price-free, so a dataset stays valid when prices change); the expression
prices it with ``--prices`` when it is read. ``bill`` is on-demand spend + plan fees (docs/costs.md);
``on_demand_cost`` and ``plan_cost`` its two parts; ``waste_cost`` the spend that bought nothing (on-demand work
lost to preemption, plan hours idle or cut); ``share(X).bill`` what the share pays. Without prices each is in
instance-hours, every instance type counted alike, and a plan's fee counts as its reserved instance-hours, used or
not (``CostReport`` computes the bill in that unit; docs/costs.md and docs/sweep.md say so). The capacity-priced
metrics this replaced are refused, naming the new one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.model import Topology
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.billable import Period
from policy_engine.simulation.results.costs import INSTANCE_HOURS, Convention, CostReport, report_from_ledgers
from policy_engine.sweep.run_record import RunFigures

#: Cluster-wide bill metrics and the per-share one.
CLUSTER_COST_METRICS = ("bill", "on_demand_cost", "plan_cost", "waste_cost")
SHARE_COST_METRIC = "bill"
#: The capacity-priced metrics the bill replaced -> what to write instead (one line, exit 2).
RETIRED = {
    "cost": "bill (what AWS bills: on-demand job time + plan fees; capacity nobody used costs nothing)",
    "used_cost": "on_demand_cost (every attempt's RUNNING time x rate)",
    "idle_cost": "waste_cost (on-demand work lost to preemption + plan hours idle or cut; idle limits cost nothing)",
}
RETIRED_SHARE = {"cost": "bill (what the share pays: its jobs' on-demand spend and its part of the plans' fees)"}


def retired(text: str) -> str | None:
    """The one line refusing a retired cost metric in ``text`` (naming the new one), or ``None``."""
    if (match := re.search(r"share\(\s*[^()\s]+\s*\)\.cost\b", text)) is not None:
        return (f"{match.group(0)} priced capacity and is no more: use {match.group(0)[:-4]}bill "
                f"({RETIRED_SHARE['cost'].partition(' (')[2][:-1]}); docs/costs.md")
    for old, new in RETIRED.items():
        if re.search(rf"(?<![\w.]){old}\b", text):
            return f"{old} priced the environments' capacity and is no more: use {new}; docs/costs.md"
    return None


@dataclass(frozen=True)
class Pricing:
    """How a bill metric reads a ledger: the rates (None: instance-hours), the chargeback view, the period."""

    prices: Prices | None = None
    convention: Convention = Convention.USAGE
    period: Period = field(default_factory=Period)

    @property
    def unit(self) -> str:
        return self.prices.currency if self.prices is not None else "instance-hours (all types alike)"


def report_of(record: RunFigures, topology: Topology, pricing: Pricing) -> CostReport:
    ledger = record.costs
    if not ledger:
        raise ValueError("the run record holds no billable ledger (a sweep dataset written before the bill existed: "
                         "run it again without --resume)")
    return report_from_ledgers(ledger, topology, pricing.prices, pricing.convention)


@dataclass(frozen=True)
class RunCosts:
    """Each run's cost report, as the reports show it: priced with ``--prices``, else in instance-hours.

    ``json(record)`` is the ``costs`` object of a sweep or tune run (the same object ``simulate --format json``
    writes, without lending flows: a sweep keeps no usage log)."""

    topology: Topology
    pricing: Pricing

    @property
    def priced(self) -> bool:
        return self.pricing.prices is not None

    @property
    def unit(self) -> str:
        return self.pricing.prices.currency if self.pricing.prices is not None else INSTANCE_HOURS

    def report(self, record: RunFigures) -> CostReport | None:
        """``None`` for a run without a ledger (not simulated)."""
        return report_of(record, self.topology, self.pricing) if record.costs else None

    def json(self, record: RunFigures) -> JsonObject | None:
        report = self.report(record)
        return report.to_json() if report is not None else None


def cluster_figure(report: CostReport, name: str) -> float:
    """``bill``, ``on_demand_cost``, ``plan_cost`` or ``waste_cost`` of a report (without prices in instance-hours,
    every type alike: on-demand RUNNING hours + the plans' reserved hours; waste: lost work + plan hours idle or
    cut)."""
    bill = report.bill
    return {"bill": bill.total, "on_demand_cost": bill.on_demand, "plan_cost": bill.plans,
            "waste_cost": report.waste.total}[name]


def share_figure(report: CostReport, share: str) -> float:
    """What ``share`` pays (without prices: its on-demand instance-hours and its part of the plans' reserved ones)."""
    return report.share_bill(share)


def cluster_metric(name: str, topology: Topology, pricing: Pricing) -> Callable[[RunFigures], float]:
    def compute(record: RunFigures) -> float:
        return cluster_figure(report_of(record, topology, pricing), name)

    return compute


def share_metric(share: str, topology: Topology, pricing: Pricing) -> Callable[[RunFigures], float]:
    def compute(record: RunFigures) -> float:
        return share_figure(report_of(record, topology, pricing), share)

    return compute


def every_share(topology: Topology, pricing: Pricing) -> Callable[[RunFigures], list[float]]:
    """Each share's bill, for ``max(bill)``, ``sum(bill)`` and the like."""
    def compute(record: RunFigures) -> list[float]:
        report = report_of(record, topology, pricing)
        return [share_figure(report, s.share) for s in report.shares]

    return compute
