"""Why a job changed state, or why it waits: named causes with a small detail, and their text.

Like Kueue's reason constants (``InCohortReclamationReason``, ...) and its
``HumanReadablePreemptionReasons`` map: the simulator records a ``Cause`` and a ``detail``
(the preemptor's name, the attempt number, the disabled object), never a sentence, and code
that needs to know what happened compares causes. The words a report shows are written here
and only here (``describe``, ``describe_waiting``); the local endpoint words the same values
as AWS does (``policy_engine/adapters/endpoint/base/status_reasons.py``).

Nothing here runs on the scheduler's hot path: a ``Reason`` is built only where a transition is
recorded (someone listens, or a job ends in a way its record keeps), a ``Waiting`` only when
someone asks why a job waits.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import NamedTuple

from policy_engine.foundation.units import number_text


class Cause(StrEnum):
    """What moved a job, or what it waits for; the value is the stable name machines read."""

    # --- transitions ---------------------------------------------------------------------------------
    SUBMITTED = "submitted"
    #: already on capacity when the run starts (``batch-quota snapshot``)
    ON_CAPACITY_AT_SNAPSHOT = "on-capacity-at-snapshot"
    #: a submission to a DISABLED share or queue fails at once; detail: the disabled object
    #: (``job queue Q`` or ``quota share Q/S``)
    REJECTED_BY_DISABLED_SHARE = "rejected-by-disabled-share"
    #: joined its line (RUNNABLE)
    QUEUED = "queued"
    PLACED_ON_OWN_CAPACITY = "placed-on-own-capacity"
    PLACED_ON_BORROWED_CAPACITY = "placed-on-borrowed-capacity"
    #: SCHEDULED -> STARTING -> RUNNING, as the start-up delays pass
    STARTED = "started"
    WORK_DONE = "work-done"
    #: a failing attempt ended and the job is retried (``retryStrategy.attempts``); detail: the attempt number
    ATTEMPT_FAILED = "attempt-failed"
    #: the last allowed attempt failed; detail: ``(attempt number, retryStrategy.attempts)``
    RETRIES_EXHAUSTED = "retries-exhausted"
    #: a head within its limit took the capacity back (cross-share); detail: the preemptor's name
    RECLAIM_PREEMPTION = "reclaim-preemption"
    #: a higher-priority job of the same share took it; detail: the preemptor's name
    IN_SHARE_PREEMPTION = "in-share-preemption"
    #: preempted more often than ``preemptionRetriesBeforeTermination``; detail: that number
    PREEMPTION_RETRIES_EXHAUSTED = "preemption-retries-exhausted"
    #: a ``jobStateTimeLimitActions`` entry terminated the head; detail: the action's status reason
    TIME_LIMIT_ACTION = "time-limit-action"
    #: ``TerminateServiceJob``; detail: the reason the caller gave
    TERMINATED = "terminated"
    #: a topology change left no capacity of its share and instance type (the local endpoint);
    #: detail: ``(QUEUE/SHARE, instance type)``
    TOPOLOGY_CHANGE = "topology-change"
    #: SageMaker terminated the attempt's instances as its training plan's reserved capacity ended (from 30
    #: minutes before its end); detail: ``(plan, window index)``
    PLAN_WINDOW_ENDED = "plan-window-ended"
    #: pending for its plan's capacity for 2 days since its dispatch: ``InsufficientCapacityError``; detail: the plan
    PLAN_PENDING_EXPIRED = "plan-pending-expired"
    #: pending for its plan's capacity past its ``StoppingCondition.MaxRuntimeSeconds``; detail: ``(plan, seconds)``
    PLAN_STOPPING_CONDITION = "plan-stopping-condition"
    #: pending for its plan's capacity for 2 days, requeued without spending an attempt (``plan_pending_end:
    #: requeue``, a capacity retry); detail: the plan
    PLAN_CAPACITY_RETRY = "plan-capacity-retry"
    #: its plan has no window left (Expired, or every window past its cutoff, 30 minutes before its end): the job
    #: fails where it would be dispatched (or at once under ``plan_dispatch: hold``); detail: ``(plan, status)``
    PLAN_NO_WINDOW_LEFT = "plan-no-window-left"

    # --- waiting (a RUNNABLE job; ``Waiting``) ------------------------------------------------------
    #: behind the head of its line, which blocks it; detail: the head's name
    BEHIND_HEAD = "behind-head"
    #: at its limit (or ceiling), and it cannot borrow above it
    SHARE_AT_LIMIT = "share-at-limit"
    #: could borrow, but the lenders have too little idle owned capacity
    NOTHING_LENDABLE = "nothing-lendable"
    #: could borrow, but earlier borrowers hold the lenders' idle capacity
    LENDABLE_TAKEN = "lendable-taken"
    #: within its limit, and the environment has no idle instances that reclaim could free
    ENVIRONMENT_FULL = "environment-full"
    #: the preemption that would place it waits for victims protected by ``min_runtime``
    WAITING_FOR_RECLAIM = "waiting-for-reclaim"
    #: back in line after a preemption (noted beside the main cause: ``Waiting.also``)
    REQUEUED_AFTER_PREEMPTION = "requeued-after-preemption"
    #: larger than its environment or than its share can ever reach (also a transition: the job
    #: joins its line misconfigured); detail: AWS's ``MISCONFIGURATION:...`` status reason
    MISCONFIGURED = "misconfigured"
    #: a ``jobStateTimeLimitActions`` timer runs for it (noted beside the main cause: ``Waiting.also``)
    TIME_LIMIT_ACTION_PENDING = "time-limit-action-pending"
    #: a plan job held RUNNABLE until its plan has an Active window (``settings.plan_dispatch: hold``); detail:
    #: the plan
    WAITING_FOR_PLAN_WINDOW = "waiting-for-plan-window"


#: Causes of a job leaving capacity because another job took it.
PREEMPTIONS = frozenset({Cause.RECLAIM_PREEMPTION, Cause.IN_SHARE_PREEMPTION})

#: A detail is a small value: a name, a count, a status reason, or a pair of them.
Detail = str | int | tuple[str | int, ...] | None


class Reason(NamedTuple):
    """A transition's cause and its detail (see ``Cause`` for what the detail holds)."""

    cause: Cause
    detail: Detail = None


