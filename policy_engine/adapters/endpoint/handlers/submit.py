"""``SubmitServiceJob``: a SageMaker training request checked as AWS does, then handed to the scheduler.

The simulated run time comes from the ``batch-quota:duration`` tag, else the payload's
``StoppingCondition.MaxRuntimeSeconds``, else ``serve --default-duration``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policy_engine.adapters.aws.service_jobs import DURATION_TAG  # the run time's tag, which history reads back
from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.base.jobs import ServiceJob
from policy_engine.adapters.endpoint.base.protocol import json_object
from policy_engine.adapters.endpoint.handlers.registry import (
    Output,
    Params,
    check_name,
    check_priority,
    check_tags,
    operation,
)
from policy_engine.foundation import limits
from policy_engine.foundation.bounds import SECONDS

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint

__all__ = ["DURATION_TAG", "submit_service_job"]


def _resources(payload: dict[str, Any]) -> tuple[str, int]:
    config = payload.get("ResourceConfig")
    if not isinstance(config, dict):
        raise client_error("serviceRequestPayload.ResourceConfig is required (InstanceType, InstanceCount)")
    instance_type, count = config.get("InstanceType"), config.get("InstanceCount", 1)
    if not isinstance(instance_type, str) or not instance_type:
        raise client_error("serviceRequestPayload.ResourceConfig.InstanceType is required")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise client_error(f"serviceRequestPayload.ResourceConfig.InstanceCount must be an integer >= 1, got {count!r}")
    return instance_type, count


def _plan(service: Endpoint, payload: dict[str, Any], instance_type: str) -> str | None:
    """The name of the training plan ``ResourceConfig.TrainingPlanArn`` names (by its ARN, as SageMaker takes it),
    or ``None``. A plan the account does not have, or of another instance type, is refused at submission
    (SageMaker would refuse the training job; docs/training_plans.md)."""
    arn = payload["ResourceConfig"].get("TrainingPlanArn")
    if arn is None:
        return None
    if not isinstance(arn, str) or not arn:
        raise client_error(f"serviceRequestPayload.ResourceConfig.TrainingPlanArn must be a training plan ARN, "
                           f"got {arn!r}")
    plan = next((p for p in service.training_plans() if p.arn == arn), None)
    if plan is None:
        known = ", ".join(p.arn for p in service.training_plans()) or "none"
        raise client_error(f"serviceRequestPayload.ResourceConfig.TrainingPlanArn {arn} names no training plan of "
                           f"this account (its plans: {known})")
    if plan.instance_type != instance_type:
        raise client_error(f"Training plan {plan.name} reserves {plan.instance_type}; the job asks for "
                           f"{instance_type} (ResourceConfig.InstanceType)")
    return plan.name


def _max_runtime(payload: dict[str, Any]) -> int | None:
    """``StoppingCondition.MaxRuntimeSeconds`` (checked by ``_duration``), or ``None``."""
    stopping = payload.get("StoppingCondition")
    runtime = stopping.get("MaxRuntimeSeconds") if isinstance(stopping, dict) else None
    return runtime if isinstance(runtime, int) and not isinstance(runtime, bool) else None


def _duration(service: Endpoint, payload: dict[str, Any], tags: dict[str, str]) -> float:
    """The job's run time in simulated seconds; it must end by the latest date (``bounds.MAX_INSTANT``)."""
    duration = _given_duration(service, payload, tags)
    problem = service.instant_problem(service.now + duration, f"A job of {duration:g} s submitted at {service.now:g} s")
    if problem is not None:  # its end, export and replay would show no date (bounds.MAX_INSTANT)
        raise client_error(problem)
    return duration


def _given_duration(service: Endpoint, payload: dict[str, Any], tags: dict[str, str]) -> float:
    text = tags.get(DURATION_TAG)
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        problem = SECONDS.problem(value) if value > 0 else "it must be a positive number of seconds"
        if problem is not None:
            raise client_error(f"Tag {DURATION_TAG} = {text!r}: {problem}")
        return value
    stopping = payload.get("StoppingCondition")
    if isinstance(stopping, dict) and stopping.get("MaxRuntimeSeconds") is not None:
        runtime = stopping["MaxRuntimeSeconds"]
        if isinstance(runtime, bool) or not isinstance(runtime, int) or runtime < 1:
            raise client_error(f"serviceRequestPayload.StoppingCondition.MaxRuntimeSeconds must be an integer >= 1, "
                               f"got {runtime!r}")
        return float(runtime)
    return service.default_duration


