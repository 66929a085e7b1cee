"""AWS limits and API rules: what CloudFormation or the Batch API would refuse at deploy time.

Every figure, in messages, hints and titles alike, comes from ``policy_engine.limits`` (one
table, with its source), so a limit AWS changes is one edit there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from policy_engine import limits
from policy_engine.findings import Severity
from policy_engine.limits import Limit
from policy_engine.model import Capacity, share_id
from policy_engine.rules.base import Context, Problem, rule
from policy_engine.rules.objects import environment_object, queue_object


def _name_problem(name: str) -> str | None:
    if not limits.NAME_LENGTH.allows(len(name)):
        return f"name {name!r} has {len(name)} characters; AWS allows {limits.NAME_LENGTH.range_text()}"
    if not limits.NAME_CHARACTERS.fullmatch(name):
        return f"name {name!r} may only contain letters, digits, '-' and '_'"
    return None


_NAME_RULE = f"{limits.NAME_LENGTH.range_text()} letters, digits, '-' or '_'"


@rule("BQ101", Severity.ERROR, f"Names are {_NAME_RULE}")
def valid_names(context: Context) -> Iterator[Problem]:
    """Service environment, job queue, scheduling policy and quota share names follow AWS's naming rule."""
    hint = f"use {_NAME_RULE}"
    for environment in context.topology.service_environments:
        if problem := _name_problem(environment.name):
            yield Problem(environment_object(environment.name), f"service environment {problem}", hint)
    for queue in context.topology.job_queues:
        if problem := _name_problem(queue.name):
            yield Problem(queue_object(queue.name), f"job queue {problem}", hint)
        if queue.scheduling_policy is not None and (problem := _name_problem(queue.scheduling_policy)):
            yield Problem(queue_object(queue.name), f"scheduling policy {problem}", hint)
        for share in queue.shares:
            if problem := _name_problem(share.name):
                yield Problem(share_id(queue, share), f"quota share {problem}", hint)


def _capacities_below_minimum(bound: Limit, owners: Iterable[tuple[str, Capacity]], hint: str
                              ) -> Iterator[Problem]:
    """BQ102/BQ103: each ``(object, capacity)``'s count per instance type is at least ``bound.minimum``."""
    for obj, capacity in owners:
        for instance_type, count in capacity.items():
            if not bound.allows(count):
                yield Problem(obj, f"capacity {instance_type}: {count} is below AWS's minimum of {bound.minimum}",
                              hint)


def _wrong_limit_counts(bound: Limit, owners: Iterable[tuple[str, Capacity]]) -> Iterator[Problem]:
    """BQ104/BQ105: each ``(object, capacity)`` lists an allowed number of instance types."""
    for obj, capacity in owners:
        if not bound.allows(len(capacity)):
            yield Problem(obj, f"has {len(capacity)} capacity limits; AWS allows {bound.range_text()}",
                          f"list between {bound.minimum} and {bound.maximum} instance types")


def _share_capacities(context: Context) -> Iterator[tuple[str, Capacity]]:
    return ((share_id(queue, share), share.capacity) for queue, share in context.topology.shares())


def _environment_capacities(context: Context) -> Iterator[tuple[str, Capacity]]:
    return ((environment_object(e.name), e.capacity) for e in context.topology.service_environments)


@rule("BQ102", Severity.ERROR,
      f"A share's capacity per instance type is at least {limits.SHARE_MAX_CAPACITY.minimum}")
def share_capacity_positive(context: Context) -> Iterator[Problem]:
    """AWS requires ``maxCapacity >= 1`` for every capacity limit of a quota share."""
    bound = limits.SHARE_MAX_CAPACITY
    yield from _capacities_below_minimum(bound, _share_capacities(context),
                                         f"give the instance type at least {bound.minimum} or remove it from the share")


@rule("BQ103", Severity.ERROR,
      f"An environment's capacity per instance type is at least {limits.ENVIRONMENT_MAX_CAPACITY.minimum}")
def environment_capacity_positive(context: Context) -> Iterator[Problem]:
    """A service environment's capacity limit for an instance type is at least 1 instance."""
    bound = limits.ENVIRONMENT_MAX_CAPACITY
    yield from _capacities_below_minimum(bound, _environment_capacities(context),
                                         f"give the instance type at least {bound.minimum} or remove it")


@rule("BQ104", Severity.ERROR, f"A share has {limits.SHARE_CAPACITY_LIMITS.range_text()} capacity limits")
def share_capacity_limit_count(context: Context) -> Iterator[Problem]:
    """A quota share lists between 1 and 5 instance types."""
    yield from _wrong_limit_counts(limits.SHARE_CAPACITY_LIMITS, _share_capacities(context))


@rule("BQ105", Severity.ERROR,
      f"A service environment has {limits.ENVIRONMENT_CAPACITY_LIMITS.range_text()} capacity limits")
def environment_capacity_limit_count(context: Context) -> Iterator[Problem]:
    """A service environment lists between 1 and 5 instance types."""
    yield from _wrong_limit_counts(limits.ENVIRONMENT_CAPACITY_LIMITS, _environment_capacities(context))


