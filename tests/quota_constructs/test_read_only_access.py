"""``ReadOnlyQuotaAccess``: exactly the read-only actions the account commands call, scoped like the CLI prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from click.testing import CliRunner

from policy_engine.adapters.aws.iam_policy import COMMAND_OPERATIONS, RESOURCE_OF, action, operations
from policy_engine.cli.app import main
from quota_constructs import ReadOnlyQuotaAccess
from quota_constructs.errors import QuotaConstructError
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app

AWS_PACKAGE = Path(__file__).resolve().parents[2] / "policy_engine" / "adapters" / "aws"


def test_every_operation_the_connectors_call_is_in_the_policy():
    called = set()
    for path in AWS_PACKAGE.glob("*.py"):
        called |= set(re.findall(r'api\.(?:call|pages)\(\s*"(\w+)"', path.read_text()))
    assert called == set(operations())
    assert set(RESOURCE_OF) == called
    assert all(name.startswith(("Describe", "List", "Get", "Lookup")) for name in called)  # read-only, nothing else
    assert action("LookupEvents") == "cloudtrail:LookupEvents" and action("ListServiceJobs") == "batch:ListServiceJobs"


def test_construct_grants_exactly_the_printed_statements_and_lints_clean():
    stack = Stack(fast_app(), "Access")
    role = iam.Role(stack, "CiRole", assumed_by=iam.AccountRootPrincipal())
    access = ReadOnlyQuotaAccess(stack, "QuotaRead", roles=[role])
    template = Template.from_stack(stack).to_json()
    policy = next(r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy")
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    actions = sorted(a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))
    assert actions == sorted(action(op) for op in operations())
    assert "cloudtrail:LookupEvents" in actions
    assert next(s for s in statements if s["Resource"] == "*")["Sid"] == "BatchQuotaReadAny"
    assert cfn_lint_errors(template) == []
    assert access.policy is not None


def test_construct_for_one_command_and_a_bad_command():
    stack = Stack(fast_app(), "History")
    ReadOnlyQuotaAccess(stack, "HistoryRead", commands=["history"])
    policy = next(r for r in Template.from_stack(stack).to_json()["Resources"].values()
                  if r["Type"] == "AWS::IAM::ManagedPolicy")
    actions = sorted(a for s in policy["Properties"]["PolicyDocument"]["Statement"]
                     for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))
    assert actions == sorted(action(op) for op in COMMAND_OPERATIONS["history"])
    with pytest.raises(QuotaConstructError, match="ReadOnlyQuotaAccess: commands \\['deploy'\\] are invalid") as error:
        ReadOnlyQuotaAccess(stack, "Bad", commands=["deploy"])
    assert (error.value.path, error.value.field, error.value.value) == ("History/Bad", "commands", ["deploy"])


def test_iam_policy_command_prints_the_policy():
    result = CliRunner().invoke(main, ["iam-policy", "--region", "eu-west-1", "--account", "123456789012"])
    assert result.exit_code == 0
    document = json.loads(result.output)
    scoped = {s["Sid"]: s for s in document["Statement"]}
    assert scoped["BatchQuotaReadJobQueueQuotaShare"]["Resource"] == \
        "arn:aws:batch:eu-west-1:123456789012:job-queue/*/quota-share/*"
    assert scoped["BatchQuotaReadJobQueue"]["Action"] == ["batch:GetJobQueueSnapshot", "batch:ListQuotaShares"]
    assert scoped["BatchQuotaReadTrainingPlan"] == {
        "Sid": "BatchQuotaReadTrainingPlan", "Effect": "Allow", "Action": ["sagemaker:DescribeTrainingPlan"],
        "Resource": "arn:aws:sagemaker:eu-west-1:123456789012:training-plan/*"}
    assert "sagemaker:ListTrainingPlans" in scoped["BatchQuotaReadAny"]["Action"]  # only Resource: * exists for it
    plans = json.loads(CliRunner().invoke(main, ["iam-policy", "--command", "drift"]).output)
    assert {"sagemaker:ListTrainingPlans", "sagemaker:DescribeTrainingPlan"} <= {
        a for s in plans["Statement"] for a in s["Action"]}
    only = json.loads(CliRunner().invoke(main, ["iam-policy", "--command", "history"]).output)
    assert sorted(a for s in only["Statement"] for a in s["Action"]) == [
        "batch:DescribeJobQueues", "batch:DescribeSchedulingPolicies", "batch:DescribeServiceEnvironments",
        "batch:DescribeServiceJob", "batch:ListQuotaShares", "batch:ListServiceJobs", "batch:ListTagsForResource",
        "cloudtrail:LookupEvents", "sagemaker:DescribeTrainingPlan"]  # --scenario: the plans its jobs ran on