def _share(service: Endpoint, queue: Params, share_name: str | None, shared: bool) -> tuple[str, Params]:
    """The quota share a job goes to: named, existing, and accepting jobs."""
    account = service.account
    queue_name = queue["jobQueueName"]
    policy = account.policy_of(queue)
    if shared:
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
    return share_name, share


@operation("SubmitServiceJob", mutating=True)
def submit_service_job(service: Endpoint, params: Params) -> Output:
    service.throttle_submit()
    account = service.account
    name = params["jobName"]
    check_name(name, "jobName")
    size = len(params["serviceRequestPayload"].encode("utf-8", "surrogatepass"))
    if limits.SUBMIT_PAYLOAD_BYTES.above(size):
        raise client_error(f"serviceRequestPayload is {size} bytes: AWS accepts at most "
                           f"{limits.SUBMIT_PAYLOAD_BYTES.maximum}")
    queue = account.queue(params["jobQueue"])
    queue_name = queue["jobQueueName"]
    token = params.get("clientToken")
    jobs = service.scheduler.jobs
    if token:
        previous = jobs.by_token.get((queue_name, token))
        if previous is not None:
            if previous.name == name and previous.payload == params["serviceRequestPayload"]:
                return {"jobArn": previous.arn, "jobName": previous.name, "jobId": previous.id}
            raise client_error(f"clientToken {token} was already used for another request")
    if queue["jobQueueType"] != "SAGEMAKER_TRAINING":
        raise client_error(f"Job queue {queue_name} is not a SAGEMAKER_TRAINING job queue")
    if queue["state"] != "ENABLED" or queue["status"] not in ("VALID", "UPDATING"):
        raise client_error(f"Job queue {queue_name} is {queue['state']}/{queue['status']}: it accepts no jobs")
    share_name, share = _share(service, queue, params.get("quotaShareName"), bool(params.get("shareIdentifier")))
    payload = json_object(params["serviceRequestPayload"], "serviceRequestPayload",
                          " (a SageMaker CreateTrainingJob request)")
    instance_type, count = _resources(payload)
    plan = _plan(service, payload, instance_type)
    units = {limit["capacityUnit"] for limit in share["capacityLimits"]}
    if instance_type not in units:
        raise client_error(f"Quota share {share_name} has no capacity limit for {instance_type} "
                           f"(it has {', '.join(sorted(units))})")
    tags = params.get("tags") or {}
    check_tags(tags)
    duration = _duration(service, payload, tags)
    priority = params.get("schedulingPriority", 0)
    check_priority(priority)
    preemption = params.get("preemptionConfiguration") or {}
    retries = preemption.get("preemptionRetriesBeforeTermination")
    if retries is not None and retries < 0:
        raise client_error(f"preemptionRetriesBeforeTermination must be >= 0, got {retries}")
    retry = params.get("retryStrategy")
    attempts = retry["attempts"] if retry else 1
    if not 1 <= attempts <= 10:
        raise client_error(f"retryStrategy.attempts must be 1-10, got {attempts}")
    timeout = (params.get("timeoutConfig") or {}).get("attemptDurationSeconds")
    if timeout is not None and timeout < 1:
        raise client_error(f"timeoutConfig.attemptDurationSeconds must be >= 1, got {timeout}")
    job_id = service.new_id()
    record = ServiceJob(
        id=job_id, arn=account.arns.job(job_id), name=name, queue=queue_name, share=share_name,
        payload=params["serviceRequestPayload"], tags=dict(tags), retry=retry,
        preemption_config=params.get("preemptionConfiguration"), timeout=params.get("timeoutConfig"),
        priority=priority, instance_type=instance_type, instances=count,
        training_name=str(payload.get("TrainingJobName") or name), client_token=token,
        seq=jobs.next_seq, created=service.now, duration=duration, preemption_retries=retries,
        training_plan=plan, max_runtime=_max_runtime(payload),
    )
    service.scheduler.submit(record, attempts, timeout)
    return {"jobArn": record.arn, "jobName": name, "jobId": job_id}
