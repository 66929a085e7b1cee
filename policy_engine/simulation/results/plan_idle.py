"""Why a training plan sat idle: every idle reserved instance-second of a finished run charged to one cause.

Worked out after the run, like the wait attribution (``wait_causes``), from the plan's figures
(``plan_windows.PlanReport``: each stay of a job on a window's instances, each SCHEDULED wait for one) and
the lines plan jobs wait in (``plan_lines``). A window's idle instances at an instant are its instances
less those its plan's jobs hold; what holds then is decided per window by one sweep over time:

- ``LAST_30_MINUTES``: from 30 minutes before the window's end SageMaker starts nothing on it and ends
  what runs (docs/training_plans.md), so those instances are idle whatever waits;
- ``NO_PLAN_JOB_WAITING``: no job naming the plan waits (RUNNABLE in its line, or SCHEDULED for an instance);
- ``SHARE_QUOTA``: a plan job is the head of its share's line and its share runs too much to place it
  (used + its instances > the share's own limit; beyond it only borrowing, which found nothing): its share;
- ``BEHIND_OTHER_HEAD``: plan jobs wait behind a job that does not use the plan, at the head of their line;
- ``LARGER_THAN_FREE``: a plan job SCHEDULED for an instance needs more than the window's free instances;
- ``BATCH_CAPACITY``: a plan job heads its line within its share's limit and waits for the service
  environment's capacity (or a reclaim under way): the rest, so that the causes always add up.

When several hold at once an ``IdleOrder`` (a policy object, ``ORDERS``) picks the one charged; the share
named (quota, head, size) is each share for which the charged cause holds, the instant split evenly among
them. ``sum(by_cause) == idle`` for every window (a property test asserts it).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from policy_engine.simulation.results.plan_lines import Line, PlanLines, Stretch

if TYPE_CHECKING:
    from policy_engine.simulation.plan_windows import Hold, PlanFigures, WindowFigures


class IdleCause(Enum):
    """Why a window's reserved instances sat idle (its value is the JSON key)."""

    LAST_30_MINUTES = "last_30_minutes"
    NO_PLAN_JOB_WAITING = "no_plan_job_waiting"
    SHARE_QUOTA = "share_quota"
    BEHIND_OTHER_HEAD = "behind_non_plan_head"
    LARGER_THAN_FREE = "larger_than_free_instances"
    BATCH_CAPACITY = "batch_capacity"


#: Causes that name the shares whose plan jobs they held.
NAMES_SHARE = frozenset({IdleCause.SHARE_QUOTA, IdleCause.BEHIND_OTHER_HEAD, IdleCause.LARGER_THAN_FREE,
                         IdleCause.BATCH_CAPACITY})


@dataclass(frozen=True)
class IdleOrder:
    """Which cause an idle instance-second is charged to when several hold: the first of ``order`` that holds."""

    name: str
    order: tuple[IdleCause, ...]
    summary: str

    def choose(self, holding: frozenset[IdleCause]) -> IdleCause:
        return next(cause for cause in self.order if cause in holding)


ORDERS: dict[str, IdleOrder] = {}


def register_order(order: IdleOrder) -> IdleOrder:
    """Add an order to ``ORDERS``; it must rank every cause, once (else a second could go uncharged)."""
    if sorted(order.order, key=lambda cause: cause.value) != sorted(IdleCause, key=lambda cause: cause.value):
        raise ValueError(f"idle order {order.name!r} must rank every IdleCause exactly once")
    ORDERS[order.name] = order
    return order


#: The documented default (docs/training_plans.md, "Why a plan was idle"): what no setting can change first,
#: then what a quota change fixes, then the line's order, then the job's size, then Batch's capacity.
QUOTA_FIRST = register_order(IdleOrder("quota-first", (
    IdleCause.LAST_30_MINUTES, IdleCause.NO_PLAN_JOB_WAITING, IdleCause.SHARE_QUOTA, IdleCause.BEHIND_OTHER_HEAD,
    IdleCause.LARGER_THAN_FREE, IdleCause.BATCH_CAPACITY), "the share's quota before the line and the job's size"))
