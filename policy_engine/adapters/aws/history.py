"""A queue's jobs as a workload CSV (``batch-quota history``), every status, oldest first, time 0 the first one.

Columns are the ones ``simulate`` reads plus what really happened: ``submit_at`` is seconds after
the window's first submission (time 0: no idle prefix before it), ``submitted_epoch_ms`` the same
instant in absolute time (daily and weekly cycles), ``duration`` as ``duration_of`` says (with
``duration_known`` false where it is only a lower bound), and ``observed_start`` (first placement,
same clock), ``observed_end``, ``observed_preemptions``, ``observed_status`` (every status: jobs
still waiting or running and terminated ones are written too). ``training_plan`` is the plan a job ran on, as its
payload names it (``ResourceConfig.TrainingPlanArn``, an ARN: ``simulate`` and ``fit`` resolve it against the
topology's plans by their ``arn:``), empty on demand. A job that cannot be used (several
instance types, no quota share) is counted with its reason, never dropped in silence.

AWS applies the window (``AFTER_CREATED_AT``) and lists newest first; rows are spilled to a
temporary file as the descriptions arrive (memory stays flat however many jobs there are) and
written oldest first once time 0 is known, so that jobs submitted at one instant keep their order.
"""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, TypedDict

from policy_engine.adapters.aws import service_jobs
from policy_engine.adapters.aws.clients import Api, AwsError, Shape
from policy_engine.adapters.aws.replay import JobRef
from policy_engine.foundation.units import parse_duration
from policy_engine.inputs import input_files
from policy_engine.simulation.core.jobs import DURATION_KNOWN_FIELD, EPOCH_FIELD, OBSERVED_FIELDS

COLUMNS = ("name", "share", "priority", "instance_type", "instances", "submit_at", "duration", DURATION_KNOWN_FIELD,
           "preemption_retries", "attempts", "training_plan", EPOCH_FIELD, *OBSERVED_FIELDS)


@dataclass
class HistoryStats:
    listed: int = 0
    written: int = 0
    #: Listed jobs created before the window: not described, not written.
    outside_window: int = 0
    #: Jobs of the window that could not be used: reason -> how many.
    unusable: Counter[str] = field(default_factory=Counter)
    #: Written jobs per status.
    by_status: Counter[str] = field(default_factory=Counter)
    #: Written jobs whose ``duration`` is a lower bound (``duration_known`` false).
    duration_unknown: int = 0
    #: Time 0: the first submission written (epoch ms), and the latest instant the jobs show.
    t0_ms: int | None = None
    end_ms: int = 0
    #: Jobs whose priority is the one they were submitted with (read from CloudTrail), by job id.
    initial_priorities: int = 0
    #: Jobs by id, for the ones the replay's actions name (``wanted``).
    jobs: dict[str, JobRef] = field(default_factory=dict)
    #: The instants (epoch ms) of ``watch`` at which jobs were submitted, and how many: where changes and submissions
    #: meet.
    shared_instants: Counter[int] = field(default_factory=Counter)
    #: Written jobs per training plan ARN (``ResourceConfig.TrainingPlanArn``), and the first such job's name.
    plan_jobs: Counter[str] = field(default_factory=Counter)
    plan_first_job: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Duration:
    """A job's run time for the workload, and whether it is the real one or a lower bound."""

    seconds: float
    known: bool


def duration_of(job: Shape, payload: Shape, served: bool, now_ms: int) -> Duration:
    """The successful attempt's run time; else the ``batch-quota:duration`` tag; else, for a job served by
    ``batch-quota serve``, ``MaxRuntimeSeconds`` (its run time there); else the longest attempt so far, a lower
    bound (in AWS ``MaxRuntimeSeconds`` is only an upper bound)."""
    attempts = [a for a in job.get("attempts") or () if a.get("startedAt")]
    if job.get("status") == "SUCCEEDED" and attempts and attempts[-1].get("stoppedAt"):
        return Duration(max(0, attempts[-1]["stoppedAt"] - attempts[-1]["startedAt"]) / 1000, True)
    tag = (job.get("tags") or {}).get(service_jobs.DURATION_TAG)
    if tag is not None:
        try:
            value = float(tag)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value > 0:
            return Duration(value, True)
    bound = service_jobs.max_runtime(payload)
    if served and bound is not None:
        return Duration(bound, True)
    longest = max(((a.get("stoppedAt") or now_ms) - a["startedAt"] for a in attempts), default=0)
    return Duration(max(0, longest) / 1000, False)


