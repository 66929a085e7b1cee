"""AWS limits and API rules: what CloudFormation or the Batch API would refuse at deploy time.

Every figure, in messages, hints and titles alike, comes from ``policy_engine.foundation.limits`` (one
table, with its source), so a limit AWS changes is one edit there.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import partial

from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.analysis.rules.objects import TOPOLOGY, environment_ref, queue_ref, share_ref
from policy_engine.foundation import instance_types, limits
from policy_engine.foundation.aws_rules import SharingProblem, sharing_problems, tag_problems
from policy_engine.foundation.diagnostics import ObjectRef
from policy_engine.foundation.findings import Severity
from policy_engine.foundation.limits import Limit
from policy_engine.foundation.model import UNLIMITED_BORROW, Capacity

#: Every rule of this family: AWS refuses what it finds (each names the AWS page that says so, ``source_url``).
aws_rule = partial(rule, enforced_by_aws=True)

_GUIDE = "https://docs.aws.amazon.com/batch/latest/userguide/"
_API_REFERENCE = "https://docs.aws.amazon.com/batch/latest/APIReference/"
#: The AWS pages the rules of this family cite.
SERVICE_QUOTAS = _GUIDE + "service_limits.html"
QUOTA_SHARES = _GUIDE + "quota-shares.html"
QUOTA_RESOURCES = _GUIDE + "create-quota-management-resources.html"
TIME_LIMIT_ACTIONS = _GUIDE + "sm_job_stuck_in_runnable_time_limit_actions.html"
TAG_RESTRICTIONS = _GUIDE + "tag-restrictions.html"
CREATE_QUOTA_SHARE = _API_REFERENCE + "API_CreateQuotaShare.html"
CREATE_SERVICE_ENVIRONMENT = _API_REFERENCE + "API_CreateServiceEnvironment.html"
RESOURCE_SHARING = _API_REFERENCE + "API_QuotaShareResourceSharingConfiguration.html"
TIME_LIMIT_ACTION = _API_REFERENCE + "API_JobStateTimeLimitAction.html"
TRAINING_INSTANCE_TYPES = "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceConfig.html"

def _name_problem(name: str) -> str | None:
    if not limits.NAME_LENGTH.allows(len(name)):
        return f"name {name!r} has {len(name)} characters; AWS allows {limits.NAME_LENGTH.range_text()}"
    if not limits.NAME_CHARACTERS.fullmatch(name):
        return f"name {name!r} may only contain letters, digits, '-' and '_'"
    return None


_NAME_RULE = f"{limits.NAME_LENGTH.range_text()} letters, digits, '-' or '_'"


@aws_rule("BQ101", Severity.ERROR, f"Names are {_NAME_RULE}", source_url=CREATE_QUOTA_SHARE)
def valid_names(context: Context) -> Iterator[RawFinding]:
    """Service environment, job queue, scheduling policy and quota share names follow AWS's naming rule."""
    hint = f"use {_NAME_RULE}"
    for environment in context.topology.service_environments:
        if problem := _name_problem(environment.name):
            yield RawFinding(environment_ref(environment.name), f"service environment {problem}", hint)
    for queue in context.topology.job_queues:
        if problem := _name_problem(queue.name):
            yield RawFinding(queue_ref(queue), f"job queue {problem}", hint)
        if queue.scheduling_policy is not None and (problem := _name_problem(queue.scheduling_policy)):
            yield RawFinding(queue_ref(queue), f"scheduling policy {problem}", hint)
        for share in queue.shares:
            if problem := _name_problem(share.name):
                yield RawFinding(share_ref(queue, share), f"quota share {problem}", hint)


def _capacities_out_of_range(bound: Limit, owners: Iterable[tuple[ObjectRef, Capacity]], hint: str
                             ) -> Iterator[RawFinding]:
    """BQ102/BQ103: each ``(object, capacity)``'s count per instance type is within ``bound``."""
    for obj, capacity in owners:
        for instance_type, count in capacity.items():
            if bound.minimum is not None and count < bound.minimum:
                yield RawFinding(obj, f"capacity {instance_type}: {count} is below AWS's minimum of {bound.minimum}",
                                 hint)
            elif bound.maximum is not None and count > bound.maximum:
                yield RawFinding(obj, f"capacity {instance_type}: {count} is above {bound.maximum}, the largest number "
                                 "AWS's API holds (CloudFormation would pass it on, and the deploy fail)",
                                 f"use at most {bound.maximum} instances")


