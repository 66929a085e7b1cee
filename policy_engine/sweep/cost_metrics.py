"""``cost``, ``idle_cost``, ``share(X).cost`` and ``AGG(cost)``: sweep and tune metrics priced from a run's ledger.

A run record carries its capacity ledger in instance-hours (``record["costs"]``, price-free, so a
dataset stays valid when prices change); the expression prices it with ``--prices`` and the
``--chargeback`` convention when it is read. ``cost`` is what the environments' capacity cost over
the run (until its last job ends, so a candidate that drains its backlog later costs more with the same
capacity); ``used_cost`` what jobs ran on (the spend of on-demand capacity, whatever the run's length);
``idle_cost`` the part of ``cost`` nobody used; ``share(X).cost`` the share's chargeback (its net
bill over its instance types). Without prices each is in instance-hours, every instance type
counted alike (docs/sweep.md says so). Lending is attributed as the engine does (proportional).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from policy_engine.foundation.model import Topology
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.capacity_hours import CapacityHours
from policy_engine.simulation.results.costs import INSTANCE_HOURS, Convention, CostReport, cost_report

#: Cluster-wide cost metrics and the per-share one.
CLUSTER_COST_METRICS = ("cost", "used_cost", "idle_cost")
SHARE_COST_METRIC = "cost"


@dataclass(frozen=True)
class Pricing:
    """How a cost metric reads a ledger: the rates (None: instance-hours) and the chargeback convention."""

    prices: Prices | None = None
    convention: Convention = Convention.USAGE

    @property
    def unit(self) -> str:
        return self.prices.currency if self.prices is not None else "instance-hours (all types alike)"


def uses_cost(expressions: Iterable[str]) -> bool:
    """Whether any objective or constraint reads a cost metric (then the command says the unit)."""
    return any(re.search(r"\b(idle_|used_)?cost\b", text) for text in expressions)


def uses_total_cost(expressions: Iterable[str]) -> bool:
    """Whether one reads the cluster's ``cost`` itself (not a share's, nor ``used_cost``/``idle_cost``)."""
    return any(re.search(r"(?<![\w.(])cost\b", text) for text in expressions)


def report_of(record: dict, topology: Topology, pricing: Pricing) -> CostReport:
    ledger = record.get("costs")
    if not ledger:
        raise ValueError("the run record holds no capacity ledger (a sweep dataset written before costs existed: "
                         "run it again without --resume)")
    return cost_report(CapacityHours.from_json(ledger), topology, pricing.prices, pricing.convention)


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

    def report(self, record: dict) -> CostReport | None:
        """``None`` for a run without a ledger (not simulated)."""
        return report_of(record, self.topology, self.pricing) if record.get("costs") else None

    def json(self, record: dict) -> dict | None:
        report = self.report(record)
        return report.to_json() if report is not None else None


def cluster_metric(name: str, topology: Topology, pricing: Pricing) -> Callable[[dict], float]:
    def compute(record: dict) -> float:
        report = report_of(record, topology, pricing)
        return {"cost": report.total, "used_cost": report.used, "idle_cost": report.idle}[name]

    return compute


def share_metric(share: str, topology: Topology, pricing: Pricing) -> Callable[[dict], float]:
    def compute(record: dict) -> float:
        return report_of(record, topology, pricing).share_net(share)

    return compute


def every_share(topology: Topology, pricing: Pricing) -> Callable[[dict], list[float]]:
    """Each share's chargeback, for ``max(cost)``, ``sum(cost)`` and the like."""
    def compute(record: dict) -> list[float]:
        report = report_of(record, topology, pricing)
        return [report.share_net(name) for name in dict.fromkeys(s.share for s in report.shares)]

    return compute
