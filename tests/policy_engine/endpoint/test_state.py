"""``--state FILE``: resources, jobs and the simulated clock survive a restart."""

from __future__ import annotations

import sqlite3
import time

import pytest

from policy_engine.endpoint.server import start_in_thread
from policy_engine.endpoint.service import Options, Service
from policy_engine.endpoint.store import Store
from policy_engine.examples import example_topology
from tests.policy_engine.endpoint.conftest import client, submit


def snapshot(batch, ids):
    return {job: {key: value for key, value in batch.describe_service_job(jobId=job).items()
                  if key != "ResponseMetadata"} for job in ids}


def test_a_restart_resumes_jobs_resources_and_the_clock(tmp_path):
    path = tmp_path / "state.db"
    with start_in_thread(Service(Options(speed=0), example_topology(), Store(path))) as running:
        batch = client(running)
        ids = [submit(batch, name, "QS1", priority=p) for name, p in (("high", 3), ("med", 2), ("low", 1))]
        running.advance(100)
        ids.append(submit(batch, "qs2", "QS2", priority=1))
        running.advance(100)
        batch.update_service_job(jobId=ids[2], schedulingPriority=4)
        waiting = submit(batch, "extra", "QS3", tags={"batch-quota:duration": "50"})
        batch.terminate_service_job(jobId=waiting, reason="test")
        ids.append(waiting)
        batch.tag_resource(resourceArn="arn:aws:batch:us-east-1:123456789012:job-queue/training", tags={"a": "b"})
        batch.create_quota_share(quotaShareName="QS4", jobQueue="training",
                                 capacityLimits=[{"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}],
                                 resourceSharingConfiguration={"strategy": "RESERVE"},
                                 preemptionConfiguration={"inSharePreemption": "DISABLED"})
        running.advance(50)
        before = snapshot(batch, ids)
        shares_before = batch.list_quota_shares(jobQueue="training")["quotaShares"]
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM calls").fetchone()[0] >= 10  # a real SQLite file
    with start_in_thread(Service(Options(speed=0), None, Store(path))) as running:
        batch = client(running)
        assert running.clock() == 250
        assert snapshot(batch, ids) == before
        assert batch.list_quota_shares(jobQueue="training")["quotaShares"] == shares_before
        assert batch.list_tags_for_resource(
            resourceArn="arn:aws:batch:us-east-1:123456789012:job-queue/training")["tags"] == {"a": "b"}
        running.advance(3600)  # the simulation goes on from where it was
        assert batch.describe_service_job(jobId=ids[2])["status"] == "SUCCEEDED"


def test_the_clock_resumes_from_the_stored_simulated_time(tmp_path):
    path = tmp_path / "state.db"
    with start_in_thread(Service(Options(speed=1000), example_topology(), Store(path))) as running:
        time.sleep(0.2)  # about 200 simulated seconds
        stopped_at = running.clock()
    with start_in_thread(Service(Options(speed=0), None, Store(path))) as running:
        assert running.clock() >= stopped_at > 100


def test_reset_and_topology_start_over(tmp_path, walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    submit(batch, "a", "QS1")
    walkthrough_endpoint.advance(10)
    walkthrough_endpoint.reset()
    assert walkthrough_endpoint.clock() == 0
    assert batch.list_service_jobs(jobQueue="training", jobStatus="RUNNING")["jobSummaryList"] == []
    walkthrough_endpoint.load_topology({"service_environments": [{"name": "e", "capacity": {"ml.p5.48xlarge": 2}}],
                                        "job_queues": [{"name": "q", "service_environment": "e", "shares": [
                                            {"name": "S", "capacity": {"ml.p5.48xlarge": 2}, "strategy": "LEND"}]}]})
    assert [q["jobQueueName"] for q in batch.describe_job_queues()["jobQueues"]] == ["q"]
    for bad, expected in (({"job_queues": [{"name": "q"}]}, "service_environment"),
                          ({"service_environments": [{"name": "e!", "capacity": {"ml.g5.xlarge": 1}}]}, "BQ101")):
        with pytest.raises(ValueError, match=expected):
            walkthrough_endpoint.load_topology(bad)
    with pytest.raises(ValueError, match="finite number >= 0"):
        walkthrough_endpoint.advance(-1)
    assert [q["jobQueueName"] for q in batch.describe_job_queues()["jobQueues"]] == ["q"]  # unchanged