def _wrong_limit_counts(bound: Limit, owners: Iterable[tuple[ObjectRef, Capacity]]) -> Iterator[RawFinding]:
    """BQ104/BQ105: each ``(object, capacity)`` lists an allowed number of instance types."""
    for obj, capacity in owners:
        if not bound.allows(len(capacity)):
            yield RawFinding(obj, f"has {len(capacity)} capacity limits; AWS allows {bound.range_text()}",
                             f"list between {bound.minimum} and {bound.maximum} instance types")


def _share_capacities(context: Context) -> Iterator[tuple[ObjectRef, Capacity]]:
    return ((share_ref(queue, share), share.capacity) for queue, share in context.topology.shares())


def _environment_capacities(context: Context) -> Iterator[tuple[ObjectRef, Capacity]]:
    return ((environment_ref(e.name), e.capacity) for e in context.topology.service_environments)


@aws_rule("BQ102", Severity.ERROR,
      f"A share's capacity per instance type is {limits.SHARE_MAX_CAPACITY.range_text()}",
          source_url=CREATE_QUOTA_SHARE)
def share_capacity_positive(context: Context) -> Iterator[RawFinding]:
    """AWS requires ``maxCapacity >= {SHARE_MAX_CAPACITY.minimum}`` for every capacity limit of a quota share, and the
    API holds it in a signed 32-bit integer: a larger count (e.g. 2**64) passes CloudFormation's schema but fails
    the deploy."""
    bound = limits.SHARE_MAX_CAPACITY
    yield from _capacities_out_of_range(bound, _share_capacities(context),
                                        f"give the instance type at least {bound.minimum} or remove it from the share")


@aws_rule("BQ103", Severity.ERROR,
      f"An environment's capacity per instance type is {limits.ENVIRONMENT_MAX_CAPACITY.range_text()}",
          source_url=CREATE_SERVICE_ENVIRONMENT)
def environment_capacity_positive(context: Context) -> Iterator[RawFinding]:
    """A service environment's capacity limit for an instance type is at least
    {ENVIRONMENT_MAX_CAPACITY.minimum} instance and fits the API's signed 32-bit integer."""
    bound = limits.ENVIRONMENT_MAX_CAPACITY
    yield from _capacities_out_of_range(bound, _environment_capacities(context),
                                        f"give the instance type at least {bound.minimum} or remove it")


@aws_rule("BQ104", Severity.ERROR, f"A share has {limits.SHARE_CAPACITY_LIMITS.range_text()} capacity limits",
          source_url=QUOTA_SHARES)
def share_capacity_limit_count(context: Context) -> Iterator[RawFinding]:
    """A quota share lists between {SHARE_CAPACITY_LIMITS.minimum} and {SHARE_CAPACITY_LIMITS.maximum} instance
    types."""
    yield from _wrong_limit_counts(limits.SHARE_CAPACITY_LIMITS, _share_capacities(context))


@aws_rule("BQ105", Severity.ERROR,
      f"A service environment has {limits.ENVIRONMENT_CAPACITY_LIMITS.range_text()} capacity limits",
          source_url=CREATE_SERVICE_ENVIRONMENT)
def environment_capacity_limit_count(context: Context) -> Iterator[RawFinding]:
    """A service environment lists between {ENVIRONMENT_CAPACITY_LIMITS.minimum} and
    {ENVIRONMENT_CAPACITY_LIMITS.maximum} instance types."""
    yield from _wrong_limit_counts(limits.ENVIRONMENT_CAPACITY_LIMITS, _environment_capacities(context))


@aws_rule("BQ106", Severity.ERROR, f"At most {limits.SHARES_PER_QUEUE.maximum} quota shares per job queue",
          source_url=QUOTA_SHARES)
def shares_per_queue(context: Context) -> Iterator[RawFinding]:
    """A job queue holds at most {SHARES_PER_QUEUE.maximum} quota shares."""
    bound = limits.SHARES_PER_QUEUE
    for queue in context.topology.job_queues:
        if not bound.allows(len(queue.shares)):
            yield RawFinding(queue_ref(queue), f"has {len(queue.shares)} quota shares; AWS allows at most "
                             f"{bound.maximum}", "split the shares over several job queues")


@aws_rule("BQ107", Severity.ERROR, "One job queue per quota-managed service environment", source_url=SERVICE_QUOTAS)
def queues_per_environment(context: Context) -> Iterator[RawFinding]:
    """Two job queues cannot use the same quota-managed service environment. (The other direction,
    one environment per job queue, is the file format itself: a queue has one ``service_environment``.)"""
    users: dict[str, list[str]] = defaultdict(list)
    for queue in context.topology.job_queues:
        users[queue.service_environment].append(queue.name)
    for environment, queues in users.items():
        if not limits.QUEUES_PER_ENVIRONMENT.allows(len(queues)):
            yield RawFinding(environment_ref(environment),
                             f"is used by {len(queues)} job queues ({', '.join(queues)}); AWS allows "
                             f"{limits.QUEUES_PER_ENVIRONMENT.maximum}",
                             "give each job queue its own service environment")


