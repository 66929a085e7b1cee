"""QuotaSchedulingPolicy: a FIFO quota-share policy, never a fair-share one."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Match, Template

from quota_constructs import QuotaSchedulingPolicy
from quota_constructs.errors import QuotaConstructError
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app


@pytest.fixture(scope="module")
def built():
    stack = Stack(fast_app(), "Policies")
    policy = QuotaSchedulingPolicy(stack, "Policy", scheduling_policy_name="training-quota-policy",
                                   tags={"team": "platform"})
    return policy, Template.from_stack(stack)


def test_quota_share_policy_with_fifo_and_no_fairshare(built):
    _, template = built
    template.has_resource_properties("AWS::Batch::SchedulingPolicy", {
        "Name": "training-quota-policy",
        "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"},
        "FairsharePolicy": Match.absent(),
        "Tags": {"team": "platform"},
    })


def test_arn_attribute_and_lint(built):
    policy, template = built
    assert Stack.of(policy).resolve(policy.scheduling_policy_arn)["Fn::GetAtt"][1] == "Arn"
    assert cfn_lint_errors(template.to_json()) == []


def test_bad_name_is_rejected_eagerly():
    with pytest.raises(QuotaConstructError,
                       match=r"QuotaSchedulingPolicy 'a/b': scheduling_policy_name = 'a/b'") as error:
        QuotaSchedulingPolicy(Stack(fast_app(), "Bad"), "P", scheduling_policy_name="a/b")
    assert (error.value.path, error.value.field, error.value.value) == ("Bad/P", "scheduling_policy_name", "a/b")


def test_import_by_arn():
    stack = Stack(fast_app(), "Import")
    arn = "arn:aws:batch:eu-west-1:123456789012:scheduling-policy/shared"
    imported = QuotaSchedulingPolicy.from_scheduling_policy_arn(stack, "P", arn)
    assert (imported.scheduling_policy_name, imported.scheduling_policy_arn) == ("shared", arn)
