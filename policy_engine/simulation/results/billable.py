"""What AWS bills, in instance-hours: each share's on-demand job time, the work preemption discarded, and what
each training plan reserved and its jobs used, over a billing period. What ``outputs.costs`` prices into the bill.

SageMaker bills a training job per instance from its training start to its end (a stopped, failed or preempted
job for the time it ran): the simulator's reading is an attempt's RUNNING time (after ``startup_delay``), never
RUNNABLE, SCHEDULED or STARTING (docs/costs.md). A plan job is not billed per hour: its plan's fee was paid
upfront; what it used of the plan's reserved instances is kept per share, to allocate the fee.

Read after the run from the jobs' attempts and the plans' use (nothing on the simulator's hot path).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from policy_engine.foundation.units import duration_text
from policy_engine.simulation.core.jobs import PREEMPTED
from policy_engine.simulation.results.capacity_hours import CapacityHours
from policy_engine.simulation.results.records import AttemptRow, SimulationResult, attempt_rows

HOUR = 3600.0


@dataclass(frozen=True)
class Period:
    """The billing period in seconds from the scenario's time 0; ``None`` bounds: the whole workload (every job
    wherever it ran, from time 0, and each plan's whole upfront fee)."""

    start: float | None = None
    end: float | None = None

    @property
    def whole(self) -> bool:
        return self.start is None and self.end is None

    def bounds(self, run_end: float) -> tuple[float, float]:
        return (0.0 if self.start is None else self.start, run_end if self.end is None else self.end)

    def to_json(self) -> dict[str, float | None]:
        return {"start": self.start, "end": self.end}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Period:
        return cls(**data) if data else cls()


WHOLE = Period()


def overlap(start: float, end: float, lo: float, hi: float) -> float:
    """Seconds of ``[start, end]`` inside ``[lo, hi]``."""
    return max(0.0, min(end, hi) - max(start, lo))


class ShareBillable(NamedTuple):
    """One share on one instance type over the period, in instance-hours."""

    share: str
    instance_type: str
    on_demand: float  # RUNNING time of its on-demand attempts: what SageMaker bills
    #: of which attempts placed borrowing (some of their instances above the share's own limit; the whole attempt is
    #: counted: the engine keeps one flag per placement). Borrowing moves no money: it is still the share's own bill.
    borrowing: float
    preempted: float  # on-demand work lost to preemption (since the attempt's last checkpoint): billed and wasted
    limit: float  # its limit over the period (the budget view's maximum; the run's mean limit when it changed)


@dataclass(frozen=True)
class PlanBillable:
    """One training plan over the period, in instance-hours: reserved (paid), used by each share, and the work a
    cut at a window's end lost (``reserved_total``: over the plan's life, what its fee pays for)."""

    plan: str
    instance_type: str
    reserved: float
    reserved_total: float
    used: dict[str, float] = field(default_factory=dict)
    cut: dict[str, float] = field(default_factory=dict)

    @property
    def used_total(self) -> float:
        return sum(self.used.values())

    @property
    def idle(self) -> float:
        return max(0.0, self.reserved - self.used_total)

    def to_json(self) -> dict[str, Any]:
        return {"plan": self.plan, "instance_type": self.instance_type, "reserved": self.reserved,
                "reserved_total": self.reserved_total, "used": self.used, "cut": self.cut}


