"""Job queues: SAGEMAKER_TRAINING queues on one service environment, with their time-limit actions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.adapters.endpoint.base.account import Resources
from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.base.status_reasons import QUEUE_DELETED
from policy_engine.adapters.endpoint.handlers.registry import (
    Output,
    Params,
    check_name,
    commit,
    copy_members,
    describe,
    operation,
)
from policy_engine.foundation import limits

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint

_UPDATABLE = ("state", "schedulingPolicyArn", "priority", "serviceEnvironmentOrder", "jobStateTimeLimitActions")


def _check_queue_links(service: Endpoint, params: Params, queue_type: str) -> None:
    account = service.account
    if queue_type != "SAGEMAKER_TRAINING":
        raise client_error(f"jobQueueType {queue_type} is not supported by batch-quota serve "
                           "(only SAGEMAKER_TRAINING queues, which run service jobs)")
    if params.get("computeEnvironmentOrder"):
        raise client_error("A SAGEMAKER_TRAINING job queue takes serviceEnvironmentOrder, not computeEnvironmentOrder")
    for order in params.get("serviceEnvironmentOrder") or ():
        account.environment(order["serviceEnvironment"])
    arn = params.get("schedulingPolicyArn")
    if arn:
        account.policy(arn)
    for action in params.get("jobStateTimeLimitActions") or ():
        if action["action"] != limits.TIME_LIMIT_ACTION:
            raise client_error(f"jobStateTimeLimitActions.action must be {limits.TIME_LIMIT_ACTION} for "
                               "SAGEMAKER_TRAINING job queues")
        if action["reason"] not in limits.TIME_LIMIT_REASONS:
            raise client_error(f"jobStateTimeLimitActions.reason {action['reason']!r} is not one of "
                               f"{', '.join(limits.TIME_LIMIT_REASONS)}")


@operation("CreateJobQueue", mutating=True)
def create_job_queue(service: Endpoint, params: Params) -> Output:
    name = params["jobQueueName"]
    check_name(name, "jobQueueName")
    account = service.account
    if name in account.resources.queues:
        raise client_error(f"Job queue {name} already exists")
    queue_type = params.get("jobQueueType", "ECS")
    _check_queue_links(service, params, queue_type)
    order = params.get("serviceEnvironmentOrder") or []
    if len(order) != 1:
        raise client_error("A SAGEMAKER_TRAINING job queue has exactly one service environment in "
                           f"serviceEnvironmentOrder (got {len(order)})")
    arn = account.arns.queue(name)

    def change(res: Resources) -> None:
        record = {
            "jobQueueName": name, "jobQueueArn": arn, "state": params.get("state", "ENABLED"), "status": "CREATING",
            "statusReason": "JobQueue Healthy", "priority": params["priority"], "computeEnvironmentOrder": [],
            "serviceEnvironmentOrder": order, "jobQueueType": queue_type,
            "jobStateTimeLimitActions": params.get("jobStateTimeLimitActions") or [],
        }
        if params.get("schedulingPolicyArn"):
            record["schedulingPolicyArn"] = params["schedulingPolicyArn"]
        res.queues[name] = record
        account.begin(res, "queues", name, "status", "CREATING", "VALID", service.now)

    commit(service, change, arn, params.get("tags"))
    return {"jobQueueName": name, "jobQueueArn": arn}


@operation("DescribeJobQueues")
def describe_job_queues(service: Endpoint, params: Params) -> Output:
    account = service.account
    return describe(service, params, "DescribeJobQueues", "jobQueues", "jobQueueArn",
                    account.queue, account.resources.queues.values())


@operation("UpdateJobQueue", mutating=True)
def update_job_queue(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.queue(params["jobQueue"])
    name = record["jobQueueName"]
    if record["status"] == "DELETING":
        raise client_error(f"Job queue {name} is being deleted")
    _check_queue_links(service, params, record["jobQueueType"])
    if "serviceEnvironmentOrder" in params and len(params["serviceEnvironmentOrder"]) != 1:
        raise client_error("A SAGEMAKER_TRAINING job queue has exactly one service environment in "
                           "serviceEnvironmentOrder")
    policy = params.get("schedulingPolicyArn")
    if policy and record.get("schedulingPolicyArn") and policy != record["schedulingPolicyArn"]:
        old = account.policy_of(record)
        new = account.policy(policy)
        if old is not None and ("quotaSharePolicy" in old) != ("quotaSharePolicy" in new):
            raise client_error(f"Job queue {name}: a quota share policy cannot be replaced by a fair-share policy "
                               "(or the reverse)")

    def change(res: Resources) -> None:
        copy_members(res.queues[name], params, _UPDATABLE)
        account.begin(res, "queues", name, "status", "UPDATING", "VALID", service.now)

    commit(service, change)
    return {"jobQueueName": name, "jobQueueArn": record["jobQueueArn"]}


@operation("DeleteJobQueue", mutating=True)
def delete_job_queue(service: Endpoint, params: Params) -> Output:
    account = service.account
    record = account.queue(params["jobQueue"])
    name = record["jobQueueName"]
    if record["state"] != "DISABLED":
        raise client_error(f"Job queue {name} must be DISABLED before it is deleted")
    # AWS terminates the jobs of a deleted queue; its quota shares go with it
    for job in list(service.unfinished_jobs(name)):
        service.scheduler.terminate(job, QUEUE_DELETED)

    def change(res: Resources) -> None:
        for key in [key for key in res.shares if key[0] == name]:
            account.remove(res, "shares", key)
        account.begin(res, "queues", name, "status", "DELETING", None, service.now)

    service.account.apply(change)
    service.scheduler.jobs.drop_queue(name)
    service.topology_changed()
    return {}
