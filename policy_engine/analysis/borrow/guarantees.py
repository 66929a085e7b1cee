"""Prove or refute what a team was promised, with a concrete counterexample when it fails.

Definitions (also in docs/rules.md):

- ``min_capacity`` of a type holds when a head job of the share, asking for no more than the
  share's own limit, can always get it by reclaim. Reclaim (cross-share preemption) only takes
  back capacity *borrowed* above a share's own limit, so in the worst case every other share on
  the same environment holds up to its own limit. The share can therefore always reach
  ``max(0, min(limit, environment - sum of the other shares' limits))``; without
  oversubscription that is exactly its limit.
- ``burst_capacity`` holds when the share can reach it while every other share is idle:
  ``min(ceiling, own + max-flow from its lenders, environment)`` (``BorrowGraph.max_burst``).
- ``never_preempted`` holds only when in-share preemption is off and the share can never hold
  borrowed capacity (it does not borrow, or nothing can flow to it).

A counterexample is ``share id -> {instance type: instances in use}``: the state under which
the promise fails; the message tells the story in one line.

**During a training plan's window** (``during: PLAN[i]``), ``min_capacity`` and ``burst_capacity`` are about the
share's *plan jobs* (jobs naming the plan) in window ``i``, of the plan's instance type. A plan job needs Batch's
room (as any job) and a free instance of the window; the plan belongs to the account, so every share of every
queue with a limit for the type may hold plan instances (docs/training_plans.md, "Checks"):

- ``min_capacity`` during a window holds when, with every other such share holding plan instances up to its own
  limit (within its limit nothing is reclaimed from it), the share still gets the promise:
  ``min(guaranteed_capacity, window instances - the others' limits)``, at least 0;
- ``burst_capacity`` during a window holds when the share reaches it with every other share idle:
  ``min(its burst, window instances)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.foundation.model import Capacity, Guarantee, PlanWindow, Topology, TrainingPlan, share_id

Usage = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Refutation:
    """Why one promise fails: the property, the instance type (if any), a one-line story and the state."""

    property: str
    instance_type: str | None
    message: str
    hint: str
    counterexample: Usage = field(default_factory=dict)


def guaranteed_capacity(graph: BorrowGraph, node: str, instance_type: str) -> int:
    """What the share can always reach by reclaim: ``min(limit, environment - the others' limits)``, at least 0."""
    free = graph.environment_capacity(node, instance_type) - graph.others_limits(node, instance_type)
    return max(0, min(graph.limit(node, instance_type), free))


def filled_in_order(limits: dict[str, int], capacity: int) -> dict[str, int]:
    """A state that can occur: the shares take their own limits, in order, until the environment is full.

    Every share stays within its own limit, so reclaim cannot take anything back: the worst case for
    whoever comes later (BQ201's starved share, BQ401's promised minimum).
    """
    usage, left = {}, capacity
    for name, limit in limits.items():
        usage[name] = max(0, min(limit, left))  # a limit below 0 (BQ1xx reports it) frees nothing
        left -= usage[name]
    return usage


def _others_at_their_limits(graph: BorrowGraph, node: str, instance_type: str) -> dict[str, int]:
    """The other shares at their own limits in order (``filled_in_order``), without those that use nothing."""
    others = {other: graph.limit(other, instance_type) for other in graph.neighbours_on_environment(node)}
    usage = filled_in_order(others, graph.environment_capacity(node, instance_type))
    return {other: count for other, count in usage.items() if count > 0}


def refute_min_capacity(graph: BorrowGraph, node: str, promised: Capacity) -> list[Refutation]:
    refutations = []
    for instance_type, wanted in promised.items():
        reach = guaranteed_capacity(graph, node, instance_type)
        if reach >= wanted:
            continue
        limit = graph.limit(node, instance_type)
        others = _others_at_their_limits(graph, node, instance_type)
        state = {other: {instance_type: count} for other, count in others.items()}
        state[node] = {instance_type: reach}
        held = " and ".join(f"{other} uses {count}" for other, count in others.items()) or "nothing else runs"
        if wanted > limit:
            message = (f"min_capacity {instance_type}: promised {wanted} but the share's own limit is {limit}; "
                       f"reclaim never restores more than the limit (when {held}, it gets {reach})")
            hint = f"raise the share's {instance_type} limit to {wanted} or promise at most {limit}"
        else:
            environment = graph.environment_capacity(node, instance_type)
            message = (f"min_capacity {instance_type}: promised {wanted} but only {reach} is sure: when {held} "
                       f"(within their own limits, so nothing can be reclaimed), the environment's {environment} "
                       f"{instance_type} leave only {reach} for {node}")
            hint = f"raise the environment's {instance_type} capacity or lower the other shares' limits"
        refutations.append(Refutation("min_capacity", instance_type, message, hint, state))
    return refutations


def _burst_cap_reason(graph: BorrowGraph, node: str, instance_type: str, reach: int) -> str:
    """Which bound stops the burst: the environment, the borrow limit, or the lenders."""
    share = graph.share(node)
    ceiling = share.ceiling(instance_type)
    if reach >= graph.environment_capacity(node, instance_type):
        return f"the environment has {graph.environment_capacity(node, instance_type)}"
    if not share.borrows:
        return f"a {share.strategy} share never borrows"
    if ceiling is not None and reach >= ceiling:
        return f"borrow_limit {share.effective_borrow_limit}% caps it at {ceiling}"
    lenders = graph.lenders(node, instance_type)
    if not lenders:
        return f"no other share of job queue {graph.queue(node).name} lends {instance_type}"
    given = ", ".join(f"{lender} {graph.limit(lender, instance_type)}" for lender in lenders)
    return f"its lenders can give only {graph.max_borrowed(node, instance_type)} ({given})"


def refute_burst_capacity(graph: BorrowGraph, node: str, promised: Capacity) -> list[Refutation]:
    refutations = []
    for instance_type, wanted in promised.items():
        burst = graph.burst(node, instance_type)
        if burst.total >= wanted:
            continue
        state: Usage = {other: {instance_type: 0} for other in graph.neighbours_on_environment(node)}
        state[node] = {instance_type: burst.total}
        borrowed = ", ".join(f"{count} from {lender}" for lender, count in burst.borrowed.items())
        how = f"own {burst.own}" + (f" + borrowed {borrowed}" if borrowed else "")
        reason = _burst_cap_reason(graph, node, instance_type, burst.total)
        message = (f"burst_capacity {instance_type}: promised {wanted} but even with every other share idle "
                   f"{node} reaches {burst.total} ({how}): {reason}")
        refutations.append(Refutation("burst_capacity", instance_type, message,
                                      f"promise at most {burst.total} or raise the limit, lenders or borrow_limit",
                                      state))
    return refutations


def preemption_risks(graph: BorrowGraph, node: str) -> list[Refutation]:
    """Every way a job of the share can be preempted, each with a concrete scenario (empty = never)."""
    share = graph.share(node)
    risks = []
    types = [t for t, n in share.capacity.items() if n > 0 and graph.environment_capacity(node, t) > 0]
    if share.in_share_preemption and types:
        instance_type, limit = types[0], min(share.capacity[types[0]], graph.environment_capacity(node, types[0]))
        message = (f"never_preempted: {node} runs job A (priority 1) on all its {limit} {instance_type}; "
                   f"a priority-2 job of {node} arrives and in-share preemption takes A's capacity")
        risks.append(Refutation("never_preempted", instance_type, message,
                                "turn in_share_preemption off (higher-priority jobs then wait)",
                                {node: {instance_type: limit}}))
    for instance_type in share.capacity:
        burst = graph.burst(node, instance_type)
        if not burst.borrowed:
            continue
        lender = next(iter(burst.borrowed))
        using = burst.own + 1
        message = (f"never_preempted: {node} uses {using} {instance_type} (its {burst.own} + 1 borrowed from "
                   f"{lender}); a job of {lender} arrives and cross-share preemption takes the borrowed one back")
        risks.append(Refutation("never_preempted", instance_type, message,
                                "use strategy LEND or RESERVE, or borrow_limit 0, so the share never borrows",
                                {node: {instance_type: using}, lender: {instance_type: 0}}))
        break
    return risks


# --- during a training plan's window ----------------------------------------------------------------------


@dataclass(frozen=True)
class WindowReach:
    """What one window of a plan gives one share's plan jobs: the instances it is sure of and at most."""

    plan: str
    window: int
    instance_type: str
    instances: int
    guaranteed: int
    burst: int
    #: the other shares holding plan instances in the worst case for ``guaranteed`` (share -> instances)
    others: dict[str, int]


def plan_users(topology: Topology, instance_type: str) -> list[str]:
    """Every share (``QUEUE/SHARE``) that can run a plan's type: it has a limit for it."""
    return [share_id(queue, share) for queue, share in topology.shares() if share.capacity.get(instance_type, 0) > 0]


def window_reach(topology: Topology, graph: BorrowGraph, node: str, plan: TrainingPlan, window: int) -> WindowReach:
    """The share's reach in window ``window`` of ``plan`` (which must exist)."""
    instance_type = plan.instance_type
    instances = plan.reserved_capacities[window].instances
    others = {other: graph.limit(other, instance_type) for other in plan_users(topology, instance_type)
              if other != node}
    held = {other: count for other, count in filled_in_order(others, instances).items() if count > 0}
    guaranteed = max(0, min(guaranteed_capacity(graph, node, instance_type), instances - sum(held.values())))
    burst = min(graph.burst(node, instance_type).total, instances)
    return WindowReach(plan.name, window, instance_type, instances, guaranteed, burst, held)


def reach_by_window(topology: Topology, graph: BorrowGraph, node: str) -> list[WindowReach]:
    """Every window of every plan whose type the share can run, in the topology's order (``explain``)."""
    share = graph.share(node)
    return [window_reach(topology, graph, node, plan, index)
            for plan in topology.training_plans if share.capacity.get(plan.instance_type, 0) > 0
            for index in range(len(plan.reserved_capacities))]


def _label(during: PlanWindow) -> str:
    return f"during {during}"


def refute_window_min_capacity(topology: Topology, graph: BorrowGraph, node: str, plan: TrainingPlan,
                               during: PlanWindow, promised: Capacity) -> list[Refutation]:
    refutations = []
    for instance_type, wanted in promised.items():
        reach = window_reach(topology, graph, node, plan, during.window)
        if reach.guaranteed >= wanted:
            continue
        state: Usage = {other: {instance_type: count} for other, count in reach.others.items()}
        state[node] = {instance_type: reach.guaranteed}
        sure = guaranteed_capacity(graph, node, instance_type)
        if sure < wanted and sure <= reach.instances - sum(reach.others.values()):
            why = (f"outside the plan too, reclaim restores only {sure} (the share's limit "
                   f"{graph.limit(node, instance_type)}, the environment and the other shares' limits)")
            hint = f"raise the share's {instance_type} limit or promise at most {reach.guaranteed}"
        else:
            held = " and ".join(f"{other} holds {count}" for other, count in reach.others.items())
            why = (f"when {held} of its {reach.instances} plan instances (within their own limits, so nothing "
                   f"is reclaimed), {reach.guaranteed} remain for {node}")
            hint = (f"reserve more instances in {during}, lower the other {instance_type} shares' limits, or "
                    f"promise at most {reach.guaranteed}")
        message = (f"min_capacity {instance_type} {_label(during)}: promised {wanted} but only {reach.guaranteed} "
                   f"is sure: {why}")
        refutations.append(Refutation("min_capacity", instance_type, message, hint, state))
    return refutations


def refute_window_burst_capacity(topology: Topology, graph: BorrowGraph, node: str, plan: TrainingPlan,
                                 during: PlanWindow, promised: Capacity) -> list[Refutation]:
    refutations = []
    for instance_type, wanted in promised.items():
        reach = window_reach(topology, graph, node, plan, during.window)
        if reach.burst >= wanted:
            continue
        state: Usage = {other: {instance_type: 0} for other in plan_users(topology, instance_type) if other != node}
        state[node] = {instance_type: reach.burst}
        batch = graph.burst(node, instance_type).total
        reason = (f"the window reserves {reach.instances}" if reach.instances <= batch
                  else f"its limits and lenders reach only {batch} (its burst outside the plan)")
        message = (f"burst_capacity {instance_type} {_label(during)}: promised {wanted} but even with every other "
                   f"share idle {node}'s plan jobs reach {reach.burst}: {reason}")
        refutations.append(Refutation("burst_capacity", instance_type, message,
                                      f"promise at most {reach.burst}, or reserve more or raise the share's reach",
                                      state))
    return refutations


def refute(topology: Topology, graph: BorrowGraph, guarantee: Guarantee, *, node: str | None = None
           ) -> list[Refutation]:
    """Every way ``guarantee`` fails (empty = proven). An unresolved share is BQ001's business, not ours.

    ``node``: the guarantee's share (``QUEUE/SHARE``) when the caller has already resolved it.
    """
    node = node or topology.find_share(guarantee.share).share_id
    if node is None:
        return []
    refutations = []
    during = guarantee.during
    if during is not None:
        plan = topology.plan(during.plan)
        if plan is None or not 0 <= during.window < len(plan.reserved_capacities):
            return []  # BQ404 reports a window that does not exist
        if guarantee.min_capacity:
            refutations += refute_window_min_capacity(topology, graph, node, plan, during, guarantee.min_capacity)
        if guarantee.burst_capacity:
            refutations += refute_window_burst_capacity(topology, graph, node, plan, during,
                                                        guarantee.burst_capacity)
    else:
        if guarantee.min_capacity:
            refutations += refute_min_capacity(graph, node, guarantee.min_capacity)
        if guarantee.burst_capacity:
            refutations += refute_burst_capacity(graph, node, guarantee.burst_capacity)
    if guarantee.never_preempted:
        refutations += preemption_risks(graph, node)
    return refutations
