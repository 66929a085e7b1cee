"""The ``batch_endpoint`` pytest fixture: unchanged boto3 code (no endpoint_url) talks to the local endpoint."""

from __future__ import annotations

import os

import boto3

from policy_engine.inputs.examples import example_topology


def test_the_fixture_points_boto3_at_the_endpoint(batch_endpoint):
    assert os.environ["AWS_ENDPOINT_URL_BATCH"] == batch_endpoint.url
    assert os.environ["AWS_ENDPOINT_URL_SAGEMAKER"] == batch_endpoint.url
    batch_endpoint.load_topology(example_topology().model_dump(mode="json", exclude_defaults=True))
    batch = boto3.client("batch", region_name="us-east-1")  # what users' code does
    assert [q["jobQueueName"] for q in batch.describe_job_queues()["jobQueues"]] == ["training"]
    job = batch.submit_service_job(jobName="j", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                                   quotaShareName="QS1",
                                   serviceRequestPayload='{"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}}')
    assert batch.describe_service_job(jobId=job["jobId"])["status"] == "RUNNING"
    batch_endpoint.advance(3600)
    assert batch.describe_service_job(jobId=job["jobId"])["status"] == "SUCCEEDED"
    assert boto3.client("sagemaker", region_name="us-east-1").list_training_plans()["TrainingPlanSummaries"] == []
    batch_endpoint.reset()
