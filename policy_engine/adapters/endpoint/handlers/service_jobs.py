"""Service jobs after submission: describe, list (paged by the job indexes), reprioritise, terminate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policy_engine.adapters.endpoint.base.errors import ApiError, client_error
from policy_engine.adapters.endpoint.base.jobs import FINAL, Attempt, IndexKey, ServiceJob
from policy_engine.adapters.endpoint.handlers.registry import PAGE, Output, Params, check_priority, operation
from policy_engine.foundation import limits

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint

_FILTERS = ("JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT", "SHARE_IDENTIFIER", "QUOTA_SHARE_NAME")
#: AWS's bound on one ``TerminateServiceJobs`` call.
TERMINATE_BATCH = limits.TERMINATE_JOBS_PER_CALL.at_most


def find_job(service: Endpoint, job_id: str) -> ServiceJob:
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


def _usage(record: ServiceJob) -> list[dict[str, Any]]:
    return [{"capacityUnit": record.instance_type, "quantity": float(record.instances)}]


def _summary(service: Endpoint, record: ServiceJob) -> Output:
    ms = service.ms
    out: Output = {
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


def _attempt(service: Endpoint, attempt: Attempt) -> Output:
    out: Output = {"serviceResourceId": {"name": "TrainingJobArn", "value": attempt["resource"]},
                   "startedAt": service.ms(attempt["startedAt"])}
    if "stoppedAt" in attempt:
        out["stoppedAt"] = service.ms(attempt["stoppedAt"])
        out["statusReason"] = attempt["statusReason"]
    return out


@operation("DescribeServiceJob")
def describe_service_job(service: Endpoint, params: Params) -> Output:
    return describe(service, find_job(service, params["jobId"]))


def describe(service: Endpoint, record: ServiceJob, live_reason: bool = True) -> Output:
    """The job as DescribeServiceJob shows it; ``live_reason``: a RUNNABLE job's reason as the scheduler reads it
    now (else the reason its last change gave it: what an event sent at that change shows)."""
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
    if live_reason and record.status == "RUNNABLE":
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


@operation("ListServiceJobs")
def list_service_jobs(service: Endpoint, params: Params) -> Output:
    jobs = service.scheduler.jobs
    size = params.get("maxResults") or PAGE
    if not limits.PAGE_SIZE.allows(size):
        raise client_error(f"maxResults must be between {limits.PAGE_SIZE.minimum} and {PAGE}, got {size}")
    below = None
    if params.get("nextToken"):
        try:
            below = int(params["nextToken"])
        except ValueError:
            below = -1
        if below < 0:
            raise client_error("Invalid nextToken")
    if params.get("jobQueue"):
        queue = service.account.queue(params["jobQueue"])["jobQueueName"]
    else:
        raise client_error("jobQueue is required")
    filters = params.get("filters") or []
    if len(filters) > 1:
        raise client_error("Only one filter can be used at a time")
    status = params.get("jobStatus")
    floor = 0
    key: IndexKey | list[int]
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
    out: Output = {"jobSummaryList": [_summary(service, record) for record in page]}
    if token is not None:
        out["nextToken"] = str(token)
    return out


@operation("UpdateServiceJob", mutating=True)
def update_service_job(service: Endpoint, params: Params) -> Output:
    record = find_job(service, params["jobId"])
    priority = params["schedulingPriority"]
    check_priority(priority)
    if record.status in FINAL:
        raise client_error(f"Service job {record.id} is {record.status}: its priority cannot change")
    service.scheduler.update_priority(record, priority)
    return {"jobArn": record.arn, "jobName": record.name, "jobId": record.id}


@operation("TerminateServiceJob", mutating=True)
def terminate_service_job(service: Endpoint, params: Params) -> Output:
    record = find_job(service, params["jobId"])
    if record.status not in FINAL:
        service.scheduler.terminate(record, f"Terminated by user: {params['reason']}")
    return {}


@operation("TerminateServiceJobs", mutating=True)
def terminate_service_jobs(service: Endpoint, params: Params) -> Output:
    """The bulk form, as AWS documents it: each job reported on its own, HTTP 200 even when some fail;
    a job that cannot be found counts as terminated, a malformed identifier is a ``ValidationException`` entry."""
    ids = params["jobs"]
    if not limits.TERMINATE_JOBS_PER_CALL.allows(len(ids)):
        raise client_error(f"jobs must list {limits.TERMINATE_JOBS_PER_CALL.range_text()} service job IDs, "
                           f"got {len(ids)}")
    successful: list[str] = []
    errors: list[dict[str, str]] = []
    for job_id in ids:
        if not job_id or job_id != job_id.strip() or ("/" in job_id and not job_id.startswith("arn:")):
            errors.append({"job": job_id, "code": "ValidationException",
                           "message": f"Service job identifier {job_id!r} is not valid"})
            continue
        try:
            record = find_job(service, job_id)
        except ApiError:
            successful.append(job_id)  # AWS: jobs that cannot be found are treated as processed
            continue
        if record.status not in FINAL:
            service.scheduler.terminate(record, f"Terminated by user: {params['reason']}")
        successful.append(job_id)
    return {"successful": successful, "errors": errors}
