"""Every property the constructs set matches the botocore ``batch`` model (names, enums, ranges, required).

CloudFormation's ``AWS::Batch::*`` properties are the API's request members in PascalCase, so
each synthesized resource is walked against the input shape of its ``Create*`` operation.
"""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from aws_cdk.assertions import Template

from policy_engine.foundation.model import JobQueue, JobStateTimeLimitAction, QuotaShare, ServiceEnvironment, Topology
from policy_engine.inputs.examples import example_topology, large_topology
from quota_constructs import TopologyStacks
from tests.quota_constructs.conftest import fast_app

OPERATIONS = {
    "AWS::Batch::ServiceEnvironment": "CreateServiceEnvironment",
    "AWS::Batch::SchedulingPolicy": "CreateSchedulingPolicy",
    "AWS::Batch::JobQueue": "CreateJobQueue",
    "AWS::Batch::QuotaShare": "CreateQuotaShare",
}


def _rich_topology() -> Topology:
    """Every optional property at least once: time-limit actions, tags, DISABLED, borrow limits -1 and unset."""
    g5, p4 = "ml.g5.xlarge", "ml.p4d.24xlarge"
    shares = (
        QuotaShare(name="unlimited", capacity={g5: 1, p4: 1}, strategy="LEND_AND_BORROW", borrow_limit=-1,
                   in_share_preemption=True, tags={"team": "a"}),
        QuotaShare(name="default-borrow", capacity={g5: 1}, strategy="LEND_AND_BORROW"),
        QuotaShare(name="off", capacity={g5: 1}, strategy="LEND", state="DISABLED"),
        QuotaShare(name="reserved_1", capacity={p4: 1}, strategy="RESERVE"),
    )
    queue = JobQueue(
        name="rich", service_environment="env", shares=shares, priority=1000, state="DISABLED",
        scheduling_policy="rich-policy", tags={"owner": "platform"},
        job_state_time_limit_actions=(
            JobStateTimeLimitAction(max_time_seconds=600, reason="MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"),
            JobStateTimeLimitAction(max_time_seconds=86400, reason="CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY")),
    )
    environment = ServiceEnvironment(name="env", capacity={g5: 3, p4: 2}, state="DISABLED", tags={"cost": "ml"})
    return Topology(service_environments=(environment,), job_queues=(queue,))


@pytest.fixture(scope="module")
def resources() -> list[tuple[str, str, dict[str, Any]]]:
    """``(stack/logical id, type, properties)`` of every Batch resource of three topologies."""
    app = fast_app()
    stacks = [stack for index, topology in enumerate((example_topology(), _rich_topology(), large_topology(queues=1)))
              for stack in TopologyStacks(app, topology, stack_name=f"Shapes{index}").stacks]
    return [
        (f"{stack.stack_name}/{logical_id}", resource["Type"], resource["Properties"])
        for stack in stacks
        for logical_id, resource in Template.from_stack(stack).to_json()["Resources"].items()
        if resource["Type"] in OPERATIONS
    ]


MODEL = botocore.session.get_session().get_service_model("batch")


def _is_intrinsic(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith(("Fn::", "Ref"))


def _mismatches(value: Any, shape: Any, path: str) -> list[str]:
    problems: list[str] = []
    if _is_intrinsic(value):
        return [] if shape.type_name == "string" else [f"{path}: intrinsic for a {shape.type_name} member"]
    if shape.type_name == "structure":
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {value!r}"]
        members = {name[0].upper() + name[1:]: (name, member) for name, member in shape.members.items()}
        for key, item in value.items():
            if key not in members:
                problems.append(f"{path}.{key}: not a member of {shape.name} ({', '.join(sorted(members))})")
                continue
            problems += _mismatches(item, members[key][1], f"{path}.{key}")
        present = {members[k][0] for k in value if k in members}
        problems += [f"{path}: missing required {r}" for r in shape.required_members if r not in present]
    elif shape.type_name == "list":
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        for index, item in enumerate(value):
            problems += _mismatches(item, shape.member, f"{path}[{index}]")
    elif shape.type_name == "map":
        count = len(value)
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        if (low is not None and count < low) or (high is not None and count > high):
            problems.append(f"{path}: {count} entries outside {low}-{high}")
        for key, item in value.items():
            problems += _mismatches(key, shape.key, f"{path} key") + _mismatches(item, shape.value, f"{path}[{key}]")
    elif shape.type_name == "string":
        if not isinstance(value, str):
            problems.append(f"{path}: expected a string, got {value!r}")
        elif shape.enum and value not in shape.enum:
            problems.append(f"{path}: {value!r} not in {shape.enum}")
        elif not (shape.metadata.get("min", 0) <= len(value) <= shape.metadata.get("max", len(value))):
            problems.append(f"{path}: length {len(value)} outside {shape.metadata}")
    elif shape.type_name == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{path}: expected an integer, got {value!r}")
        elif not (shape.metadata.get("min", value) <= value <= shape.metadata.get("max", value)):
            problems.append(f"{path}: {value} outside {shape.metadata}")
    else:
        problems.append(f"{path}: unexpected shape type {shape.type_name}")
    return problems


def test_every_kind_and_optional_property_is_covered(resources):
    kinds = {kind for _, kind, _ in resources}
    assert kinds == set(OPERATIONS)
    properties = {(kind, key) for _, kind, props in resources for key in props}
    assert {("AWS::Batch::JobQueue", "JobStateTimeLimitActions"), ("AWS::Batch::QuotaShare", "Tags"),
            ("AWS::Batch::ServiceEnvironment", "Tags"), ("AWS::Batch::JobQueue", "Tags")} <= properties


def test_all_resources_match_their_create_operations(resources):
    problems = [p for where, kind, props in resources
                for p in _mismatches(props, MODEL.operation_model(OPERATIONS[kind]).input_shape, where)]
    assert problems == []


def test_the_checker_catches_a_wrong_enum_an_unknown_member_and_a_missing_required_one():
    shape = MODEL.operation_model("CreateQuotaShare").input_shape
    bad = {"QuotaShareName": "x", "JobQueue": "q", "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge"}],
           "ResourceSharingConfiguration": {"Strategy": "BORROW"}, "Preemption": {}}
    problems = "\n".join(_mismatches(bad, shape, "bad"))
    assert "'BORROW' not in" in problems
    assert "bad.Preemption: not a member" in problems
    assert "missing required preemptionConfiguration" in problems
    assert "missing required maxCapacity" in problems
