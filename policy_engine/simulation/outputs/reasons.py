"""The status reason of a job at report time: why it waits, where it runs, or how it ended.

Computed when a reason is reported (``results``, the local endpoint), never on a scheduling
pass, so a line a hundred thousand jobs deep costs nothing until someone asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.simulation.core import placement
from policy_engine.simulation.core.jobs import ACTIVE, Job, Status
from policy_engine.simulation.core.preemption import above_limit, has_lower_priority, in_share_victims, reclaim_victims
from policy_engine.simulation.outputs.numbers import format_seconds

if TYPE_CHECKING:
    from policy_engine.simulation.outputs.view import EngineView


def reason(engine: EngineView, job: Job) -> str:
    """The reason a job's record shows: waiting, running, or its final (or rejection) reason."""
    if job.status is Status.RUNNABLE:
        return waiting_reason(engine, job)
    if job.status in ACTIVE:
        return running_reason(job)
    return job.reason


def waiting_reason(engine: EngineView, job: Job) -> str:
    """Why a RUNNABLE job is not running: misconfigured, blocked behind a named head, or capacity."""
    if job.misconfigured:
        return job.misconfigured
    share = job.share
    head = share.line.first
    if head is not None and head is not job:
        why = "misconfigured" if head.misconfigured else "waiting for capacity"
        return f"BLOCKED: behind head job {head.spec.name} of {share.share_id} ({why})"
    n, pool, kind = job.spec.instances, share.pool, share.instance_type
    used, limit, sid = share.used, share.limit, share.share_id
    policy = engine.policy
    victims: list[Job] | None = None
    if used + n <= limit:
        idle = pool.env.capacity - pool.env.used
        if share.lends:
            idle = min(idle, pool.free_lendable)
        reclaimable = sum(o.used - o.limit for o in above_limit(pool, share))
        idle = max(0, idle)
        only = "only " if idle + reclaimable < n else ""
        reason = (f"CAPACITY: {sid} needs {n} {kind} within its limit ({used}/{limit} used); "
                  f"{idle} idle, {only}{reclaimable} reclaimable from shares above their limits")
        victims = reclaim_victims(pool, share, job, policy)
    elif share.borrows and placement.under_ceiling(share, n):
        reason = (f"CAPACITY: {sid} uses {used} of its own {limit} {kind}; "
                  f"{max(0, pool.free_lendable)} lendable idle instance(s), needs {n}")
    else:
        word, bound = ("ceiling", share.ceiling) if share.borrows else ("limit", limit)
        who = sid if share.borrows else f"{sid} ({share.model.strategy}, cannot borrow)"
        if bound is not None and used >= bound:
            reason = f"CAPACITY: {who} at its {word} ({used}/{bound} {kind}); needs {n}"
        else:
            left = "" if bound is None else f", {bound - used} left"
            reason = f"CAPACITY: {who} uses {used} of its {word} {bound} {kind}; needs {n}{left}"
    if victims is None and has_lower_priority(share, job):
        victims = in_share_victims(pool, share, job, policy)
        if victims is None:
            reason += "; in-share preemption of lower-priority jobs cannot free enough"
    if victims:
        protected = [(v, end) for v in victims if (end := engine.protected_until(v)) is not None]
        if protected:
            names = ", ".join(f"{v.spec.name} (placed at {format_seconds(v.attempt_start)}, "
                              + (f"protected until {format_seconds(end)} by min_runtime)" if end > engine.now
                                 else "in this scheduling pass: a victim from the next)")
                              for v, end in protected)
            reason += f"; preemption waits for {names}"
    return reason


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
