"""Scheduling policies: a quota share policy or a fair-share one, never turned into the other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.adapters.endpoint.base.account import Resources
from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.handlers.registry import (
    Output,
    Params,
    check_name,
    copy_members,
    listed,
    operation,
    set_tags,
    with_tags,
)

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint

_KINDS = ("quotaSharePolicy", "fairsharePolicy")


@operation("CreateSchedulingPolicy", mutating=True)
def create_scheduling_policy(service: Endpoint, params: Params) -> Output:
    name = params["name"]
    check_name(name, "name")
    account = service.account
    if name in account.resources.policies:
        raise client_error(f"Scheduling policy {name} already exists")
    quota, fair = params.get("quotaSharePolicy"), params.get("fairsharePolicy")
    if (quota is None) == (fair is None):
        raise client_error("Exactly one of quotaSharePolicy and fairsharePolicy is required")
    arn = account.arns.policy(name)
    record: Params = {"name": name, "arn": arn}
    record.update({"quotaSharePolicy": quota} if quota is not None else {"fairsharePolicy": fair})
    account.apply(lambda res: res.policies.__setitem__(name, record))
    set_tags(service, arn, params.get("tags"))
    return {"name": name, "arn": arn}


@operation("DescribeSchedulingPolicies")
def describe_scheduling_policies(service: Endpoint, params: Params) -> Output:
    account = service.account
    found = []
    for arn in params["arns"]:
        record = account.resources.policies.get(arn.rsplit("scheduling-policy/", 1)[-1])
        if record is not None and record["arn"] == arn:
            found.append(with_tags(service, record, arn))
    return {"schedulingPolicies": found}


@operation("ListSchedulingPolicies")
def list_scheduling_policies(service: Endpoint, params: Params) -> Output:
    records = list(service.account.resources.policies.values())
    return listed(params, "ListSchedulingPolicies", "schedulingPolicies", records, lambda r: {"arn": r["arn"]})


@operation("UpdateSchedulingPolicy", mutating=True)
def update_scheduling_policy(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.policy(params["arn"])
    name = record["name"]
    if "quotaSharePolicy" in record and "fairsharePolicy" in params:
        raise client_error(f"Scheduling policy {name} is a quota share policy: it cannot become a fair-share policy")
    if "fairsharePolicy" in record and "quotaSharePolicy" in params:
        raise client_error(f"Scheduling policy {name} is a fair-share policy: it cannot become a quota share policy")

    def change(res: Resources) -> None:
        copy_members(res.policies[name], params, _KINDS)

    account.apply(change)
    return {}


@operation("DeleteSchedulingPolicy", mutating=True)
def delete_scheduling_policy(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.policy(params["arn"])
    users = [q["jobQueueName"] for q in account.resources.queues.values()
             if q.get("schedulingPolicyArn") == record["arn"]]
    if users:
        raise client_error(f"Scheduling policy {record['name']} is used by job queue(s) {', '.join(users)}")
    account.apply(lambda res: res.policies.pop(record["name"]))
    account.tags.pop(record["arn"], None)
    return {}
