"""EventBridge events for service jobs, as AWS Batch sends them, built from the scheduler's state changes.

The one module that decides which events a state change makes and what they hold, for
``serve --events`` and ``simulate --event-format eventbridge``, so an alerting rule tested
offline sees what the account would send. Detail types and the documented detail fields
come from ``data/event_patterns.json`` (``event_patterns``).

AWS documents the envelope, the four detail types and their detail fields; the moments are
the project's reading (docs/endpoint.md, "Events"): no event for the initial submission,
a preemption is Started, then, when the victim is back in RUNNABLE (or FAILED, its
preemption retries exhausted), State Change and Completed; Queue Blocked when a job enters
RUNNABLE with a reason ``blocked`` accepts (default: a ``MISCONFIGURATION:`` reason, a job
that can never run and holds its share's line).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from policy_engine.events import patterns as event_patterns
from policy_engine.simulation.causes import Cause, Reason

if TYPE_CHECKING:
    from policy_engine.simulation.core.jobs import Job

#: The account and Region ``serve`` and ``simulate`` write into ARNs and envelopes unless told otherwise.
DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT = "123456789012"
#: States in which a job holds capacity (a move from one of them back to RUNNABLE can be a preemption).
ON_CAPACITY = frozenset({"SCHEDULED", "STARTING", "RUNNING"})
#: Most recent preempted attempts in ``preemptionSummary.recentPreemptedAttempts`` (as the endpoint keeps).
RECENT_PREEMPTIONS = 5
#: Namespace of the events' ``id`` (a UUID per event, derived from a counter: a run's file is reproducible).
_IDS = uuid.UUID("6c1f8a52-3f0e-4d7e-9a51-0b7b9b8f2d11")


class Preemption(StrEnum):
    """Why a job was preempted: its lender reclaimed capacity, or a higher-priority job of its share needed it."""

    CROSS_SHARE = "cross-share"
    IN_SHARE = "in-share"
    #: the preemption that exhausted ``preemptionRetriesBeforeTermination`` (the job FAILED; the engine's reason
    #: does not say which kind it was)
    LAST_ALLOWED = "last-allowed"


#: ``statusReason`` of Preemption Started: AWS documents the cross-share wording; the in-share one is ours.
STARTED_REASONS = {
    Preemption.CROSS_SHARE: "PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed capacity",
    Preemption.IN_SHARE: "PREEMPTION_IN_PROGRESS: In-share preemption triggered by a higher-priority job",
    Preemption.LAST_ALLOWED: "PREEMPTION_IN_PROGRESS: Preemption triggered; preemptionRetriesBeforeTermination "
                             "exhausted",
}


def preemption_of(before: str, after: str, reason: Reason) -> Preemption | None:
    """Which preemption a state change is, from the engine's named cause; ``None`` when it is none."""
    if before not in ON_CAPACITY:
        return None
    if after == "FAILED" and reason.cause is Cause.PREEMPTION_RETRIES_EXHAUSTED:
        return Preemption.LAST_ALLOWED
    if after != "RUNNABLE":
        return None
    if reason.cause is Cause.IN_SHARE_PREEMPTION:
        return Preemption.IN_SHARE
    return Preemption.CROSS_SHARE if reason.cause is Cause.RECLAIM_PREEMPTION else None


#: ``blocked(status, reason)``: whether a job entering ``status`` for ``reason`` (the engine's named cause) blocks
#: its queue (Queue Blocked event).
BlockedPolicy = Callable[[str, Reason], bool]


def misconfigured_blocks(status: str, reason: Reason) -> bool:
    """The default reading: a RUNNABLE job that is misconfigured can never run, so it blocks."""
    return status == "RUNNABLE" and reason.cause is Cause.MISCONFIGURED


def iso_time(epoch_ms: int) -> str:
    """EventBridge's ``time``: UTC to the second, ``2026-03-16T19:57:27Z``."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def job_detail(describe: Mapping[str, Any]) -> dict[str, Any]:
    """The job as DescribeServiceJob shows it, without the fields AWS leaves out of an event's detail."""
    omits = event_patterns.detail_spec("state_change").omits
    return {key: value for key, value in describe.items() if key not in omits}