@rule("BQ106", Severity.ERROR, f"At most {limits.SHARES_PER_QUEUE.maximum} quota shares per job queue")
def shares_per_queue(context: Context) -> Iterator[Problem]:
    """A job queue holds at most 20 quota shares."""
    bound = limits.SHARES_PER_QUEUE
    for queue in context.topology.job_queues:
        if not bound.allows(len(queue.shares)):
            yield Problem(queue_object(queue.name), f"has {len(queue.shares)} quota shares; AWS allows at most "
                          f"{bound.maximum}", "split the shares over several job queues")


@rule("BQ107", Severity.ERROR, "One job queue per quota-managed service environment")
def queues_per_environment(context: Context) -> Iterator[Problem]:
    """Two job queues cannot use the same quota-managed service environment. (The other direction,
    one environment per job queue, is the file format itself: a queue has one ``service_environment``.)"""
    users: dict[str, list[str]] = defaultdict(list)
    for queue in context.topology.job_queues:
        users[queue.service_environment].append(queue.name)
    for environment, queues in users.items():
        if not limits.QUEUES_PER_ENVIRONMENT.allows(len(queues)):
            yield Problem(environment_object(environment),
                          f"is used by {len(queues)} job queues ({', '.join(queues)}); AWS allows "
                          f"{limits.QUEUES_PER_ENVIRONMENT.maximum}",
                          "give each job queue its own service environment")


@rule("BQ108", Severity.ERROR, f"At most {limits.QUEUES_PER_ACCOUNT.maximum} job queues per account and Region")
def queues_per_account(context: Context) -> Iterator[Problem]:
    """An account has at most 50 job queues per Region."""
    count = len(context.topology.job_queues)
    if not limits.QUEUES_PER_ACCOUNT.allows(count):
        yield Problem("job_queues", f"{count} job queues; AWS allows at most {limits.QUEUES_PER_ACCOUNT.maximum} "
                      "per account and Region", "merge queues or split the topology over accounts or Regions")


@rule("BQ109", Severity.ERROR,
      f"At most {limits.ENVIRONMENTS_PER_ACCOUNT.maximum} service environments per account and Region")
def environments_per_account(context: Context) -> Iterator[Problem]:
    """An account has at most 50 service environments per Region."""
    count = len(context.topology.service_environments)
    if not limits.ENVIRONMENTS_PER_ACCOUNT.allows(count):
        yield Problem("service_environments", f"{count} service environments; AWS allows at most "
                      f"{limits.ENVIRONMENTS_PER_ACCOUNT.maximum} per account and Region",
                      "merge environments or split the topology over accounts or Regions")


@rule("BQ110", Severity.ERROR, f"borrow_limit is at least {limits.BORROW_LIMIT.minimum}")
def borrow_limit_minimum(context: Context) -> Iterator[Problem]:
    """``borrow_limit`` is a percent of the share's own limit, or -1 for unlimited; lower values are invalid."""
    for queue, share in context.topology.shares():
        if share.borrow_limit is not None and not limits.BORROW_LIMIT.allows(share.borrow_limit):
            yield Problem(share_id(queue, share),
                          f"borrow_limit {share.borrow_limit} is below {limits.BORROW_LIMIT.minimum}",
                          "use a percent >= 0, or -1 for unlimited")


@rule("BQ111", Severity.ERROR, "borrow_limit only with LEND_AND_BORROW")
def borrow_limit_strategy(context: Context) -> Iterator[Problem]:
    """AWS accepts ``borrowLimit`` only on LEND_AND_BORROW shares; on RESERVE or LEND it would mean nothing."""
    for queue, share in context.topology.shares():
        if share.borrow_limit is not None and not share.borrows:
            yield Problem(share_id(queue, share), f"borrow_limit {share.borrow_limit} is set on a {share.strategy} "
                          "share", "remove borrow_limit or use strategy LEND_AND_BORROW")


@rule("BQ112", Severity.ERROR, f"Job queue priority is {limits.QUEUE_PRIORITY.range_text()}")
def queue_priority(context: Context) -> Iterator[Problem]:
    """A job queue's priority is between 0 and 1000 (CloudFormation rejects more; jobs' priorities go to 9999)."""
    bound = limits.QUEUE_PRIORITY
    for queue in context.topology.job_queues:
        if not bound.allows(queue.priority):
            yield Problem(queue_object(queue.name), f"priority {queue.priority} is outside {bound.range_text()}",
                          f"use a priority between {bound.minimum} and {bound.maximum}")


@rule("BQ113", Severity.ERROR,
      f"job_state_time_limit_actions wait {limits.TIME_LIMIT_SECONDS.range_text()} seconds")
def time_limit_actions(context: Context) -> Iterator[Problem]:
    """``jobStateTimeLimitActions.maxTimeSeconds`` is between 600 and 86400."""
    bound = limits.TIME_LIMIT_SECONDS
    for queue in context.topology.job_queues:
        for index, action in enumerate(queue.job_state_time_limit_actions):
            if not bound.allows(action.max_time_seconds):
                yield Problem(queue_object(queue.name), f"job_state_time_limit_actions[{index}].max_time_seconds "
                              f"{action.max_time_seconds} is outside {bound.range_text()}",
                              f"use between {bound.minimum} and {bound.maximum} seconds")
