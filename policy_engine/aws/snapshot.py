"""A live queue as a scenario (``batch-quota snapshot``): ``simulate`` then continues from now.

Now is time 0. Jobs on capacity (SCHEDULED, STARTING, RUNNING) carry ``status``,
``started_at`` (<= 0) and ``remaining``; waiting jobs (SUBMITTED, PENDING, RUNNABLE) are
submitted at 0 in the order AWS created them, which keeps the scheduler's FIFO order.
The account does not know how long a job still runs, so each job says which estimate
was used: a per-share estimate from history, the payload's
``StoppingCondition.MaxRuntimeSeconds`` (an upper bound), or ``--assume-remaining``.
GetJobQueueSnapshot is a cross-check only: its front of queue covers the first 100
RUNNABLE jobs and its utilisation the top shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from policy_engine.aws import service_jobs
from policy_engine.aws.account import read_account
from policy_engine.aws.clients import Api, AwsError
from policy_engine.loading import LoadError, topology_from_data

ESTIMATE_HISTORY, ESTIMATE_MAX_RUNTIME, ESTIMATE_ASSUMED = "history", "max-runtime", "assumed"


@dataclass
class Snapshot:
    queue: str
    region: str
    taken_at_ms: int
    topology: dict[str, Any]
    jobs: list[dict[str, Any]] = field(default_factory=list)
    #: Per job (same order): which estimate gave its remaining work.
    estimates: list[str] = field(default_factory=list)
    cross_check: list[str] = field(default_factory=list)

    def to_yaml(self) -> str:
        from datetime import UTC, datetime

        stamp = datetime.fromtimestamp(self.taken_at_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines = [f"# snapshot of job queue {self.queue} (Region {self.region}) at {stamp} by batch-quota snapshot",
                 "# time 0 is the snapshot; started_at <= 0 is when a job on capacity was placed",
                 *(f"# cross-check: {line}" for line in self.cross_check)]
        body = yaml.safe_dump({"topology": self.topology}, sort_keys=False)
        out = ["\n".join(lines), body.rstrip("\n"), "jobs:" if self.jobs else "jobs: []"]
        for job, estimate in zip(self.jobs, self.estimates, strict=True):
            text = yaml.safe_dump(job, default_flow_style=True, sort_keys=False, width=10_000).strip()
            out.append(f"  - {text}  # remaining: {estimate}")
        return "\n".join(out) + "\n"


def take_snapshot(api: Api, queue: str, now_ms: int, assume_remaining: float,
                  per_share_estimate: Mapping[str, float] | None = None, workers: int = 8) -> Snapshot:
    """Read ``queue``'s topology and its waiting and running jobs; raise ``AwsError`` on any failed call."""
    read = read_account(api, [queue])
    if read.missing or read.errors or read.skipped:
        reasons = [e.line for e in read.missing_errors(api.region) + read.errors]
        reasons += [f"job queue {name}: {why}" for name, why in read.skipped]
        raise AwsError("DescribeJobQueues", f"job queue {queue}", "; ".join(reasons), "NotQuotaQueue")
    try:
        topology = topology_from_data(read.data, f"job queue {queue}")
    except LoadError as error:
        raise AwsError("DescribeJobQueues", f"job queue {queue}", "; ".join(error.problems), "Invalid") from None
    model_queue = topology.job_queues[0]
    snapshot = Snapshot(model_queue.name, api.region, now_ms, read.data)
    estimates = dict(per_share_estimate or {})
    summaries = list(service_jobs.list_jobs(api, model_queue.name, service_jobs.WAITING + service_jobs.ON_CAPACITY))
    waiting = sorted((s for s in summaries if s.get("status") in service_jobs.WAITING),
                     key=lambda s: (s.get("createdAt") or 0, s["jobId"]))
    active = [s for s in summaries if s.get("status") in service_jobs.ON_CAPACITY]
    used: dict[tuple[str, str], float] = {}
    for summary, job in service_jobs.describe_jobs(api, active + waiting, workers):
        row, estimate = _job_row(job, summary, model_queue, now_ms, assume_remaining, estimates)
        snapshot.jobs.append(row)
        snapshot.estimates.append(estimate)
        if "status" in row:
            key = (row["share"], row["instance_type"])
            used[key] = used.get(key, 0) + row["instances"]
    live = api.call("GetJobQueueSnapshot", f"job queue {model_queue.name}", jobQueue=model_queue.name)
    snapshot.cross_check = _cross_check(live, used, waiting, model_queue.name)
    return snapshot


