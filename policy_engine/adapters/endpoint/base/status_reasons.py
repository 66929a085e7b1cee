"""AWS's wording of the simulator's causes: a served job's ``statusReason`` and its attempts' reasons.

The one place the local endpoint turns a ``causes.Reason`` into the text ``DescribeServiceJob``
shows; the engine's own wording (reports, ``--events``) is ``causes.describe``. ``name`` words a
job id as a user reads it (``jobName (jobId)``).
"""

from __future__ import annotations

from collections.abc import Callable

from policy_engine.simulation.causes import Cause, Reason, describe

#: What AWS says when an attempt outlives ``timeoutConfig.attemptDurationSeconds`` (the only way a served
#: job's attempt fails: the engine reports it as a failed attempt).
TIMED_OUT = "Job attempt duration exceeded timeout"
COMPLETED = "Training job completed"
#: The ``statusReason`` of an unfinished job whose queue or quota share was deleted (AWS: "all jobs in the share
#: are eventually terminated"; it documents no wording, and Batch has no TERMINATED state: the job ends FAILED).
#: A replacing deploy deletes the old share at cleanup, so its jobs end with ``SHARE_DELETED`` too.
QUEUE_DELETED = "Terminated: the job queue was deleted"
SHARE_DELETED = "Terminated: the quota share was deleted"

#: Why AWS preempted a job, by preemption cause (as Kueue's ``HumanReadablePreemptionReasons``).
PREEMPTION_WORDS = {
    Cause.RECLAIM_PREEMPTION: "cross-share preemption: its lender reclaimed capacity",
    Cause.IN_SHARE_PREEMPTION: "in-share preemption by a higher-priority job",
}


def preempted(reason: Reason, name: Callable[[str], str]) -> str:
    """``Preempted by job NAME (ID) (cross-share preemption: its lender reclaimed capacity)``."""
    return f"Preempted by job {name(str(reason.detail))} ({PREEMPTION_WORDS[reason.cause]})"


def attempt_reason(after: str, reason: Reason, name: Callable[[str], str]) -> str:
    """Why an attempt (a stay on capacity) ended, as ``attempts[].statusReason`` says it."""
    if reason.cause in PREEMPTION_WORDS:
        return preempted(reason, name)
    if after == "SUCCEEDED":
        return COMPLETED
    if reason.cause in (Cause.ATTEMPT_FAILED, Cause.RETRIES_EXHAUSTED):
        return TIMED_OUT
    return describe(reason, name)


def status_reason(after: str, reason: Reason, name: Callable[[str], str]) -> str:
    """The job's ``statusReason`` in state ``after``."""
    if after == "RUNNABLE":
        if reason.cause in PREEMPTION_WORDS:
            return preempted(reason, name)
        if reason.cause is Cause.ATTEMPT_FAILED:
            return f"{TIMED_OUT}; retrying (attempt {reason.detail} failed)"
        return describe(reason, name)  # "" or MISCONFIGURATION:...
    if after == "SUCCEEDED":
        return COMPLETED
    if after == "FAILED":
        return TIMED_OUT if reason.cause is Cause.RETRIES_EXHAUSTED else describe(reason, name)
    return ""
