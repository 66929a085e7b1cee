"""Twenty clients submitting at once lose no job and get unique ARNs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.policy_engine.adapters.endpoint.conftest import client, submit

CLIENTS, JOBS_EACH = 20, 10


def test_parallel_submitters_lose_nothing(walkthrough_endpoint):
    clients = [client(walkthrough_endpoint) for _ in range(CLIENTS)]

    def submit_all(index: int) -> list[str]:
        batch = clients[index]
        return [batch.submit_service_job(jobName=f"c{index}-{n}", jobQueue="training",
                                         serviceJobType="SAGEMAKER_TRAINING", quotaShareName="QS1",
                                         serviceRequestPayload='{"ResourceConfig": {"InstanceType": '
                                                               '"ml.g5.xlarge", "InstanceCount": 1}}')["jobArn"]
                for n in range(JOBS_EACH)]

    with ThreadPoolExecutor(CLIENTS) as pool:
        arns = [arn for batch in pool.map(submit_all, range(CLIENTS)) for arn in batch]
    assert len(arns) == len(set(arns)) == CLIENTS * JOBS_EACH
    batch = clients[0]
    listed = []
    for status in ("RUNNING", "RUNNABLE"):
        for page in batch.get_paginator("list_service_jobs").paginate(jobQueue="training", jobStatus=status):
            listed += [job["jobArn"] for job in page["jobSummaryList"]]
    assert sorted(listed) == sorted(arns)
    assert submit(batch, "one-more", "QS1")  # still serving