def _job_row(job: dict, summary: dict, queue, now_ms: int, assume: float,
             estimates: Mapping[str, float]) -> tuple[dict[str, Any], str]:
    subject = f"service job {job.get('jobName')} ({job.get('jobId')})"
    share_name = job.get("quotaShareName") or summary.get("quotaShareName")
    if not share_name or queue.share(share_name) is None:
        raise AwsError("DescribeServiceJob", subject, f"quota share {share_name!r} is not a share of job queue "
                       f"{queue.name}", "UnexpectedShape")
    payload = service_jobs.payload_of(job)
    usage = service_jobs.usage_of(job, payload)
    status = job.get("status") or summary.get("status")
    row: dict[str, Any] = {"name": service_jobs.job_name(job), "share": share_name,
                           "priority": job.get("schedulingPriority") or 0, "instance_type": usage.instance_type,
                           "instances": usage.instances}
    elapsed = 0.0
    on_capacity = status in service_jobs.ON_CAPACITY
    if on_capacity:
        placed = job.get("startedAt") or job.get("scheduledAt") or summary.get("scheduledAt") or now_ms
        elapsed = max(0.0, (now_ms - placed) / 1000)
    bound = service_jobs.max_runtime(payload)
    if share_name in estimates:
        remaining, estimate = max(0.0, estimates[share_name] - elapsed), f"{ESTIMATE_HISTORY} (share median)"
    elif bound is not None:
        remaining, estimate = max(0.0, bound - elapsed), f"{ESTIMATE_MAX_RUNTIME} (StoppingCondition upper bound)"
    else:
        remaining, estimate = float(assume), f"{ESTIMATE_ASSUMED} (--assume-remaining)"
    row["duration"] = _seconds(elapsed + remaining)
    if on_capacity:
        row["status"] = status
        row["started_at"] = _seconds(-elapsed)
        row["remaining"] = _seconds(remaining)
    columns = service_jobs.retry_columns(job)
    preempted = (job.get("preemptionSummary") or {}).get("preemptedAttemptCount") or 0
    if "preemption_retries" in columns and preempted:
        columns["preemption_retries"] = max(0, columns["preemption_retries"] - preempted)  # what is left of them
        estimate += f"; preempted {preempted} time(s) so far"
    row.update(columns)
    return row, estimate


def _seconds(value: float) -> float | int:
    value = round(value, 3)
    return int(value) if value == int(value) else value


def _cross_check(live: dict, used: dict[tuple[str, str], float], waiting: list[dict], queue: str) -> list[str]:
    notes = []
    utilisation = (live.get("queueUtilization") or {}).get("quotaShareUtilization") or {}
    for entry in utilisation.get("topCapacityUtilization") or ():
        share = entry.get("quotaShareName")
        for usage in entry.get("capacityUsage") or ():
            reported = usage.get("quantity") or 0
            counted = used.get((share, usage.get("capacityUnit")), 0)
            if round(reported) != round(counted):
                notes.append(f"GetJobQueueSnapshot reports {share} using {reported:g} {usage.get('capacityUnit')}; "
                             f"the listed jobs use {counted:g} (jobs changed state while reading?)")
    listed = {s.get("jobArn") for s in waiting}
    front = (live.get("frontOfQueue") or {}).get("jobs") or ()
    absent = [j.get("jobArn") for j in front if j.get("jobArn") not in listed]
    if absent:
        notes.append(f"{len(absent)} job(s) at the front of job queue {queue} were not listed as waiting "
                     f"(first: {absent[0]})")
    if not notes:
        notes.append("GetJobQueueSnapshot agrees with the listed jobs (top shares' usage, front of queue)")
    return notes
