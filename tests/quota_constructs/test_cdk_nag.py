"""cdk-nag's AwsSolutions pack, run through CDK's validation-plugin interface, over the default stack and a
two-team stack with every grant: no finding but the two wildcards AWS forces, which the grants acknowledge."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Environment, Stack, Validations
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks

from policy_engine.inputs.examples import example_topology
from quota_constructs import ReadOnlyQuotaAccess, TopologyStacks, grants, read_only_access
from tests.quota_constructs.conftest import CDK_CONTEXT

#: The only findings the project's resources may raise, each acknowledged in ``grants`` with its reason.
FORCED = {
    "AwsSolutions-IAM5[Resource::*]",
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:batch:<AWS::Region>:<AWS::AccountId>:service-job/*]",
}


def _nagged_app(tmp_path) -> App:
    app = App(outdir=str(tmp_path), builtin_cloud_formation_validation=False, context=CDK_CONTEXT)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def _two_teams(app: App, env: Environment | None = None) -> None:
    deployed = TopologyStacks(app, example_topology(), env=env)
    teams = Stack(app, "Teams", env=env)
    execution = iam.Role(teams, "Execution", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    for team, share in (("A", "training/QS1"), ("B", "training/QS2")):
        role = iam.Role(teams, f"Team{team}", assumed_by=iam.AccountRootPrincipal())
        quota_share = deployed.shares[share]
        quota_share.grant_submit(role, max_priority=5, execution_role=execution)
        quota_share.grant_update_priority(role)
        quota_share.grant_read(role)
        deployed.queues["training"].job_queue.grant_read(role)
    deployed.shares["training/QS1"].grant_read_account_service_jobs(role)


def _report(app: App, tmp_path) -> dict[str, list[dict]]:
    """cdk-nag's ``violations`` and ``suppressedViolations`` (errors fail synthesis; the report has warnings too)."""
    try:
        app.synth()
        failed = ""
    except RuntimeError as error:
        failed = str(error)
    plugins = json.loads((tmp_path / "validation-report.json").read_text())["pluginReports"]  # written: it ran
    if not plugins:  # nothing found, nothing acknowledged
        assert not failed, failed
        return {"open": [], "acknowledged": []}
    (plugin,) = plugins
    assert plugin["pluginName"] == "AwsSolutions"
    assert bool(failed) == any(v["severity"] == "error" for v in plugin["violations"]), failed
    return {"open": plugin["violations"], "acknowledged": plugin.get("suppressedViolations", [])}


def _findings(app: App, tmp_path) -> list[str]:
    return sorted({violation["ruleName"] for violation in _report(app, tmp_path)["open"]})


def test_the_default_stack_has_no_finding(tmp_path):
    app = _nagged_app(tmp_path)
    TopologyStacks(app, example_topology())
    assert _findings(app, tmp_path) == []


@pytest.mark.parametrize("env", [None, Environment(account="123456789012", region="eu-west-1")])
def test_a_two_team_stack_with_every_grant_has_no_finding(tmp_path, env):
    app = _nagged_app(tmp_path)
    _two_teams(app, env)
    assert _findings(app, tmp_path) == []


def test_without_the_acknowledgments_exactly_the_forced_wildcards_are_found(tmp_path, monkeypatch):
    """Any other finding (a new one) fails this test as well as the ones above."""
    monkeypatch.setattr(grants, "acknowledge_wildcard", lambda *args, **kwargs: None)
    app = _nagged_app(tmp_path)
    _two_teams(app)
    assert set(_findings(app, tmp_path)) == FORCED


def test_the_acknowledgments_carry_their_reasons(tmp_path):
    app = _nagged_app(tmp_path)
    _two_teams(app)
    acknowledged = _report(app, tmp_path)["acknowledged"]
    reasons = {v["ruleName"]: v["reason"] for v in acknowledged}
    assert set(reasons) == FORCED
    assert reasons[min(FORCED)] == grants.STAR_WILDCARD_REASON
    assert reasons[max(FORCED)] == grants.SERVICE_JOBS_WILDCARD_REASON
    assert {c["constructPath"] for v in acknowledged for c in v["violatingConstructs"]} == {
        "Teams/TeamA/DefaultPolicy/Resource", "Teams/TeamB/DefaultPolicy/Resource"}


def _read_only_access(app: App) -> None:
    stack = Stack(app, "ReadOnly")
    ci = iam.Role(stack, "Ci", assumed_by=iam.AccountRootPrincipal())
    ReadOnlyQuotaAccess(stack, "Access", roles=[ci])


def test_the_read_only_access_policy_has_no_open_finding(tmp_path):
    app = _nagged_app(tmp_path)
    _read_only_access(app)
    assert _findings(app, tmp_path) == []


def test_the_read_only_access_acknowledges_exactly_its_account_wide_wildcards(tmp_path):
    app = _nagged_app(tmp_path)
    _read_only_access(app)
    acknowledged = {v["ruleName"]: v["reason"] for v in _report(app, tmp_path)["acknowledged"]}
    assert acknowledged.pop("AwsSolutions-IAM5[Resource::*]") == grants.STAR_WILDCARD_REASON
    plans = "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sagemaker:<AWS::Region>:<AWS::AccountId>:training-plan/*]"
    assert acknowledged.pop(plans) == read_only_access.PLAN_READ_REASON
    assert sorted(acknowledged) == [
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:batch:<AWS::Region>:<AWS::AccountId>:job-queue/*/quota-share/*]",
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:batch:<AWS::Region>:<AWS::AccountId>:job-queue/*]",
    ]
    assert set(acknowledged.values()) == {read_only_access.ACCOUNT_WIDE_READ_REASON}
