"""What a run costs and who pays: the capacity ledger priced, idle capacity, lending flows, chargeback.

Without prices every figure is in instance-hours (each type on its own row; a sum over types is
only ever taken with prices, or stated as instance-hours of mixed types). The conventions
(docs/costs.md):

- ``usage`` (default): a share is charged what its jobs ran on, own capacity and borrowed, and
  credited the capacity it lent (what borrowers used of its idle limit). Borrowing is a transfer from
  borrower to lender, so the shares' bills add up to the cost of own use; the platform carries idle
  capacity and what it paid lenders.
- ``limit``: a share is charged its own limit for the whole run (it reserved it), plus borrowed,
  minus lent. The bills add up to the cost of the shares' limits; capacity in no share's limit is
  the platform's.

Either way ``not_charged`` is the cluster's cost minus the shares' bills, so the books balance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from policy_engine.foundation.model import Topology, share_id
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.capacity_hours import CapacityHours, EnvironmentHours, ShareHours
from policy_engine.simulation.results.lending import ATTRIBUTIONS, DEFAULT_ATTRIBUTION, Flow, lending_flows
from policy_engine.simulation.results.records import SimulationResult

INSTANCE_HOURS = "instance-hours"


class Convention(StrEnum):
    """What a share is charged for (``--chargeback``)."""

    USAGE = "usage"
    LIMIT = "limit"


@dataclass(frozen=True)
class ShareCost:
    """One share on one instance type: its ledger, the lending credited to it and its rate (None: unpriced)."""

    hours: ShareHours
    lent: float  # instance-hours credited: the flows from it when attributed pair by pair, else the engine's
    price: float | None

    @property
    def share(self) -> str:
        return self.hours.share

    @property
    def instance_type(self) -> str:
        return self.hours.instance_type

    @property
    def idle(self) -> float:
        """Own limit nobody used (for a RESERVE share, its idle reservation)."""
        return self.hours.limit - self.hours.own - self.lent

    def charged(self, convention: Convention) -> float:
        base = self.hours.own if convention is Convention.USAGE else self.hours.limit
        return base + self.hours.borrowed

    def net(self, convention: Convention) -> float:
        return self.charged(convention) - self.lent


@dataclass(frozen=True)
class EnvironmentCost:
    """One environment's instances of one type: capacity, use and idle, with idle broken down."""

    hours: EnvironmentHours
    reserved_idle: float  # RESERVE shares' idle limits
    lendable_idle: float  # lenders' idle limits nobody borrowed
    price: float | None

    @property
    def outside_shares(self) -> float:
        """Idle capacity in no share's limit (negative when the limits oversubscribe the environment)."""
        return self.hours.idle - self.reserved_idle - self.lendable_idle


