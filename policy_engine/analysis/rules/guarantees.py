"""Guarantees: each declared promise is meaningful, and proven or refuted with a counterexample.

The definitions and the proofs live in ``policy_engine.analysis.borrow.guarantees``; these rules only
turn refutations into findings on ``guarantees[i] (QUEUE/SHARE)``. A promise BQ404 reports
as meaningless (a count below 1, an instance type the share has no limit for) is not also
proven or refuted by BQ401/BQ402, so each problem is reported once.
"""

from __future__ import annotations

from collections.abc import Iterator

from policy_engine.analysis.borrow.guarantees import refute
from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.foundation.findings import Severity
from policy_engine.foundation.model import Capacity, Guarantee, QuotaShare, Topology, TrainingPlan

_PROMISES = ("min_capacity", "burst_capacity")


def _meaningful(share: QuotaShare, promised: Capacity | None, plan: TrainingPlan | None = None) -> Capacity:
    """The entries of a promise that BQ404 accepts: at least 1 instance of a type the share has a limit for (and,
    during a plan's window, the plan's type)."""
    return {t: n for t, n in (promised or {}).items()
            if n >= 1 and t in share.capacity and (plan is None or t == plan.instance_type)}


def _window_problem(topology: Topology, guarantee: Guarantee) -> tuple[str, str] | None:
    """``(message, hint)`` when ``during`` names no window of a plan of the topology."""
    during = guarantee.during
    if during is None:
        return None
    plan = topology.plan(during.plan)
    if plan is None:
        known = ", ".join(p.name for p in topology.training_plans) or "none defined"
        return (f"during {during}: no training plan {during.plan!r} (known: {known})",
                "name a plan of training_plans by its name or ARN")
    count = len(plan.reserved_capacities)
    if during.window >= count:
        return (f"during {during}: plan {plan.name} has {count} reserved capacit{'y' if count == 1 else 'ies'} "
                f"(windows 0-{count - 1})" if count else f"during {during}: plan {plan.name} has no window",
                "name a window by its 0-based index in reserved_capacities")
    return None


def _refuted(context: Context, promise: str) -> Iterator[RawFinding]:
    """``refute``'s refutations of one property, for the meaningful part of each guarantee only."""
    for guarantee, (obj, share) in zip(context.topology.guarantees, context.guarantee_shares, strict=True):
        if share is None or obj.share_id is None:
            continue  # unresolved or ambiguous: BQ001 reports it
        if _window_problem(context.topology, guarantee) is not None:
            continue  # BQ404 reports it
        plan = context.topology.plan(guarantee.during.plan) if guarantee.during is not None else None
        checked = guarantee.model_copy(update={p: _meaningful(share, getattr(guarantee, p), plan) for p in _PROMISES})
        for refutation in refute(context.topology, context.graph, checked, node=obj.share_id):
            if refutation.property == promise:
                yield RawFinding(obj, refutation.message, refutation.hint, counterexample=refutation.counterexample)


@rule("BQ401", Severity.ERROR, "min_capacity is reachable by reclaim", suppressible_errors=True)
def min_capacity_holds(context: Context) -> Iterator[RawFinding]:
    """A promised ``min_capacity`` must be at most ``min(limit, environment - sum of the other shares' limits)``
    per instance type: what a head job of the share can always get back by reclaim while every other share
    holds up to its own limit. With ``during: PLAN[i]``: what the share's plan jobs are sure of in the plan's window
    ``i``, ``min(that bound, window instances - the limits of every other share that runs the plan's type)``.
    Counterexample: the other shares' usage that leaves too little."""
    yield from _refuted(context, "min_capacity")


@rule("BQ402", Severity.ERROR, "burst_capacity is reachable when every other share is idle", suppressible_errors=True)
def burst_capacity_holds(context: Context) -> Iterator[RawFinding]:
    """A promised ``burst_capacity`` must be at most the max burst: ``min(ceiling, own limit + max-flow from the
    lenders, environment capacity)``; with ``during: PLAN[i]``, also at most the window's instances.
    Counterexample: every other share idle and the most the share reaches."""
    yield from _refuted(context, "burst_capacity")


@rule("BQ403", Severity.ERROR, "never_preempted holds", suppressible_errors=True)
def never_preempted_holds(context: Context) -> Iterator[RawFinding]:
    """``never_preempted: true`` holds only when in-share preemption is off and the share can never hold borrowed
    capacity (not LEND_AND_BORROW, or nothing can flow to it). Counterexample: the usage in which a job of
    the share is preempted (by a higher-priority job of its own, or by a lender reclaiming)."""
    yield from _refuted(context, "never_preempted")


@rule("BQ404", Severity.ERROR, "A guarantee promises something meaningful", suppressible_errors=True)
def guarantee_is_meaningful(context: Context) -> Iterator[RawFinding]:
    """A guarantee must promise something: ``min_capacity`` or ``burst_capacity`` with at least 1 instance of
    an instance type the share has a limit for, or ``never_preempted: true``. A count of 0 or less, an instance
    type the share never runs, or a guarantee with no promise at all would pass every proof while promising
    nothing, so the team reads a guarantee that does not exist. ``during: PLAN[i]`` must name a window of a
    training plan, and the promise the plan's instance type."""
    for guarantee, (obj, share) in zip(context.topology.guarantees, context.guarantee_shares, strict=True):
        promised = [p for p in _PROMISES if getattr(guarantee, p)]
        if not promised and not guarantee.never_preempted:
            yield RawFinding(obj, "promises nothing: no min_capacity, no burst_capacity and never_preempted is false",
                             "add min_capacity, burst_capacity or never_preempted: true, or remove the guarantee")
            continue
        window = _window_problem(context.topology, guarantee)
        if window is not None:
            yield RawFinding(obj, *window)
        elif guarantee.during is not None and not promised:
            yield RawFinding(obj, f"during {guarantee.during} narrows only min_capacity and burst_capacity, and the "
                             "guarantee has neither", "add min_capacity or burst_capacity, or remove during")
        if share is None:
            continue  # unresolved or ambiguous: BQ001 reports it
        plan = context.topology.plan(guarantee.during.plan) if guarantee.during is not None else None
        for name in promised:
            for instance_type, count in getattr(guarantee, name).items():
                if instance_type not in share.capacity:
                    limits = ", ".join(share.capacity) or "none"
                    yield RawFinding(obj, f"{name} {instance_type}: share {guarantee.share} has no limit for "
                                     f"{instance_type} (it has: {limits}), so it never runs it",
                                     f"promise one of the share's instance types or add {instance_type} "
                                     "to its capacity")
                elif plan is not None and window is None and instance_type != plan.instance_type:
                    yield RawFinding(obj, f"{name} {instance_type} during {guarantee.during}: plan {plan.name} "
                                     f"reserves {plan.instance_type}, so its window gives no {instance_type}",
                                     f"promise {plan.instance_type} during the window, or drop during")
                elif count < 1:
                    yield RawFinding(obj, f"{name} {instance_type}: promises {count} instances; a promise must be "
                                     "at least 1",
                                     f"promise at least 1 {instance_type} or remove {instance_type} from {name}")


#: The property of a guarantee each refutation rule proves (``diff`` reports a lost promise once, not again as
#: the finding of its rule).
PROPERTY_OF_RULE = {min_capacity_holds.id: "min_capacity", burst_capacity_holds.id: "burst_capacity",
                    never_preempted_holds.id: "never_preempted"}
