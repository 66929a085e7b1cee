"""The CloudFormation resources a topology deploys, and which of their properties force a replacement.

``createOnlyProperties`` come from AWS's resource schemas (as cfn-lint ships them), copied into
``policy_engine/data/create_only_properties.json`` by ``scripts/generate_create_only_properties.py``
so that the engine-only install needs no cfn-lint. Here each property is read off the model: a
property the schema marks create-only but this module cannot read is a bug a test catches.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from policy_engine.model import JobQueue, QuotaShare, ServiceEnvironment

SERVICE_ENVIRONMENT = "AWS::Batch::ServiceEnvironment"
SCHEDULING_POLICY = "AWS::Batch::SchedulingPolicy"
JOB_QUEUE = "AWS::Batch::JobQueue"
QUOTA_SHARE = "AWS::Batch::QuotaShare"

#: What the constructs always deploy (``quota_constructs``): constant, so a change never replaces on them.
SERVICE_ENVIRONMENT_TYPE = "SAGEMAKER_TRAINING"
JOB_QUEUE_TYPE = "SAGEMAKER_TRAINING"


@dataclass(frozen=True)
class Resource:
    """One deployed resource: its type, the batch-quota object it comes from, and that object's parts."""

    type: str
    #: ``environment NAME``, ``job queue NAME``, ``scheduling policy NAME``, ``quota share QUEUE/SHARE``.
    label: str
    environment: ServiceEnvironment | None = None
    queue: JobQueue | None = None
    share: QuotaShare | None = None


#: ``resource type -> CloudFormation property -> how to read it from the model``.
PROPERTY_READERS: dict[str, dict[str, Callable[[Resource], Any]]] = {
    SERVICE_ENVIRONMENT: {
        "ServiceEnvironmentName": lambda r: r.environment.name,
        "ServiceEnvironmentType": lambda r: SERVICE_ENVIRONMENT_TYPE,
        "CapacityLimits": lambda r: dict(r.environment.capacity),
        "State": lambda r: r.environment.state,
        "Tags": lambda r: dict(r.environment.tags),
    },
    SCHEDULING_POLICY: {
        "Name": lambda r: r.queue.scheduling_policy_name,
        "Tags": lambda r: dict(r.queue.tags),
    },
    JOB_QUEUE: {
        "JobQueueName": lambda r: r.queue.name,
        "JobQueueType": lambda r: JOB_QUEUE_TYPE,
        "Priority": lambda r: r.queue.priority,
        "State": lambda r: r.queue.state,
        "ServiceEnvironmentOrder": lambda r: r.queue.service_environment,
        "SchedulingPolicyArn": lambda r: r.queue.scheduling_policy_name,
        "JobStateTimeLimitActions": lambda r: [a.model_dump() for a in r.queue.job_state_time_limit_actions],
        "Tags": lambda r: dict(r.queue.tags),
    },
    QUOTA_SHARE: {
        "QuotaShareName": lambda r: r.share.name,
        # the queue's ARN, which holds its name: a renamed (replaced) queue gives its shares a new one
        "JobQueue": lambda r: r.queue.name,
        "CapacityLimits": lambda r: dict(r.share.capacity),
        "ResourceSharingConfiguration": lambda r: (r.share.strategy, r.share.borrow_limit),
        "PreemptionConfiguration": lambda r: r.share.in_share_preemption,
        "State": lambda r: r.share.state,
        "Tags": lambda r: dict(r.share.tags),
    },
}


@cache
def create_only_properties() -> dict[str, tuple[str, ...]]:
    """``resource type -> create-only properties`` from the package's copy of the schemas."""
    text = resources.files("policy_engine").joinpath("data/create_only_properties.json").read_text("utf-8")
    return {kind: tuple(names) for kind, names in json.loads(text)["resources"].items()}


def replacing_changes(before: Resource, after: Resource) -> list[str]:
    """The create-only properties whose value differs between two versions of a resource (replacement)."""
    readers = PROPERTY_READERS[before.type]
    return [name for name in create_only_properties().get(before.type, ())
            if readers[name](before) != readers[name](after)]
