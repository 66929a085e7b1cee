"""A queue's finished jobs as a workload CSV (``batch-quota history``), streamed to disk.

Columns are the ones ``simulate`` reads (``submit_at`` is seconds after the window's
start; ``duration`` the run time of the last attempt, the successful one for a job that
succeeded) plus what really happened: ``observed_start`` (first placement, same clock),
``observed_end``, ``observed_preemptions``, ``observed_status``. Rows are written as
the descriptions arrive, so memory stays flat however many jobs there are. AWS applies the
window (``AFTER_CREATED_AT``) and lists newest first, so rows come newest first too.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from policy_engine import input_files
from policy_engine.aws import service_jobs
from policy_engine.aws.clients import Api, AwsError
from policy_engine.simulation.core.jobs import OBSERVED_FIELDS

COLUMNS = ("name", "share", "priority", "instance_type", "instances", "submit_at", "duration",
           "preemption_retries", "attempts", *OBSERVED_FIELDS)


@dataclass
class HistoryStats:
    listed: int = 0
    written: int = 0
    #: Listed jobs created before the window: not described, not written.
    outside_window: int = 0
    #: Listed jobs of the window that have not finished (waiting or running): not written.
    unfinished: int = 0


def write_history(api: Api, queue: str, since_ms: int, handle: IO[str], workers: int = 8,
                  progress: Callable[[int], None] | None = None) -> HistoryStats:
    """Write ``queue``'s SUCCEEDED and FAILED jobs created at or after ``since_ms`` to ``handle`` as CSV."""
    stats = HistoryStats()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(COLUMNS)

    def in_window() -> Iterator[dict[str, Any]]:
        for summary in service_jobs.list_jobs_since(api, queue, since_ms):
            stats.listed += 1
            if (summary.get("createdAt") or 0) < since_ms:
                stats.outside_window += 1
                continue
            if summary.get("status") not in service_jobs.FINISHED:
                stats.unfinished += 1
                continue
            yield summary

    for summary, job in service_jobs.describe_jobs(api, in_window(), workers):
        writer.writerow(_row(job, summary, queue, since_ms))
        stats.written += 1
        if progress is not None and not stats.written % 1000:
            progress(stats.written)
    return stats


def _seconds(ms: float) -> str:
    value = ms / 1000
    return str(int(value)) if value == int(value) else f"{value:.3f}"


def _row(job: dict, summary: dict, queue: str, since_ms: int) -> list:
    subject = f"service job {job.get('jobName')} ({job.get('jobId')})"
    share = job.get("quotaShareName") or summary.get("quotaShareName")
    if not share:
        raise AwsError("DescribeServiceJob", subject, f"no quota share: job queue {queue} is not quota-managed?",
                       "UnexpectedShape")
    payload = service_jobs.payload_of(job)
    usage = service_jobs.usage_of(job, payload)
    attempts = job.get("attempts") or []
    last = attempts[-1] if attempts else job
    run_ms = max(0, (last.get("stoppedAt") or 0) - (last.get("startedAt") or 0)) if last.get("startedAt") else 0
    starts = [a["startedAt"] for a in attempts if a.get("startedAt")]
    starts += [a["startedAt"] for a in (job.get("preemptionSummary") or {}).get("recentPreemptedAttempts") or ()
               if a.get("startedAt")]
    if job.get("startedAt"):
        starts.append(job["startedAt"])
    created = job.get("createdAt") or summary.get("createdAt") or since_ms
    retry = service_jobs.retry_columns(job)
    return [
        service_jobs.job_name(job), f"{queue}/{share}", job.get("schedulingPriority") or 0, usage.instance_type,
        usage.instances, _seconds(created - since_ms), _seconds(run_ms), retry.get("preemption_retries", ""),
        retry.get("attempts", ""),
        _seconds(min(starts) - since_ms) if starts else "",
        _seconds(job["stoppedAt"] - since_ms) if job.get("stoppedAt") else "",
        (job.get("preemptionSummary") or {}).get("preemptedAttemptCount") or 0,
        job.get("status") or summary.get("status") or "",
    ]


def parse_since(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``3600s`` (or plain seconds) -> seconds; ``ValueError`` otherwise."""
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    text = text.strip()
    unit = text[-1:].lower()
    number = text[:-1] if unit in units else text
    factor = units.get(unit, 1)
    value = float(number)
    if not value > 0:
        raise ValueError(text)
    return value * factor


def _add_duration(row: dict, queue: str | None, durations: dict[str, list[float]]) -> None:
    share = row.get("share") or ""
    if (row.get("observed_status") or "SUCCEEDED") != "SUCCEEDED" or not row.get("duration"):
        return
    queue_name, _, name = share.rpartition("/")
    if queue is not None and queue_name != queue:  # another queue's history would give wrong estimates
        return
    try:
        duration = float(row["duration"])
    except ValueError:
        raise ValueError(f"share {share!r}: duration {row['duration']!r} is not a number") from None
    if not math.isfinite(duration) or duration < 0:
        raise ValueError(f"share {share!r}: duration {row['duration']!r} is not a finite number of seconds")
    durations.setdefault(name or share, []).append(duration)


def share_medians(path: str, queue: str | None = None) -> dict[str, float]:
    """Median ``duration`` per share of ``queue`` from a history CSV: ``snapshot``'s estimate of remaining work.

    ``ValueError`` when the file is not a history CSV (its header lacks ``share``/``duration``) or holds
    no finished job of ``queue``: another queue's history would silently give wrong estimates.
    """
    durations: dict[str, list[float]] = {}
    binary = input_files.open_input(path, input_files.JOBS)  # a regular file within the job-file cap
    with io.TextIOWrapper(binary, encoding="utf-8", newline="") as handle:
        try:
            reader = csv.DictReader(handle)
            missing = [column for column in ("share", "duration") if column not in (reader.fieldnames or ())]
            if missing:
                raise ValueError(f"not a `batch-quota history` CSV: no column {', '.join(missing)} in its header")
            for row in reader:
                _add_duration(row, queue, durations)
        except csv.Error as error:  # a field over the csv module's limit, a NUL byte
            raise ValueError(f"cannot read CSV: {error}") from None
    if queue is not None and not durations:
        raise ValueError(f"no SUCCEEDED job of job queue {queue} (shares are written QUEUE/SHARE)")
    medians = {}
    for share, values in durations.items():
        values.sort()
        medians[share] = values[len(values) // 2]
    return medians