def _same(name: str) -> str:
    return name


def describe(reason: Reason, name: Callable[[str], str] = _same) -> str:
    """The text reports, ``--events`` and ``JobRecord.reason`` show for a transition; ``name`` words a job's name."""
    cause, detail = reason
    match cause:
        case Cause.SUBMITTED:
            return "submitted"
        case Cause.ON_CAPACITY_AT_SNAPSHOT:
            return "on capacity at the snapshot"
        case Cause.REJECTED_BY_DISABLED_SHARE:
            return f"REJECTED: {detail} is DISABLED"
        case Cause.PLACED_ON_OWN_CAPACITY:
            return "own capacity"
        case Cause.PLACED_ON_BORROWED_CAPACITY:
            return "borrowed capacity"
        case Cause.WORK_DONE:
            return "work done"
        case Cause.ATTEMPT_FAILED:
            return f"attempt {detail} failed; retrying"
        case Cause.RETRIES_EXHAUSTED:
            assert isinstance(detail, tuple)
            return f"FAILED: attempt {detail[0]} of {detail[1]} (retryStrategy.attempts) failed"
        case Cause.RECLAIM_PREEMPTION:
            return f"preempted (reclaim) by {name(str(detail))}"
        case Cause.IN_SHARE_PREEMPTION:
            return f"preempted (in-share) by {name(str(detail))}"
        case Cause.PREEMPTION_RETRIES_EXHAUSTED:
            return f"PREEMPTED: preemptionRetriesBeforeTermination ({detail}) exceeded"
        case Cause.TIME_LIMIT_ACTION:
            return f"Terminated by JobStateTimeLimit action due to reason: {detail}"
        case Cause.TERMINATED:
            return str(detail)
        case Cause.TOPOLOGY_CHANGE:
            assert isinstance(detail, tuple)
            return f"Terminated: quota share {detail[0]} no longer has {detail[1]} capacity"
        case Cause.MISCONFIGURED:
            return str(detail)
        case Cause.PLAN_WINDOW_ENDED:
            assert isinstance(detail, tuple)
            return (f"CapacityError: the reserved capacity of training plan {detail[0]} (window {detail[1]}) ended; "
                    "SageMaker terminated the instances")
        case Cause.PLAN_PENDING_EXPIRED:
            return f"InsufficientCapacityError: no instance of training plan {detail} for 2 days pending"
        case Cause.PLAN_STOPPING_CONDITION:
            assert isinstance(detail, tuple)
            return (f"MaxRuntimeExceeded: pending for training plan {detail[0]} longer than "
                    f"StoppingCondition.MaxRuntimeSeconds ({detail[1]})")
        case Cause.PLAN_CAPACITY_RETRY:
            return (f"InsufficientCapacityError: no instance of training plan {detail} for 2 days pending; "
                    "retried without consuming an attempt")
        case Cause.PLAN_NO_WINDOW_LEFT:
            assert isinstance(detail, tuple)
            return f"ValidationException: training plan {detail[0]} has no window left ({detail[1]})"
        case Cause.WAITING_FOR_PLAN_WINDOW:
            return f"PLAN: held RUNNABLE until training plan {detail} has an Active window"
    return ""  # QUEUED, STARTED: the state says it all


class Protected(NamedTuple):
    """A victim the preemption waits for: placed at ``placed_at``, protected by ``min_runtime`` until ``until``,
    or (``this_pass``) placed by the scheduling pass running now, so a victim only from the next."""

    name: str
    placed_at: float
    until: float
    this_pass: bool = False