@dataclass
class EventFactory:
    """Builds the envelopes; ``region``/``account`` as in the account's ARNs, ``blocked`` the Queue Blocked policy."""

    region: str = DEFAULT_REGION
    account: str = DEFAULT_ACCOUNT
    blocked: BlockedPolicy = misconfigured_blocks
    namespace: uuid.UUID = _IDS
    _count: int = field(default=0, init=False)

    def envelope(self, key: str, time_ms: int, job_arn: str, detail: dict[str, Any]) -> dict[str, Any]:
        """The full EventBridge event for one ``event_patterns`` key about the job ``job_arn``."""
        self._count += 1
        return {
            "version": "0",
            "id": str(uuid.uuid5(self.namespace, str(self._count))),
            "detail-type": event_patterns.kind(key).detail_type,
            "source": event_patterns.source(),
            "account": self.account,
            "time": iso_time(time_ms),
            "region": self.region,
            "resources": [job_arn],
            "detail": detail,
        }

    def preemption_started(self, time_ms: int, job_arn: str, preemption: Preemption, status: str) -> dict[str, Any]:
        """The victim is being preempted; it still holds its capacity (``status``, RUNNING in AWS's example)."""
        detail = {"statusReason": STARTED_REASONS[preemption], "preemptedJobArn": job_arn, "status": status}
        return self.envelope("preemption_started", time_ms, job_arn, detail)

    def for_change(self, time_ms: int, job_arn: str, before: str, after: str, reason: Reason,
                   describe: Callable[[], Mapping[str, Any]], started: bool = False) -> list[dict[str, Any]]:
        """The events one state change makes, in order. ``reason`` is the engine's; ``describe`` gives the job
        as DescribeServiceJob shows it after the change; ``started``: its Preemption Started was already sent."""
        if not before:  # the initial submission (or a job adopted from a snapshot): AWS sends nothing
            return []
        detail = job_detail(describe())
        events = []
        preemption = preemption_of(before, after, reason)
        if preemption is not None and not started:
            events.append(self.preemption_started(time_ms, job_arn, preemption, before))
        events.append(self.envelope("state_change", time_ms, job_arn, detail))
        if preemption is not None:
            summary = detail.get("preemptionSummary") or {"preemptedAttemptCount": 0, "recentPreemptedAttempts": []}
            events.append(self.envelope("preemption_completed", time_ms, job_arn,
                                        {"preemptedJobArn": job_arn, "preemptionSummary": summary}))
        if self.blocked(after, reason):
            events.append(self.envelope("queue_blocked", time_ms, job_arn, dict(detail)))
        return events


@dataclass(frozen=True)
class SimulatedJobs:
    """ARNs and timestamps for the simulator's jobs: simulated second 0 is ``origin_ms`` (default the Unix epoch);
    a job's id is a UUID derived from its name, so the same scenario gives the same ARNs."""

    region: str = DEFAULT_REGION
    account: str = DEFAULT_ACCOUNT
    origin_ms: int = 0

    def ms(self, seconds: float) -> int:
        return self.origin_ms + round(seconds * 1000)

    def job_id(self, name: str) -> str:
        return str(uuid.uuid5(_IDS, name))

    def job_arn(self, name: str) -> str:
        return f"arn:aws:batch:{self.region}:{self.account}:service-job/{self.job_id(name)}"

    def describe(self, job: Job, reason: str) -> dict[str, Any]:
        """A simulated job as DescribeServiceJob would show it (``reason``: its ``statusReason``, worded)."""
        spec = job.spec
        queue, share = spec.share.split("/", 1)
        training = f"arn:aws:sagemaker:{self.region}:{self.account}:training-job/{spec.name}"
        attempts = []
        preempted = []
        for number, attempt in enumerate(job.attempts(), start=1):
            entry: dict[str, Any] = {"serviceResourceId": {"name": "TrainingJobArn", "value": f"{training}-{number}"},
                                     "startedAt": self.ms(attempt.start)}
            if attempt.end is not None:
                entry["stoppedAt"] = self.ms(attempt.end)
                entry["statusReason"] = attempt.outcome
            attempts.append(entry)
            if attempt.outcome == "preempted":
                preempted.append(entry)
        out: dict[str, Any] = {
            "attempts": attempts,
            "capacityUsage": [{"capacityUnit": spec.instance_type, "quantity": float(spec.instances)}],
            "createdAt": self.ms(spec.submit_at),
            "isTerminated": False,
            "jobArn": self.job_arn(spec.name),
            "jobId": self.job_id(spec.name),
            "jobName": spec.name,
            "jobQueue": f"arn:aws:batch:{self.region}:{self.account}:job-queue/{queue}",
            "quotaShareName": share,
            "retryStrategy": {"attempts": spec.attempts},
            "schedulingPriority": job.priority,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "preemptionSummary": {"preemptedAttemptCount": job.preemptions,
                                  "recentPreemptedAttempts": preempted[-RECENT_PREEMPTIONS:]},
            "startedAt": self.ms(job.started_at) if job.started_at is not None else 0,
            "status": job.status.value,
        }
        if attempts:
            out["latestAttempt"] = {"serviceResourceId": attempts[-1]["serviceResourceId"]}
        if reason:
            out["statusReason"] = reason
        if job.placed_at is not None:
            out["scheduledAt"] = self.ms(job.placed_at)
        if job.finished_at is not None:
            out["stoppedAt"] = self.ms(job.finished_at)
        if spec.preemption_retries is not None:
            out["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": spec.preemption_retries}
        return out
