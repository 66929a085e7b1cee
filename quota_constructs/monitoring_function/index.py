"""The ``QuotaMonitoring`` Lambda function: each share's use of its queue, per instance type, as CloudWatch metrics.

Runs every minute (an EventBridge schedule); boto3 only, so it runs on the Lambda Python runtime as is.
Per job queue (``QUEUE_ARNS``, comma-separated) it calls ``ListQuotaShares`` (each share's limits and
strategy), ``GetJobQueueSnapshot`` (who uses what now, and the front of each share) and, for each share
with waiting jobs, one page of ``ListServiceJobs`` (``RUNNABLE``, the share's jobs: their instance types).
It publishes, in namespace ``NAMESPACE`` (default ``BatchQuota``), with dimensions
``JobQueue``, ``QuotaShare``, ``InstanceType``:

- ``OwnUse``: instances the share uses within its own limit;
- ``Borrowed``: instances it uses above its limit (idle capacity of lenders);
- ``Lent``: instances of its idle limit that borrowers use. AWS does not say whose idle capacity a borrower
  takes; the borrowed instances of a type are attributed to the lending shares (LEND, LEND_AND_BORROW) in
  proportion to their idle limits, as ``simulate --report`` attributes them (``lent_by_share``);
- ``WaitingJobs``: its RUNNABLE jobs of the type (at most one page: 100 per share);
- ``HeadOfLineAge`` (seconds): how long the first waiting job of the type has been at the front of the share;

and ``HeadOfLineAge`` with dimensions ``JobQueue``, ``QuotaShare`` only: the share's front job, what the
wait-target alarm watches. The bundled Batch model (``AWS_DATA_PATH``) gives boto3 the quota-share operations
whatever botocore the runtime has.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

#: PutMetricData takes at most 1,000 metric data per call.
BATCH_SIZE = 1000
PAGE = 100
LENDING = ("LEND", "LEND_AND_BORROW")


def _usage(items: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or ():
        out[item["capacityUnit"]] = out.get(item["capacityUnit"], 0.0) + float(item["quantity"])
    return out


def lent_by_share(limits: Mapping[str, Mapping[str, float]], used: Mapping[str, Mapping[str, float]],
                  lends: Mapping[str, bool]) -> dict[str, dict[str, float]]:
    """Per share and instance type, the instances of its idle limit borrowers use (see the module docstring)."""
    units = {unit for share in limits.values() for unit in share} | {unit for share in used.values() for unit in share}
    out: dict[str, dict[str, float]] = {share: {} for share in limits}
    for unit in units:
        borrowed = sum(max(0.0, used.get(s, {}).get(unit, 0.0) - limits[s].get(unit, 0.0)) for s in limits)
        idle = {s: max(0.0, limits[s].get(unit, 0.0) - used.get(s, {}).get(unit, 0.0)) for s in limits if lends[s]}
        total = sum(idle.values())
        ratio = min(1.0, borrowed / total) if total else 0.0
        for share, amount in idle.items():
            out[share][unit] = amount * ratio
    return out


def _datum(name: str, value: float, unit: str, dimensions: Mapping[str, str], now: float) -> dict[str, Any]:
    return {"MetricName": name, "Value": value, "Unit": unit, "Timestamp": datetime.fromtimestamp(now, UTC),
            "Dimensions": [{"Name": key, "Value": dimension} for key, dimension in dimensions.items()]}


def queue_metrics(batch: Any, queue_arn: str, now: float) -> list[dict[str, Any]]:
    """The metric data of one queue at ``now`` (seconds since the epoch)."""
    shares: list[dict[str, Any]] = []
    token = None
    while True:
        page = batch.list_quota_shares(jobQueue=queue_arn, **({"nextToken": token} if token else {}))
        shares += page.get("quotaShares", [])
        token = page.get("nextToken")
        if not token:
            break
    queue_name = queue_arn.rsplit("/", 1)[-1]
    snapshot = batch.get_job_queue_snapshot(jobQueue=queue_arn)
    used = {item["quotaShareName"]: _usage(item.get("capacityUsage", ()))
            for item in snapshot.get("queueUtilization", {}).get("quotaShareUtilization", {})
            .get("topCapacityUtilization", [])}
    fronts = snapshot.get("frontOfQuotaShares", {}).get("quotaShares", {})
    limits = {s["quotaShareName"]: {c["capacityUnit"]: float(c["maxCapacity"]) for c in s.get("capacityLimits", [])}
              for s in shares}
    lends = {s["quotaShareName"]: s.get("resourceSharingConfiguration", {}).get("strategy") in LENDING for s in shares}
    lent = lent_by_share(limits, used, lends)
    data = []
    for name, limit in limits.items():
        share_used = used.get(name, {})
        waiting = _waiting(batch, queue_arn, name) if fronts.get(name) else {}
        head_age = _head_ages(fronts.get(name, []), waiting, now)
        for unit in sorted(set(limit) | set(share_used) | set(head_age)):
            dims = {"JobQueue": queue_name, "QuotaShare": name, "InstanceType": unit}
            in_use = share_used.get(unit, 0.0)
            data += [
                _datum("OwnUse", min(in_use, limit.get(unit, 0.0)), "Count", dims, now),
                _datum("Borrowed", max(0.0, in_use - limit.get(unit, 0.0)), "Count", dims, now),
                _datum("Lent", lent[name].get(unit, 0.0), "Count", dims, now),
                _datum("WaitingJobs", float(sum(1 for job_unit in waiting.values() if job_unit == unit)),
                       "Count", dims, now),
                _datum("HeadOfLineAge", head_age.get(unit, 0.0), "Seconds", dims, now),
            ]
        data.append(_datum("HeadOfLineAge", max(head_age.values(), default=0.0), "Seconds",
                           {"JobQueue": queue_name, "QuotaShare": name}, now))
    return data


def _waiting(batch: Any, queue_arn: str, share: str) -> dict[str, str]:
    """``job ARN -> instance type`` of the share's RUNNABLE jobs: one page (at most ``PAGE``)."""
    page = batch.list_service_jobs(jobQueue=queue_arn, jobStatus="RUNNABLE", maxResults=PAGE,
                                   filters=[{"name": "QUOTA_SHARE_NAME", "values": [share]}])
    out = {}
    for job in page.get("jobSummaryList", []):
        usage = job.get("capacityUsage") or []
        if usage:
            out[job["jobArn"]] = usage[0]["capacityUnit"]
    return out


