"""The lines plan jobs wait in, read once after the run: every RUNNABLE stretch and every attempt of their jobs.

What the idle attribution of training plans (``plan_idle``) and the plan hazards (``plan_hazards``) read: for
each line (share and instance type) of a type some plan reserves, its jobs' waiting stretches (as
``results.wait_causes`` reads them: from submission, or an attempt's end, to the next placement), in line
order, and its jobs' stays on capacity (the share's use over time). Read from the job records' timelines,
never on the simulator's hot path; jobs of other instance types are skipped at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from policy_engine.foundation.model import share_id
from policy_engine.simulation.core.jobs import ACTIVE, PREEMPTED, AttemptRecord, Status
from policy_engine.simulation.results.records import RecordColumns, Timeline, job_timelines

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.records import JobRecord, SimulationResult


class Stretch(NamedTuple):
    """A job RUNNABLE from ``start`` to ``end``; ``rank`` orders its line (priority, then submission, then order)."""

    job: int
    name: str
    share: str
    rank: tuple[int, float, int]
    start: float
    end: float
    instances: int
    #: the plan the job names (``None``: none)
    plan: str | None


class Stay(NamedTuple):
    """An attempt on capacity, ``start`` to ``end`` (the report time when still on), of a job of the line."""

    start: float
    end: float
    instances: int


class PlanAttempt(NamedTuple):
    """An ended attempt of a plan job (what the hazards read: a preempted one lost work on reserved instances)."""

    job: str
    share: str
    plan: str
    instances: int
    checkpoint_interval: float | None
    attempt: AttemptRecord


@dataclass
class Line:
    """One share's line of one instance type: who waited in it, when, and what the share ran."""

    share: str
    instance_type: str
    limit: int
    stretches: list[Stretch] = field(default_factory=list)
    stays: list[Stay] = field(default_factory=list)


@dataclass(frozen=True)
class PlanLines:
    """The lines of the types plans reserve, and every ended attempt of a plan job."""

    lines: dict[tuple[str, str], Line]
    attempts: list[PlanAttempt]
    #: per job record (``result.jobs`` order): its name when it names a plan, else ``None``
    plan_jobs: list[str | None]


def _with_plans(jobs: Sequence[JobRecord]) -> Iterator[tuple[Timeline, str | None]]:
    """Each job's timeline and the plan it names (a record's timeline is rebuilt without its plan: read it here)."""
    if isinstance(jobs, RecordColumns):
        return ((timeline, timeline[0].training_plan) for timeline in job_timelines(jobs))
    return zip(job_timelines(jobs), (record.training_plan for record in jobs), strict=True)


def read_lines(result: SimulationResult, topology: Topology) -> PlanLines:
    """Every stretch and stay of the lines of the plans' instance types (``line`` per share and type)."""
    types = {plan.instance_type for plan in topology.training_plans}
    lines: dict[tuple[str, str], Line] = {}
    for queue in topology.job_queues:
        for share in queue.shares:
            for instance_type in types:
                if instance_type in share.capacity:
                    node = share_id(queue, share)
                    lines[(node, instance_type)] = Line(node, instance_type, share.capacity[instance_type])
    now = result.time
    attempts: list[PlanAttempt] = []
    plan_jobs: list[str | None] = []
    for index, ((spec, priority, status, finished_at, ended, attempt_start, _), plan) in enumerate(
            _with_plans(result.jobs)):
        plan_jobs.append(None if plan is None else spec.name)
        line = lines.get((spec.share, spec.instance_type)) if spec.instance_type in types else None
        if line is None:
            continue
        rank = (-priority, spec.submit_at, index)
        since = spec.submit_at
        n = spec.instances
        waits: list[tuple[float, float]] = []
        for attempt in ended:
            waits.append((since, attempt.start))
            end = now if attempt.end is None else attempt.end  # an ended attempt has its end
            line.stays.append(Stay(attempt.start, end, n))
            if plan is not None:
                attempts.append(PlanAttempt(spec.name, spec.share, plan, n, spec.checkpoint_interval, attempt))
            since = end
        if status is Status.SUCCEEDED or status in ACTIVE:
            waits.append((since, attempt_start))
            line.stays.append(Stay(attempt_start, now if finished_at is None else finished_at, n))
        elif status in (Status.RUNNABLE, Status.FAILED):
            waits.append((since, now if finished_at is None else finished_at))
        line.stretches.extend(Stretch(index, spec.name, spec.share, rank, start, end, n, plan)
                              for start, end in waits if end > start)
    return PlanLines(lines, attempts, plan_jobs)


def preempted(attempt: AttemptRecord) -> bool:
    return attempt.outcome == PREEMPTED
