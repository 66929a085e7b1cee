"""Service environments: create, describe, update, delete."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.adapters.endpoint.base.account import Resources
from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.handlers.registry import (
    Output,
    Params,
    check_name,
    commit,
    copy_members,
    describe,
    operation,
)

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint


@operation("CreateServiceEnvironment", mutating=True)
def create_service_environment(service: Endpoint, params: Params) -> Output:
    name = params["serviceEnvironmentName"]
    check_name(name, "serviceEnvironmentName")
    account = service.account
    if name in account.resources.environments:
        raise client_error(f"Service environment {name} already exists")
    arn = account.arns.environment(name)

    def change(res: Resources) -> None:
        res.environments[name] = {
            "serviceEnvironmentName": name, "serviceEnvironmentArn": arn,
            "serviceEnvironmentType": params["serviceEnvironmentType"], "state": params.get("state", "ENABLED"),
            "status": "CREATING", "capacityLimits": params["capacityLimits"],
        }
        account.begin(res, "environments", name, "status", "CREATING", "VALID", service.now)

    commit(service, change, arn, params.get("tags"))
    return {"serviceEnvironmentName": name, "serviceEnvironmentArn": arn}


@operation("DescribeServiceEnvironments")
def describe_service_environments(service: Endpoint, params: Params) -> Output:
    account = service.account
    return describe(service, params, "DescribeServiceEnvironments", "serviceEnvironments", "serviceEnvironmentArn",
                    account.environment, account.resources.environments.values())


@operation("UpdateServiceEnvironment", mutating=True)
def update_service_environment(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.environment(params["serviceEnvironment"])
    name = record["serviceEnvironmentName"]
    if record["status"] == "DELETING":
        raise client_error(f"Service environment {name} is being deleted")

    def change(res: Resources) -> None:
        copy_members(res.environments[name], params, ("state", "capacityLimits"))
        account.begin(res, "environments", name, "status", "UPDATING", "VALID", service.now)

    commit(service, change)
    return {"serviceEnvironmentName": name, "serviceEnvironmentArn": record["serviceEnvironmentArn"]}


@operation("DeleteServiceEnvironment", mutating=True)
def delete_service_environment(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.environment(params["serviceEnvironment"])
    name, arn = record["serviceEnvironmentName"], record["serviceEnvironmentArn"]
    if record["state"] != "DISABLED":
        raise client_error(f"Service environment {name} must be DISABLED before it is deleted")
    users = [q["jobQueueName"] for q in account.resources.queues.values()
             if any(o["serviceEnvironment"] in (name, arn) for o in q.get("serviceEnvironmentOrder") or ())]
    if users:
        raise client_error(f"Service environment {name} is used by job queue(s) {', '.join(users)}")
    commit(service, lambda res: account.begin(res, "environments", name, "status", "DELETING", None, service.now))
    return {}
