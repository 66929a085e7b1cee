"""The topology model: frozen, typed records of what an administrator declares.

One set of classes serves Python definitions (``app.py``) and YAML/JSON files
(``loading.py``), so both mean exactly the same thing. Validation here is only
about *shape* (types, unknown keys); AWS's limits and the guarantees are rules
in ``policy_engine.analysis.rules`` so that every problem is reported at once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, PlainValidator

from policy_engine.foundation import bounds
from policy_engine.foundation.diagnostics import ShareMatch, resolve_share
from policy_engine.foundation.limits import SYSTEM_TAG_PREFIX
from policy_engine.foundation.units import parse_duration

Strategy = Literal["RESERVE", "LEND", "LEND_AND_BORROW"]
State = Literal["ENABLED", "DISABLED"]

#: ``instance type -> number of instances``, e.g. ``{"ml.g5.xlarge": 4}``.
Capacity = dict[str, int]

#: Lists in files become tuples; strictness of the elements is kept.
_Tuple = Field(strict=False)

UNLIMITED_BORROW = -1


def _only_system_keys(tags: dict[str, str]) -> dict[str, str]:
    user = [key for key in tags if not key.lower().startswith(SYSTEM_TAG_PREFIX)]
    if user:
        raise ValueError(f"system_tags holds only tags AWS set (keys starting with {SYSTEM_TAG_PREFIX!r}); "
                         f"move {', '.join(map(repr, user))} to tags")
    return tags


#: Tags AWS itself put on an existing resource (``aws:cloudformation:stack-name``, ...), e.g. brought in by an
#: account import: kept apart from ``tags``, never deployed, never counted against the tag limits.
SystemTags = Annotated[dict[str, str], AfterValidator(_only_system_keys)]


def split_system_tags(tags: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(user tags, system tags)`` of tags as the API lists them: an importer keeps the ``aws:`` ones apart."""
    system = {k: v for k, v in tags.items() if k.lower().startswith(SYSTEM_TAG_PREFIX)}
    return {k: v for k, v in tags.items() if k not in system}, system


class _Frozen(BaseModel):
    """Immutable, strict, and closed: unknown keys and wrong types are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ServiceEnvironment(_Frozen):
    """A ``SAGEMAKER_TRAINING`` service environment: the physical capacity."""

    name: str
    capacity: Capacity
    state: State = "ENABLED"
    tags: dict[str, str] = Field(default_factory=dict)
    system_tags: SystemTags = Field(default_factory=dict)


class JobStateTimeLimitAction(_Frozen):
    """Terminate a job stuck at the front of the queue (``jobStateTimeLimitActions``)."""

    max_time_seconds: int
    reason: str
    action: Literal["TERMINATE"] = "TERMINATE"
    state: Literal["RUNNABLE"] = "RUNNABLE"


class QuotaShare(_Frozen):
    """A team's slice of a job queue, with its idle-capacity strategy."""

    name: str
    capacity: Capacity
    strategy: Strategy
    #: Percent of ``capacity`` a LEND_AND_BORROW share may borrow on top; -1 = unlimited.
    #: ``None`` means "not set" so that setting it on another strategy can be reported.
    borrow_limit: int | None = None
    in_share_preemption: bool = False
    state: State = "ENABLED"
    tags: dict[str, str] = Field(default_factory=dict)
    system_tags: SystemTags = Field(default_factory=dict)

    @property
    def lends(self) -> bool:
        return self.strategy in ("LEND", "LEND_AND_BORROW")

    @property
    def borrows(self) -> bool:
        return self.strategy == "LEND_AND_BORROW"

    @property
    def effective_borrow_limit(self) -> int:
        """The borrow limit AWS applies: -1 (unlimited) unless set; 0 when the share cannot borrow."""
        if not self.borrows:
            return 0
        return UNLIMITED_BORROW if self.borrow_limit is None else self.borrow_limit

    def ceiling(self, instance_type: str) -> int | None:
        """Most instances of a type the share may use at once; ``None`` = unbounded.

        ``floor(limit x (1 + borrow_limit / 100))`` for LEND_AND_BORROW, the limit otherwise.
        """
        limit = self.capacity.get(instance_type, 0)
        percent = self.effective_borrow_limit
        if percent == UNLIMITED_BORROW:
            return None
        return limit + (limit * percent) // 100


class JobQueue(_Frozen):
    """A ``SAGEMAKER_TRAINING`` job queue with a quota-share scheduling policy."""

    name: str
    service_environment: str
    shares: Annotated[tuple[QuotaShare, ...], _Tuple] = ()
    priority: int = 1
    state: State = "ENABLED"
    job_state_time_limit_actions: Annotated[tuple[JobStateTimeLimitAction, ...], _Tuple] = ()
    #: Name of the queue's quota scheduling policy; defaults to ``<queue>-quota-policy``.
    scheduling_policy: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    system_tags: SystemTags = Field(default_factory=dict)

    @property
    def scheduling_policy_name(self) -> str:
        return self.scheduling_policy or f"{self.name}-quota-policy"

    def share(self, name: str) -> QuotaShare | None:
        return next((s for s in self.shares if s.name == name), None)


