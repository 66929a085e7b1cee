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
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from policy_engine.simulation.results.plan_lines import Line, PlanLines, Stretch

if TYPE_CHECKING:
    from policy_engine.simulation.plan_windows import PlanFigures, WindowFigures


class IdleCause(Enum):
    """Why a window's reserved instances sat idle (its value is the JSON key)."""

    LAST_30_MINUTES = "last_30_minutes"
    NO_PLAN_JOB_WAITING = "no_plan_job_waiting"
    SHARE_QUOTA = "share_quota"
    BEHIND_OTHER_HEAD = "behind_non_plan_head"
    LARGER_THAN_FREE = "larger_than_free_instances"
    BATCH_CAPACITY = "batch_capacity"


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


_CAUSES = tuple(IdleCause)
_LAST, _NONE_WAITING, _QUOTA, _BEHIND, _LARGER, _BATCH = (_CAUSES.index(cause) for cause in (
    IdleCause.LAST_30_MINUTES, IdleCause.NO_PLAN_JOB_WAITING, IdleCause.SHARE_QUOTA, IdleCause.BEHIND_OTHER_HEAD,
    IdleCause.LARGER_THAN_FREE, IdleCause.BATCH_CAPACITY))
#: the kinds of a sweep's events
_USE, _HOLD, _STAY, _WAIT = range(4)


class _Sweep:
    """The state of one window's sweep, kept so that an instant costs a few operations whatever the shares.

    Per share, the cause its line holds (``line_cause``: its waiting plan jobs' head, its use against its limit) and
    whether its plan jobs wait SCHEDULED for an instance (``holds``); per cause, the shares it holds for. A
    share's part of a cause is kept lazily: ``acc[cause]`` grows by what each member is charged per instant, and a
    share leaving the cause takes ``acc`` less what it was when it joined.
    """

    def __init__(self, plan: str, lines: list[Line]):
        self.plan = plan
        self.in_use = 0
        self.used = {line.share: 0 for line in lines}
        self.limits = {line.share: line.limit for line in lines}
        #: per share, its waiting jobs as a heap of (rank, stretch number); ``live`` says which are still waiting
        self.heaps: dict[str, list[tuple[tuple[int, float, int], int]]] = {line.share: [] for line in lines}
        self.live: dict[int, Stretch] = {}
        self.plan_waiting = {line.share: 0 for line in lines}
        self.holds: dict[str, int] = {}
        self.line_cause: dict[str, int] = {}
        self.members: list[dict[str, float]] = [{} for _ in _CAUSES]  # cause -> share -> ``acc`` when it joined
        self.acc = [0.0] * len(_CAUSES)
        self.by_share: list[dict[str, float]] = [{} for _ in _CAUSES]

    def join(self, cause: int, share: str) -> None:
        self.members[cause][share] = self.acc[cause]

    def leave(self, cause: int, share: str) -> None:
        joined = self.members[cause].pop(share)
        part = self.acc[cause] - joined
        if part:
            shares = self.by_share[cause]
            shares[share] = shares.get(share, 0.0) + part

    def relook(self, share: str) -> None:
        """The cause the share's line holds now (its head, its use), and its membership moved accordingly."""
        cause = -1
        if self.plan_waiting.get(share, 0):
            heap = self.heaps[share]
            while heap[0][1] not in self.live:
                heapq.heappop(heap)
            head = self.live[heap[0][1]]
            if head.plan != self.plan:
                cause = _BEHIND
            elif self.used[share] + head.instances > self.limits[share]:
                cause = _QUOTA
            else:
                cause = _BATCH
        before = self.line_cause.get(share, -1)
        if cause == before:
            return
        if before >= 0:
            self.leave(before, share)
            del self.line_cause[share]
        if cause >= 0:
            self.join(cause, share)
            self.line_cause[share] = cause

    def hold(self, share: str, delta: int) -> None:
        """A plan job of the share starts or stops waiting SCHEDULED for an instance while the window is Active:
        it does not fit the free instances (the gate starts every waiting job that fits, first fit in dispatch
        order), so it holds for ``LARGER_THAN_FREE``."""
        count = self.holds.get(share, 0) + delta
        if count and not self.holds.get(share, 0):
            self.join(_LARGER, share)
        elif not count:
            self.leave(_LARGER, share)
        self.holds[share] = count

    def charge(self, rank: list[int], idle_seconds: float, by_cause: list[float]) -> None:
        """``idle_seconds`` (instances x seconds) to the first cause of ``rank`` that holds, split among its shares."""
        members = self.members
        for cause in rank:
            if members[cause]:
                by_cause[cause] += idle_seconds
                self.acc[cause] += idle_seconds / len(members[cause])
                return
        by_cause[_NONE_WAITING] += idle_seconds  # no job naming the plan waits: no other cause holds

    def close(self) -> None:
        for cause, shares in enumerate(self.members):
            for share in list(shares):
                self.leave(cause, share)


def _overlap(start: float, end: float, lo: float, hi: float) -> float:
    return max(0.0, min(end, hi) - max(start, lo))


