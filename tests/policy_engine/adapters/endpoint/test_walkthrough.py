"""AWS's notebook steps against the endpoint give, step by step, the states the simulator's walkthrough gives."""

from __future__ import annotations

import pytest

from policy_engine.cli.commands import walkthrough
from tests.policy_engine.adapters.endpoint.conftest import client, submit


@pytest.mark.parametrize("advance", [100, 0], ids=["advancing", "frozen-clock"])
def test_the_three_steps_match_the_simulator(walkthrough_endpoint, advance):
    """With the clock advanced between steps as the notebook waits, and at ``--speed 0`` without advances: the
    same states (a job placed by an earlier call is a victim at once, whatever the clock says)."""
    batch = client(walkthrough_endpoint)
    expected = {time: {job.name: (job.status, job.preemptions) for job in result.jobs}
                for time, _, _, result in walkthrough.replay()}
    ids: dict[str, str] = {}

    def states() -> dict[str, tuple[str, int]]:
        out = {}
        for name, job_id in ids.items():
            detail = batch.describe_service_job(jobId=job_id)
            out[name] = (detail["status"], detail["preemptionSummary"]["preemptedAttemptCount"])
        return out

    for spec in walkthrough.JOBS:
        if spec.submit_at == 0:
            ids[spec.name] = submit(batch, spec.name, spec.share.split("/")[1], priority=spec.priority)
    assert states() == expected[0]
    assert states()["qs1_job_low"] == ("RUNNABLE", 0)  # step 1: low waits

    walkthrough_endpoint.advance(advance)
    ids["qs2_job_1"] = submit(batch, "qs2_job_1", "QS2", priority=1)
    assert states() == expected[100]
    assert states()["qs1_job_med"] == ("RUNNABLE", 1)  # step 2: QS2 reclaimed its instance

    walkthrough_endpoint.advance(advance)
    (update,) = walkthrough.UPDATES
    batch.update_service_job(jobId=ids[update.job], schedulingPriority=update.priority)
    assert states() == expected[200]
    assert states()["qs1_job_low"] == ("RUNNING", 0) and states()["qs1_job_high"] == ("RUNNABLE", 1)  # step 3
