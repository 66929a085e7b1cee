"""AWS's wording of the simulator's causes at the endpoint: from the values, never from the engine's text."""

from __future__ import annotations

import pytest

from policy_engine.adapters.endpoint.base.status_reasons import COMPLETED, TIMED_OUT, attempt_reason, status_reason
from policy_engine.simulation.causes import Cause, Reason
from policy_engine.simulation.core.jobs import MISCONFIG_QUOTA


def shown(job_id: str) -> str:
    return f"name-of-{job_id} ({job_id})"


@pytest.mark.parametrize(("after", "reason", "status", "attempt"), [
    ("RUNNABLE", Reason(Cause.RECLAIM_PREEMPTION, "id-1"),
     "Preempted by job name-of-id-1 (id-1) (cross-share preemption: its lender reclaimed capacity)",
     "Preempted by job name-of-id-1 (id-1) (cross-share preemption: its lender reclaimed capacity)"),
    ("RUNNABLE", Reason(Cause.IN_SHARE_PREEMPTION, "id-2"),
     "Preempted by job name-of-id-2 (id-2) (in-share preemption by a higher-priority job)",
     "Preempted by job name-of-id-2 (id-2) (in-share preemption by a higher-priority job)"),
    ("RUNNABLE", Reason(Cause.ATTEMPT_FAILED, 1), f"{TIMED_OUT}; retrying (attempt 1 failed)", TIMED_OUT),
    ("FAILED", Reason(Cause.RETRIES_EXHAUSTED, (2, 2)), TIMED_OUT, TIMED_OUT),
    ("SUCCEEDED", Reason(Cause.WORK_DONE), COMPLETED, COMPLETED),
    ("FAILED", Reason(Cause.TOPOLOGY_CHANGE, ("q/A", "ml.g5.xlarge")),
     "Terminated: quota share q/A no longer has ml.g5.xlarge capacity",
     "Terminated: quota share q/A no longer has ml.g5.xlarge capacity"),
    ("FAILED", Reason(Cause.TERMINATED, "stopped by id-3"), "stopped by id-3", "stopped by id-3"),
    ("RUNNABLE", Reason(Cause.MISCONFIGURED, MISCONFIG_QUOTA), MISCONFIG_QUOTA, MISCONFIG_QUOTA),
    ("RUNNABLE", Reason(Cause.QUEUED), "", ""),
])
def test_each_cause_in_aws_words(after: str, reason: Reason, status: str, attempt: str):
    assert status_reason(after, reason, shown) == status
    assert attempt_reason(after, reason, shown) == attempt


def test_a_caller_s_termination_reason_is_shown_as_given():
    """Free text from ``TerminateServiceJob`` is the caller's: an id in it is not rewritten."""
    assert status_reason("FAILED", Reason(Cause.TERMINATED, "id-4"), shown) == "id-4"
