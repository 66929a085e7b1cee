"""Quota shares: attached to a VALID job queue with a quota share policy; deleted once DISABLED and idle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.adapters.endpoint.base.account import Resources, written_sharing
from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.handlers.registry import (
    Output,
    Params,
    check_name,
    commit,
    copy_members,
    listed,
    operation,
    with_tags,
)
from policy_engine.foundation import limits
from policy_engine.foundation.aws_rules import SharingProblem, sharing_problems
from policy_engine.foundation.model import UNLIMITED_BORROW

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint

_UPDATABLE = ("capacityLimits", "resourceSharingConfiguration", "preemptionConfiguration", "state")


def _check_share(params: Params, record: Params | None = None) -> None:
    sharing = params.get("resourceSharingConfiguration") or (record or {}).get("resourceSharingConfiguration")
    sharing = sharing or {}
    for problem in sharing_problems(sharing["strategy"], sharing.get("borrowLimit")) if sharing else ():
        if problem is SharingProblem.NOT_BORROWING:
            raise client_error("borrowLimit is only valid with the LEND_AND_BORROW strategy "
                               f"(got {sharing['strategy']})")
        raise client_error(f"borrowLimit must be {UNLIMITED_BORROW} (unlimited) or a percent from 0 to "
                           f"{limits.BORROW_LIMIT.maximum}, got {sharing['borrowLimit']}")
    for limit in params.get("capacityLimits") or ():
        if limit["maxCapacity"] < limits.SHARE_MAX_CAPACITY.minimum:
            raise client_error(f"capacityLimits: maxCapacity of {limit['capacityUnit']} must be at least "
                               f"{limits.SHARE_MAX_CAPACITY.minimum}, got {limit['maxCapacity']}")


def _key(record: Params) -> tuple[str, str]:
    """A share record's ``(queue, share)`` key in ``Resources.shares``."""
    return record["jobQueueArn"].rsplit("job-queue/", 1)[-1], record["quotaShareName"]


@operation("CreateQuotaShare", mutating=True)
def create_quota_share(service: Endpoint, params: Params) -> Output:
    account = service.account
    queue = account.queue(params["jobQueue"])
    queue_name = queue["jobQueueName"]
    name = params["quotaShareName"]
    check_name(name, "quotaShareName")
    if queue["status"] != "VALID":
        raise client_error(f"Job queue {queue_name} is {queue['status']}: quota shares attach to a VALID job queue")
    policy = account.policy_of(queue)
    if policy is None or "quotaSharePolicy" not in policy:
        raise client_error(f"Job queue {queue_name} has no quota share scheduling policy")
    if (queue_name, name) in account.resources.shares:
        raise client_error(f"Quota share {name} already exists in job queue {queue_name}")
    _check_share(params)
    arn = account.arns.share(queue_name, name)

    def change(res: Resources) -> None:
        res.shares[(queue_name, name)] = {
            "quotaShareName": name, "quotaShareArn": arn, "jobQueueArn": queue["jobQueueArn"],
            "capacityLimits": params["capacityLimits"],
            "resourceSharingConfiguration": written_sharing(params["resourceSharingConfiguration"]),
            "preemptionConfiguration": params["preemptionConfiguration"],
            "state": params.get("state", "ENABLED"), "status": "CREATING",
        }
        account.begin(res, "shares", (queue_name, name), "status", "CREATING", "VALID", service.now)

    commit(service, change, arn, params.get("tags"))
    return {"quotaShareName": name, "quotaShareArn": arn}


@operation("DescribeQuotaShare")
def describe_quota_share(service: Endpoint, params: Params) -> Output:
    record = service.account.share(params["quotaShareArn"])
    return with_tags(service, record, record["quotaShareArn"])


@operation("ListQuotaShares")
def list_quota_shares(service: Endpoint, params: Params) -> Output:
    queue = service.account.queue(params["jobQueue"])
    records = service.account.queue_shares(queue["jobQueueName"])
    return listed(params, "ListQuotaShares", "quotaShares", records, dict)  # no tags: ListTagsForResource has them


@operation("UpdateQuotaShare", mutating=True)
def update_quota_share(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.share(params["quotaShareArn"])
    key = _key(record)
    if record["status"] == "DELETING":
        raise client_error(f"Quota share {record['quotaShareName']} is being deleted")
    _check_share(params, None if "resourceSharingConfiguration" in params else record)

    def change(res: Resources) -> None:
        copy_members(res.shares[key], params, _UPDATABLE)
        if "resourceSharingConfiguration" in params:
            res.shares[key]["resourceSharingConfiguration"] = written_sharing(params["resourceSharingConfiguration"])
        account.begin(res, "shares", key, "status", "UPDATING", "VALID", service.now)

    commit(service, change)
    return {"quotaShareName": record["quotaShareName"], "quotaShareArn": record["quotaShareArn"]}


@operation("DeleteQuotaShare", mutating=True)
def delete_quota_share(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.share(params["quotaShareArn"])
    key = _key(record)
    if record["state"] != "DISABLED":
        raise client_error(f"Quota share {record['quotaShareName']} must be DISABLED before it is deleted")
    unfinished = sum(1 for job in service.unfinished_jobs(key[0]) if job.share == key[1])
    if unfinished:
        raise client_error(f"Quota share {record['quotaShareName']} still has {unfinished} unfinished job(s): "
                           "wait for them or terminate them first")
    commit(service, lambda res: account.begin(res, "shares", key, "status", "DELETING", None, service.now))
    return {}
