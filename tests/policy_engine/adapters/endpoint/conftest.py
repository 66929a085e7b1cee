"""An endpoint per test module (speed 0: the clock moves only when a test advances it) and boto3 clients."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from policy_engine.adapters.endpoint.server import RunningEndpoint, start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service

INSTANCE = "ml.g5.xlarge"
#: What a raw HTTP client sends on an AWS API call so the request guard lets it through: an Authorization
#: header (its SigV4 signature is not verified).
SIGNED = {"Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/batch/aws4_request, "
                           "SignedHeaders=host;x-amz-date, Signature=0"}


def client(endpoint: RunningEndpoint):
    """A real boto3 client over HTTP; no retries, so a throttle or an error is seen as it is."""
    return boto3.client("batch", endpoint_url=endpoint.url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 1, "mode": "standard"}))


def payload(instance_type: str = INSTANCE, count: int = 1, max_runtime: int | None = None, name: str = "train") -> str:
    request = {"TrainingJobName": name, "RoleArn": "arn:aws:iam::123456789012:role/SageMaker",
               "AlgorithmSpecification": {"TrainingImage": "image", "TrainingInputMode": "File"},
               "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
               "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count, "VolumeSizeInGB": 30}}
    if max_runtime is not None:
        request["StoppingCondition"] = {"MaxRuntimeSeconds": max_runtime}
    return json.dumps(request)


def submit(batch, name: str, share: str, priority: int = 0, queue: str = "training", **extra) -> str:
    count = extra.pop("count", 1)
    return batch.submit_service_job(jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                                    serviceRequestPayload=payload(count=count), quotaShareName=share,
                                    schedulingPriority=priority, **extra)["jobId"]


ENV_CAPACITY = 4


def create_stack(batch, shares=(("A", "LEND_AND_BORROW", 2, 100, "DISABLED"), ("B", "LEND", 2, None, "DISABLED"))):
    env = batch.create_service_environment(serviceEnvironmentName="gpu", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                           capacityLimits=[{"maxCapacity": ENV_CAPACITY, "capacityUnit": INSTANCE}])
    policy = batch.create_scheduling_policy(name="quota", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    queue = batch.create_job_queue(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                                   schedulingPolicyArn=policy["arn"],
                                   serviceEnvironmentOrder=[{"order": 1,
                                                             "serviceEnvironment": env["serviceEnvironmentArn"]}])
    arns = {}
    for name, strategy, limit, borrow, preemption in shares:
        sharing = {"strategy": strategy} | ({"borrowLimit": borrow} if borrow is not None else {})
        arns[name] = batch.create_quota_share(
            quotaShareName=name, jobQueue=queue["jobQueueArn"],
            capacityLimits=[{"maxCapacity": limit, "capacityUnit": INSTANCE}], resourceSharingConfiguration=sharing,
            preemptionConfiguration={"inSharePreemption": preemption}, tags={"team": name})["quotaShareArn"]
    return env, policy, queue, arns


def error_of(call, *args, **kwargs) -> tuple[str, int, str]:
    with pytest.raises(ClientError) as caught:
        call(*args, **kwargs)
    response = caught.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]


@pytest.fixture
def endpoint():
    with start_in_thread(Service(Options(speed=0))) as running:
        yield running


@pytest.fixture
def walkthrough_endpoint():
    from policy_engine.inputs.examples import example_topology

    with start_in_thread(Service(Options(speed=0), example_topology())) as running:
        yield running
