"""Capacity: share limits against the physical capacity of their service environment.

Per instance type, the limits of the shares on an environment should add up to exactly
its capacity: more and some share cannot reach its limit even by reclaim; less and the
rest is idle forever (AWS documents no way for capacity owned by no share to be used).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from policy_engine.analysis.borrow.guarantees import filled_in_order
from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.analysis.rules.objects import environment_ref, share_ref
from policy_engine.foundation.findings import Severity
from policy_engine.foundation.model import share_id


def _claims(context: Context) -> dict[str, dict[str, dict[str, int]]]:
    """``environment -> instance type -> share id -> limit`` over every queue using the environment."""
    claims: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for queue, share in context.topology.shares():
        for instance_type, count in share.capacity.items():
            claims[queue.service_environment][instance_type][share_id(queue, share)] = count
    return claims


@rule("BQ201", Severity.ERROR, "Share limits fit in the environment (no oversubscription)")
def no_oversubscription(context: Context) -> Iterator[RawFinding]:
    """Per instance type, the sum of the share limits on an environment must not exceed its capacity:
    otherwise, when the other shares hold their own limits, some share cannot reach its limit even by
    reclaim (cross-share preemption only takes back *borrowed* capacity). A topology may opt in with
    ``allow_oversubscription: true``; the finding is then a warning and guarantees use the reduced minimum.
    Counterexample: the shares take their own limits in order until the environment is full, and the first
    share left below its limit is named."""
    claims = _claims(context)
    allowed = context.topology.allow_oversubscription
    for environment in context.topology.service_environments:
        for instance_type, capacity in environment.capacity.items():
            shares = claims[environment.name].get(instance_type, {})
            total = sum(shares.values())
            if total > capacity:
                listed = ", ".join(f"{name} {count}" for name, count in shares.items())
                usage = filled_in_order(shares, capacity)
                starved = next(name for name, limit in shares.items() if usage[name] < limit)
                held = " and ".join(f"{name} uses {usage[name]}" for name in shares if name != starved
                                    and usage[name] > 0) or "the environment is empty"
                yield RawFinding(
                    environment_ref(environment.name),
                    f"{instance_type}: share limits add up to {total} ({listed}) but the environment has {capacity}: "
                    f"when {held} (within their own limits, so nothing can be reclaimed), {starved} gets only "
                    f"{usage[starved]} of its {shares[starved]}",
                    "raise the environment's capacity or lower share limits"
                    + ("" if allowed else ", or set allow_oversubscription: true if this is intended"),
                    severity=Severity.WARNING if allowed else None,
                    counterexample={name: {instance_type: count} for name, count in usage.items()},
                )


@rule("BQ202", Severity.ERROR, "Every instance type of a share exists in its environment")
def instance_types_exist(context: Context) -> Iterator[RawFinding]:
    """A share that names an instance type its queue's environment lacks has jobs that can never run
    (AWS leaves them RUNNABLE with ``MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE``)."""
    environments = {e.name: e for e in context.topology.service_environments}
    for queue, share in context.topology.shares():
        environment = environments.get(queue.service_environment)
        if environment is None:
            continue  # a dangling reference: BQ001 / loading reports it
        for instance_type in share.capacity:
            if instance_type not in environment.capacity:
                known = ", ".join(environment.capacity) or "none"
                yield RawFinding(share_ref(queue, share),
                                 f"instance type {instance_type} is not in service environment {environment.name} "
                                 f"(it has: {known})",
                                 f"add {instance_type} to {environment.name} or remove it from the share")


@rule("BQ203", Severity.WARNING, "All environment capacity belongs to some share")
def no_idle_capacity(context: Context) -> Iterator[RawFinding]:
    """Capacity of an environment that no share's limit covers is treated as idle forever: AWS documents no
    way for shares to use capacity nobody owns (borrowing is only from LEND / LEND_AND_BORROW shares)."""
    claims = _claims(context)
    for environment in context.topology.service_environments:
        for instance_type, capacity in environment.capacity.items():
            total = sum(claims[environment.name].get(instance_type, {}).values())
            if total < capacity:
                yield RawFinding(environment_ref(environment.name),
                                 f"{instance_type}: {capacity - total} of {capacity} instances belong to no share "
                                 "and stay idle",
                                 "give the remaining capacity to a share or lower the environment's capacity")
