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

from policy_engine.foundation.model import JobQueue, QuotaShare, ServiceEnvironment

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


def _environment(resource: Resource) -> ServiceEnvironment:
    if resource.environment is None:
        raise TypeError(f"{resource.type} {resource.label}: built without its service environment")
    return resource.environment


def _queue(resource: Resource) -> JobQueue:
    if resource.queue is None:
        raise TypeError(f"{resource.type} {resource.label}: built without its job queue")
    return resource.queue


def _share(resource: Resource) -> QuotaShare:
    if resource.share is None:
        raise TypeError(f"{resource.type} {resource.label}: built without its quota share")
    return resource.share


#: ``resource type -> CloudFormation property -> how to read it from the model``.
PROPERTY_READERS: dict[str, dict[str, Callable[[Resource], Any]]] = {
    SERVICE_ENVIRONMENT: {
        "ServiceEnvironmentName": lambda r: _environment(r).name,
        "ServiceEnvironmentType": lambda r: SERVICE_ENVIRONMENT_TYPE,
        "CapacityLimits": lambda r: dict(_environment(r).capacity),
        "State": lambda r: _environment(r).state,
        "Tags": lambda r: dict(_environment(r).tags),
    },
    SCHEDULING_POLICY: {
        "Name": lambda r: _queue(r).scheduling_policy_name,
        "Tags": lambda r: dict(_queue(r).tags),
    },
    JOB_QUEUE: {
        "JobQueueName": lambda r: _queue(r).name,
        "JobQueueType": lambda r: JOB_QUEUE_TYPE,
        "Priority": lambda r: _queue(r).priority,
        "State": lambda r: _queue(r).state,
        "ServiceEnvironmentOrder": lambda r: _queue(r).service_environment,
        "SchedulingPolicyArn": lambda r: _queue(r).scheduling_policy_name,
        "JobStateTimeLimitActions": lambda r: [a.model_dump() for a in _queue(r).job_state_time_limit_actions],
        "Tags": lambda r: dict(_queue(r).tags),
    },
    QUOTA_SHARE: {
        "QuotaShareName": lambda r: _share(r).name,
        # the queue's ARN, which holds its name: a renamed (replaced) queue gives its shares a new one
        "JobQueue": lambda r: _queue(r).name,
        "CapacityLimits": lambda r: dict(_share(r).capacity),
        "ResourceSharingConfiguration": lambda r: (_share(r).strategy, _share(r).borrow_limit),
        "PreemptionConfiguration": lambda r: _share(r).in_share_preemption,
        "State": lambda r: _share(r).state,
        "Tags": lambda r: dict(_share(r).tags),
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
