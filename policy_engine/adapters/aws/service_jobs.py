"""Service jobs as the API reports them -> what the simulator's workload needs.

``ListServiceJobs`` takes one status per call (no status = RUNNING only) and pages by at
most 100; its summaries lack priority and preemption counts, so each job is described
(``DescribeServiceJob``) with bounded concurrency, in the listing's order, streaming: at
most ``2 x workers`` descriptions are in memory at once.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from policy_engine.adapters.aws.clients import Api, AwsError, Shape

WAITING = ("SUBMITTED", "PENDING", "RUNNABLE")
ON_CAPACITY = ("SCHEDULED", "STARTING", "RUNNING")
FINISHED = ("SUCCEEDED", "FAILED")
#: The job tag that gives a job's run time in ``batch-quota serve`` (simulated seconds); ``history`` reads it back.
DURATION_TAG = "batch-quota:duration"


def list_jobs(api: Api, queue: str, statuses: Iterable[str]) -> Iterator[Shape]:
    """Every job summary of ``queue`` with one of ``statuses``, one paginated listing per status."""
    for status in statuses:
        for page in api.pages("ListServiceJobs", f"{status} jobs of job queue {queue}", jobQueue=queue,
                              jobStatus=status):
            yield from page.get("jobSummaryList", [])


def created_after_filter(since_ms: int) -> list[dict[str, Any]]:
    """``ListServiceJobs`` filters for jobs created at or after ``since_ms`` (AWS's filter is strictly after)."""
    return [{"name": "AFTER_CREATED_AT", "values": [str(since_ms - 1)]}]


def list_jobs_since(api: Api, queue: str, since_ms: int) -> Iterator[Shape]:
    """Every job summary of ``queue`` created at or after ``since_ms``, whatever its status, newest first.

    The window is applied by AWS (``AFTER_CREATED_AT``), so a short window never pages through the
    whole retained history; with a filter AWS ignores ``jobStatus`` and sorts by ``createdAt``,
    most recent first, so the caller keeps the statuses it wants.
    """
    from datetime import UTC, datetime

    since = datetime.fromtimestamp(since_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for page in api.pages("ListServiceJobs", f"jobs of job queue {queue} created since {since}",
                          jobQueue=queue, filters=created_after_filter(since_ms)):
        yield from page.get("jobSummaryList", [])


def describe_jobs(api: Api, summaries: Iterable[Shape], workers: int) -> Iterator[tuple[Shape, Shape]]:
    """``(summary, DescribeServiceJob response)`` in the summaries' order, ``workers`` calls in flight."""

    def describe(summary: Shape) -> Shape:
        return api.call("DescribeServiceJob", f"service job {summary.get('jobName', '?')} ({summary['jobId']})",
                        jobId=summary["jobId"])

    if workers <= 1:
        for summary in summaries:
            yield summary, describe(summary)
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="describe-service-job")
    window: deque[tuple[Shape, Future[Shape]]] = deque()
    try:
        for summary in summaries:
            window.append((summary, pool.submit(describe, summary)))
            if len(window) >= 2 * workers:
                first, future = window.popleft()
                yield first, future.result()
        while window:
            first, future = window.popleft()
            yield first, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class Usage:
    """A job's capacity: instance type and count, and where they were read."""

    instance_type: str
    instances: int
    source: str


def payload_of(job: Shape) -> Shape:
    text = job.get("serviceRequestPayload")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def usage_of(job: Shape, payload: Shape) -> Usage:
    """From ``capacityUsage`` (what the scheduler counts), else the payload's ``ResourceConfig``."""
    usage = [u for u in job.get("capacityUsage") or () if u.get("capacityUnit")]
    if len(usage) > 1:
        kinds = ", ".join(u["capacityUnit"] for u in usage)
        raise AwsError("DescribeServiceJob", f"service job {job.get('jobName')} ({job.get('jobId')})",
                       f"uses several instance types ({kinds}); the simulator models one per job", "Unsupported")
    if usage:
        quantity = usage[0].get("quantity") or 0
        return Usage(usage[0]["capacityUnit"], max(1, round(quantity)), "capacityUsage")
    config = payload.get("ResourceConfig") or {}
    if config.get("InstanceType"):
        return Usage(config["InstanceType"], int(config.get("InstanceCount") or 1), "serviceRequestPayload")
    raise AwsError("DescribeServiceJob", f"service job {job.get('jobName')} ({job.get('jobId')})",
                   "neither capacityUsage nor the payload's ResourceConfig names an instance type", "UnexpectedShape")


def training_plan_of(payload: Shape) -> str | None:
    """The training plan a job runs on: ``ResourceConfig.TrainingPlanArn`` of its CreateTrainingJob payload (an
    ARN, ``arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME``), ``None`` on demand."""
    arn = (payload.get("ResourceConfig") or {}).get("TrainingPlanArn")
    return arn if isinstance(arn, str) and arn else None


def max_runtime(payload: Shape) -> float | None:
    value = (payload.get("StoppingCondition") or {}).get("MaxRuntimeSeconds")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def job_name(job: Shape) -> str:
    """Job names repeat in AWS; the job ID makes them unique, as a workload needs."""
    return f"{job['jobName']}-{job['jobId']}"


def retry_columns(job: Shape) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    retries = (job.get("preemptionConfiguration") or {}).get("preemptionRetriesBeforeTermination")
    if retries is not None:
        columns["preemption_retries"] = retries
    attempts = (job.get("retryStrategy") or {}).get("attempts")
    if attempts is not None and attempts != 1:
        columns["attempts"] = attempts
    return columns
