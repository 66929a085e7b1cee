"""The topology model: frozen, typed records of what an administrator declares.

One set of classes serves Python definitions (``app.py``) and YAML/JSON files
(``loading.py``), so both mean exactly the same thing. Validation here is only
about *shape* (types, unknown keys); AWS's limits and the guarantees are rules
in ``policy_engine.rules`` so that every problem is reported at once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from policy_engine.diagnostics import ShareMatch, resolve_share
from policy_engine.limits import SYSTEM_TAG_PREFIX
from policy_engine.units import parse_duration

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


def _seconds(value: object) -> object:
    """A duration as people write it (``30d``, ``12h``, ``90m``, ``3600s``, as ``history --since`` reads it) or a
    number of seconds (the Python API); anything else is left for the schema to refuse by type."""
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError:
            raise ValueError("bad duration: expected a positive number with d, h, m or s (30d, 12h, 90m, "
                             "3600s)") from None
    if isinstance(value, int | float) and not isinstance(value, bool) and not value > 0:
        raise ValueError("bad duration: expected a positive number of seconds")
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _fraction(value: float) -> float:
    if not 0 <= value <= 1:
        raise ValueError("utilisation outside 0..1 (a fraction of the own limit: 0.6 is 60 %)")
    return value


def _count(value: int) -> int:
    if value < 0:
        raise ValueError("a number of preemptions is 0 or more")
    return value


#: Seconds; written ``1h``, ``10m``, ``3600s`` (or a number of seconds).
Duration = Annotated[float, BeforeValidator(_seconds)]


class Target(_Frozen):
    """What a share's team should experience, judged on a simulated run (never deployed: AWS has no such object).

    ``share`` is ``QUEUE/SHARE``, or ``SHARE`` when unique; ``instance_type`` narrows the target to the share's
    jobs of that type (and its utilisation to that type; without it, every type of the share must meet it).
    """

    share: str
    instance_type: str | None = None
    #: 95 % of the share's jobs wait at most this long (seconds) from submission to their first start.
    wait_p95: Duration | None = None
    #: Half of the share's jobs wait at most this long (seconds).
    wait_p50: Duration | None = None
    #: No job of the share is preempted more often than this.
    max_preemptions_per_job: Annotated[int, AfterValidator(_count)] | None = None
    #: Own use at least this fraction of the own limit, time-weighted over the run (per instance type).
    min_utilisation: Annotated[float, AfterValidator(_fraction)] | None = None


class Suppression(_Frozen):
    """Accept one finding on purpose: its rule ID, the object it names (as findings do) and why.

    ``object`` is ``QUEUE/SHARE``, ``job_queues[QUEUE]``, ``service_environments[ENV]`` or a guarantee
    (``guarantees[0] (QUEUE/SHARE)``, or the share it names). Warnings can be suppressed; errors only where
    AWS would still accept the deploy (a refuted guarantee), never an AWS limit.
    """

    rule: str
    object: str
    reason: str


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

    def environment(self, name: str) -> ServiceEnvironment | None:
        return next((e for e in self.service_environments if e.name == name), None)

    def queue(self, name: str) -> JobQueue | None:
        return next((q for q in self.job_queues if q.name == name), None)

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