#: The plan's own shape first: a plan job too large for the free instances is charged before any quota.
SIZE_FIRST = register_order(IdleOrder("size-first", (
    IdleCause.LAST_30_MINUTES, IdleCause.NO_PLAN_JOB_WAITING, IdleCause.LARGER_THAN_FREE, IdleCause.SHARE_QUOTA,
    IdleCause.BEHIND_OTHER_HEAD, IdleCause.BATCH_CAPACITY), "the job's size before the share's quota and the line"))
DEFAULT_ORDER = QUOTA_FIRST.name


@dataclass(frozen=True)
class WindowIdle:
    """One window's idle instance-seconds by cause (``sum(by_cause.values()) == idle``), and who waited in it."""

    plan: str
    index: int
    paid: float
    idle: float
    by_cause: dict[IdleCause, float]
    #: per cause that names shares, the instance-seconds charged to each share
    by_share: dict[IdleCause, dict[str, float]] = field(default_factory=dict)
    #: the plan jobs that waited while the window was Active (RUNNABLE or SCHEDULED): name -> (share, seconds)
    waited: dict[str, tuple[str, float]] = field(default_factory=dict)


class _Sweep:
    """The state of one window's sweep: instances in use, plan jobs SCHEDULED for one, each line's waiting jobs."""

    def __init__(self, plan: str, lines: list[Line], limits: dict[str, int]):
        self.plan = plan
        self.in_use = 0
        self.holds: dict[int, Hold] = {}
        self.used = dict.fromkeys(limits, 0)
        self.limits = limits
        #: per share, its waiting jobs as a heap of (rank, stretch number); ``live`` says which are still waiting
        self.heaps: dict[str, list[tuple[tuple[int, float, int], int]]] = {line.share: [] for line in lines}
        self.live: dict[int, Stretch] = {}
        self.plan_waiting = dict.fromkeys(limits, 0)

    def head(self, share: str) -> Stretch:
        heap = self.heaps[share]
        while heap[0][1] not in self.live:
            heapq.heappop(heap)
        return self.live[heap[0][1]]

    def holding(self, idle: int) -> dict[IdleCause, list[str]]:
        """What holds now, and for which shares."""
        out: dict[IdleCause, list[str]] = {}
        for share, count in self.plan_waiting.items():
            if not count:
                continue
            head = self.head(share)
            if head.plan != self.plan:
                cause = IdleCause.BEHIND_OTHER_HEAD
            elif self.used[share] + head.instances > self.limits[share]:
                cause = IdleCause.SHARE_QUOTA
            else:
                cause = IdleCause.BATCH_CAPACITY
            out.setdefault(cause, []).append(share)
        for hold in self.holds.values():
            cause = IdleCause.LARGER_THAN_FREE if hold.instances > idle else IdleCause.BATCH_CAPACITY
            shares = out.setdefault(cause, [])
            if hold.share not in shares:
                shares.append(hold.share)
        return out or {IdleCause.NO_PLAN_JOB_WAITING: []}


def _overlap(start: float, end: float, lo: float, hi: float) -> float:
    return max(0.0, min(end, hi) - max(start, lo))