@dataclass(frozen=True)
class Billable:
    """The run's billable instance-hours over ``period`` (``run_end``: the run's clock, where an open period ends)."""

    period: Period
    run_end: float
    shares: tuple[ShareBillable, ...]
    plans: tuple[PlanBillable, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"period": self.period.to_json(), "run_end": self.run_end,
                "shares": [row._asdict() for row in self.shares], "plans": [plan.to_json() for plan in self.plans]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Billable:
        return cls(Period.from_json(data["period"]), float(data["run_end"]),
                   tuple(ShareBillable(**row) for row in data["shares"]),
                   tuple(PlanBillable(**plan) for plan in data["plans"]))


def billable(result: SimulationResult, period: Period = WHOLE) -> Billable:
    """The billable ledger of ``result`` over ``period``; its capacity ledger (``result.hours``) gives the rows'
    order and the limits."""
    if result.hours is None:
        raise ValueError("the result has no capacity ledger (built by build_result)")
    lo, hi = period.bounds(result.time)
    sums = _on_demand(attempt_rows(result.jobs), result.time, lo, hi)
    shares = tuple(ShareBillable(row.share, row.instance_type, *sums.get((row.share, row.instance_type), (0.0,) * 3),
                                 _limit(row.limit, result.hours, lo, hi))
                   for row in result.hours.shares)
    plans: list[PlanBillable] = []
    for plan in result.plans.plans if result.plans is not None else ():
        reserved = sum(w.instances * overlap(w.start, w.end, lo, hi) for w in plan.windows) / HOUR
        used: dict[str, float] = {}
        cut: dict[str, float] = {}
        for window in plan.windows:
            if period.whole:
                for share, use in window.shares.items():
                    used[share] = used.get(share, 0.0) + use.used / HOUR
                    if use.cut_seconds:
                        cut[share] = cut.get(share, 0.0) + use.cut_seconds / HOUR
                continue
            for share, start, end, instances in window.uses:
                if (seconds := overlap(start, end, lo, hi)) > 0:
                    used[share] = used.get(share, 0.0) + seconds * instances / HOUR
            for share, start, end, instances in window.cuts:
                if (seconds := overlap(start, end, lo, hi)) > 0:
                    cut[share] = cut.get(share, 0.0) + seconds * instances / HOUR
        plans.append(PlanBillable(plan.name, plan.instance_type, plan.paid / HOUR if period.whole else reserved,
                                  plan.paid / HOUR, dict(sorted(used.items())), dict(sorted(cut.items()))))
    return Billable(period, result.time, shares, tuple(plans))


def _on_demand(rows: Iterable[AttemptRow],
               now: float, lo: float, hi: float) -> dict[tuple[str, str], tuple[float, float, float]]:
    """``(share, type) -> (on-demand, of which borrowed, lost to preemption)`` instance-hours in ``[lo, hi]``."""
    sums: dict[tuple[str, str], list[float]] = {}
    for share, instance_type, instances, plan, interval, attempts in rows:
        if plan is not None:
            continue  # on a training plan: paid by its upfront fee
        row = None
        for _, ended_at, outcome, borrowed, run_start in attempts:  # by position: records or plain tuples
            if run_start is None:
                continue  # ended SCHEDULED or STARTING: never billed
            end = now if ended_at is None else ended_at
            seconds = max(0.0, min(end, hi) - max(run_start, lo)) * instances  # overlap(), inline: once per attempt
            if row is None:
                row = sums.setdefault((share, instance_type), [0.0, 0.0, 0.0])
            row[0] += seconds
            if borrowed:
                row[1] += seconds
            if outcome == PREEMPTED:
                done = end - run_start
                kept = (done // interval) * interval if interval else 0.0
                row[2] += overlap(end - (done - kept), end, lo, hi) * instances
    return {key: (a / HOUR, b / HOUR, c / HOUR) for key, (a, b, c) in sums.items()}


def _limit(limit_hours: float, hours: CapacityHours, lo: float, hi: float) -> float:
    """The share's limit over ``[lo, hi]``: its mean over the run times the period's length (exact unless the
    limit changed mid-run)."""
    if hours.span <= 0:
        return 0.0
    return limit_hours / hours.span * max(0.0, hi - lo)


def rows_by_share(ledger: Billable) -> Iterator[tuple[str, list[ShareBillable]]]:
    """The ledger's rows grouped per share, in the ledger's order."""
    grouped: dict[str, list[ShareBillable]] = {}
    for row in ledger.shares:
        grouped.setdefault(row.share, []).append(row)
    return iter(grouped.items())


def period_text(period: Period) -> str:
    """The billing period, as every format's first line says it."""
    if period.whole:
        return "the whole workload (every job wherever it ran, from time 0; each plan's whole upfront fee)"
    return (f"{duration_text(period.start or 0.0)} to {duration_text(period.end or 0.0)} from time 0 (--period; "
            "attempts cut at its edges, plan fees prorated by reserved instance-hours inside it)")
