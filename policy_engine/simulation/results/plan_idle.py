"""Why a training plan sat idle: every idle reserved instance-second of a finished run charged to one cause.

Worked out after the run, like the wait attribution (``wait_causes``), from the plan's figures
(``plan_windows.PlanReport``: each stay of a job on a window's instances, each SCHEDULED wait for one) and
the lines plan jobs wait in (``plan_lines``). A window's idle instances at an instant are its instances
less those its plan's jobs hold; what holds then is decided per window, at each instant something changes
(``attribute_window``: over arrays, each share's line looked at only at its own changes):

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
them. ``sum(by_cause) == idle`` for every window (a property test asserts it, and another that the figures
are the definitions above applied piece by piece).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from policy_engine.simulation.results.plan_lines import Line, PlanLines

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
def _overlap(start: float, end: float, lo: float, hi: float) -> float:
    return max(0.0, min(end, hi) - max(start, lo))


class _LineArrays:
    """One line's stays and waiting stretches as arrays, read once for all the windows of a plan."""

    __slots__ = ("limit", "line", "on_plan", "plans", "stay_end", "stay_n", "stay_start", "stretch_end", "stretch_n",
                 "stretch_rank", "stretch_start")

    def __init__(self, line: Line):
        self.line = line
        self.limit = line.limit
        stays = np.array(line.stays, dtype=float).reshape(-1, 3)
        self.stay_start, self.stay_end, self.stay_n = stays[:, 0], stays[:, 1], stays[:, 2]
        stretches = line.stretches
        self.stretch_start = np.array([stretch.start for stretch in stretches], dtype=float)
        self.stretch_end = np.array([stretch.end for stretch in stretches], dtype=float)
        self.stretch_n = np.array([stretch.instances for stretch in stretches], dtype=float)
        # the line's order as one integer per stretch (a job's stretches share its rank; two never wait at once)
        ranks = sorted({stretch.rank for stretch in stretches})
        place = {rank: number for number, rank in enumerate(ranks)}
        self.stretch_rank = [place[stretch.rank] for stretch in stretches]
        self.plans = np.array([stretch.plan or "" for stretch in stretches], dtype=object)
        #: per plan, which stretches are of jobs naming it
        self.on_plan: dict[str, np.ndarray] = {}

    def naming(self, plan: str) -> np.ndarray:
        """Which stretches are of jobs naming ``plan``."""
        found = self.on_plan.get(plan)
        if found is None:
            found = self.on_plan[plan] = self.plans == plan
        return found