@aws_rule("BQ108", Severity.ERROR, f"At most {limits.QUEUES_PER_ACCOUNT.maximum} job queues per account and Region",
          source_url=SERVICE_QUOTAS)
def queues_per_account(context: Context) -> Iterator[RawFinding]:
    """An account has at most {QUEUES_PER_ACCOUNT.maximum} job queues per Region."""
    count = len(context.topology.job_queues)
    if not limits.QUEUES_PER_ACCOUNT.allows(count):
        yield RawFinding(ObjectRef.all_queues(), f"{count} job queues; AWS allows at most "
                         f"{limits.QUEUES_PER_ACCOUNT.maximum} per account and Region",
                         "merge queues or split the topology over accounts or Regions")


@aws_rule("BQ109", Severity.ERROR,
      f"At most {limits.ENVIRONMENTS_PER_ACCOUNT.maximum} service environments per account and Region",
          source_url=SERVICE_QUOTAS)
def environments_per_account(context: Context) -> Iterator[RawFinding]:
    """An account has at most {ENVIRONMENTS_PER_ACCOUNT.maximum} service environments per Region."""
    count = len(context.topology.service_environments)
    if not limits.ENVIRONMENTS_PER_ACCOUNT.allows(count):
        yield RawFinding(ObjectRef.all_environments(), f"{count} service environments; AWS allows at most "
                         f"{limits.ENVIRONMENTS_PER_ACCOUNT.maximum} per account and Region",
                         "merge environments or split the topology over accounts or Regions")


@aws_rule("BQ110", Severity.ERROR, f"borrow_limit is {limits.BORROW_LIMIT.range_text()}", source_url=RESOURCE_SHARING)
def borrow_limit_minimum(context: Context) -> Iterator[RawFinding]:
    """``borrow_limit`` is a percent of the share's own limit, or {BORROW_LIMIT.minimum} for unlimited; lower values
    are invalid, and the API holds it in a signed 32-bit integer."""
    bound = limits.BORROW_LIMIT
    for queue, share in context.topology.shares():
        if share.borrow_limit is None or SharingProblem.OUT_OF_RANGE not in sharing_problems(share.strategy,
                                                                                               share.borrow_limit):
            continue
        where = (f"below {bound.minimum}" if bound.below(share.borrow_limit)
                 else f"above {bound.maximum}, the largest number AWS's API holds")
        yield RawFinding(share_ref(queue, share), f"borrow_limit {share.borrow_limit} is {where}",
                         f"use a percent between 0 and {bound.maximum}, or {UNLIMITED_BORROW} for unlimited")


@aws_rule("BQ111", Severity.ERROR, "borrow_limit only with LEND_AND_BORROW", source_url=RESOURCE_SHARING)
def borrow_limit_strategy(context: Context) -> Iterator[RawFinding]:
    """AWS accepts ``borrowLimit`` only on LEND_AND_BORROW shares; on RESERVE or LEND it would mean nothing."""
    for queue, share in context.topology.shares():
        if SharingProblem.NOT_BORROWING in sharing_problems(share.strategy, share.borrow_limit):
            yield RawFinding(share_ref(queue, share), f"borrow_limit {share.borrow_limit} is set on a {share.strategy} "
                             "share", "remove borrow_limit or use strategy LEND_AND_BORROW")


@aws_rule("BQ112", Severity.ERROR, f"Job queue priority is {limits.QUEUE_PRIORITY.range_text()}",
          source_url=QUOTA_RESOURCES)
def queue_priority(context: Context) -> Iterator[RawFinding]:
    """A job queue's priority is between {QUEUE_PRIORITY.minimum} and {QUEUE_PRIORITY.maximum} (CloudFormation
    rejects more; jobs' priorities go to {JOB_PRIORITY.maximum})."""
    bound = limits.QUEUE_PRIORITY
    for queue in context.topology.job_queues:
        if not bound.allows(queue.priority):
            yield RawFinding(queue_ref(queue), f"priority {queue.priority} is outside {bound.range_text()}",
                             f"use a priority between {bound.minimum} and {bound.maximum}")


@aws_rule("BQ113", Severity.ERROR,
      f"job_state_time_limit_actions wait {limits.TIME_LIMIT_SECONDS.range_text()} seconds",
          source_url=TIME_LIMIT_ACTION)