class Waiting(NamedTuple):
    """Why a RUNNABLE job is not running, with the figures that keep it waiting (``reasons.waiting``).

    ``cause`` is the main one. A misconfigured job has its status reason as ``detail``; a job behind
    the head the head's name (and ``head_misconfigured``); a head waiting for capacity its share's
    usage against what it could use, and in ``capacity`` what it lacks (``ENVIRONMENT_FULL``,
    ``NOTHING_LENDABLE``, ``LENDABLE_TAKEN``, ``SHARE_AT_LIMIT``), which is also ``cause`` unless the
    preemption that would place it waits for protected victims (``WAITING_FOR_RECLAIM``).
    """

    cause: Cause
    detail: Detail = None
    capacity: Cause | None = None
    share: str = ""
    instance_type: str = ""
    needs: int = 0
    used: int = 0
    limit: int = 0
    #: within its limit: idle instances it could use, instances reclaimable from shares above their limits
    idle: int = 0
    reclaimable: int = 0
    #: borrowing: lendable idle instances not already borrowed
    lendable: int = 0
    #: above its limit: it borrows (so ``bound`` is its ceiling), its strategy, its ceiling or limit
    borrows: bool = False
    strategy: str = ""
    bound: int | None = None
    head_misconfigured: bool = False
    #: in-share preemption of lower-priority jobs would not free enough
    in_share_short: bool = False
    protected: tuple[Protected, ...] = ()
    #: what else holds for it (``REQUEUED_AFTER_PREEMPTION``, ``TIME_LIMIT_ACTION_PENDING``); not in its text
    also: tuple[Cause, ...] = ()


def describe_waiting(waiting: Waiting, name: Callable[[str], str] = _same) -> str:
    """The text a waiting job's record shows; ``name`` words a job's name."""
    w = waiting
    if w.cause is Cause.MISCONFIGURED:
        return str(w.detail)
    if w.cause is Cause.WAITING_FOR_PLAN_WINDOW:
        return describe(Reason(w.cause, w.detail))
    if w.cause is Cause.BEHIND_HEAD:
        why = "misconfigured" if w.head_misconfigured else "waiting for capacity"
        return f"BLOCKED: behind head job {name(str(w.detail))} of {w.share} ({why})"
    sid, n, kind, used, limit = w.share, w.needs, w.instance_type, w.used, w.limit
    if w.capacity is Cause.ENVIRONMENT_FULL:
        only = "only " if w.idle + w.reclaimable < n else ""
        text = (f"CAPACITY: {sid} needs {n} {kind} within its limit ({used}/{limit} used); "
                f"{w.idle} idle, {only}{w.reclaimable} reclaimable from shares above their limits")
    elif w.capacity in (Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN):
        text = (f"CAPACITY: {sid} uses {used} of its own {limit} {kind}; "
                f"{w.lendable} lendable idle instance(s), needs {n}")
    else:
        word = "ceiling" if w.borrows else "limit"
        who = sid if w.borrows else f"{sid} ({w.strategy}, cannot borrow)"
        if w.bound is not None and used >= w.bound:
            text = f"CAPACITY: {who} at its {word} ({used}/{w.bound} {kind}); needs {n}"
        else:
            left = "" if w.bound is None else f", {w.bound - used} left"
            text = f"CAPACITY: {who} uses {used} of its {word} {w.bound} {kind}; needs {n}{left}"
    if w.in_share_short:
        text += "; in-share preemption of lower-priority jobs cannot free enough"
    if w.protected:
        names = ", ".join(f"{name(p.name)} (placed at {number_text(p.placed_at)}, "
                          + ("in this scheduling pass: a victim from the next)" if p.this_pass
                             else f"protected until {number_text(p.until)} by min_runtime)")
                          for p in w.protected)
        text += f"; preemption waits for {names}"
    return text


#: The causes a waiting second is charged to (``results.wait_causes``), in the order reports list them.
WAIT_CAUSES: tuple[Cause, ...] = (
    Cause.BEHIND_HEAD, Cause.SHARE_AT_LIMIT, Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN, Cause.ENVIRONMENT_FULL,
    Cause.WAITING_FOR_RECLAIM, Cause.REQUEUED_AFTER_PREEMPTION, Cause.MISCONFIGURED, Cause.TIME_LIMIT_ACTION_PENDING)

_WAIT_WORDS = {
    Cause.BEHIND_HEAD: "behind the head of its line",
    Cause.SHARE_AT_LIMIT: "at its limit, cannot borrow more",
    Cause.NOTHING_LENDABLE: "at its limit, nothing lendable",
    Cause.LENDABLE_TAKEN: "lendable capacity taken by earlier borrowers",
    Cause.ENVIRONMENT_FULL: "environment full",
    Cause.WAITING_FOR_RECLAIM: "waiting for a reclaim to complete",
    Cause.REQUEUED_AFTER_PREEMPTION: "requeued after a preemption",
    Cause.MISCONFIGURED: "misconfigured (can never fit)",
    Cause.TIME_LIMIT_ACTION_PENDING: "a time-limit action pending",
}


def describe_wait_cause(cause: Cause) -> str:
    """A waiting cause in a few words: the rows of the "why jobs waited" tables and the reports' filters."""
    return _WAIT_WORDS[cause]