def _index(times: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Each of ``at``'s instants as its position in the sorted distinct ``times`` (every one is there)."""
    return np.searchsorted(times, at)


def _level(times: np.ndarray, starts: np.ndarray, ends: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """At each of ``times``, after every change at it: the summed weight of the intervals begun and not ended."""
    size = len(times)
    up = np.bincount(_index(times, starts), weights, minlength=size)
    down = np.bincount(_index(times, ends), weights, minlength=size)
    return np.cumsum(up - down)


def _heads(arrays: _LineArrays, keep: np.ndarray, starts: np.ndarray, ends: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """The line's head (a stretch number of ``keep``, -1 for none) after every change at each distinct instant
    a stretch starts or ends: the waiting stretch first in the line's order."""
    instants = np.unique(np.concatenate((starts, ends)))
    ranks = [arrays.stretch_rank[number] for number in keep.tolist()]
    by_start = np.argsort(starts, kind="stable").tolist()
    by_end = np.argsort(ends, kind="stable").tolist()
    start_list, end_list = starts.tolist(), ends.tolist()
    alive = [False] * len(ranks)
    heap: list[tuple[int, int]] = []
    heads = [-1] * len(instants)
    begun = ended = 0
    count = len(ranks)
    for position, at in enumerate(instants.tolist()):
        while ended < count and end_list[by_end[ended]] == at:  # ends before starts at the same instant
            alive[by_end[ended]] = False
            ended += 1
        while begun < count and start_list[by_start[begun]] == at:
            number = by_start[begun]
            alive[number] = True
            heapq.heappush(heap, (ranks[number], number))
            begun += 1
        while heap and not alive[heap[0][1]]:
            heapq.heappop(heap)
        if heap:
            heads[position] = heap[0][1]
    return instants, np.array(heads, dtype=np.int64)


#: a membership of one share in one cause: (cause, share, first interval, interval after the last)
_Segment = tuple[int, str, int, int]


def _line_segments(arrays: _LineArrays, plan: str, lo: float, hi: float, stays: np.ndarray, keep: np.ndarray,
                   times: np.ndarray) -> list[_Segment]:
    """When the share's line holds which cause for ``plan`` (quota, behind another head, Batch's capacity): looked
    at after every change of its use or its waiting jobs, charged from that instant on (``times``: the window's)."""
    line = arrays.line
    stay_start = np.maximum(arrays.stay_start[stays], lo)
    stay_end = np.minimum(arrays.stay_end[stays], hi)
    starts = np.maximum(arrays.stretch_start[keep], lo)
    ends = np.minimum(arrays.stretch_end[keep], hi)
    on_plan = arrays.naming(plan)[keep]
    instants = np.unique(np.concatenate((stay_start, stay_end, starts, ends)))
    used = _level(instants, stay_start, stay_end, arrays.stay_n[stays])
    waiting = _level(instants, starts[on_plan], ends[on_plan], None)
    head_times, heads = _heads(arrays, keep, starts, ends)
    # the head at each instant: the one after the last change of the line's stretches (none before the first)
    found = np.maximum(heads[np.maximum(np.searchsorted(head_times, instants, side="right") - 1, 0)], 0)
    cause = np.where(~on_plan[found], _BEHIND,
                     np.where(used + arrays.stretch_n[keep][found] > arrays.limit, _QUOTA, _BATCH))
    cause = np.where(waiting > 0, cause, -1)
    changes = np.flatnonzero(np.diff(cause, prepend=-1))
    at = _index(times, instants[changes]).tolist()
    out: list[_Segment] = []
    last = len(times) - 1
    for number, (position, held) in enumerate(zip(at, cause[changes].tolist(), strict=True)):
        if held >= 0:
            out.append((held, line.share, position, at[number + 1] if number + 1 < len(at) else last))
    return out


def _hold_segments(holds: list[tuple[float, int, int, str, int]], times: np.ndarray) -> list[_Segment]:
    """When each share's plan jobs wait SCHEDULED for an instance while the window is Active (``LARGER_THAN_FREE``):
    the gate starts every waiting job that fits, so one that waits is larger than the free instances."""
    out: list[_Segment] = []
    counts: dict[str, int] = {}
    joined: dict[str, int] = {}
    positions = _index(times, np.array([at for at, *_ in holds], dtype=float)).tolist()
    for position, (_, _, _, share, delta) in zip(positions, holds, strict=True):
        before = counts.get(share, 0)
        count = counts[share] = before + delta
        if count and not before:
            joined[share] = position
        elif not count:
            out.append((_LARGER, share, joined.pop(share), position))
    last = len(times) - 1
    out.extend((_LARGER, share, position, last) for share, position in joined.items())
    return out


def attribute_window(plan: PlanFigures, window: WindowFigures, lines: list[_LineArrays],
                     order: IdleOrder = QUOTA_FIRST) -> WindowIdle:
    """Charge each idle instance-second of ``window`` of ``plan`` to one cause (``lines``: the plan's type's).

    The window's Active part is cut at every instant something changes (a stay on its instances, a hold, a stay or
    a stretch of a line where a plan job waits); each piece's idle instance-seconds go to the first cause of the
    order that holds then, split evenly among its shares. Computed over arrays, piece by piece, not instant by
    instant: a share's part is what its cause's running share per member grew by while it was a member."""
    by_cause = [0.0] * len(_CAUSES)
    lo, hi = window.start, window.cutoff
    by_cause[_LAST] = window.instances * (window.end - hi)
    rank = [_CAUSES.index(cause) for cause in order.order
            if cause not in (IdleCause.LAST_30_MINUTES, IdleCause.NO_PLAN_JOB_WAITING)]
    waited: dict[str, tuple[str, float]] = {}
    holds: list[tuple[float, int, int, str, int]] = []  # (instant, ends first, number, share, +1 / -1)
    for hold in plan.holds:
        if hold.end > lo and hold.start < hi and hold.end > hold.start:
            holds.append((max(hold.start, lo), 1, len(holds), hold.share, 1))
            holds.append((min(hold.end, hi), 0, len(holds), hold.share, -1))
            _, before = waited.get(hold.job, (hold.share, 0.0))
            waited[hold.job] = (hold.share, before + _overlap(hold.start, hold.end, lo, hi))
    holds.sort()
    # the lines where a job naming the plan waits during the Active part: only they can hold a cause
    parts: list[tuple[_LineArrays, np.ndarray, np.ndarray]] = []
    for arrays in lines:
        inside = (arrays.stretch_end > lo) & (arrays.stretch_start < hi)
        naming = np.flatnonzero(inside & arrays.naming(plan.name))
        if not len(naming):
            continue
        parts.append((arrays, np.flatnonzero((arrays.stay_end > lo) & (arrays.stay_start < hi)),
                      np.flatnonzero(inside)))
        stretches = arrays.line.stretches
        for number in naming.tolist():
            stretch = stretches[number]
            _, seconds = waited.get(stretch.name, (stretch.share, 0.0))
            waited[stretch.name] = (stretch.share, seconds + _overlap(stretch.start, stretch.end, lo, hi))
    by_share: list[dict[str, float]] = [{} for _ in _CAUSES]
    if lo < hi:
        _sweep(window, plan.name, lo, hi, rank, holds, parts, by_cause, by_share)
    return WindowIdle(plan.name, window.index, window.paid, window.idle,
                      {cause: by_cause[number] for number, cause in enumerate(_CAUSES)},
                      {_CAUSES[number]: dict(sorted(shares.items())) for number, shares in enumerate(by_share)
                       if shares},
                      dict(sorted(waited.items(), key=lambda item: (-item[1][1], item[0]))))


def _sweep(window: WindowFigures, plan: str, lo: float, hi: float, rank: list[int],
           holds: list[tuple[float, int, int, str, int]], parts: list[tuple[_LineArrays, np.ndarray, np.ndarray]],
           by_cause: list[float], by_share: list[dict[str, float]]) -> None:
    """The charges of the Active part ``[lo, hi)`` (``attribute_window``), added to ``by_cause`` and ``by_share``."""
    uses = [use for use in window.uses if use.end > lo and use.start < hi]
    use_start = np.maximum(np.array([use.start for use in uses], dtype=float), lo)
    use_end = np.minimum(np.array([use.end for use in uses], dtype=float), hi)
    pieces = [np.array([lo, hi]), use_start, use_end, np.array([at for at, *_ in holds], dtype=float)]
    for arrays, stays, keep in parts:
        pieces += (np.maximum(arrays.stay_start[stays], lo), np.minimum(arrays.stay_end[stays], hi),
                   np.maximum(arrays.stretch_start[keep], lo), np.minimum(arrays.stretch_end[keep], hi))
    times = np.unique(np.concatenate(pieces))
    # piece k is [times[k], times[k + 1]), with what holds after every change at times[k]
    in_use = _level(times, use_start, use_end, np.array([use.instances for use in uses], dtype=float))[:-1]
    idle = window.instances - in_use.astype(np.int64)
    amount = idle * np.diff(times)
    segments = _hold_segments(holds, times)
    for arrays, stays, keep in parts:
        segments += _line_segments(arrays, plan, lo, hi, stays, keep, times)
    members = {cause: np.zeros(len(times), dtype=np.int64) for cause in rank}
    for cause, _, first, after in segments:
        members[cause][first] += 1
        members[cause][after] -= 1
    counts = {cause: np.cumsum(changes)[:-1] for cause, changes in members.items()}
    charged = np.full(len(amount), _NONE_WAITING)
    for cause in reversed(rank):
        charged[counts[cause] > 0] = cause
    charged[idle <= 0] = -1  # nothing idle: nothing charged
    # each cause's running share per member (``acc``), added piece by piece in time order as the sweep would
    acc: dict[int, list[float]] = {}
    for cause in (*rank, _NONE_WAITING):
        mask = charged == cause
        if not mask.any():
            acc[cause] = [0.0] * len(times)
            continue
        by_cause[cause] += float(np.cumsum(np.where(mask, amount, 0.0))[-1])
        if cause != _NONE_WAITING:
            per_member = np.where(mask, amount / np.maximum(counts[cause], 1), 0.0)
            acc[cause] = [0.0, *np.cumsum(per_member).tolist()]
    for cause, share, first, after in segments:
        part = acc[cause][after] - acc[cause][first]
        if part:
            shares = by_share[cause]
            shares[share] = shares.get(share, 0.0) + part


def attribute(plans: Iterable[PlanFigures], lines: PlanLines, order: IdleOrder | str = DEFAULT_ORDER
              ) -> dict[str, list[WindowIdle]]:
    """Per plan (by name), each window's idle instance-seconds by cause."""
    policy = ORDERS[order] if isinstance(order, str) else order
    out = {}
    arrays: dict[str, list[_LineArrays]] = {}
    for plan in plans:
        if plan.instance_type not in arrays:
            arrays[plan.instance_type] = [_LineArrays(line) for (_, kind), line in lines.lines.items()
                                          if kind == plan.instance_type]
        out[plan.name] = [attribute_window(plan, window, arrays[plan.instance_type], policy)
                          for window in plan.windows]
    return out
