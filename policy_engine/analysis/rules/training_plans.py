"""Training plans: SageMaker reserved capacity, paid by the hour whether the shares' jobs can use it or not.

A plan is bought in SageMaker, never deployed by the CDK app: SageMaker refuses a plan that breaks its
rules at purchase (name, instance type, up to five reserved capacities of 1-256 instances, in order and
apart), and the rest of this family finds paid capacity that the topology leaves out of reach: an
environment smaller than a window, or no share that can run the plan's type.
"""

from __future__ import annotations

from collections.abc import Iterator

from policy_engine.analysis.borrow.plan_users import plan_users
from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.foundation import instance_types, limits
from policy_engine.foundation.diagnostics import ObjectRef
from policy_engine.foundation.findings import Severity
from policy_engine.foundation.model import Topology, TrainingPlan
from policy_engine.foundation.units import duration_text

PLAN_API = "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingPlan.html"
PLAN_OFFERINGS = "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_SearchTrainingPlanOfferings.html"
PLAN_GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/training-plan-utilization-for-training-jobs.html"
PLAN_OFFERINGS_GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/search-training-plan-offerings-api-cli-sdk.html"
#: The type whose plans SageMaker reserves as UltraServers (``ReservedCapacityType: UltraServer``).
ULTRASERVER_TYPE = "ml.p6e-gb200.36xlarge"


def plan_refs(topology: Topology) -> Iterator[tuple[ObjectRef, TrainingPlan]]:
    """Every plan with its reference: by name, or by position where two plans share a name."""
    names = [plan.name for plan in topology.training_plans]
    for index, plan in enumerate(topology.training_plans):
        yield ObjectRef.of_plan(plan.name, index if names.count(plan.name) > 1 else None), plan


def window_seconds(plan: TrainingPlan) -> list[tuple[float, float]] | None:
    """``(start, end)`` of each window in one time base, or ``None`` when ISO times and seconds from the scenario
    start are mixed (they cannot be ordered without a scenario; another check reports the mix)."""
    from datetime import datetime

    times = [t for c in plan.reserved_capacities for t in (c.start, c.end)]
    dates = [t for t in times if isinstance(t, datetime)]
    if dates and len(dates) < len(times):
        return None
    origin = min(dates) if dates else None
    return [(c.start_seconds(origin), c.end_seconds(origin)) for c in plan.reserved_capacities]


@rule("BQ601", Severity.ERROR, "Training plan names are SageMaker TrainingPlanNames", source_url=PLAN_API)
def plan_names(context: Context) -> Iterator[RawFinding]:
    """A plan's name is {TRAINING_PLAN_NAME_LENGTH.minimum}-{TRAINING_PLAN_NAME_LENGTH.maximum} characters of
    letters and digits, with hyphens only between them (SageMaker's ``TrainingPlanName`` shape): no underscores,
    no leading or trailing hyphen."""
    bound = limits.TRAINING_PLAN_NAME_LENGTH
    for ref, plan in plan_refs(context.topology):
        if not (bound.allows(len(plan.name)) and limits.TRAINING_PLAN_NAME.fullmatch(plan.name)):
            yield RawFinding(ref, f"name {plan.name[:80]!r} is not a SageMaker TrainingPlanName",
                             f"use {bound.range_text()} letters and digits, hyphens only between them (pattern "
                             f"{limits.TRAINING_PLAN_NAME.pattern})")


@rule("BQ602", Severity.ERROR, "Training plans reserve an instance type SageMaker offers plans for",
      source_url=PLAN_OFFERINGS)
