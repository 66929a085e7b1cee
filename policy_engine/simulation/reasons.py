"""The status reason of a job at report time: why it waits, where it runs, or how it ended.

Computed when a reason is reported (``results``, the local endpoint), never on a scheduling
pass, so a line a hundred thousand jobs deep costs nothing until someone asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.simulation.causes import Cause, Protected, Waiting, describe_waiting
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.jobs import ACTIVE, PREEMPTED, Job, Status
from policy_engine.simulation.core.preemption import above_limit, has_lower_priority, in_share_victims, reclaim_victims

if TYPE_CHECKING:
    from policy_engine.simulation.view import EngineView


def reason(engine: EngineView, job: Job) -> str:
    """The reason a job's record shows: waiting, running, or its final (or rejection) reason."""
    if job.status is Status.RUNNABLE:
        return waiting_reason(engine, job)
    if job.status in ACTIVE:
        if engine.plans is not None and engine.plans.pending(job):
            return (f"PLAN: SCHEDULED, waiting for a free instance of training plan {job.spec.training_plan}'s Active "
                    f"window (holding {job.spec.instances} of {job.share.share_id}'s quota)")
        return running_reason(job)
    return job.reason


def waiting_reason(engine: EngineView, job: Job) -> str:
    """Why a RUNNABLE job is not running, as its record says it (``waiting`` worded)."""
    return describe_waiting(waiting(engine, job))


def waiting(engine: EngineView, job: Job) -> Waiting:
    """Why a RUNNABLE job is not running: misconfigured, blocked behind a named head, or capacity."""
    also = _also(engine, job)
    if engine.plans is not None and engine.plans.pending(job):
        return Waiting(Cause.WAITING_FOR_PLAN_WINDOW, job.spec.training_plan, share=job.share.share_id, also=also)
    if job.misconfigured:
        return Waiting(Cause.MISCONFIGURED, job.misconfigured, also=also)
    share = job.share
    head = share.line.first
    if head is not None and head is not job:
        return Waiting(Cause.BEHIND_HEAD, head.spec.name, share=share.share_id,
                       head_misconfigured=bool(head.misconfigured), also=also)
    n, pool, kind = job.spec.instances, share.pool, share.instance_type
    used, limit = share.used, share.limit
    policy = engine.policy
    victims: list[Job] | None = None
    idle = reclaimable = lendable = 0
    bound: int | None = None
    if used + n <= limit:
        capacity = Cause.ENVIRONMENT_FULL
        idle = pool.env.capacity - pool.env.used
        if share.lends:
            idle = min(idle, pool.free_lendable)
        reclaimable = sum(o.used - o.limit for o in above_limit(pool, share))
        idle = max(0, idle)
        victims = reclaim_victims(pool, share, job, policy)
    elif share.borrows and placement.under_ceiling(share, n):
        lendable = max(0, pool.free_lendable)
        capacity = Cause.NOTHING_LENDABLE if pool.lender_idle < n else Cause.LENDABLE_TAKEN
    else:
        capacity = Cause.SHARE_AT_LIMIT
        bound = share.ceiling if share.borrows else limit
    in_share_short = False
    if victims is None and has_lower_priority(share, job):
        victims = in_share_victims(pool, share, job, policy)
        in_share_short = victims is None
    protected: tuple[Protected, ...] = ()
    if victims:
        protected = tuple(Protected(v.spec.name, v.attempt_start, end, this_pass=end <= engine.now) for v in victims
                          if (end := engine.protected_until(v)) is not None)
    return Waiting(Cause.WAITING_FOR_RECLAIM if protected else capacity, capacity=capacity, share=share.share_id,
                   instance_type=kind, needs=n, used=used, limit=limit, idle=idle, reclaimable=reclaimable,
                   lendable=lendable, borrows=share.borrows, strategy=share.model.strategy, bound=bound,
                   in_share_short=in_share_short, protected=protected, also=also)


def _also(engine: EngineView, job: Job) -> tuple[Cause, ...]:
    """What holds for a waiting job beside its main cause (``Waiting.also``)."""
    also: tuple[Cause, ...] = ()
    if job.segments and job.segments[-1].outcome == PREEMPTED:
        also += (Cause.REQUEUED_AFTER_PREEMPTION,)
    limits = engine.time_limits
    if limits is not None and (timer := limits.timers.get(job.share)) is not None and timer[0] is job:
        also += (Cause.TIME_LIMIT_ACTION_PENDING,)
    return also


def running_reason(job: Job) -> str:
    """Where a placed job runs: how it was placed, and its share's usage now (which changes after placement)."""
    share = job.share
    usage = f"{share.share_id} {share.used}/{share.limit} {share.instance_type}"
    above = share.used > share.limit
    if job.placed_borrowed:
        if above:
            return f"on borrowed capacity ({usage}, above its limit)"
        return f"placed on borrowed capacity; {usage}, within its limit now"
    if above:  # placed within its limit: the instances above it are borrowed by other jobs of the share
        return (f"on own capacity ({share.share_id} uses {share.used} of its limit {share.limit} "
                f"{share.instance_type}: {share.used - share.limit} borrowed by other jobs)")
    return f"on own capacity ({usage})"
