"""Training plan windows on a profile's clock, the night before each, and which timing a plan job's submission had.

A profile's clock counts seconds from a Monday 00:00 in its time zone (what ``generate`` writes, clock changes
ignored); a plan's windows are put on it once (``plan_clock``), so ``sampling`` draws plan jobs and ``fitting``
reads a history's plan jobs by the same geometry: a job's window is the first whose cutoff (its end minus 30
minutes, ``limits.PLAN_TERMINATION_LEAD_SECONDS``) is still ahead; inside ``[start, cutoff)`` it is
``inside_window``, in the night before the window's start day (``Night``) ``night_before``, earlier
``before_window`` with its lead ``start - submission``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np

from policy_engine.foundation import limits
from policy_engine.foundation.model import Topology, TrainingPlan
from policy_engine.simulation.profiles.spec import Night, PlanTiming

SECONDS_PER_DAY = 86400.0
SECONDS_PER_HOUR = 3600.0
#: What ``night_before`` means when a profile does not say: 18:00 the day before to 06:00 on the window's day.
DEFAULT_NIGHT = Night()


@dataclass(frozen=True)
class ClockWindow:
    """One reserved capacity on the profile's clock: a job may start on it from ``start`` until ``cutoff``."""

    index: int
    instances: int
    start: float
    cutoff: float

    def night(self, night: Night) -> tuple[float, float]:
        """The night before the window's start day, ending at the window's start at the latest."""
        day = math.floor(self.start / SECONDS_PER_DAY) * SECONDS_PER_DAY
        low = day - SECONDS_PER_DAY + night.from_hour * SECONDS_PER_HOUR
        return low, min(self.start, day + night.to_hour * SECONDS_PER_HOUR)


@dataclass(frozen=True)
class PlanClock:
    """A training plan's windows on the profile's clock, in start order."""

    name: str
    instance_type: str
    windows: tuple[ClockWindow, ...]


def dated(topology: Topology) -> list[datetime]:
    """The window starts of the topology's plans written as dates (ISO 8601), earliest first."""
    return sorted(w.start for plan in topology.training_plans for w in plan.reserved_capacities
                  if isinstance(w.start, datetime))


def default_origin(topology: Topology, zone: str) -> datetime | None:
    """The instant a generated second 0 stands for when plan windows are dates and nobody said: the Monday 00:00
    (in ``zone``) on or before the earliest window's start. ``None`` when no window is a date."""
    starts = dated(topology)
    if not starts:
        return None
    local = starts[0].astimezone(ZoneInfo(zone))
    monday = (local - timedelta(days=local.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    return monday.astimezone(UTC)


def plan_clock(plan: TrainingPlan, origin: datetime | None) -> PlanClock:
    """The plan's windows as seconds from ``origin`` (a window in seconds already is); windows that accept no job
    (shorter than 30 minutes) are left out."""
    windows = []
    for index, window in enumerate(plan.reserved_capacities):
        start, end = window.start_seconds(origin), window.end_seconds(origin)
        cutoff = max(start, end - limits.PLAN_TERMINATION_LEAD_SECONDS)
        if cutoff > start:
            windows.append(ClockWindow(index, window.instances, start, cutoff))
    return PlanClock(plan.name, plan.instance_type, tuple(sorted(windows, key=lambda w: w.start)))


def plan_clocks(topology: Topology, origin: datetime | None) -> dict[str, PlanClock]:
    return {plan.name: plan_clock(plan, origin) for plan in topology.training_plans}


# --- reading a history ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timed:
    """The timing of each plan job of one plan: ``None`` where no window was left (after its last cutoff)."""

    timings: list[PlanTiming | None]
    #: lead (seconds before the window's start) of each ``before_window`` job, in order
    leads: np.ndarray


def classify(times: np.ndarray, plan: PlanClock, night: Night) -> Timed:
    """The timing of plan jobs submitted at ``times`` (seconds on the profile's clock) relative to ``plan``."""
    position = np.full(times.shape[0], -1, dtype=np.int64)
    for index in range(len(plan.windows) - 1, -1, -1):  # the first window whose cutoff is ahead wins
        position[times < plan.windows[index].cutoff] = index
    starts = np.asarray([w.start for w in plan.windows] + [np.inf])[position]
    lows = np.asarray([w.night(night)[0] for w in plan.windows] + [np.inf])[position]
    highs = np.asarray([w.night(night)[1] for w in plan.windows] + [np.inf])[position]
    inside = (position >= 0) & (times >= starts)
    in_night = (position >= 0) & ~inside & (times >= lows) & (times < highs)
    before = (position >= 0) & ~inside & ~in_night
    kinds = np.full(times.shape[0], None, dtype=object)
    kinds[inside], kinds[in_night], kinds[before] = (PlanTiming.INSIDE_WINDOW, PlanTiming.NIGHT_BEFORE,
                                                     PlanTiming.BEFORE_WINDOW)
    return Timed(kinds.tolist(), (starts - times)[before])