def plan_instance_types(context: Context) -> Iterator[RawFinding]:
    """A plan's ``instance_type`` is one SageMaker reserves: the ``ReservedCapacityInstanceType`` enum of the
    installed botocore's SageMaker model (upgrade botocore for a newer type). A misspelled type gets the closest
    reservable one as "did you mean"."""
    try:
        known = instance_types.reservable_instance_types()
    except instance_types.InstanceTypesUnavailable as error:
        yield RawFinding(ObjectRef.topology(), f"cannot read the reservable instance types: {error}",
                         "install botocore (a dependency of batch-quota)")
        return
    for ref, plan in plan_refs(context.topology):
        if plan.instance_type in known:
            continue
        close = instance_types.reservable_suggestion(plan.instance_type)
        guess = f" (did you mean {close!r}?)" if close else ""
        yield RawFinding(ref, f"instance_type {plan.instance_type!r} cannot be reserved by a training plan{guess}",
                         f"use one of {', '.join(sorted(known))} ({instance_types.RESERVED_SOURCE})")


@rule("BQ603", Severity.ERROR,
      f"Training plans hold {limits.PLAN_RESERVED_CAPACITIES.range_text()} reserved capacities", source_url=PLAN_API)
def plan_capacity_count(context: Context) -> Iterator[RawFinding]:
    """A plan holds between {PLAN_RESERVED_CAPACITIES.minimum} and {PLAN_RESERVED_CAPACITIES.maximum} reserved
    capacities (``ReservedCapacitySummaries``): windows of time, each paid for in full."""
    bound = limits.PLAN_RESERVED_CAPACITIES
    for ref, plan in plan_refs(context.topology):
        count = len(plan.reserved_capacities)
        if not bound.allows(count):
            yield RawFinding(ref, f"has {count} reserved capacities; SageMaker allows {bound.range_text()} per plan",
                             f"split it into plans of at most {bound.maximum} windows" if count else
                             "give it its reserved capacities (instances, start, end)")


@rule("BQ604", Severity.ERROR, "A training plan's windows are in order and do not overlap", source_url=PLAN_GUIDE)
def plan_windows_ordered(context: Context) -> Iterator[RawFinding]:
    """Each reserved capacity ends after it starts, and the plan's windows are listed in order of time without
    overlapping: a plan returns to Scheduled between discontinuous reserved capacities, and a job for it runs only
    while one is Active. (``guarantees`` and reports name windows by index, so the order is the plan's.)"""
    for ref, plan in plan_refs(context.topology):
        windows = window_seconds(plan)
        if windows is None:
            yield RawFinding(ref, "mixes ISO 8601 times and seconds from the scenario start in its windows",
                             "write every start and end of the plan one way")
            continue
        for index, (start, end) in enumerate(windows):
            if end <= start:
                yield RawFinding(ref, f"reserved_capacities[{index}] ends {duration_text(start - end)} before or "
                                 "when it starts",
                                 "give each window an end after its start")
        for index in range(1, len(windows)):
            (previous_start, previous_end), (start, _) = windows[index - 1], windows[index]
            if start < previous_start:
                early = duration_text(previous_start - start)
                yield RawFinding(ref, f"reserved_capacities[{index}] starts {early} before "
                                 f"reserved_capacities[{index - 1}]",
                                 "list the windows in order of time, each starting at or after the previous end")
            elif start < previous_end:
                yield RawFinding(ref, f"reserved_capacities[{index}] overlaps reserved_capacities[{index - 1}] "
                                 f"(it starts {duration_text(previous_end - start)} before that one ends)",
                                 "start each window at or after the previous one's end")


@rule("BQ605", Severity.ERROR,
      f"A training plan's windows hold {limits.PLAN_INSTANCES.range_text()} instances", source_url=PLAN_OFFERINGS)
def plan_window_instances(context: Context) -> Iterator[RawFinding]:
    """Each reserved capacity holds between {PLAN_INSTANCES.minimum} and {PLAN_INSTANCES.maximum} instances
    (``SearchTrainingPlanOfferings``' ``InstanceCount``)."""
    bound = limits.PLAN_INSTANCES
    for ref, plan in plan_refs(context.topology):
        for index, capacity in enumerate(plan.reserved_capacities):
            if not bound.allows(capacity.instances):
                yield RawFinding(ref, f"reserved_capacities[{index}] holds {capacity.instances} instances; "
                                 f"SageMaker reserves {bound.range_text()}",
                                 f"use between {bound.minimum} and {bound.maximum} instances")


