"""Replacement hazards come from the CloudFormation resource schemas themselves, never from a guess."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

from policy_engine.changes import compare
from policy_engine.changes.resources import (
    PROPERTY_READERS,
    SERVICE_ENVIRONMENT_TYPE,
    Resource,
    create_only_properties,
    replacing_changes,
)
from policy_engine.foundation.model import JobQueue, ServiceEnvironment
from policy_engine.inputs.renames import parse_renames
from tests.builders import GPU, share, topology

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "generate_create_only_properties.py"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_create_only_properties", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_package_data_equals_a_fresh_generation_from_cfn_lint():
    generator = _generator()
    shipped = (ROOT / "policy_engine" / "data" / "create_only_properties.json").read_text(encoding="utf-8")
    assert generator.render(generator.generate()) == shipped, "run python scripts/generate_create_only_properties.py"


@pytest.mark.parametrize("resource_type", list(PROPERTY_READERS))
def test_every_create_only_property_of_the_schema_is_read_by_the_diff(resource_type):
    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", resource_type).schema
    create_only = {pointer.removeprefix("/properties/") for pointer in schema["createOnlyProperties"]}
    assert create_only, resource_type
    assert create_only == set(create_only_properties()[resource_type])
    missing = create_only - set(PROPERTY_READERS[resource_type])
    assert not missing, f"{resource_type}: create-only {sorted(missing)} not compared by the diff"
    assert set(PROPERTY_READERS[resource_type]) <= set(schema["properties"])


BASE = topology(share("A", 2, "LEND"), share("B", 2))
QUEUE = BASE.job_queues[0]
ENVIRONMENT = BASE.service_environments[0]
# one model change per create-only property the model can express (the two *Type properties are constants)
CHANGES = {
    ("AWS::Batch::QuotaShare", "QuotaShareName"): (
        Resource("AWS::Batch::QuotaShare", "", queue=QUEUE, share=QUEUE.shares[0]),
        Resource("AWS::Batch::QuotaShare", "", queue=QUEUE, share=QUEUE.shares[0].model_copy(update={"name": "Z"}))),
    ("AWS::Batch::QuotaShare", "JobQueue"): (
        Resource("AWS::Batch::QuotaShare", "", queue=QUEUE, share=QUEUE.shares[0]),
        Resource("AWS::Batch::QuotaShare", "", queue=QUEUE.model_copy(update={"name": "other"}),
                 share=QUEUE.shares[0])),
    ("AWS::Batch::JobQueue", "JobQueueName"): (
        Resource("AWS::Batch::JobQueue", "", queue=QUEUE),
        Resource("AWS::Batch::JobQueue", "", queue=QUEUE.model_copy(update={"name": "other"}))),
    ("AWS::Batch::SchedulingPolicy", "Name"): (
        Resource("AWS::Batch::SchedulingPolicy", "", queue=QUEUE),
        Resource("AWS::Batch::SchedulingPolicy", "", queue=QUEUE.model_copy(update={"scheduling_policy": "p"}))),
    ("AWS::Batch::ServiceEnvironment", "ServiceEnvironmentName"): (
        Resource("AWS::Batch::ServiceEnvironment", "", environment=ENVIRONMENT),
        Resource("AWS::Batch::ServiceEnvironment", "", environment=ENVIRONMENT.model_copy(update={"name": "e2"}))),
}
CONSTANT = {("AWS::Batch::JobQueue", "JobQueueType"), ("AWS::Batch::ServiceEnvironment", "ServiceEnvironmentType")}


def test_every_create_only_property_is_either_changed_by_a_fixture_or_a_deployed_constant():
    every = {(kind, name) for kind, names in create_only_properties().items() for name in names}
    assert every == set(CHANGES) | CONSTANT
    for kind, name in CONSTANT:
        reader = PROPERTY_READERS[kind][name]
        assert reader(Resource(kind, "", queue=QUEUE, environment=ENVIRONMENT)) == SERVICE_ENVIRONMENT_TYPE


@pytest.mark.parametrize("key", list(CHANGES))
def test_changing_a_create_only_property_is_a_replacement(key):
    before, after = CHANGES[key]
    assert replacing_changes(before, after) == [key[1]]


def test_in_place_updates_are_not_replacements():
    before = Resource("AWS::Batch::QuotaShare", "", queue=QUEUE, share=QUEUE.shares[0])
    after = Resource("AWS::Batch::QuotaShare", "", queue=QUEUE, share=QUEUE.shares[0].model_copy(
        update={"capacity": {GPU: 1}, "strategy": "RESERVE", "state": "DISABLED", "in_share_preemption": True}))
    assert replacing_changes(before, after) == []


def test_environment_rename_replaces_it_and_updates_the_queue_in_place():
    head = BASE.model_copy(update={
        "service_environments": (ServiceEnvironment(name="env2", capacity=dict(ENVIRONMENT.capacity)),),
        "job_queues": (JobQueue(name="training", service_environment="env2", shares=QUEUE.shares),)})
    report = compare(BASE, head, parse_renames(["gpu-env=env2"], BASE, head))
    assert [(h.kind, h.resource_type) for h in report.hazards] == [("replace", "AWS::Batch::ServiceEnvironment")]


def test_removed_share_and_disabled_share_hazards():
    head = topology(share("A", 2, "LEND", state="DISABLED"), environment=4)
    report = compare(BASE, head)
    kinds = {(h.kind, h.name) for h in report.hazards}
    assert kinds == {("delete", "training/B"), ("disabled", "training/A")}
    deleted = next(h for h in report.hazards if h.kind == "delete")
    assert "ENABLED, it may hold RUNNABLE and running jobs" in deleted.message


def test_hazard_json_is_stable():
    head = topology(share("A", 1, "LEND"), share("B", 2), environment=4)
    data = compare(BASE, head).to_dict()
    assert json.loads(json.dumps(data))["hazards"][0].keys() == {"kind", "rule", "resource_type", "object",
                                                                  "properties", "message", "accepted"}


def test_disabling_a_queue_is_a_hazard():
    head = BASE.model_copy(update={"job_queues": (QUEUE.model_copy(update={"state": "DISABLED"}),)})
    assert [(h.kind, h.resource_type) for h in compare(BASE, head).hazards] == [("disabled", "AWS::Batch::JobQueue")]
