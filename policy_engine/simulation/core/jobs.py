"""A job as the simulator sees it: what the workload asked for, and where it is now."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Final, NamedTuple

from policy_engine.simulation.causes import Reason, describe

if TYPE_CHECKING:
    from policy_engine.simulation.core.capacity import ShareCapacity


class Status(StrEnum):
    """AWS Batch service-job states the quota scheduler moves a job through."""

    SUBMITTED = "SUBMITTED"
    RUNNABLE = "RUNNABLE"
    SCHEDULED = "SCHEDULED"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


#: States that hold capacity (and can be preempted).
ACTIVE: Final = frozenset({Status.SCHEDULED, Status.STARTING, Status.RUNNING})
#: States a job never leaves.
FINAL: Final = frozenset({Status.SUCCEEDED, Status.FAILED})

#: How an attempt (one stay on capacity) ended.
SUCCEEDED: Final = "succeeded"
FAILED: Final = "failed"
PREEMPTED: Final = "preempted"

MISCONFIG_ENVIRONMENT = "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"
MISCONFIG_QUOTA = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"
#: The status reason the simulator gives, for ``jobStateTimeLimitActions``, to a head that is not misconfigured
#: and still waits after the scheduling pass (docs/simulator.md says why).
CAPACITY_INSUFFICIENT = "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"


class JobSpec(NamedTuple):
    """One job of a workload, already validated against the topology.

    ``share`` is the canonical ``QUEUE/SHARE``. ``preemption_retries`` is AWS's
    ``preemptionRetriesBeforeTermination`` (``None`` = unlimited). ``failures``
    attempts fail after ``fail_after`` work seconds each (default: at the end of
    the work); ``attempts`` is ``retryStrategy.attempts``. A tuple: a million are cheap.
    """

    name: str
    share: str
    instance_type: str
    instances: int
    priority: int
    submit_at: float
    duration: float
    preemption_retries: int | None = None
    checkpoint_interval: float | None = None
    attempts: int = 1
    failures: int = 0
    fail_after: float | None = None
    #: The SageMaker training plan it runs on (``ResourceConfig.TrainingPlanArn``), by the topology's plan name.
    training_plan: str | None = None
    #: ``StoppingCondition.MaxRuntimeSeconds``: a plan job pending longer than this fails (``None``: not given).
    max_runtime: int | None = None


class AttemptRecord(NamedTuple):
    """One stay on capacity: ``end`` is ``None`` while still running at the report time."""

    start: float
    end: float | None
    outcome: str  # succeeded | failed | preempted | running (still on capacity at the report time)
    borrowed: bool  # placed above the share's own limit
    #: when it became RUNNING (``None``: it never did, it ended SCHEDULED or STARTING): SageMaker bills from here
    run_start: float | None = None


#: The fields without a default: every job has them, generated workloads write exactly these.
CORE_FIELDS: tuple[str, ...] = tuple(f for f in JobSpec._fields if f not in JobSpec._field_defaults)


class LiveState(NamedTuple):
    """A job already on capacity when the simulation starts (a ``batch-quota snapshot`` of a live queue).

    ``started_at`` <= 0 is when it was placed (now is 0); ``remaining`` is the work left, in seconds.
    """

    status: Status
    started_at: float
    remaining: float


#: Workload columns of a live job; ``status`` is RUNNING, SCHEDULED or STARTING (empty: the job waits).
LIVE_FIELDS: tuple[str, ...] = LiveState._fields


class Observed(NamedTuple):
    """What really happened to a job (``batch-quota history``): reported beside the simulation, never used by it."""

    start: float | None
    end: float | None
    preemptions: int | None
    status: str | None


#: Workload columns of what was observed, in ``Observed`` order.
OBSERVED_FIELDS: tuple[str, ...] = tuple(f"observed_{name}" for name in Observed._fields)
#: Workload column of a job's submission in absolute time (epoch milliseconds; ``batch-quota history`` writes
#: it), so that daily and weekly cycles can be read from a workload whose ``submit_at`` starts at 0.
EPOCH_FIELD = "submitted_epoch_ms"
#: Workload column saying whether ``duration`` is the job's real run time (``true``) or only a lower bound
#: (``false``: ``batch-quota history`` of a job whose last attempt was preempted or terminated).
DURATION_KNOWN_FIELD = "duration_known"


def attempts(ended: tuple[AttemptRecord, ...], status: Status, attempt_start: float, finished_at: float | None,
             borrowed: bool, run_start: float | None = None) -> tuple[AttemptRecord, ...]:
    """A job's stays on capacity: the ``ended`` ones (``Job.segments``), then its last one if it succeeded or runs
    (``run_start``: when that one became RUNNING)."""
    if status is Status.SUCCEEDED:
        return (*ended, AttemptRecord(attempt_start, finished_at, SUCCEEDED, borrowed, run_start))
    if status in ACTIVE:
        return (*ended, AttemptRecord(attempt_start, None, "running", borrowed,
                                      run_start if status is Status.RUNNING else None))
    return ended


def runnable_seconds(submitted: float, ended: tuple[AttemptRecord, ...], status: Status, attempt_start: float,
                     finished_at: float | None, now: float) -> float:
    """A job's wait (``JobRecord.wait_seconds``): its time RUNNABLE, the one definition every figure of waiting uses.

    From its submission to its first placement, from each attempt that ended without succeeding (preempted,
    failed, a plan's capacity retry) to the next placement, and after the last one to its end (a job that fails
    or is terminated while it waits) or to the report time ``now`` (still waiting). Time on capacity is not wait:
    a plan job SCHEDULED for its window is placed (``plan_hold_seconds`` counts that). The same stretches the
    wait attribution charges (``wait_sweep.read_waits``), summed; computed after the run from the attempts, so
    the event loop does nothing for it.
    """
    waited = 0.0
    since = submitted
    for attempt in ended:
        start = attempt.start
        if start > since:
            waited += start - since
        end = attempt.end
        if end is not None:
            since = end
    if status is Status.SUCCEEDED or status in ACTIVE:
        last = attempt_start
    elif status is Status.RUNNABLE or status is Status.FAILED:
        last = now if finished_at is None else finished_at
    else:
        last = since  # SUBMITTED: not yet in a line
    if last > since:
        waited += last - since
    return waited


def waits_of(jobs: list[Job], statuses: list[Status], now: float) -> list[float]:
    """Each job's ``runnable_seconds`` with its status at ``now`` (``statuses``): a million jobs in one compiled
    loop; a job that never left its first wait costs one subtraction."""
    out: list[float] = []
    for index in range(len(jobs)):
        job = jobs[index]
        status = statuses[index]
        segments = job.segments
        submitted = job.spec.submit_at
        if not segments:
            if status is Status.SUCCEEDED or status in ACTIVE:
                last = job.attempt_start
            elif status is Status.RUNNABLE or status is Status.FAILED:
                finished_at = job.finished_at
                last = now if finished_at is None else finished_at
            else:
                last = submitted
            out.append(last - submitted if last > submitted else 0.0)
        else:
            out.append(runnable_seconds(submitted, segments, status, job.attempt_start, job.finished_at, now))
    return out


class Job:
    """Mutable simulation state of one job; ``__slots__`` keeps a million of them small."""

    __slots__ = (
        "attempt_start",
        "attempts_failed",
        "capacity_retries",
        "end_reason",
        "finished_at",
        "misconfigured",
        "placed_at",
        "placed_borrowed",
        "preemptions",
        "priority",
        "remaining",
        "run_started",
        "segments",
        "seq",
        "share",
        "spec",
        "start_order",
        "started_at",
        "status",
        "version",
    )

    def __init__(self, spec: JobSpec, seq: int, share: ShareCapacity):
        # compiled, reading a field checks its type: a spec holding, say, a numpy integer fails here rather than
        # in the middle of a run, and the engine builds its jobs again from exact values (``exact_types``)
        _typed: tuple[int, float, int | None, float | None, int, int, float | None] = (
            spec.instances, spec.submit_at, spec.preemption_retries, spec.checkpoint_interval, spec.attempts,
            spec.failures, spec.fail_after)
        self.spec = spec
        self.seq = seq
        self.priority = spec.priority
        self.status = Status.SUBMITTED
        #: why it ended (or was rejected at submission): kept as a value, worded when reported
        self.end_reason: Reason | None = None
        self.remaining = float(spec.duration)
        self.preemptions = 0
        self.attempts_failed = 0
        #: times its plan's 2 days pending ended and it went back to RUNNABLE without spending an attempt
        #: (``settings.plan_pending_end: requeue``): neither an attempt nor a preemption
        self.capacity_retries = 0
        self.started_at: float | None = None  # first RUNNING
        #: first left RUNNABLE for capacity (``scheduledAt``); its wait is ``runnable_seconds``, every requeue included
        self.placed_at: float | None = None
        self.finished_at: float | None = None
        self.attempt_start = 0.0
        self.run_started: float | None = None
        self.start_order = 0
        self.version = 0  # bumped on every placement/eviction: stale events and line entries are skipped
        self.placed_borrowed = False
        self.misconfigured: str = ""
        #: attempts that ended without succeeding (preempted, failed); a tuple, the empty one shared.
        #: The succeeding attempt is not kept: ``attempts`` derives it (a million of them cost 140 MB).
        self.segments: tuple[AttemptRecord, ...] = ()
        self.share = share  # its share's capacity of its instance type (limit, usage, waiting line)

    def attempts(self) -> tuple[AttemptRecord, ...]:
        """Every stay on capacity in order: those that ended, then the one that succeeded or is still on it."""
        return attempts(self.segments, self.status, self.attempt_start, self.finished_at, self.placed_borrowed,
                        self.run_started)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def reason(self) -> str:
        """Why it ended (or was rejected), worded as its record says it; empty while it has not ended."""
        return "" if self.end_reason is None else describe(self.end_reason)

    @property
    def instances(self) -> int:
        return self.spec.instances

    def __repr__(self) -> str:
        return f"Job({self.spec.name!r}, {self.status}, priority={self.priority})"
