"""``BatchQuotaChecks`` through CDK's own validation: hand-built constructs, raw L1 without names, cross-stack
references, acknowledgements, and a topology's resources checked once. Each app synthesizes once (module fixtures)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Acknowledgment, App, Stack, Validations
from aws_cdk import aws_batch as batch

from policy_engine.inputs.examples import example_topology
from quota_constructs import BatchQuotaChecks, QuotaShare, ServiceEnvironment, TopologyStacks, TrainingJobQueue
from tests.quota_constructs.conftest import CDK_CONTEXT

GPU = "ml.g5.xlarge"


@dataclass
class Synthesized:
    """What ``cdk synth`` said: whether it failed, the plugin's violations and the ones CDK acknowledged."""

    failed: str
    violations: list[dict[str, Any]]
    acknowledged: list[dict[str, Any]]

    def rules(self) -> list[tuple[str, str, list[str]]]:
        """``(rule, severity, construct paths)`` of each open violation."""
        return [(v["ruleName"], v["severity"], [c["constructPath"] for c in v["violatingConstructs"]])
                for v in self.violations]


def _app(outdir: Path, **plugin: Any) -> App:
    app = App(outdir=str(outdir), builtin_cloud_formation_validation=False, context=CDK_CONTEXT)
    Validations.of(app).add_plugins(BatchQuotaChecks(**plugin))
    return app


def _synth(app: App, outdir: Path) -> Synthesized:
    try:
        app.synth()
        failed = ""
    except RuntimeError as error:
        failed = str(error)
    reports = json.loads((outdir / "validation-report.json").read_text())["pluginReports"] \
        if (outdir / "validation-report.json").exists() else []
    ours = [r for r in reports if r["pluginName"] == "batch-quota"]
    if not ours:
        return Synthesized(failed, [], [])
    (report,) = ours
    return Synthesized(failed, report["violations"], report.get("suppressedViolations") or [])


def _hand_built(stack: Stack, capacity: int = 32, shares: int = 4, per_share: int = 10,
                queue_name: str = "training") -> list[QuotaShare]:
    env = ServiceEnvironment(stack, "Env", service_environment_name=f"{queue_name}-gpu", capacity={GPU: capacity})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name=queue_name, service_environment=env)
    return [QuotaShare(stack, f"Team{i}", quota_share_name=f"team{i}", job_queue=queue,
                       capacity={GPU: per_share}, strategy="LEND") for i in range(shares)]


@pytest.fixture(scope="module")
def oversubscribed(tmp_path_factory) -> Synthesized:
    """40 instances of shares in a 32-instance environment, built by hand."""
    out = tmp_path_factory.mktemp("oversubscribed")
    app = _app(out)
    _hand_built(Stack(app, "Hand"))
    return _synth(app, out)


def test_a_hand_built_oversubscribed_app_fails_with_bq201_on_the_environment_construct(oversubscribed):
    assert oversubscribed.failed
    assert oversubscribed.rules() == [("BQ201", "fatal", ["Hand/Env/Resource"])]
    (violation,) = oversubscribed.violations
    assert "(construct Hand/Env/Resource)" in violation["description"]
    assert "share limits add up to 40" in violation["description"]



def _raw_l1(stack: Stack) -> None:
    """Raw ``Cfn*`` resources; the environment, policy and queue unnamed (CloudFormation names them at deploy;
    a share's name is required by its resource schema)."""
    env = batch.CfnServiceEnvironment(stack, "Env", service_environment_type="SAGEMAKER_TRAINING",
                                      capacity_limits=[{"capacityUnit": GPU, "maxCapacity": 3}])
    policy = batch.CfnSchedulingPolicy(stack, "Policy",
                                       quota_share_policy={"idleResourceAssignmentStrategy": "FIFO"})
    queue = batch.CfnJobQueue(stack, "Queue", job_queue_type="SAGEMAKER_TRAINING", priority=1,
                              scheduling_policy_arn=policy.attr_arn,
                              service_environment_order=[{"order": 1,
                                                          "serviceEnvironment": env.attr_service_environment_arn}])
    batch.CfnQuotaShare(stack, "Research", quota_share_name="research", job_queue=queue.attr_job_queue_arn,
                        preemption_configuration={"inSharePreemption": "DISABLED"},
                        capacity_limits=[{"capacityUnit": GPU, "maxCapacity": 2}],
                        resource_sharing_configuration={"strategy": "LEND_AND_BORROW", "borrowLimit": 200})
    batch.CfnQuotaShare(stack, "Prod", quota_share_name="prod", job_queue=queue.ref,
                        preemption_configuration={"inSharePreemption": "DISABLED"},
                        capacity_limits=[{"capacityUnit": GPU, "maxCapacity": 1}],
                        resource_sharing_configuration={"strategy": "LEND"})


