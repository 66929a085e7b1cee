"""The sentences of a run's plan account: why each plan sat idle, and what its hazards cost, in plain words.

What ``explain SHARE --scenario`` says of the plans its share uses, and the note every ``simulate`` format
prints under its plan tables: derived from ``plan_account`` alone, so a new idle cause gets its words here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.foundation.model import share_id
from policy_engine.foundation.units import duration_text
from policy_engine.simulation.results.plan_idle import IdleCause, WindowIdle

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.plan_account import PlanAccount

HOUR = 3600.0


def _limits(topology: Topology) -> dict[tuple[str, str], int]:
    return {(share_id(queue, share), instance_type): limit for queue in topology.job_queues
            for share in queue.shares for instance_type, limit in share.capacity.items()}


def _clause(cause: IdleCause, share: str | None, instance_type: str, limits: dict[tuple[str, str], int]) -> str:
    if cause is IdleCause.LAST_30_MINUTES:
        return "in the last 30 minutes of its windows, when SageMaker starts nothing on them"
    if cause is IdleCause.NO_PLAN_JOB_WAITING:
        return "because no job naming the plan was waiting"
    if cause is IdleCause.SHARE_QUOTA:
        return (f"because {share}'s plan jobs were held at its {instance_type} limit of "
                f"{limits.get((str(share), instance_type), 0)}")
    if cause is IdleCause.BEHIND_OTHER_HEAD:
        return f"because {share}'s plan jobs waited behind a job not on the plan at the head of its line"
    if cause is IdleCause.LARGER_THAN_FREE:
        return f"because {share}'s plan jobs, SCHEDULED, needed more instances than the plan had free"
    return f"because {share}'s plan jobs, within its limit, waited for the service environment's capacity"


def idle_parts(windows: list[WindowIdle]) -> list[tuple[IdleCause, str | None, float]]:
    """The plan's idle instance-seconds by cause and share (shares named where the cause names them), largest first."""
    parts: dict[tuple[IdleCause, str | None], float] = {}
    for window in windows:
        for cause, seconds in window.by_cause.items():
            if seconds <= 0:
                continue
            named = window.by_share.get(cause)
            for share, part in (named.items() if named else ((None, seconds),)):
                parts[(cause, share)] = parts.get((cause, share), 0.0) + part
    order = list(IdleCause)
    return [(cause, share, seconds) for (cause, share), seconds in
            sorted(parts.items(), key=lambda item: (-item[1], order.index(item[0][0]), str(item[0][1])))]


def idle_sentence(topology: Topology, plans: PlanAccount, plan: str) -> str:
    """``plan P was idle 41 % (... of ... reserved instance-hours): 28 % because ...; 8 % in the last 30 minutes``."""
    windows = plans.idle[plan]
    paid = sum(window.paid for window in windows)
    idle = sum(window.idle for window in windows)
    model = next(item for item in topology.training_plans if item.name == plan)
    head = (f"plan {plan} was idle {idle / paid:.0%} ({idle / HOUR:,.2f} of {paid / HOUR:,.2f} reserved "
            f"instance-hours)" if paid > 0 else f"plan {plan} reserved nothing")
    if idle <= 0 or paid <= 0:
        return head + "."
    limits = _limits(topology)
    clauses = [f"{seconds / paid:.0%} {_clause(cause, share, model.instance_type, limits)}"
               for cause, share, seconds in idle_parts(windows)]
    return f"{head}: {'; '.join(clauses)}."


def hazard_sentences(plans: PlanAccount, share: str | None = None) -> list[str]:
    """What in-share preemption and the night before cost (of ``share`` only, when given)."""
    out = []
    for loss in plans.hazards.preemption:
        if share is not None and loss.share != share:
            continue
        if loss.in_share_preemptions:
            most = ", ".join(f"{name} x{count}" for name, count in list(loss.jobs.items())[:3])
            out.append(f"In-share preemption threw away {loss.in_share / HOUR:,.2f} reserved instance-hours of plan "
                       f"{loss.plan}: {loss.in_share_preemptions} preemption(s) of {loss.share}'s plan jobs by its "
                       f"higher-priority jobs (most: {most}).")
        if loss.reclaim_preemptions:
            out.append(f"Reclaim took {loss.reclaim_preemptions} borrowed attempt(s) of {loss.share}'s plan jobs on "
                       f"plan {loss.plan}, throwing away {loss.reclaim / HOUR:,.2f} reserved instance-hours.")
    for held in plans.hazards.held:
        if share is not None and held.share != share:
            continue
        sentence = (f"{held.share}'s plan jobs SCHEDULED for an instance of plan {held.plan} (before its window, "
                    f"or while it was full) held {held.quota_seconds / HOUR:,.2f} instance-hours of its quota "
                    f"({held.jobs_held} "
                    f"job(s), {duration_text(held.hold_seconds)} of plan_hold_seconds)")
        if held.waited_jobs:
            longest = ", ".join(f"{name} {duration_text(seconds)}" for name, seconds in list(held.waited.items())[:3])
            sentence += (f"; {held.waited_jobs} of its job(s) waited {duration_text(held.waited_seconds)} meanwhile "
                         f"(longest: {longest})")
        out.append(sentence + ".")
    return out


def share_plans(topology: Topology, plans: PlanAccount, share: str) -> list[str]:
    """The plans ``share`` owns (``shares:``) or whose account names it, in the topology's order."""
    named = set()
    for plan, windows in plans.idle.items():
        for window in windows:
            if (any(share in shares for shares in window.by_share.values())
                    or any(who == share for who, _ in window.waited.values())):
                named.add(plan)
    named |= {loss.plan for loss in plans.hazards.preemption if loss.share == share}
    named |= {held.plan for held in plans.hazards.held if held.share == share}
    return [plan.name for plan in topology.training_plans
            if plan.name in named or share in _owners(topology, plan.shares)]


def _owners(topology: Topology, shares: tuple[str, ...] | None) -> set[str]:
    """A plan's ``shares:`` as ``QUEUE/SHARE`` (a bare share name stands for every share of that name)."""
    out = set()
    for ref in shares or ():
        for queue in topology.job_queues:
            for item in queue.shares:
                if ref in (item.name, share_id(queue, item)):
                    out.add(share_id(queue, item))
    return out


def plan_sentences(topology: Topology, plans: PlanAccount, share: str) -> list[tuple[str, str]]:
    """``explain SHARE --scenario``: per plan the share uses, why it sat idle; then what its hazards cost the share."""
    out = [("training plans", idle_sentence(topology, plans, plan)) for plan in share_plans(topology, plans, share)]
    out += [("training plans", sentence) for sentence in hazard_sentences(plans, share)]
    return out
