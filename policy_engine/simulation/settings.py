"""What a scenario may choose and change: the simulation's settings and its timed updates.

Apart from the event loop so that scenario loading (``workload``) needs no engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from policy_engine.simulation.core.preemption import POLICIES, LowestPriorityNewestFirst, VictimPolicy
from policy_engine.simulation.exact_types import exact_flag, exact_integer, exact_number
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate


class PlanDispatch(StrEnum):
    """What Batch does with a job whose training plan has no Active window yet (undocumented by AWS; see
    docs/training_plans.md): ``DISPATCH`` sends it to SageMaker, where it sits SCHEDULED holding its share's
    quota and the environment's capacity until a window opens; ``HOLD`` keeps it RUNNABLE until then."""

    DISPATCH = "dispatch"
    HOLD = "hold"


class PlanEnd(StrEnum):
    """What becomes of a plan job's attempt that SageMaker ends (its window's end, or too long pending): AWS
    documents nothing of how Batch reports it (docs/training_plans.md). ``RETRY``: a failed attempt, retried under
    ``retryStrategy.attempts``; ``PREEMPT``: back to RUNNABLE as a preemption, counted against
    ``preemptionRetriesBeforeTermination``; ``FAIL``: the job fails at once."""

    RETRY = "retry"
    PREEMPT = "preempt"
    FAIL = "fail"


class SameInstant(StrEnum):
    """How a scenario's inputs that share an instant (submissions and actions) are applied (docs/simulator.md).

    ``TOGETHER``: after the instant's completions, all in one scheduling pass (priority updates and topology
    changes first, then the submissions in workload order). ``ONE_BY_ONE``: as calls to AWS Batch (and
    ``batch-quota serve``) are handled: the instant's own events and their pass first, then each input with its
    own pass, in call order (an action's ``after_submissions`` places it among the instant's submissions)."""

    TOGETHER = "together"
    ONE_BY_ONE = "one_by_one"


def _choice(name: str, value: object, kind: type[StrEnum]) -> StrEnum:
    """A setting's text as its enum value, once, or ``ValueError`` naming the choices."""
    if isinstance(value, kind):
        return value
    known = [choice.value for choice in kind]
    if not isinstance(value, str) or value not in known:
        raise ValueError(f"unknown {name} {value!r} (known: {', '.join(known)})")
    return kind(value)


@dataclass(frozen=True)
class SimulationSettings:
    """Choices a scenario may change; every default is documented in docs/simulator.md."""

    startup_delay: float = 0.0
    preemption_delay: float = 0.0
    backfill: bool = False
    victim_policy: str = LowestPriorityNewestFirst.name
    utilisation_series: bool = False
    #: Log every usage change compactly (``SimulationResult.usage``): what the HTML report aggregates.
    usage_log: bool = False
    #: A job placed at T is not a preemption victim before T + this. 0: only the pass that placed it spares it
    #: (what stops preemption loops: ``JobLifecycle.protected_until``).
    min_runtime: float = 0.0
    #: A plan job dispatched before its window (SCHEDULED, holding quota) or held RUNNABLE until it opens.
    plan_dispatch: PlanDispatch = PlanDispatch.DISPATCH
    #: A plan job's attempt cut at its window's end (30 minutes before it) and one pending 2 days (``PlanEnd``).
    plan_window_end: PlanEnd = PlanEnd.RETRY
    plan_pending_end: PlanEnd = PlanEnd.RETRY
    #: The instant simulated second 0 stands for (a scenario's ``start:``): what ISO 8601 plan windows count from.
    start: datetime | None = None
    #: Inputs of one instant in one scheduling pass, or one pass per input in call order (``SameInstant``).
    same_instant: SameInstant = SameInstant.TOGETHER
    #: Every instant the engine computes (an attempt's end, a start-up's, a time limit's) rounded to the
    #: millisecond, as AWS's API shows times: ``serve`` and ``history --scenario`` set it, so that a replay meets
    #: the instants the endpoint met whatever its time 0 (float sums of other origins round apart).
    millisecond_instants: bool = False

    def __post_init__(self) -> None:
        # the types the (compiled) engine reads: numpy scalars and 0/1 from a data frame become them exactly
        for name in ("startup_delay", "preemption_delay", "min_runtime"):
            object.__setattr__(self, name, exact_number(name, getattr(self, name)))
        for name in ("backfill", "utilisation_series", "usage_log", "millisecond_instants"):
            object.__setattr__(self, name, exact_flag(name, getattr(self, name)))
        if not self.min_runtime >= 0:
            raise ValueError(f"min_runtime must be a number of seconds >= 0, got {self.min_runtime}")
        if not isinstance(self.victim_policy, str) or self.victim_policy not in POLICIES:
            raise ValueError(f"unknown victim policy {self.victim_policy!r} (known: {', '.join(POLICIES)})")
        # a file's text becomes the value here, once
        object.__setattr__(self, "plan_dispatch", _choice("plan_dispatch", self.plan_dispatch, PlanDispatch))
        for name in ("plan_window_end", "plan_pending_end"):
            object.__setattr__(self, name, _choice(name, getattr(self, name), PlanEnd))
        object.__setattr__(self, "same_instant", _choice("same_instant", self.same_instant, SameInstant))

    def policy(self) -> VictimPolicy:
        return POLICIES[self.victim_policy]


@dataclass(frozen=True)
class PriorityUpdate:
    """``UpdateServiceJob``: set ``job``'s scheduling priority at time ``at``."""

    at: float
    job: str
    priority: int
    #: ``SameInstant.ONE_BY_ONE``: how many of the instant's submissions come before it (its call's place)
    after_submissions: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", exact_number("at", self.at))
        object.__setattr__(self, "priority", exact_integer("priority", self.priority))
        object.__setattr__(self, "after_submissions", exact_integer("after_submissions", self.after_submissions))


@dataclass(frozen=True)
class JobTermination:
    """``TerminateServiceJob``: ``job`` fails at ``at``, freeing its capacity or its place in line.

    At its submission instant it follows the submission (as the call did), not precedes it."""

    at: float
    job: str
    reason: str = ""
    #: ``SameInstant.ONE_BY_ONE``: how many of the instant's submissions come before it (its call's place)
    after_submissions: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", exact_number("at", self.at))
        object.__setattr__(self, "after_submissions", exact_integer("after_submissions", self.after_submissions))

    @property
    def status_reason(self) -> str:
        """The reason the job fails with, worded as AWS Batch words a user's termination."""
        return f"Terminated by user: {self.reason}" if self.reason else "Terminated by user"


#: What a scenario's ``actions`` do at a time: a job's priority or its termination, or the topology
#: (``topology_changes``: share updates, creations and deletions, environment updates).
Action = PriorityUpdate | JobTermination | ShareUpdate | EnvironmentUpdate