def _environment_capacity(topology: Topology, instance_type: str) -> tuple[int, list[str]]:
    """Instances of a type across the environments that have it, and their names."""
    having = [env for env in topology.service_environments if instance_type in env.capacity]
    return sum(env.capacity[instance_type] for env in having), [env.name for env in having]


@rule("BQ606", Severity.ERROR, "The service environments can run every instance a training plan reserves")
def plan_fits_environments(context: Context) -> Iterator[RawFinding]:
    """Batch places a job only within its service environment's capacity, plan instances or not: when the
    environments' capacity for a plan's instance type is below its largest window, the rest of that window is paid
    for and can never run a job."""
    topology = context.topology
    for ref, plan in plan_refs(topology):
        if not plan.reserved_capacities:
            continue
        index, largest = max(enumerate(plan.reserved_capacities), key=lambda item: item[1].instances)
        capacity, names = _environment_capacity(topology, plan.instance_type)
        if capacity < largest.instances:
            where = (f"service environment(s) {', '.join(names)} have {capacity}" if names
                     else "no service environment has it")
            yield RawFinding(ref, f"reserved_capacities[{index}] reserves {largest.instances} x {plan.instance_type}; "
                             f"{where}: {largest.instances - capacity} paid instance(s) can never be used",
                             f"raise the environments' {plan.instance_type} capacity to at least {largest.instances}, "
                             "or reserve fewer instances")


@rule("BQ607", Severity.WARNING, "Some quota share can run a training plan's instance type")
def plan_reachable(context: Context) -> Iterator[RawFinding]:
    """A job names a plan, but runs in a quota share, and a share runs only instance types it has a capacity limit
    for: a plan whose type no share names is paid capacity no job can submit to."""
    topology = context.topology
    for ref, plan in plan_refs(topology):
        if not any(share.capacity.get(plan.instance_type, 0) > 0 for _, share in topology.shares()):
            yield RawFinding(ref, f"no quota share has a capacity limit for {plan.instance_type}: no job can use "
                             "the plan", f"give the shares that should use the plan a {plan.instance_type} limit")


@rule("BQ608", Severity.ERROR, f"{ULTRASERVER_TYPE} plans are UltraServer reservations (not modelled)",
      source_url=PLAN_API)
def plan_ultraservers(context: Context) -> Iterator[RawFinding]:
    """SageMaker reserves ``ml.p6e-gb200.36xlarge`` as UltraServers (``ReservedCapacityType: UltraServer``,
    counted in ``UltraServerCount``), not as single instances; batch-quota counts instances and does not model them,
    so it refuses such a plan rather than check or simulate it as something it is not."""
    for ref, plan in plan_refs(context.topology):
        if plan.instance_type == ULTRASERVER_TYPE:
            yield RawFinding(ref, f"{ULTRASERVER_TYPE} is reserved as UltraServers, which batch-quota does not model",
                             "leave the plan out of the topology (its capacity is not checked or simulated)")


@rule("BQ609", Severity.WARNING, "A training plan's reserved capacities are shapes AWS sells",
      source_url=PLAN_OFFERINGS_GUIDE)
