"""``--state FILE``: resources, jobs and the simulated clock survive a restart."""

from __future__ import annotations

import sqlite3
import time

import pytest

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.adapters.endpoint.store import Store
from policy_engine.inputs.examples import example_topology
from tests.policy_engine.adapters.endpoint.conftest import SIGNED, client, submit


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


def test_no_acknowledged_call_is_lost_when_the_server_is_killed_mid_burst(tmp_path):
    """SIGKILL while four clients submit, with a checkpoint every 100 calls (so the kill may land in one): every
    job the server answered for is there after the restart, which starts from a checkpoint."""
    import http.client
    import json
    import os
    import signal
    import subprocess
    import sys
    import threading
    import urllib.request
    from pathlib import Path

    from tests.policy_engine.adapters.endpoint.conftest import payload

    state = tmp_path / "state.db"
    command = [str(Path(sys.executable).with_name("batch-quota")), "serve", "--walkthrough", "--port", "0",
               "--speed", "0", "--state", str(state), "--checkpoint-every", "100"]

    def start() -> tuple[subprocess.Popen, str]:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        url = process.stdout.readline().strip()
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_batch-quota/clock", timeout=10):
                    return process, url
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    process, url = start()
    acknowledged: list[str] = []
    lock = threading.Lock()

    def burst(worker: int) -> None:
        for index in range(10_000):
            body = json.dumps({"jobName": f"w{worker}-{index}", "jobQueue": "training", "quotaShareName": "QS1",
                               "serviceJobType": "SAGEMAKER_TRAINING", "serviceRequestPayload": payload()}).encode()
            request = urllib.request.Request(f"{url}/v1/submitservicejob", data=body, method="POST",
                                             headers={"content-type": "application/json", **SIGNED})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    job = json.loads(response.read())["jobId"]
            except (OSError, http.client.HTTPException):  # the server is gone (before or during the answer)
                return
            with lock:
                acknowledged.append(job)

    workers = [threading.Thread(target=burst, args=(n,)) for n in range(4)]
    for thread in workers:
        thread.start()
    while len(acknowledged) < 450:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    for thread in workers:
        thread.join(timeout=30)
    process, url = start()
    started = process.stderr.readline()
    while started and not started.startswith("batch-quota serve: http"):  # the start-up line, after any warning
        started = process.stderr.readline()
    try:
        assert "restored from the checkpoint at call" in started, started
        import boto3
        from botocore.config import Config

        batch = boto3.client("batch", endpoint_url=url, region_name="us-east-1", aws_access_key_id="x",
                             aws_secret_access_key="x", config=Config(retries={"max_attempts": 1}))
        missing = []
        for job in acknowledged:
            try:
                batch.describe_service_job(jobId=job)
            except batch.exceptions.ClientException:
                missing.append(job)
        assert len(acknowledged) >= 450 and missing == []
    finally:
        process.terminate()
        process.wait(timeout=30)