@dataclass(frozen=True)
class PlanWindow:
    """One reserved capacity of a training plan: the plan (its name or ARN) and the window's index (0-based)."""

    plan: str
    window: int

    def __str__(self) -> str:
        return f"{self.plan}[{self.window}]"


_PLAN_WINDOW = re.compile(r"(?P<plan>.+)\[(?P<window>[0-9]+)\]")


def _plan_window(value: Any) -> PlanWindow:
    """``PLAN[index]`` (a file's text) or a ``PlanWindow`` (Python) as a ``PlanWindow``; else one error."""
    if isinstance(value, PlanWindow):
        return value
    found = _PLAN_WINDOW.fullmatch(value.strip()) if isinstance(value, str) else None
    if found is None:
        raise ValueError("expected PLAN[index]: a training plan's name or ARN and a window's index, e.g. "
                         "night-plan[0]")
    return PlanWindow(found["plan"], int(found["window"]))


#: ``during: PLAN[index]``: a guarantee about the share's plan jobs in one window of a training plan.
PlanWindowField = Annotated[PlanWindow, PlainValidator(_plan_window), PlainSerializer(str)]


class Guarantee(_Frozen):
    """What a team was promised; the checks prove or refute it.

    ``share`` is ``QUEUE/SHARE``, or ``SHARE`` when the name is unique.
    """

    share: str
    #: Reachable by reclaim for a head job within the share's own limit.
    min_capacity: Capacity | None = None
    #: Reachable when every other share is idle.
    burst_capacity: Capacity | None = None
    #: No job of the share is ever preempted.
    never_preempted: bool = False
    #: ``min_capacity`` and ``burst_capacity`` are about the share's plan jobs in this window of a training plan
    #: (docs/training_plans.md); ``never_preempted`` is not narrowed by it.
    during: PlanWindowField | None = None


#: The longest wait goal a target may set, in days and seconds. Not an AWS limit (targets are never deployed, and
#: ``limits`` has no figure for waits): a goal beyond a year holds a share to nothing a team would wait for, and is
#: most likely a mistyped unit (``400d`` for ``40d``, minutes written as seconds times 60).
MAX_WAIT_GOAL_DAYS = 366
MAX_WAIT_GOAL_SECONDS = MAX_WAIT_GOAL_DAYS * 86400


def _seconds(value: object) -> object:
    """A duration as people write it (``30d``, ``12h``, ``90m``, ``3600s``, as ``history --since`` reads it) or a
    number of seconds (the Python API), above 0 and at most ``MAX_WAIT_GOAL_SECONDS``; anything else is left for
    the schema to refuse by type."""
    if isinstance(value, str):
        try:
            seconds = parse_duration(value)
        except ValueError:
            raise ValueError("bad duration: expected a positive number with d, h, m or s (30d, 12h, 90m, "
                             "3600s)") from None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if not value > 0:
            raise ValueError("bad duration: expected a positive number of seconds")
        seconds = float(value)
    else:
        return value
    if seconds > MAX_WAIT_GOAL_SECONDS:
        raise ValueError(f"a wait goal is at most {MAX_WAIT_GOAL_DAYS} days ({MAX_WAIT_GOAL_SECONDS:,} s; a longer "
                         "one is most likely a mistyped unit)")
    return seconds


def _fraction(value: float) -> float:
    if not 0 <= value <= 1:
        raise ValueError("utilisation outside 0..1 (a fraction of the own limit: 0.6 is 60 %)")
    return value