def attribute_window(plan: PlanFigures, window: WindowFigures, lines: Iterable[Line],
                     order: IdleOrder = QUOTA_FIRST) -> WindowIdle:
    """Charge each idle instance-second of ``window`` of ``plan`` to one cause (``lines``: the plan's type's)."""
    by_cause = [0.0] * len(_CAUSES)
    lo, hi = window.start, window.cutoff
    by_cause[_LAST] = window.instances * (window.end - hi)
    lines = [line for line in lines if any(s.plan == plan.name for s in line.stretches)]
    sweep = _Sweep(plan.name, lines)
    # "no plan job waiting" holds exactly when no other cause does, "the last 30 minutes" only after the cutoff: the
    # order ranks the others
    rank = [_CAUSES.index(cause) for cause in order.order
            if cause not in (IdleCause.LAST_30_MINUTES, IdleCause.NO_PLAN_JOB_WAITING)]
    # events inside the Active part: (time, order, number, kind, payload); ends before starts at the same instant
    events: list[tuple[float, int, int, int, Any]] = []
    add = events.append
    for use in window.uses:
        if use.end > lo and use.start < hi:
            add((max(use.start, lo), 1, len(events), _USE, use.instances))
            add((min(use.end, hi), 0, len(events), _USE, -use.instances))
    waited: dict[str, tuple[str, float]] = {}
    for hold in plan.holds:
        if hold.end > lo and hold.start < hi and hold.end > hold.start:
            add((max(hold.start, lo), 1, len(events), _HOLD, (hold.share, 1)))
            add((min(hold.end, hi), 0, len(events), _HOLD, (hold.share, -1)))
            _, before = waited.get(hold.job, (hold.share, 0.0))
            waited[hold.job] = (hold.share, before + _overlap(hold.start, hold.end, lo, hi))
    stretch_number = 0
    for line in lines:
        share = line.share
        for stay in line.stays:
            if stay.end > lo and stay.start < hi:
                add((max(stay.start, lo), 1, len(events), _STAY, (share, stay.instances)))
                add((min(stay.end, hi), 0, len(events), _STAY, (share, -stay.instances)))
        for stretch in line.stretches:
            if stretch.end > lo and stretch.start < hi:
                stretch_number += 1
                add((max(stretch.start, lo), 1, len(events), _WAIT, (stretch_number, stretch)))
                add((min(stretch.end, hi), 0, len(events), _WAIT, (stretch_number, None)))
                if stretch.plan == plan.name:
                    _, seconds = waited.get(stretch.name, (stretch.share, 0.0))
                    waited[stretch.name] = (stretch.share, seconds + _overlap(stretch.start, stretch.end, lo, hi))
    events.sort()
    events.append((hi, 0, len(events), -1, None))
    time = lo
    touched: set[str] = set()
    for at, _, _, kind, payload in events:
        if at > time:
            for share in touched:
                sweep.relook(share)
            touched.clear()
            idle = window.instances - sweep.in_use
            if idle > 0:
                sweep.charge(rank, idle * (at - time), by_cause)
            time = at
        if kind == _USE:
            sweep.in_use += payload
        elif kind == _HOLD:
            sweep.hold(*payload)
        elif kind == _STAY:
            share, delta = payload
            sweep.used[share] += delta
            touched.add(share)
        elif kind == _WAIT:
            number, stretch = payload
            if stretch is None:
                gone = sweep.live.pop(number)
                if gone.plan == plan.name:
                    sweep.plan_waiting[gone.share] -= 1
                touched.add(gone.share)
            else:
                sweep.live[number] = stretch
                heapq.heappush(sweep.heaps[stretch.share], (stretch.rank, number))
                if stretch.plan == plan.name:
                    sweep.plan_waiting[stretch.share] += 1
                touched.add(stretch.share)
    sweep.close()
    return WindowIdle(plan.name, window.index, window.paid, window.idle,
                      {cause: by_cause[number] for number, cause in enumerate(_CAUSES)},
                      {_CAUSES[number]: dict(sorted(shares.items())) for number, shares in enumerate(sweep.by_share)
                       if shares},
                      dict(sorted(waited.items(), key=lambda item: (-item[1][1], item[0]))))


def _per_window(plan: PlanFigures, lines: list[Line]) -> list[list[Line]]:
    """Each window's part of the lines: the stays and stretches that overlap its Active part (read once, not once
    per window; a plan's windows do not overlap, BQ604)."""
    spans = sorted((window.start, window.cutoff, number) for number, window in enumerate(plan.windows))
    starts = [start for start, _, _ in spans]
    cutoffs = [cutoff for _, cutoff, _ in spans]
    out = [[Line(line.share, line.instance_type, line.limit) for line in lines] for _ in plan.windows]

    def windows(start: float, end: float) -> Iterable[int]:
        at = bisect_right(cutoffs, start)  # the first window whose Active part ends after ``start``
        while at < len(spans) and starts[at] < end:
            if cutoffs[at] > start:
                yield spans[at][2]
            at += 1

    for position, line in enumerate(lines):
        for stay in line.stays:
            for number in windows(stay.start, stay.end):
                out[number][position].stays.append(stay)
        for stretch in line.stretches:
            for number in windows(stretch.start, stretch.end):
                out[number][position].stretches.append(stretch)
    return out


def attribute(plans: Iterable[PlanFigures], lines: PlanLines, order: IdleOrder | str = DEFAULT_ORDER
              ) -> dict[str, list[WindowIdle]]:
    """Per plan (by name), each window's idle instance-seconds by cause."""
    policy = ORDERS[order] if isinstance(order, str) else order
    out = {}
    for plan in plans:
        parts = _per_window(plan, [line for (_, kind), line in lines.lines.items() if kind == plan.instance_type])
        out[plan.name] = [attribute_window(plan, window, part, policy)
                          for window, part in zip(plan.windows, parts, strict=True)]
    return out
