"""The ``QuotaMonitoring`` function, end to end: real boto3 Batch calls to ``batch-quota serve`` over HTTP, and its
PutMetricData through botocore's Stubber (the request validated against the CloudWatch model), through AWS's
notebook walkthrough: QS1 borrows QS2's idle instance, then QS2 reclaims it."""

from __future__ import annotations

from datetime import datetime

import boto3
import pytest
from botocore.stub import Stubber

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.inputs.examples import INSTANCE_TYPE, example_topology
from quota_constructs.monitoring_function import index
from tests.policy_engine.adapters.endpoint.conftest import client, submit

NAMESPACE = "BatchQuota"


@pytest.fixture
def endpoint():
    with start_in_thread(Service(Options(speed=0), example_topology())) as running:
        yield running


def _published(batch, queue_arn: str) -> tuple[dict[tuple[str, ...], float], list[dict]]:
    """Run the function once; ``{(metric, share, instance type or ''): value}`` and the PutMetricData requests."""
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="testing",
                              aws_secret_access_key="testing")
    requests: list[dict] = []
    cloudwatch.meta.events.register("provide-client-params.cloudwatch.PutMetricData",
                                    lambda params, **_: requests.append(params))
    now = batch.get_job_queue_snapshot(jobQueue=queue_arn)["queueUtilization"]["lastUpdatedAt"] / 1000
    with Stubber(cloudwatch) as stub:
        stub.add_response("put_metric_data", {})  # a request the model refuses raises before reaching here
        result = index.run(batch, cloudwatch, [queue_arn], NAMESPACE, now)
        stub.assert_no_pending_responses()
    assert result == {"metrics": len(requests[0]["MetricData"]), "calls": 1}
    assert requests[0]["Namespace"] == NAMESPACE
    values = {}
    for datum in requests[0]["MetricData"]:
        dims = {d["Name"]: d["Value"] for d in datum["Dimensions"]}
        assert dims["JobQueue"] == "training"
        assert isinstance(datum["Timestamp"], datetime)
        values[(datum["MetricName"], dims["QuotaShare"], dims.get("InstanceType", ""))] = datum["Value"]
    return values, requests


def _in_use(batch, share: str) -> float:
    """The share's instances on capacity, from its jobs as ListServiceJobs shows them (not from the snapshot)."""
    total = 0.0
    for status in ("SCHEDULED", "STARTING", "RUNNING"):
        page = batch.list_service_jobs(jobQueue="training", jobStatus=status,
                                       filters=[{"name": "QUOTA_SHARE_NAME", "values": [share]}])
        total += sum(u["quantity"] for job in page["jobSummaryList"] for u in job["capacityUsage"])
    return total


def _waiting(batch, share: str) -> list[dict]:
    return batch.list_service_jobs(jobQueue="training", jobStatus="RUNNABLE",
                                   filters=[{"name": "QUOTA_SHARE_NAME", "values": [share]}])["jobSummaryList"]


def test_the_metrics_follow_a_borrow_and_its_reclaim(endpoint):
    batch = client(endpoint)
    queue_arn = batch.describe_job_queues(jobQueues=["training"])["jobQueues"][0]["jobQueueArn"]
    for name, priority in (("qs1_job_high", 3), ("qs1_job_med", 2), ("qs1_job_low", 1)):
        submit(batch, name, "QS1", priority=priority)
    endpoint.advance(60)

    borrowing, _ = _published(batch, queue_arn)
    metric = {key: value for key, value in borrowing.items() if key[2] == INSTANCE_TYPE}
    assert _in_use(batch, "QS1") == 2  # its own instance and QS2's idle one (QS3 reserves its own)
    assert (metric[("OwnUse", "QS1", INSTANCE_TYPE)], metric[("Borrowed", "QS1", INSTANCE_TYPE)]) == (1, 1)
    assert metric[("Lent", "QS2", INSTANCE_TYPE)] == 1 and metric[("Lent", "QS3", INSTANCE_TYPE)] == 0
    assert metric[("WaitingJobs", "QS1", INSTANCE_TYPE)] == len(_waiting(batch, "QS1")) == 1
    assert metric[("HeadOfLineAge", "QS1", INSTANCE_TYPE)] == pytest.approx(60)

    submit(batch, "qs2_job_1", "QS2", priority=1)  # QS2 reclaims its instance: QS1's med job is preempted
    endpoint.advance(30)
    reclaimed, requests = _published(batch, queue_arn)
    for share in ("QS1", "QS2", "QS3"):
        used = _in_use(batch, share)
        assert reclaimed[("OwnUse", share, INSTANCE_TYPE)] == min(used, 1)
        assert reclaimed[("Borrowed", share, INSTANCE_TYPE)] == max(used - 1, 0)
        assert reclaimed[("WaitingJobs", share, INSTANCE_TYPE)] == len(_waiting(batch, share))
    assert reclaimed[("Borrowed", "QS1", INSTANCE_TYPE)] == 0 and reclaimed[("Lent", "QS2", INSTANCE_TYPE)] == 0
    assert reclaimed[("OwnUse", "QS2", INSTANCE_TYPE)] == 1
    assert reclaimed[("WaitingJobs", "QS1", INSTANCE_TYPE)] == 2  # med (preempted) and low
    (med,) = [job for job in _waiting(batch, "QS1") if job["jobName"] == "qs1_job_med"]
    assert batch.describe_service_job(jobId=med["jobId"])["preemptionSummary"]["preemptedAttemptCount"] == 1
    # the share's front job (med, priority 2) has been at the front since it was submitted, 90 s ago
    assert reclaimed[("HeadOfLineAge", "QS1", INSTANCE_TYPE)] == pytest.approx(90)
    assert reclaimed[("HeadOfLineAge", "QS1", "")] == pytest.approx(90)
    assert reclaimed[("HeadOfLineAge", "QS2", "")] == 0
    units = {d["Unit"] for d in requests[0]["MetricData"] if d["MetricName"] == "HeadOfLineAge"}
    assert units == {"Seconds"}


def test_lent_capacity_is_attributed_to_lenders_in_proportion_to_their_idle_limits():
    lent = index.lent_by_share(
        limits={"A": {"g": 4.0}, "B": {"g": 2.0}, "C": {"g": 2.0}, "R": {"g": 2.0}},
        used={"A": {"g": 7.0}, "B": {"g": 0.0}, "C": {"g": 1.0}},
        lends={"A": True, "B": True, "C": True, "R": False})
    # A borrows 3 of the 3 idle lendable instances (B 2, C 1); R reserves its 2
    assert lent == {"A": {"g": 0.0}, "B": {"g": 2.0}, "C": {"g": 1.0}, "R": {}}