def attribute_window(plan: PlanFigures, window: WindowFigures, lines: Iterable[Line],
                     order: IdleOrder = QUOTA_FIRST) -> WindowIdle:
    """Charge each idle instance-second of ``window`` of ``plan`` to one cause (``lines``: the plan's type's)."""
    by_cause = dict.fromkeys(IdleCause, 0.0)
    by_share: dict[IdleCause, dict[str, float]] = {}
    lo, hi = window.start, window.cutoff
    by_cause[IdleCause.LAST_30_MINUTES] = window.instances * (window.end - hi)
    lines = [line for line in lines if any(s.plan == plan.name for s in line.stretches)]
    sweep = _Sweep(plan.name, lines, {line.share: line.limit for line in lines})
    # events inside the Active part: (time, order, kind, payload); ends before starts at the same instant
    events: list[tuple[float, int, int, Any]] = []
    for use in window.uses:
        if use.end > lo and use.start < hi:
            events += [(max(use.start, lo), 1, 0, use.instances), (min(use.end, hi), 0, 0, -use.instances)]
    for number, hold in enumerate(plan.holds):
        if hold.end > lo and hold.start < hi and hold.end > hold.start:
            events += [(max(hold.start, lo), 1, 1, (number, hold)), (min(hold.end, hi), 0, 1, (number, None))]
    waited: dict[str, tuple[str, float]] = {}
    stretch_number = 0
    for line in lines:
        for stay in line.stays:
            if stay.end > lo and stay.start < hi:
                events += [(max(stay.start, lo), 1, 2, (line.share, stay.instances)),
                           (min(stay.end, hi), 0, 2, (line.share, -stay.instances))]
        for stretch in line.stretches:
            if stretch.end > lo and stretch.start < hi:
                stretch_number += 1
                events += [(max(stretch.start, lo), 1, 3, (stretch_number, stretch)),
                           (min(stretch.end, hi), 0, 3, (stretch_number, None))]
                if stretch.plan == plan.name:
                    _, seconds = waited.get(stretch.name, (stretch.share, 0.0))
                    waited[stretch.name] = (stretch.share, seconds + _overlap(stretch.start, stretch.end, lo, hi))
    for hold in plan.holds:
        seconds = _overlap(hold.start, hold.end, lo, hi)
        if seconds > 0:
            _, before = waited.get(hold.job, (hold.share, 0.0))
            waited[hold.job] = (hold.share, before + seconds)
    events.sort(key=lambda event: (event[0], event[1]))
    events.append((hi, 0, -1, None))
    time = lo
    for at, _, kind, payload in events:
        if at > time:
            idle = window.instances - sweep.in_use
            if idle > 0:
                holding = sweep.holding(idle)
                cause = order.choose(frozenset(holding))
                charged = idle * (at - time)
                by_cause[cause] += charged
                named = holding[cause]
                for share in named:
                    shares = by_share.setdefault(cause, {})
                    shares[share] = shares.get(share, 0.0) + charged / len(named)
            time = at
        if kind == 0:
            sweep.in_use += payload
        elif kind == 1:
            number, hold = payload
            if hold is None:
                sweep.holds.pop(number, None)
            else:
                sweep.holds[number] = hold
        elif kind == 2:
            share, delta = payload
            sweep.used[share] += delta
        elif kind == 3:
            number, stretch = payload
            if stretch is None:
                gone = sweep.live.pop(number)
                if gone.plan == plan.name:
                    sweep.plan_waiting[gone.share] -= 1
            else:
                sweep.live[number] = stretch
                heapq.heappush(sweep.heaps[stretch.share], (stretch.rank, number))
                if stretch.plan == plan.name:
                    sweep.plan_waiting[stretch.share] += 1
    return WindowIdle(plan.name, window.index, window.paid, window.idle,
                      {cause: seconds for cause, seconds in by_cause.items()},
                      {cause: dict(sorted(shares.items())) for cause, shares in by_share.items()},
                      dict(sorted(waited.items(), key=lambda item: (-item[1][1], item[0]))))


def attribute(plans: Iterable[PlanFigures], lines: PlanLines, order: IdleOrder | str = DEFAULT_ORDER
              ) -> dict[str, list[WindowIdle]]:
    """Per plan (by name), each window's idle instance-seconds by cause."""
    policy = ORDERS[order] if isinstance(order, str) else order
    return {plan.name: [attribute_window(plan, window, [line for (_, kind), line in lines.lines.items()
                                                          if kind == plan.instance_type], policy)
                        for window in plan.windows] for plan in plans}