def _percent(value: Any) -> Any:
    """``60%`` as the fraction 0.6 (how tune's constraints write a utilisation too); anything else as given."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            return float(value.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"expected a percentage such as 60% or a fraction such as 0.6, got {value!r}") from None
    return value


def _count(value: int) -> int:
    if value < 0:
        raise ValueError("a number of preemptions is 0 or more")
    return value


#: Seconds; written ``1h``, ``10m``, ``3600s`` (or a number of seconds).
Duration = Annotated[float, BeforeValidator(_seconds)]


#: A target's fields that are durations: written ``12h`` in a topology (``history --since``'s grammar), seconds
#: once read (``Criterion.unit`` is ``SECONDS`` for exactly these).
TARGET_DURATIONS = ("wait_p95", "wait_p50")


class Target(_Frozen):
    """What a share's team should experience, judged on a simulated run (never deployed: AWS has no such object).

    ``share`` is ``QUEUE/SHARE``, or ``SHARE`` when unique; ``instance_type`` narrows the target to the share's
    jobs of that type (and its utilisation to that type; without it, every type of the share must meet it).
    """

    share: str
    instance_type: str | None = None
    #: 95 % of the share's jobs wait at most this long (seconds RUNNABLE: submission to placement, plus every
    #: requeue after a preemption, failed attempt or capacity retry to the next placement).
    wait_p95: Duration | None = None
    #: Half of the share's jobs wait at most this long (seconds).
    wait_p50: Duration | None = None
    #: No job of the share is preempted more often than this.
    max_preemptions_per_job: Annotated[int, AfterValidator(_count)] | None = None
    #: Own use at least this fraction of the own limit, time-weighted over the run (per instance type).
    min_utilisation: Annotated[float, BeforeValidator(_percent), AfterValidator(_fraction)] | None = None


class Suppression(_Frozen):
    """Accept one finding on purpose: its rule ID, the object it names (as findings do) and why.

    ``object`` is ``QUEUE/SHARE``, ``job_queues[QUEUE]``, ``service_environments[ENV]`` or a guarantee
    (``guarantees[0] (QUEUE/SHARE)``, or the share it names). Warnings can be suppressed; errors only where
    AWS would still accept the deploy (a refuted guarantee), never an AWS limit.
    """

    rule: str
    object: str
    reason: str


_TIME_EXPECTED = "expected an ISO 8601 time with a time zone (2026-12-01T09:00:00Z) or seconds from the scenario start"


def plan_time(value: Any) -> datetime | float:
    """A plan time as read from a file or a Python value: an ISO 8601 text or an aware ``datetime`` as a
    ``datetime``, a finite number as ``float``; else ``ValueError`` saying what is expected."""
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            value = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1] in "zZ" else text)
        except ValueError:
            raise ValueError(_TIME_EXPECTED) from None
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            raise ValueError("an ISO 8601 time needs a time zone: add Z (UTC) or an offset such as +01:00")
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError("expected a finite number of seconds")
        if abs(value) > bounds.MAX_SECONDS:
            raise ValueError(f"expected at most {bounds.MAX_SECONDS} seconds from the scenario start (second 0 plus "
                             f"it is {bounds.MAX_INSTANT:%Y-%m-%d}, the last date accepted)")
        return float(value)
    raise ValueError(_TIME_EXPECTED)


def plan_time_text(value: datetime | float) -> str | float:
    """A plan time as a file writes it back: ISO 8601 (``Z`` for UTC) or the number of seconds."""
    if isinstance(value, datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    return value


#: When a reserved capacity starts or ends: an aware ``datetime`` (ISO 8601 in files) or seconds from the
#: scenario start (what a simulation counts in; ``plan_seconds`` turns the first into the second).
PlanTime = Annotated[datetime | float, PlainValidator(plan_time),
                     PlainSerializer(plan_time_text, when_used="json")]


class ReservedCapacity(_Frozen):
    """One window of a training plan (``ReservedCapacitySummaries``): ``instances`` of the plan's type,
    paid for from ``start`` to ``end`` whether used or not."""

    instances: int
    start: PlanTime
    end: PlanTime
    availability_zone: str | None = None

    def start_seconds(self, origin: datetime | None) -> float:
        """``start`` as seconds from ``origin`` (the scenario start); a number is already that."""
        return plan_seconds(self.start, origin)

    def end_seconds(self, origin: datetime | None) -> float:
        """``end`` as seconds from ``origin`` (the scenario start); a number is already that."""
        return plan_seconds(self.end, origin)


def plan_seconds(value: datetime | float, origin: datetime | None) -> float:
    """A plan time as seconds from ``origin``; ``ValueError`` for an ISO time without an origin to count from."""
    if not isinstance(value, datetime):
        return float(value)
    if origin is None:
        raise ValueError(f"{value.isoformat()} is a date; give the scenario a start (an ISO 8601 time) to count "
                         "from, or write the window in seconds from the scenario start")
    return (value - origin).total_seconds()


class TrainingPlan(_Frozen):
    """A SageMaker training plan: reserved capacity of one instance type in up to five windows.

    Never deployed (a plan is bought, not created by CloudFormation); jobs name it by ``name`` or ``arn``
    (``ResourceConfig.TrainingPlanArn``) and the simulator and the checks read it.
    """

    name: str
    instance_type: str
    reserved_capacities: Annotated[tuple[ReservedCapacity, ...], _Tuple]
    #: ``arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME`` where known (an import sets it).
    arn: str | None = None
    #: What the plan cost, paid once upfront (``DescribeTrainingPlan``'s ``UpfrontFee``), in ``currency``; a rate
    #: card's ``training_plans.NAME.upfront_fee`` wins over it (docs/costs.md).
    upfront_fee: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    #: ``CurrencyCode`` of the fee (ISO 4217); must be the rate card's when the fee is read from here.
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None
    #: The shares that use or own the plan (``QUEUE/SHARE``, or ``SHARE`` when unique): who its idle part is
    #: allocated to under ``idle_to: owners``.
    shares: Annotated[tuple[str, ...], _Tuple] = ()
    #: Who pays the plan's idle reserved hours: the shares that used it in proportion to use (``use``, a plan
    #: nobody used stays unallocated), its ``shares`` equally (``owners``), or every share equally (``equal``).
    idle_to: Literal["use", "owners", "equal"] = "use"

    def named_by(self, ref: str) -> bool:
        """Whether a job's ``training_plan`` (a name or an ARN) names this plan."""
        return ref == self.name or (self.arn is not None and ref == self.arn)


