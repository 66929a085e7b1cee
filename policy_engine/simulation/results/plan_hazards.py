"""What training plans' hazards cost in a run: reserved hours preemption threw away, and quota held before a window.

Two hazards docs/training_plans.md describes, measured after the run (never on the hot path):

- **Preemption of plan jobs**: an attempt running on a plan's reserved instance that is preempted loses
  the work since its last checkpoint (``checkpoint_interval``), on instances already paid for. Per plan
  and share, split by who took it: in-share preemption (the attempt was placed within its share's limit:
  a higher-priority job of the same share took it) or reclaim (placed borrowing: its lender took it back).
  An attempt a window's end cut (``plan_window_end: preempt``) is a cut, reported with the windows.
- **The night before**: a plan job dispatched before its window sits SCHEDULED holding its share's quota
  (``Hold``); per plan and share, the quota-hours held, each job's ``plan_hold_seconds`` (its SCHEDULED time
  waiting for a window, not wait time), and the jobs of the share that waited RUNNABLE meanwhile (how long,
  while any such hold was on: they waited while the quota was held, whatever else held them too).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from policy_engine.simulation.results.plan_lines import PlanLines, preempted

if TYPE_CHECKING:
    from policy_engine.simulation.plan_windows import Hold, PlanFigures

#: How many of the jobs that waited behind held quota a report names, longest first (the count says the rest).
NAMED_JOBS = 10


@dataclass(frozen=True)
class PreemptionLoss:
    """Reserved instance-seconds one share's plan jobs lost to preemption on one plan, and how often."""

    plan: str
    share: str
    in_share: float
    reclaim: float
    in_share_preemptions: int
    reclaim_preemptions: int
    #: job -> its preemptions on the plan (most first)
    jobs: dict[str, int] = field(default_factory=dict)

    @property
    def lost(self) -> float:
        return self.in_share + self.reclaim


@dataclass(frozen=True)
class HeldQuota:
    """Quota one share's SCHEDULED plan jobs held waiting for an instance of one plan, and who waited meanwhile."""

    plan: str
    share: str
    quota_seconds: float  # instance-seconds of quota held
    hold_seconds: float  # job-seconds SCHEDULED waiting for the plan (``plan_hold_seconds`` summed)
    jobs_held: int
    #: the share's jobs that waited RUNNABLE while it held (the NAMED_JOBS longest): name -> seconds
    waited: dict[str, float] = field(default_factory=dict)
    waited_jobs: int = 0
    waited_seconds: float = 0.0


@dataclass(frozen=True)
class PlanHazards:
    preemption: list[PreemptionLoss]
    held: list[HeldQuota]
    #: job name -> its SCHEDULED seconds waiting for an instance of its plan (every plan job that waited so)
    job_hold: dict[str, float]

    def plan_hold_column(self, lines: PlanLines) -> list[float | None]:
        """Per job record, its ``plan_hold_seconds`` (``None``: the job names no plan)."""
        hold = self.job_hold
        return [None if name is None else hold.get(name, 0.0) for name in lines.plan_jobs]


@dataclass
class _Loss:
    """What preemption cost one share's plan jobs on one plan so far: [in-share, reclaim] each."""

    lost: list[float] = field(default_factory=lambda: [0.0, 0.0])
    count: list[int] = field(default_factory=lambda: [0, 0])
    jobs: dict[str, int] = field(default_factory=dict)


def _union(holds: Iterable[Hold]) -> tuple[list[float], list[float]]:
    """The holds' intervals merged: sorted starts and ends of disjoint intervals."""
    starts: list[float] = []
    ends: list[float] = []
    for start, end in sorted((hold.start, hold.end) for hold in holds if hold.end > hold.start):
        if ends and start <= ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def _covered(start: float, end: float, starts: list[float], ends: list[float]) -> float:
    """Seconds of ``[start, end]`` inside the disjoint intervals."""
    total = 0.0
    at = max(0, bisect_right(starts, start) - 1)
    while at < len(starts) and starts[at] < end:
        total += max(0.0, min(end, ends[at]) - max(start, starts[at]))
        at += 1
    return total


def _cutoffs(plan: PlanFigures) -> set[float]:
    return {window.cutoff for window in plan.windows}


def hazards(plans: Iterable[PlanFigures], lines: PlanLines) -> PlanHazards:
    plans = list(plans)
    cutoffs = {plan.name: _cutoffs(plan) for plan in plans}
    losses: dict[tuple[str, str], _Loss] = {}
    for item in lines.attempts:
        attempt = item.attempt
        if not preempted(attempt) or attempt.end is None or attempt.end in cutoffs.get(item.plan, ()):
            continue
        entry = losses.setdefault((item.plan, item.share), _Loss())
        lost = 0.0
        if attempt.run_start is not None:
            done = attempt.end - attempt.run_start
            interval = item.checkpoint_interval
            kept = (done // interval) * interval if interval else 0.0
            lost = (done - kept) * item.instances
        reclaim = 1 if attempt.borrowed else 0  # reclaim takes borrowed attempts, in-share preemption own ones
        entry.lost[reclaim] += lost
        entry.count[reclaim] += 1
        entry.jobs[item.job] = entry.jobs.get(item.job, 0) + 1
    preemption = [PreemptionLoss(plan, share, loss.lost[0], loss.lost[1], loss.count[0], loss.count[1],
                                 dict(sorted(loss.jobs.items(), key=lambda item: (-item[1], item[0]))))
                  for (plan, share), loss in sorted(losses.items())]
    job_hold: dict[str, float] = {}
    held = []
    for plan in plans:
        by_share: dict[str, list[Hold]] = {}
        for hold in plan.holds:
            by_share.setdefault(hold.share, []).append(hold)
            job_hold[hold.job] = job_hold.get(hold.job, 0.0) + (hold.end - hold.start)
        for share, holds in sorted(by_share.items()):
            starts, ends = _union(holds)
            waited: dict[str, float] = {}
            line = lines.lines.get((share, plan.instance_type))
            for stretch in line.stretches if line is not None and starts else ():
                if stretch.end <= starts[0] or stretch.start >= ends[-1]:
                    continue
                seconds = _covered(stretch.start, stretch.end, starts, ends)
                if seconds > 0:
                    waited[stretch.name] = waited.get(stretch.name, 0.0) + seconds
            longest = sorted(waited.items(), key=lambda item: (-item[1], item[0]))
            held.append(HeldQuota(plan.name, share, sum((h.end - h.start) * h.instances for h in holds),
                                  sum(h.end - h.start for h in holds), len({h.job for h in holds}),
                                  dict(longest[:NAMED_JOBS]), len(waited), sum(waited.values())))
    return PlanHazards(preemption, held, job_hold)
