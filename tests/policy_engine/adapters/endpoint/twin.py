"""The endpoint beside the simulator: what `serve` shows of its jobs, and what a scenario with the same inputs gives.

A test drives `serve` over HTTP (boto3), then asks the simulator for the same workload with
the resource changes as scenario actions at the times they were made; the job states must
be equal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from policy_engine.adapters.endpoint.server import RunningEndpoint
from policy_engine.foundation.model import Topology
from policy_engine.simulation.core.engine import Action, Engine, SimulationSettings
from policy_engine.simulation.core.jobs import JobSpec

#: Per job name: (status, preempted attempts).
States = dict[str, tuple[str, int]]

G5_12 = "ml.g5.12xlarge"


def payload(instance_type: str, count: int) -> str:
    return json.dumps({"TrainingJobName": "train", "RoleArn": "arn:aws:iam::123456789012:role/SageMaker",
                       "AlgorithmSpecification": {"TrainingImage": "image", "TrainingInputMode": "File"},
                       "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
                       "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count,
                                          "VolumeSizeInGB": 30}})


def submit(batch, name: str, share: str, count: int = 1, priority: int = 0, duration: int | None = None,
           instance_type: str = G5_12, queue: str = "training") -> str:
    extra = {"tags": {"batch-quota:duration": str(duration)}} if duration is not None else {}
    return batch.submit_service_job(jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                                    serviceRequestPayload=payload(instance_type, count), quotaShareName=share,
                                    schedulingPriority=priority, **extra)["jobId"]


def served_states(batch, job_ids: dict[str, str]) -> States:
    """What DescribeServiceJob says of each job (by name)."""
    out = {}
    for name, job_id in job_ids.items():
        detail = batch.describe_service_job(jobId=job_id)
        out[name] = (detail["status"], detail.get("preemptionSummary", {}).get("preemptedAttemptCount", 0))
    return out


def simulated_states(endpoint: RunningEndpoint, topology: Topology, actions: Sequence[Action],
                     until: float, settings: SimulationSettings | None = None) -> States:
    """The served jobs (as submitted, at their submission times) simulated on ``topology`` with ``actions``."""
    records = endpoint.service.job_records()
    specs = [JobSpec(r.id, f"{r.queue}/{r.share}", r.instance_type, r.instances, r.initial_priority, r.created,
                     r.duration, r.preemption_retries) for r in records]
    engine = Engine(topology, specs, actions, settings or endpoint.service.scheduler.settings)
    engine.run(until)
    names = {r.id: r.name for r in records}
    return {names[job.spec.name]: (job.status.value, job.preemptions) for job in engine.jobs}


def stack(batch, shares: Sequence[tuple[str, str, int, int | None]], capacity: int = 8,
          instance_type: str = G5_12) -> dict[str, str]:
    """An environment, a quota share policy, queue ``training`` and ``shares`` (name, strategy, limit, borrow
    limit); returns the share ARNs by name."""
    env = batch.create_service_environment(serviceEnvironmentName="gpu", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                           capacityLimits=[{"maxCapacity": capacity, "capacityUnit": instance_type}])
    policy = batch.create_scheduling_policy(name="quota", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    batch.create_job_queue(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                           schedulingPolicyArn=policy["arn"],
                           serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}])
    arns = {}
    for name, strategy, limit, borrow in shares:
        sharing = {"strategy": strategy} | ({"borrowLimit": borrow} if borrow is not None else {})
        arns[name] = batch.create_quota_share(
            quotaShareName=name, jobQueue="training",
            capacityLimits=[{"maxCapacity": limit, "capacityUnit": instance_type}],
            resourceSharingConfiguration=sharing,
            preemptionConfiguration={"inSharePreemption": "DISABLED"})["quotaShareArn"]
    return arns


def update_share(batch, arn: str, **changes) -> None:
    """UpdateQuotaShare with the share's current values, then ``changes`` (request members) on top."""
    current = batch.describe_quota_share(quotaShareArn=arn)
    request = {name: current[name] for name in ("capacityLimits", "resourceSharingConfiguration",
                                                "preemptionConfiguration", "state")}
    batch.update_quota_share(quotaShareArn=arn, **(request | changes))