class Topology(_Frozen):
    """Everything batch-quota checks, simulates and deploys."""

    service_environments: Annotated[tuple[ServiceEnvironment, ...], _Tuple] = ()
    job_queues: Annotated[tuple[JobQueue, ...], _Tuple] = ()
    guarantees: Annotated[tuple[Guarantee, ...], _Tuple] = ()
    #: What each team should experience in a simulated run (reports say met or missed); never deployed.
    targets: Annotated[tuple[Target, ...], _Tuple] = ()
    #: Share limits may add up to more than the environment (rule BQ201 becomes a warning).
    allow_oversubscription: bool = False
    #: Findings accepted on purpose; they stay in every output, marked with their reason.
    suppress: Annotated[tuple[Suppression, ...], _Tuple] = ()
    #: Objects whose names stand in for the ones CloudFormation generates at deploy (a template's logical IDs),
    #: as findings name them (``job_queues[Queue1]``, ``Queue1/TeamA``): a note every output marks, never deployed.
    named_at_deploy: Annotated[tuple[str, ...], _Tuple] = ()
    #: SageMaker training plans the shares' jobs may name: checked and simulated, never deployed.
    training_plans: Annotated[tuple[TrainingPlan, ...], _Tuple] = ()

    def environment(self, name: str) -> ServiceEnvironment | None:
        return next((e for e in self.service_environments if e.name == name), None)

    def queue(self, name: str) -> JobQueue | None:
        return next((q for q in self.job_queues if q.name == name), None)

    def plan(self, ref: str) -> TrainingPlan | None:
        """The training plan a job names, by name or ARN."""
        return next((p for p in self.training_plans if p.named_by(ref)), None)

    def shares(self) -> list[tuple[JobQueue, QuotaShare]]:
        """Every share with its queue, in declaration order."""
        return [(q, s) for q in self.job_queues for s in q.shares]

    def shares_by_queue(self) -> Mapping[str, Collection[str]]:
        """Share names per queue name, in declaration order (what ``diagnostics.resolve_share`` looks in).

        A view, not a copy: looking one queue up costs a pass over the queues, as ``queue()`` does.
        """
        return _SharesByQueue(self.job_queues)

    def find_share(self, ref: str) -> ShareMatch:
        """The share a reference names, or why none (``diagnostics.resolve_share``)."""
        return resolve_share(ref, self.shares_by_queue())

    def resolve_share(self, ref: str) -> list[tuple[JobQueue, QuotaShare]]:
        """Shares a reference names: one, several when a bare ``SHARE`` is ambiguous, or none."""
        match = self.find_share(ref)
        found = list(match.candidates)
        if match.queue is not None and match.share is not None:
            found = [(match.queue, match.share)]
        return [(queue, share) for queue_name, share_name in found
                if (queue := self.queue(queue_name)) is not None and (share := queue.share(share_name)) is not None]


class _SharesByQueue(Mapping[str, Collection[str]]):
    """Queue name -> names of its shares (of every queue so named), read from the queues as asked."""

    def __init__(self, queues: tuple[JobQueue, ...]):
        self._queues = queues

    def __getitem__(self, name: str) -> Collection[str]:
        names: list[str] = []
        found = False
        for queue in self._queues:
            if queue.name == name:
                found = True
                names.extend(share.name for share in queue.shares)
        if not found:
            raise KeyError(name)
        return names

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(queue.name for queue in self._queues))

    def __len__(self) -> int:
        return len({queue.name for queue in self._queues})


def share_id(queue: JobQueue | str, share: QuotaShare | str) -> str:
    """The canonical ``QUEUE/SHARE`` name used in findings, graphs and reports."""
    queue_name = queue if isinstance(queue, str) else queue.name
    share_name = share if isinstance(share, str) else share.name
    return f"{queue_name}/{share_name}"