def _head_ages(front: Sequence[Mapping[str, Any]], waiting: Mapping[str, str], now: float) -> dict[str, float]:
    """Per instance type, seconds the first job of that type in the share's front has been there."""
    ages: dict[str, float] = {}
    for job in front:
        unit = waiting.get(job["jobArn"])
        if unit is not None and unit not in ages:
            ages[unit] = max(0.0, now - job["earliestTimeAtPosition"] / 1000)
    return ages


def publish(cloudwatch: Any, namespace: str, data: Sequence[Mapping[str, Any]]) -> int:
    """PutMetricData in batches; the number of calls made."""
    calls = 0
    for start in range(0, len(data), BATCH_SIZE):
        cloudwatch.put_metric_data(Namespace=namespace, MetricData=list(data[start:start + BATCH_SIZE]))
        calls += 1
    return calls


def run(batch: Any, cloudwatch: Any, queue_arns: Sequence[str], namespace: str, now: float) -> dict[str, int]:
    """Read every queue, then publish; the counts are the function's result (shown in its log)."""
    data = [datum for arn in queue_arns for datum in queue_metrics(batch, arn, now)]
    return {"metrics": len(data), "calls": publish(cloudwatch, namespace, data)}


def handler(event: Any, context: Any) -> dict[str, int]:
    import boto3

    queue_arns = [arn for arn in os.environ["QUEUE_ARNS"].split(",") if arn]
    return run(boto3.client("batch"), boto3.client("cloudwatch"), queue_arns,
               os.environ.get("NAMESPACE", "BatchQuota"), time.time())