@dataclass(frozen=True)
class CostReport:
    convention: Convention
    attribution: str
    currency: str | None  # None: every amount is instance-hours
    shares: tuple[ShareCost, ...]
    environments: tuple[EnvironmentCost, ...]
    #: Lender -> borrower instance-hours; None when the run kept no usage log (sweeps, ``diff``).
    flows: tuple[Flow, ...] | None
    prices: Prices | None = None

    @property
    def unit(self) -> str:
        return self.currency or INSTANCE_HOURS

    def amount(self, hours: float, price: float | None) -> float:
        """``hours`` in the report's unit: priced when the report has prices."""
        return hours * price if self.currency is not None and price is not None else hours

    def flow_amount(self, flow: Flow) -> float:
        return self.amount(flow.instance_hours, self.prices.of(flow.instance_type) if self.prices else None)

    @property
    def total(self) -> float:
        return sum(self.amount(e.hours.capacity, e.price) for e in self.environments)

    @property
    def used(self) -> float:
        return sum(self.amount(e.hours.used, e.price) for e in self.environments)

    @property
    def idle(self) -> float:
        return sum(self.amount(e.hours.idle, e.price) for e in self.environments)

    @property
    def charged_to_shares(self) -> float:
        return sum(self.amount(s.net(self.convention), s.price) for s in self.shares)

    @property
    def not_charged(self) -> float:
        return self.total - self.charged_to_shares

    def by_type(self) -> dict[str, dict[str, float]]:
        """Per instance type: total, used, idle, charged_to_shares, not_charged (the report's unit)."""
        out: dict[str, dict[str, float]] = {}
        for e in self.environments:
            row = out.setdefault(e.hours.instance_type, dict.fromkeys(("total", "used", "idle", "charged_to_shares",
                                                                       "not_charged"), 0.0))
            row["total"] += self.amount(e.hours.capacity, e.price)
            row["used"] += self.amount(e.hours.used, e.price)
            row["idle"] += self.amount(e.hours.idle, e.price)
        for s in self.shares:
            row = out.setdefault(s.instance_type, dict.fromkeys(("total", "used", "idle", "charged_to_shares",
                                                                 "not_charged"), 0.0))
            row["charged_to_shares"] += self.amount(s.net(self.convention), s.price)
        for row in out.values():
            row["not_charged"] = row["total"] - row["charged_to_shares"]
        return out

    def nets(self) -> dict[tuple[str, str], float]:
        """``(share, instance type)`` -> the share's bill on that type (its net under the report's convention)."""
        return {(s.share, s.instance_type): self.amount(s.net(self.convention), s.price) for s in self.shares}

    def share_net(self, share: str) -> float:
        """One share's bill over all its types (instance-hours of mixed types without prices)."""
        return sum(self.amount(s.net(self.convention), s.price) for s in self.shares if s.share == share)

    def chargeback(self) -> list[tuple[str, str, float, float, float]]:
        """``(share, instance type, charged, credited, net)``: per share over its types with prices (type
        ``all``), per share and type without (instance-hours of different types are not added up)."""
        rows: dict[tuple[str, str], list[float]] = {}
        for s in self.shares:
            key = (s.share, "all" if self.currency is not None else s.instance_type)
            row = rows.setdefault(key, [0.0, 0.0, 0.0])
            row[0] += self.amount(s.charged(self.convention), s.price)
            row[1] += self.amount(s.lent, s.price)
            row[2] += self.amount(s.net(self.convention), s.price)
        return [(share, instance_type, *values) for (share, instance_type), values in rows.items()]  # type: ignore[misc]

    def to_json(self) -> dict[str, Any]:
        """The ``costs`` object of ``simulate --format json`` (docs/costs.md)."""
        c = self.convention

        def money(hours: dict[str, float], price: float | None) -> dict[str, float] | None:
            if self.currency is None or price is None:  # a rate of 0 is a price: its costs are 0, not unknown
                return None
            return {k: round(v * price, 6) + 0.0 for k, v in hours.items()}  # + 0.0: a credit at rate 0 is 0, not -0

        shares = []
        for s in self.shares:
            hours = {"own_use": s.hours.own, "borrowed": s.hours.borrowed, "lent": s.lent, "limit": s.hours.limit,
                     "idle": s.idle, "charged": s.charged(c), "credited": s.lent, "net": s.net(c)}
            shares.append({"share": s.share, "instance_type": s.instance_type, "strategy": s.hours.strategy,
                           "price_per_instance_hour": s.price,
                           "instance_hours": {k: round(v, 6) for k, v in hours.items()},
                           "cost": money(hours, s.price)})
        environments = []
        for e in self.environments:
            hours = {"capacity": e.hours.capacity, "used": e.hours.used, "idle": e.hours.idle,
                     "reserved_idle": e.reserved_idle, "lendable_idle": e.lendable_idle,
                     "outside_shares": e.outside_shares}
            environments.append({"environment": e.hours.environment, "instance_type": e.hours.instance_type,
                                 "price_per_instance_hour": e.price,
                                 "instance_hours": {k: round(v, 6) for k, v in hours.items()},
                                 "cost": money(hours, e.price)})
        flows = None if self.flows is None else [
            {"lender": f.lender, "borrower": f.borrower, "instance_type": f.instance_type,
             "instance_hours": round(f.instance_hours, 6),
             "cost": round(self.flow_amount(f), 6) if self.currency else None} for f in self.flows]
        priced = self.currency is not None

        def overall(value: float) -> float | None:  # instance-hours of different types are not added up
            return round(value, 6) if priced else None

        return {"unit": self.unit, "convention": c.value, "attribution": self.attribution,
                "total": overall(self.total), "used": overall(self.used), "idle": overall(self.idle),
                "charged_to_shares": overall(self.charged_to_shares), "not_charged": overall(self.not_charged),
                "by_instance_type": [{"instance_type": t, **{k: round(v, 6) for k, v in row.items()}}
                                     for t, row in self.by_type().items()],
                "shares": shares, "environments": environments, "flows": flows,
                "chargeback": [{"share": share, "instance_type": instance_type, "charged": round(charged, 6),
                                "credited": round(credited, 6), "net": round(net, 6)}
                               for share, instance_type, charged, credited, net in self.chargeback()]}


def cost_report(hours: CapacityHours, topology: Topology, prices: Prices | None = None,
                convention: Convention = Convention.USAGE, flows: Sequence[Flow] | None = None,
                attribution: str = DEFAULT_ATTRIBUTION) -> CostReport:
    """Price ``hours`` (a run of ``topology``); ``flows`` (``lending.lending_flows``) set what lenders are credited."""
    environment_of = {share_id(queue, share): queue.service_environment for queue, share in _shares(topology)}
    lent: dict[tuple[str, str], float] | None = None
    if flows is not None:
        lent = {}
        for flow in flows:
            key = (flow.lender, flow.instance_type)
            lent[key] = lent.get(key, 0.0) + flow.instance_hours

    def price(instance_type: str) -> float | None:
        return prices.of(instance_type) if prices is not None else None

    shares = tuple(ShareCost(row, row.lent if lent is None else lent.get((row.share, row.instance_type), 0.0),
                             price(row.instance_type)) for row in hours.shares)
    environments = []
    for env in hours.environments:
        mine = [s for s in shares if s.instance_type == env.instance_type
                and environment_of.get(s.share) == env.environment]
        reserved = sum(s.idle for s in mine if s.hours.strategy == "RESERVE")
        lendable = sum(s.idle for s in mine if s.hours.strategy != "RESERVE")
        environments.append(EnvironmentCost(env, reserved, lendable, price(env.instance_type)))
    return CostReport(convention, attribution, prices.currency if prices else None, shares, tuple(environments),
                      tuple(flows) if flows is not None else None, prices)


def run_costs(result: SimulationResult, topology: Topology, prices: Prices | None = None,
              convention: Convention = Convention.USAGE, attribution: str = DEFAULT_ATTRIBUTION) -> CostReport:
    """The cost report of a run; lender -> borrower flows when it kept a usage log (``usage_log=True``)."""
    if result.hours is None:
        raise ValueError("the result has no capacity ledger (built by build_result)")
    flows = None
    if result.usage is not None:
        borrowers = {(s.share, s.instance_type): s.strategy == "LEND_AND_BORROW" for s in result.hours.shares}
        flows = lending_flows(result.usage, result.time, borrowers, ATTRIBUTIONS[attribution])
    return cost_report(result.hours, topology, prices, convention, flows, attribution)


def _shares(topology: Topology) -> Iterable[tuple[Any, Any]]:
    return ((queue, share) for queue in topology.job_queues for share in queue.shares)