def plan_offerings(context: Context) -> Iterator[RawFinding]:
    """SageMaker sells plans in whole days and a few instance counts: "Reservation durations are available in 1-day
    increments from 1 to 182 days. The reservation instance quantity options are 1, 2, 4, 8, 16, 32 or 64
    instances." The API allows other shapes (BQ605 checks its bounds), so such a window stays valid, but no
    offering has it: a topology that plans on it plans on capacity it cannot buy. A window whose times mix ISO 8601
    and seconds is left to BQ604."""
    day = limits.PLAN_OFFERING_DAY_SECONDS
    days, counts = limits.PLAN_OFFERING_DAYS, limits.PLAN_OFFERING_INSTANCES
    sold = ", ".join(map(str, counts))
    for ref, plan in plan_refs(context.topology):
        windows = window_seconds(plan)
        for index, capacity in enumerate(plan.reserved_capacities):
            if capacity.instances not in counts and limits.PLAN_INSTANCES.allows(capacity.instances):
                yield RawFinding(ref, f"reserved_capacities[{index}] holds {capacity.instances} instances; AWS sells "
                                 f"{sold}", f"reserve {_nearest(capacity.instances, counts)} instances, or split it "
                                 "into windows of sold sizes")
            if windows is None:
                continue
            start, end = windows[index]
            length = end - start
            if length > 0 and (length % day or not days.allows(int(length // day))):
                yield RawFinding(ref, f"reserved_capacities[{index}] lasts {duration_text(length)}; AWS sells "
                                 f"whole days, {days.range_text()} days",
                                 f"make it {max(days.minimum or 1, min(days.at_most, round(length / day)))} "
                                 "day(s) long")


def _nearest(value: int, choices: tuple[int, ...]) -> int:
    """The sold count closest to ``value`` (the larger on a tie: a window too small is the worse surprise)."""
    return min(choices, key=lambda choice: (abs(choice - value), -choice))


@rule("BQ610", Severity.WARNING, "A share that uses a training plan does not preempt its own plan jobs",
      source_url=PLAN_GUIDE)
def plan_share_preempts_in_share(context: Context) -> Iterator[RawFinding]:
    """A share known to use a plan (the plan lists it in ``shares:``, or a guarantee of the share names the plan with
    ``during:``) with ``in_share_preemption`` on: a higher-priority job of the share can preempt a running plan job,
    whose reserved hours are paid whether used or not; the work since its last checkpoint is thrown away, and the
    plan instances sit idle until the job is dispatched again."""
    for user in plan_users(context.topology):
        if not user.share.in_share_preemption or user.share.capacity.get(user.plan.instance_type, 0) <= 0:
            continue
        yield RawFinding(ObjectRef.of_share(user.queue.name, user.share.name, user.queue.service_environment),
                         f"uses training plan {user.plan.name} ({user.declared.value}) and has in_share_preemption "
                         f"on: a higher-priority job can preempt its plan jobs and throw away paid reserved hours",
                         "turn in_share_preemption off for this share, or give its plan jobs its highest priority")


@rule("BQ611", Severity.WARNING, "Plan jobs dispatched before their window do not hold all of a share's quota",
      source_url=PLAN_GUIDE)
def plan_jobs_hold_quota(context: Context) -> Iterator[RawFinding]:
    """Batch knows nothing of plans: a plan job submitted before its window (the "night before") is dispatched and
    waits SCHEDULED, SageMaker's Pending, holding its share's quota until the window opens (the simulator's default,
    ``plan_dispatch: dispatch``, docs/training_plans.md). ``check`` cannot know when jobs are submitted nor a
    scenario's settings; it knows which shares use a plan (``shares:``, a guarantee's ``during:``) and their limits.
    It reports a share whose limit for the plan's type is at most the plan's largest window: plan jobs that fill that
    window, submitted before it, hold all of the share's quota of the type while they wait, and none of its other
    jobs of that type runs meanwhile. ``simulate`` measures it (the quota held by SCHEDULED plan jobs)."""
    for user in plan_users(context.topology):
        plan = user.plan
        limit = user.share.capacity.get(plan.instance_type, 0)
        largest = max((capacity.instances for capacity in plan.reserved_capacities), default=0)
        if limit <= 0 or largest < limit:
            continue
        yield RawFinding(ObjectRef.of_share(user.queue.name, user.share.name, user.queue.service_environment),
                         f"uses training plan {plan.name} ({user.declared.value}); plan jobs filling its largest "
                         f"window ({largest} x {plan.instance_type}) submitted before it would hold all {limit} of "
                         "the share's instances of the type SCHEDULED until the window opens",
                         "submit plan jobs once their window is Active, or give the share room beyond the window "
                         f"(a {plan.instance_type} limit above {largest})")