def write_history(api: Api, queue: str, since_ms: int, handle: IO[str], workers: int = 8,
                  progress: Callable[[int], None] | None = None, now_ms: int | None = None,
                  initial_priority: dict[str, int] | None = None, wanted: Collection[str] = (),
                  served: bool = False, watch: Collection[int] = ()) -> HistoryStats:
    """Write ``queue``'s jobs created at or after ``since_ms`` to ``handle`` as CSV, oldest first.

    ``initial_priority``: job id -> the priority it was submitted with (CloudTrail), for jobs whose priority
    changed since; ``wanted``: job ids whose workload names the replay's actions need (``stats.jobs``); ``watch``:
    instants (epoch ms) of changes, to tell which a submission shares (``stats.shared_instants``).
    """
    import time

    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    stats = HistoryStats(end_ms=now_ms)
    priorities = initial_priority or {}
    wanted_ids = set(wanted)
    watched = set(watch)

    def in_window() -> Iterator[dict[str, Any]]:
        for summary in service_jobs.list_jobs_since(api, queue, since_ms):
            stats.listed += 1
            if (summary.get("createdAt") or 0) < since_ms:
                stats.outside_window += 1
                continue
            yield summary

    offsets = array("q")
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as spill:
        for summary, job in service_jobs.describe_jobs(api, in_window(), workers):
            try:
                row = _row(job, summary, queue, served, now_ms, priorities)
            except AwsError as error:
                stats.unusable[error.reason] += 1
                continue
            offsets.append(spill.tell())
            spill.write(json.dumps(row, separators=(",", ":")) + "\n")
            created = row["created"]
            if created in watched:
                stats.shared_instants[created] += 1
            stats.t0_ms = created if stats.t0_ms is None else min(stats.t0_ms, created)
            stats.end_ms = max(stats.end_ms, created, row["start"] or 0, row["end"] or 0)
            stats.by_status[row["status"]] += 1
            stats.duration_unknown += not row["known"]
            stats.initial_priorities += row["initial"]
            if row["plan"]:
                stats.plan_jobs[row["plan"]] += 1
                stats.plan_first_job.setdefault(row["plan"], row["name"])
            if job.get("jobId") in wanted_ids:
                stats.jobs[job["jobId"]] = JobRef(row["name"], created)
            stats.written += 1
            if progress is not None and not stats.written % 1000:
                progress(stats.written)
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        t0 = stats.t0_ms or since_ms
        for offset in reversed(offsets):  # the listing is newest first; the workload oldest first
            spill.seek(offset)
            writer.writerow(_cells(json.loads(spill.readline()), t0))
    return stats


def _seconds(ms: float) -> str:
    value = ms / 1000
    return str(int(value)) if value == int(value) else f"{value:.3f}"


class SpillRow(TypedDict):
    """One job as the spill file holds it until the CSV is written oldest first: times in epoch milliseconds."""

    name: str
    share: str
    priority: int
    initial: bool
    instance_type: str
    instances: int
    created: int
    duration: float
    known: bool
    retries: int | str  # "" when the job does not say
    attempts: int | str
    plan: str  # the TrainingPlanArn, "" on demand
    start: int | None
    end: int | None
    preemptions: int
    status: str


def _row(job: Shape, summary: Shape, queue: str, served: bool, now_ms: int, priorities: dict[str, int]) -> SpillRow:
    """What a row needs, in absolute epoch milliseconds (the spill's form); ``AwsError`` when it cannot be used."""
    share = job.get("quotaShareName") or summary.get("quotaShareName")
    if not share:
        raise AwsError("DescribeServiceJob", f"service job {job.get('jobName')} ({job.get('jobId')})",
                       f"no quota share (job queue {queue} is not quota-managed?)", "UnexpectedShape")
    payload = service_jobs.payload_of(job)
    usage = service_jobs.usage_of(job, payload)
    duration = duration_of(job, payload, served, now_ms)
    starts = [a["startedAt"] for a in job.get("attempts") or () if a.get("startedAt")]
    starts += [a["startedAt"] for a in (job.get("preemptionSummary") or {}).get("recentPreemptedAttempts") or ()
               if a.get("startedAt")]
    if job.get("startedAt"):
        starts.append(job["startedAt"])
    created = job.get("createdAt") or summary.get("createdAt") or 0
    retry = service_jobs.retry_columns(job)
    job_id = job.get("jobId") or ""
    initial = priorities.get(job_id)
    return {
        "name": service_jobs.job_name(job), "share": f"{queue}/{share}",
        "priority": initial if initial is not None else job.get("schedulingPriority") or 0,
        "initial": initial is not None, "instance_type": usage.instance_type, "instances": usage.instances,
        "created": created, "duration": duration.seconds, "known": duration.known,
        "retries": retry.get("preemption_retries", ""), "attempts": retry.get("attempts", ""),
        "plan": service_jobs.training_plan_of(payload) or "",
        "start": min(starts) if starts else None, "end": job.get("stoppedAt") or None,
        "preemptions": (job.get("preemptionSummary") or {}).get("preemptedAttemptCount") or 0,
        "status": job.get("status") or summary.get("status") or "",
    }


def _cells(row: SpillRow, t0: int) -> list[object]:
    duration = row["duration"]
    return [
        row["name"], row["share"], row["priority"], row["instance_type"], row["instances"],
        _seconds(row["created"] - t0), str(int(duration)) if duration == int(duration) else f"{duration:.3f}",
        "true" if row["known"] else "false", row["retries"], row["attempts"], row["plan"], row["created"],
        _seconds(row["start"] - t0) if row["start"] is not None else "",
        _seconds(row["end"] - t0) if row["end"] is not None else "",
        row["preemptions"], row["status"],
    ]


def parse_since(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``3600s`` (or plain seconds) -> seconds; ``ValueError`` otherwise."""
    return parse_duration(text)


def _add_duration(row: dict[str, str], queue: str | None, durations: dict[str, list[float]]) -> None:
    """One row of a history CSV (``csv.DictReader``: every cell text)."""
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
