"""The job index's waiting order (GetJobQueueSnapshot's front) against its definition: RUNNABLE jobs by priority,
then submission, through random submissions, moves and priority changes."""

from __future__ import annotations

import random

from policy_engine.adapters.endpoint.base.jobs import JobIndex, ServiceJob


def _record(seq: int, share: str, priority: int) -> ServiceJob:
    return ServiceJob(id=f"id-{seq}", arn=f"arn-{seq}", name=f"job-{seq}", queue="q", share=share, payload="{}",
                      tags={}, retry=None, preemption_config=None, timeout=None, priority=priority,
                      instance_type="ml.g5.xlarge", instances=1, training_name=f"t-{seq}", client_token=None,
                      seq=seq, created=float(seq), duration=60.0, preemption_retries=None)


def test_the_front_is_the_first_waiting_jobs_by_priority_then_submission():
    rng = random.Random(7)
    index = JobIndex()
    for step in range(3000):
        choice = rng.random()
        if choice < 0.4 or not index.records:
            record = _record(len(index.records), rng.choice("ab"), rng.randrange(5))
            index.add(record)
            index.move(record, "RUNNABLE")
        elif choice < 0.7:
            index.move(rng.choice(index.records), rng.choice(("RUNNABLE", "RUNNING", "SUCCEEDED")))
        else:
            index.reprioritise(rng.choice(index.records), rng.randrange(5))
        if step % 100 == 0:
            for share in ("a", "b", None):
                waiting = [r for r in index.records if r.status == "RUNNABLE" and share in (None, r.share)]
                expected = sorted(waiting, key=lambda r: (-r.priority, r.seq))[:100]
                assert index.front("q", share, 100) == expected
