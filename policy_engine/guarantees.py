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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from policy_engine.graph import BorrowGraph
from policy_engine.model import Capacity, Guarantee, Topology

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


def refute(topology: Topology, graph: BorrowGraph, guarantee: Guarantee, *, node: str | None = None
           ) -> list[Refutation]:
    """Every way ``guarantee`` fails (empty = proven). An unresolved share is BQ001's business, not ours.

    ``node``: the guarantee's share (``QUEUE/SHARE``) when the caller has already resolved it.
    """
    node = node or topology.find_share(guarantee.share).share_id
    if node is None:
        return []
    refutations = []
    if guarantee.min_capacity:
        refutations += refute_min_capacity(graph, node, guarantee.min_capacity)
    if guarantee.burst_capacity:
        refutations += refute_burst_capacity(graph, node, guarantee.burst_capacity)
    if guarantee.never_preempted:
        refutations += preemption_risks(graph, node)
    return refutations