def time_limit_actions(context: Context) -> Iterator[RawFinding]:
    """``jobStateTimeLimitActions.maxTimeSeconds`` is between {TIME_LIMIT_SECONDS.minimum} and
    {TIME_LIMIT_SECONDS.maximum}."""
    bound = limits.TIME_LIMIT_SECONDS
    for queue in context.topology.job_queues:
        for index, action in enumerate(queue.job_state_time_limit_actions):
            if not bound.allows(action.max_time_seconds):
                yield RawFinding(queue_ref(queue), f"job_state_time_limit_actions[{index}].max_time_seconds "
                                 f"{action.max_time_seconds} is outside {bound.range_text()}",
                                 f"use between {bound.minimum} and {bound.maximum} seconds")


@aws_rule("BQ114", Severity.ERROR, "Capacity keys are SageMaker training instance types",
          source_url=TRAINING_INSTANCE_TYPES)
def training_instance_types(context: Context) -> Iterator[RawFinding]:
    """Every instance type a share or service environment names is one SageMaker training accepts: the
    ``TrainingInstanceType`` enum of the installed botocore's SageMaker model (upgrade botocore for a newer
    type). A misspelled type gets the closest valid one as "did you mean"."""
    try:
        known = instance_types.training_instance_types()
    except instance_types.InstanceTypesUnavailable as error:
        yield RawFinding(TOPOLOGY, f"cannot read the SageMaker training instance types: {error}",
                         "install botocore (a dependency of batch-quota)")
        return
    owners = [*_environment_capacities(context), *_share_capacities(context)]
    for obj, capacity in owners:
        for instance_type in capacity:
            if instance_type in known:
                continue
            close = instance_types.suggestion(instance_type)
            guess = f" (did you mean {close!r}?)" if close else ""
            yield RawFinding(obj, f"capacity key {instance_type!r} is not a SageMaker training instance type{guess}",
                             f"use {close!r}" if close else f"use an instance type listed in {instance_types.SOURCE}")


_REASONS = ", ".join(limits.TIME_LIMIT_REASONS)


@aws_rule("BQ115", Severity.ERROR,
      f"job_state_time_limit_actions: {limits.TIME_LIMIT_ACTION} a {limits.TIME_LIMIT_STATE} job for a reason AWS "
      "names", source_url=TIME_LIMIT_ACTIONS)
def time_limit_action_reasons(context: Context) -> Iterator[RawFinding]:
    """For a SAGEMAKER_TRAINING job queue AWS accepts only action TERMINATE, state RUNNABLE and one of three
    status reasons: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY, MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE,
    MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED. An action matches a stuck job by that reason, so free text
    (``stuck at head``) is refused at deploy and would never fire anyway."""
    for queue in context.topology.job_queues:
        for index, action in enumerate(queue.job_state_time_limit_actions):
            field = f"job_state_time_limit_actions[{index}]"
            if action.reason not in limits.TIME_LIMIT_REASONS:
                close = difflib.get_close_matches(action.reason, limits.TIME_LIMIT_REASONS, n=1, cutoff=0.6)
                guess = f" (did you mean {close[0]!r}?)" if close else ""
                yield RawFinding(queue_ref(queue), f"{field}.reason {action.reason!r} is not a status reason AWS "
                                 f"accepts{guess}", f"use one of {_REASONS}")
            if action.action != limits.TIME_LIMIT_ACTION:
                yield RawFinding(queue_ref(queue), f"{field}.action {action.action!r} is not "
                                 f"{limits.TIME_LIMIT_ACTION}", f"use {limits.TIME_LIMIT_ACTION}")
            if action.state != limits.TIME_LIMIT_STATE:
                yield RawFinding(queue_ref(queue), f"{field}.state {action.state!r} is not "
                                 f"{limits.TIME_LIMIT_STATE}", f"use {limits.TIME_LIMIT_STATE}")


@aws_rule("BQ116", Severity.ERROR,
      f"Tags: at most {limits.TAG_COUNT.maximum} per resource, keys {limits.TAG_KEY_LENGTH.range_text()} and values "
      f"{limits.TAG_VALUE_LENGTH.range_text()} characters, no key starting with 'aws:'", source_url=TAG_RESTRICTIONS)
def tag_limits(context: Context) -> Iterator[RawFinding]:
    """The tags of every service environment, job queue (also put on its scheduling policy) and quota share follow
    AWS's tagging rules. Keys starting with ``aws:`` belong to AWS: a user cannot set them. Tags AWS itself put on
    an existing resource are kept apart in ``system_tags``: they are never deployed and not counted here."""
    objects = [
        *((environment_ref(e.name), e.tags) for e in context.topology.service_environments),
        *((queue_ref(q), q.tags) for q in context.topology.job_queues),
        *((share_ref(q, s), s.tags) for q, s in context.topology.shares()),
    ]
    for obj, tags in objects:
        for problem in tag_problems(tags):
            yield RawFinding(obj, problem.message, problem.hint)
