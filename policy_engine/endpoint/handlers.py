"""One function per implemented operation: input as botocore sends it, output in the operation's shape.

Resource handlers change the account through ``Account.apply`` (so the policy engine's
AWS rules see every change before it is kept); job handlers go through the scheduler.
Each handler returns the output members; the app serialises them as JSON.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from policy_engine import limits
from policy_engine.endpoint.errors import ApiError, client_error
from policy_engine.endpoint.jobs import ServiceJob

if TYPE_CHECKING:
    from policy_engine.endpoint.service import Service

Handler = Callable[["Service", dict], dict]
HANDLERS: dict[str, Handler] = {}
#: Operations that change state: logged to the ``--state`` store and replayed on restart.
MUTATING: set[str] = set()

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
#: Per-job tag giving the simulated run time in seconds.
DURATION_TAG = "batch-quota:duration"
_PAGE = 100


def operation(name: str, mutating: bool = False) -> Callable[[Handler], Handler]:
    def register(function: Handler) -> Handler:
        HANDLERS[name] = function
        if mutating:
            MUTATING.add(name)
        return function

    return register


def _name(value: str, what: str) -> None:
    if not _NAME.match(value):
        raise client_error(f"{what} {value!r} must be 1-128 letters, digits, hyphens (-) or underscores (_)")


def _paginate(items: list, params: dict, what: str) -> tuple[list, str | None]:
    size = params.get("maxResults") or _PAGE
    if not 1 <= size <= _PAGE:
        raise client_error(f"maxResults must be between 1 and {_PAGE}")
    start = 0
    token = params.get("nextToken")
    if token:
        try:
            start = int(token)
        except ValueError:
            raise client_error(f"Invalid nextToken for {what}") from None
    page = items[start:start + size]
    return page, str(start + size) if start + size < len(items) else None


def _with_tags(service: Service, record: dict, arn: str) -> dict:
    tags = service.account.tags.get(arn)
    return {**record, "tags": dict(tags)} if tags else dict(record)


def _set_tags(service: Service, arn: str, tags: dict | None) -> None:
    if tags:
        _check_tags(tags)
        service.account.tags.setdefault(arn, {}).update(tags)


def _check_tags(tags: dict) -> None:
    for key, value in tags.items():
        if not limits.TAG_KEY_LENGTH.minimum <= len(key) <= limits.TAG_KEY_LENGTH.maximum:
            raise client_error(f"Tag key {key!r} must be {limits.TAG_KEY_LENGTH.minimum}-"
                               f"{limits.TAG_KEY_LENGTH.maximum} characters")
        if len(value) > limits.TAG_VALUE_LENGTH.maximum:
            raise client_error(f"Tag value of {key!r} must be at most {limits.TAG_VALUE_LENGTH.maximum} characters")
        if key.lower().startswith("aws:"):
            raise client_error(f"Tag key {key!r}: the aws: prefix is reserved")


# --- service environments -------------------------------------------------------------------


@operation("CreateServiceEnvironment", mutating=True)
def create_service_environment(service: Service, params: dict) -> dict:
    name = params["serviceEnvironmentName"]
    _name(name, "serviceEnvironmentName")
    account = service.account
    if name in account.resources.environments:
        raise client_error(f"Service environment {name} already exists")
    arn = account.arns.environment(name)

    def change(res):
        res.environments[name] = {
            "serviceEnvironmentName": name, "serviceEnvironmentArn": arn,
            "serviceEnvironmentType": params["serviceEnvironmentType"], "state": params.get("state", "ENABLED"),
            "status": "CREATING", "capacityLimits": params["capacityLimits"],
        }
        account.begin(res, "environments", name, "status", "CREATING", "VALID", service.now)

    account.apply(change)
    _set_tags(service, arn, params.get("tags"))
    service.topology_changed()
    return {"serviceEnvironmentName": name, "serviceEnvironmentArn": arn}


def _describe(service: Service, params: dict, operation_name: str, key: str, arn_key: str,
              lookup: Callable[[str], dict], everything: Iterable[dict]) -> dict:
    """A paged ``Describe*`` of the records ``params[key]`` names (AWS leaves out what does not exist), or all."""
    wanted = params.get(key)
    if wanted:
        records = []
        for ref in wanted:
            try:
                records.append(lookup(ref))
            except ApiError:
                continue
    else:
        records = list(everything)
    page, token = _paginate(records, params, operation_name)
    out: dict = {key: [_with_tags(service, r, r[arn_key]) for r in page]}
    if token:
        out["nextToken"] = token
    return out


@operation("DescribeServiceEnvironments")
def describe_service_environments(service: Service, params: dict) -> dict:
    account = service.account
    return _describe(service, params, "DescribeServiceEnvironments", "serviceEnvironments", "serviceEnvironmentArn",
                     account.environment, account.resources.environments.values())


@operation("UpdateServiceEnvironment", mutating=True)
def update_service_environment(service: Service, params: dict) -> dict:
    account = service.account
    record = account.environment(params["serviceEnvironment"])
    name = record["serviceEnvironmentName"]
    if record["status"] == "DELETING":
        raise client_error(f"Service environment {name} is being deleted")

    def change(res):
        env = res.environments[name]
        if "state" in params:
            env["state"] = params["state"]
        if "capacityLimits" in params:
            env["capacityLimits"] = params["capacityLimits"]
        account.begin(res, "environments", name, "status", "UPDATING", "VALID", service.now)

    account.apply(change)
    service.topology_changed()
    return {"serviceEnvironmentName": name, "serviceEnvironmentArn": record["serviceEnvironmentArn"]}


@operation("DeleteServiceEnvironment", mutating=True)
def delete_service_environment(service: Service, params: dict) -> dict:
    account = service.account
    record = account.environment(params["serviceEnvironment"])
    name, arn = record["serviceEnvironmentName"], record["serviceEnvironmentArn"]
    if record["state"] != "DISABLED":
        raise client_error(f"Service environment {name} must be DISABLED before it is deleted")
    users = [q["jobQueueName"] for q in account.resources.queues.values()
             if any(o["serviceEnvironment"] in (name, arn) for o in q.get("serviceEnvironmentOrder") or ())]
    if users:
        raise client_error(f"Service environment {name} is used by job queue(s) {', '.join(users)}")
    account.apply(lambda res: account.begin(res, "environments", name, "status", "DELETING", None, service.now))
    service.topology_changed()
    return {}


# --- scheduling policies ----------------------------------------------------------------------


@operation("CreateSchedulingPolicy", mutating=True)
def create_scheduling_policy(service: Service, params: dict) -> dict:
    name = params["name"]
    _name(name, "name")
    account = service.account
    if name in account.resources.policies:
        raise client_error(f"Scheduling policy {name} already exists")
    quota, fair = params.get("quotaSharePolicy"), params.get("fairsharePolicy")
    if (quota is None) == (fair is None):
        raise client_error("Exactly one of quotaSharePolicy and fairsharePolicy is required")
    arn = account.arns.policy(name)
    record = {"name": name, "arn": arn}
    record.update({"quotaSharePolicy": quota} if quota is not None else {"fairsharePolicy": fair})
    account.apply(lambda res: res.policies.__setitem__(name, record))
    _set_tags(service, arn, params.get("tags"))
    return {"name": name, "arn": arn}


@operation("DescribeSchedulingPolicies")
def describe_scheduling_policies(service: Service, params: dict) -> dict:
    account = service.account
    found = []
    for arn in params["arns"]:
        record = account.resources.policies.get(arn.rsplit("scheduling-policy/", 1)[-1])
        if record is not None and record["arn"] == arn:
            found.append(_with_tags(service, record, arn))
    return {"schedulingPolicies": found}


@operation("ListSchedulingPolicies")
def list_scheduling_policies(service: Service, params: dict) -> dict:
    records = list(service.account.resources.policies.values())
    page, token = _paginate(records, params, "ListSchedulingPolicies")
    out = {"schedulingPolicies": [{"arn": r["arn"]} for r in page]}
    if token:
        out["nextToken"] = token
    return out


@operation("UpdateSchedulingPolicy", mutating=True)
def update_scheduling_policy(service: Service, params: dict) -> dict:
    account = service.account
    record = account.policy(params["arn"])
    name = record["name"]
    if "quotaSharePolicy" in record and "fairsharePolicy" in params:
        raise client_error(f"Scheduling policy {name} is a quota share policy: it cannot become a fair-share policy")
    if "fairsharePolicy" in record and "quotaSharePolicy" in params:
        raise client_error(f"Scheduling policy {name} is a fair-share policy: it cannot become a quota share policy")

    def change(res):
        for key in ("quotaSharePolicy", "fairsharePolicy"):
            if key in params:
                res.policies[name][key] = params[key]

    account.apply(change)
    return {}


@operation("DeleteSchedulingPolicy", mutating=True)
def delete_scheduling_policy(service: Service, params: dict) -> dict:
    account = service.account
    record = account.policy(params["arn"])
    users = [q["jobQueueName"] for q in account.resources.queues.values()
             if q.get("schedulingPolicyArn") == record["arn"]]
    if users:
        raise client_error(f"Scheduling policy {record['name']} is used by job queue(s) {', '.join(users)}")
    account.apply(lambda res: res.policies.pop(record["name"]))
    account.tags.pop(record["arn"], None)
    return {}


# --- job queues ---------------------------------------------------------------------------------


def _check_queue_links(service: Service, params: dict, queue_type: str) -> None:
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
        if action["action"] != "TERMINATE":
            raise client_error("jobStateTimeLimitActions.action must be TERMINATE for SAGEMAKER_TRAINING job queues")
        if action["reason"] not in _TIME_LIMIT_REASONS:
            raise client_error(f"jobStateTimeLimitActions.reason {action['reason']!r} is not one of "
                               f"{', '.join(_TIME_LIMIT_REASONS)}")


_TIME_LIMIT_REASONS = ("CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
                       "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED")


@operation("CreateJobQueue", mutating=True)
def create_job_queue(service: Service, params: dict) -> dict:
    name = params["jobQueueName"]
    _name(name, "jobQueueName")
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

    def change(res):
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

    account.apply(change)
    _set_tags(service, arn, params.get("tags"))
    service.topology_changed()
    return {"jobQueueName": name, "jobQueueArn": arn}


@operation("DescribeJobQueues")
def describe_job_queues(service: Service, params: dict) -> dict:
    account = service.account
    return _describe(service, params, "DescribeJobQueues", "jobQueues", "jobQueueArn",
                     account.queue, account.resources.queues.values())


@operation("UpdateJobQueue", mutating=True)
def update_job_queue(service: Service, params: dict) -> dict:
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

    def change(res):
        queue = res.queues[name]
        for key in ("state", "schedulingPolicyArn", "priority", "serviceEnvironmentOrder", "jobStateTimeLimitActions"):
            if key in params:
                queue[key] = params[key]
        account.begin(res, "queues", name, "status", "UPDATING", "VALID", service.now)

    account.apply(change)
    service.topology_changed()
    return {"jobQueueName": name, "jobQueueArn": record["jobQueueArn"]}


@operation("DeleteJobQueue", mutating=True)
def delete_job_queue(service: Service, params: dict) -> dict:
    account = service.account
    record = account.queue(params["jobQueue"])
    name = record["jobQueueName"]
    if record["state"] != "DISABLED":
        raise client_error(f"Job queue {name} must be DISABLED before it is deleted")
    # AWS terminates the jobs of a deleted queue; its quota shares go with it
    for job in list(service.unfinished_jobs(name)):
        service.scheduler.terminate(job, "Terminated: the job queue was deleted")

    def change(res):
        for key in [key for key in res.shares if key[0] == name]:
            account._remove(res, "shares", key)
        account.begin(res, "queues", name, "status", "DELETING", None, service.now)

    account.apply(change)
    service.scheduler.jobs.drop_queue(name)
    service.topology_changed()
    return {}


# --- quota shares ------------------------------------------------------------------------------


def _check_share(params: dict, record: dict | None = None) -> None:
    sharing = params.get("resourceSharingConfiguration") or (record or {}).get("resourceSharingConfiguration")
    if sharing and "borrowLimit" in sharing and sharing["strategy"] != "LEND_AND_BORROW":
        raise client_error(f"borrowLimit is only valid with the LEND_AND_BORROW strategy (got {sharing['strategy']})")
    if sharing and sharing.get("borrowLimit", -1) < -1:
        raise client_error(f"borrowLimit must be -1 (unlimited) or a percent >= 0, got {sharing['borrowLimit']}")
    for limit in params.get("capacityLimits") or ():
        if limit["maxCapacity"] < limits.SHARE_MAX_CAPACITY.minimum:
            raise client_error(f"capacityLimits: maxCapacity of {limit['capacityUnit']} must be at least "
                               f"{limits.SHARE_MAX_CAPACITY.minimum}, got {limit['maxCapacity']}")


@operation("CreateQuotaShare", mutating=True)
def create_quota_share(service: Service, params: dict) -> dict:
    account = service.account
    queue = account.queue(params["jobQueue"])
    queue_name = queue["jobQueueName"]
    name = params["quotaShareName"]
    _name(name, "quotaShareName")
    if queue["status"] != "VALID":
        raise client_error(f"Job queue {queue_name} is {queue['status']}: quota shares attach to a VALID job queue")
    policy = account.policy_of(queue)
    if policy is None or "quotaSharePolicy" not in policy:
        raise client_error(f"Job queue {queue_name} has no quota share scheduling policy")
    if (queue_name, name) in account.resources.shares:
        raise client_error(f"Quota share {name} already exists in job queue {queue_name}")
    _check_share(params)
    arn = account.arns.share(queue_name, name)

    def change(res):
        res.shares[(queue_name, name)] = {
            "quotaShareName": name, "quotaShareArn": arn, "jobQueueArn": queue["jobQueueArn"],
            "capacityLimits": params["capacityLimits"],
            "resourceSharingConfiguration": params["resourceSharingConfiguration"],
            "preemptionConfiguration": params["preemptionConfiguration"],
            "state": params.get("state", "ENABLED"), "status": "CREATING",
        }
        account.begin(res, "shares", (queue_name, name), "status", "CREATING", "VALID", service.now)

    account.apply(change)
    _set_tags(service, arn, params.get("tags"))
    service.topology_changed()
    return {"quotaShareName": name, "quotaShareArn": arn}


@operation("DescribeQuotaShare")
def describe_quota_share(service: Service, params: dict) -> dict:
    record = service.account.share(params["quotaShareArn"])
    return _with_tags(service, record, record["quotaShareArn"])


@operation("ListQuotaShares")
def list_quota_shares(service: Service, params: dict) -> dict:
    queue = service.account.queue(params["jobQueue"])
    records = service.account.queue_shares(queue["jobQueueName"])
    page, token = _paginate(records, params, "ListQuotaShares")
    out = {"quotaShares": [dict(r) for r in page]}  # no tags: ListTagsForResource has them
    if token:
        out["nextToken"] = token
    return out


@operation("UpdateQuotaShare", mutating=True)
def update_quota_share(service: Service, params: dict) -> dict:
    account = service.account
    record = account.share(params["quotaShareArn"])
    key = (record["jobQueueArn"].rsplit("job-queue/", 1)[-1], record["quotaShareName"])
    if record["status"] == "DELETING":
        raise client_error(f"Quota share {record['quotaShareName']} is being deleted")
    _check_share(params, None if "resourceSharingConfiguration" in params else record)

    def change(res):
        share = res.shares[key]
        for name in ("capacityLimits", "resourceSharingConfiguration", "preemptionConfiguration", "state"):
            if name in params:
                share[name] = params[name]
        account.begin(res, "shares", key, "status", "UPDATING", "VALID", service.now)

    account.apply(change)
    service.topology_changed()
    return {"quotaShareName": record["quotaShareName"], "quotaShareArn": record["quotaShareArn"]}


@operation("DeleteQuotaShare", mutating=True)
def delete_quota_share(service: Service, params: dict) -> dict:
    account = service.account
    record = account.share(params["quotaShareArn"])
    key = (record["jobQueueArn"].rsplit("job-queue/", 1)[-1], record["quotaShareName"])
    if record["state"] != "DISABLED":
        raise client_error(f"Quota share {record['quotaShareName']} must be DISABLED before it is deleted")
    unfinished = sum(1 for job in service.unfinished_jobs(key[0]) if job.share == key[1])
    if unfinished:
        raise client_error(f"Quota share {record['quotaShareName']} still has {unfinished} unfinished job(s): "
                           "wait for them or terminate them first")
    account.apply(lambda res: account.begin(res, "shares", key, "status", "DELETING", None, service.now))
    service.topology_changed()
    return {}


# --- service jobs ------------------------------------------------------------------------------


def _payload(text: str) -> dict:
    try:
        payload = json.loads(text)
    except ValueError as error:
        raise client_error(f"serviceRequestPayload is not valid JSON: {error}") from None
    if not isinstance(payload, dict):
        raise client_error("serviceRequestPayload must be a JSON object (a SageMaker CreateTrainingJob request)")
    return payload


def _resources(payload: dict) -> tuple[str, int]:
    config = payload.get("ResourceConfig")
    if not isinstance(config, dict):
        raise client_error("serviceRequestPayload.ResourceConfig is required (InstanceType, InstanceCount)")
    instance_type, count = config.get("InstanceType"), config.get("InstanceCount", 1)
    if not isinstance(instance_type, str) or not instance_type:
        raise client_error("serviceRequestPayload.ResourceConfig.InstanceType is required")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise client_error(f"serviceRequestPayload.ResourceConfig.InstanceCount must be an integer >= 1, got {count!r}")
    return instance_type, count


def _duration(service: Service, payload: dict, tags: dict) -> float:
    text = tags.get(DURATION_TAG)
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise client_error(f"Tag {DURATION_TAG} must be a positive number of seconds, got {text!r}")
        return value
    stopping = payload.get("StoppingCondition")
    if isinstance(stopping, dict) and stopping.get("MaxRuntimeSeconds") is not None:
        value = stopping["MaxRuntimeSeconds"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise client_error(f"serviceRequestPayload.StoppingCondition.MaxRuntimeSeconds must be an integer >= 1, "
                               f"got {value!r}")
        return float(value)
    return service.default_duration


@operation("SubmitServiceJob", mutating=True)
def submit_service_job(service: Service, params: dict) -> dict:
    service.throttle_submit()
    account = service.account
    name = params["jobName"]
    _name(name, "jobName")
    queue = account.queue(params["jobQueue"])
    queue_name = queue["jobQueueName"]
    token = params.get("clientToken")
    if token:
        previous = service.scheduler.jobs.by_token.get((queue_name, token))
        if previous is not None:
            if previous.name == name and previous.payload == params["serviceRequestPayload"]:
                return {"jobArn": previous.arn, "jobName": previous.name, "jobId": previous.id}
            raise client_error(f"clientToken {token} was already used for another request")
    if queue["jobQueueType"] != "SAGEMAKER_TRAINING":
        raise client_error(f"Job queue {queue_name} is not a SAGEMAKER_TRAINING job queue")
    if queue["state"] != "ENABLED" or queue["status"] not in ("VALID", "UPDATING"):
        raise client_error(f"Job queue {queue_name} is {queue['state']}/{queue['status']}: it accepts no jobs")
    policy = account.policy_of(queue)
    share_name = params.get("quotaShareName")
    if params.get("shareIdentifier"):
        raise client_error("shareIdentifier is for fair-share queues; this job queue uses quota shares"
                           if policy and "quotaSharePolicy" in policy else
                           "shareIdentifier (fair-share scheduling) is not supported by batch-quota serve")
    if policy is None or "quotaSharePolicy" not in policy:
        raise client_error(f"Job queue {queue_name} has no quota share scheduling policy: batch-quota serve "
                           "schedules quota-share queues only")
    if not share_name:
        raise client_error(f"quotaShareName is required: job queue {queue_name} has a quota share scheduling policy")
    share = account.resources.shares.get((queue_name, share_name))
    if share is None:
        raise client_error(f"Quota share {share_name} does not exist in job queue {queue_name}")
    if share["state"] != "ENABLED" or share["status"] not in ("VALID", "UPDATING"):
        raise client_error(f"Quota share {share_name} is {share['state']}/{share['status']}: it accepts no new jobs")
    payload = _payload(params["serviceRequestPayload"])
    instance_type, count = _resources(payload)
    units = {limit["capacityUnit"] for limit in share["capacityLimits"]}
    if instance_type not in units:
        raise client_error(f"Quota share {share_name} has no capacity limit for {instance_type} "
                           f"(it has {', '.join(sorted(units))})")
    tags = params.get("tags") or {}
    _check_tags(tags)
    duration = _duration(service, payload, tags)
    priority = params.get("schedulingPriority", 0)
    if not limits.JOB_PRIORITY.minimum <= priority <= limits.JOB_PRIORITY.maximum:
        raise client_error(f"schedulingPriority must be {limits.JOB_PRIORITY.minimum}-{limits.JOB_PRIORITY.maximum}, "
                           f"got {priority}")
    preemption = params.get("preemptionConfiguration") or {}
    retries = preemption.get("preemptionRetriesBeforeTermination")
    if retries is not None and retries < 0:
        raise client_error(f"preemptionRetriesBeforeTermination must be >= 0, got {retries}")
    retry = params.get("retryStrategy")
    attempts = retry["attempts"] if retry else 1
    if not 1 <= attempts <= 10:
        raise client_error(f"retryStrategy.attempts must be 1-10, got {attempts}")
    job_id = service.new_id()
    record = ServiceJob(
        id=job_id, arn=account.arns.job(job_id), name=name, queue=queue_name, share=share_name,
        payload=params["serviceRequestPayload"], tags=dict(tags), retry=retry, preemption_config=params.get(
            "preemptionConfiguration"), timeout=params.get("timeoutConfig"), priority=priority,
        instance_type=instance_type, instances=count,
        training_name=str(payload.get("TrainingJobName") or name), client_token=token,
    )
    timeout = (params.get("timeoutConfig") or {}).get("attemptDurationSeconds")
    if timeout is not None and timeout < 1:
        raise client_error(f"timeoutConfig.attemptDurationSeconds must be >= 1, got {timeout}")
    service.scheduler.submit(record, duration, retries, attempts, timeout)
    return {"jobArn": record.arn, "jobName": name, "jobId": job_id}


def _job(service: Service, job_id: str) -> ServiceJob:
    """A job by id or by ARN (the SageMaker SDK passes the ARN as ``jobId``)."""
    if job_id.startswith("arn:"):
        record = service.scheduler.jobs.by_id.get(job_id.rsplit("service-job/", 1)[-1])
        if record is not None and record.arn == job_id:
            return record
        raise client_error(f"Service job {job_id} does not exist")
    record = service.scheduler.jobs.by_id.get(job_id)
    if record is None:
        raise client_error(f"Service job {job_id} does not exist")
    return record


def _usage(record: ServiceJob) -> list[dict]:
    return [{"capacityUnit": record.instance_type, "quantity": float(record.instances)}]


def _summary(service: Service, record: ServiceJob) -> dict:
    ms = service.ms
    out = {
        "capacityUsage": _usage(record), "createdAt": ms(record.created), "jobArn": record.arn, "jobId": record.id,
        "jobName": record.name, "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": record.share,
        "status": record.status,
    }
    if record.reason:
        out["statusReason"] = record.reason
    if record.attempts:
        out["latestAttempt"] = {"serviceResourceId": {"name": "TrainingJobArn",
                                                      "value": record.attempts[-1]["resource"]}}
    for key, value in (("scheduledAt", record.scheduled), ("startedAt", record.started),
                       ("stoppedAt", record.stopped)):
        if value is not None:
            out[key] = ms(value)
    return out


def _attempt(service: Service, attempt: dict) -> dict:
    out = {"serviceResourceId": {"name": "TrainingJobArn", "value": attempt["resource"]},
           "startedAt": service.ms(attempt["startedAt"])}
    if "stoppedAt" in attempt:
        out["stoppedAt"] = service.ms(attempt["stoppedAt"])
        out["statusReason"] = attempt["statusReason"]
    return out


@operation("DescribeServiceJob")
def describe_service_job(service: Service, params: dict) -> dict:
    record = _job(service, params["jobId"])
    out = _summary(service, record)
    del out["capacityUsage"]
    out.update({
        "capacityUsage": _usage(record), "isTerminated": record.terminated, "jobQueue": service.account.arns.queue(
            record.queue), "schedulingPriority": record.priority, "serviceRequestPayload": record.payload,
        "attempts": [_attempt(service, a) for a in record.attempts],
        "preemptionSummary": {"preemptedAttemptCount": record.preempted_count,
                              "recentPreemptedAttempts": [_attempt(service, a) for a in record.preempted]},
        # startedAt is required by the model: 0 until the job first runs
        "startedAt": service.ms(record.started) if record.started is not None else 0,
    })
    if record.status == "RUNNABLE":
        reason = service.scheduler.waiting_reason(record)
        if reason:
            out["statusReason"] = reason
    for key, value in (("retryStrategy", record.retry), ("preemptionConfiguration", record.preemption_config),
                       ("timeoutConfig", record.timeout)):
        if value is not None:
            out[key] = value
    if record.tags:
        out["tags"] = dict(record.tags)
    return out


_FILTERS = ("JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT", "SHARE_IDENTIFIER", "QUOTA_SHARE_NAME")


@operation("ListServiceJobs")
def list_service_jobs(service: Service, params: dict) -> dict:
    jobs = service.scheduler.jobs
    size = params.get("maxResults") or _PAGE
    if not 1 <= size <= _PAGE:
        raise client_error(f"maxResults must be between 1 and {_PAGE}, got {size}")
    below = None
    if params.get("nextToken"):
        try:
            below = int(params["nextToken"])
        except ValueError:
            raise client_error("Invalid nextToken") from None
    if params.get("jobQueue"):
        queue = service.account.queue(params["jobQueue"])["jobQueueName"]
    else:
        raise client_error("jobQueue is required")
    filters = params.get("filters") or []
    if len(filters) > 1:
        raise client_error("Only one filter can be used at a time")
    status = params.get("jobStatus")
    floor = 0
    if not filters:
        key = (queue, None, status or "RUNNING")
    else:
        name, values = filters[0].get("name"), filters[0].get("values") or []
        if name not in _FILTERS:
            raise client_error(f"Unknown filter name {name!r}: one of {', '.join(_FILTERS)}")
        if len(values) != 1:
            raise client_error(f"Filter {name} takes exactly one value")
        value = values[0]
        if name == "QUOTA_SHARE_NAME":
            key = (queue, value, status) if status else (queue, value)
        elif name == "SHARE_IDENTIFIER":
            return {"jobSummaryList": []}  # fair-share identifiers: no job has one here
        elif name == "JOB_NAME":
            key = jobs.named(queue, value)
        else:
            try:
                bound = int(value)
            except ValueError:
                raise client_error(f"Filter {name} takes epoch milliseconds, got {value!r}") from None
            key = (queue,)
            seconds = (bound - service.origin_ms) / 1000
            if name == "BEFORE_CREATED_AT":  # created < bound: below the first created at or after it
                limit = jobs.first_created_after(key, seconds, strictly=False)
                below = limit if below is None else min(below, limit)
            else:  # created > bound
                floor = jobs.first_created_after(key, seconds, strictly=True)
    page, token = jobs.page(key, below, size, floor)
    out = {"jobSummaryList": [_summary(service, record) for record in page]}
    if token is not None:
        out["nextToken"] = str(token)
    return out


@operation("UpdateServiceJob", mutating=True)
def update_service_job(service: Service, params: dict) -> dict:
    record = _job(service, params["jobId"])
    priority = params["schedulingPriority"]
    if not limits.JOB_PRIORITY.minimum <= priority <= limits.JOB_PRIORITY.maximum:
        raise client_error(f"schedulingPriority must be {limits.JOB_PRIORITY.minimum}-{limits.JOB_PRIORITY.maximum}, "
                           f"got {priority}")
    if record.status in ("SUCCEEDED", "FAILED"):
        raise client_error(f"Service job {record.id} is {record.status}: its priority cannot change")
    service.scheduler.update_priority(record, priority)
    return {"jobArn": record.arn, "jobName": record.name, "jobId": record.id}


@operation("TerminateServiceJob", mutating=True)
def terminate_service_job(service: Service, params: dict) -> dict:
    record = _job(service, params["jobId"])
    if record.status not in ("SUCCEEDED", "FAILED"):
        service.scheduler.terminate(record, f"Terminated by user: {params['reason']}")
    return {}


#: AWS's bound on one ``TerminateServiceJobs`` call.
TERMINATE_BATCH = 50


@operation("TerminateServiceJobs", mutating=True)
def terminate_service_jobs(service: Service, params: dict) -> dict:
    """The bulk form, as AWS documents it: each job reported on its own, HTTP 200 even when some fail;
    a job that cannot be found counts as terminated, a malformed identifier is a ``ValidationException`` entry."""
    ids = params["jobs"]
    if not 1 <= len(ids) <= TERMINATE_BATCH:
        raise client_error(f"jobs must list 1-{TERMINATE_BATCH} service job IDs, got {len(ids)}")
    successful: list[str] = []
    errors: list[dict] = []
    for job_id in ids:
        if not job_id or job_id != job_id.strip() or ("/" in job_id and not job_id.startswith("arn:")):
            errors.append({"job": job_id, "code": "ValidationException",
                           "message": f"Service job identifier {job_id!r} is not valid"})
            continue
        try:
            record = _job(service, job_id)
        except ApiError:
            successful.append(job_id)  # AWS: jobs that cannot be found are treated as processed
            continue
        if record.status not in ("SUCCEEDED", "FAILED"):
            service.scheduler.terminate(record, f"Terminated by user: {params['reason']}")
        successful.append(job_id)
    return {"successful": successful, "errors": errors}


@operation("GetJobQueueSnapshot")
def get_job_queue_snapshot(service: Service, params: dict) -> dict:
    queue = service.account.queue(params["jobQueue"])
    name = queue["jobQueueName"]
    jobs = service.scheduler.jobs
    records = jobs.records
    now_ms = service.ms(service.now)

    def front(seqs) -> list[dict]:
        """The first 100 in scheduling order (priority, then submission): O(n) for n waiting jobs."""
        first = heapq.nsmallest(_PAGE, (records[seq] for seq in seqs), key=lambda r: (-r.priority, r.seq))
        return [{"jobArn": r.arn, "earliestTimeAtPosition": service.ms(r.created)} for r in first]

    shares = {record["quotaShareName"]: front(jobs.lists[(name, record["quotaShareName"], "RUNNABLE")])
              for record in service.account.queue_shares(name)
              if jobs.lists.get((name, record["quotaShareName"], "RUNNABLE"))}
    total: dict[str, int] = {}
    top = []
    for record in service.account.queue_shares(name):
        usage: dict[str, int] = {}
        for seq in _active(jobs, name, record["quotaShareName"]):
            job = jobs.records[seq]
            usage[job.instance_type] = usage.get(job.instance_type, 0) + job.instances
        for unit, count in usage.items():
            total[unit] = total.get(unit, 0) + count
        if usage:
            top.append((sum(usage.values()), record["quotaShareName"], usage))
    top.sort(key=lambda item: (-item[0], item[1]))
    return {
        "frontOfQueue": {"jobs": front(jobs.lists.get((name, None, "RUNNABLE"), ())), "lastUpdatedAt": now_ms},
        "frontOfQuotaShares": {"quotaShares": shares, "lastUpdatedAt": now_ms},
        "queueUtilization": {
            "totalCapacityUsage": [{"capacityUnit": u, "quantity": float(n)} for u, n in total.items()],
            "quotaShareUtilization": {"topCapacityUtilization": [
                {"quotaShareName": share, "capacityUsage": [{"capacityUnit": u, "quantity": float(n)}
                                                            for u, n in usage.items()]}
                for _, share, usage in top]},
            "lastUpdatedAt": now_ms,
        },
    }


def _active(jobs, queue: str, share: str):
    for status in ("SCHEDULED", "STARTING", "RUNNING"):
        yield from jobs.lists.get((queue, share, status), ())


# --- tags ----------------------------------------------------------------------------------------


def _tag_target(service: Service, arn: str) -> dict:
    """The tag dictionary of a resource or job ARN (created for a resource without tags yet)."""
    if ":service-job/" in arn:
        return _job(service, arn.rsplit("/", 1)[-1]).tags
    account = service.account
    if "/quota-share/" in arn:
        account.share(arn)
    elif ":job-queue/" in arn:
        account.queue(arn)
    elif ":service-environment/" in arn:
        account.environment(arn)
    elif ":scheduling-policy/" in arn:
        account.policy(arn)
    else:
        raise client_error(f"Resource {arn} is not a resource batch-quota serve knows")
    return account.tags.setdefault(arn, {})


@operation("TagResource", mutating=True)
def tag_resource(service: Service, params: dict) -> dict:
    tags = _tag_target(service, params["resourceArn"])
    _check_tags(params["tags"])
    if len({**tags, **params["tags"]}) > limits.TAG_COUNT.maximum:
        raise client_error(f"A resource has at most {limits.TAG_COUNT.maximum} tags")
    tags.update(params["tags"])
    return {}


@operation("UntagResource", mutating=True)
def untag_resource(service: Service, params: dict) -> dict:
    tags = _tag_target(service, params["resourceArn"])
    for key in params["tagKeys"]:
        tags.pop(key, None)
    return {}


@operation("ListTagsForResource")
def list_tags_for_resource(service: Service, params: dict) -> dict:
    return {"tags": dict(_tag_target(service, params["resourceArn"]))}