@pytest.fixture(scope="module")
def raw_l1(tmp_path_factory) -> Synthesized:
    out = tmp_path_factory.mktemp("raw")
    app = _app(out)
    _raw_l1(Stack(app, "Raw"))
    return _synth(app, out)


def test_raw_l1_resources_without_names_are_checked_under_their_logical_ids(raw_l1):
    """The borrow limit of 200 % cannot be lent (BQ302, a warning): reported, synthesis passes."""
    assert not raw_l1.failed
    assert raw_l1.rules() == [("BQ302", "warning", ["Raw/Research"])]
    description = raw_l1.violations[0]["description"]
    assert "named at deploy" in description
    assert "construct Raw/Research" in description


@pytest.fixture(scope="module")
def cross_stack(tmp_path_factory) -> tuple[Synthesized, dict[str, Any]]:
    """The environment in one stack, the queue and its shares in another (CDK exports and imports the ARN)."""
    out = tmp_path_factory.mktemp("cross")
    app = _app(out)
    capacity = Stack(app, "Capacity")
    env = ServiceEnvironment(capacity, "Env", service_environment_name="gpu", capacity={GPU: 32})
    teams = Stack(app, "Teams")
    queue = TrainingJobQueue(teams, "Queue", job_queue_name="training", service_environment=env)
    for i in range(4):
        QuotaShare(teams, f"Team{i}", quota_share_name=f"team{i}", job_queue=queue, capacity={GPU: 10},
                   strategy="LEND")
    synthesized = _synth(app, out)
    return synthesized, json.loads((out / "Teams.template.json").read_text())


def test_a_cross_stack_reference_is_resolved_against_the_other_stacks_exports(cross_stack):
    synthesized, teams = cross_stack
    (queue,) = [r for r in teams["Resources"].values() if r["Type"] == "AWS::Batch::JobQueue"]
    assert "Fn::ImportValue" in queue["Properties"]["ServiceEnvironmentOrder"][0]["ServiceEnvironment"]
    assert synthesized.failed
    assert synthesized.rules() == [("BQ201", "fatal", ["Capacity/Env/Resource"])]


@pytest.fixture(scope="module")
def acknowledged(tmp_path_factory) -> Synthesized:
    """The raw app's BQ302 acknowledged on its share; one acknowledgement matching nothing; a fatal one."""
    out = tmp_path_factory.mktemp("acknowledged")
    app = _app(out)
    raw = Stack(app, "Raw")
    _raw_l1(raw)
    Validations.of(raw.node.find_child("Research")).acknowledge(
        Acknowledgment(id="batch-quota::BQ302", reason="research borrows whatever is idle"))
    Validations.of(raw).acknowledge(Acknowledgment(id="batch-quota::BQ305", reason="stale"))
    hand = Stack(app, "Hand")
    _hand_built(hand)
    Validations.of(hand).acknowledge(Acknowledgment(id="batch-quota::BQ201", reason="we know"))
    return _synth(app, out)


def test_an_acknowledgement_hides_a_warning_and_keeps_its_reason(acknowledged):
    (hidden,) = acknowledged.acknowledged
    assert (hidden["ruleName"], hidden["reason"]) == ("BQ302", "research borrows whatever is idle")
    assert [c["constructPath"] for c in hidden["violatingConstructs"]] == ["Raw/Research"]


def test_an_unsuppressible_error_stays_fatal_and_unmatched_acknowledgements_are_bq003(acknowledged):
    assert acknowledged.failed
    rules = acknowledged.rules()
    assert ("BQ201", "fatal", ["Hand/Env/Resource"]) in rules
    stale = {tuple(r[2]): v["description"] for r, v in zip(rules, acknowledged.violations, strict=True)
             if r[0] == "BQ003"}
    assert set(stale) == {("Raw",), ("Hand",)}
    assert "BQ305 finds nothing" in stale[("Raw",)]
    assert "BQ201 is fatal here" in stale[("Hand",)]


@pytest.fixture(scope="module")
def topology_and_hand_built(tmp_path_factory) -> Synthesized:
    """``TopologyStacks`` (whose own check warns BQ302 on training/QS1) beside a hand-built stack, strict."""
    out = tmp_path_factory.mktemp("both")
    app = _app(out, strict=True)
    TopologyStacks(app, example_topology())
    _hand_built(Stack(app, "Hand"), capacity=40, queue_name="research")
    return _synth(app, out)


def test_a_topologys_resources_are_checked_once(topology_and_hand_built):
    """The topology's BQ302 is its own CDK warning already; the plugin adds nothing for it (nor for the fine
    hand-built stack), even in strict mode where a warning would fail."""
    assert topology_and_hand_built.rules() == []
    assert not topology_and_hand_built.failed


def test_strict_reports_warnings_as_errors(tmp_path):
    app = _app(tmp_path, strict=True)
    _raw_l1(Stack(app, "Raw"))
    synthesized = _synth(app, tmp_path)
    assert synthesized.failed
    assert synthesized.rules() == [("BQ302", "error", ["Raw/Research"])]
